"""Compiled recursions of the rigid-body tree: RNEA, CRBA, ABA (numba, one configuration).

The kernels are the numpy algorithms of :mod:`dynamics.rnea`, :mod:`dynamics.crba` and
:mod:`dynamics.aba` written over the flat arrays of
:class:`dynamics.compiled.layout.FlatModel` (``m``) and the work arrays of
:class:`dynamics.compiled.layout.Data` (``w``), one configuration per call:

* ``rnea`` -- seed 001 Algorithm 3.1 (Eq. 10): base-to-tips scatter
  ``alpha(k) = phi*(parent, k) alpha(parent) + H*(k) theta_ddot(k) + a(k)``,
  ``f(k) = M(k) alpha(k) + b(k)``, tips-to-base gather ``T(k) = H(k) f(k)``;
* ``crba`` -- seed 001 Algorithms 4.1-4.2: composite inertias
  ``R(k) = sum phi(k, i) R(i) phi*(k, i) + M(k)`` and ``M(j, k) = H(j) phi(j, k) R(k) H*(k)``;
* ``aba`` -- seed 001 Algorithm 6.1 (Eqs. 33, 58a-g): the Riccati gather of
  ``P, D, G`` with the residual forces ``z``, ``eps``, ``nu``, then the scatter of
  ``theta_ddot``.

Gravity is the ground acceleration ``[0; -g]`` carried to the roots; external forces
``f_ext`` (n, 6) (body frames, about the body origin, moment first; an empty (0, 6)
array for none) are subtracted from ``b``; ``armature`` adds to the diagonal of M.
"""

from __future__ import annotations

from numba import njit

from .spatial_kernels import (UNIVERSAL, add_force_cross, add_force_to_parent, add_inertia_to_parent,
                              add_motion_cross, add_universal_bias, force_columns_to_parent, invert_spd,
                              joint_pose, motion_to_child, set_product, set_subspace_motion)


@njit(cache=True)
def velocity_pass(m, k, q, v, vJ, F, R, p, S, V):
    """Pose of body k, ``V(k) = phi*(parent, k) V(parent) + H*(k) v_k`` and ``vJ = H*(k) v_k``.

    Returns H(k) (rows 0..n_k-1 of a (6, 6) array).
    """
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    Sk = joint_pose(kind, q_off, ax, ax2, e1, e2, PR, Pp, S_const, k, q, F, R, p, S)
    o = v_off[k]
    set_subspace_motion(Sk, v_off[k + 1] - o, v, o, vJ)
    pk = parent[k]
    if pk < 0:
        for i in range(6):
            V[k, i] = vJ[i]
    else:
        motion_to_child(R[k], p[k], V[pk], V[k])
        for i in range(6):
            V[k, i] += vJ[i]
    return Sk


@njit(cache=True)
def set_ground_acceleration(grav, out):
    """``out = [0; -g]``: gravity as the ground's spatial acceleration (ground frame)."""
    for i in range(3):
        out[i] = 0.0
        out[3 + i] = -grav[i]


@njit(cache=True)
def rnea(m, w, q, v, a, f_ext, tau):
    """Inverse dynamics ``tau = M(q) a + C(q, v) - sum J^T f_ext`` into tau (nv,)."""
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, S, V, A, f = w[0], w[1], w[2], w[3], w[4], w[5]
    vec = w[18]
    vJ, aJ, MV, g0 = vec[0], vec[1], vec[2], vec[3]
    set_ground_acceleration(grav, g0)
    n = parent.shape[0]
    has_fext = f_ext.shape[0] > 0
    # base-to-tips scatter
    for k in range(n):
        Sk = velocity_pass(m, k, q, v, vJ, w[15], R, p, S, V)
        o = v_off[k]
        set_subspace_motion(Sk, v_off[k + 1] - o, a, o, aJ)
        pk = parent[k]
        motion_to_child(R[k], p[k], g0 if pk < 0 else A[pk], A[k])
        for i in range(6):
            A[k, i] += aJ[i]
        add_motion_cross(V[k], vJ, A[k])
        if kind[k] == UNIVERSAL:
            add_universal_bias(ax2[k], Sk, v[o], v[o + 1], A[k])
        set_product(M_body[k], V[k], MV)
        set_product(M_body[k], A[k], f[k])
        add_force_cross(V[k], MV, f[k])
        if has_fext:
            for i in range(6):
                f[k, i] -= f_ext[k, i]
    # tips-to-base gather
    for k in range(n - 1, -1, -1):
        Sk = S[k] if kind[k] == UNIVERSAL else S_const[k]
        o = v_off[k]
        for i in range(v_off[k + 1] - o):
            s = arm[o + i] * a[o + i]
            for j in range(6):
                s += Sk[i, j] * f[k, j]
            tau[o + i] = s
        if parent[k] >= 0:
            add_force_to_parent(R[k], p[k], f[k], f[parent[k]])


@njit(cache=True)
def crba(m, w, q, M):
    """Mass matrix M(q) (nv, nv) by composite inertias (seed 001 Algorithms 4.1-4.2)."""
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, P = w[0], w[1], w[7]
    F, Y = w[15], w[17]
    n = parent.shape[0]
    for k in range(n):
        joint_pose(kind, q_off, ax, ax2, e1, e2, PR, Pp, S_const, k, q, F, R, p, w[2])
        P[k, :, :] = M_body[k]
    M[:, :] = 0.0
    # tips-to-base gather
    for k in range(n - 1, -1, -1):
        Sk = w[2][k] if kind[k] == UNIVERSAL else S_const[k]
        o = v_off[k]
        nk = v_off[k + 1] - o
        for c in range(nk):
            for i in range(6):
                s = 0.0
                for j in range(6):
                    s += P[k, i, j] * Sk[c, j]
                F[i, c] = s
        add_subspace_block(M, Sk, o, nk, o, F, nk, False)
        for i in range(nk):
            M[o + i, o + i] += arm[o + i]
        j = k
        while parent[j] >= 0 and nk > 0:
            force_columns_to_parent(R[j], p[j], F, nk)
            j = parent[j]
            Sj = w[2][j] if kind[j] == UNIVERSAL else S_const[j]
            add_subspace_block(M, Sj, v_off[j], v_off[j + 1] - v_off[j], o, F, nk, True)
        if parent[k] >= 0:
            add_inertia_to_parent(R[k], p[k], P[k], P[parent[k]], Y)


@njit(cache=True)
def add_subspace_block(M, Sj, oj, nj, ok, F, nk, mirror):
    """``M[oj:oj+n_j, ok:ok+n_k] = H(j) F[:, :n_k]`` (and its transpose when mirror)."""
    for r in range(nj):
        for c in range(nk):
            s = 0.0
            for i in range(6):
                s += Sj[r, i] * F[i, c]
            M[oj + r, ok + c] = s
            if mirror:
                M[ok + c, oj + r] = s


@njit(cache=True)
def articulated_inertia(v_off, arm, P, PH, Dinv, G, k, Sk):
    """``PH = P H*``, ``D = H P H* + armature`` inverted in place, ``G = P H* D^-1`` of node k.

    Seed 001 Eq. 33; returns ``log det D(k)``.
    """
    o = v_off[k]
    nk = v_off[k + 1] - o
    for c in range(nk):
        for i in range(6):
            s = 0.0
            for j in range(6):
                s += P[k, i, j] * Sk[c, j]
            PH[k, i, c] = s
    for r in range(nk):
        for c in range(nk):
            s = arm[o + r] if r == c else 0.0
            for i in range(6):
                s += Sk[r, i] * PH[k, i, c]
            Dinv[k, r, c] = s
    logdet = invert_spd(Dinv[k], nk)
    for i in range(6):
        for c in range(nk):
            s = 0.0
            for r in range(nk):
                s += PH[k, i, r] * Dinv[k, r, c]
            G[k, i, c] = s
    return logdet


@njit(cache=True)
def set_projected_inertia(P, PH, G, nk, out):
    """``out = P - G (P H*)^T = tau_bar P`` (P+ of seed 001 Eq. 33)."""
    for i in range(6):
        for j in range(6):
            s = P[i, j]
            for c in range(nk):
                s -= G[i, c] * PH[j, c]
            out[i, j] = s


@njit(cache=True)
def aba(m, w, q, v, tau, f_ext, qdd):
    """Forward dynamics ``qdd = M^-1 (tau - C(q, v))`` (seed 001 Algorithm 6.1) into qdd (nv,)."""
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, S, V, A, c, P, z, G, eps = w[0], w[1], w[2], w[3], w[4], w[6], w[7], w[8], w[11], w[12]
    F, Y, vec = w[15], w[17], w[18]
    vJ, MV, zp, g0 = vec[0], vec[1], vec[2], vec[3]
    set_ground_acceleration(grav, g0)
    n = parent.shape[0]
    has_fext = f_ext.shape[0] > 0
    for k in range(n):
        Sk = velocity_pass(m, k, q, v, vJ, w[15], R, p, S, V)
        c[k, :] = 0.0
        add_motion_cross(V[k], vJ, c[k])
        if kind[k] == UNIVERSAL:
            add_universal_bias(ax2[k], Sk, v[v_off[k]], v[v_off[k] + 1], c[k])
        P[k, :, :] = M_body[k]
        set_product(M_body[k], V[k], MV)
        z[k, :] = 0.0
        add_force_cross(V[k], MV, z[k])
        if has_fext:
            for i in range(6):
                z[k, i] -= f_ext[k, i]
    # tips-to-base gather (Eqs. 58a-d)
    for k in range(n - 1, -1, -1):
        Sk = S[k] if kind[k] == UNIVERSAL else S_const[k]
        o = v_off[k]
        nk = v_off[k + 1] - o
        articulated_inertia(v_off, arm, P, w[9], w[10], G, k, Sk)
        for r in range(nk):
            s = tau[o + r]
            for i in range(6):
                s -= Sk[r, i] * z[k, i]
            eps[k, r] = s
        pk = parent[k]
        if pk >= 0:
            set_projected_inertia(P[k], w[9][k], G[k], nk, F)
            set_product(F, c[k], zp)
            for i in range(6):
                s = z[k, i] + zp[i]
                for r in range(nk):
                    s += G[k, i, r] * eps[k, r]
                zp[i] = s
            add_force_to_parent(R[k], p[k], zp, z[pk])
            add_inertia_to_parent(R[k], p[k], F, P[pk], Y)
    # base-to-tips scatter (Eqs. 58e-g)
    Dinv = w[10]
    for k in range(n):
        Sk = S[k] if kind[k] == UNIVERSAL else S_const[k]
        pk = parent[k]
        motion_to_child(R[k], p[k], g0 if pk < 0 else A[pk], A[k])
        for i in range(6):
            A[k, i] += c[k, i]
        o = v_off[k]
        nk = v_off[k + 1] - o
        for r in range(nk):
            s = 0.0
            for j in range(nk):
                t = eps[k, j]
                for i in range(6):
                    t -= w[9][k, i, j] * A[k, i]
                s += Dinv[k, r, j] * t
            qdd[o + r] = s
        for r in range(nk):
            for i in range(6):
                A[k, i] += Sk[r, i] * qdd[o + r]
