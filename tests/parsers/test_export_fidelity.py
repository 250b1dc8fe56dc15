"""Lossless exports (issue 27 point 2, issue 24's exports of inferred joints), checked on files nobody
here wrote, with MuJoCo and Pinocchio as the references.

* MJCF -> our reader -> MJCF export, both files compiled by MuJoCo: the same number of visual-only
  geoms (``contype = conaffinity = 0``) per body, the same colours, the same contacts (body pairs
  of ``mj_forward``'s contacts) at the keyframe (else ``qpos0``) and at random joint positions, the
  same actuators (every one our reader models) with the same ``qfrc_actuator`` for random controls
  at a random state.  Installed models: dm_control's suite and gymnasium's MuJoCo XMLs (visual-only
  geoms, materials, position/motor actuators, tendons); Menagerie's Franka panda when present
  (``$MBCOMPOSE_MENAGERIE``, else ``../shared/mujoco_menagerie`` beside the repository: the
  fetched repository's files are not committed, as for the CAD corpus, tests/data/cad/README.md).
* URDF export of the STEP seeker: Pinocchio's VISUAL model has one geometry per part.
* example-robot-data's panda URDF: the native YAML round trip keeps dof 8 (the finger mimic); the
  lumped URDF and MJCF exports still name the tool point ``panda_hand_tcp`` (a Pinocchio frame, a
  MuJoCo site); the MJCF export uses the visual DAE meshes (converted to STL in ``assets/``).
* A cylindrical and a universal joint exported to URDF (two joints through a massless link) give
  Pinocchio's mass matrix equal to ours.
"""

import importlib.util
import json
import logging
import os
import sysconfig
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose.composer.cli.commands import main
from mbcompose.composer.exports import export_writers
from mbcompose.dynamics.tolerances import INERTIA_RTOL
from mbcompose.parsers.exporters.mjcf import write_mjcf
from mbcompose.parsers.mjcf.reader import read_mjcf

mujoco = pytest.importorskip("mujoco")

ROOT = Path(__file__).resolve().parents[2]
PURELIB = Path(sysconfig.get_paths()["purelib"])
SHARE = PURELIB / "cmeel.prefix" / "share"
PANDA_URDF = SHARE / "example-robot-data" / "robots" / "panda_description" / "urdf" / "panda.urdf"


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    return Path(spec.origin).parent if spec is not None and spec.origin else PURELIB / name


SUITE = _package_dir("dm_control") / "suite"
GYM = _package_dir("gymnasium") / "envs" / "mujoco" / "assets"
MENAGERIE = Path(os.environ.get("MBCOMPOSE_MENAGERIE", ROOT.parent / "shared" / "mujoco_menagerie"))

INSTALLED = [SUITE / "manipulator.xml", SUITE / "finger.xml", SUITE / "stacker.xml", GYM / "pusher.xml",
             GYM / "reacher.xml", GYM / "swimmer.xml", GYM / "humanoidstandup.xml"]

#: qfrc_actuator of the two files: the same arithmetic on numbers written with 17 digits
QFRC_RTOL = INERTIA_RTOL


def _joint_values(m, d, field_adr, values) -> dict:
    return {m.joint(i).name: values[field_adr[i]] for i in range(m.njnt) if m.jnt_type[i] in (2, 3)}


def _set_joints(m, d, q: dict, v: dict | None = None) -> None:
    for i in range(m.njnt):
        name = m.joint(i).name
        if name in q:
            d.qpos[m.jnt_qposadr[i]] = q[name]
        if v is not None and name in v:
            d.qvel[m.jnt_dofadr[i]] = v[name]


def _contacts(m, d) -> Counter:
    """Body pairs (names) of the contacts between two bodies; contacts with world geoms (the floor,
    which the Assembly does not carry) left out."""
    out = Counter()
    for c in d.contact[:d.ncon]:
        b1, b2 = m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2]
        if b1 and b2:
            out[tuple(sorted((m.body(b1).name, m.body(b2).name)))] += 1
    return out


def _looks(m) -> Counter:
    """(body, visual only, colour) of every geom of a body: colours as MuJoCo draws them (the
    material's unless the geom's own ``rgba`` is not the default, ``mjv_updateScene``)."""
    out = Counter()
    for g in range(m.ngeom):
        b = m.geom_bodyid[g]
        if not b:
            continue
        own = np.allclose(m.geom_rgba[g], [0.5, 0.5, 0.5, 1.0])
        rgba = m.mat_rgba[m.geom_matid[g]] if m.geom_matid[g] >= 0 and own else m.geom_rgba[g]
        visual = m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0
        out[(m.body(b).name, bool(visual), tuple(np.round(rgba, 6)))] += 1
    return out


def _actuated_joint(m, i) -> str | None:
    return m.joint(m.actuator_trnid[i, 0]).name if m.actuator_trntype[i] == mujoco.mjtTrn.mjTRN_JOINT else None


def check_mjcf_export(source: Path, out: Path) -> dict:
    """Export ``source`` through our reader and MJCF writer to ``out`` and compare the two in MuJoCo
    (module docstring); returns the counts compared, for the message."""
    a = read_mjcf(source)
    write_mjcf(a, out)
    m0, m1 = mujoco.MjModel.from_xml_path(str(source)), mujoco.MjModel.from_xml_path(str(out))
    d0, d1 = mujoco.MjData(m0), mujoco.MjData(m1)
    assert _looks(m1) == _looks(m0)
    if m0.nkey:
        mujoco.mj_resetDataKeyframe(m0, d0, 0)
    rng = np.random.default_rng(7)
    hinges = [i for i in range(m0.njnt) if m0.jnt_type[i] in (2, 3)]
    for trial in range(4):
        if trial:
            for i in hinges:
                lo, hi = m0.jnt_range[i] if m0.jnt_limited[i] else (-np.pi, np.pi)
                d0.qpos[m0.jnt_qposadr[i]] = rng.uniform(lo, hi)
        _set_joints(m1, d1, _joint_values(m0, d0, m0.jnt_qposadr, d0.qpos))
        mujoco.mj_forward(m0, d0)
        mujoco.mj_forward(m1, d1)
        assert _contacts(m1, d1) == _contacts(m0, d0), f"contacts differ (trial {trial})"
    modelled = [i for i in range(m0.nu) if _actuated_joint(m0, i) is not None]
    for i in set(range(m0.nu)) - set(modelled):      # not carried (tendon transmissions): their force off
        m0.actuator_gainprm[i] = 0.0
        m0.actuator_biasprm[i] = 0.0
    assert m1.nu == len(a.actuators) == len([x for x in a.actuators if x.joint in a.joint_names or x.tendon])
    by_joint = {}
    for i in modelled:
        by_joint.setdefault(_actuated_joint(m0, i), []).append(i)
    for k in range(3):
        d0.qvel[:] = rng.normal(size=m0.nv)
        ctrl = np.zeros(m0.nu)
        ctrl[modelled] = rng.uniform(-2, 2, len(modelled))
        d0.ctrl[:] = ctrl
        taken = Counter()
        for i in range(m1.nu):
            j = _actuated_joint(m1, i)
            if j is None:           # on a tendon: off here, as in the original (tests/robots/test_force_exports.py)
                d1.ctrl[i] = 0.0
                continue
            d1.ctrl[i] = ctrl[by_joint[j][taken[j]]]
            taken[j] += 1
        _set_joints(m1, d1, _joint_values(m0, d0, m0.jnt_qposadr, d0.qpos),
                    _joint_values(m0, d0, m0.jnt_dofadr, d0.qvel))
        mujoco.mj_forward(m0, d0)
        mujoco.mj_forward(m1, d1)
        f0 = _joint_values(m0, d0, m0.jnt_dofadr, d0.qfrc_actuator)
        f1 = _joint_values(m1, d1, m1.jnt_dofadr, d1.qfrc_actuator)
        scale = max(1.0, max(abs(x) for x in f0.values()))
        assert all(abs(f1[n] - f0[n]) <= QFRC_RTOL * scale for n in f1 if n in f0)
    return {"actuators": m1.nu, "of": m0.nu, "visual": sum(n for (_, vis, _), n in _looks(m0).items() if vis)}


@pytest.mark.parametrize("source", INSTALLED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_mjcf_export_of_installed_models_keeps_looks_contacts_and_actuators(source, tmp_path):
    if not source.exists():
        pytest.skip(f"{source} is not installed")
    check_mjcf_export(source, tmp_path / "export.xml")


def test_mjcf_export_of_menagerie_panda_keeps_looks_contacts_and_actuators(tmp_path, caplog):
    panda = MENAGERIE / "franka_emika_panda" / "panda.xml"
    if not panda.exists():
        pytest.skip(f"Menagerie's panda not found at {panda} (set MBCOMPOSE_MENAGERIE to a checkout of "
                    "google-deepmind/mujoco_menagerie)")
    with caplog.at_level(logging.WARNING):
        counts = check_mjcf_export(panda, panda.parent / f"_mbcompose_export_{os.getpid()}.xml")
    (panda.parent / f"_mbcompose_export_{os.getpid()}.xml").unlink()
    # the eighth actuator drives the fingers through a tendon: the Assembly has no tendon transmission
    assert counts["of"] == 8 and counts["actuators"] == 7
    assert "tendon transmission" in caplog.text


def test_urdf_export_of_step_seeker_has_a_visual_geometry_per_part(tmp_path):
    pytest.importorskip("OCP")
    pin = pytest.importorskip("pinocchio")
    out = tmp_path / "seeker.urdf"
    r = CliRunner().invoke(main, ["convert", str(ROOT / "samples" / "seeker_cad" / "seeker.step"), "-o", str(out)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["inspect", str(ROOT / "samples" / "seeker_cad" / "seeker.step"), "--format", "json"])
    parts = [b["name"] if isinstance(b, dict) else b for b in json.loads(r.output)["bodies"]]
    _, collision, visual = pin.buildModelsFromUrdf(str(out), str(tmp_path))
    assert visual.ngeoms == len(parts) == 9
    assert collision.ngeoms == len(parts)


def _inspect_dof(path) -> int:
    r = CliRunner().invoke(main, ["inspect", str(path), "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["dof"]


def test_yaml_round_trip_of_panda_urdf_keeps_the_mimic(tmp_path):
    if not PANDA_URDF.exists():
        pytest.skip(f"example-robot-data's panda not found at {PANDA_URDF}")
    out = tmp_path / "panda.yaml"
    r = CliRunner().invoke(main, ["convert", str(PANDA_URDF), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert _inspect_dof(PANDA_URDF) == 8
    assert _inspect_dof(out) == 8


def test_lumped_exports_of_panda_name_the_tool_point(tmp_path):
    if not PANDA_URDF.exists():
        pytest.skip(f"example-robot-data's panda not found at {PANDA_URDF}")
    pin = pytest.importorskip("pinocchio")
    for name in ("panda.urdf", "panda.xml"):
        r = CliRunner().invoke(main, ["convert", str(PANDA_URDF), "-o", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
    model = pin.buildModelFromUrdf(str(tmp_path / "panda.urdf"))
    assert model.existFrame("panda_hand_tcp")
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "panda.xml"))
    assert m.site("panda_hand_tcp").id >= 0
    # the panda's visual meshes are DAE: converted to STL in assets/ and used, one visual geom each
    dae = PANDA_URDF.read_text().count(".dae")
    visual = int(np.sum((m.geom_contype == 0) & (m.geom_conaffinity == 0)))
    assert visual == dae == 11


TIAGO_URDF = SHARE / "example-robot-data" / "robots" / "tiago_description" / "robots" / "tiago.urdf"


def _transmissions(path) -> dict:
    """Joint -> (actuator name, mechanicalReduction) of a URDF file's ``<transmission>`` elements."""
    from lxml import etree

    out = {}
    for t in etree.parse(str(path)).getroot().iter("transmission"):
        act = t.find("actuator")
        reduction = act.findtext("mechanicalReduction")
        out[t.find("joint").get("name")] = (act.get("name"), float(reduction) if reduction else 1.0)
    return out


def test_lumped_urdf_export_of_tiago_keeps_its_motors(tmp_path):
    """The actuators of example-robot-data's TIAGo (names and reductions, -79.24 and 0.0739 among them)
    are those of the input file in the lumped URDF export, for every joint the export keeps."""
    if not TIAGO_URDF.exists():
        pytest.skip(f"example-robot-data's tiago not found at {TIAGO_URDF}")
    out = tmp_path / "tiago.urdf"
    r = CliRunner().invoke(main, ["convert", str(TIAGO_URDF), "-o", str(out), "--package-dir", str(SHARE)])
    assert r.exit_code == 0, r.output
    given, written = _transmissions(TIAGO_URDF), _transmissions(out)
    kept = set(given) & set(written)
    assert len(kept) >= 10 and any(abs(given[j][1]) != 1.0 for j in kept)
    assert {j: written[j] for j in kept} == {j: given[j] for j in kept}


CYLINDER_YAML = """
name: sleeve
bodies:
  - {name: sleeve, pose: {xyz: [0.1, 0.0, 0.3]}, inertial: {mass: 1.5, com: [0.02, 0.01, 0.05],
     inertia: {ixx: 0.01, iyy: 0.02, izz: 0.015, ixy: 0.001, ixz: 0.0, iyz: 0.002}}}
  - {name: arm, pose: {xyz: [0.1, 0.2, 0.3]}, inertial: {mass: 0.7, com: [0.0, 0.1, 0.0],
     inertia: {ixx: 0.003, iyy: 0.001, izz: 0.003}}}
joints:
  - {name: turn, type: revolute, reference: ground, secondary: sleeve, origin: [0.1, 0.0, 0.3], axis: [1, 0, 0]}
  - {name: slide, type: cylindrical, reference: sleeve, secondary: arm, origin: [0.1, 0.2, 0.3], axis: [0, 0.6, 0.8]}
"""


UNIVERSAL_YAML = CYLINDER_YAML.replace("type: cylindrical", "type: universal").replace(
    "axis: [0, 0.6, 0.8]}", "axis: [0, 0.6, 0.8], axis2: [1, 0, 0]}")


@pytest.mark.parametrize("kind", ["cylindrical", "universal"])
def test_urdf_export_of_a_joint_urdf_lacks_gives_pinocchios_mass_matrix_equal_to_ours(kind, tmp_path, caplog):
    pin = pytest.importorskip("pinocchio")
    import mbcompose
    from mbcompose.dynamics import mass_matrix

    src = tmp_path / "sleeve.yaml"
    src.write_text(CYLINDER_YAML if kind == "cylindrical" else UNIVERSAL_YAML)
    c = mbcompose.compose(str(src))
    with caplog.at_level(logging.WARNING):
        writers = export_writers(c.lumped, ["sleeve.urdf"], tmp_path)
        writers["sleeve.urdf"](tmp_path / "sleeve.urdf")
    assert f"slide ({kind})" in caplog.text
    pm = pin.buildModelFromUrdf(str(tmp_path / "sleeve.urdf"))
    pd = pm.createData()
    parts = ["slide_hinge", "slide_slide"] if kind == "cylindrical" else ["slide_1", "slide_2"]
    assert [pm.names[i] for i in range(1, pm.njoints)] == ["turn", *parts]
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = rng.uniform(-1, 1, c.model.nq)
        # our coordinates (dynamics.joints): cylindrical angle then slide, universal axis then axis2,
        # as the URDF's two joints; a continuous joint's are (cos, sin) in Pinocchio
        q1, q2 = q[c.model.q_slice("slide")]
        turn = q[c.model.q_slice("turn")][0]
        qp = np.array([turn, np.cos(q1), np.sin(q1), q2] if kind == "cylindrical" else [turn, q1, q2])
        M = mass_matrix(c.model, q)
        Mp = pin.crba(pm, pd, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        np.testing.assert_allclose(M, Mp, rtol=INERTIA_RTOL, atol=INERTIA_RTOL * np.abs(Mp).max())


def _cylindrical_fourbar(tmp_path) -> Path:
    """The four-bar sample with its coupler-rocker pin made a cylindrical joint (as CAD inference finds
    a pin in a clearance hole): still one dof, its slide locked by the other pins."""
    text = (ROOT / "samples" / "fourbar" / "fourbar.yaml").read_text()
    text = text.replace("  - name: coupler_rocker       # C\n    type: revolute",
                        "  - name: coupler_rocker       # C\n    type: cylindrical")
    assert "type: cylindrical" in text
    path = tmp_path / "fourbar_cylindrical.yaml"
    path.write_text(text)
    return path


def test_mjcf_export_closes_a_cylindrical_loop_joint_with_the_mechanisms_dof(tmp_path, caplog):
    from mbcompose.dynamics.tolerances import GEOMETRY_ATOL, GRAPH_RANK_RTOL

    src = _cylindrical_fourbar(tmp_path)
    out = tmp_path / "fourbar.xml"
    with caplog.at_level(logging.WARNING):
        r = CliRunner().invoke(main, ["convert", str(src), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert _inspect_dof(src) == 1
    m = mujoco.MjModel.from_xml_path(str(out))
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    eq = [m.eq(i).name for i in range(m.neq)]
    assert "coupler_rocker" in eq or any(n.startswith("crank_coupler") for n in eq)
    rows = [i for i in range(d.nefc) if d.efc_type[i] == mujoco.mjtConstraint.mjCNSTR_EQUALITY]
    assert np.all(np.abs(d.efc_pos[rows]) <= GEOMETRY_ATOL * 10)
    J = d.efc_J.reshape(d.nefc, m.nv)[rows]
    s = np.linalg.svd(J, compute_uv=False)
    rank = int(np.sum(s > GRAPH_RANK_RTOL * s[0]))
    assert m.nv - rank == 1      # MuJoCo's constrained mechanism has the dof of ours
