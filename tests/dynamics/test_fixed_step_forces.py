"""The fixed-step integrators (rk4, euler) of trees under state-dependent forces and with actuator
activations and DC motor currents as states (issue 26; :func:`dynamics.simulation.fixed_step.state_fixed_step`).

References: scipy's DOP853 at rtol = atol = 1e-12 (the adaptive simulator) for a pendulum with a joint
spring, damper and Coulomb friction (rk4 at dt 1e-4 to 1e-10 rad, and fourth order between dt 2e-3 and
1e-3; a chain of free, hinge, slide and ball joints with springs and a servo, fourth order on the
joint groups) and for talos_reduced with its URDF friction (rk4 at dt 2.5e-5 over 0.05 s); MuJoCo's own RK4
(``mjINT_RK4``, which integrates ``act`` with the mechanics, the same tableau) at the same step for a
pendulum driven through an ``integrator`` and a ``filter`` actuator, to 1e-10; the analytic step response
of a DC motor driving a flywheel (tests/dynamics/test_dc_motors.py).  A step beyond an integrator's stability
for the joints' friction, damping or springs is warned, naming the joints.  A four-bar driven through a filter
actuator (the activation in closed form) against a dense Lagrange-multiplier reference that integrates the
activation as a state, to 1e-6 rad over 0.5 s, and its linearization with the activation as a state (its
column the actuator's terminal equation times a joint force's column); closed chains with DC motors are still
refused, with the reason.
"""

import logging
import os
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from mbcompose import compose
from mbcompose.dynamics.kinematics import difference
from mbcompose.dynamics.simulation import ConstantForcesOnly, JointProperties, simulate

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

SPRUNG = """<mujoco>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="h" type="hinge" axis="0 1 0" stiffness="3" springref="0.4" damping="0.2" frictionloss="0.05"/>
      <geom type="capsule" size="0.03" fromto="0 0 0 0.4 0 0" mass="0.8"/>
    </body>
  </worldbody>
</mujoco>"""

DRIVEN = """<mujoco>
  <option timestep="{dt}" integrator="RK4"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="h" type="hinge" axis="0 1 0" stiffness="1.5" springref="0.2" damping="0.1"/>
      <geom type="capsule" size="0.03" fromto="0 0 0 0.4 0 0" mass="0.8"/>
      <body name="tip" pos="0.4 0 0">
        <joint name="s" type="slide" axis="1 0 0" damping="0.3"/>
        <geom type="sphere" size="0.05" mass="0.3"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <general name="integ" joint="h" dyntype="integrator" gainprm="1.5" biastype="affine" biasprm="0 -0.5 0"/>
    <general name="filt" joint="s" dyntype="filter" dynprm="0.05" gainprm="4" biastype="affine"
             biasprm="0 -6 -0.2"/>
    <motor name="plain" joint="h" gear="0.5"/>
  </actuator>
</mujoco>"""


def _model(tmp_path, text, name="model.xml"):
    path = tmp_path / name
    path.write_text(text)
    return path, compose(path)


def test_pendulum_with_spring_damper_and_friction_under_rk4_matches_the_adaptive_run(tmp_path):
    _, c = _model(tmp_path, SPRUNG)
    model, q0, v0 = c.model, np.array([0.3]), np.array([0.5])
    ref = simulate(model, q0, v0, 0.3, samples=7, rtol=1e-12, atol=1e-12, joints=c.joint_properties)
    gaps = []
    for dt in (2e-3, 1e-3, 1e-4):
        r = simulate(model, q0, v0, 0.3, samples=7, method="rk4", dt=dt, joints=c.joint_properties)
        assert r.status.startswith("rk4")
        gaps.append(max(np.abs(r.q - ref.q).max(), np.abs(r.v - ref.v).max()))
    assert np.log2(gaps[0] / gaps[1]) == pytest.approx(4.0, abs=0.3)     # measured 3.94 (1.4e-9, 9.2e-11)
    assert gaps[2] < 1e-10                                               # measured 4.5e-12: the reference's
    euler = simulate(model, q0, v0, 0.3, samples=7, method="euler", dt=1e-4, joints=c.joint_properties)
    assert np.abs(euler.q - ref.q).max() < 1e-3


def test_ball_and_free_joints_with_springs_and_servos_converge_at_fourth_order_on_their_groups(tmp_path):
    from test_linearize import CHAIN                    # hinge, slide, ball and free joints with springs, a servo

    _, c = _model(tmp_path, CHAIN)
    model, ctrl = c.model, np.array([0.3, -0.2])
    v0 = np.random.default_rng(0).normal(size=model.nv) * 0.5
    args = (model, model.neutral(), v0, 0.2)
    ref = simulate(*args, samples=3, rtol=1e-12, atol=1e-12, joints=c.joint_properties, ctrl=ctrl)
    gaps = []
    for dt in (2e-3, 1e-3):
        r = simulate(*args, samples=3, method="rk4", dt=dt, joints=c.joint_properties, ctrl=ctrl)
        gaps.append(max(np.abs(difference(model, ref.q[-1], r.q[-1])).max(), np.abs(r.v - ref.v).max()))
    assert np.log2(gaps[0] / gaps[1]) == pytest.approx(4.0, abs=0.3)    # measured 4.0 (5.8e-8, 3.6e-9)
    assert gaps[1] < 1e-8


def test_a_step_beyond_the_stability_of_stiff_friction_is_warned_naming_the_joint(tmp_path, caplog):
    # friction 5 N m at 0.01 rad/s on a 0.043 kg m^2 arm: a slope of ~1.2e4/s, RK4 stable below ~2.4e-4 s
    _, c = _model(tmp_path, SPRUNG.replace('frictionloss="0.05"', 'frictionloss="5"'))
    args = (c.model, np.array([0.3]), np.array([0.5]), 0.01)
    with caplog.at_level(logging.WARNING, logger="mbcompose.dynamics.simulation.fixed_step"):
        simulate(*args, samples=3, method="rk4", dt=1e-3, joints=c.joint_properties)
    assert "rk4 at dt 0.001 s is beyond its stability" in caplog.text and " h " in caplog.text
    assert "adaptive integrator" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mbcompose.dynamics.simulation.fixed_step"):
        simulate(*args, samples=3, method="rk4", dt=1e-4, joints=c.joint_properties)
    assert "stability" not in caplog.text


@pytest.mark.slow
def test_talos_reduced_with_its_friction_under_rk4_matches_the_adaptive_run(caplog):
    share = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
    path = os.path.join(share, "example-robot-data", "robots", "talos_data", "robots", "talos_reduced.urdf")
    if not os.path.exists(path):
        pytest.skip("example-robot-data's talos_reduced is not installed")
    with caplog.at_level(logging.ERROR):
        c = compose(path, package_dirs=[share])
    model = c.model
    assert model.tree_model.forces.layout["jf_f"].max() > 0                # the file's friction
    # no stops (met at the end of a step by rk4, by events adaptively: O(dt) apart); the friction
    # tanh(v / 0.01) has slopes up to 1e4 N m s/rad on light joints: rk4 is stable below dt ~3e-5
    joints = JointProperties(c.joint_properties.damping, np.full(model.nv, -np.inf), np.full(model.nv, np.inf))
    q0, v0 = model.neutral(), np.random.default_rng(3).normal(size=model.nv) * 0.05
    ref = simulate(model, q0, v0, 0.05, samples=6, rtol=1e-12, atol=1e-12, joints=joints)
    r = simulate(model, q0, v0, 0.05, samples=6, method="rk4", dt=2.5e-5, joints=joints)
    assert np.abs(r.q - ref.q).max() < 1e-7 and np.abs(r.v - ref.v).max() < 1e-7    # measured 9.9e-9, 2.9e-9


def test_pendulum_driven_through_integrator_and_filter_actuators_matches_mujocos_rk4(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    dt = 1e-3
    path, c = _model(tmp_path, DRIVEN.format(dt=dt))
    model = c.model
    ctrl, act0 = np.array([0.8, 0.3, -0.2]), np.array([0.1, -0.2])
    q0, v0 = np.array([0.2, 0.05]), np.array([0.0, 0.1])
    r = simulate(model, q0, v0, 0.5, samples=11, method="rk4", dt=dt, ctrl=ctrl, activations=act0,
                 joints=c.joint_properties)
    assert r.activation_columns == ("act:integ", "act:filt") and "2 actuator activations" in r.status
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.ctrl[:], d.act[:] = q0, v0, ctrl, act0
    for k in range(1, len(r.t)):
        mujoco.mj_step(m, d, nstep=50)
        assert d.time == pytest.approx(r.t[k], abs=1e-12)
        np.testing.assert_allclose(np.concatenate([d.qpos, d.qvel, d.act]),
                                   np.concatenate([r.q[k], r.v[k], r.activations[k]]), rtol=0, atol=1e-10)


def test_activations_and_the_mechanics_converge_together_under_euler(tmp_path):
    _, c = _model(tmp_path, DRIVEN.format(dt=1e-3))
    model, ctrl = c.model, np.array([0.8, 0.3, -0.2])
    args = (model, model.neutral(), np.zeros(2), 0.2)
    ref = simulate(*args, samples=5, rtol=1e-12, atol=1e-12, ctrl=ctrl, joints=c.joint_properties)
    gaps = [np.abs(simulate(*args, samples=5, method="euler", dt=dt, ctrl=ctrl, joints=c.joint_properties).activations
                   - ref.activations).max() for dt in (1e-3, 5e-4)]
    assert np.log2(gaps[0] / gaps[1]) == pytest.approx(1.0, abs=0.2)


def test_activation_range_is_clamped_after_each_step_as_mujocos_rk4_does(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    text = DRIVEN.format(dt=1e-3).replace('dyntype="integrator"', 'dyntype="integrator" actlimited="true" '
                                                                  'actrange="-1 0.3"')
    path, c = _model(tmp_path, text)
    q0, ctrl = np.array([0.2, 0.05]), np.array([2.0, 0.3, 0.0])
    r = simulate(c.model, q0, np.zeros(2), 0.5, samples=11, method="rk4", dt=1e-3, ctrl=ctrl,
                 joints=c.joint_properties)
    np.testing.assert_allclose(r.activations[:, 0], np.minimum(2.0 * r.t, 0.3), rtol=0, atol=1e-12)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.qpos[:], d.ctrl[:] = q0, ctrl
    for k in range(1, len(r.t)):
        mujoco.mj_step(m, d, nstep=50)
        np.testing.assert_allclose(np.concatenate([d.qpos, d.qvel, d.act]),
                                   np.concatenate([r.q[k], r.v[k], r.activations[k]]), rtol=0, atol=1e-10)


FOURBAR = """<mujoco>
  <worldbody>
    <body name="crank" pos="0 0 0">
      <joint name="j0" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.02" fromto="0 0 0 0.2 0 0" mass="0.2"/>
      <body name="coupler" pos="0.2 0 0">
        <joint name="j1" type="hinge" axis="0 1 0"/>
        <geom type="capsule" size="0.02" fromto="0 0 0 0.4 0 0.3" mass="0.3"/>
      </body>
    </body>
    <body name="rocker" pos="0.5 0 0">
      <joint name="j3" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.02" fromto="0 0 0 0.1 0 0.3" mass="0.2"/>
    </body>
  </worldbody>
  <equality><connect body1="coupler" body2="rocker" anchor="0.4 0 0.3"/></equality>
  <actuator><general name="f" joint="j0" dyntype="filter" dynprm="0.1" gainprm="2"/></actuator>
</mujoco>"""


def test_fourbar_driven_through_a_filter_actuator_matches_a_lagrange_reference(tmp_path):
    """The closed chain takes the activation in closed form (its dynamics do not involve the mechanics);
    the reference integrates ``[q, v, act]`` (scipy DOP853, 1e-12) with the dense Lagrange-multiplier
    accelerations of Pinocchio's twin of the chain (tests/closed_chains/mechanisms.PinTwin), the
    actuator's terminal equation written here (``tau_j0 = 2 act``, ``act_dot = (ctrl - act) / 0.1``)."""
    pytest.importorskip("pinocchio")
    sys.path.insert(0, str(Path(__file__).parents[1] / "closed_chains"))
    from mechanisms import PinTwin
    from scipy.integrate import solve_ivp

    _, c = _model(tmp_path, FOURBAR)
    em, ctrl = c.model, np.array([0.5])
    assert em.kind == "embedded" and em.actuator_names == ("f",)
    twin, j0, nv = PinTwin(c.tree), em.tree_model.v_slice("j0").start, em.nv

    def rhs(t, y):
        q, v, act = y[:nv], y[nv:2 * nv], y[2 * nv]
        tau = np.zeros(nv)
        tau[j0] = 2.0 * act
        return np.concatenate([v, twin.lagrange_accelerations(q, v, tau)[0], [(ctrl[0] - act) / 0.1]])

    q0, act0 = em.neutral(), 0.1
    r = simulate(em, q0, np.zeros(nv), 0.5, samples=6, ctrl=ctrl, activations=[act0], rtol=1e-11, atol=1e-11)
    ref = solve_ivp(rhs, (0, 0.5), np.concatenate([q0, np.zeros(nv), [act0]]), method="DOP853", t_eval=r.t,
                    rtol=1e-12, atol=1e-12).y.T
    assert "actuator activations" in r.status and r.activation_columns == ("act:f",)
    np.testing.assert_allclose(r.activations[:, 0], ref[:, 2 * nv], rtol=0, atol=1e-10)
    np.testing.assert_allclose(r.q, ref[:, :nv], rtol=0, atol=1e-6)             # measured 5.9e-12 rad
    rk4 = simulate(em, q0, np.zeros(nv), 0.5, samples=6, method="rk4", dt=1e-3, ctrl=ctrl, activations=[act0])
    np.testing.assert_allclose(rk4.q, ref[:, :nv], rtol=0, atol=1e-5)           # measured 1.1e-6 rad (8 rad turned)


def test_closed_chains_with_dc_motors_are_refused_naming_the_reason(tmp_path):
    text = (SAMPLES / "fourbar" / "fourbar.yaml").read_text() + """forces:
  - {name: drive, type: dc_motor, joint: crank_pivot, resistance: 1.5, inductance: 0.02, torque_constant: 0.05,
     back_emf_constant: 0.04}
"""
    _, c = _model(tmp_path, text, "fourbar.yaml")
    assert c.model.kind == "embedded"
    for method in ("adaptive", "rk4"):
        with pytest.raises(ConstantForcesOnly, match="DC motors .* not on closed chains"):
            simulate(c.model, c.model.neutral(), np.zeros(c.model.nv), 0.1, method=method, voltage=[1.0])


def test_fourbar_linearization_carries_the_filter_activation(tmp_path):
    """In independent coordinates: the activation's column is the actuator's terminal equation (``2 act`` on
    j0, by hand) times the column of a joint force on j0, its row ``act_dot = (ctrl - act) / 0.1``."""
    from mbcompose.dynamics.linearize import linearize

    _, c = _model(tmp_path, FOURBAR)
    em = c.model
    q = em.neutral()
    lin = linearize(em, q, np.zeros(em.nv), ctrl=[0.5], activations=[0.2], inputs=["ctrl", "tau:j0"])
    n = len(em.independent)
    assert lin.states[-1] == "act:f" and lin.inputs == ("f", "tau:j0") and lin.A.shape == (2 * n + 1, 2 * n + 1)
    np.testing.assert_allclose(lin.A[:, -1], np.r_[np.zeros(n), 2.0 * lin.B[n:2 * n, 1], -10.0], rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(lin.B[:, 0], np.r_[np.zeros(2 * n), 10.0], rtol=1e-7, atol=1e-7)
