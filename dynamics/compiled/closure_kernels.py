"""Compiled loop closure, velocity completion and fixed-step simulation of a constraint-embedded
closed chain (numba).

The numpy references (:mod:`dynamics.closed.embedding`, seed 000 sections 5-6):

* :func:`close_loops` is :func:`complete_configuration`: per loop, Newton's method on the
  dependent coordinates ``theta_d`` with the independent ones held,
  ``theta_d <- theta_d - G_d^-1 e`` (``e``: the loop's closure error, ``G_d``: the
  dependent block of its exact Jacobian, kept rows), with the same stopping rule (a closure
  error below ``tol``, then up to two polishing steps while they halve it);
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

The closure terms come from the kernels of :mod:`closed_kernels` (chord rows, attachment
frames and the packed :class:`closed_api.ClosedFlat` arrays), evaluated from the joint poses
alone (:func:`closure_at`: a resting tree, so no dynamics pass).  The small helpers are
inlined (``inline="always"``: 8% of a four-bar step, which is mostly call overhead of
kernels on 3 bodies).

Statuses: ``OK``; ``NOT_CLOSED`` (a loop without dependent coordinates is open, or a state
handed to the velocity completion is not closed), ``ILL_CONDITIONED`` (a dependent block's
condition estimate exceeds ``1 / RCOND_SWITCH``: the reference may switch the dependent set
or raise), ``NOT_DEFINITE`` (reduced mass matrix), ``NOT_CONVERGED`` (``max_iter`` Newton
iterations), ``DIVERGED`` (a Newton step above ``max_step`` or not finite).  On any of them the
caller runs the numpy reference, which gives the result or raises
:class:`dynamics.closed.closure.ClosureError` exactly as without the compiled path.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import closed_kernels as ck
from . import entry_kernels as ek
from . import simulate_kernels as sim
from .spatial_kernels import joint_pose

OK, NOT_CLOSED, ILL_CONDITIONED, NOT_DEFINITE, BAD_SHAPE = ck.OK, ck.NOT_CLOSED, ck.ILL_CONDITIONED, \
    ck.NOT_DEFINITE, ck.BAD_SHAPE
NOT_CONVERGED, DIVERGED = 5, 6
SEMI_IMPLICIT_EULER, RK4 = sim.SEMI_IMPLICIT_EULER, sim.RK4


@njit(cache=True, error_model="numpy")
def loop_views(ints, cint, cflt):
    """``(cv, lr, sc)``: the packed loop data (:func:`closed_kernels.closed_views`), the first
    constraint row of each loop (n_loops + 1,) and the scratch ``(e, G, gamma, Gd, Gdi, Xd, cd)``
    (views of ``cflt``'s scratch rows, shared with the forward dynamics)."""
    n = ints.shape[1] - 1
    cv = ck.closed_views(cint, cflt)
    n_rows, n_c, n_i, n_k, n_l = cint[8, 0], cint[8, 1], cint[8, 2], cint[8, 3], cint[8, 4]
    M, Y, Me, G, Xd, Gd, Gdi, C, zero, e, gamma, cd, rhs = ck.scratch_views(
        cflt[n_rows + 2 * n_c + 1:], ints[3, n], n_i, n_k, n_rows, cint[8, 5])
    return cv, cint[10, :n_l + 1], (e, G, gamma, Gd, Gdi, Xd, cd)


@njit(cache=True, error_model="numpy", inline="always")
def closure_at(m, w, cv, kin, q, e, G, gamma, i0, i1):
    """Closure error ``e`` of the constraint rows ``i0:i1`` and the Jacobian ``G = de/dq`` of
    their kept rows at q (nq,) from the joint poses alone: the twists and accelerations of the
    work array are zeroed, so ``gamma`` is not meaningful here."""
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, S, still, F = w[0], w[1], w[2], w[3], w[15]
    for k in range(parent.shape[0]):
        joint_pose(kind, q_off, ax, ax2, e1, e2, PR, Pp, k, q, F, R, p, S)
    still[:, :] = 0.0
    ck.world_kinematics(parent, R, p, still, still, grav, kin)
    ck.world_columns(kind, v_off, S_const, S, kin)
    ck.chord_rows(cv, kin, parent.shape[0], e, G, gamma, i0, i1)


@njit(cache=True, error_model="numpy", inline="always")
def largest(e, i0, i1):
    """``max |e[i0:i1]|``, or -1.0 when an entry is not finite."""
    err = 0.0
    for i in range(i0, i1):
        a = abs(e[i])
        if not a <= 1e300:
            return -1.0
        if a > err:
            err = a
    return err


@njit(cache=True, error_model="numpy", inline="always")
def newton_step(cv, r0, r1, i0, i1, e, G, Gd, Gdi, dv, max_step):
    """``dv[dep] = -G_d^-1 e_kept`` of the loop with kept rows ``r0:r1`` and constraint rows
    ``i0:i1`` (dv (nv,) zero elsewhere); returns a status."""
    rkept, dep, rcond = cv[2], cv[6], cv[14]
    r = r1 - r0
    for a in range(r):
        for b in range(r):
            Gd[a, b] = G[r0 + a, dep[r0 + b]]
    norm = ck.frobenius(Gd, r)
    if not ck.invert_general(Gd, r, Gdi) or not ck.frobenius(Gdi, r) * norm * rcond < 1.0:
        return ILL_CONDITIONED
    dv[:] = 0.0
    for i in range(i0, i1):
        k = rkept[i]
        if k >= 0:
            for a in range(r):
                dv[dep[r0 + a]] -= Gdi[a, k - r0] * e[i]
    for a in range(r):
        if not abs(dv[dep[r0 + a]]) <= max_step:
            return DIVERGED
    return OK


@njit(cache=True, error_model="numpy")
def close_loops(m, w, cv, lr, kin, sc, q, tol, max_iter, max_step, dv):
    """Close every loop by Newton's method on its dependent coordinates, q (nq,) in place
    (``dv`` (nv,) scratch); returns a status.  Loop by loop and with the stopping rule of
    :func:`dynamics.closed.embedding.complete_configuration`."""
    e, G, gamma, Gd, Gdi = sc[0], sc[1], sc[2], sc[3], sc[4]
    lk = cv[7]
    kind, q_off, v_off = m[1], m[2], m[3]
    for l in range(lk.shape[0] - 1):
        r0, r1, i0, i1 = lk[l], lk[l + 1], lr[l], lr[l + 1]
        polish, last = 0, np.inf
        for it in range(max_iter + 1):
            closure_at(m, w, cv, kin, q, e, G, gamma, i0, i1)
            err = largest(e, i0, i1)
            if err < 0.0:
                return DIVERGED
            if err <= tol:
                if polish == 2 or err == 0.0 or err > 0.5 * last or r1 == r0:
                    break
                polish += 1
            last = err
            if it == max_iter:
                return NOT_CONVERGED
            if r1 == r0:
                return NOT_CLOSED
            status = newton_step(cv, r0, r1, i0, i1, e, G, Gd, Gdi, dv, max_step)
            if status != OK:
                return status
            sim.integrate(kind, q_off, v_off, q, dv, 1.0, q)
    return OK


@njit(cache=True, error_model="numpy", inline="always")
def complete_velocity_at(cv, sc, v_i, v):
    """``v = X v_i`` (nv,) from the closure terms of every row in ``sc`` (:func:`closure_at` at a
    closed q); returns a status (``NOT_CLOSED`` beyond the closure check tolerance)."""
    rkind, rchord, rkept, ba, bb, ind, dep, lk, loop_of, rn, ru, frames, signs, tol, rcond = cv
    e, G, gamma, Gd, Gdi, Xd, cd = sc
    err = largest(e, 0, e.shape[0])
    if err > tol or err < 0.0:
        return NOT_CLOSED
    if not ck.dependent_maps(ind, dep, lk, G, gamma, rcond, Gd, Gdi, Xd, cd):
        return ILL_CONDITIONED
    v[:] = 0.0
    for j in range(ind.shape[0]):
        v[ind[j]] = v_i[j]
    ck.add_dependent(loop_of, lk, dep, Xd, v_i, ind.shape[0], v)
    return OK


@njit(cache=True, error_model="numpy")
def velocity_of(m, w, cv, kin, sc, q, v_i, v):
    """:func:`complete_velocity_at` at q (closure terms of every row evaluated first)."""
    closure_at(m, w, cv, kin, q, sc[0], sc[1], sc[2], 0, sc[0].shape[0])
    return complete_velocity_at(cv, sc, v_i, v)


@njit(cache=True, error_model="numpy")
def close_configuration(ints, blocks, extra, work, cint, cflt, kin, q, tol, max_iter, max_step):
    """Entry of :func:`close_loops` (q (nq,) in place); returns a status."""
    n = ints.shape[1] - 1
    if q.shape[0] != ints[2, n]:
        return BAD_SHAPE
    m, w = ek.unpack_model(ints, blocks, extra), ek.unpack_work(work, n)
    cv, lr, sc = loop_views(ints, cint, cflt)
    return close_loops(m, w, cv, lr, kin, sc, q, tol, max_iter, max_step, np.empty(ints[3, n]))


@njit(cache=True, error_model="numpy")
def velocity_completion(ints, blocks, extra, work, cint, cflt, kin, q, v_i, v):
    """Entry of :func:`complete_velocity_at`: v (nv,) from v_i (n_independent,) at a closed q (nq,)."""
    n = ints.shape[1] - 1
    if q.shape[0] != ints[2, n] or v.shape[0] != ints[3, n] or v_i.shape[0] != cint[8, 2]:
        return BAD_SHAPE
    m, w = ek.unpack_model(ints, blocks, extra), ek.unpack_work(work, n)
    cv, lr, sc = loop_views(ints, cint, cflt)
    return velocity_of(m, w, cv, kin, sc, q, v_i, v)


@njit(cache=True, error_model="numpy")
def state_rate(P, loops, ys, tau, damping, newton, buf, k):
    """``k = [q_dot, a_i]`` (nq + n_i,) at the stage state ``ys = [q, v_i]``: q closed (into
    ``qc``), v completed, forces ``tau - damping v``, the embedded forward dynamics; returns a
    status.  P: the packed arrays, loops: ``(m, w, cv, lr, sc)``, newton: ``(tol, max_iter,
    max_step)``, buf: ``(qc, v, forces, a, dv)`` scratch."""
    ints, blocks, extra, work, cint, cflt, kin = P
    m, w, cv, lr, sc = loops
    qc, v, forces, a, dv = buf
    nq, nv, ind = qc.shape[0], v.shape[0], cv[5]
    qc[:] = ys[:nq]
    status = close_loops(m, w, cv, lr, kin, sc, qc, newton[0], newton[1], newton[2], dv)
    if status == OK and lr.shape[0] == 2:       # one loop: its closure terms are those at qc
        status = complete_velocity_at(cv, sc, ys[nq:], v)
    elif status == OK:
        status = velocity_of(m, w, cv, kin, sc, qc, ys[nq:], v)
    if status != OK:
        return status
    for i in range(nv):
        forces[i] = tau[i] - damping[i] * v[i]
    status = ck.forward_dynamics_at(ints, blocks, extra, work, cint, cflt, kin, qc, v, forces, a)
    for i in range(nq):
        k[i] = v[i]
    for j in range(ind.shape[0]):
        k[nq + j] = a[ind[j]]
    return status


@njit(cache=True, error_model="numpy")
def closed_step(P, loops, y, tau, damping, newton, dt, method, yn, K, ys, buf):
    """One step ``y -> yn`` (``[q, v_i]``) of the integrator ``method``, the loops closed after
    it; K (4, ny), ys (ny,) scratch.  As :func:`dynamics.simulation.fixed_step.closed_chain_step`: RK4 on y;
    semi-implicit Euler ``v_i+ = v_i + h a_i``, ``q+ = q + h X(q) v_i+``."""
    m, w, cv, lr, sc = loops
    nq, ny = buf[0].shape[0], y.shape[0]
    if method == RK4:
        for stage in range(4):
            h = 0.0 if stage == 0 else (dt if stage == 3 else dt / 2)
            for i in range(ny):
                ys[i] = y[i] if stage == 0 else y[i] + h * K[stage - 1, i]
            status = state_rate(P, loops, ys, tau, damping, newton, buf, K[stage])
            if status != OK:
                return status
        for i in range(ny):
            yn[i] = y[i] + dt / 6 * (K[0, i] + 2 * K[1, i] + 2 * K[2, i] + K[3, i])
    else:
        status = state_rate(P, loops, y, tau, damping, newton, buf, K[0])
        if status != OK:
            return status
        for i in range(nq, ny):
            yn[i] = y[i] + dt * K[0, i]
        v = buf[1]
        status = velocity_of(m, w, cv, P[6], sc, y[:nq], yn[nq:], v)
        if status != OK:
            return status
        for i in range(nq):
            yn[i] = y[i] + dt * v[i]
    return close_loops(m, w, cv, lr, P[6], sc, yn[:nq], newton[0], newton[1], newton[2], buf[4])


@njit(cache=True, error_model="numpy")
def simulate_closed(ints, blocks, extra, work, cint, cflt, kin, y, tau, damping, tol, max_iter, max_step, dt, s0,
                    steps, stride, method, Y):
    """Fixed-step trajectory of ``y = [q, v_i]`` (nq + n_i,) from step s0 (y closed), in place.

    tau, damping (nv,): constant joint forces and viscous damping; tol, max_iter, max_step: the
    Newton closure's; every ``stride``-th state into ``Y[s // stride]``.  Returns (s, status):
    ``(steps, OK)``, or the step s that a kernel declined (y is the state before it).
    """
    n = ints.shape[1] - 1
    nq, nv = ints[2, n], ints[3, n]
    ny = y.shape[0]
    P = (ints, blocks, extra, work, cint, cflt, kin)
    cv, lr, sc = loop_views(ints, cint, cflt)
    loops = (ek.unpack_model(ints, blocks, extra), ek.unpack_work(work, n), cv, lr, sc)
    buf = (np.empty(nq), np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv))
    yn, ys, K = np.empty(ny), np.empty(ny), np.empty((4, ny))
    newton = (tol, max_iter, max_step)
    for s in range(s0, steps):
        status = closed_step(P, loops, y, tau, damping, newton, dt, method, yn, K, ys, buf)
        if status != OK:
            return s, status
        y[:] = yn
        if (s + 1) % stride == 0:
            Y[(s + 1) // stride] = y
    return steps, OK
