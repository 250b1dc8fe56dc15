"""Compiled loop closure, velocity completion and fixed-step simulation of a constraint-embedded
closed chain (numba).

The numpy references (:mod:`dynamics.closed.embedding`, seed 000 sections 5-6):

* :func:`close_loops` is :func:`complete_configuration`: per loop, Newton's method on the
  dependent coordinates ``theta_d`` with the independent ones held,
  ``theta_d <- theta_d - G_d^-1 e`` (``e``: the loop's closure error, ``G_d``: the
  dependent block of its exact Jacobian, kept rows), with the same stopping rule (a closure
  error below ``tol``, then up to two polishing steps while they halve it, a polishing step that
  moves no coordinate by more than :data:`ROUNDING_STEP` not taken);
* :func:`complete_velocity_at` is :func:`complete_velocity`: ``theta_dot_S = X theta_dot_i``,
  ``X = [I; -G_d^-1 G_i]`` (:func:`closed_kernels.dependent_maps`);
* :func:`simulate_closed` is the fixed-step loop of :mod:`dynamics.simulation.fixed_step` on the state
  ``y = [q, v_i]``: RK4 whose every stage closes q, completes v and evaluates the embedded
  forward dynamics (:func:`closed_kernels.forward_dynamics_at`), or semi-implicit Euler,
  and the loops closed after every step.  It runs on trees whose joints all have
  ``q_dot = v`` (revolute, prismatic, continuous, cylindrical, universal, fixed): the
  numpy loop adds ``h q_dot`` to q coordinate-wise, which only for those is the
  configuration update of the joint groups (the caller sends the other models to the
  numpy loop).

The closure terms come from the kernels of :mod:`closure_terms` over the packed arrays
``P = (ints, floats, work, cint, cflt, cwork)`` (:mod:`closed_kernels`,
:mod:`closed_layout`), evaluated from the joint poses alone (:func:`closure_at`: a resting tree,
so no dynamics pass).  The small helpers are inlined (``inline="always"``: 8% of a four-bar step,
which is mostly call overhead of kernels on 3 bodies).  Nothing here allocates: every scratch
array is a field of the closed chain's ``ClosedData``.

Statuses: ``OK``; ``NOT_CLOSED`` (a loop without dependent coordinates is open, a state
handed to the velocity completion is not closed, or a nearly dependent row dropped from a rounded
loop stays open beyond its slack ``row_slack`` once the kept rows close), ``ILL_CONDITIONED`` (a dependent block's
condition estimate exceeds ``1 / RCOND_SWITCH``: the reference may switch the dependent set
or raise), ``NOT_DEFINITE`` (reduced mass matrix), ``NOT_CONVERGED`` (``max_iter`` Newton
iterations), ``DIVERGED`` (a Newton step above ``max_step`` or not finite).  On any of them the
caller runs the numpy reference, which gives the result or raises
:class:`dynamics.closed.closure.ClosureError` exactly as without the compiled path.
"""

from __future__ import annotations

import numpy as np

from . import closed_kernels as ck
from . import entry_kernels as ek
from . import simulate_kernels as sim
from .closure_terms import chord_rows, world_columns, world_kinematics
from .fields import loop_fields, model_fields, scratch_fields, work_fields
from .jit import inline, kernel
from .spatial_kernels import joint_pose
from ..tolerances import NEWTON_ROUNDING_STEP

OK, NOT_CLOSED, ILL_CONDITIONED, NOT_DEFINITE, BAD_SHAPE = ck.OK, ck.NOT_CLOSED, ck.ILL_CONDITIONED, \
    ck.NOT_DEFINITE, ck.BAD_SHAPE
NOT_CONVERGED, DIVERGED = 5, 6
#: why a kernel declined, by status
DECLINED = {**ck.DECLINED, NOT_CONVERGED: "Newton's method did not converge",
            DIVERGED: "a Newton step was too large or not finite"}
SEMI_IMPLICIT_EULER, RK4 = sim.SEMI_IMPLICIT_EULER, sim.RK4
#: the rounding floor that ends a loop's Newton iteration (:data:`dynamics.tolerances.NEWTON_ROUNDING_STEP`)
ROUNDING_STEP = NEWTON_ROUNDING_STEP


@inline
def closure_at(P, q, i0, i1):
    """Closure error ``e`` of the constraint rows ``i0:i1`` and the Jacobian ``G = de/dq`` of
    their kept rows at q (nq,), into the scratch, from the joint poses alone (a resting tree:
    ``gamma`` is not meaningful here)."""
    ints, floats, work, cint, cflt, cwork = P
    m, w = model_fields(ints, floats), work_fields(ints, work)
    for k in range(m.parent.shape[0]):
        joint_pose(m, w, k, q)
    world_kinematics(P, True)
    s = scratch_fields(cint, cwork)
    world_columns(P)
    chord_rows(P, q, s.zero, i0, i1, s.G, s.gamma, False)


@inline
def largest(e, slack, i0, i1):
    """``max |e[i]|`` over the rows ``i0:i1`` that must close (``slack[i] == 0``: all but the nearly
    dependent rows dropped from a rounded loop, ``L.row_slack``), or -1.0 when an entry is not finite."""
    err = 0.0
    for i in range(i0, i1):
        a = abs(e[i])
        if not a <= 1e300:
            return -1.0
        if a > err and slack[i] == 0.0:
            err = a
    return err


@inline
def beyond_slack(e, slack, i0, i1):
    """True when a row of ``i0:i1`` with a slack (a nearly dependent row dropped from a rounded loop) is
    open by more than it: the file's rounding does not explain it."""
    for i in range(i0, i1):
        if slack[i] > 0.0 and abs(e[i]) > slack[i]:
            return True
    return False


@inline
def newton_step(L, s, r0, r1, i0, i1, max_step):
    """``dv[dependent] = -G_d^-1 e_kept`` of the loop with kept rows ``r0:r1`` and constraint rows
    ``i0:i1`` (the loop's entries of ``dv`` (nv,), zero before); returns a status."""
    if not ck.invert_dependent_block(L, s, r0, r1 - r0):
        return ILL_CONDITIONED
    dv, dep = s.dv, L.dependent
    for i in range(i0, i1):
        k = L.row_kept[i]
        if k >= 0:
            for a in range(r1 - r0):
                dv[dep[r0 + a]] -= s.G_d_inv[a, k - r0] * s.e[i]
    for a in range(r1 - r0):
        if not abs(dv[dep[r0 + a]]) <= max_step:
            return DIVERGED
    return OK


@inline
def rounding_step(dv, dep, r0, r1):
    """True when the Newton step ``dv`` (nv,) moves none of the dependent coordinates ``dep[r0:r1]`` by more
    than :data:`ROUNDING_STEP`."""
    for a in range(r0, r1):
        if abs(dv[dep[a]]) > ROUNDING_STEP:
            return False
    return True


@kernel(refcount=False, error_model="numpy")
def close_loops(P, q, tol, max_iter, max_step):
    """Close every loop by Newton's method on its dependent coordinates, q (nq,) in place; returns a
    status.  Each loop with the stopping rule of :func:`dynamics.closed.embedding.complete_configuration`;
    the loops iterate together (one evaluation of every row per iteration): a loop's closure depends on
    the coordinates of its own compound node alone (seed 000 Lemma 6.3, :mod:`dynamics.closed.embedding`),
    so its iterates are those of the loop-by-loop reference.  On ``OK`` the scratch holds the closure
    terms of every row at the returned q (:func:`complete_velocity_at` may follow): every iteration ends
    with an evaluation, or with a step not taken; ``loop_newton[l, 2]`` is 2.0 where loop l ended on a rule that
    ends a new call from the returned q at its first evaluation, with q unchanged (a step below
    :data:`ROUNDING_STEP`, a zero error, no dependent coordinates; :func:`repeats_as_closed`), 1.0 where it
    ended on another rule."""
    ints, floats, work, cint, cflt, cwork = P
    m, L, s = model_fields(ints, floats), loop_fields(cint, cflt), scratch_fields(cint, cwork)
    lk, lr, state = L.loop_kept_start, L.loop_row_start, s.loop_newton
    n_loops = lk.shape[0] - 1
    for l in range(n_loops):
        state[l, 0], state[l, 1], state[l, 2] = 0.0, np.inf, 0.0
    for it in range(max_iter + 1):
        closure_at(P, q, 0, lr[n_loops])
        s.dv[:] = 0.0
        moving = False
        for l in range(n_loops):
            if state[l, 2] != 0.0:
                continue
            r0, r1, i0, i1 = lk[l], lk[l + 1], lr[l], lr[l + 1]
            err = largest(s.e, L.row_slack, i0, i1)
            if err < 0.0:
                return DIVERGED
            if err <= tol:
                if state[l, 0] == 2.0 or err == 0.0 or err > 0.5 * state[l, 1] or r1 == r0:
                    if beyond_slack(s.e, L.row_slack, i0, i1):
                        return NOT_CLOSED
                    state[l, 2] = 2.0 if err == 0.0 or r1 == r0 else 1.0
                    continue
                state[l, 0] += 1.0
            state[l, 1] = err
            if it == max_iter:
                return NOT_CONVERGED
            if r1 == r0:
                return NOT_CLOSED
            status = newton_step(L, s, r0, r1, i0, i1, max_step)
            if status != OK:
                return status
            if state[l, 0] > 0.0 and rounding_step(s.dv, L.dependent, r0, r1):
                if beyond_slack(s.e, L.row_slack, i0, i1):
                    return NOT_CLOSED
                for a in range(r0, r1):                # not taken: the loop's q stays where e was evaluated
                    s.dv[L.dependent[a]] = 0.0
                state[l, 2] = 2.0
                continue
            moving = True
        if not moving:
            return OK
        sim.integrate(m.kind, m.q_offset, m.v_offset, q, s.dv, 1.0, q)
    return OK


@inline
def repeats_as_closed(s, n_loops):
    """True when :func:`close_loops` called again at the q it returned would return that q unchanged and the same
    closure terms after one evaluation (every loop ended on such a rule, ``loop_newton[l, 2] == 2.0``): the call
    can be skipped."""
    for l in range(n_loops):
        if s.loop_newton[l, 2] != 2.0:
            return False
    return True


@kernel(refcount=False, error_model="numpy")
def complete_velocity_at(P, v_i, v):
    """``v = X v_i`` (nv,) from the closure terms of every row in the scratch (:func:`closure_at` at a
    closed q); returns a status (``NOT_CLOSED`` beyond the closure check tolerance)."""
    ints, floats, work, cint, cflt, cwork = P
    L, s = loop_fields(cint, cflt), scratch_fields(cint, cwork)
    err = largest(s.e, L.row_slack, 0, s.e.shape[0])
    if err > L.closure_check_tol or err < 0.0 or beyond_slack(s.e, L.row_slack, 0, s.e.shape[0]):
        return NOT_CLOSED
    if not ck.dependent_maps(P):
        return ILL_CONDITIONED
    v[:] = 0.0
    for j in range(L.independent.shape[0]):
        v[L.independent[j]] = v_i[j]
    ck.add_dependent(L, s, v_i, v)
    return OK


@kernel(refcount=False, error_model="numpy")
def velocity_of(P, q, v_i, v):
    """:func:`complete_velocity_at` at q (closure terms of every row evaluated first)."""
    ints, floats, work, cint, cflt, cwork = P
    closure_at(P, q, 0, loop_fields(cint, cflt).row_kind.shape[0])
    return complete_velocity_at(P, v_i, v)


@kernel(refcount=False, error_model="numpy")
def closure_rows(ints, floats, work, cint, cflt, cwork, q, e, G_all):
    """Closure error ``e`` (n_rows,) and Jacobian ``G_all`` (n_rows, nv) of every constraint row at q (nq,),
    loop after loop (rows ``loop_row_start[l]:loop_row_start[l + 1]`` are those of loop l in the order of
    its ``all_rows``); returns a status.  For the choice of a split at a state (the reference's
    :func:`dynamics.closed.embedding.partition_quality` takes them)."""
    P = (ints, floats, work, cint, cflt, cwork)
    L, s = loop_fields(cint, cflt), scratch_fields(cint, cwork)
    n = L.row_kind.shape[0]
    model_nq, model_nv, float_size, work_size = ek.sizes(ints)
    if not packed_fit(P, q.shape[0]) or e.shape[0] != n or G_all.shape[0] != n or G_all.shape[1] != model_nv:
        return BAD_SHAPE
    closure_at(P, q, 0, 0)
    chord_rows(P, q, s.zero, 0, n, G_all, s.gamma_all, True)
    for i in range(n):
        e[i] = s.e[i]
    return OK


@kernel(refcount=False, error_model="numpy")
def world_motion(ints, floats, work, cint, cflt, cwork, q, v):
    """World pose, twist and bias accelerations of every body (the scratch's ``world_R``, ``world_p``,
    ``world_w``, ``world_v``, ``world_wd``, ``world_ad``) and the world joint columns (``column_w``,
    ``column_v``, ``column_p``) at q (nq,), v (nv,): the Newton-Euler pass with zero joint accelerations, then
    :func:`closure_terms.world_kinematics` and ``world_columns`` (the kinematics of
    :func:`dynamics.world_kinematics.kinematics`); returns a status."""
    P = (ints, floats, work, cint, cflt, cwork)
    s = scratch_fields(cint, cwork)
    model_nq, model_nv, float_size, work_size = ek.sizes(ints)
    if not packed_fit(P, q.shape[0]) or v.shape[0] != model_nv:
        return BAD_SHAPE
    if not ek.rnea(ints, floats, work, q, v, s.zero, s.no_forces, s.C):
        return BAD_SHAPE
    world_kinematics(P, False)
    world_columns(P)
    return OK


@inline
def packed_fit(P, nq):
    """True when the packed arrays ``P`` fit each other (:func:`closed_kernels.fits`) and the model has nq
    coordinates."""
    ints, floats, work, cint, cflt, cwork = P
    model_nq, model_nv, float_size, work_size = ek.sizes(ints)
    return ck.fits(P) and model_nq == nq


@kernel(refcount=False, error_model="numpy")
def close_configuration(ints, floats, work, cint, cflt, cwork, q, tol, max_iter, max_step):
    """Entry of :func:`close_loops` (q (nq,) in place); returns a status."""
    P = (ints, floats, work, cint, cflt, cwork)
    if not packed_fit(P, q.shape[0]):
        return BAD_SHAPE
    return close_loops(P, q, tol, max_iter, max_step)


@kernel(refcount=False, error_model="numpy")
def velocity_completion(ints, floats, work, cint, cflt, cwork, q, v_i, v):
    """Entry of :func:`complete_velocity_at`: v (nv,) from v_i (n_independent,) at a closed q (nq,)."""
    P = (ints, floats, work, cint, cflt, cwork)
    model_nq, model_nv, float_size, work_size = ek.sizes(ints)
    if not packed_fit(P, q.shape[0]) or v.shape[0] != model_nv or v_i.shape[0] != loop_fields(cint, cflt).n_independent:
        return BAD_SHAPE
    return velocity_of(P, q, v_i, v)


@kernel(refcount=False, error_model="numpy")
def state_completion(ints, floats, work, cint, cflt, cwork, q, v_i, v, tol, max_iter, max_step):
    """:func:`close_loops` (q (nq,) in place) then ``v = X v_i`` (nv,) at the closed q from the closure terms
    Newton's method left (v_i (n_independent,)); returns a status."""
    P = (ints, floats, work, cint, cflt, cwork)
    model_nq, model_nv, float_size, work_size = ek.sizes(ints)
    if not packed_fit(P, q.shape[0]) or v.shape[0] != model_nv or v_i.shape[0] != loop_fields(cint, cflt).n_independent:
        return BAD_SHAPE
    status = close_loops(P, q, tol, max_iter, max_step)
    if status != OK:
        return status
    return complete_velocity_at(P, v_i, v)


@kernel(refcount=False, error_model="numpy")
def state_rate(P, ys, tau, damping, tol, max_iter, max_step, rate, closed):
    """``rate = [q_dot, a_i]`` (nq + n_i,) at the stage state ``ys = [q, v_i]``: q closed (into
    ``q_closed``), v completed (``v_full``), forces ``tau - damping v``, the embedded forward dynamics
    (``a_full``); returns a status.  tol, max_iter, max_step: the Newton closure's; closed: the scratch holds
    the closure terms of :func:`close_loops` at this q, which :func:`repeats_as_closed` (the closing skipped:
    it would change nothing)."""
    ints, floats, work, cint, cflt, cwork = P
    L, s = loop_fields(cint, cflt), scratch_fields(cint, cwork)
    qc, v, ind = s.q_closed, s.v_full, L.independent
    nq, nv = qc.shape[0], v.shape[0]
    for i in range(nq):
        qc[i] = ys[i]
    status = OK if closed else close_loops(P, qc, tol, max_iter, max_step)
    if status == OK:                               # the closure terms in the scratch are those at qc
        status = complete_velocity_at(P, ys[nq:], v)
    if status != OK:
        return status
    for i in range(nv):
        s.forces[i] = tau[i] - damping[i] * v[i]
    status = ck.forward_dynamics_at(P, qc, v, s.forces, s.a_full)
    for i in range(nq):
        rate[i] = v[i]
    for j in range(ind.shape[0]):
        rate[nq + j] = s.a_full[ind[j]]
    return status


@kernel(refcount=False, error_model="numpy")
def closed_step(P, y, tau, damping, tol, max_iter, max_step, dt, method, closed):
    """One step ``y -> y_next`` (``[q, v_i]``, the scratch's ``y_next``) of the integrator ``method``, the
    loops closed after it (closed: the scratch holds the closing of y, :func:`state_rate`).  As :func:`dynamics.simulation.fixed_step.closed_chain_step`: RK4 on y;
    semi-implicit Euler ``v_i+ = v_i + h a_i``, ``q+ = q + h X(q) v_i+``."""
    ints, floats, work, cint, cflt, cwork = P
    s = scratch_fields(cint, cwork)
    K, ys, yn = s.K, s.y_stage, s.y_next
    nq, ny = s.q_closed.shape[0], y.shape[0]
    if method == RK4:
        for stage in range(4):
            h = 0.0 if stage == 0 else (dt if stage == 3 else dt / 2)
            for i in range(ny):
                ys[i] = y[i] if stage == 0 else y[i] + h * K[stage - 1, i]
            status = state_rate(P, ys, tau, damping, tol, max_iter, max_step, K[stage], closed and stage == 0)
            if status != OK:
                return status
        for i in range(ny):
            yn[i] = y[i] + dt / 6 * (K[0, i] + 2 * K[1, i] + 2 * K[2, i] + K[3, i])
    else:
        status = state_rate(P, y, tau, damping, tol, max_iter, max_step, K[0], closed)
        if status != OK:
            return status
        for i in range(nq, ny):
            yn[i] = y[i] + dt * K[0, i]
        status = velocity_of(P, y[:nq], yn[nq:], s.v_full)
        if status != OK:
            return status
        for i in range(nq):
            yn[i] = y[i] + dt * s.v_full[i]
    return close_loops(P, yn[:nq], tol, max_iter, max_step)


@kernel(refcount=False, error_model="numpy")
def simulate_closed(ints, floats, work, cint, cflt, cwork, y, tau, damping, tol, max_iter, max_step, dt, s0,
                    steps, stride, method, Y):
    """Fixed-step trajectory of ``y = [q, v_i]`` (nq + n_i,) from step s0 (y closed), in place.

    tau, damping (nv,): constant joint forces and viscous damping; tol, max_iter, max_step: the
    Newton closure's; every ``stride``-th state into ``Y[s // stride]``.  Returns (s, status):
    ``(steps, OK)``, or the step s that a kernel declined (y is the state before it).
    """
    P = (ints, floats, work, cint, cflt, cwork)
    s = scratch_fields(cint, cwork)
    if not packed_fit(P, s.q_closed.shape[0]) or y.shape[0] != s.y_next.shape[0]:
        return s0, BAD_SHAPE
    closed = False                                 # the scratch holds the closing of y (after a step)
    for step in range(s0, steps):
        status = closed_step(P, y, tau, damping, tol, max_iter, max_step, dt, method, closed)
        if status != OK:
            return step, status
        closed = repeats_as_closed(s, loop_fields(cint, cflt).loop_kept_start.shape[0] - 1)
        for i in range(y.shape[0]):
            y[i] = s.y_next[i]
        if (step + 1) % stride == 0:
            for i in range(y.shape[0]):
                Y[(step + 1) // stride, i] = y[i]
    return steps, OK
