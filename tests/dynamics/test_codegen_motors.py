"""DC motors in the generated C (issue 28): ``PREFIX_derivatives`` with the motors' currents as states and
their voltages as inputs, against the numpy reference (``dynamics.forces.motor_rates`` and the numpy forward
dynamics) to 1e-12 on the seeker driven by its motors and on random trees with motors, springs and actuators;
the motor constants are tunable parameters; a closed chain with a motor is refused clearly.  Skips without a
C compiler or cffi.
"""

from __future__ import annotations

import numpy as np
import pytest

import mbcompose
from mbcompose import dynamics as dyn
from mbcompose.dynamics import dispatch, forces
from mbcompose.dynamics.codegen import CodegenUnsupported, compile_model, generate_c
from mbcompose.dynamics.force_elements import ActuatorSpec, DCMotorSpec, ForceElements, JointSpring
from mbcompose.dynamics.rates import configuration_rate

from test_codegen import HAVE_CC, SAMPLES, close
from trees import random_bodies, random_q

pytestmark = pytest.mark.skipif(not HAVE_CC, reason="no C compiler or cffi: the codegen backend is unavailable")

SEEKER = SAMPLES / "seeker" / "seeker_motors.yaml"


def reference_derivatives(model, q, v, i, tau, ctrl, volt):
    """[q_dot; theta_ddot; di/dt] by the numpy reference (the simulator's right-hand side with motors)."""
    with dispatch.backend("numpy"):
        tau_m, di = forces.motor_rates(model, v, i, volt)
        T = tau + forces.passive_forces(model, q, v) + forces.actuator_forces(model, q, v, ctrl) + tau_m
        return np.concatenate([configuration_rate(model, q, v), dyn.forward_dynamics(model, q, v, T), di])


def generated_derivatives(cm, p, q, v, i, u):
    x, dx = np.concatenate([q, v, i]), np.zeros(cm.gen.nx)
    assert cm.function("derivatives")(cm.buf(p), 0.0, cm.buf(x), cm.buf(np.ascontiguousarray(u)), cm.buf(dx)) == 0
    return dx


def test_the_seeker_with_motors_has_currents_as_states_and_voltages_as_inputs():
    model = mbcompose.compose(str(SEEKER)).model
    cm = compile_model(model)
    g = cm.gen
    motors = forces.motor_names(model)
    assert g.nm == 2 and g.state_names[-2:] == tuple(f"i:{m}" for m in motors)
    assert g.input_names[-2:] == tuple(f"volt:{m}" for m in motors)
    assert (g.nx, g.nu) == (model.nq + model.nv + 2, model.nv + 2)
    assert g.max_step == pytest.approx(0.0006 / 2.4 / 4)
    x0 = np.full(g.nx, np.nan)
    cm.function("start_state")(cm.buf(x0))
    assert np.array_equal(x0, np.concatenate([model.neutral(), np.zeros(model.nv + 2)]))
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v = rng.uniform(-0.4, 0.4, model.nq), rng.normal(size=model.nv)
        i, volt, tau = rng.normal(size=2), rng.normal(size=2) * 5, rng.normal(size=model.nv) * 0.01
        dx = generated_derivatives(cm, cm.p, q, v, i, np.concatenate([tau, volt]))
        assert close(dx, reference_derivatives(model, q, v, i, tau, np.zeros(0), volt))


def motor_tree(rng):
    bodies = random_bodies(rng, 7, types=("revolute", "prismatic", "spherical", "free"))
    one = [b.joint_name for b in bodies if b.joint_type in ("revolute", "prismatic")]
    springs = tuple(JointSpring(j, stiffness=float(rng.uniform(1, 5)), damping=float(rng.uniform(0, 1))) for j in one)
    acts = (ActuatorSpec("act", one[0], gear=2.0, gain=(3.0, 0.1, 0.0), bias=(0.5, -1.0, -0.2),
                         ctrlrange=(-1.0, 1.0), forcerange=(-4.0, 4.0)),)
    motors = tuple(DCMotorSpec(f"motor_{j}", j, resistance=float(rng.uniform(0.5, 3)),
                               inductance=float(rng.uniform(1e-3, 1e-2)), torque_constant=float(rng.uniform(0.01, 0.1)),
                               back_emf_constant=float(rng.uniform(0.01, 0.1)), gear_ratio=float(rng.uniform(5, 60)),
                               efficiency=float(rng.uniform(0.6, 1.0))) for j in one[:3])
    return dyn.build_model(bodies, forces=ForceElements(springs, acts, motors))


@pytest.mark.parametrize("seed", range(3))
def test_random_trees_with_motors_springs_and_actuators_agree_with_the_numpy_reference(seed):
    rng = np.random.default_rng(40 + seed)
    model = motor_tree(rng)
    cm = compile_model(model)
    nm, na = cm.gen.nm, len(model.actuator_names)
    assert nm == len(forces.motor_names(model)) >= 1
    for _ in range(3):
        q, v = random_q(model, rng), rng.normal(size=model.nv)
        i, volt, tau, ctrl = rng.normal(size=nm), rng.normal(size=nm) * 6, rng.normal(size=model.nv), rng.normal(size=na)
        dx = generated_derivatives(cm, cm.p, q, v, i, np.concatenate([tau, ctrl, volt]))
        assert close(dx, reference_derivatives(model, q, v, i, tau, ctrl, volt))


def test_motor_constants_are_tunable_parameters():
    rng = np.random.default_rng(9)
    model = motor_tree(rng)
    cm = compile_model(model)
    motor = dyn.force_elements.DCMotorSpec
    spec = next(e for e in model.forces.elements if isinstance(e, motor))
    p = cm.p.copy()
    p[cm.gen.param_names.index(f"{spec.name}.resistance")] *= 2.0
    p[cm.gen.param_names.index(f"{spec.name}.gear_ratio")] *= 0.5
    changed = ForceElements(model.forces.springs, model.forces.actuators,
                            tuple(e if e is not spec else motor(**{**spec.__dict__, "resistance": 2 * spec.resistance,
                                                                  "gear_ratio": 0.5 * spec.gear_ratio})
                                  for e in model.forces.elements))
    other = dyn.build_model(random_bodies(np.random.default_rng(9), 7, types=("revolute", "prismatic", "spherical",
                                                                             "free")), forces=changed)
    nm, na = cm.gen.nm, len(model.actuator_names)
    q, v = random_q(model, rng), rng.normal(size=model.nv)
    i, volt, tau, ctrl = rng.normal(size=nm), rng.normal(size=nm), rng.normal(size=model.nv), rng.normal(size=na)
    dx = generated_derivatives(cm, p, q, v, i, np.concatenate([tau, ctrl, volt]))
    assert close(dx, reference_derivatives(other, q, v, i, tau, ctrl, volt))


def test_a_closed_chain_with_a_dc_motor_is_refused_clearly(tmp_path):
    text = (SAMPLES / "fourbar" / "fourbar.yaml").read_text()
    assert "forces:" not in text
    joint = "crank_pivot"
    text += (f"\nforces:\n  - {{name: drive, type: dc_motor, joint: {joint}, resistance: 2.0, inductance: 0.001, "
             "torque_constant: 0.02, back_emf_constant: 0.02, gear_ratio: 10}\n")
    path = tmp_path / "fourbar.yaml"
    path.write_text(text)
    for f in (SAMPLES / "fourbar").iterdir():
        if f.is_dir():
            (tmp_path / f.name).symlink_to(f)
    em = mbcompose.compose(str(path)).model
    assert em.kind == "embedded"
    with pytest.raises(CodegenUnsupported, match="DC motors on a closed chain"):
        generate_c(em)


def test_models_that_differ_only_in_a_motor_get_their_own_library():
    rng = np.random.default_rng(9)
    model = motor_tree(rng)
    motor = dyn.force_elements.DCMotorSpec
    spec = next(e for e in model.forces.elements if isinstance(e, motor))
    changed = ForceElements(model.forces.springs, model.forces.actuators,
                            tuple(e if e is not spec else motor(**{**spec.__dict__, "resistance": 2 * spec.resistance})
                                  for e in model.forces.elements))
    other = dyn.build_model(random_bodies(np.random.default_rng(9), 7, types=("revolute", "prismatic", "spherical",
                                                                             "free")), forces=changed)
    a, b = compile_model(model), compile_model(other)
    assert a is not b
    i = a.gen.param_names.index(f"{spec.name}.resistance")
    assert b.p[i] == 2 * a.p[i]
