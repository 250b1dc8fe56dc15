"""MJCF reader against MuJoCo's own compiler (mujoco.MjModel) at qpos0.

For every body MuJoCo keeps: mass (body_mass), centre of mass (body_ipos),
inertia about the centre of mass in the body frame (body_iquat, body_inertia),
world pose after mj_forward (xpos, xmat); for every joint: anchor and axis in the
world (xanchor, xaxis); equality constraints (eq_obj1id, eq_obj2id, eq_data).
"""

from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from mbcompose import parsers  # noqa: E402
from mbcompose.parsers import GROUND, InputError  # noqa: E402
from mbcompose.parsers.mjcf.reader import read_mjcf  # noqa: E402
from mbcompose.dynamics.spatial import quat_to_matrix  # noqa: E402

DATA = Path(__file__).parent / "data"


def mujoco_reference(path=None, text=None):
    """MuJoCo's model and data at qpos0, from a file or from ``text``."""
    m = mujoco.MjModel.from_xml_path(str(path)) if text is None else mujoco.MjModel.from_xml_string(text)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return m, d


def compare_with_mujoco(a, m, d, atol=1e-9):
    """Assert that Assembly ``a`` matches MuJoCo's model ``m`` at qpos0."""
    ours = {b.name: b for b in a.bodies}
    for i in range(1, m.nbody):
        name = m.body(i).name or f"body{i}"
        b = ours[name]
        tol = atol
        assert b.mass.mass == pytest.approx(m.body_mass[i], rel=tol, abs=1e-12), name
        np.testing.assert_allclose(b.pose.translation, d.xpos[i], atol=atol, err_msg=name)
        np.testing.assert_allclose(b.pose.rotation, d.xmat[i].reshape(3, 3), atol=atol, err_msg=name)
        np.testing.assert_allclose(b.mass.com, m.body_ipos[i], atol=tol, err_msg=name)
        R = quat_to_matrix(m.body_iquat[i])
        J = R @ np.diag(m.body_inertia[i]) @ R.T
        np.testing.assert_allclose(b.mass.inertia, J, atol=tol * max(1.0, np.abs(J).max()), err_msg=name)
    massive = {m.body(i).name or f"body{i}" for i in range(1, m.nbody)}
    extra = [b for b in a.bodies if b.name not in massive]
    assert all(b.mass.mass == 0.0 for b in extra)
    assert a.total_mass == pytest.approx(float(m.body_mass.sum()), rel=1e-6)
    types = {0: "free", 1: "spherical", 2: "prismatic", 3: "revolute"}
    tree_joints = [j for j in a.joints if not j.loop and j.type != "fixed"]
    assert len(tree_joints) == m.njnt
    for k in range(m.njnt):
        body = m.body(m.jnt_bodyid[k]).name or f"body{m.jnt_bodyid[k]}"
        name = m.joint(k).name or None
        j = a.joint(name) if name else [j for j in tree_joints if j.secondary == body][0]
        assert j.type == types[m.jnt_type[k]]
        if j.type in ("revolute", "prismatic", "spherical"):
            np.testing.assert_allclose(j.origin, d.xanchor[k], atol=atol, err_msg=j.name)
        if j.type in ("revolute", "prismatic"):
            np.testing.assert_allclose(j.axis, d.xaxis[k], atol=atol, err_msg=j.name)
    loops = [j for j in a.joints if j.loop]
    assert len(loops) == m.neq
    for k, j in enumerate(loops):
        b1 = m.body(m.eq_obj1id[k]).name
        b2 = m.body(m.eq_obj2id[k]).name
        ends = (GROUND if b1 == "world" else b1, GROUND if b2 == "world" else b2)
        assert (j.reference, j.secondary) == (ends if ends[1] != GROUND else ends[::-1])
        if m.eq_type[k] == mujoco.mjtEq.mjEQ_CONNECT:
            assert j.type == "spherical"
            i1 = m.eq_obj1id[k]
            np.testing.assert_allclose(j.origin, d.xpos[i1] + d.xmat[i1].reshape(3, 3) @ m.eq_data[k, :3], atol=atol)
        else:
            assert j.type == "fixed"


def test_feature_file_matches_mujoco_bodies_joints_and_inertias():
    path = DATA / "mjcf_features.xml"
    a = read_mjcf(path)
    m, d = mujoco_reference(path)
    compare_with_mujoco(a, m, d)
    np.testing.assert_allclose(a.gravity, [0, 0, -9.8])


def test_several_joints_in_one_body_become_a_chain_through_massless_bodies():
    a = read_mjcf(DATA / "mjcf_features.xml")
    chain = [(j.reference, j.secondary) for j in (a.joint("w1"), a.joint("w2"), a.joint("w3"))]
    assert chain == [("upper", "wrist__w1"), ("wrist__w1", "wrist__w2"), ("wrist__w2", "wrist")]
    for n in ("wrist__w1", "wrist__w2"):
        assert a.body(n).mass.mass == 0.0
        assert a.body(n).pose.isclose(a.body("wrist").pose)


def test_jointless_bodies_are_welded_and_equalities_are_loop_joints():
    a = read_mjcf(DATA / "mjcf_features.xml")
    w = a.joint("weld_fixed")
    assert (w.type, w.reference, w.secondary, w.loop) == ("fixed", "upper", "weld", False)
    tie = a.joint("tie")
    assert (tie.type, tie.reference, tie.secondary, tie.loop) == ("spherical", "framed", "floater", True)
    weld = [j for j in a.joints if j.loop and j.type == "fixed"][0]
    assert (weld.reference, weld.secondary) == (GROUND, "wrist")      # ground is the reference
    assert a.body("body5").mass.mass == pytest.approx(0.3)     # unnamed body: MuJoCo's id
    ha = a.joint("hinge_a")
    assert ha.actuated and ha.motor.gear_ratio == 30 and ha.motor.max_effort == 5
    assert ha.limits.lower == pytest.approx(-np.pi / 2) and ha.damping == pytest.approx(0.1)


@pytest.mark.parametrize("seq", ["xyz", "XYZ", "zyx", "ZYX", "xzx", "YXY"])
@pytest.mark.parametrize("angle", ["degree", "radian"])
def test_euler_sequences_and_angle_units_match_mujoco(seq, angle):
    e = "20 -35 50" if angle == "degree" else "0.3 -0.6 0.9"
    text = f"""<mujoco><compiler angle="{angle}" eulerseq="{seq}"/><worldbody>
      <body name="b" euler="{e}"><joint type="hinge" axis="1 2 3" range="-1 1"/><geom size="0.1"/>
        <body name="c" pos="0.1 0.2 0.3" axisangle="1 1 0 {'30' if angle == 'degree' else '0.5'}">
          <joint type="slide" axis="0 1 0"/><geom type="box" size=".1 .2 .3" euler="{e}"/></body>
      </body></worldbody></mujoco>"""
    a = read_mjcf("inline.xml", text=text)
    m, d = mujoco_reference(text=text)
    compare_with_mujoco(a, m, d)


def test_fusestatic_merges_jointless_bodies_like_mujoco():
    text = (DATA / "mjcf_features.xml").read_text().replace(
        '<compiler angle="degree"', '<compiler fusestatic="true" angle="degree"').replace(
        'meshdir="meshpkg/meshes"', f'meshdir="{DATA / "meshpkg" / "meshes"}"')
    a = read_mjcf(DATA / "mjcf_features.xml", text=text)
    m, d = mujoco_reference(text=text)
    names = {m.body(i).name or f"body{i}" for i in range(1, m.nbody)}
    assert "weld" not in names and "weld" not in a.body_names
    # MuJoCo renumbers unnamed bodies after fusing; ours keep their pre-fusion id
    a_massive = sorted(b.mass.mass for b in a.bodies if b.mass.mass > 0)
    np.testing.assert_allclose(a_massive, sorted(m.body_mass[1:]), rtol=1e-6)
    for i in range(1, m.nbody):
        if m.body(i).name:
            b = a.body(m.body(i).name)
            assert b.mass.mass == pytest.approx(m.body_mass[i], rel=1e-6)     # float32 mesh in MuJoCo
            np.testing.assert_allclose(b.mass.com, m.body_ipos[i], atol=1e-7)
            np.testing.assert_allclose(b.pose.translation, d.xpos[i], atol=1e-9)


def test_inertiafromgeom_true_ignores_inertial_and_false_ignores_geoms():
    base = """<mujoco><compiler inertiafromgeom="{v}"/><worldbody><body name="b">
      <joint type="hinge"/><geom type="capsule" size="0.1 0.3" pos="0.1 0 0"/>
      <inertial pos="0 0 0.2" mass="3" diaginertia="0.1 0.2 0.25"/></body></worldbody></mujoco>"""
    for v in ("true", "false", "auto"):
        text = base.format(v=v)
        compare_with_mujoco(read_mjcf("x.xml", text=text), *mujoco_reference(text=text))


def test_mjcf_through_the_registry_by_suffix_and_root_element(tmp_path):
    text = (DATA / "mjcf_features.xml").read_text().replace('meshdir="meshpkg/meshes"',
                                                          f'meshdir="{DATA / "meshpkg" / "meshes"}"')
    for name in ("model.mjcf", "model.xml"):
        f = tmp_path / name
        f.write_text(text)
        assert parsers.read_assembly(f).name == "features"


def test_moving_body_without_mass_is_refused_as_mujoco_does():
    text = "<mujoco><worldbody>\n<body name='a'>\n<joint/>\n</body></worldbody></mujoco>"
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(text)
    with pytest.raises(InputError) as exc:
        read_mjcf("m.xml", text=text)
    assert exc.value.line == 2


def test_include_is_expanded_in_place_and_matches_mujoco(tmp_path):
    (tmp_path / "arm.xml").write_text("""<mujoco><worldbody>
      <body name="arm" pos="0 0 1"><joint type="hinge" axis="1 0 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      </body></worldbody></mujoco>""")
    main = tmp_path / "main.xml"
    main.write_text("""<mujoco model="inc"><compiler angle="radian"/>
      <include file="arm.xml"/>
      <worldbody><body name="base" pos="1 0 0"><geom type="box" size="0.1 0.1 0.1"/></body></worldbody>
    </mujoco>""")
    a = read_mjcf(main)
    compare_with_mujoco(a, *mujoco_reference(main))
    assert a.body_names == ("arm", "base")


def test_unsupported_elements_are_refused_with_their_line():
    text = "<mujoco>\n<worldbody>\n<composite type='particle' count='2 2 2'/>\n</worldbody></mujoco>"
    with pytest.raises(InputError) as exc:
        read_mjcf("r.xml", text=text)
    assert exc.value.line == 3 and "composite" in str(exc.value)


@pytest.mark.parametrize("mode", ["exact", "convex", "legacy", "shell"])
def test_mesh_inertia_modes_match_mujoco(mode):
    mesh = DATA / "meshpkg" / "meshes" / "l_bracket.obj"
    text = f"""<mujoco><asset><mesh name="L" file="{mesh}" inertia="{mode}" scale="1.3 0.7 1.1"/></asset>
      <worldbody><body name="b" pos="0 0 1"><joint/><geom type="mesh" mesh="L" pos="0.1 0 0" euler="0 0 30"/>
      </body></worldbody></mujoco>"""
    compare_with_mujoco(read_mjcf("m.xml", text=text), *mujoco_reference(text=text))


def test_nonconvex_mesh_default_legacy_is_mujocos_and_the_exact_solid_is_an_option(caplog):
    mesh = DATA / "meshpkg" / "meshes" / "l_bracket.obj"
    text = f"""<mujoco><asset><mesh name="L" file="{mesh}"/></asset>
      <worldbody><body name="b"><joint/><geom type="mesh" mesh="L" density="1000"/></body></worldbody></mujoco>"""
    compare_with_mujoco(read_mjcf("m.xml", text=text), *mujoco_reference(text=text))
    assert "differs from the exact solid's" in caplog.text
    caplog.clear()
    a = read_mjcf("m.xml", text=text, mesh_inertia="exact")
    assert "differs from the exact solid's" in caplog.text
    area = 0.3 * 0.1 + 0.1 * 0.2                       # the L polygon
    assert a.body("b").mass.mass == pytest.approx(1000 * area * 0.05, rel=1e-12)
    exact = text.replace('file=', 'inertia="exact" file=')      # MuJoCo reads the vertices in single precision
    compare_with_mujoco(a, *mujoco_reference(text=exact), atol=1e-6)


def test_open_mesh_is_accepted_by_mujocos_legacy_rule_and_warned(tmp_path, caplog):
    box = (DATA / "meshpkg" / "meshes" / "box_10x20x30cm.obj").read_text().splitlines()
    faces = [k for k, line in enumerate(box) if line.startswith("f ")]
    (tmp_path / "open.obj").write_text("\n".join(line for k, line in enumerate(box) if k != faces[0]) + "\n")
    text = f"""<mujoco><asset><mesh name="o" file="{tmp_path / 'open.obj'}"/></asset>
      <worldbody><body name="b"><joint/><geom type="mesh" mesh="o"/></body></worldbody></mujoco>"""
    compare_with_mujoco(read_mjcf("m.xml", text=text), *mujoco_reference(text=text))
    assert "not a closed solid" in caplog.text
    with pytest.raises(InputError, match="not watertight"):
        read_mjcf("m.xml", text=text, mesh_inertia="exact")
