"""Compiled recursions of the rigid-body tree: RNEA, CRBA, ABA (numba, one configuration).

The kernels are the numpy algorithms of :mod:`dynamics.rnea`, :mod:`dynamics.crba` and
:mod:`dynamics.aba` written over the named fields of
:class:`dynamics.compiled.layout.FlatModel` (``m``, :data:`layout.ModelFields`) and of the work
array of a :class:`dynamics.compiled.layout.Data` (``w``, :data:`layout.WorkFields`), one
configuration per call, each quantity in the field of its name in the numpy reference:

* ``velocity_pass`` -- the base-to-tips pass RNEA and ABA share: poses ``R, p``, velocities
  ``V(k) = phi*(parent, k) V(parent) + H*(k) theta_dot(k)``, velocity-product
  accelerations ``a(k) = V(k) x H*(k) theta_dot(k)`` and bias forces
  ``b(k) = V(k) x* M(k) V(k) - f_ext(k)``;
* ``rnea`` -- seed 001 Algorithm 3.1 (Eq. 10): base-to-tips scatter
  ``alpha(k) = phi*(parent, k) alpha(parent) + H*(k) theta_ddot(k) + a(k)``,
  ``f(k) = M(k) alpha(k) + b(k)``, tips-to-base gather ``T(k) = H(k) f(k)``;
* ``crba`` -- seed 001 Algorithms 4.1-4.2: composite inertias
  ``R(k) = sum phi(k, i) R(i) phi*(k, i) + M(k)`` (rigid, so kept in 3+3 form: the fields
  ``R_composite_m``, ``R_composite_h``, ``R_composite_I``: mass, first moment, rotational
  inertia) and ``M(j, k) = H(j) phi(j, k) R(k) H*(k)``, both in the ground frame, each entry
  written to both triangles;
* ``aba`` -- seed 001 Algorithm 6.1 (Eqs. 33, 58a-g): the Riccati gather of
  ``P, D, G`` with the residual forces ``z`` (starting from ``b``), ``eps``, then the scatter of
  ``theta_ddot``.

One-coordinate joints (revolute, continuous, prismatic: ``H(k)`` one row ``s``) take
a specialised path: ``U = P s*`` a (6,) column, ``D = s U + armature`` a scalar, no
matrix inverse.  Every per-body helper takes whole arrays and row indices rather than
row views.  The kernels here and in :mod:`dynamics.compiled.spatial_kernels` neither
allocate nor return arrays, so they are compiled without numba's reference counting
(:mod:`dynamics.compiled.jit`): the atomic reference count updates of the arrays a function
receives and the views it takes were half of the time of ``crba`` (``perf record``).  They are
also inlined into the entries of :mod:`dynamics.compiled.entry_kernels` (``inline="always"``,
numba IR): a call of its own would receive the model and work fields as two named tuples of
some 50 array structs, copied onto the stack and read back from it at every call (0.25 us of
panda's 1.5 us ``crba`` with the 33 of an earlier layout).  Every other caller calls those
entries, which take the packed arrays.

Gravity is the ground acceleration ``alpha_ground = [0; -g]`` carried to the roots; external forces
``f_ext`` (n, 6) (body frames, about the body origin, moment first; an empty (0, 6)
array for none) are subtracted from ``b``; ``armature`` adds to the diagonal of M.
"""

from __future__ import annotations

import numpy as np

from .jit import inline
from .spatial_kernels import (UNIVERSAL, add_force_cross, add_force_to_parent, add_inertia_to_parent,
                              add_universal_bias, invert_spd, joint_pose, motion_to_child, rigid_inertia_times,
                              set_inertia_times, set_motion_cross, set_rigid_inertia_moved, subspace)


@inline
def velocity_pass(m, w, q, v, f_ext):
    """Poses ``(w.R, w.p)``, velocities ``w.V``, velocity-product accelerations ``w.a`` and bias forces
    ``w.b = V x* M V - f_ext`` of every body (body frames)."""
    V, a, b, vJ, MV = w.V, w.a, w.b, w.vJ, w.MV
    has_fext = f_ext.shape[0] > 0
    for k in range(m.parent.shape[0]):
        joint_pose(m, w, k, q)
        for i in range(6):
            vJ[0, i] = 0.0
        add_subspace_motion(m, w, k, v, vJ, 0)     # vJ = H* theta_dot
        pk = m.parent[k]
        if pk < 0:
            for i in range(6):
                V[k, i] = vJ[0, i]
        else:
            motion_to_child(w.R, w.p, k, V, pk, V, k)
            for i in range(6):
                V[k, i] += vJ[0, i]
        set_motion_cross(V, k, vJ, 0, a, k)
        if m.kind[k] == UNIVERSAL:
            o = m.v_offset[k]
            add_universal_bias(m.axis2, w.S, k, v[o], v[o + 1], a, k)
        set_inertia_times(m.M_body, k, V, k, MV, 0)
        for i in range(6):
            b[k, i] = -f_ext[k, i] if has_fext else 0.0
        add_force_cross(V, k, MV, 0, b, k)


@inline
def add_subspace_motion(m, w, k, x, out, j):
    """``out[j] += H*(k) x[o:o+n_k]`` (o, n_k: the velocity offset and count of joint k); one
    coordinate: ``x[o] s`` with s the constant row of H(k)."""
    o = m.v_offset[k]
    nk = m.v_offset[k + 1] - o
    if nk == 1:
        xo = x[o]
        for i in range(6):
            out[j, i] += xo * m.S_const[k, 0, i]
        return
    for r in range(nk):
        xr = x[o + r]
        for i in range(6):
            out[j, i] += xr * subspace(m, w, k, r, i)


@inline
def set_ground_acceleration(gravity, out):
    """``out[0] = [0; -g]``: gravity as the ground's spatial acceleration (ground frame)."""
    for i in range(3):
        out[0, i] = 0.0
        out[0, 3 + i] = -gravity[i]


@inline
def set_acceleration(m, w, k):
    """``alpha(k) = phi*(parent, k) alpha(parent) + a(k)`` (the ground's ``alpha_ground`` for a root)."""
    pk = m.parent[k]
    if pk < 0:
        motion_to_child(w.R, w.p, k, w.alpha_ground, 0, w.alpha, k)
    else:
        motion_to_child(w.R, w.p, k, w.alpha, pk, w.alpha, k)
    for i in range(6):
        w.alpha[k, i] += w.a[k, i]


@inline
def rnea(m, w, q, v, theta_ddot, f_ext, tau):
    """Inverse dynamics ``tau = M(q) theta_ddot + C(q, v) - sum J^T f_ext`` into tau (nv,)."""
    alpha, f, b, v_off = w.alpha, w.f, w.b, m.v_offset
    velocity_pass(m, w, q, v, f_ext)
    set_ground_acceleration(m.gravity, w.alpha_ground)
    n = m.parent.shape[0]
    # base-to-tips scatter
    for k in range(n):
        set_acceleration(m, w, k)
        add_subspace_motion(m, w, k, theta_ddot, alpha, k)
        set_inertia_times(m.M_body, k, alpha, k, f, k)
        for i in range(6):
            f[k, i] += b[k, i]
    # tips-to-base gather
    for k in range(n - 1, -1, -1):
        o = v_off[k]
        for r in range(v_off[k + 1] - o):
            s = m.armature[o + r] * theta_ddot[o + r]
            for i in range(6):
                s += subspace(m, w, k, r, i) * f[k, i]
            tau[o + r] = s
        if m.parent[k] >= 0:
            add_force_to_parent(w.R, w.p, k, f, k, f, m.parent[k])


@inline
def crba(m, w, q, M):
    """Mass matrix M(q) (nv, nv) by composite inertias (seed 001 Algorithms 4.1-4.2), in the ground frame.

    Composite inertias and motion subspaces taken to the ground frame (as Pinocchio's
    ``crba``) make the gather a sum of 3+3 inertias and each entry
    ``M(j, k) = H(j) R(k) H*(k)`` (and its mirror ``M(k, j)``) a dot product of (6,) vectors, with no
    transform along the path from k to the root.
    """
    parent, v_off, arm, oS = m.parent, m.v_offset, m.armature, w.oS
    I, h, mass = w.R_composite_I, w.R_composite_h, w.R_composite_m
    n = parent.shape[0]
    for k in range(n):
        joint_pose(m, w, k, q)
        set_ground_pose(w.R, w.p, parent, k, w.oR, w.op)
        set_ground_subspace(m, w, k)
        set_rigid_inertia_moved(w.oR, w.op, k, m.M_body, I, h, mass, k, w.inertia_scratch)
    nv = M.shape[0]
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    # tips-to-base gather: row and column k of M, from the diagonal block up the path to the root;
    # the force F = R(k) H*(k)[c] is kept in scalars (stores into M would reload it from memory)
    for k in range(n - 1, -1, -1):
        o = v_off[k]
        for c in range(v_off[k + 1] - o):
            f0, f1, f2, f3, f4, f5 = rigid_inertia_times(I, h, mass, k, oS, k, c)
            j = k
            while j >= 0:
                oj = v_off[j]
                for r in range(v_off[j + 1] - oj):
                    s = (oS[j, r, 0] * f0 + oS[j, r, 1] * f1 + oS[j, r, 2] * f2
                         + oS[j, r, 3] * f3 + oS[j, r, 4] * f4 + oS[j, r, 5] * f5)
                    M[o + c, oj + r] = s
                    M[oj + r, o + c] = s
                j = parent[j]
            M[o + c, o + c] += arm[o + c]
        pk = parent[k]
        if pk >= 0:
            for r in range(3):
                for c in range(3):
                    I[pk, r, c] += I[k, r, c]
                h[pk, r] += h[k, r]
            mass[pk] += mass[k]


@inline
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


@inline
def set_ground_subspace(m, w, k):
    """Rows ``w.oS[k, r]`` = H(k)[r] in the ground frame, about the ground origin: ``[oR w; oR v + op x oR w]``."""
    oR, op, oS = w.oR, w.op, w.oS
    for r in range(m.v_offset[k + 1] - m.v_offset[k]):
        for i in range(3):
            a, b = 0.0, 0.0
            for j in range(3):
                a += oR[k, i, j] * subspace(m, w, k, r, j)
                b += oR[k, i, j] * subspace(m, w, k, r, 3 + j)
            oS[k, r, i], oS[k, r, 3 + i] = a, b
        w0, w1, w2 = oS[k, r, 0], oS[k, r, 1], oS[k, r, 2]
        oS[k, r, 3] += op[k, 1] * w2 - op[k, 2] * w1
        oS[k, r, 4] += op[k, 2] * w0 - op[k, 0] * w2
        oS[k, r, 5] += op[k, 0] * w1 - op[k, 1] * w0


@inline
def articulated_inertia(m, w, k):
    """``PH = P H*``, ``D = H P H* + armature`` inverted in place (``Dinv``), ``G = P H* D^-1`` of node k.

    Seed 001 Eq. 33; returns ``log det D(k)``.  One coordinate: ``D`` is a scalar.
    """
    P, PH, Dinv, G, S_const = w.P, w.PH, w.Dinv, w.G, m.S_const
    o = m.v_offset[k]
    nk = m.v_offset[k + 1] - o
    if nk == 1:
        d = m.armature[o]
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
                s += P[k, i, j] * subspace(m, w, k, c, j)
            PH[k, i, c] = s
    for r in range(nk):
        for c in range(nk):
            s = m.armature[o + r] if r == c else 0.0
            for i in range(6):
                s += subspace(m, w, k, r, i) * PH[k, i, c]
            Dinv[k, r, c] = s
    logdet = invert_spd(Dinv, k, nk)
    for i in range(6):
        for c in range(nk):
            s = 0.0
            for r in range(nk):
                s += PH[k, i, r] * Dinv[k, r, c]
            G[k, i, c] = s
    return logdet


@inline
def set_projected_inertia(w, k, nk):
    """``w.P_plus = P[k] - G[k] (P H*)[k]^T = tau_bar P`` (P+ of seed 001 Eq. 33), symmetric."""
    P, G, PH, out = w.P, w.G, w.PH, w.P_plus
    for i in range(6):
        for j in range(i + 1):
            s = P[k, i, j]
            for c in range(nk):
                s -= G[k, i, c] * PH[k, j, c]
            out[i, j] = s
            out[j, i] = s


@inline
def aba(m, w, q, v, tau, f_ext, theta_ddot):
    """Forward dynamics ``theta_ddot = M^-1 (tau - C(q, v))`` (seed 001 Algorithm 6.1) into theta_ddot (nv,)."""
    parent, v_off = m.parent, m.v_offset
    P, z, eps, PH, Dinv, G, alpha, a, P_plus = w.P, w.z, w.eps, w.PH, w.Dinv, w.G, w.alpha, w.a, w.P_plus
    z_up, eps_alpha = w.z_to_parent, w.eps_alpha
    velocity_pass(m, w, q, v, f_ext)
    n = parent.shape[0]
    for k in range(n):
        for i in range(6):
            z[k, i] = w.b[k, i]
            for j in range(6):
                P[k, i, j] = m.M_body[k, i, j]
    # tips-to-base gather (Eqs. 58a-d)
    for k in range(n - 1, -1, -1):
        o = v_off[k]
        nk = v_off[k + 1] - o
        articulated_inertia(m, w, k)
        for r in range(nk):
            s = tau[o + r]
            for i in range(6):
                s -= subspace(m, w, k, r, i) * z[k, i]
            eps[k, r] = s
        if parent[k] >= 0:
            set_projected_inertia(w, k, nk)
            for i in range(6):
                s = z[k, i]
                for j in range(6):
                    s += P_plus[i, j] * a[k, j]
                for r in range(nk):
                    s += G[k, i, r] * eps[k, r]
                z_up[0, i] = s
            add_force_to_parent(w.R, w.p, k, z_up, 0, z, parent[k])
            add_inertia_to_parent(w.R, w.p, k, P_plus, P, parent[k], w.inertia_scratch)
    # base-to-tips scatter (Eqs. 58e-g)
    set_ground_acceleration(m.gravity, w.alpha_ground)
    for k in range(n):
        set_acceleration(m, w, k)
        o = v_off[k]
        nk = v_off[k + 1] - o
        for j in range(nk):
            t = eps[k, j]
            for i in range(6):
                t -= PH[k, i, j] * alpha[k, i]
            eps_alpha[0, j] = t
        for r in range(nk):
            s = 0.0
            for j in range(nk):
                s += Dinv[k, r, j] * eps_alpha[0, j]
            theta_ddot[o + r] = s
        add_subspace_motion(m, w, k, theta_ddot, alpha, k)
