"""Compiled forward dynamics of a constraint-embedded closed chain (numba, one configuration).

The numpy reference is :func:`dynamics.closed.embedding.forward_dynamics` (the
articulated-body algorithm on the embedded tree, seed 000 sections 5-6, seed 001
Algorithm 6.1).  Here the same accelerations come from the null-space projection of
the tree equations of motion onto the loops' constraint manifold (seed 000 section 6:
``theta_dot_S = X theta_dot_i``, ``M_e = X^* M X``, ``C_e = X^* (C + M Xdot theta_dot_i)``,
``T_e = X^* T``), evaluated over flat arrays:

1. tree ``M`` (composite inertia, seed 001 Algorithm 4.2) and ``C`` (Newton-Euler, seed 001
   Algorithm 3.1) by the compiled tree kernels (``entry_kernels.mass_matrix_and_bias``); the
   Newton-Euler pass leaves the body poses, twists and bias accelerations in the work arrays;
2. world kinematics of every body and the closure terms of every chord row -- error ``e``,
   Jacobian ``G = de/dq`` and ``gamma = Gdot v`` -- with the formulas of :mod:`dynamics.closed.closure`;
3. per loop the dependent block ``G_d`` inverted (Gauss-Jordan, partial pivoting):
   ``X_d = -G_d^-1 G_i`` and ``c_d = -G_d^-1 gamma`` (:mod:`dynamics.closed.embedding`);
4. ``M_e a_i = X^* (tau - C - M c)`` by Cholesky, and ``a = X a_i + c``.

Why the null-space projection rather than the compound-node sweep: with few coordinates per
loop (3-6) the dense projection costs less than the sweep's per-node bookkeeping (aggregated
weights, ``H_e = X^* H_a``), needs no second tree layout and is a direct solve.  Its cost
grows as ``nv^2 + nv n_i r + n_i^3`` (r constraints per loop) against O(N) for the sweep;
measured (``benchmarks/closed_chains.py``, README), it is about 2x Pinocchio's
``constraintDynamics`` on one loop and 0.23x on 32.

A state the kernel cannot evaluate as the reference would -- a loop not closed, or a
dependent block whose Frobenius-norm condition estimate exceeds ``1 / RCOND_SWITCH`` (the
reference then switches to other dependent coordinates or raises), or a reduced mass matrix
that is not positive definite -- returns a status instead of numbers; the caller
(:mod:`dynamics.compiled.closed_api`) then runs the numpy reference, which raises
:class:`dynamics.closed.closure.ClosureError` or switches coordinates.

Packed arrays of one embedded model (built by :class:`dynamics.compiled.closed_api.ClosedFlat`):

``cint`` (11, W) int64, rows: 0 row kind (0 position, 1 orientation), 1 row chord, 2 kept
index of the row (-1 for a redundant row), 3 chord body a, 4 chord body b (-1 for ground),
5 independent v indices (sorted), 6 dependent v indices (loop after loop, in the order of the
columns of the loop's block ``G_d``), 7 first kept row of each loop (n_loops + 1), 8
``[n_rows, n_chords, n_independent, n_kept, n_loops, r_max]`` (``r_max``: the largest number of
kept rows of one loop), 9 loop of each independent coordinate (-1: in none), 10 first row of each
loop (n_loops + 1).  The rows of one chord, and those of one loop, are consecutive.
``cflt`` (n_rows + 2 n_chords + 1 + scratch, W) float64, rows: per constraint row ``[n, u]`` (``J_a``
axes); per chord ``[R_a (row-major), p_a, R_b, p_b]`` (body frames); per chord the signs (nv,) of
the velocity columns (+1 moves b only, -1 moves a only); ``[closure check tolerance,
RCOND_SWITCH]``; then :func:`scratch_rows` rows of scratch -- the matrices and vectors of
:func:`scratch_views`, overwritten by every call.

``kin`` (n + nv + 1, 8, 3) float64 scratch: per body k rows ``oR (3), op, w, vo, wd, ad``
(:func:`world_kinematics`), per velocity column j (at ``n + j``) ``Sw, Sv, pc``
(:func:`world_columns`), last the chord frame orientations.  Three-vectors are tuples.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import entry_kernels as ek

OK, NOT_CLOSED, ILL_CONDITIONED, NOT_DEFINITE, BAD_SHAPE = 0, 1, 2, 3, 4

#: the entry's one signature (compiled when this module is imported, or loaded from numba's cache):
#: arguments of other types raise TypeError instead of compiling a new specialization
SIGNATURE = ("int64(int64[:, ::1], float64[:, :, ::1], float64[::1], float64[:, :, ::1], int64[:, ::1], "
             "float64[:, ::1], float64[:, :, ::1], float64[::1], float64[::1], float64[::1], float64[::1])")


@njit(cache=True, error_model="numpy")
def closed_views(cint, cflt):
    """The sections of the packed arrays (module docstring) as views."""
    n_rows, n_c, n_i, n_k, n_l = cint[8, 0], cint[8, 1], cint[8, 2], cint[8, 3], cint[8, 4]
    return (cint[0, :n_rows], cint[1, :n_rows], cint[2, :n_rows], cint[3, :n_c], cint[4, :n_c], cint[5, :n_i],
            cint[6, :n_k], cint[7, :n_l + 1], cint[9, :n_i], cflt[:n_rows, 0:3], cflt[:n_rows, 3:6],
            cflt[n_rows:n_rows + n_c, 0:24], cflt[n_rows + n_c:n_rows + 2 * n_c], cflt[n_rows + 2 * n_c, 0],
            cflt[n_rows + 2 * n_c, 1])


@njit(cache=True, error_model="numpy")
def scratch_rows(nv, n_i, n_k, r_max):
    """Number of rows of the ``mats`` scratch array (see :func:`scratch_views`)."""
    return 2 * nv + n_i + 2 * n_k + 2 * r_max + 6


@njit(cache=True, error_model="numpy")
def scratch_views(mats, nv, n_i, n_k, n_rows, r_max):
    """``M (nv, nv), Y (nv, n_i), Me (n_i, n_i), G (n_k, nv), Xd (n_k, n_i), Gd, Gdi (r_max, r_max),
    C (nv), zero (nv), e (n_rows), gamma (n_k), cd (n_k), rhs (n_i)`` as views of ``mats``."""
    o = 2 * nv + n_i + 2 * n_k + 2 * r_max
    return (mats[0:nv, 0:nv], mats[nv:2 * nv, 0:n_i], mats[2 * nv:2 * nv + n_i, 0:n_i],
            mats[2 * nv + n_i:2 * nv + n_i + n_k, 0:nv], mats[2 * nv + n_i + n_k:o - 2 * r_max, 0:n_i],
            mats[o - 2 * r_max:o - r_max, 0:r_max], mats[o - r_max:o, 0:r_max], mats[o, 0:nv], mats[o + 1, 0:nv],
            mats[o + 2, 0:n_rows], mats[o + 3, 0:n_k], mats[o + 4, 0:n_k], mats[o + 5, 0:n_i])


@njit(cache=True, inline="always")
def vec(a, i):
    return (a[i, 0], a[i, 1], a[i, 2])


@njit(cache=True, inline="always")
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True, inline="always")
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True, inline="always")
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, inline="always")
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True, inline="always")
def mul(R, x):
    """``R x`` for R (3, 3) array, x a 3-tuple."""
    return (R[0, 0] * x[0] + R[0, 1] * x[1] + R[0, 2] * x[2], R[1, 0] * x[0] + R[1, 1] * x[1] + R[1, 2] * x[2],
            R[2, 0] * x[0] + R[2, 1] * x[1] + R[2, 2] * x[2])


@njit(cache=True, inline="always")
def mul_T(R, x):
    """``R^T x``."""
    return (R[0, 0] * x[0] + R[1, 0] * x[1] + R[2, 0] * x[2], R[0, 1] * x[0] + R[1, 1] * x[1] + R[2, 1] * x[2],
            R[0, 2] * x[0] + R[1, 2] * x[1] + R[2, 2] * x[2])


@njit(cache=True, error_model="numpy")
def world_kinematics(parent, R, p, V, A, grav, kin):
    """Per body k into ``kin[k]``: world pose ``oR`` (rows 0-2), ``op`` (3), angular velocity ``w`` (4),
    origin velocity ``vo`` (5) and the bias accelerations ``wd`` (6), ``ad`` (7) (classical, of the
    origin, zero joint accelerations, no gravity), from the body-frame results of a Newton-Euler pass
    with ``a = 0`` (``R, p``: pose in the parent; ``V``, ``A``: twist and spatial acceleration,
    gravity included)."""
    g = (grav[0], grav[1], grav[2])
    for k in range(parent.shape[0]):
        j = parent[k]
        oR = kin[k, 0:3]
        if j < 0:
            oR[:, :] = R[k]
            kin[k, 3, :] = p[k]
        else:
            for r in range(3):
                for c in range(3):
                    oR[r, c] = kin[j, r, 0] * R[k, 0, c] + kin[j, r, 1] * R[k, 1, c] + kin[j, r, 2] * R[k, 2, c]
            kin[k, 3, :] = add(vec(kin[j], 3), mul(kin[j, 0:3], vec(p, k)))
        w_body, v_body = (V[k, 0], V[k, 1], V[k, 2]), (V[k, 3], V[k, 4], V[k, 5])
        lin = add(add((A[k, 3], A[k, 4], A[k, 5]), mul_T(oR, g)), cross(w_body, v_body))
        kin[k, 4, :] = mul(oR, w_body)
        kin[k, 5, :] = mul(oR, v_body)
        kin[k, 6, :] = mul(oR, (A[k, 0], A[k, 1], A[k, 2]))
        kin[k, 7, :] = mul(oR, lin)


@njit(cache=True, error_model="numpy")
def world_columns(kind, v_off, S_const, S, kin):
    """World joint columns into ``kin[n + j]``: angular ``Sw`` (row 0), velocity ``Sv`` (1) of the origin
    ``pc`` (2) of the body column j moves."""
    n = kind.shape[0]
    for k in range(n):
        Sk = S[k] if kind[k] == 4 else S_const[k]
        oR = kin[k, 0:3]
        for i in range(v_off[k + 1] - v_off[k]):
            c = kin[n + v_off[k] + i]
            c[0, :] = mul(oR, (Sk[i, 0], Sk[i, 1], Sk[i, 2]))
            c[1, :] = mul(oR, (Sk[i, 3], Sk[i, 4], Sk[i, 5]))
            c[2, :] = kin[k, 3]


@njit(cache=True, error_model="numpy")
def chord_frame(body, fr, o, kin, Rw):
    """World orientation ``Rw`` (3, 3) and origin (returned) of a frame fixed in ``body`` (-1: ground)
    at ``R_j = fr[o:o+9]`` (row-major), ``p_j = fr[o+9:o+12]`` in it."""
    pj = (fr[o + 9], fr[o + 10], fr[o + 11])
    for r in range(3):
        for c in range(3):
            if body < 0:
                Rw[r, c] = fr[o + 3 * r + c]
            else:
                Rw[r, c] = (kin[body, r, 0] * fr[o + c] + kin[body, r, 1] * fr[o + 3 + c]
                            + kin[body, r, 2] * fr[o + 6 + c])
    if body < 0:
        return pj
    return add(vec(kin[body], 3), mul(kin[body, 0:3], pj))


@njit(cache=True, error_model="numpy")
def point_motion(body, x, kin):
    """Angular velocity, velocity at world point x, angular and classical acceleration at x (bias
    terms) of ``body`` (zeros for ground)."""
    if body < 0:
        z = (0.0, 0.0, 0.0)
        return z, z, z, z
    kb = kin[body]
    w, wd = vec(kb, 4), vec(kb, 6)
    r = sub(x, vec(kb, 3))
    wr = cross(w, r)
    return w, add(vec(kb, 5), wr), wd, add(add(vec(kb, 7), cross(wd, r)), cross(w, wr))


@njit(cache=True, error_model="numpy")
def chord_terms(cv, kin, n, e, G, gamma):
    """Closure error ``e`` of every row, and the Jacobian ``G`` and ``gamma = Gdot v`` of the kept
    rows, of every chord (:mod:`dynamics.closed.closure` module docstring for the formulas)."""
    chord_rows(cv, kin, n, e, G, gamma, 0, cv[0].shape[0])


@njit(cache=True, error_model="numpy")
def chord_rows(cv, kin, n, e, G, gamma, i0, i1):
    """:func:`chord_terms` of the constraint rows ``i0:i1`` only (whole chords: a loop's rows)."""
    rkind, rchord, rkept, ba, bb, ind, dep, lk, loop_of, rn, ru, frames, signs, tol, rc = cv
    nv = G.shape[1]
    Ra, Rb = kin[n + nv, 0:3], kin[n + nv, 3:6]
    z = (0.0, 0.0, 0.0)
    xb, d, pdd, wa, wb, wda, wdb, ub, K = z, z, z, z, z, z, z, z, z
    for i in range(i0, i1):
        c = rchord[i]
        if i == i0 or c != rchord[i - 1]:
            xa = chord_frame(ba[c], frames[c], 0, kin, Ra)
            xb = chord_frame(bb[c], frames[c], 12, kin, Rb)
            d = sub(xb, xa)
            wa, va, wda, aa = point_motion(ba[c], xa, kin)
            wb, vb, wdb, ab = point_motion(bb[c], xb, kin)
            dd = sub(vb, va)
            # R^T (d'' - wd_a x d - 2 w_a x d' + w_a x (w_a x d))
            t = add(sub(sub(sub(ab, aa), cross(wda, d)), cross(wa, dd)), sub(cross(wa, cross(wa, d)), cross(wa, dd)))
            pdd = mul_T(Ra, t)
        nr = vec(rn, i)
        if rkind[i] == 0:
            e[i] = dot(nr, mul_T(Ra, d))
        else:
            ub = mul(Rb, vec(ru, i))
            RU = mul_T(Ra, ub)
            e[i] = dot(nr, RU)
            K = cross(RU, nr)
        k = rkept[i]
        if k < 0:
            continue
        for j in range(nv):
            s = signs[c, j]
            if s == 0.0:
                G[k, j] = 0.0
            elif rkind[i] == 0:
                col = kin[n + j]
                G[k, j] = s * dot(nr, mul_T(Ra, add(vec(col, 1), cross(vec(col, 0), sub(xb, vec(col, 2))))))
            else:
                G[k, j] = s * dot(K, mul_T(Ra, vec(kin[n + j], 0)))
        if rkind[i] == 0:
            gamma[k] = dot(nr, pdd)
        else:
            # (wd_b - wd_a) x u_b + (w_b - w_a) x (w_b x u_b) - w_a x ((w_b - w_a) x u_b)
            wr = sub(wb, wa)
            h = sub(add(cross(sub(wdb, wda), ub), cross(wr, cross(wb, ub))), cross(wa, cross(wr, ub)))
            gamma[k] = dot(nr, mul_T(Ra, h))


@njit(cache=True, error_model="numpy")
def invert_general(A, n, Ainv):
    """``Ainv = A^-1`` (n, n) by Gauss-Jordan elimination with partial pivoting; A is overwritten.
    Returns False when a pivot is exactly zero."""
    for i in range(n):
        for j in range(n):
            Ainv[i, j] = 1.0 if i == j else 0.0
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(A[r, c]) > abs(A[piv, c]):
                piv = r
        if A[piv, c] == 0.0:
            return False
        if piv != c:
            for j in range(n):
                A[c, j], A[piv, j] = A[piv, j], A[c, j]
                Ainv[c, j], Ainv[piv, j] = Ainv[piv, j], Ainv[c, j]
        s = 1.0 / A[c, c]
        for j in range(n):
            A[c, j] *= s
            Ainv[c, j] *= s
        for r in range(n):
            if r != c and A[r, c] != 0.0:
                f = A[r, c]
                for j in range(n):
                    A[r, j] -= f * A[c, j]
                    Ainv[r, j] -= f * Ainv[c, j]
    return True


@njit(cache=True, error_model="numpy")
def frobenius(A, n):
    s = 0.0
    for i in range(n):
        for j in range(n):
            s += A[i, j] * A[i, j]
    return np.sqrt(s)


@njit(cache=True, error_model="numpy")
def dependent_maps(ind, dep, lk, G, gamma, rcond_switch, Gd, Gdi, Xd, cd):
    """Per loop ``X_d = -G_d^-1 G_i`` (rows ``lk[l]:lk[l+1]`` of Xd (n_kept, n_i)) and
    ``c_d = -G_d^-1 gamma`` (Gd, Gdi: (r_max, r_max) scratch).  Returns False when a dependent
    block's condition estimate ``||G_d||_F ||G_d^-1||_F`` (>= its 2-norm condition number) exceeds
    ``1 / rcond_switch``."""
    n_i = ind.shape[0]
    for l in range(lk.shape[0] - 1):
        r0, r1 = lk[l], lk[l + 1]
        r = r1 - r0
        for a in range(r):
            for b in range(r):
                Gd[a, b] = G[r0 + a, dep[r0 + b]]
        norm = frobenius(Gd, r)
        if not invert_general(Gd, r, Gdi):
            return False
        if frobenius(Gdi, r) * norm * rcond_switch >= 1.0:
            return False
        for a in range(r):
            for j in range(n_i):
                s = 0.0
                for b in range(r):
                    s -= Gdi[a, b] * G[r0 + b, ind[j]]
                Xd[r0 + a, j] = s
            s = 0.0
            for b in range(r):
                s -= Gdi[a, b] * gamma[r0 + b]
            cd[r0 + a] = s
    return True


@njit(cache=True, error_model="numpy")
def cholesky_solve(A, b, n):
    """Solve ``A x = b`` (A (n, n) symmetric positive definite, overwritten by its Cholesky factor;
    b overwritten by x).  Returns False when A is not positive definite."""
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= A[j, k] * A[j, k]
        if not s > 0.0:
            return False
        A[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= A[i, k] * A[j, k]
            A[i, j] = t / A[j, j]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= A[i, k] * b[k]
        b[i] = s / A[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= A[k, i] * b[k]
        b[i] = s / A[i, i]
    return True


@njit(cache=True, error_model="numpy")
def projected_solve(ind, dep, lk, loop_of, M, f, Xd, cd, Y, Me, rhs, a):
    """``a = X a_i + c`` with ``X^* M X a_i = X^* (f - M c)`` (``X`` identity on ``ind``, ``Xd`` on
    ``dep``; ``c`` = ``cd`` on ``dep``); f = tau - C (nv,); Y (nv, n_i), Me (n_i, n_i), rhs (n_i)
    scratch.  Column j of ``Xd`` is zero outside the rows ``lk[l]:lk[l+1]`` of its loop
    ``l = loop_of[j]`` (-1: none), so the products cost O(nv n_i r) rather than O(nv n_i n_kept).
    Returns False when ``X^* M X`` is not positive definite."""
    nv, n_i, n_k = M.shape[0], ind.shape[0], dep.shape[0]
    for r in range(nv):
        for j in range(n_i):
            s = M[r, ind[j]]
            l = loop_of[j]
            if l >= 0:
                for d in range(lk[l], lk[l + 1]):
                    s += M[r, dep[d]] * Xd[d, j]
            Y[r, j] = s
        s = f[r]
        for d in range(n_k):
            s -= M[r, dep[d]] * cd[d]
        a[r] = s
    for i in range(n_i):
        l = loop_of[i]
        d0, d1 = (lk[l], lk[l + 1]) if l >= 0 else (0, 0)
        for j in range(n_i):
            s = Y[ind[i], j]
            for d in range(d0, d1):
                s += Xd[d, i] * Y[dep[d], j]
            Me[i, j] = s
        s = a[ind[i]]
        for d in range(d0, d1):
            s += Xd[d, i] * a[dep[d]]
        rhs[i] = s
    if not cholesky_solve(Me, rhs, n_i):
        return False
    for i in range(n_i):
        a[ind[i]] = rhs[i]
    for d in range(n_k):
        a[dep[d]] = cd[d]
    add_dependent(loop_of, lk, dep, Xd, rhs, n_i, a)
    return True


@njit(cache=True, error_model="numpy", inline="always")
def add_dependent(loop_of, lk, dep, Xd, x_i, n_i, out):
    """``out[dep] += X_d x_i[:n_i]``, loop by loop (``X_d`` of :func:`dependent_maps`)."""
    for j in range(n_i):
        l = loop_of[j]
        if l >= 0:
            for d in range(lk[l], lk[l + 1]):
                out[dep[d]] += Xd[d, j] * x_i[j]


@njit(cache=True, error_model="numpy")
def forward_dynamics_at(ints, blocks, extra, work, cint, cflt, kin, q, v, tau, qdd):
    """:func:`embedded_forward_dynamics` without the size checks."""
    n = ints.shape[1] - 1
    nv = ints[3, n]
    cv = closed_views(cint, cflt)
    rkind, rchord, rkept, ba, bb, ind, dep, lk, loop_of, rn, ru, frames, signs, tol, rcond = cv
    M, Y, Me, G, Xd, Gd, Gdi, C, zero, e, gamma, cd, rhs = scratch_views(
        cflt[rkind.shape[0] + 2 * ba.shape[0] + 1:], nv, ind.shape[0], dep.shape[0], rkind.shape[0], cint[8, 5])
    mv, wv = ek.mass_matrix_and_bias(ints, blocks, extra, work, q, v, zero, M, C)
    world_kinematics(mv[0], wv[0], wv[1], wv[3], wv[4], mv[12], kin)
    world_columns(mv[1], mv[3], mv[10], wv[2], kin)
    chord_terms(cv, kin, n, e, G, gamma)
    for i in range(e.shape[0]):
        if abs(e[i]) > tol:
            return NOT_CLOSED
    if not dependent_maps(ind, dep, lk, G, gamma, rcond, Gd, Gdi, Xd, cd):
        return ILL_CONDITIONED
    for i in range(nv):
        C[i] = tau[i] - C[i]
    if not projected_solve(ind, dep, lk, loop_of, M, C, Xd, cd, Y, Me, rhs, qdd):
        return NOT_DEFINITE
    return OK


@njit(SIGNATURE, cache=True, error_model="numpy")
def embedded_forward_dynamics(ints, blocks, extra, work, cint, cflt, kin, q, v, tau, qdd):
    """Accelerations qdd (nv,) of all tree joints of a closed chain at a closed, consistent state
    (q (nq,), v (nv,) with ``G v = 0``, tau (nv,)); returns a status (``OK`` or why not).
    ``work``: the tree's work array; ``kin`` and the rows of ``cflt`` after its constants: scratch
    (module docstring)."""
    n = ints.shape[1] - 1
    nv = ints[3, n]
    if q.shape[0] != ints[2, n] or v.shape[0] != nv or tau.shape[0] != nv or qdd.shape[0] != nv:
        return BAD_SHAPE
    return forward_dynamics_at(ints, blocks, extra, work, cint, cflt, kin, q, v, tau, qdd)
