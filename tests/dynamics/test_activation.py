"""Actuators with activation dynamics (MuJoCo's ``dyntype`` integrator, filter, filterexact; issue 26).

``actuator_forces(model, q, v, ctrl, act)`` against MuJoCo's ``qfrc_actuator`` and
``actuator_activation_rates`` against its ``act_dot`` (1e-9, relative to the largest entry, at least 1)
at random states, controls and activations (``data.act`` set) on dm_control's quadruped, dog and rodent
and on a written model with each kind of actuator that has an activation; simulations with the
activation as a state against closed-form solutions (a gravity-free hinge driven through an integrator,
with and without an activation range, and through a filter) and against MuJoCo's RK4 at a small step
(a pendulum under gravity).
"""

import logging
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.dynamics.linearize import linearize
from mbcompose.dynamics.codegen import CodegenUnsupported, generate_c
from mbcompose.dynamics.simulation import simulate
from mbcompose.parsers.exporters.mjcf import write_mjcf
from mbcompose.parsers.mjcf.reader import read_mjcf

sys.path.insert(0, str(Path(__file__).parents[1] / "robots"))
mujoco = pytest.importorskip("mujoco")
from mujoco_refs import reference_orientations, to_mujoco  # noqa: E402
from test_mujoco_corpora import random_configuration  # noqa: E402

DM = os.path.dirname(pytest.importorskip("dm_control").__file__)

ALL_KINDS = """<mujoco>
  <default>
    <default class="filtered">
      <general dyntype="filter" dynprm="0.05" gainprm="3" biastype="affine" biasprm="0.1 -2 -0.5"/>
    </default>
  </default>
  <worldbody>
    <body name="a">
      <joint name="h" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0.5 0 0" mass="1"/>
      <site name="s0" pos="0.2 0 0"/>
      <body name="b" pos="0.5 0 0">
        <joint name="s" type="slide" axis="1 0 0"/>
        <geom type="sphere" size="0.1" mass="2"/>
        <site name="s1" pos="0 0 0.1"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t"><joint joint="h" coef="0.5"/><joint joint="s" coef="-1"/></fixed>
    <spatial name="sp"><site site="s0"/><site site="s1"/></spatial>
  </tendon>
  <actuator>
    <general name="integ" joint="h" dyntype="integrator" gainprm="2" gear="1.5"/>
    <general name="integ_limited" joint="s" dyntype="integrator" actlimited="true" actrange="-0.3 0.4"
             gaintype="affine" gainprm="1 0.5 0.2" biastype="affine" biasprm="0 -1 -0.1"/>
    <general name="filt" class="filtered" joint="h" ctrlrange="-1 1" ctrllimited="true"/>
    <general name="filt_tendon" class="filtered" tendon="t" forcerange="-2 2"/>
    <general name="exact" joint="s" dyntype="filterexact" dynprm="0.2" gainprm="4"/>
    <position name="servo_tc" joint="h" kp="20" kv="1" timeconst="0.03"/>
    <intvelocity name="iv" joint="s" kp="15" actrange="-0.5 0.5"/>
    <cylinder name="cyl" tendon="sp" timeconst="0.1" diameter="0.2" bias="1 -3 -0.2"/>
    <damper name="damp" joint="h" kv="0.7" ctrlrange="0 2"/>
    <motor name="plain" joint="s" gear="2"/>
    <general name="early" joint="h" dyntype="filter" dynprm="0.1" gainprm="5" actearly="true"/>
  </actuator>
</mujoco>"""


def _mujoco_ids(m, names) -> np.ndarray:
    """MuJoCo's actuator ids of the actuators ``names`` (ours are named as MuJoCo's here)."""
    return np.array([mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, n) for n in names], dtype=int)


def _close(actual, expected, rtol=1e-9):
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * max(1.0, np.abs(expected).max()))


def check_against_mujoco(path, n=3, timestep=None, reference=None):
    """Forces and activation rates of ``path``'s model against MuJoCo's (on ``reference``, ``path`` when None)
    at ``n`` random states, controls (beyond the control ranges, to exercise the clamping) and activations.
    ``timestep``: MuJoCo's step (``actearly`` takes the activation one step ahead; a tiny step makes that
    the activation)."""
    m = mujoco.MjModel.from_xml_path(str(reference or path))
    if timestep is not None:
        m.opt.timestep = timestep
    d = mujoco.MjData(m)
    model = compose(path).model
    ours = getattr(model, "tree_model", model)
    ids = _mujoco_ids(m, ours.actuator_names)
    assert (ids >= 0).all() and len(ids) == m.nu, "every actuator is modelled"
    act_ids = _mujoco_ids(m, dynamics.activation_names(ours))
    act_adr = m.actuator_actadr[act_ids]
    assert len(act_adr) == m.na and (act_adr >= 0).all()
    B = reference_orientations(m)
    rng = np.random.default_rng(7)
    for _ in range(n):
        q, v = random_configuration(ours, rng), rng.normal(size=ours.nv)
        ctrl, act = rng.uniform(-2.0, 2.0, size=m.nu), rng.uniform(-1.5, 1.5, size=m.na)
        qpos, T, _ = to_mujoco(m, ours, q, v, B)
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, T @ v, ctrl
        d.act[act_adr] = act
        mujoco.mj_forward(m, d)
        _close(dynamics.actuator_forces(model, q, v, ctrl[ids], act), T.T @ d.qfrc_actuator)
        _close(dynamics.actuator_activation_rates(model, ctrl[ids], act), d.act_dot[act_adr])
    return m, ours


def test_every_kind_with_an_activation_matches_mujoco(tmp_path, caplog):
    path = tmp_path / "kinds.xml"
    path.write_text(ALL_KINDS)
    with caplog.at_level(logging.WARNING):
        m, ours = check_against_mujoco(path, n=6, timestep=1e-13)
    assert "not modelled" not in caplog.text
    kinds = dict(zip(ours.actuator_names, (a.dyntype for a in ours.forces.actuators)))
    assert kinds == {"integ": "integrator", "integ_limited": "integrator", "filt": "filter", "filt_tendon": "filter",
                     "exact": "filterexact", "servo_tc": "filterexact", "iv": "integrator", "cyl": "filter",
                     "damp": "none", "plain": "none", "early": "filter"}
    assert dynamics.activation_names(ours) == tuple(n for n, k in kinds.items() if k != "none")
    np.testing.assert_array_equal(m.actuator_dyntype[_mujoco_ids(m, ours.actuator_names)],
                                  [int(getattr(mujoco.mjtDyn, f"mjDYN_{k.upper()}")) for k in kinds.values()])


def test_mjcf_export_keeps_the_activation_dynamics(tmp_path):
    path = tmp_path / "kinds.xml"
    path.write_text(ALL_KINDS)
    write_mjcf(read_mjcf(path), tmp_path / "export.xml")
    check_against_mujoco(path, n=3, timestep=1e-13, reference=tmp_path / "export.xml")


def test_batches_of_states_and_activations_match_single_ones(tmp_path):
    path = tmp_path / "kinds.xml"
    path.write_text(ALL_KINDS)
    model = compose(path).model
    rng = np.random.default_rng(1)
    na, nact = len(model.actuator_names), len(dynamics.activation_names(model))
    q, v = rng.normal(size=(4, model.nq)), rng.normal(size=(4, model.nv))
    ctrl, act = rng.normal(size=(4, na)), rng.normal(size=(4, nact))
    np.testing.assert_array_equal(dynamics.actuator_forces(model, q, v, ctrl, act),
                                  np.stack([dynamics.actuator_forces(model, *r) for r in zip(q, v, ctrl, act)]))
    np.testing.assert_array_equal(dynamics.actuator_activation_rates(model, ctrl, act),
                                  np.stack([dynamics.actuator_activation_rates(model, *r) for r in zip(ctrl, act)]))


def test_quadruped_filtered_actuators_match_mujoco():
    check_against_mujoco(os.path.join(DM, "suite", "quadruped.xml"))


@pytest.mark.slow
@pytest.mark.parametrize("path", [os.path.join("suite", "dog.xml"),
                                  os.path.join("locomotion", "walkers", "assets", "rodent.xml")])
def test_dog_and_rodent_filtered_actuators_match_mujoco(path):
    check_against_mujoco(os.path.join(DM, path), n=2)


FREE_HINGE = """<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <body name="wheel">
      <joint name="h" type="hinge" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.15 0.15 0.25"/>
    </body>
  </worldbody>
  <actuator>{}</actuator>
</mujoco>"""


def _simulate(path, ctrl, duration=0.5, samples=51):
    model = compose(path).model
    return simulate(model, model.neutral(), np.zeros(model.nv), duration, samples=samples, ctrl=np.atleast_1d(ctrl),
                    rtol=1e-12, atol=1e-12)


def test_integrator_driven_hinge_follows_the_closed_form(tmp_path):
    # act = c t, torque = g gear act, I q'' = torque: q = g gear c t^3 / (6 I)
    path = tmp_path / "integrator.xml"
    path.write_text(FREE_HINGE.format('<general name="a" joint="h" dyntype="integrator" gainprm="3" gear="2"/>'))
    r = _simulate(path, 0.8)
    np.testing.assert_allclose(r.activations[:, 0], 0.8 * r.t, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.q[:, 0], 3 * 2 * 0.8 * r.t ** 3 / (6 * 0.25), rtol=0, atol=1e-10)
    assert r.activation_columns == ("act:a",)


def test_activation_range_holds_the_activation_at_its_bound(tmp_path):
    # act = min(c t, hi): q = k c t^3 / 6 until t1 = hi / c,
    # then k hi / 2 (t - t1)^2 + k c t1^2 / 2 (t - t1) + k c t1^3 / 6
    path = tmp_path / "limited.xml"
    path.write_text(FREE_HINGE.format('<general name="a" joint="h" dyntype="integrator" gainprm="1" actlimited="true" '
                                      'actrange="-1 0.3"/>'))
    c, hi, k = 1.0, 0.3, 1.0 / 0.25
    r = _simulate(path, c)
    t1, t = hi / c, r.t
    tail = t - t1
    expected = np.where(t < t1, k * c * t ** 3 / 6,
                        k * hi / 2 * tail ** 2 + k * c * t1 ** 2 / 2 * tail + k * c * t1 ** 3 / 6)
    np.testing.assert_allclose(r.activations[:, 0], np.minimum(c * t, hi), rtol=0, atol=1e-9)
    np.testing.assert_allclose(r.q[:, 0], expected, rtol=0, atol=1e-7)


def test_filter_driven_hinge_follows_the_closed_form(tmp_path):
    # act = c (1 - exp(-t / tau)); I q'' = g act: q = (g c / I) (t^2 / 2 - tau t + tau^2 (1 - exp(-t / tau)))
    path = tmp_path / "filter.xml"
    path.write_text(FREE_HINGE.format('<general name="a" joint="h" dyntype="filterexact" dynprm="0.1" gainprm="2"/>'))
    c, tau, g, inertia = 0.6, 0.1, 2.0, 0.25
    r = _simulate(path, c)
    t = r.t
    np.testing.assert_allclose(r.activations[:, 0], c * (1 - np.exp(-t / tau)), rtol=0, atol=1e-11)
    q = g * c / inertia * (t ** 2 / 2 - tau * t + tau ** 2 * (1 - np.exp(-t / tau)))
    np.testing.assert_allclose(r.q[:, 0], q, rtol=0, atol=1e-10)


PENDULUM = """<mujoco>
  <option timestep="1e-5" integrator="RK4"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="h" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.03" fromto="0 0 0 0.4 0 0" mass="0.8"/>
    </body>
  </worldbody>
  <actuator>
    <general name="a" joint="h" dyntype="integrator" gainprm="1.5" biastype="affine" biasprm="0 -0.5 0"/>
  </actuator>
</mujoco>"""


def test_integrator_driven_pendulum_matches_mujocos_rk4(tmp_path):
    path = tmp_path / "pendulum.xml"
    path.write_text(PENDULUM)
    ctrl = 2.0
    r = _simulate(path, ctrl, duration=0.5, samples=11)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.ctrl[:] = ctrl
    steps = round(0.05 / m.opt.timestep)
    for k in range(1, len(r.t)):
        mujoco.mj_step(m, d, nstep=steps)
        assert d.time == pytest.approx(r.t[k], abs=1e-9)
        np.testing.assert_allclose([d.qpos[0], d.act[0]], [r.q[k, 0], r.activations[k, 0]], rtol=0, atol=1e-9)


def test_codegen_refuses_activations_while_fixed_step_and_linearize_take_them(tmp_path):
    path = tmp_path / "integrator.xml"
    path.write_text(FREE_HINGE.format('<general name="a" joint="h" dyntype="integrator"/>'))
    model = compose(path).model
    r = simulate(model, model.neutral(), np.zeros(1), 0.1, samples=3, method="rk4", ctrl=np.ones(1))
    np.testing.assert_allclose(r.activations[:, 0], r.t, rtol=0, atol=1e-14)      # act = ctrl t
    assert linearize(model, model.neutral()).states == ("q:h", "v:h", "act:a")
    with pytest.raises(CodegenUnsupported, match="activation dynamics are not generated yet.*: a"):
        generate_c(model)
