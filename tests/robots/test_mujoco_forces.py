"""Joint springs, dampers and actuators against MuJoCo: ``passive_forces`` equals MuJoCo's
``qfrc_spring + qfrc_damper`` and ``actuator_forces`` its ``qfrc_actuator`` to 1e-9 (relative to the
largest entry, at least 1) at random states and controls, on every gymnasium, dm_control (suite and
other folders) and mujoco testdata model MuJoCo loads (coordinates mapped by :mod:`mujoco_refs`:
generalized forces are ``T^T qfrc``; fixed tendons and spatial tendons through sites, their springs,
dampers and actuators included; the springs and dampers of spatial tendons that wrap around geoms, not
supported and warned, are zeroed in MuJoCo's model; skipped actuators' forces are taken out of MuJoCo's
``qfrc_actuator``); a hinge with
``stiffness 10``, ``springref 0.5`` (degrees) and ``damping 2`` at 1 rad/s gets MuJoCo's -1.913 N m;
shortcut actuators (``position`` with ``kp``/``kv``, ``velocity``, ``damper``) and ``general`` with affine gain and
bias, ranges and default classes on a hand-written model; what is not modelled warns, naming it.
"""

import logging
import os

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mujoco_refs import reference_orientations, to_mujoco
from test_mujoco_corpora import (DM_OTHER, DM_SUITE, GYMNASIUM, KNOWN_REFUSALS, MUJOCO_TESTDATA, TREE_DIFFERS,
                                 mujoco_loads, random_configuration)

mujoco = pytest.importorskip("mujoco")

HINGE = """<mujoco>
  <worldbody>
    <body name="b">
      <joint name="h" type="hinge" axis="0 1 0" stiffness="10" springref="0.5" damping="2"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0.5 0 0" mass="1"/>
    </body>
  </worldbody>
</mujoco>"""

SERVOS = """<mujoco>
  <default>
    <default class="servo"><position kp="30" kv="2" ctrlrange="-1 1"/></default>
    <default class="strong"><general gainprm="4 0.5 0.1" biasprm="0.2 -3 -0.4" biastype="affine" gaintype="affine"/></default>
  </default>
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge" axis="0 1 0" ref="10" springref="20" stiffness="3"/>
      <geom type="box" size="0.1 0.2 0.3" mass="2"/>
      <body name="b" pos="0 0 -0.5">
        <joint name="j2" type="slide" axis="1 0 0" damping="0.7" stiffness="5" springref="0.1"/>
        <geom type="sphere" size="0.1" mass="1"/>
        <body name="c" pos="0 0 -0.5">
          <joint name="j3" type="ball" damping="0.3" stiffness="2"/>
          <geom type="sphere" size="0.1" pos="0.1 0 -0.2" mass="1"/>
        </body>
      </body>
    </body>
    <body name="f" pos="1 0 1" euler="10 20 30">
      <freejoint name="free"/>
      <geom type="box" size="0.1 0.2 0.3" mass="2"/>
    </body>
  </worldbody>
  <actuator>
    <position name="p1" class="servo" joint="j1" gear="2"/>
    <position joint="j2" kp="7" forcerange="-3 3"/>
    <velocity name="v1" joint="j1" kv="5" ctrlrange="-0.5 0.5" ctrllimited="true"/>
    <general name="g1" class="strong" joint="j2" gear="-1.5" ctrlrange="-2 2" forcerange="-4 5"/>
    <motor name="m1" joint="j1" gear="3"/>
    <general name="g2" class="strong" joint="j1" biastype="none" gaintype="fixed"/>
    <motor name="on_ball" joint="j3" gear="1 0 0"/>
    <damper name="d" joint="j1" kv="1" ctrlrange="0 1"/>
  </actuator>
</mujoco>"""


def _relative_close(actual, expected, rtol=1e-9):
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * max(1.0, np.abs(expected).max()))


def check_forces(path, n=3, rtol=1e-9):
    """passive_forces and actuator_forces of the model of ``path`` against MuJoCo's at ``n`` random
    states and controls (controls beyond the ranges, to exercise the clamping)."""
    m = mujoco.MjModel.from_xml_path(str(path))
    for k in _wrapping_tendons(m):    # not supported (refused, warned naming each): left out of the reference
        m.tendon_stiffness[k] = m.tendon_damping[k] = 0.0
    d = mujoco.MjData(m)
    model = compose(path).model
    if m.nv == 0:
        return m, model
    ours = getattr(model, "tree_model", model)
    B = reference_orientations(m)
    kept = _our_actuators(m, ours)
    rng = np.random.default_rng(4)
    for _ in range(n):
        q = random_configuration(ours, rng)
        v = rng.normal(size=ours.nv)
        ctrl_mj = rng.uniform(-2.0, 2.0, size=m.nu)
        qpos, T, _ = to_mujoco(m, ours, q, v, B)
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, T @ v, ctrl_mj
        mujoco.mj_forward(m, d)
        passive = dynamics.passive_forces(model, q, v) - dynamics.friction_forces(model, q, v)  # MuJoCo: a constraint
        _relative_close(passive, T.T @ (d.qfrc_spring + d.qfrc_damper), rtol)
        ours_act = dynamics.actuator_forces(model, q, v, ctrl_mj[kept])
        skipped = np.setdiff1d(np.arange(m.nu), kept)
        moment = _moments(m, d)
        reference = d.qfrc_actuator - moment[skipped].T @ d.actuator_force[skipped]
        _relative_close(ours_act, T.T @ reference, rtol)
    return m, ours


def _wrapping_tendons(m) -> list[int]:
    """MuJoCo's ids of the spatial tendons whose path wraps around a geom or splits at a pulley."""
    plain = (int(mujoco.mjtWrap.mjWRAP_JOINT), int(mujoco.mjtWrap.mjWRAP_SITE))
    return [k for k in range(m.ntendon)
            if any(int(w) not in plain for w in m.wrap_type[m.tendon_adr[k]:m.tendon_adr[k] + m.tendon_num[k]])]


def _our_actuators(m, ours) -> np.ndarray:
    """MuJoCo's ids of our actuators (ours are MuJoCo's in file order, minus the skipped ones)."""
    ids, k = [], 0
    for name in ours.actuator_names:
        while k < m.nu and m.actuator(k).name and m.actuator(k).name != name:
            k += 1
        assert k < m.nu, name
        ids.append(k)
        k += 1
    return np.array(ids, dtype=int)


def _moments(m, d) -> np.ndarray:
    """(nu, nv) dense actuator moment arms."""
    M = np.zeros((m.nu, m.nv))
    mujoco.mju_sparse2dense(M, d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind)
    return M


def test_hinge_spring_and_damper_give_mujocos_force(tmp_path):
    path = tmp_path / "hinge.xml"
    path.write_text(HINGE)
    model = compose(path).model
    tau = dynamics.passive_forces(model, model.neutral(), np.ones(1))
    np.testing.assert_allclose(tau, [-10 * (0 - np.radians(0.5)) - 2.0], rtol=1e-15)
    assert tau[0] == pytest.approx(-1.91273354, abs=1e-8)
    check_forces(path)


def test_servos_defaults_ranges_and_springs_match_mujoco(tmp_path, caplog):
    path = tmp_path / "servos.xml"
    path.write_text(SERVOS)
    with caplog.at_level(logging.WARNING):
        m, ours = check_forces(path, n=6)
    assert ours.actuator_names == ("p1", "position_j2", "v1", "g1", "m1", "g2", "d")
    assert "on_ball" in caplog.text and "damper" not in caplog.text


def test_batches_match_single_states(tmp_path):
    path = tmp_path / "servos.xml"
    path.write_text(SERVOS)
    model = compose(path).model
    rng = np.random.default_rng(0)
    q = np.stack([random_configuration(model, rng) for _ in range(4)])
    v, ctrl = rng.normal(size=(4, model.nv)), rng.normal(size=(4, len(model.actuator_names)))
    np.testing.assert_array_equal(dynamics.passive_forces(model, q, v),
                                  np.stack([dynamics.passive_forces(model, *row) for row in zip(q, v)]))
    np.testing.assert_array_equal(dynamics.actuator_forces(model, q, v, ctrl),
                                  np.stack([dynamics.actuator_forces(model, *row) for row in zip(q, v, ctrl)]))


def check_corpus_file(path, caplog):
    if os.path.basename(path) in KNOWN_REFUSALS or os.path.basename(path) in TREE_DIFFERS:
        pytest.skip("refused or another tree (test_mujoco_corpora.py)")
    with caplog.at_level(logging.WARNING):
        check_forces(path)
    mj = mujoco.MjModel.from_xml_path(str(path))
    for k in _wrapping_tendons(mj):
        if mj.tendon_stiffness[k] or mj.tendon_damping[k]:
            assert mj.tendon(k).name in caplog.text


@pytest.mark.parametrize("path", GYMNASIUM, ids=os.path.basename)
def test_gymnasium_passive_and_actuator_forces_match_mujoco(path, caplog):
    check_corpus_file(path, caplog)


@pytest.mark.slow
@pytest.mark.parametrize("path", DM_SUITE + MUJOCO_TESTDATA, ids=os.path.basename)
def test_dm_control_suite_and_mujoco_testdata_forces_match_mujoco(path, caplog):
    check_corpus_file(path, caplog)


@pytest.mark.slow
@pytest.mark.parametrize("path", DM_OTHER, ids=lambda p: p.split(f"dm_control{os.sep}")[-1])
def test_dm_control_other_models_forces_match_mujoco(path, caplog):
    if not mujoco_loads(path):
        pytest.skip("MuJoCo does not load it either")
    check_corpus_file(path, caplog)
