"""Exports keep their force elements (issue 26, must-show 4), with MuJoCo, Drake and Pinocchio as the
references.

* MJCF -> our reader -> MJCF export: MuJoCo on the export gives ``qfrc_spring + qfrc_damper`` (the
  springs and dampers of ``qfrc_passive``; fluid forces and gravity compensation, which the Assembly
  does not carry, are not compared) and ``qfrc_actuator`` equal to our ``passive_forces`` and
  ``actuator_forces`` on the original, and to MuJoCo's on the original, to 1e-9 (relative to the largest
  entry, at least 1) at random states and controls, on every gymnasium and dm_control suite model
  (coordinates mapped by :mod:`mujoco_refs`; actuators our reader skips are taken out of the original's
  ``qfrc_actuator``);
* the seeker with YAML force elements (joint springs and dampers as fixed tendons, spring-dampers between
  two body points as spatial tendons through two sites) exported lumped to MJCF: MuJoCo's
  ``qfrc_spring + qfrc_damper`` equals our ``passive_forces`` on the YAML model; what MJCF cannot hold
  (the regularised Coulomb friction, DC motors) is named in one warning;
* SDFormat export of joint springs read by Drake (its own parser: ``RevoluteSpring`` and joint damping,
  ``CalcForceElementsContribution``) against our passive forces;
* URDF export keeps damping and friction: Pinocchio reads them back (``model.damping``,
  ``model.friction``), our reader gives the same damping and friction forces; the stiffness URDF cannot
  hold warns.
"""

import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.parsers.exporters.mjcf import write_mjcf
from mbcompose.parsers.exporters.sdf import write_sdf
from mbcompose.parsers.exporters.urdf import write_urdf
from mbcompose.parsers.mjcf.reader import read_mjcf
from mujoco_refs import reference_orientations, to_mujoco
from test_mujoco_corpora import DM_SUITE, GYMNASIUM, KNOWN_REFUSALS, TREE_DIFFERS, random_configuration
from test_mujoco_forces import _moments, _our_actuators, _relative_close, _wrapping_tendons

mujoco = pytest.importorskip("mujoco")

ROOT = Path(__file__).resolve().parents[2]
SEEKER = ROOT / "samples" / "seeker" / "seeker_motors.yaml"

SEEKER_JOINT_FORCES = """  - {name: torsion, type: joint_spring, joint: pitch_a, stiffness: 0.8, damping: 0.01, rest: 10}
  - {name: yaw_spring, type: joint_spring, joint: yaw_a, stiffness: 0.3, damping: 0.02, rest: -5}
"""
SEEKER_FORCES = SEEKER_JOINT_FORCES + """  - {name: strut, type: spring_damper, bodies: [housing, camera], points: [[10, 30, 5], [0, 0, 20]],
     stiffness: 50, damping: 1.5, rest_length: 10}
  - {name: tether, type: spring_damper, bodies: [ground, shaft_a], points: [[50, 0, 0], [0, 5, 28]],
     stiffness: 20, damping: 0.5}
"""


def _mujoco_forces(m, d, ours, q, v, ctrl, B):
    """MuJoCo's (spring + damper, actuator) generalized forces in our coordinates at our state (q, v)."""
    qpos, T, _ = to_mujoco(m, ours, q, v, B)
    d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, T @ v, ctrl
    mujoco.mj_forward(m, d)
    return T.T @ (d.qfrc_spring + d.qfrc_damper), T.T @ d.qfrc_actuator


def check_mjcf_export_forces(source: Path, out: Path, n: int = 3) -> None:
    """Ours on ``source`` and MuJoCo on ``source`` and on its MJCF export ``out`` (module docstring)."""
    write_mjcf(read_mjcf(source), out)
    m0, m1 = mujoco.MjModel.from_xml_path(str(source)), mujoco.MjModel.from_xml_path(str(out))
    for k in _wrapping_tendons(m0):     # not supported (warned): left out of the reference
        m0.tendon_stiffness[k] = m0.tendon_damping[k] = 0.0
    d0, d1 = mujoco.MjData(m0), mujoco.MjData(m1)
    model = compose(source).model
    ours = getattr(model, "tree_model", model)
    if m0.nv == 0:
        return
    B0, B1 = reference_orientations(m0), reference_orientations(m1)
    kept = _our_actuators(m0, ours)
    skipped = np.setdiff1d(np.arange(m0.nu), kept)
    assert [m1.actuator(k).name for k in range(len(kept))] == list(ours.actuator_names)
    rng = np.random.default_rng(11)
    for _ in range(n):
        q, v = random_configuration(ours, rng), rng.normal(size=ours.nv)
        ctrl0 = rng.uniform(-2.0, 2.0, size=m0.nu)
        ctrl1 = np.zeros(m1.nu)
        ctrl1[:len(kept)] = ctrl0[kept]
        passive0, act0 = _mujoco_forces(m0, d0, ours, q, v, ctrl0, B0)
        act0 -= _to_ours(m0, ours, q, v, B0, _moments(m0, d0)[skipped].T @ d0.actuator_force[skipped])
        passive1, act1 = _mujoco_forces(m1, d1, ours, q, v, ctrl1, B1)
        _relative_close(passive1, passive0)
        _relative_close(dynamics.passive_forces(model, q, v) - dynamics.friction_forces(model, q, v), passive1)
        if len(kept):
            _relative_close(act1, act0)
            _relative_close(dynamics.actuator_forces(model, q, v, ctrl0[kept]), act1)


def _to_ours(m, ours, q, v, B, qfrc):
    return to_mujoco(m, ours, q, v, B)[1].T @ qfrc


def _corpus(paths):
    return [p for p in paths if os.path.basename(p) not in KNOWN_REFUSALS and os.path.basename(p) not in TREE_DIFFERS]


@pytest.mark.parametrize("path", _corpus(GYMNASIUM), ids=os.path.basename)
def test_mjcf_export_of_gymnasium_models_keeps_springs_dampers_and_actuators(path, tmp_path):
    check_mjcf_export_forces(Path(path), tmp_path / "export.xml")


@pytest.mark.slow
@pytest.mark.parametrize("path", _corpus(DM_SUITE), ids=os.path.basename)
def test_mjcf_export_of_dm_control_suite_keeps_springs_dampers_and_actuators(path, tmp_path):
    check_mjcf_export_forces(Path(path), tmp_path / "export.xml")


def _seeker_with_forces(tmp_path, extra: str = "", forces: str = SEEKER_FORCES) -> Path:
    """The seeker with its two DC motors and ``forces`` (+ ``extra``) in a copy of its folder."""
    folder = tmp_path / "seeker"
    shutil.copytree(SEEKER.parent, folder)
    path = folder / "seeker_forces.yaml"
    path.write_text(SEEKER.read_text() + forces + extra)
    return path


def test_lumped_mjcf_export_of_the_seeker_keeps_its_yaml_springs_as_tendons(tmp_path, caplog):
    path = _seeker_with_forces(tmp_path, "  - {name: rub, type: joint_friction, joint: yaw_a, friction: 0.05}\n")
    composition = compose(path)
    out = tmp_path / "seeker.xml"
    with caplog.at_level(logging.WARNING):
        write_mjcf(composition.lumped, out)
    lost = [r.getMessage() for r in caplog.records if "force elements left out" in r.getMessage()]
    assert len(lost) == 1 and all(name in lost[0] for name in ("pitch_motor", "yaw_motor", "rub"))
    m = mujoco.MjModel.from_xml_path(str(out))
    assert {m.tendon(k).name for k in range(m.ntendon)} == {"torsion", "yaw_spring", "strut", "tether"}
    d = mujoco.MjData(m)
    model = compose(_seeker_with_forces(tmp_path / "plain")).model      # the same without the friction
    B = reference_orientations(m)
    rng = np.random.default_rng(5)
    for _ in range(4):
        q, v = random_configuration(model, rng), rng.normal(size=model.nv)
        passive, _ = _mujoco_forces(m, d, model, q, v, np.zeros(m.nu), B)
        _relative_close(dynamics.passive_forces(model, q, v), passive)
        assert np.abs(passive).max() > 0.1


SPRUNG = """<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge" axis="0 1 0" ref="0.3" springref="0.5" stiffness="3" damping="0.2"/>
      <geom type="box" size="0.1 0.2 0.3" mass="2"/>
      <body name="b" pos="0 0 -0.5">
        <joint name="j2" type="slide" axis="1 0 0" ref="0.1" springref="-0.2" stiffness="5" damping="0.7"/>
        <geom type="sphere" size="0.1" mass="1"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def _drake_passive(path, names, q_of):
    """Drake's force elements' generalized forces on the model of ``path``, as a function of our state by
    joint name (``q_of(q)``: Drake's coordinate of each joint of ``names``)."""
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import MultibodyForces

    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(path))
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    starts = [(plant.GetJointByName(n).position_start(), plant.GetJointByName(n).velocity_start()) for n in names]

    def forces(q, v):
        qd, vd = np.zeros(plant.num_positions()), np.zeros(plant.num_velocities())
        for (qs, vs), x, w in zip(starts, q_of(q), v):
            qd[qs], vd[vs] = x, w
        plant.SetPositions(ctx, qd)
        plant.SetVelocities(ctx, vd)
        f = MultibodyForces(plant)
        plant.CalcForceElementsContribution(ctx, f)
        return f.generalized_forces()[[vs for _, vs in starts]]
    return forces


@pytest.mark.parametrize("which", ["mjcf_springs_with_ref", "seeker_yaml_elements"])
def test_sdf_export_of_joint_springs_gives_drakes_passive_forces(which, tmp_path):
    pytest.importorskip("pydrake")
    if which == "mjcf_springs_with_ref":
        source = tmp_path / "sprung.xml"
        source.write_text(SPRUNG)
    else:
        source = _seeker_with_forces(tmp_path, forces=SEEKER_JOINT_FORCES)     # SDFormat's: joint springs
    composition = compose(source)
    out = tmp_path / "export.sdf"
    write_sdf(composition.lumped, out)
    model = composition.model
    names = [n for n in model.joint_names if model.v_slice(n).stop - model.v_slice(n).start == 1]
    idx = [model.v_slice(n).start for n in names]
    ref = np.array([composition.lumped.joint(n).ref for n in names])
    drake = _drake_passive(out, names, lambda q: q[idx] - ref)       # SDFormat's coordinate: ours less ref
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, v = model.neutral() + rng.uniform(-0.5, 0.5, model.nq), rng.normal(size=model.nv)
        expected = dynamics.passive_forces(model, q, v)
        np.testing.assert_allclose(drake(q, v[idx]), expected[idx], rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(expected).max()))
        assert np.abs(expected).max() > 0.01


def test_urdf_export_keeps_damping_and_friction_and_names_the_springs_it_cannot_hold(tmp_path, caplog):
    pin = pytest.importorskip("pinocchio")
    source = _seeker_with_forces(tmp_path, "  - {name: rub, type: joint_friction, joint: yaw_a, friction: 0.05}\n")
    composition = compose(source)
    out = tmp_path / "export.urdf"
    with caplog.at_level(logging.WARNING):
        write_urdf(composition.lumped, out)
    messages = [r.getMessage() for r in caplog.records]
    assert any("no joint stiffness" in t and "pitch_a, yaw_a" in t for t in messages)
    assert any("strut (SpringDamper)" in t and "tether" in t for t in messages)
    pm = pin.buildModelFromUrdf(str(out))
    damping = {"pitch_a": 0.01, "yaw_a": 0.02}
    friction = {"pitch_a": 0.0, "yaw_a": 0.05}
    for name in damping:
        k = pm.joints[pm.getJointId(name)].idx_v
        assert pm.damping[k] == damping[name] and pm.friction[k] == friction[name]
    back = compose(out).model                 # our URDF reader: the damping and the friction (tanh, 0.01 rad/s)
    v = np.arange(1.0, back.nv + 1) / 200
    expected = np.zeros(back.nv)
    for name, c in damping.items():
        w = v[back.v_slice(name)]
        expected[back.v_slice(name)] = -c * w - friction[name] * np.tanh(w / 0.01)
    np.testing.assert_allclose(dynamics.passive_forces(back, back.neutral(), v), expected, rtol=1e-15)
