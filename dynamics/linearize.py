"""Linearization: the continuous state-space form ``x_dot = A x + B u``, ``y = C x + D u`` of a model at
a state (seed 004 section 5: the system's states and inputs from its graph; here the mechanical ones).

States ``x`` (in this order):

* trees: ``dq`` (nv,), the configuration's displacement in the tangent space of each joint,
  ``q = integrate(q*, dq)`` (:func:`dynamics.kinematics.integrate`: the exponential map on SO(3),
  SE(2), SE(3)), then the velocities ``v`` (nv,).  The displacement is taken along the trajectory
  through the state (MuJoCo's convention in ``mjd_transitionFD``: ``q(t) = q*(t) (+) dq(t)``), so
  ``d(dq)/dt = dv - ad(v*) dq`` with ``ad`` the adjoint of the joint's group at its velocity
  (``[w]x`` on SO(3); ``[[w]x, 0], [[v]x, [w]x]]`` on SE(3), twist ``[w; v]``; on SE(2) ``[[w J, -J v],
  [0, 0]]``, ``J`` the rotation by 90 degrees); zero for the joints whose ``q_dot = v`` (revolute,
  prismatic, universal, ...).  These rows are analytic.
* embedded closed chains (:mod:`dynamics.closed.embedding`): the independent coordinates ``q_i``
  and their velocities ``v_i`` (``model.independent``, each one coordinate of a Euclidean joint, so
  ``d(q_i)/dt = v_i``); the dependent coordinates follow by closing the loops (Newton's method to
  rounding level) and ``v = X(q) v_i``.
* then ``i:MOTOR``, the current of each DC motor (:func:`dynamics.forces.motor_rates`), A;
* then ``act:ACTUATOR``, the activation of each actuator with activation dynamics
  (:func:`dynamics.forces.activation_names`, MuJoCo's ``act``), whose rate is MuJoCo's ``act_dot``
  (:func:`dynamics.forces.actuator_activation_rates`: ``ctrl`` for an integrator, ``(ctrl - act) /
  timeconst`` for the filters) and which the actuator's force takes in place of its control.  An
  activation range (``actlimited``) holds the activation by a clamp that is not differentiable at its
  bounds; the linearization is that of the motion inside the range (at a bound it is the one-sided
  derivative from inside).

Inputs ``u``: the actuator controls (``model.actuator_names``), the joint forces of the tree's
velocity coordinates (``tau:NAME``) and the DC motors' voltages (``volt:MOTOR``).

The rows of ``v_dot``, of the currents and of the activations are central differences of
``forward_dynamics(q, v, tau + passive_forces + actuator_forces(act))``, ``motor_rates`` and
``actuator_activation_rates`` with the steps
:data:`STATE_STEP` (states) and :data:`INPUT_STEP` (inputs), both relative to ``max(1, |value|)``;
the truncation error is O(step^2) and the rounding error O(eps / step) of the accelerations.  Outputs
``y`` are states picked by name (default: all of them): C selects them, D is zero.

Models of kind ``lagrange`` and ``aggregated`` are refused (they have no independent-coordinate state).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .closed.embedding import complete_configuration, complete_velocity
from .dispatch import algorithm
from .forces import activation_names, actuator_activation_rates, actuator_forces, motor_names, motor_rates, passive_forces
from .kinematics import integrate
from .tolerances import SIMULATION_CLOSURE_TOL

__all__ = ["Linearization", "linearize", "state_names", "input_names", "STATE_STEP", "INPUT_STEP"]

#: central-difference step of the states, relative to max(1, |x|) (rad, m, rad/s, m/s, A)
STATE_STEP = 1e-6

#: central-difference step of the inputs, relative to max(1, |u|)
INPUT_STEP = 1e-6


@dataclass(frozen=True)
class Linearization:
    """``x_dot = A x + B u``, ``y = C x + D u`` at the state (q, v) and inputs u0.

    A (n, n), B (n, m), C (p, n), D (p, m); ``states`` (n,), ``inputs`` (m,), ``outputs`` (p,) names;
    q (nq,), v (nv,) the full state linearized at (loops closed), currents (nmotors,) A, u0 (m,) the
    inputs' values there; activations (nact,) the activations linearized at.
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    q: np.ndarray
    v: np.ndarray
    currents: np.ndarray
    u0: np.ndarray
    activations: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def as_dict(self) -> dict:
        """Plain arrays and name lists (``.npz`` / JSON)."""
        return {k: getattr(self, k) for k in ("A", "B", "C", "D", "states", "inputs", "outputs", "q", "v", "currents",
                                              "u0", "activations")}


def _coordinate_names(model) -> list[str]:
    names = []
    for jn in model.joint_names:
        sl = model.v_slice(jn)
        names.extend([jn] if sl.stop - sl.start == 1 else [f"{jn}[{i}]" for i in range(sl.stop - sl.start)])
    return names


def _position_indices(model) -> np.ndarray:
    """The velocity indices the state's positions and velocities are: all (trees) or the independent ones."""
    return np.asarray(model.independent_v) if model.kind == "embedded" else np.arange(model.nv)


def state_names(model) -> tuple[str, ...]:
    """``q:NAME`` and ``v:NAME`` per state coordinate, then ``i:MOTOR`` per DC motor, then ``act:ACTUATOR`` per
    actuator with activation dynamics."""
    names = _coordinate_names(model)
    idx = _position_indices(model)
    motors = [f"i:{m}" for m in motor_names(model)]
    acts = [f"act:{a}" for a in activation_names(model)]
    return tuple([f"q:{names[i]}" for i in idx] + [f"v:{names[i]}" for i in idx] + motors + acts)


def input_names(model) -> tuple[str, ...]:
    """Every input a model has: its actuators' names, ``tau:NAME`` per velocity coordinate, ``volt:MOTOR``."""
    return (tuple(model.actuator_names) + tuple(f"tau:{n}" for n in _coordinate_names(model))
            + tuple(f"volt:{m}" for m in motor_names(model)))


def _select(choice, every: Sequence[str], what: str) -> list[int]:
    """Positions in ``every`` of the names in ``choice`` (``tau``, ``ctrl``, ``volt``, ``q``, ``v``, ``i`` pick a
    whole family; a joint coordinate name alone means ``q:NAME`` among states)."""
    out = []
    for name in choice:
        family = [i for i, n in enumerate(every) if n.startswith(f"{name}:")]
        if name == "ctrl":
            family = [i for i, n in enumerate(every) if ":" not in n]
        if family:
            out.extend(family)
            continue
        for candidate in (name, f"q:{name}"):
            if candidate in every:
                out.append(every.index(candidate))
                break
        else:
            from difflib import get_close_matches
            near = get_close_matches(name, every, n=3, cutoff=0.5)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            raise ValueError(f"unknown {what} {name!r}{hint}; {what}s: {', '.join(every)}")
    return out


def _default_inputs(model) -> list[str]:
    families = (["ctrl"] if len(model.actuator_names) else []) + (["volt"] if motor_names(model) else [])
    return families or ["tau"]


class _System:
    """``x_dot = f(x, u)`` of a model around the full state (q*, v*) (module docstring)."""

    def __init__(self, model, q, v, currents, activations):
        self.model, self.tree = model, model.tree_model
        self.embedded = model.kind == "embedded"
        self.q, self.v = q, v
        self.idx = _position_indices(model)
        self.n = len(self.idx)
        self.na = len(model.actuator_names)
        self.forward = algorithm(model, "forward_dynamics")
        self.i0, self.act0 = currents, activations
        self.nm = len(currents)

    def x0(self) -> np.ndarray:
        base = np.zeros(self.n) if not self.embedded else self.q_of(self.idx)
        return np.concatenate([base, self.v[self.idx], self.i0, self.act0])

    def q_of(self, idx) -> np.ndarray:
        """The values of the coordinates of velocity indices ``idx``, each of a Euclidean joint (q = v
        coordinate by coordinate, as embedded chains' independent coordinates are)."""
        tree, out = self.tree, []
        for i in idx:
            jn = next(j for j in tree.joint_names if tree.v_slice(j).start <= i < tree.v_slice(j).stop)
            out.append(self.q[tree.q_slice(jn).start + i - tree.v_slice(jn).start])
        return np.array(out)

    def full_state(self, x):
        """(q, v) of the state vector x."""
        n = self.n
        if not self.embedded:
            return integrate(self.tree, self.q, x[:n]), x[n:2 * n]
        q = complete_configuration(self.model, self.q, q_ind=x[:n], tol=SIMULATION_CLOSURE_TOL, adaptive=False)
        return q, complete_velocity(self.model, q, x[n:2 * n])

    def rates(self, x, u) -> np.ndarray:
        """(v_dot at the state's velocity indices, the currents' rates, the activations' rates)."""
        q, v = self.full_state(x)
        nv, n, nm = self.model.nv, self.n, self.nm
        ctrl, tau, volt = u[:self.na], u[self.na:self.na + nv], u[self.na + nv:]
        act = x[2 * n + nm:]
        torque, di = motor_rates(self.model, v, x[2 * n:2 * n + nm], volt)
        f = tau + torque + passive_forces(self.model, q, v) + actuator_forces(self.model, q, v, ctrl, act)
        a = np.asarray(self.forward(self.model, q, v, f, f_ext=None, data=None))[self.idx]
        rates = actuator_activation_rates(self.model, ctrl, act) if len(act) else np.zeros(0)
        return np.concatenate([a, di, rates])


def _central(fun, x0, step) -> np.ndarray:
    """Jacobian of fun at x0 by central differences, step ``step * max(1, |x0_j|)`` per column."""
    cols = []
    for j in range(len(x0)):
        h = step * max(1.0, abs(x0[j]))
        xp, xm = x0.copy(), x0.copy()
        xp[j] += h
        xm[j] -= h
        cols.append((fun(xp) - fun(xm)) / (2 * h))
    return np.array(cols).T if cols else np.zeros((len(fun(x0)), 0))


def _adjoint(jtype: str, v) -> np.ndarray | None:
    """``ad(v)`` of the joint's group at its velocity v (module docstring); None where q_dot = v."""
    def hat(w):
        return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    if jtype == "spherical":
        return hat(v)
    if jtype == "free":
        return np.block([[hat(v[:3]), np.zeros((3, 3))], [hat(v[3:]), hat(v[:3])]])
    if jtype == "planar":
        J = np.array([[0.0, -1.0], [1.0, 0.0]])
        return np.block([[v[2] * J, -(J @ v[:2])[:, None]], [np.zeros((1, 3))]])
    return None


def _position_rows(sys_: _System) -> np.ndarray:
    """``d(dq)/dt`` by the state (module docstring): (n, 2n + motors), analytic."""
    n = sys_.n
    rows = np.zeros((n, 2 * n + len(sys_.i0) + len(sys_.act0)))
    rows[:, n:2 * n] = np.eye(n)
    if sys_.embedded:
        return rows
    tree = sys_.tree
    for jn, jtype in zip(tree.joint_names, tree.joint_types):
        vs = tree.v_slice(jn)
        ad = _adjoint(jtype, sys_.v[vs])
        if ad is not None:
            rows[vs, vs] = -ad
    return rows


def linearize(model, q, v=None, ctrl=None, tau=None, voltage=None, currents=None, inputs=None,
              outputs=None, activations=None) -> Linearization:
    """Continuous A, B, C, D of ``model`` at the state (q (nq,), v (nv,)) (module docstring).

    ctrl (na,), tau (nv,), voltage (nmotors,) : the inputs' values there (zero when None);
    currents (nmotors,) : the DC motors' currents, A (zero when None).
    activations (nact,) : the activations of the actuators with activation dynamics
        (:func:`dynamics.forces.activation_names` order; zero when None, MuJoCo's initial ones).
    inputs : names or families (``ctrl``, ``tau``, ``volt``) of the columns of B and D (default: the
        actuators' controls and the motors' voltages, or the joint forces when there are neither).
    outputs : state names or families (``q``, ``v``, ``i``, ``act``; a coordinate name alone is ``q:NAME``);
        default every state.

    Examples
    --------
    A pendulum of length l hanging at rest linearizes to ``A = [[0, 1], [-g/l, 0]]``.
    """
    if model.kind not in ("tree", "embedded"):
        raise TypeError(f"{model.kind} models are not linearized (kinds: tree, embedded)")
    v = np.zeros(model.nv) if v is None else np.asarray(v, dtype=float)
    q = np.asarray(q, dtype=float)
    if model.kind == "embedded":
        q = complete_configuration(model, q, adaptive=False, tol=SIMULATION_CLOSURE_TOL)
        v = complete_velocity(model, q, v)
    vec = lambda x, n: np.zeros(n) if x is None else np.asarray(x, dtype=float).reshape(n)
    nm = len(motor_names(model))
    u_all = np.concatenate([vec(ctrl, len(model.actuator_names)), vec(tau, model.nv), vec(voltage, nm)])
    sys_ = _System(model, q, v, vec(currents, nm), vec(activations, len(activation_names(model))))
    x0 = sys_.x0()
    every_input, every_state = input_names(model), state_names(model)
    cols = _select(_default_inputs(model) if inputs is None else inputs, every_input, "input")
    rows = _select(every_state if outputs is None else outputs, every_state, "output")
    A = np.vstack([_position_rows(sys_), _central(lambda x: sys_.rates(x, u_all), x0, STATE_STEP)])

    def rates_of(u_sel):
        u = u_all.copy()
        u[cols] = u_sel
        return sys_.rates(x0, u)

    B = np.vstack([np.zeros((sys_.n, len(cols))), _central(rates_of, u_all[cols], INPUT_STEP)])
    C = np.eye(len(x0))[rows]
    return Linearization(A, B, C, np.zeros((len(rows), len(cols))), every_state,
                         tuple(every_input[c] for c in cols), tuple(every_state[r] for r in rows),
                         q, v, sys_.i0, u_all[cols], sys_.act0)
