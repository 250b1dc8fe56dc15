"""Compiled recursions of the rigid-body tree: RNEA, CRBA, ABA (numba, one configuration).

The kernels are the numpy algorithms of :mod:`dynamics.rnea`, :mod:`dynamics.crba` and
:mod:`dynamics.aba` written over the flat arrays of
:class:`dynamics.compiled.layout.FlatModel` (``m``) and the work arrays of
:class:`dynamics.compiled.layout.Data` (``w``), one configuration per call:

* ``velocity_pass`` -- the base-to-tips pass RNEA and ABA share: poses, velocities
  ``V(k) = phi*(parent, k) V(parent) + H*(k) theta_dot(k)``, velocity-product
  accelerations ``a(k) = V(k) x H*(k) theta_dot(k)`` and bias forces
  ``b(k) = V(k) x* M(k) V(k) - f_ext(k)``;
* ``rnea`` -- seed 001 Algorithm 3.1 (Eq. 10): base-to-tips scatter
  ``alpha(k) = phi*(parent, k) alpha(parent) + H*(k) theta_ddot(k) + a(k)``,
  ``f(k) = M(k) alpha(k) + b(k)``, tips-to-base gather ``T(k) = H(k) f(k)``;
* ``crba`` -- seed 001 Algorithms 4.1-4.2: composite inertias
  ``R(k) = sum phi(k, i) R(i) phi*(k, i) + M(k)`` (rigid, so kept in 3+3 form: mass,
  first moment, rotational inertia) and ``M(j, k) = H(j) phi(j, k) R(k) H*(k)``, both
  in the ground frame, each entry written to both triangles;
* ``aba`` -- seed 001 Algorithm 6.1 (Eqs. 33, 58a-g): the Riccati gather of
  ``P, D, G`` with the residual forces ``z``, ``eps``, ``nu``, then the scatter of
  ``theta_ddot``.

One-coordinate joints (revolute, continuous, prismatic: ``H(k)`` one row ``s``) take
a specialised path: ``U = P s*`` a (6,) column, ``D = s U + armature`` a scalar, no
matrix inverse.  Every per-body helper takes whole arrays and row indices rather than
row views.  The kernels here and in :mod:`dynamics.compiled.spatial_kernels` neither
allocate nor return arrays, so they are compiled without numba's reference counting
(``_nrt=False``): the atomic reference count updates of the arrays a function receives
and the views it takes were half of the time of ``crba`` (``perf record``).  They are
also inlined into their callers (``inline="always"``, numba IR): a call of its own received
the model and work views as two tuples of 33 array structs, about 3 KB copied onto the
stack and read back from it at every call (0.25 us of panda's 1.5 us ``crba``).

Gravity is the ground acceleration ``[0; -g]`` carried to the roots; external forces
``f_ext`` (n, 6) (body frames, about the body origin, moment first; an empty (0, 6)
array for none) are subtracted from ``b``; ``armature`` adds to the diagonal of M.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .spatial_kernels import (UNIVERSAL, add_force_cross, add_force_to_parent, add_inertia_to_parent,
                              rigid_inertia_times, add_universal_bias,
                              force_columns_to_parent, invert_spd, joint_pose, motion_to_child,
                              set_inertia_times, set_motion_cross, set_rigid_inertia_moved, subspace)


@njit(cache=True, _nrt=False, inline="always")
def velocity_pass(m, w, q, v, f_ext):
    """Poses ``(R, p)``, velocities ``V``, velocity-product accelerations ``c`` and bias forces
    ``z = V x* M V - f_ext`` of every body (body frames) into the work arrays."""
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, S, V, c, z, F, vec = w[0], w[1], w[2], w[3], w[6], w[8], w[15], w[18]
    has_fext = f_ext.shape[0] > 0
    for k in range(parent.shape[0]):
        joint_pose(kind, q_off, ax, ax2, e1, e2, PR, Pp, k, q, F, R, p, S)
        o = v_off[k]
        for i in range(6):
            vec[0, i] = 0.0
        add_subspace_motion(kind, S, S_const, v_off, k, v, vec, 0)     # vJ = H* theta_dot
        if parent[k] < 0:
            for i in range(6):
                V[k, i] = vec[0, i]
        else:
            motion_to_child(R, p, k, V, parent[k], V, k)
            for i in range(6):
                V[k, i] += vec[0, i]
        set_motion_cross(V, k, vec, 0, c, k)
        if kind[k] == UNIVERSAL:
            add_universal_bias(ax2, S, k, v[o], v[o + 1], c, k)
        set_inertia_times(M_body, k, V, k, vec, 1)
        for i in range(6):
            z[k, i] = -f_ext[k, i] if has_fext else 0.0
        add_force_cross(V, k, vec, 1, z, k)


@njit(cache=True, _nrt=False, inline="always")
def add_subspace_motion(kind, S, S_const, v_off, k, x, out, j):
    """``out[j] += H*(k) x[o:o+n_k]`` (o, n_k: the velocity offset and count of joint k); one
    coordinate: ``x[o] s`` with s the constant row of H(k)."""
    o = v_off[k]
    nk = v_off[k + 1] - o
    if nk == 1:
        xo = x[o]
        for i in range(6):
            out[j, i] += xo * S_const[k, 0, i]
        return
    for r in range(nk):
        xr = x[o + r]
        for i in range(6):
            out[j, i] += xr * subspace(kind, S, S_const, k, r, i)


@njit(cache=True, _nrt=False, inline="always")
def set_ground_acceleration(grav, out):
    """``out[0] = [0; -g]``: gravity as the ground's spatial acceleration (ground frame)."""
    for i in range(3):
        out[0, i] = 0.0
        out[0, 3 + i] = -grav[i]


@njit(cache=True, _nrt=False, inline="always")
def set_acceleration(R, p, k, parent, A, g0, c, out):
    """``out[k] = phi*(parent, k) A(parent) + c[k]`` (the ground's ``g0[0]`` for a root)."""
    if parent[k] < 0:
        motion_to_child(R, p, k, g0, 0, out, k)
    else:
        motion_to_child(R, p, k, A, parent[k], out, k)
    for i in range(6):
        out[k, i] += c[k, i]


@njit(cache=True, _nrt=False, inline="always")
def rnea(m, w, q, v, a, f_ext, tau):
    """Inverse dynamics ``tau = M(q) a + C(q, v) - sum J^T f_ext`` into tau (nv,)."""
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, S, A, f, c, z, g0 = w[0], w[1], w[2], w[4], w[5], w[6], w[8], w[18][3:4]
    velocity_pass(m, w, q, v, f_ext)
    set_ground_acceleration(grav, g0)
    n = parent.shape[0]
    # base-to-tips scatter
    for k in range(n):
        set_acceleration(R, p, k, parent, A, g0, c, A)
        add_subspace_motion(kind, S, S_const, v_off, k, a, A, k)
        set_inertia_times(M_body, k, A, k, f, k)
        for i in range(6):
            f[k, i] += z[k, i]
    # tips-to-base gather
    for k in range(n - 1, -1, -1):
        o = v_off[k]
        for r in range(v_off[k + 1] - o):
            s = arm[o + r] * a[o + r]
            for i in range(6):
                s += subspace(kind, S, S_const, k, r, i) * f[k, i]
            tau[o + r] = s
        if parent[k] >= 0:
            add_force_to_parent(R, p, k, f, k, f, parent[k])


@njit(cache=True, _nrt=False, inline="always")
def crba(m, w, q, M):
    """Mass matrix M(q) (nv, nv) by composite inertias (seed 001 Algorithms 4.1-4.2), in the ground frame.

    Composite inertias and motion subspaces taken to the ground frame (as Pinocchio's
    ``crba``) make the gather a sum of 3+3 inertias and each entry
    ``M(j, k) = H(j) R(k) H*(k)`` (and its mirror ``M(k, j)``) a dot product of (6,) vectors, with no
    transform along the path from k to the root.
    """
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, S, oR, op, P, J, F, Y = w[0], w[1], w[2], w[13], w[14], w[7], w[9], w[15], w[17]
    n = parent.shape[0]
    for k in range(n):
        joint_pose(kind, q_off, ax, ax2, e1, e2, PR, Pp, k, q, F, R, p, S)
        set_ground_pose(R, p, parent, k, oR, op)
        set_ground_subspace(kind, S, S_const, v_off, oR, op, k, J)
        set_rigid_inertia_moved(oR, op, k, M_body, P, k, Y)
    nv = M.shape[0]
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    # tips-to-base gather: row and column k of M, from the diagonal block up the path to the root;
    # the force F = R(k) H*(k)[c] is kept in scalars (stores into M would reload it from memory)
    for k in range(n - 1, -1, -1):
        o = v_off[k]
        for c in range(v_off[k + 1] - o):
            f0, f1, f2, f3, f4, f5 = rigid_inertia_times(P, k, J, k, c)
            j = k
            while j >= 0:
                oj = v_off[j]
                for r in range(v_off[j + 1] - oj):
                    s = (J[j, r, 0] * f0 + J[j, r, 1] * f1 + J[j, r, 2] * f2
                         + J[j, r, 3] * f3 + J[j, r, 4] * f4 + J[j, r, 5] * f5)
                    M[o + c, oj + r] = s
                    M[oj + r, o + c] = s
                j = parent[j]
            M[o + c, o + c] += arm[o + c]
        pk = parent[k]
        if pk >= 0:
            for r in range(5):
                for c in range(3):
                    P[pk, r, c] += P[k, r, c]


@njit(cache=True, _nrt=False, inline="always")
def set_ground_pose(R, p, parent, k, oR, op):
    """Ground-frame pose ``oR[k] = oR[parent] R[k]``, ``op[k] = op[parent] + oR[parent] p[k]`` of body k."""
    pk = parent[k]
    if pk < 0:
        for i in range(3):
            for j in range(3):
                oR[k, i, j] = R[k, i, j]
            op[k, i] = p[k, i]
        return
    for i in range(3):
        for j in range(3):
            oR[k, i, j] = oR[pk, i, 0] * R[k, 0, j] + oR[pk, i, 1] * R[k, 1, j] + oR[pk, i, 2] * R[k, 2, j]
        op[k, i] = op[pk, i] + oR[pk, i, 0] * p[k, 0] + oR[pk, i, 1] * p[k, 1] + oR[pk, i, 2] * p[k, 2]


@njit(cache=True, _nrt=False, inline="always")
def set_ground_subspace(kind, S, S_const, v_off, oR, op, k, J):
    """Rows ``J[k, r]`` = H(k)[r] in the ground frame, about the ground origin: ``[oR w; oR v + op x oR w]``."""
    for r in range(v_off[k + 1] - v_off[k]):
        for i in range(3):
            a, b = 0.0, 0.0
            for j in range(3):
                a += oR[k, i, j] * subspace(kind, S, S_const, k, r, j)
                b += oR[k, i, j] * subspace(kind, S, S_const, k, r, 3 + j)
            J[k, r, i], J[k, r, 3 + i] = a, b
        w0, w1, w2 = J[k, r, 0], J[k, r, 1], J[k, r, 2]
        J[k, r, 3] += op[k, 1] * w2 - op[k, 2] * w1
        J[k, r, 4] += op[k, 2] * w0 - op[k, 0] * w2
        J[k, r, 5] += op[k, 0] * w1 - op[k, 1] * w0


@njit(cache=True, _nrt=False, inline="always")
def articulated_inertia(kind, v_off, arm, S, S_const, P, PH, Dinv, G, k):
    """``PH = P H*``, ``D = H P H* + armature`` inverted in place, ``G = P H* D^-1`` of node k.

    Seed 001 Eq. 33; returns ``log det D(k)``.  One coordinate: ``D`` is a scalar.
    """
    o = v_off[k]
    nk = v_off[k + 1] - o
    if nk == 1:
        d = arm[o]
        for i in range(6):
            s = 0.0
            for j in range(6):
                s += P[k, i, j] * S_const[k, 0, j]
            PH[k, i, 0] = s
            d += S_const[k, 0, i] * s
        Dinv[k, 0, 0] = 1.0 / d
        for i in range(6):
            G[k, i, 0] = PH[k, i, 0] / d
        return np.log(d)
    for c in range(nk):
        for i in range(6):
            s = 0.0
            for j in range(6):
                s += P[k, i, j] * subspace(kind, S, S_const, k, c, j)
            PH[k, i, c] = s
    for r in range(nk):
        for c in range(nk):
            s = arm[o + r] if r == c else 0.0
            for i in range(6):
                s += subspace(kind, S, S_const, k, r, i) * PH[k, i, c]
            Dinv[k, r, c] = s
    logdet = invert_spd(Dinv, k, nk)
    for i in range(6):
        for c in range(nk):
            s = 0.0
            for r in range(nk):
                s += PH[k, i, r] * Dinv[k, r, c]
            G[k, i, c] = s
    return logdet


@njit(cache=True, _nrt=False, inline="always")
def set_projected_inertia(P, PH, G, k, nk, out):
    """``out = P[k] - G[k] (P H*)[k]^T = tau_bar P`` (P+ of seed 001 Eq. 33), symmetric."""
    for i in range(6):
        for j in range(i + 1):
            s = P[k, i, j]
            for c in range(nk):
                s -= G[k, i, c] * PH[k, j, c]
            out[i, j] = s
            out[j, i] = s


@njit(cache=True, _nrt=False, inline="always")
def aba(m, w, q, v, tau, f_ext, qdd):
    """Forward dynamics ``qdd = M^-1 (tau - C(q, v))`` (seed 001 Algorithm 6.1) into qdd (nv,)."""
    parent, kind, q_off, v_off, PR, Pp, ax, ax2, e1, e2, S_const, M_body, grav, arm = m
    R, p, S, A, c, P, z, PH, Dinv, G, eps = w[0], w[1], w[2], w[4], w[6], w[7], w[8], w[9], w[10], w[11], w[12]
    F, Y, vec = w[15], w[17], w[18]
    velocity_pass(m, w, q, v, f_ext)
    n = parent.shape[0]
    for k in range(n):
        for i in range(6):
            for j in range(6):
                P[k, i, j] = M_body[k, i, j]
    # tips-to-base gather (Eqs. 58a-d)
    for k in range(n - 1, -1, -1):
        o = v_off[k]
        nk = v_off[k + 1] - o
        articulated_inertia(kind, v_off, arm, S, S_const, P, PH, Dinv, G, k)
        for r in range(nk):
            s = tau[o + r]
            for i in range(6):
                s -= subspace(kind, S, S_const, k, r, i) * z[k, i]
            eps[k, r] = s
        if parent[k] >= 0:
            set_projected_inertia(P, PH, G, k, nk, F)
            for i in range(6):
                s = z[k, i]
                for j in range(6):
                    s += F[i, j] * c[k, j]
                for r in range(nk):
                    s += G[k, i, r] * eps[k, r]
                vec[2, i] = s
            add_force_to_parent(R, p, k, vec, 2, z, parent[k])
            add_inertia_to_parent(R, p, k, F, P, parent[k], Y)
    # base-to-tips scatter (Eqs. 58e-g)
    g0 = vec[3:4]
    set_ground_acceleration(grav, g0)
    for k in range(n):
        set_acceleration(R, p, k, parent, A, g0, c, A)
        o = v_off[k]
        nk = v_off[k + 1] - o
        for j in range(nk):
            t = eps[k, j]
            for i in range(6):
                t -= PH[k, i, j] * A[k, i]
            vec[4, j] = t
        for r in range(nk):
            s = 0.0
            for j in range(nk):
                s += Dinv[k, r, j] * vec[4, j]
            qdd[o + r] = s
        add_subspace_motion(kind, S, S_const, v_off, k, qdd, A, k)


#: The recursions compiled as functions of their own (a call, not inlined), for callers compiled
#: with numba's reference counting (``mass_matrix_and_bias``, the simulator, the closed-chain
#: kernels): inlined there, every array view the recursion unpacks would get atomic reference
#: count updates again (the four-bar's embedded forward dynamics went from 4.7 to 5.9 us, the
#: seeker's simulation from 10 to 13 ms), and the call costs 0.25 us (see the module docstring).
#: Not cached on their own (numba's cache index would not tell them from the inlined functions of
#: the same source); their cached callers hold their machine code.
rnea_call = njit(_nrt=False)(rnea.py_func)
crba_call = njit(_nrt=False)(crba.py_func)
aba_call = njit(_nrt=False)(aba.py_func)
