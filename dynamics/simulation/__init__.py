"""Simulation of dynamics models: ``simulate(model, q0, v0, duration, ...) -> SimulationResult``.

Modules: :mod:`.adaptive` (scipy's ``solve_ivp``), :mod:`.fixed_step` (RK4 and semi-implicit
Euler, compiled), :mod:`.closed` (the ``[q, v_ind]`` state of embedded closed chains),
:mod:`.stops` (joint limits as inelastic stops, by events), :mod:`.passive` (damping and limits
per coordinate), :mod:`.result` (the trajectory and its named columns).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from typing import Callable

import numpy as np

from ..tolerances import ADAPTIVE_ATOL, ADAPTIVE_RTOL, SIMULATION_CLOSURE_TOL
from ..forces import activation_names, actuator_forces, motor_names
from .activations import activation_trajectory
from .adaptive import ADAPTIVE_METHOD, simulate_closed_chain, simulate_tree, stiffness_warning
from .motors import simulate_tree_with_motors
from .fixed_step import (DEFAULT_DT, FIXED_STEP, MAX_STEPS, simulate_closed_chain_fixed_step, simulate_tree_fixed_step,
                         simulate_tree_fixed_step_with_components, too_many_steps)
from .passive import ConstantForcesOnly, JointProperties, with_force_elements
from .result import SimulationResult, coordinate_columns, total_energy

#: model kind -> (adaptive integrator, fixed-step integrator) of that kind (:mod:`dynamics.dispatch`
#: names the kinds; ``lagrange`` and ``aggregated`` models are evaluated, not simulated)
SIMULATORS = {"tree": (simulate_tree, simulate_tree_fixed_step),
              "embedded": (simulate_closed_chain, simulate_closed_chain_fixed_step)}


logger = logging.getLogger(__name__)


def simulate(model, q0, v0, duration: float, samples: int = 201,
             torque: Callable[[float, np.ndarray, np.ndarray], np.ndarray] | None = None,
             method: str = "adaptive", rtol: float = ADAPTIVE_RTOL, atol: float = ADAPTIVE_ATOL,
             progress: Callable[[float], None] | None = None,
             closure_tol: float = SIMULATION_CLOSURE_TOL, dt: float | None = None,
             joints: JointProperties | None = None, ctrl=None, voltage=None, currents=None,
             activations=None) -> SimulationResult:
    """Integrate a model from (q0 (nq,), v0 (nv,)) for ``duration`` seconds, ``samples`` samples.

    torque : f(t, q, v) -> (nv,) joint forces, or a constant (nv,) array; zero when None.  On trees the
        fixed-step integrators run compiled end to end for constant forces and evaluate forces of the
        state (the model's springs, friction and servos included) at every stage otherwise
        (:func:`.fixed_step.simulate_tree_fixed_step`).
    method : "rk4" or "euler" (fixed step ``dt``, :mod:`.fixed_step`), "adaptive"
        (DOP853 at rtol, atol) or any other ``scipy.integrate.solve_ivp`` method.
    joints : damping and limits of the tree joints (:mod:`.passive`); none when None.
    ctrl : (na,) constant controls of the model's actuators (``model.actuator_names`` order; zero
        when None); the joint springs and actuators are added to ``torque``
        (:func:`.passive.with_force_elements`).
    voltage : the DC motors' voltages (``dynamics.forces.motor_names`` order): (nmotors,) constant volts or
        f(t) -> (nmotors,); zero when None.  currents : their initial currents (nmotors,) A, zero when None.
        A tree with DC motors integrates ``[q, v, i]`` (:mod:`.motors`, adaptively or by the fixed-step
        integrators; closed chains with motors are refused).
    activations : the initial activations (``dynamics.forces.activation_names`` order) of the actuators with
        activation dynamics, zero when None.  A tree with such actuators integrates ``[q, v, i, act]``,
        adaptively or by the fixed-step integrators, ``ctrl`` driving the activations (:mod:`.motors`,
        :mod:`.activations`, :func:`.fixed_step.simulate_tree_fixed_step_with_components`).  A closed chain
        takes the activations in closed form instead (:func:`_closed_chain_with_activations`); closed
        chains with DC motors are refused.
    progress : called with the fraction of simulated time done.
    closure_tol : Newton tolerance of the loop closure (closed chains).
    """
    if model.kind not in SIMULATORS:
        raise TypeError(f"{model.kind} models are not simulated (kinds: {', '.join(SIMULATORS)})")
    adaptive, fixed_step = SIMULATORS[model.kind]
    joints = joints or JointProperties.none(model.tree_model.nv)
    stateful = bool(activation_names(model))
    torque = with_force_elements(torque, model, ctrl, actuators=not stateful)
    if stateful and model.kind != "tree" and not motor_names(model):
        return _closed_chain_with_activations(model, q0, v0, duration, samples, torque, method, rtol, atol, progress,
                                              closure_tol, dt, joints, ctrl, activations)
    warning = None if method in FIXED_STEP else stiffness_warning(
        model, joints, q0, duration, ADAPTIVE_METHOD if method == "adaptive" else method)
    if warning:
        logger.warning(warning)
    if motor_names(model) or stateful:
        if model.kind != "tree":
            raise ConstantForcesOnly("DC motors are integrated on trees (adaptive, rk4, euler), not on closed chains "
                                     "(their currents are states the closed-chain simulators do not carry)")
        if method in FIXED_STEP:
            return simulate_tree_fixed_step_with_components(model, q0, v0, duration, samples, torque, method, dt,
                                                            joints, progress, voltage, currents, ctrl, activations)
        method = ADAPTIVE_METHOD if method == "adaptive" else method
        return simulate_tree_with_motors(model, q0, v0, duration, samples, torque, method, rtol, atol, joints,
                                         voltage, currents, progress, ctrl, activations)
    if method in FIXED_STEP:
        result = fixed_step(model, q0, v0, duration, samples, torque, method, dt, joints, progress, closure_tol)
    else:
        method = ADAPTIVE_METHOD if method == "adaptive" else method
        result = adaptive(model, q0, v0, duration, samples, torque, method, rtol, atol, progress, closure_tol, joints)
    # applied joint forces, springs, actuators and damping change the energy as stops do
    changed = torque is not None or joints.has_damping
    return replace(result, dissipative=True) if changed and not result.dissipative else result


def _closed_chain_with_activations(model, q0, v0, duration, samples, torque, method, rtol, atol, progress, closure_tol,
                                   dt, joints, ctrl, act0) -> SimulationResult:
    """A closed chain driven through actuators with activation dynamics: the activations at constant controls
    are known functions of time (:func:`.activations.activation_trajectory`, their dynamics not depending on
    the mechanics), so the actuators' forces at them are joint forces f(t, q, v) of the closed-chain
    simulators (adaptive or fixed-step); the activations are sampled into the result."""
    tree = model.tree_model
    ctrl = np.zeros(len(tree.actuator_names)) if ctrl is None else np.asarray(ctrl, dtype=float).reshape(-1)
    act = activation_trajectory(model, ctrl, act0)
    other = torque if callable(torque) or torque is None else (lambda t, q, v, c=np.asarray(torque): c)

    def forces(t, q, v):
        f = actuator_forces(tree, q, v, ctrl, act(t))
        return f if other is None else f + other(t, q, v)

    adaptive, fixed_step = SIMULATORS[model.kind]
    if method in FIXED_STEP:
        result = fixed_step(model, q0, v0, duration, samples, forces, method, dt, joints, progress, closure_tol)
    else:
        method = ADAPTIVE_METHOD if method == "adaptive" else method
        result = adaptive(model, q0, v0, duration, samples, forces, method, rtol, atol, progress, closure_tol, joints)
    names = activation_names(model)
    return replace(result, dissipative=True, activations=np.stack([act(t) for t in result.t]),
                   activation_columns=tuple(f"act:{a}" for a in names),
                   status=f"{result.status}, {len(names)} actuator activations (closed form)")


__all__ = ["ConstantForcesOnly", "DEFAULT_DT", "FIXED_STEP", "MAX_STEPS", "SIMULATORS", "JointProperties",
           "SimulationResult", "coordinate_columns", "simulate", "too_many_steps", "total_energy"]
