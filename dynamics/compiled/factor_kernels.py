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

They read the model and work fields ``m``, ``w`` (:mod:`dynamics.compiled.fields`), allocate
nothing and are inlined into the entries of :mod:`dynamics.compiled.entry_kernels`.
"""

from __future__ import annotations

from .jit import inline
from .spatial_kernels import UNIVERSAL, add_inertia_to_parent, force_columns_to_parent, joint_pose
from .tree_kernels import articulated_inertia, set_ground_pose, set_projected_inertia


@inline
def riccati(m, w, q):
    """Articulated body inertias ``P``, ``Dinv``, ``G`` (and ``PH``) of every node at q; returns ``log det M``."""
    parent, P = m.parent, w.P
    n = parent.shape[0]
    for k in range(n):
        joint_pose(m, w, k, q)
        for i in range(6):
            for j in range(6):
                P[k, i, j] = m.M_body[k, i, j]
    logdet = 0.0
    # tips-to-base gather
    for k in range(n - 1, -1, -1):
        logdet += articulated_inertia(m, w, k)
        if parent[k] >= 0:
            set_projected_inertia(w, k, m.v_offset[k + 1] - m.v_offset[k])
            add_inertia_to_parent(w.R, w.p, k, w.P_plus, P, parent[k], w.inertia_scratch)
    return logdet


@inline
def innovations_inverse(m, w, Linv):
    """``Linv = [I - H psi K]`` (nv, nv), block upper triangular, after :func:`riccati`."""
    parent, v_off, G = m.parent, m.v_offset, w.G
    F, T = w.force_columns, w.H_force_columns
    nv = Linv.shape[0]
    for i in range(nv):
        for j in range(nv):
            Linv[i, j] = 1.0 if i == j else 0.0
    for k in range(parent.shape[0]):
        ok = v_off[k]
        nk = v_off[k + 1] - ok
        if nk == 0:
            continue
        for i in range(6):
            for c in range(nk):
                F[i, c] = G[k, i, c]
        j = k
        while parent[j] >= 0:
            force_columns_to_parent(w.R, w.p, j, F, nk)
            j = parent[j]
            oj = v_off[j]
            nj = v_off[j + 1] - oj
            Sj = w.S[j] if m.kind[j] == UNIVERSAL else m.S_const[j]
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


@inline
def mass_matrix_inverse(m, w, q, Linv, W, Minv):
    """``M(q)^-1`` (nv, nv) into Minv by the innovations factorization (seed 001 Eq. 51);
    Linv, W (nv, nv) scratch."""
    v_off, Dinv = m.v_offset, w.Dinv
    riccati(m, w, q)
    innovations_inverse(m, w, Linv)
    nv = Minv.shape[0]
    for k in range(v_off.shape[0] - 1):
        o = v_off[k]
        nk = v_off[k + 1] - o
        for r in range(nk):
            for c in range(nv):
                s = 0.0
                if c >= o:
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


@inline
def forward_kinematics(m, w, q):
    """Ground-frame pose ``w.oR[k]`` (3, 3), ``w.op[k]`` (3,) m of every body at q."""
    for k in range(m.parent.shape[0]):
        joint_pose(m, w, k, q)
        set_ground_pose(w.R, w.p, m.parent, k, w.oR, w.op)


@inline
def jacobian(m, w, q, body, point, world, J):
    """Jacobian (6, nv) of ``[omega; v]`` of ``point`` (3,) m fixed on ``body`` (body frame).

    ``world`` True: ground axes (Pinocchio's LOCAL_WORLD_ALIGNED); False: body axes.
    """
    parent, v_off, oR, op = m.parent, m.v_offset, w.oR, w.op
    forward_kinematics(m, w, q)
    for i in range(6):
        for c in range(J.shape[1]):
            J[i, c] = 0.0
    x0 = op[body, 0] + oR[body, 0, 0] * point[0] + oR[body, 0, 1] * point[1] + oR[body, 0, 2] * point[2]
    x1 = op[body, 1] + oR[body, 1, 0] * point[0] + oR[body, 1, 1] * point[1] + oR[body, 1, 2] * point[2]
    x2 = op[body, 2] + oR[body, 2, 0] * point[0] + oR[body, 2, 1] * point[1] + oR[body, 2, 2] * point[2]
    j = body
    while j >= 0:
        Sj = w.S[j] if m.kind[j] == UNIVERSAL else m.S_const[j]
        for r in range(v_off[j + 1] - v_off[j]):
            col = v_off[j] + r
            for i in range(3):
                J[i, col] = oR[j, i, 0] * Sj[r, 0] + oR[j, i, 1] * Sj[r, 1] + oR[j, i, 2] * Sj[r, 2]
                J[3 + i, col] = oR[j, i, 0] * Sj[r, 3] + oR[j, i, 1] * Sj[r, 4] + oR[j, i, 2] * Sj[r, 5]
            d0, d1, d2 = x0 - op[j, 0], x1 - op[j, 1], x2 - op[j, 2]
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
