"""Exporters: our URDF loads in Pinocchio, our MJCF in MuJoCo, and reading an export back
gives the same Assembly (bodies, joint frames, mass properties to 1e-12).

References: Pinocchio's model of the original URDF (frame placements, per-joint
inertias, masses) against Pinocchio's model of our export; MuJoCo's model of the
original MJCF against MuJoCo's model of our export; the assembly we exported.
"""

import glob
import os
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from mbcompose import parsers
from mbcompose.parsers import GROUND, Assembly, Body, Joint, MassProperties, Pose
from mbcompose.parsers.exporters import ExportError, export, ros_safe_names
from mbcompose.parsers.exporters.mjcf import write_mjcf
from mbcompose.parsers.exporters.sdf import write_sdf
from mbcompose.parsers.exporters.urdf import write_urdf
from mbcompose.parsers.massprops import inertia_problem
from mbcompose.parsers.urdf.reader import read_urdf

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
ROBOTS = sorted(glob.glob(os.path.join(SHARE, "example-robot-data", "robots", "*", "urdf", "*.urdf")))
FOURBAR = ROOT / "samples" / "fourbar" / "fourbar.yaml"


def assert_same_assembly(a, b, atol=1e-12, joint_names=None, loop_flag=True, continuous_is_revolute=False,
                         links=None, joints=None):
    """Bodies (pose, mass, com, inertia) and the named joints (type, ends, origin, axis) agree; ``links`` and
    ``joints`` map names of ``a`` an export renamed (ROS-safe names) to ``b``'s."""
    link, joint = (lambda n: (links or {}).get(n, n)), (lambda n: (joints or {}).get(n, n))
    assert sorted(map(link, a.body_names)) == sorted(b.body_names)
    for x in a.bodies:
        y = b.body(link(x.name))
        np.testing.assert_allclose(y.pose.matrix(), x.pose.matrix(), atol=atol, err_msg=x.name)
        assert y.mass.mass == pytest.approx(x.mass.mass, rel=atol, abs=atol), x.name
        np.testing.assert_allclose(y.mass.com, x.mass.com, atol=atol, err_msg=x.name)
        np.testing.assert_allclose(y.mass.inertia, x.mass.inertia, atol=atol, err_msg=x.name)
    for name in (a.joint_names if joint_names is None else joint_names):
        j, k = a.joint(name), b.joint(joint(name))
        jt = "revolute" if continuous_is_revolute and j.type == "continuous" else j.type
        assert (k.type, k.reference, k.secondary) == (jt, link(j.reference), link(j.secondary)), name
        assert not loop_flag or k.loop == j.loop, name
        np.testing.assert_allclose(k.origin, j.origin, atol=atol, err_msg=name)
        if j.type in ("revolute", "continuous", "prismatic", "universal"):
            np.testing.assert_allclose(k.axis, j.axis, atol=atol, err_msg=name)
        if j.type == "universal":
            np.testing.assert_allclose(k.axis2, j.axis2, atol=atol, err_msg=name)


# ------------------------------------------------------------------ URDF

def _pin():
    return pytest.importorskip("pinocchio")


def _robots_we_read():
    out = []
    for p in ROBOTS:
        try:
            read_urdf(p, package_dirs=[SHARE])
        except parsers.InputError:
            continue
        out.append(p)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("path", ROBOTS, ids=lambda p: os.path.basename(p)[:-5])
def test_urdf_export_of_example_robot_loads_in_pinocchio_and_reads_back_the_same(path, tmp_path):
    pin = _pin()
    try:
        a = read_urdf(path, package_dirs=[SHARE])
    except parsers.InputError:
        pytest.skip("refused on input (Pinocchio refuses it too)")
    out = write_urdf(a, tmp_path / "export.urdf")
    b = read_urdf(out)
    # names ROS tools refuse ('/' in romeo's 'LFoot/FSR/CenterFront_sensor') are written ROS-safe
    links, joints = ros_safe_names(a.body_names), ros_safe_names(a.joint_names)
    assert_same_assembly(a, b, links=links, joints=joints)
    assert [(c.joint, c.leader, c.multiplier, c.offset) for c in b.couplings] == \
           [(joints.get(c.joint, c.joint), joints.get(c.leader, c.leader), c.multiplier, c.offset) for c in a.couplings]
    m0, m1 = pin.buildModelFromUrdf(path), pin.buildModelFromUrdf(str(out))
    assert (m1.nq, m1.nv, m1.njoints) == (m0.nq, m0.nv, m0.njoints)
    assert list(m1.names) == [joints.get(n, n) for n in m0.names]
    d0, d1 = m0.createData(), m1.createData()
    for m, d in ((m0, d0), (m1, d1)):
        pin.framesForwardKinematics(m, d, pin.neutral(m))
    for i in range(m0.njoints):
        assert m1.inertias[i].mass == pytest.approx(m0.inertias[i].mass, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(m1.inertias[i].lever, m0.inertias[i].lever, atol=1e-12)
        np.testing.assert_allclose(m1.inertias[i].inertia, m0.inertias[i].inertia, atol=1e-12)
        np.testing.assert_allclose(d1.oMi[i].homogeneous, d0.oMi[i].homogeneous, atol=1e-12)
    for body in a.bodies:
        name = body.sources["name"].note.split("'")[1] if "name" in body.sources else body.name
        f0 = m0.getFrameId(name, pin.FrameType.BODY)
        f1 = m1.getFrameId(links.get(body.name, body.name), pin.FrameType.BODY)
        np.testing.assert_allclose(d1.oMf[f1].homogeneous, d0.oMf[f0].homogeneous, atol=1e-12)


def test_urdf_export_of_small_arm_round_trips_with_geometry_and_transmission(tmp_path):
    pin = _pin()
    a = read_urdf(DATA / "arm.urdf", package_dirs=[DATA])
    out = export(a, tmp_path / "arm.urdf")
    b = read_urdf(out)
    assert_same_assembly(a, b)
    assert b.joint("shoulder").actuated and b.joint("shoulder").motor.gear_ratio == 50
    mesh = [g for g in b.body("fore").geometry if g.kind == "mesh"][0]
    np.testing.assert_array_equal(mesh.params["scale"], [2, 1, 1])
    m = pin.buildModelFromUrdf(str(out))
    assert m.nq == 2 and sum(i.mass for i in m.inertias) == pytest.approx(4.0)


def test_urdf_export_refuses_a_loop_naming_it_unless_cut(tmp_path):
    pin = _pin()
    a = parsers.read_assembly(FOURBAR)
    with pytest.raises(ExportError) as exc:
        write_urdf(a, tmp_path / "fourbar.urdf")
    msg = str(exc.value)
    assert "coupler_rocker" in msg and "crank" in msg and "rocker" in msg and "cut_loops" in msg
    out = write_urdf(a, tmp_path / "fourbar.urdf", cut_loops=True)
    m = pin.buildModelFromUrdf(str(out))
    assert m.nq == 3 and sorted(m.names[1:]) == ["crank_coupler", "crank_pivot", "rocker_pivot"]
    b = read_urdf(out)
    assert_same_assembly(a, b, joint_names=["crank_pivot", "crank_coupler", "rocker_pivot"])
    assert "coupler_rocker" not in b.joint_names


def test_urdf_export_flips_a_joint_met_from_its_secondary_side(tmp_path):
    pin = _pin()
    mp = MassProperties(1.0, [0.1, 0, 0], np.diag([0.01, 0.02, 0.03]))
    a = Assembly("flip", (Body("a", Pose(), mp), Body("b", Pose(np.eye(3), [0.5, 0, 0]), mp)),
                 (Joint("ja", "revolute", GROUND, "a", axis=[0, 0, 1]),
                  Joint("jb", "prismatic", "b", "a", origin=[0.5, 0, 0], axis=[1, 0, 0])))
    # b hangs from a through jb, whose reference is b: the export must flip it
    out = write_urdf(a, tmp_path / "flip.urdf")
    b = read_urdf(out)
    jb = b.joint("jb")
    assert (jb.reference, jb.secondary) == ("a", "b")
    np.testing.assert_allclose(jb.axis, [-1, 0, 0])
    m = pin.buildModelFromUrdf(str(out))
    d = m.createData()
    q = np.array([0.0, 0.2])          # a's coordinate +0.2 along the flipped axis moves b by -0.2 x
    pin.framesForwardKinematics(m, d, q)
    np.testing.assert_allclose(d.oMf[m.getFrameId("b")].translation, [0.3, 0, 0], atol=1e-15)


# ------------------------------------------------------------------ MJCF

def _mujoco():
    return pytest.importorskip("mujoco")


def _mj(path):
    mujoco = _mujoco()
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return m, d


def test_mjcf_export_loads_in_mujoco_with_the_same_model_and_reads_back(tmp_path):
    src = DATA / "mjcf_features.xml"
    a = parsers.read_assembly(src)
    out = write_mjcf(a, tmp_path / "features.xml")
    b = parsers.read_assembly(out)
    assert_same_assembly(a, b)
    m0, d0 = _mj(src)
    m1, d1 = _mj(out)
    assert (m1.nbody, m1.njnt, m1.nq, m1.nv, m1.neq) == (m0.nbody, m0.njnt, m0.nq, m0.nv, m0.neq)
    for i in range(1, m0.nbody):
        k = m1.body(m0.body(i).name or f"body{i}").id
        assert m1.body_mass[k] == pytest.approx(m0.body_mass[i], rel=1e-6)     # float32 mesh vertices
        np.testing.assert_allclose(d1.xpos[k], d0.xpos[i], atol=1e-12)
        np.testing.assert_allclose(d1.xmat[k], d0.xmat[i], atol=1e-12)
    for i in range(m0.njnt):
        body = m0.body(m0.jnt_bodyid[i]).name or f"body{m0.jnt_bodyid[i]}"
        k = m1.joint(m0.joint(i).name or f"{body}_joint").id
        np.testing.assert_allclose(d1.xanchor[k], d0.xanchor[i], atol=1e-12)
        np.testing.assert_allclose(d1.xaxis[k], d0.xaxis[i], atol=1e-12)


def test_mjcf_export_closes_the_fourbar_loop_with_equalities(tmp_path):
    a = parsers.read_assembly(FOURBAR)
    out = write_mjcf(a, tmp_path / "fourbar.xml")
    m, d = _mj(out)
    assert m.neq == 2                           # the revolute chord: two connects on its axis
    ref, dref = _mj(DATA / "fourbar_mjcf.xml")  # the hand-written MJCF four-bar
    for name in ("crank", "coupler", "rocker"):
        assert m.body(name).mass[0] == pytest.approx(ref.body(name).mass[0], rel=1e-12)
        np.testing.assert_allclose(d.xpos[m.body(name).id], dref.xpos[ref.body(name).id], atol=1e-12)
        np.testing.assert_allclose(d.xmat[m.body(name).id], dref.xmat[ref.body(name).id], atol=1e-12)
    # at qpos0 the constraints hold: the equality residual is zero
    mujoco = _mujoco()
    mujoco.mj_forward(m, d)
    assert d.nefc >= 6 and np.abs(d.efc_pos[:6]).max() < 1e-12
    b = parsers.read_assembly(out)
    assert_same_assembly(a, b, joint_names=["crank_pivot", "crank_coupler", "rocker_pivot"])
    loops = sorted(j.name for j in b.joints if j.loop)
    assert loops == ["coupler_rocker_1", "coupler_rocker_2"]


@pytest.mark.slow
def test_mjcf_export_of_example_robots_loads_in_mujoco_with_our_masses_and_poses(tmp_path):
    checked = 0
    for path in _robots_we_read():
        a = read_urdf(path, package_dirs=[SHARE])
        moving_massless = [j for j in a.joints if j.type != "fixed" and a.body(j.secondary).mass.mass <= 0]
        unphysical = [b for b in a.bodies if b.mass.mass > 0 and inertia_problem(b.mass.inertia)]
        if moving_massless or unphysical:
            continue                           # MuJoCo refuses massless moving bodies and such inertias
        out = write_mjcf(a, tmp_path / (Path(path).stem + ".xml"), geometry=False)
        m, d = _mj(out)
        for body in a.bodies:
            k = m.body(body.name).id
            assert m.body_mass[k] == pytest.approx(body.mass.mass, rel=1e-12, abs=1e-12), body.name
            np.testing.assert_allclose(d.xpos[k], body.pose.translation, atol=1e-12)
            np.testing.assert_allclose(d.xmat[k].reshape(3, 3), body.pose.rotation, atol=1e-12)
        b = parsers.read_assembly(out)
        # MJCF has no continuous type: an unlimited hinge reads back as revolute
        assert_same_assembly(a, b, joint_names=[j.name for j in a.joints if j.type != "fixed"],
                             continuous_is_revolute=True)
        checked += 1
    assert checked >= 20


# ------------------------------------------------------------------ SDFormat

@pytest.mark.parametrize("src", ["fourbar.sdf", "sdf16_features.sdf:m16", "sdf16_features.sdf:box", "mjcf_features.xml",
                                 "arm.urdf"])
def test_sdf_export_reads_back_the_same_assembly_loops_included(src, tmp_path):
    src, _, model = src.partition(":")        # a world with two articulated models: one is read
    opts = {"package_dirs": [DATA]} if src.endswith(".urdf") else {"model": model} if model else {}
    a = parsers.read_assembly(DATA / src, **opts)
    out = write_sdf(a, tmp_path / "export.sdf")
    b = parsers.read_assembly(out)
    kept = [j.name for j in a.joints if j.type != "free" and j.secondary != GROUND]
    flipped = [j.name for j in a.joints if j.secondary == GROUND]
    assert_same_assembly(a, b, joint_names=kept, loop_flag=False)     # SDFormat has no loop marker
    for name in flipped:
        j, k = a.joint(name), b.joint(name)
        assert (k.reference, k.secondary) == (GROUND, j.reference)
    for j in a.joints:      # a free body that no other joint holds floats: SDFormat has no free joint
        held = any(j.secondary in (k.reference, k.secondary) for k in a.joints if k is not j)
        if j.type == "free" and not held:
            assert b.joint(f"{j.secondary}_free").type == "free"


def test_sdf_export_of_the_yaml_fourbar_equals_the_handwritten_sdf(tmp_path):
    a = parsers.read_assembly(FOURBAR)
    b = parsers.read_assembly(write_sdf(a, tmp_path / "fourbar.sdf"))
    c = parsers.read_assembly(DATA / "fourbar.sdf")
    assert_same_assembly(b, c)


# ------------------------------------------------------------------ named frames (lumped parts)

def test_named_frames_are_kept_in_every_format(tmp_path):
    pin = _pin()
    a = read_urdf(DATA / "arm.urdf", package_dirs=[DATA])
    part = Pose(np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]]), [0.3, 0.1, 0.2])   # in the assembly frame
    frames = {"upper": [("camera", part)]}
    m = pin.buildModelFromUrdf(str(write_urdf(a, tmp_path / "f.urdf", frames=frames)))
    d = m.createData()
    pin.framesForwardKinematics(m, d, pin.neutral(m))
    np.testing.assert_allclose(d.oMf[m.getFrameId("camera")].homogeneous, part.matrix(), atol=1e-15)
    mm, dd = _mj(write_mjcf(a, tmp_path / "f.xml", frames=frames))
    np.testing.assert_allclose(dd.site_xpos[mm.site("camera").id], part.translation, atol=1e-15)
    np.testing.assert_allclose(dd.site_xmat[mm.site("camera").id].reshape(3, 3), part.rotation, atol=1e-15)
    b = parsers.read_assembly(write_sdf(a, tmp_path / "f.sdf", frames=frames))
    assert_same_assembly(a, b, joint_names=["shoulder", "slide", "tool_weld"], loop_flag=False)


# ------------------------------------------------------------------ mass matrices of the exports

def _bridge():
    try:
        from mbcompose import composer
        from mbcompose import dynamics
    except ImportError:
        return None
    if hasattr(composer, "compose") and hasattr(dynamics, "mass_matrix"):
        return composer, dynamics
    return None


@pytest.mark.slow
@pytest.mark.skipif(_bridge() is None, reason="needs composer.compose and dynamics.mass_matrix")
@pytest.mark.parametrize("path", ROBOTS, ids=lambda p: os.path.basename(p)[:-5])
def test_mass_matrices_of_our_exports_match_pinocchio_and_mujoco(path, tmp_path):
    """M(q) of our model of each export against Pinocchio (URDF export) and MuJoCo (MJCF export).

    Every example-robot-data URDF we read; MuJoCo is left out only for robots it
    refuses (massless moving bodies, inertias breaking the triangle inequality).
    """
    pin = _pin()
    mujoco = _mujoco()
    composer, dynamics = _bridge()
    robot = Path(path).stem
    try:
        a = read_urdf(path, package_dirs=[SHARE])
    except parsers.InputError:
        pytest.skip("refused on input (Pinocchio refuses it too)")
    urdf = write_urdf(a, tmp_path / f"{robot}.urdf", geometry=False)
    pm = pin.buildModelFromUrdf(str(urdf))
    pd = pm.createData()
    ours_u = _tree(composer.compose(urdf).model)
    moving_massless = [j for j in a.joints if j.type != "fixed" and a.body(j.secondary).mass.mass <= 0]
    unphysical = [b for b in a.bodies if b.mass.mass > 0 and inertia_problem(b.mass.inertia)]
    checks = [(ours_u, "pinocchio")]
    if not (moving_massless or unphysical):
        mjcf = write_mjcf(a, tmp_path / f"{robot}.xml", geometry=False)
        mm = mujoco.MjModel.from_xml_path(str(mjcf))
        md = mujoco.MjData(mm)
        checks.append((_tree(composer.compose(mjcf).model), "mujoco"))
    names = [pm.names[i] for i in range(1, pm.njoints)]
    rng = np.random.default_rng(7)
    for _ in range(3):
        qj = {n: rng.uniform(-1, 1) for n in names}
        for ours, ref in checks:
            q = np.zeros(ours.nq)
            for n in names:
                q[ours.q_slice(n)] = qj[n]
            M = dynamics.mass_matrix(ours, q)
            perm = np.concatenate([np.arange(ours.nv)[ours.v_slice(n)] for n in names])
            M = M[np.ix_(perm, perm)]
            if ref == "pinocchio":
                qp = pin.neutral(pm)
                for i, n in enumerate(names, 1):
                    jm = pm.joints[i]
                    qp[jm.idx_q:jm.idx_q + jm.nq] = [np.cos(qj[n]), np.sin(qj[n])] if jm.nq == 2 else [qj[n]]
                R = pin.crba(pm, pd, qp)
                R = np.triu(R) + np.triu(R, 1).T
            else:
                for n in names:
                    md.qpos[mm.jnt_qposadr[mm.joint(n).id]] = qj[n]
                mujoco.mj_forward(mm, md)
                full = np.zeros((mm.nv, mm.nv))
                try:
                    mujoco.mj_fullM(mm, md, full)          # MuJoCo >= 4
                except TypeError:
                    mujoco.mj_fullM(mm, full, md.qM)       # MuJoCo 3
                order = [mm.jnt_dofadr[mm.joint(n).id] for n in names]
                R = full[np.ix_(order, order)]
            np.testing.assert_allclose(M, R, atol=1e-9 * max(1.0, np.abs(R).max()), err_msg=ref)


def test_mjcf_export_of_universal_ball_and_flipped_joints_matches_the_assembly_in_mujoco(tmp_path):
    a = parsers.read_assembly(DATA / "sdf16_features.sdf", model="m16")
    m, d = _mj(write_mjcf(a, tmp_path / "sdf16.xml"))
    for b in a.bodies:
        k = m.body(b.name).id
        assert m.body_mass[k] == pytest.approx(b.mass.mass, rel=1e-12)
        np.testing.assert_allclose(d.xpos[k], b.pose.translation, atol=1e-12)
        np.testing.assert_allclose(d.xmat[k].reshape(3, 3), b.pose.rotation, atol=1e-12)
    jb = a.joint("jb")                               # universal: two hinges, axis then axis2
    for suffix, axis in (("_1", jb.axis), ("_2", jb.axis2)):
        k = m.joint("jb" + suffix).id
        np.testing.assert_allclose(d.xaxis[k], axis, atol=1e-12)
        np.testing.assert_allclose(d.xanchor[k], jb.origin, atol=1e-12)
    jca = a.joint("jca")                             # tree reaches c through a: flipped, axis negated
    k = m.joint("jca").id
    assert m.body(m.jnt_bodyid[k]).name == "c"
    np.testing.assert_allclose(d.xaxis[k], -jca.axis, atol=1e-12)
    assert m.neq == 1 and m.eq_type[0] == _mujoco().mjtEq.mjEQ_CONNECT     # the ball joint jc closes the loop
    m, d = _mj(write_mjcf(parsers.read_assembly(DATA / "sdf16_features.sdf", model="box"), tmp_path / "box.xml"))
    assert m.jnt_type[m.joint("lid_free").id] == _mujoco().mjtJoint.mjJNT_FREE


def _tree(model):
    """The spanning tree's model (robots with mimic joints are coupled models): its M is what
    Pinocchio's default parser and MuJoCo's M (equalities aside) give."""
    return getattr(model, "tree_model", model)
