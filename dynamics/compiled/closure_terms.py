"""Compiled closure terms of the chords of a constraint-embedded closed chain (numba).

The formulas of :mod:`dynamics.closed.closure` (the numpy reference) over the packed arrays
``P = (ints, floats, work, cint, cflt, cwork)`` (:mod:`dynamics.compiled.closed_kernels`):

* :func:`world_kinematics` -- world pose, twist and bias accelerations of every body from a
  Newton-Euler pass of the tree with zero joint accelerations (or at rest);
* :func:`world_columns` -- each velocity column's axis and the origin of the body it moves;
* :func:`chord_rows` -- the closure error ``e`` of a chord's constraint rows, and the Jacobian
  ``G = de/dq`` and ``gamma = Gdot v`` of its kept rows, into the scratch; a joint coupling's row
  (:func:`coupling_row`) from the coordinates themselves (:mod:`dynamics.closed.coupling`).

Three-vectors are tuples of floats (registers); the small helpers are inlined.
"""

from __future__ import annotations

from .fields import loop_fields, model_fields, scratch_fields, work_fields
from .jit import inline, kernel
from .spatial_kernels import UNIVERSAL

__all__ = ["world_kinematics", "world_columns", "chord_rows"]


@inline
def row(a, i):
    """Row i of an (n, 3) array as a 3-tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@inline
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@inline
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@inline
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@inline
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@inline
def mul(R, k, x):
    """``R[k] x`` for R (n, 3, 3), x a 3-tuple."""
    return (R[k, 0, 0] * x[0] + R[k, 0, 1] * x[1] + R[k, 0, 2] * x[2],
            R[k, 1, 0] * x[0] + R[k, 1, 1] * x[1] + R[k, 1, 2] * x[2],
            R[k, 2, 0] * x[0] + R[k, 2, 1] * x[1] + R[k, 2, 2] * x[2])


@inline
def mul_T(R, x):
    """``R^T x`` for R (3, 3), x a 3-tuple."""
    return (R[0, 0] * x[0] + R[1, 0] * x[1] + R[2, 0] * x[2], R[0, 1] * x[0] + R[1, 1] * x[1] + R[2, 1] * x[2],
            R[0, 2] * x[0] + R[1, 2] * x[1] + R[2, 2] * x[2])


@inline
def put(a, i, x):
    """Row i of an (n, 3) array = the 3-tuple x."""
    a[i, 0], a[i, 1], a[i, 2] = x[0], x[1], x[2]


@kernel(refcount=False, error_model="numpy")
def world_kinematics(P, at_rest):
    """Per body k: world pose ``world_R``, ``world_p``, angular velocity ``world_w``, origin velocity
    ``world_v`` and the bias accelerations ``world_wd``, ``world_ad`` (classical, of the origin, zero
    joint accelerations, no gravity), from the body-frame results of a Newton-Euler pass with
    ``a = 0`` in the tree's work (``R, p`` pose in the parent; ``V``, ``alpha`` twist and spatial
    acceleration, gravity included); ``at_rest``: twists and bias accelerations zero (closure at q alone: the
    poses only, the four rates set to zero)."""
    ints, floats, work, cint, cflt, cwork = P
    m, w, s = model_fields(ints, floats), work_fields(ints, work), scratch_fields(cint, cwork)
    V, A = w.V, w.alpha
    oR, op = s.world_R, s.world_p
    g = (m.gravity[0], m.gravity[1], m.gravity[2])
    for k in range(m.parent.shape[0]):
        j = m.parent[k]
        if j < 0:
            for r in range(3):
                for c in range(3):
                    oR[k, r, c] = w.R[k, r, c]
            put(op, k, row(w.p, k))
        else:
            for r in range(3):
                for c in range(3):
                    oR[k, r, c] = oR[j, r, 0] * w.R[k, 0, c] + oR[j, r, 1] * w.R[k, 1, c] + oR[j, r, 2] * w.R[k, 2, c]
            put(op, k, add(row(op, j), mul(oR, j, row(w.p, k))))
        if at_rest:
            z = (0.0, 0.0, 0.0)
            put(s.world_w, k, z)
            put(s.world_v, k, z)
            put(s.world_wd, k, z)
            put(s.world_ad, k, z)
            continue
        w_body, v_body = (V[k, 0], V[k, 1], V[k, 2]), (V[k, 3], V[k, 4], V[k, 5])
        lin = add(add((A[k, 3], A[k, 4], A[k, 5]), mul_T(oR[k], g)), cross(w_body, v_body))
        put(s.world_w, k, mul(oR, k, w_body))
        put(s.world_v, k, mul(oR, k, v_body))
        put(s.world_wd, k, mul(oR, k, (A[k, 0], A[k, 1], A[k, 2])))
        put(s.world_ad, k, mul(oR, k, lin))


@kernel(refcount=False, error_model="numpy")
def world_columns(P):
    """World joint columns: angular ``column_w``, velocity ``column_v`` of the origin ``column_p`` of the
    body velocity column j moves."""
    ints, floats, work, cint, cflt, cwork = P
    m, w, s = model_fields(ints, floats), work_fields(ints, work), scratch_fields(cint, cwork)
    for k in range(m.parent.shape[0]):
        Sk = w.S[k] if m.kind[k] == UNIVERSAL else m.S_const[k]
        for i in range(m.v_offset[k + 1] - m.v_offset[k]):
            j = m.v_offset[k] + i
            put(s.column_w, j, mul(s.world_R, k, (Sk[i, 0], Sk[i, 1], Sk[i, 2])))
            put(s.column_v, j, mul(s.world_R, k, (Sk[i, 3], Sk[i, 4], Sk[i, 5])))
            put(s.column_p, j, row(s.world_p, k))


@inline
def chord_frame(body, R_j, p_j, c, s, Rw):
    """World orientation ``Rw`` (3, 3) and origin (returned) of the frame ``(R_j[c], p_j[c])`` fixed in
    ``body`` (-1: ground)."""
    pj = row(p_j, c)
    for r in range(3):
        for k in range(3):
            if body < 0:
                Rw[r, k] = R_j[c, r, k]
            else:
                Rw[r, k] = (s.world_R[body, r, 0] * R_j[c, 0, k] + s.world_R[body, r, 1] * R_j[c, 1, k]
                            + s.world_R[body, r, 2] * R_j[c, 2, k])
    if body < 0:
        return pj
    return add(row(s.world_p, body), mul(s.world_R, body, pj))


@inline
def point_motion(body, x, s):
    """Angular velocity, velocity at world point x, angular and classical acceleration at x (bias
    terms) of ``body`` (zeros for ground)."""
    if body < 0:
        z = (0.0, 0.0, 0.0)
        return z, z, z, z
    w, wd = row(s.world_w, body), row(s.world_wd, body)
    r = sub(x, row(s.world_p, body))
    wr = cross(w, r)
    return w, add(row(s.world_v, body), wr), wd, add(add(row(s.world_ad, body), cross(wd, r)), cross(w, wr))


@inline
def coupling_row(L, s, q, v, i, k, G, gamma):
    """Row i of a joint coupling ``s_f = p(s_l)`` (``s = sum c q`` over each side's terms,
    :func:`dynamics.closed.coupling.coupling_residuals`): ``e = s_f - p(s_l)``; row k of ``G`` (none when
    k < 0), ``+c`` at the follower's columns and ``-p'(s_l) c`` at the leader's, and of ``gamma``,
    ``-p''(s_l) (sum c v_l)^2``."""
    k_c = L.row_chord[i]
    t0, t1 = L.coupling_term_start[k_c], L.coupling_term_start[k_c + 1]
    x = f = vl = 0.0
    for t in range(t0, t1):
        if L.coupling_term_leader[t] == 1:
            x += L.coupling_term_coef[t] * q[L.coupling_term_q[t]]
            vl += L.coupling_term_coef[t] * v[L.coupling_term_v[t]]
        else:
            f += L.coupling_term_coef[t] * q[L.coupling_term_q[t]]
    p = dp = h = 0.0
    for j in range(L.coupling_poly_start[k_c + 1] - 1, L.coupling_poly_start[k_c] - 1, -1):
        h = h * x + dp
        dp = dp * x + p
        p = p * x + L.coupling_poly[j]
    s.e[i] = f - p
    if k < 0:
        return
    for j in range(G.shape[1]):
        G[k, j] = 0.0
    for t in range(t0, t1):
        if L.coupling_term_leader[t] == 1:
            G[k, L.coupling_term_v[t]] -= dp * L.coupling_term_coef[t]
        else:
            G[k, L.coupling_term_v[t]] += L.coupling_term_coef[t]
    gamma[k] = -2.0 * h * vl * vl


@kernel(refcount=False, error_model="numpy")
def chord_rows(P, q, v, i0, i1, G, gamma, every):
    """Closure error ``e`` of the constraint rows ``i0:i1`` (whole chords: a loop's rows), and the
    Jacobian ``G = de/dq`` and ``gamma = Gdot v`` of their kept rows (row ``row_kept[i]`` of ``G``
    (n_kept, nv) and ``gamma``), or of every row (``every``: row i of ``G`` (n_rows, nv)), from the world
    kinematics in the scratch (:mod:`dynamics.closed.closure` module docstring for the formulas); joint
    coupling rows from q (nq,) and v (nv,) (:func:`coupling_row`)."""
    ints, floats, work, cint, cflt, cwork = P
    L, s = loop_fields(cint, cflt), scratch_fields(cint, cwork)
    e, Ra, Rb = s.e, s.frame_R_a, s.frame_R_b
    nv = G.shape[1]
    z = (0.0, 0.0, 0.0)
    xb, d, pdd, wa, wb, wda, wdb, ub, K = z, z, z, z, z, z, z, z, z
    for i in range(i0, i1):
        k = i if every else L.row_kept[i]
        if L.row_kind[i] == 2:
            coupling_row(L, s, q, v, i, k, G, gamma)
            continue
        c = L.row_chord[i]
        if i == i0 or c != L.row_chord[i - 1] or L.row_kind[i - 1] == 2:
            xa = chord_frame(L.chord_body_a[c], L.chord_R_a, L.chord_p_a, c, s, Ra)
            xb = chord_frame(L.chord_body_b[c], L.chord_R_b, L.chord_p_b, c, s, Rb)
            d = sub(xb, xa)
            wa, va, wda, aa = point_motion(L.chord_body_a[c], xa, s)
            wb, vb, wdb, ab = point_motion(L.chord_body_b[c], xb, s)
            dd = sub(vb, va)
            # R^T (d'' - wd_a x d - 2 w_a x d' + w_a x (w_a x d))
            t = add(sub(sub(sub(ab, aa), cross(wda, d)), cross(wa, dd)), sub(cross(wa, cross(wa, d)), cross(wa, dd)))
            pdd = mul_T(Ra, t)
        nr = row(L.row_n, i)
        if L.row_kind[i] == 0:
            e[i] = dot(nr, mul_T(Ra, d))
        else:
            ub = (Rb[0, 0] * L.row_u[i, 0] + Rb[0, 1] * L.row_u[i, 1] + Rb[0, 2] * L.row_u[i, 2],
                  Rb[1, 0] * L.row_u[i, 0] + Rb[1, 1] * L.row_u[i, 1] + Rb[1, 2] * L.row_u[i, 2],
                  Rb[2, 0] * L.row_u[i, 0] + Rb[2, 1] * L.row_u[i, 1] + Rb[2, 2] * L.row_u[i, 2])
            RU = mul_T(Ra, ub)
            e[i] = dot(nr, RU)
            K = cross(RU, nr)
        if k < 0:
            continue
        for j in range(nv):
            sign = L.chord_signs[c, j]
            if sign == 0.0:
                G[k, j] = 0.0
            elif L.row_kind[i] == 0:
                moved = add(row(s.column_v, j), cross(row(s.column_w, j), sub(xb, row(s.column_p, j))))
                G[k, j] = sign * dot(nr, mul_T(Ra, moved))
            else:
                G[k, j] = sign * dot(K, mul_T(Ra, row(s.column_w, j)))
        if L.row_kind[i] == 0:
            gamma[k] = dot(nr, pdd)
        else:
            # (wd_b - wd_a) x u_b + (w_b - w_a) x (w_b x u_b) - w_a x ((w_b - w_a) x u_b)
            wr = sub(wb, wa)
            h = sub(add(cross(sub(wdb, wda), ub), cross(wr, cross(wb, ub))), cross(wa, cross(wr, ub)))
            gamma[k] = dot(nr, mul_T(Ra, h))
