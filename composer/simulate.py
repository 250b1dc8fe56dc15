"""Simulation in state-space form over (q, v): scipy's adaptive integrators here, the
fixed-step ones (RK4, semi-implicit Euler) in :mod:`composer.fixed_step`.

The state is ``y = [q, v]``; ``q_dot`` comes from :func:`dynamics.rates.configuration_rate`
(quaternion kinematics for spherical and free joints) and ``v_dot`` from the
O(N) articulated-body forward dynamics.  Unit quaternions are kept on the unit
sphere by a stabilising term ``k (1 - |q|^2) q`` in their rate, which is zero on
the sphere, and are normalised in the output.

Joint damping and limits from the input file enter as :mod:`composer.passive` says.

Columns are named after joints: ``name`` for one-coordinate joints and
``name[i]`` otherwise (the public contract in DESIGN.md).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
from scipy.integrate import solve_ivp

from mbcompose import dynamics
from mbcompose.dynamics.kinematics import normalize
from mbcompose.dynamics.rates import configuration_rate
from mbcompose.dynamics.tolerances import SIMULATION_CLOSURE_TOL

from .passive import JointProperties, joint_properties

log = logging.getLogger(__name__)

QUATERNION_GAIN = 10.0


@dataclass(frozen=True)
class SimulationResult:
    """Sampled trajectory.

    t : (T,) s.  q : (T, nq).  v : (T, nv).  energy : (T,) kinetic + potential, J.
    columns : coordinate column names (len nq).  status : the integrator and its settings.
    closure : (T,) loop closure error norm for closed chains, else None.
    limit_contacts : number of times a joint reached one of its limits.
    extra_columns, extra_q : joints that are not coordinates of the model (the
        chords that close loops, joints removed as redundant), named like the
        others, and their coordinates (T, k); see :func:`derived_joint_columns`.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    energy: np.ndarray
    columns: tuple[str, ...]
    velocity_columns: tuple[str, ...]
    status: str
    closure: np.ndarray | None = None
    extra_columns: tuple[str, ...] = ()
    extra_q: np.ndarray | None = None
    limit_contacts: int = 0

    def with_extra(self, columns, values) -> "SimulationResult":
        from dataclasses import replace

        return replace(self, extra_columns=tuple(columns), extra_q=np.asarray(values).reshape(len(self.t), -1))

    def energy_drift(self) -> float:
        """max |E(t) - E(0)| / |E(0)| (the absolute drift when E(0) = 0)."""
        drift = float(np.abs(self.energy - self.energy[0]).max())
        return drift / abs(self.energy[0]) if self.energy[0] != 0 else drift


def coordinate_columns(model, rate: bool = False) -> tuple[str, ...]:
    """Column names: ``joint`` or ``joint[i]`` per coordinate (velocity coordinates if ``rate``)."""
    names = []
    for name in model.joint_names:
        sl = model.v_slice(name) if rate else model.q_slice(name)
        n = sl.stop - sl.start
        if n == 1:
            names.append(name)
        else:
            names.extend(f"{name}[{i}]" for i in range(n))
    return tuple(names)


class JointValueError(ValueError):
    """A joint value that does not fit the model; ``joint`` names the joint."""

    def __init__(self, message: str, joint: str):
        super().__init__(message)
        self.joint = joint


def joint_values_array(name: str, value) -> np.ndarray:
    """``value`` (a number or a list of numbers) as a finite 1-D array within the magnitude limit."""
    from mbcompose.parsers import limits

    items = value if isinstance(value, (list, tuple)) else [value]
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
            raise JointValueError(f"joint '{name}': expected a number or a list of numbers, "
                                  f"got {type(v).__name__} {str(v)[:40]!r}", name)
        if not np.isfinite(float(v)):
            raise JointValueError(f"joint '{name}': values must be finite, got {v}", name)
        too_big = limits.check_magnitude(float(v), f"joint '{name}'")
        if too_big:
            raise JointValueError(too_big, name)
    return np.array(items, dtype=float)


def joint_vector(model, values: Mapping[str, object], rate: bool, base=None) -> np.ndarray:
    """A q (or v if ``rate``) vector from ``{joint: value or list}``.

    Unknown joints (with a "did you mean"), wrong counts and non-finite values
    raise :class:`JointValueError`.
    """
    from mbcompose.parsers.errors import did_you_mean

    out = np.array(base if base is not None else (np.zeros(model.nv) if rate else model.neutral()), dtype=float)
    for name, value in values.items():
        if name not in model.joint_names:
            raise JointValueError(f"unknown joint '{name}'{did_you_mean(name, model.joint_names)} "
                                  f"(joints: {', '.join(model.joint_names)})", name)
        sl = model.v_slice(name) if rate else model.q_slice(name)
        vals = joint_values_array(name, value)
        if vals.size != sl.stop - sl.start:
            raise JointValueError(f"joint '{name}' takes {sl.stop - sl.start} values, got {vals.size}", name)
        out[sl] = vals
    return out


def total_energy(model, q, v) -> float:
    return float(dynamics.kinetic_energy(model, q, v) + dynamics.potential_energy(model, q))


def damped(torque, damping, nv: int):
    """``torque`` plus viscous joint damping ``-damping * v`` as f(t, q, v) (None when both are zero)."""
    damping = np.zeros(nv) if damping is None else np.asarray(damping, dtype=float)
    if not np.any(damping):
        return torque if torque is None or callable(torque) else (lambda t, q, v: torque)
    if torque is None:
        return lambda t, q, v: -damping * v
    if callable(torque):
        return lambda t, q, v: torque(t, q, v) - damping * v
    return lambda t, q, v: torque - damping * v


def closed_chain_rhs(em, torque, duration, progress, tol):
    """Right-hand side for a constraint-embedded closed chain.

    The state is ``[q, v_ind]``; on every call the dependent coordinates of q are
    re-solved by Newton's method (keeping the independent ones), the full v
    follows from the null-space map, and the embedded forward dynamics
    (``dynamics.forward_dynamics``, compiled) gives the accelerations.  So the
    dependent coordinates never leave the constraint manifold, whatever the integrator does.
    """
    from mbcompose.dynamics import embedding as E

    tree = em.tree_model
    zero = np.zeros(em.nv)
    last = {"q": em.neutral()}

    def close(q):
        qc = E.complete_configuration(em, q_guess=q, tol=tol)
        last["q"] = qc
        return qc

    def rhs(t, y):
        q = close(y[:em.nq])
        v = E.complete_velocity(em, q, y[em.nq:])
        tau = zero if torque is None else torque(t, q, v)
        a = dynamics.forward_dynamics(em, q, v, tau)
        if progress is not None:
            progress(min(t / duration, 1.0))
        return np.concatenate([configuration_rate(tree, q, v, stabilise=QUATERNION_GAIN), a[em.independent_v]])

    return rhs, close


def simulate_closed_chain(em, q0, v0, duration: float, samples: int = 201, torque=None, method: str = "DOP853",
                          rtol: float = 1e-10, atol: float = 1e-10, progress=None,
                          closure_tol: float = SIMULATION_CLOSURE_TOL,
                          joints: JointProperties | None = None) -> SimulationResult:
    """Integrate a constraint-embedded closed chain (see :func:`closed_chain_rhs`).

    q0 is closed first (its independent coordinates kept); v0's independent
    entries set the initial velocity.  joints : damping of the tree joints (limits are
    not enforced on closed chains, see :mod:`composer.passive`).
    """
    damping = None if joints is None else joints.damping
    rhs, close = closed_chain_rhs(em, damped(torque, damping, em.nv), duration, progress, closure_tol)
    q_start = close(np.asarray(q0, dtype=float))
    y0 = np.concatenate([q_start, np.asarray(v0, dtype=float)[em.independent_v]])
    sol = solve_ivp(rhs, (0.0, duration), y0, method=method, t_eval=np.linspace(0.0, duration, samples),
                    rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"integration failed: {sol.message}")
    return closed_chain_result(em, sol.t, sol.y[:em.nq].T, sol.y[em.nq:].T, f"{method}, rtol {rtol:g}, atol {atol:g}",
                               closure_tol)


def closed_chain_result(em, t, q, v_ind, status: str, closure_tol) -> SimulationResult:
    """The result of a closed-chain run: every sample closed to ``closure_tol`` (its loop closure
    error reported), full velocities, energy and the loop-closing joints' columns (the closure and the
    velocities compiled, :mod:`dynamics.compiled.closed_api`, with the numpy reference as fallback)."""
    from mbcompose.dynamics.closure import closure_error
    from mbcompose.dynamics.compiled import closed_api

    tree = em.tree_model
    tol = SIMULATION_CLOSURE_TOL if closure_tol is None else closure_tol
    qs = np.array([closed_api.complete_configuration(em, qi, tol=tol) for qi in q])
    vs = np.array([closed_api.complete_velocity(em, qi, vi) for qi, vi in zip(qs, v_ind)])
    energy = np.array([total_energy(tree, qi, vi) for qi, vi in zip(qs, vs)])
    closure = np.array([np.max(np.abs(closure_error(tree, em.chords, qi)), initial=0.0) for qi in qs])
    result = SimulationResult(t=np.asarray(t), q=qs, v=vs, energy=energy, columns=coordinate_columns(tree),
                              velocity_columns=coordinate_columns(tree, rate=True), status=status, closure=closure)
    names, values = chord_columns(em, qs, vs)
    return result.with_extra(names, values)


def chord_columns(em, qs, vs) -> tuple[list[str], np.ndarray]:
    """Coordinates of the loop-closing joints along a trajectory (``name`` or ``name[i]``)."""
    from mbcompose.dynamics import embedding as E

    names: list[str] = []
    rows = []
    for q, v in zip(qs, vs):
        coords = E.chord_coordinates(em, q, v)
        row = []
        for c in em.chords:
            if c.name not in coords:
                continue
            value = np.atleast_1d(coords[c.name][0])
            if len(rows) == 0:
                names.extend([c.name] if value.size == 1 else [f"{c.name}[{i}]" for i in range(value.size)])
            row.extend(value.tolist())
        rows.append(row)
    return names, np.array(rows, dtype=float).reshape(len(qs), len(names))


def derived_joint_columns(composition, result: "SimulationResult") -> "SimulationResult":
    """Add columns for joints removed as redundant (seed 004's co-linear bearings).

    A redundant revolute or prismatic joint has the same freedom as the joint
    kept in its place, so its coordinate is ``ref + s (q_kept - ref_kept)`` with ``s = +-1``
    from the directions of the two axes and of the two joints (reference and
    secondary swapped or not).  Joints removed because their pair locked or was
    already rigid never move: their columns hold their ``ref`` (zero unless given).
    """
    analysis, assembly, model = composition.analysis, composition.assembly, composition.model
    names, values = list(result.extra_columns), [result.extra_q] if result.extra_q is not None else []
    for r in analysis.removed_joints:
        joint = assembly.joint(r.name)
        if joint.nq == 0:
            continue
        if r.kind == "redundant" and r.kept in model.joint_names and joint.nq == 1:
            kept = assembly.joint(r.kept)
            kept_reduced = next((j for j in analysis.reduced_joints if j.name == r.kept), None)
            same_way = kept_reduced is None or (kept_reduced.reference, kept_reduced.secondary) == (
                r.reference, r.secondary)
            sign = np.sign(float(np.dot(joint.axis, kept.axis))) * (1.0 if same_way else -1.0)
            col = result.columns.index(r.kept)
            values.append(joint.ref + sign * (result.q[:, col:col + 1] - kept.ref))   # each at its own ref
            names.append(r.name)
        elif r.kind in ("locking", "rigid", "internal"):
            names.extend([r.name] if joint.nq == 1 else [f"{r.name}[{i}]" for i in range(joint.nq)])
            zero = np.full((len(result.t), joint.nq), joint.ref if joint.nq == 1 else 0.0)
            if joint.type in ("spherical", "free"):
                zero[:, joint.nq - 4] = 1.0
            values.append(zero)
    if not values:
        return result
    return result.with_extra(names, np.hstack(values))


def simulate(model, q0, v0, duration: float, samples: int = 201,
             torque: Callable[[float, np.ndarray, np.ndarray], np.ndarray] | None = None,
             method: str = "adaptive", rtol: float = 1e-10, atol: float = 1e-10,
             progress: Callable[[float], None] | None = None,
             closure_tol: float = SIMULATION_CLOSURE_TOL, dt: float | None = None,
             joints: JointProperties | None = None) -> SimulationResult:
    """Integrate a model from (q0, v0) for ``duration`` seconds.

    torque : f(t, q, v) -> (nv,) joint forces (the fixed-step tree simulator takes a
        constant (nv,) array instead); zero when None.
    method : "rk4" or "euler" (fixed step ``dt``, :mod:`composer.fixed_step`), "adaptive"
        (DOP853 at rtol, atol) or any other ``scipy.integrate.solve_ivp`` method.
    joints : damping and limits of the tree joints (:mod:`composer.passive`); none when None.
    progress : called with the fraction of simulated time done.

    The integrator of each model kind is in :data:`SIMULATORS` (adaptive) and
    :data:`fixed_step.FIXED_STEP_SIMULATORS`.
    """
    from .fixed_step import FIXED_STEP, FIXED_STEP_SIMULATORS

    if model.kind not in SIMULATORS:
        raise TypeError(f"{model.kind} models are not simulated (kinds: {', '.join(SIMULATORS)})")
    joints = joints or JointProperties.none(model.tree_model.nv)
    if method in FIXED_STEP:
        return FIXED_STEP_SIMULATORS[model.kind](model, q0, v0, duration, samples, torque, method, dt, joints,
                                                 progress, closure_tol)
    method = ADAPTIVE_METHOD if method == "adaptive" else method
    return SIMULATORS[model.kind](model, q0, v0, duration, samples, torque, method, rtol, atol, progress,
                                  closure_tol, joints)


def simulate_tree(model, q0, v0, duration: float, samples: int = 201, torque=None, method: str = "DOP853",
                  rtol: float = 1e-10, atol: float = 1e-10, progress=None, closure_tol=None,
                  joints: JointProperties | None = None) -> SimulationResult:
    """Integrate a rigid-body tree (``closure_tol`` is unused: a tree has no loops).

    Joint limits in ``joints`` are stops resolved by events (:mod:`composer.stops`).
    """
    from mbcompose.dynamics.compiled.simulate_api import limited_coordinates

    from .stops import simulate_tree_with_stops

    nq, nv = model.nq, model.nv
    joints = joints or JointProperties.none(nv)
    torque = damped(torque, joints.damping, nv)
    t_eval = np.linspace(0.0, duration, samples)
    y0 = np.concatenate([q0, v0])
    limits = limited_coordinates(model, joints.lower, joints.upper)
    t, y, contacts = simulate_tree_with_stops(model, y0, t_eval, torque, method, rtol, atol, progress, limits)
    q = normalize(model, y[:, :nq])
    v = y[:, nq:]
    energy = np.array([total_energy(model, qi, vi) for qi, vi in zip(q, v)])
    status = f"{method}, rtol {rtol:g}, atol {atol:g}" + (f", {contacts} joint limit contacts" if contacts else "")
    return SimulationResult(t=t, q=q, v=v, energy=energy, columns=coordinate_columns(model),
                            velocity_columns=coordinate_columns(model, rate=True), status=status,
                            limit_contacts=contacts)


#: the adaptive integrator's scipy method
ADAPTIVE_METHOD = "DOP853"

#: model kind -> adaptive integrator of that kind (:mod:`dynamics.dispatch` names the kinds).
SIMULATORS = {"tree": simulate_tree, "embedded": simulate_closed_chain}


def run_simulation(composition, cfg, progress: Callable[[float], None] | None = None) -> SimulationResult:
    """Simulate a composition as a pipeline config says (initial state, torques, integrator).

    Unknown joint names in the config are input errors naming the joint.
    """
    from mbcompose.parsers.errors import InputError

    model = composition.model
    if model.kind not in SIMULATORS:
        raise InputError("simulation of closed chains needs options.loops: embed "
                         "(loops: lagrange evaluates dynamics but does not simulate)")
    check_simulation_size(cfg.duration, cfg.samples, composition.assembly.source_file)
    q0, v0, tau = (_config_vector(model, cfg, key, values, rate) for key, values, rate in
                   (("initial.q", cfg.initial_q, False), ("initial.v", cfg.initial_v, True),
                    ("torques", cfg.torques, True)))
    result = simulate(model, q0, v0, cfg.duration, cfg.samples, torque=tau if cfg.torques else None,
                      method=cfg.integrator, rtol=cfg.rtol, atol=cfg.atol, progress=progress,
                      closure_tol=composition.options.tolerances.closure, dt=cfg.dt,
                      joints=joint_properties(composition))
    return derived_joint_columns(composition, result)


def _config_vector(model, cfg, key: str, values, rate: bool) -> np.ndarray:
    """joint_vector of one config entry; errors located where the config gave the joint."""
    from mbcompose.parsers.errors import InputError

    try:
        return joint_vector(model, values, rate=rate)
    except JointValueError as exc:
        file, line = getattr(cfg, "locations", {}).get(f"{key}.{exc.joint}", (None, None))
        raise InputError(str(exc), file=file, line=line, key=f"simulation.{key}") from None


def check_simulation_size(duration: float, samples: int, file=None, line=None) -> None:
    """InputError unless ``duration`` (s) and ``samples`` are finite and within the limits."""
    from mbcompose.parsers import limits
    from mbcompose.parsers.errors import InputError

    if not (np.isfinite(duration) and duration > 0):
        raise InputError(f"simulation duration must be a finite number > 0, got {duration}", file=file, line=line)
    if duration > limits.active().duration:
        raise InputError(limits.exceeded("simulation duration in s", duration, "duration"), file=file, line=line)
    if samples > limits.active().samples:
        raise InputError(limits.exceeded("simulation samples", samples, "samples"), file=file, line=line)


def write_simulation(result: SimulationResult, path, fmt: str = "csv") -> None:
    """Write a trajectory: CSV (``time``, one column per coordinate of the model,
    then the derived joints' columns, the ``v:`` velocity columns and ``energy``)
    or NPZ (arrays ``time``, ``q``, ``v``, ``energy``, ``columns``,
    ``extra_columns``, ``extra_q``)."""
    if fmt == "npz":
        with open(path, "wb") as fh:
            np.savez(fh, time=result.t, q=result.q, v=result.v, energy=result.energy,
                     columns=np.array(result.columns), velocity_columns=np.array(result.velocity_columns),
                     extra_columns=np.array(result.extra_columns),
                     extra_q=result.extra_q if result.extra_q is not None else np.zeros((len(result.t), 0)))
        return
    extra = result.extra_q if result.extra_q is not None else np.zeros((len(result.t), 0))
    header = ["time", *result.columns, *result.extra_columns, *(f"v:{c}" for c in result.velocity_columns),
              "energy"]
    data = np.column_stack([result.t, result.q, extra, result.v, result.energy])
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(",".join(header) + "\n")
        np.savetxt(fh, data, delimiter=",", fmt="%.17g")
