"""Closed chains in simulation: the full state ``y = [q, v]`` of a constraint-embedded model.

Generalized coordinate partitioning (Wehage & Haug, J. Mech. Des. 104, 1982): on every evaluation the
loops of q are closed by Newton's method on the dependent coordinates of a *split* (the independent
ones kept), v's dependent entries follow from its independent ones, and the embedded forward dynamics
(seed 000; :mod:`dynamics.embedding`) gives every acceleration.  The integrator carries all of ``q``
and ``v``; only the independent entries of the split matter, so a change of split converts nothing.

* The adaptive integrator (:func:`integrate_partitioned`) holds one split per segment: chosen at the
  segment's start by QR with column pivoting of the closure Jacobian
  (:func:`dynamics.closed.embedding.choose_partition`, rows by rank at that state, actuated joints
  independent where possible), kept while its dependent block's conditioning stays above
  :data:`dynamics.tolerances.PARTITION_RCOND_RATIO` of the best block's (an event of the integrator),
  then the state is made consistent with the old split and the integration restarts with a new one.
  Within a segment the right-hand side is smooth, so the integrator's error control holds.
* The fixed-step integrators make the state consistent after every step with the split chosen at that
  state (:func:`dynamics.closed.embedding.complete_state`).

At a singular configuration (the mechanism changes mobility) the run stops with a
:class:`dynamics.closed.closure.ClosureError` naming the loop, the time and the state.
"""

from __future__ import annotations

import logging

import numpy as np
from scipy import integrate

from .. import forward_dynamics
from ..closed.closure import ClosureError
from ..dispatch import current_backend
from ..closed.embedding import choose_partition, chord_coordinates, complete_state, partition_quality, terms_at
from ..joints import has_quaternion
from ..rates import QUATERNION_GAIN, configuration_rate
from ..spatial import quat_to_matrix_batch
from ..tolerances import PARTITION_RCOND_RATIO, SIMULATION_CLOSURE_TOL
from .result import SimulationResult, coordinate_columns, energies
from .stops import MAX_SEGMENTS, StopSet, TooManyStopEvents, constrained_acceleration

logger = logging.getLogger(__name__)


def stopped_at(em, exc: ClosureError, t: float, y) -> ClosureError:
    """The :class:`ClosureError` ``exc`` raised at time ``t`` (s), state ``y = [q, v]``, as the one-line
    error that stops a simulation: the loop, the time and the state by coordinate name."""
    tree = em.tree_model
    q = ", ".join(f"{n}={x:.6g}" for n, x in zip(coordinate_columns(tree), y[:em.nq]))
    v = ", ".join(f"{n}={x:.6g}" for n, x in zip(coordinate_columns(tree, rate=True), y[em.nq:]))
    return ClosureError(f"the simulation stops at t = {t:.9g} s: {exc.reason} (state q: {q}; v: {v})",
                        exc.loop, exc.joints, exc.dependent)


def state_rate(tree):
    """``q_dot(q, v)`` of one state, q (nq,), v (nv,), equal to ``configuration_rate(tree, q, v,
    stabilise=QUATERNION_GAIN)`` (:mod:`dynamics.rates`: ``q_dot = v``; ``quat_dot = 1/2 quat (x) [0, omega]
    + k (1 - |quat|^2) quat``; a free joint's ``p_dot = R(quat) v_lin``) with the index arrays of the joint
    groups gathered once: the right-hand side of a closed chain is otherwise dominated by the batched
    function's per-group work (1.1 ms of cassie's 1.6 ms).  Planar joints take the general function."""
    groups = tree.groups
    if "planar" in groups:
        return lambda q, v: configuration_rate(tree, q, v, stabilise=QUATERNION_GAIN)
    plain_q = [qc.ravel() for t, (_, qc, _) in groups.items() if not has_quaternion(t)]
    plain_v = [vc.ravel() for t, (_, _, vc) in groups.items() if not has_quaternion(t)]
    plain_q = np.concatenate(plain_q + [np.zeros(0, dtype=int)]).astype(int)
    plain_v = np.concatenate(plain_v + [np.zeros(0, dtype=int)]).astype(int)
    quat_q, omega_v = [np.zeros((0, 4), dtype=int)], [np.zeros((0, 3), dtype=int)]
    if "spherical" in groups:
        quat_q.append(groups["spherical"][1].reshape(-1, 4))
        omega_v.append(groups["spherical"][2].reshape(-1, 3))
    free = groups.get("free")
    if free is not None:
        quat_q.append(free[1][:, 3:7])
        omega_v.append(free[2][:, :3])
    quat_q, omega_v = np.concatenate(quat_q).astype(int), np.concatenate(omega_v).astype(int)
    nq = tree.nq

    def rate(q, v):
        qd = np.empty(nq)
        qd[plain_q] = v[plain_v]
        Q, w = q[quat_q], v[omega_v]
        w0, x, y, z = Q[:, 0], Q[:, 1], Q[:, 2], Q[:, 3]
        a, b, c = w[:, 0], w[:, 1], w[:, 2]
        k = QUATERNION_GAIN * (1.0 - np.sum(Q * Q, axis=1))
        qd[quat_q] = 0.5 * np.stack([-(x * a + y * b + z * c), w0 * a + y * c - z * b, w0 * b + z * a - x * c,
                                     w0 * c + x * b - y * a], axis=1) + k[:, None] * Q
        if free is not None:
            R = quat_to_matrix_batch(q[free[1][:, 3:7]])
            qd[free[1][:, :3]] = (R @ v[free[2][:, 3:6], None])[..., 0]
        return qd

    return rate


def consistent_state(em, q, v, tol):
    """:func:`dynamics.closed.embedding.complete_state` of q (nq,), v (nv,) at the closure tolerance ``tol`` (the
    split chosen at q: the default one unless it has degraded there), with the compiled kernels wherever that
    split is the default one (:func:`split_degraded` on the compiled closure Jacobians, then
    :func:`dynamics.compiled.closed_api.complete_state` with ``em.default_data``, which hands a state it
    declines to the reference); the reference itself under the numpy backend, for linear joint couplings
    (closed form) and where the default split has degraded."""
    if current_backend() != "numpy" and em.linear_couplings is None:
        from ..compiled.closed_api import complete_state as split_state     # numba is imported on first use

        default = {lp.node: (lp.rows, lp.dep, lp.ind) for lp in em.loops}
        if not split_degraded(em, q, default):
            return split_state(em, q, v, tol=tol, data=em.default_data)
    return complete_state(em, q, v, tol=tol)


def closure_error(em, q) -> float:
    """The largest closure error of the constraint rows of every loop at q (nq,), m or rad: from the compiled
    closure rows (:func:`dynamics.compiled.closed_api.loop_closures`), the numpy closure terms under the numpy
    backend."""
    if current_backend() == "numpy":
        return float(np.max(np.abs(terms_at(em, q).e), initial=0.0))
    from ..compiled.closed_api import loop_closures

    return float(np.max(np.abs(loop_closures(em, q)[0]), initial=0.0))


def closed_chain_rhs(em, torque, duration, progress, tol, splits=None, adjust=None):
    """``(rhs(t, y), close(y))`` of a constraint-embedded closed chain over ``y = [q, v]`` (nq + nv,) (see
    the module docstring): ``torque`` f(t, q, v) or None, ``progress(fraction)`` or None, ``tol`` the
    Newton tolerance of the closure; ``splits`` a dict loop node -> (rows, dep, ind) whose entry
    ``"current"`` holds the split in use (None: chosen at each state).  ``close(y, t)`` returns the
    consistent state of y (loops closed, ``G v = 0``); both raise the :func:`stopped_at` error at a
    singular configuration.  With a split held, both run the compiled kernels on that split
    (:func:`dynamics.compiled.closed_api.complete_state`, the forward dynamics with
    ``em.create_data(splits=...)``): Newton's method starts from the integrator's q, closed at the
    last evaluation up to one stage's increment, so it takes one or two iterations.  ``adjust(q, v, a) -> a`` (joint stops holding coordinates) corrects the
    accelerations of a consistent state."""
    from ..compiled.closed_api import complete_state as split_state     # numba is imported on first use

    tree = em.tree_model
    zero = np.zeros(em.nv)
    splits = {} if splits is None else splits
    q_rate = state_rate(tree)
    held = {}                      # the split in use and its work arrays (create_data(splits=...))

    def data_of(split):
        if split is None:
            return None
        if held.get("split") is not split:
            held["split"], held["data"] = split, em.create_data(splits=split)
        return held["data"]

    def close(y, t=0.0):
        split = splits.get("current")
        try:
            if split is None:
                q, v = consistent_state(em, y[:em.nq], y[em.nq:], tol)
            else:
                q, v = split_state(em, y[:em.nq], y[em.nq:], tol=tol, splits=split, data=data_of(split))
        except ClosureError as exc:
            raise stopped_at(em, exc, t, y) from exc
        return np.concatenate([q, v])

    def rhs(t, y):
        yc = close(y, t)
        q, v = yc[:em.nq], yc[em.nq:]
        tau = zero if torque is None else torque(t, q, v)
        try:
            a = forward_dynamics(em, q, v, tau, data=data_of(splits.get("current")))
            if adjust is not None:
                a = adjust(q, v, a)
        except ClosureError as exc:
            raise stopped_at(em, exc, t, yc) from exc
        if progress is not None:
            progress(min(t / duration, 1.0))
        return np.concatenate([q_rate(q, v), a])

    return rhs, close


#: scipy's solvers that take a Jacobian of the right-hand side (implicit methods)
IMPLICIT_METHODS = ("Radau", "BDF", "LSODA")


def jacobian_option(rhs, method) -> dict:
    """``{"jac": jac}`` for the implicit ``method`` (:data:`IMPLICIT_METHODS`), else ``{}``: ``jac(t, y)``
    (n, n) the forward differences of ``rhs`` with the fixed steps ``sqrt(eps) max(1, |y_j|)``.  scipy's own
    estimate (``num_jac``) grows a column's step ten-fold at every Jacobian while the right-hand side does not
    change with that entry, and a closed chain's does not change with the dependent entries of y (they are
    closed from the independent ones): grown to ~1 rad, such a step sends Newton's closure onto another
    assembly branch or out of its reach (Radau stopped the five-bar of ``tests/robots/test_menagerie.py`` at
    0.35 s and toddlerbot's neck four-bar at 0.0126 s with a perturbation of 1.7 rad)."""
    if method not in IMPLICIT_METHODS:
        return {}
    root_eps = np.sqrt(np.finfo(float).eps)

    def jac(t, y):
        f0 = rhs(t, y)
        h = root_eps * np.maximum(1.0, np.abs(y))
        J = np.empty((f0.size, y.size))
        for j in range(y.size):
            yj = y.copy()
            yj[j] += h[j]
            J[:, j] = (rhs(t, yj) - f0) / h[j]
        return J

    return {"jac": jac}


def integrate_partitioned(em, torque, duration, t_eval, method, rtol, atol, progress, tol):
    """Adaptive integration of a closed chain by segments of one split each (see the module docstring).

    t_eval (n,) increasing sample times in [0, duration] (s); method the name of a ``scipy.integrate``
    ODE solver class (``DOP853``, ``RK45``, ...).  Returns ``(close, run)``; ``run(y0)`` integrates from
    ``y0 = [q0, v0]`` (consistent) and returns ``(Y (n, nq + nv) consistent samples, segments)``.  The
    split is checked after every accepted step (:func:`dynamics.closed.embedding.partition_quality`);
    a segment ends at the step where it degraded, and the next starts from that step's end point (a
    step of the integrator, not an interpolated state).
    """
    splits = {}
    rhs, close = closed_chain_rhs(em, torque, duration, progress, tol, splits)
    solver_class = getattr(integrate, method)

    def run(y0):
        Y, t, y, k, segments = np.empty((len(t_eval), y0.size)), 0.0, y0, 0, 0
        while k < len(t_eval):
            _choose_split(em, splits, t, y)
            segments += 1
            while k < len(t_eval) and t_eval[k] <= t:
                Y[k], k = y, k + 1
            solver = solver_class(rhs, t, y, duration, rtol=rtol, atol=atol, **jacobian_option(rhs, method))
            while k < len(t_eval):
                if solver.step() is not None or solver.status == "failed":
                    raise RuntimeError(f"integration failed at t = {solver.t:.9g} s: {solver.status}")
                dense = solver.dense_output()
                while k < len(t_eval) and t_eval[k] <= solver.t:
                    Y[k], k = close(dense(t_eval[k]), t_eval[k]), k + 1
                t, y = solver.t, close(solver.y, solver.t)
                if k < len(t_eval) and splits["current"] is not None and split_degraded(em, y[:em.nq], splits["current"]):
                    break
        return Y, segments

    return close, run


def split_quality(em, q, split) -> float:
    """:func:`dynamics.closed.embedding.partition_quality` of ``split`` at q (nq,), the loops' closure
    Jacobians from the compiled kernels (:func:`dynamics.compiled.closed_api.loop_jacobians`: 10 ms of numpy
    closure terms per accepted step on cassie otherwise)."""
    from ..compiled.closed_api import loop_jacobians

    return partition_quality(em, q, split, loop_jacobians(em, q))


def split_degraded(em, q, split) -> bool:
    """``split_quality(em, q, split) < PARTITION_RCOND_RATIO``, the best split computed only where it can
    decide: a reciprocal condition number is at most 1, so a loop whose own dependent block keeps
    ``rcond >= PARTITION_RCOND_RATIO`` has a quality of at least that against any block."""
    from ..compiled.closed_api import loop_jacobians

    jac = loop_jacobians(em, q)
    for lp in em.loops:
        rows, dep = split[lp.node][0], split[lp.node][1]
        if len(dep) == 0:
            continue
        sv = np.linalg.svd(jac[lp.node][np.ix_(rows, dep)], compute_uv=False)
        if not (np.all(np.isfinite(sv)) and sv[-1] >= PARTITION_RCOND_RATIO * sv[0]):
            return partition_quality(em, q, split, jac) < PARTITION_RCOND_RATIO
    return False


def _choose_split(em, splits, t, y) -> None:
    """``splits["current"]``: the split chosen at the state y (nq + nv,) at time t (s), or None for linear
    joint couplings, whose default split never degrades (:attr:`EmbeddedModel.linear_couplings`: ``X``
    is constant; :func:`dynamics.closed.embedding.complete_state` closes them in closed form)."""
    if em.linear_couplings is not None:
        splits["current"] = None
        return
    try:
        splits["current"] = choose_partition(em, y[:em.nq])
    except ClosureError as exc:
        raise stopped_at(em, exc, t, y) from exc
    logger.debug("t = %.9g s: dependent coordinates %s", t,
                 [em.coordinate_names[i] for lp in em.loops for i in lp.v_idx[splits["current"][lp.node][1]]])


def integrate_partitioned_with_stops(em, torque, duration, t_eval, method, rtol, atol, progress, tol, limits):
    """:func:`integrate_partitioned` with joint stops (:mod:`.stops`: inelastic impacts and held
    coordinates through the constraints): segments end at a stop reached, a held stop released or the
    split degraded (events of ``solve_ivp``).  ``limits`` as :func:`.stops.simulate_tree_with_stops`.
    Returns ``(close, run)``; ``run(y0)`` gives ``(t (T,), Y (T, nq + nv), segments, contacts)``."""
    nq, zero, splits = em.nq, np.zeros(em.nv), {}
    stops = StopSet(*limits)

    def adjust(q, v, a):
        return constrained_acceleration(em, q, a, stops.held_columns()) if stops.held else a

    rhs, close = closed_chain_rhs(em, torque, duration, progress, tol, splits, adjust)

    def a_free(t, q, v):
        yc = close(np.concatenate([q, v]), t)
        q, v = yc[:nq], yc[nq:]
        return forward_dynamics(em, q, v, zero if torque is None else torque(t, q, v))

    def degraded(t, y):
        return split_quality(em, close(y, t)[:nq], splits["current"]) - PARTITION_RCOND_RATIO
    degraded.terminal, degraded.direction = True, -1

    def close_qv(q, v):
        yc = close(np.concatenate([q, v]))
        return yc[:nq], yc[nq:]

    def run(y0):
        y, t, released, hit, segments, ts, ys = np.array(y0, dtype=float), 0.0, set(), None, 0, [], []
        for _ in range(MAX_SEGMENTS):
            _choose_split(em, splits, t, y)
            segments += 1
            q, v = y[:nq].copy(), y[nq:].copy()
            stops.settle(em, q, v, lambda qq, vv, t=t: a_free(t, qq, vv), released, hit, close_qv)
            y = np.concatenate([q, v])
            pending = t_eval[(t_eval > t) if ts else (t_eval >= t)]
            if not len(pending):
                break
            events, meaning = stops.events(em, a_free)
            sol = integrate.solve_ivp(rhs, (t, duration), y, method=method, t_eval=pending, rtol=rtol, atol=atol,
                                      events=events if splits["current"] is None else [*events, degraded],
                                      **jacobian_option(rhs, method))
            if not sol.success:
                raise RuntimeError(f"integration failed: {sol.message}")
            ts.extend(np.atleast_1d(sol.t))
            ys.extend(close(yi, ti) for ti, yi in zip(np.atleast_1d(sol.t), np.asarray(sol.y).reshape(len(y), -1).T))
            if sol.status != 1:
                break
            k = next(i for i, te in enumerate(sol.t_events) if len(te))
            t, y = float(sol.t_events[k][0]), close(np.array(sol.y_events[k][0]), float(sol.t_events[k][0]))
            row, is_release = meaning[k] if k < len(meaning) else (None, False)
            released, hit = ({row}, None) if is_release else (set(), row)
        else:
            raise TooManyStopEvents(f"more than {MAX_SEGMENTS} joint stop events by t = {t:.6g} s (joints "
                                    "chattering at their limits)")
        return np.array(ts), np.array(ys), segments, stops.contacts

    return close, run


def closed_chain_result(em, t, q, v, status: str, closure_tol) -> SimulationResult:
    """The result of a closed-chain run from its samples ``q`` (n, nq), ``v`` (n, nv): every sample made
    consistent as :func:`dynamics.closed.embedding.complete_state` does (:func:`consistent_state`: closed to
    ``closure_tol``, ``G v = 0``), the closure error of its loops and joint couplings reported
    (:func:`closure_error`), energy and the loop-closing joints' columns."""
    tree = em.tree_model
    tol = SIMULATION_CLOSURE_TOL if closure_tol is None else closure_tol
    states = [consistent_state(em, qi, vi, tol) for qi, vi in zip(q, v)]
    qs = np.array([s[0] for s in states]).reshape(len(states), em.nq)
    vs = np.array([s[1] for s in states]).reshape(len(states), em.nv)
    energy, kinetic = energies(tree, qs, vs)
    closure = np.array([closure_error(em, qi) for qi in qs])
    result = SimulationResult(t=np.asarray(t), q=qs, v=vs, energy=energy, columns=coordinate_columns(tree),
                              velocity_columns=coordinate_columns(tree, rate=True), status=status, closure=closure,
                              kinetic=kinetic)
    names, values = chord_columns(em, qs, vs)
    return result.with_extra(names, values)


def chord_columns(em, qs, vs) -> tuple[list[str], np.ndarray]:
    """Coordinates of the loop-closing joints along a trajectory (``name`` or ``name[i]``): qs (n, nq), vs (n, nv);
    the world kinematics of each sample from the compiled kernels (:func:`dynamics.compiled.closed_api.world_kinematics`),
    the numpy ones under the numpy backend."""
    names: list[str] = []
    rows = []
    if not em.chords:
        return names, np.zeros((len(qs), 0))
    compiled = current_backend() != "numpy"
    if compiled:
        from ..compiled.closed_api import world_kinematics     # numba is imported on first use
    for q, v in zip(qs, vs):
        coords = chord_coordinates(em, q, v, kin=world_kinematics(em, q, v) if compiled else None)
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
