"""Compiled innovations factors, M^-1, log det M, frame kinematics and Jacobians (numba).

* ``riccati`` -- the velocity-free part of seed 001 Algorithm 6.1 (Eq. 33): ``P``,
  ``D^-1`` and ``G = P H* D^-1`` of every node; returns ``log det M = sum log det D(k)``
  (seed 001 Eq. 53).
* ``mass_matrix_inverse`` -- seed 001 Eq. 51, ``M^-1 = [I - H psi K]* D^-1 [I - H psi K]``
  with the blocks of ``[I - H psi K]`` (Eq. 50) as path products
  ``-H(j) psi(j, parent(k)) phi(parent(k), k) G(k)``, ``psi(i, j) = phi(i, j) tau_bar(j)``,
  ``tau_bar = I - G H`` (the numpy twin is :mod:`dynamics.innovations`).
* ``forward_kinematics`` -- ground-frame pose ``(oR, op)`` of every body.
* ``jacobian`` -- ``J = B* phi* H*`` of a point on a body (seed 002 Eq. 13), the
  column of joint j being its motion subspace carried to the point.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .spatial_kernels import UNIVERSAL, add_inertia_to_parent, force_columns_to_parent, joint_pose
from .tree_kernels import articulated_inertia, set_projected_inertia


@njit(cache=True)
def riccati(m, w, q):
    """Articulated body inertias P, D^-1, G of every node at q; returns ``log det M``."""
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, S, P, PH, G = w[0], w[1], w[2], w[7], w[9], w[11]
    F, Y = w[15], w[17]
    n = parent.shape[0]
    for k in range(n):
        joint_pose(kind, q_off, ax, ax2, e1, e2, PR, Pp, k, q, F, R, p, S)
        for i in range(6):
            for j in range(6):
                P[k, i, j] = M_body[k, i, j]
    logdet = 0.0
    # tips-to-base gather
    for k in range(n - 1, -1, -1):
        logdet += articulated_inertia(kind, v_off, arm, S, S_const, P, PH, w[10], G, k)
        if parent[k] >= 0:
            set_projected_inertia(P, PH, G, k, v_off[k + 1] - v_off[k], F)
            add_inertia_to_parent(R, p, k, F, P, parent[k], Y)
    return logdet


@njit(cache=True)
def innovations_inverse(m, w, Linv):
    """``Linv = [I - H psi K]`` (nv, nv), block upper triangular, after :func:`riccati`."""
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, S, G = w[0], w[1], w[2], w[11]
    F, T = w[15], w[16]
    Linv[:, :] = 0.0
    for i in range(Linv.shape[0]):
        Linv[i, i] = 1.0
    for k in range(parent.shape[0]):
        ok = v_off[k]
        nk = v_off[k + 1] - ok
        if nk == 0:
            continue
        F[:, :nk] = G[k, :, :nk]
        j = k
        while parent[j] >= 0:
            force_columns_to_parent(R, p, j, F, nk)
            j = parent[j]
            oj = v_off[j]
            nj = v_off[j + 1] - oj
            Sj = S[j] if kind[j] == UNIVERSAL else S_const[j]
            for r in range(nj):
                for c in range(nk):
                    s = 0.0
                    for i in range(6):
                        s += Sj[r, i] * F[i, c]
                    T[r, c] = s
                    Linv[oj + r, ok + c] = -s
            for i in range(6):
                for c in range(nk):
                    s = F[i, c]
                    for r in range(nj):
                        s -= G[j, i, r] * T[r, c]
                    F[i, c] = s


@njit(cache=True)
def mass_matrix_inverse(m, w, q, Minv):
    """``M(q)^-1`` (nv, nv) by the innovations factorization (seed 001 Eq. 51)."""
    v_off = m[3]
    Dinv = w[10]
    riccati(m, w, q)
    nv = Minv.shape[0]
    Linv = np.empty((nv, nv))
    innovations_inverse(m, w, Linv)
    W = np.zeros((nv, nv))
    for k in range(v_off.shape[0] - 1):
        o = v_off[k]
        nk = v_off[k + 1] - o
        for r in range(nk):
            for c in range(o, nv):
                s = 0.0
                for j in range(nk):
                    s += Dinv[k, r, j] * Linv[o + j, c]
                W[o + r, c] = s
    for i in range(nv):
        for j in range(i, nv):
            s = 0.0
            for r in range(i + 1):
                s += Linv[r, i] * W[r, j]
            Minv[i, j] = s
            Minv[j, i] = s


@njit(cache=True)
def forward_kinematics(m, w, q):
    """Ground-frame pose ``oR[k]`` (3, 3), ``op[k]`` (3,) m of every body at q."""
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, S, oR, op, F = w[0], w[1], w[2], w[13], w[14], w[15]
    for k in range(parent.shape[0]):
        joint_pose(kind, q_off, ax, ax2, e1, e2, PR, Pp, k, q, F, R, p, S)
        pk = parent[k]
        if pk < 0:
            oR[k, :, :] = R[k]
            op[k, :] = p[k]
            continue
        for i in range(3):
            for j in range(3):
                oR[k, i, j] = oR[pk, i, 0] * R[k, 0, j] + oR[pk, i, 1] * R[k, 1, j] + oR[pk, i, 2] * R[k, 2, j]
            op[k, i] = op[pk, i] + oR[pk, i, 0] * p[k, 0] + oR[pk, i, 1] * p[k, 1] + oR[pk, i, 2] * p[k, 2]


@njit(cache=True)
def jacobian(m, w, q, body, point, world, J):
    """Jacobian (6, nv) of ``[omega; v]`` of ``point`` (3,) m fixed on ``body`` (body frame).

    ``world`` True: ground axes (Pinocchio's LOCAL_WORLD_ALIGNED); False: body axes.
    """
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    S, oR, op = w[2], w[13], w[14]
    forward_kinematics(m, w, q)
    J[:, :] = 0.0
    x = np.empty(3)
    for i in range(3):
        x[i] = op[body, i] + oR[body, i, 0] * point[0] + oR[body, i, 1] * point[1] + oR[body, i, 2] * point[2]
    j = body
    while j >= 0:
        Sj = S[j] if kind[j] == UNIVERSAL else S_const[j]
        for r in range(v_off[j + 1] - v_off[j]):
            col = v_off[j] + r
            for i in range(3):
                J[i, col] = oR[j, i, 0] * Sj[r, 0] + oR[j, i, 1] * Sj[r, 1] + oR[j, i, 2] * Sj[r, 2]
                J[3 + i, col] = oR[j, i, 0] * Sj[r, 3] + oR[j, i, 1] * Sj[r, 4] + oR[j, i, 2] * Sj[r, 5]
            d0, d1, d2 = x[0] - op[j, 0], x[1] - op[j, 1], x[2] - op[j, 2]
            J[3, col] += J[1, col] * d2 - J[2, col] * d1
            J[4, col] += J[2, col] * d0 - J[0, col] * d2
            J[5, col] += J[0, col] * d1 - J[1, col] * d0
        j = parent[j]
    if not world:
        for col in range(J.shape[1]):
            for h in range(2):
                a0, a1, a2 = J[3 * h, col], J[3 * h + 1, col], J[3 * h + 2, col]
                for i in range(3):
                    J[3 * h + i, col] = oR[body, 0, i] * a0 + oR[body, 1, i] * a1 + oR[body, 2, i] * a2
