"""Trees driven by DC motors or by actuators with activation dynamics: the right-hand side of
``y = [q, v, i, act]`` (:func:`component_rates`, which the fixed-step integrators of
:mod:`.fixed_step` take too) and its adaptive integration, the motors' currents ``i`` and the actuators' activations ``act`` integrated with
the mechanics (seed 004 section 5: the state of the electrical components joins the mechanical one).

``q_dot`` from :func:`dynamics.rates.configuration_rate`, ``v_dot`` from the forward dynamics with the
joint forces, damping, the motors' torques and the actuators' forces at ``act``, ``i_dot`` from the
motors' electrical equations (:func:`dynamics.forces.motor_rates`), ``act_dot`` from the activation
dynamics held in the activation ranges (:func:`.activations.bounded_rates`); scipy's ``solve_ivp``
(DOP853 by default).  Joint limits are not stops here: a trajectory that leaves a joint's range is
reported (a warning naming the joints).
"""

from __future__ import annotations

import logging

import numpy as np
from scipy.integrate import solve_ivp

from ..dispatch import algorithm
from ..forces import activation_names, actuator_activation_rates, actuator_forces, motor_names, motor_rates
from ..kinematics import normalize
from ..rates import QUATERNION_GAIN, configuration_rate
from .activations import bounded_rates, initial_activations
from .passive import JointProperties, damped
from .result import SimulationResult, coordinate_columns, energies

log = logging.getLogger(__name__)


def voltage_function(voltage, n: int):
    """``voltage`` (None, an (n,) array of constant volts, or f(t) -> (n,)) as f(t) -> (n,) V."""
    if callable(voltage):
        return lambda t: np.asarray(voltage(t), dtype=float).reshape(n)
    const = np.zeros(n) if voltage is None else np.asarray(voltage, dtype=float).reshape(n)
    return lambda t: const


def _warn_limits(model, q, joints: JointProperties) -> None:
    left = [name for name in model.joint_names
            for i in range(model.v_slice(name).start, model.v_slice(name).stop)
            if model.q_slice(name).stop - model.q_slice(name).start == 1
            and (np.any(q[:, model.q_slice(name).start] < joints.lower[i])
                 or np.any(q[:, model.q_slice(name).start] > joints.upper[i]))]
    if left:
        log.warning("joint limits are not enforced with DC motors; the trajectory leaves the range of %s",
                    ", ".join(dict.fromkeys(left)))


def _state_forces(model, voltage, ctrl, held: bool = True):
    """f(t, q, v, i, act) -> (motor and actuator forces (nv,), di (nmotors,), act_dot (nact,)): the
    terminal equations of the model's DC motors at ``voltage`` and of its actuators at the constant
    controls ``ctrl`` (na,) (all of them, with the activations where they have one).  ``held``: the
    activations held in their ranges (clamped, their rates zero at a bound: the continuous limit,
    :func:`.activations.bounded_rates`); else MuJoCo's ``act`` and ``act_dot`` as they are, the clamp
    being the step's (``mj_advance``: :func:`.fixed_step.simulate_tree_fixed_step_with_components`)."""
    tree = model.tree_model
    nm, na, nact = len(motor_names(model)), len(tree.actuator_names), len(activation_names(model))
    volts = voltage_function(voltage, nm)
    ctrl = np.zeros(na) if ctrl is None else np.asarray(ctrl, dtype=float).reshape(na)
    zero = np.zeros(model.nv)

    def terms(t, q, v, i, act):
        tau, di = motor_rates(model, v, i, volts(t)) if nm else (zero, np.zeros(0))
        if nact and held:
            act = initial_activations(model, act)
            tau = tau + actuator_forces(tree, q, v, ctrl, act)
            return tau, di, bounded_rates(model, ctrl, act)
        if nact:
            return tau + actuator_forces(tree, q, v, ctrl, act), di, actuator_activation_rates(tree, ctrl, act)
        return tau, di, np.zeros(0)

    return terms


def component_rates(model, torque, joints: JointProperties, voltage=None, ctrl=None, held: bool = True):
    """f(t, q, v, x) -> (a (nv,), x_dot) of a tree with DC motors or actuator activations, ``x = [i, act]``
    (the motors' currents (nmotors,) A, then the activations (nact,)): ``a`` the forward dynamics with the
    joint forces ``torque`` (None, (nv,) or f(t, q, v)), the joint damping of ``joints``, the motors'
    torques and the actuators' forces at ``act``; ``x_dot`` the currents' rates and the activations'
    rates held in their ranges (module docstring; ``held`` False: as MuJoCo's step takes them, see
    :func:`_state_forces`).  One function for the adaptive integration here and the fixed-step one
    (:func:`.fixed_step.simulate_tree_fixed_step_with_components`)."""
    nv, nm = model.nv, len(motor_names(model))
    forces = damped(torque, joints.damping, nv)
    terms = _state_forces(model, voltage, ctrl, held)
    forward = algorithm(model, "forward_dynamics")
    zero = np.zeros(nv)

    def rates(t, q, v, x):
        tau_s, di, da = terms(t, q, v, x[:nm], x[nm:])
        tau = tau_s + (zero if forces is None else forces(t, q, v))
        a = forward(model, q, v, tau, f_ext=None, data=None)
        return a, np.concatenate([di, da])

    return rates


def initial_components(model, currents=None, act0=None) -> np.ndarray:
    """``x0 = [i0, act0]`` (:func:`component_rates`): the currents (nmotors,) A and activations (nact,),
    zero when None, the activations held in their ranges."""
    nm = len(motor_names(model))
    i0 = np.zeros(nm) if currents is None else np.asarray(currents, dtype=float).reshape(nm)
    return np.concatenate([i0, initial_activations(model, act0)])


def component_result(model, t, q, v, x, status: str, **fields) -> SimulationResult:
    """The :class:`SimulationResult` of a trajectory t (T,), q (T, nq), v (T, nv), x (T, nmotors + nact) of a
    tree with motors or activations (``status`` the integrator's words; ``fields`` more of the result's)."""
    nm, names = len(motor_names(model)), activation_names(model)
    q = normalize(model, q)
    energy, kinetic = energies(model, q, v)
    parts = [f"{nm} DC motors"] if nm else []
    parts += [f"{len(names)} actuator activations"] if names else []
    acts = np.stack([initial_activations(model, a) for a in x[:, nm:]]) if names else None
    fields.setdefault("dissipative", True)
    return SimulationResult(t=t, q=q, v=v, energy=energy, columns=coordinate_columns(model),
                            velocity_columns=coordinate_columns(model, rate=True),
                            status=f"{status}, {', '.join(parts)}", kinetic=kinetic,
                            currents=x[:, :nm], current_columns=tuple(f"i:{m}" for m in motor_names(model)),
                            activations=acts, activation_columns=tuple(f"act:{a}" for a in names), **fields)


def simulate_tree_with_motors(model, q0, v0, duration: float, samples: int, torque, method: str, rtol: float,
                              atol: float, joints: JointProperties, voltage=None, currents=None,
                              progress=None, ctrl=None, act0=None) -> SimulationResult:
    """Integrate a tree with DC motors or actuator activations from (q0 (nq,), v0 (nv,), currents
    (nmotors,) A, activations act0 (nact,); zero when None).

    torque : f(t, q, v) -> (nv,) or an (nv,) array or None (the other joint forces; without the actuators
        when the model has activations: they are added here, at the activations);
    voltage : the motors' voltages (:func:`voltage_function`), in :func:`dynamics.forces.motor_names` order;
    ctrl : (na,) constant controls (``model.actuator_names`` order) of the activations' dynamics.
    Returns the trajectory with the currents in ``currents`` (T, nmotors), A, and the activations in
    ``activations`` (T, nact).
    """
    nq, nv = model.nq, model.nv
    rates = component_rates(model, torque, joints, voltage, ctrl)

    def rhs(t, y):
        q, v = y[:nq], y[nq:nq + nv]
        a, xdot = rates(t, q, v, y[nq + nv:])
        if progress is not None:
            progress(min(t / duration, 1.0))
        return np.concatenate([configuration_rate(model, q, v, stabilise=QUATERNION_GAIN), a, xdot])

    t_eval = np.linspace(0.0, duration, samples)
    sol = solve_ivp(rhs, (0.0, duration), np.concatenate([q0, v0, initial_components(model, currents, act0)]),
                    method=method, t_eval=t_eval, rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"the integrator stopped: {sol.message}")
    _warn_limits(model, normalize(model, sol.y[:nq].T), joints)
    return component_result(model, sol.t, sol.y[:nq].T, sol.y[nq:nq + nv].T, sol.y[nq + nv:].T,
                            f"{method}, rtol {rtol:g}, atol {atol:g}")
