"""Compiled spatial algebra and joint kinematics on flat arrays (numba, angular first).

The same conventions as :mod:`dynamics.spatial` and :mod:`dynamics.joints`: a body's
pose in its parent is ``(R, p)`` with ``R = R_parent_k`` and ``p`` the origin of k
in the parent frame; ``phi(parent, k) = [[R, ~p R], [0, R]]`` (seed 002 Eq. 4) maps
forces to the parent and ``phi*`` maps velocities to the child.  Every helper
writes into arrays it is given (no allocation), so that the recursions of
:mod:`dynamics.compiled.tree_kernels` allocate nothing per body.
"""

from __future__ import annotations

import numpy as np
from numba import njit

FIXED, REVOLUTE, PRISMATIC, CYLINDRICAL, UNIVERSAL, SPHERICAL, PLANAR, FREE = range(8)


@njit(cache=True)
def rotation_about(a, angle, out, row):
    """Rodrigues: ``out[row:row+3, :3] = cos I + sin ~a + (1 - cos) a a^T``; a (3,) unit."""
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    x, y, z = a[0], a[1], a[2]
    out[row, 0], out[row, 1], out[row, 2] = c + t * x * x, t * x * y - s * z, t * x * z + s * y
    out[row + 1, 0], out[row + 1, 1], out[row + 1, 2] = t * x * y + s * z, c + t * y * y, t * y * z - s * x
    out[row + 2, 0], out[row + 2, 1], out[row + 2, 2] = t * x * z - s * y, t * y * z + s * x, c + t * z * z


@njit(cache=True)
def rotation_of_quaternion(q, o, out):
    """``out[:3, :3]`` = rotation of the quaternion ``q[o:o+4] = [w, x, y, z]`` (normalised first)."""
    w, x, y, z = q[o], q[o + 1], q[o + 2], q[o + 3]
    s = 1.0 / np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w * s, x * s, y * s, z * s
    out[0, 0], out[0, 1], out[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)
    out[1, 0], out[1, 1], out[1, 2] = 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)
    out[2, 0], out[2, 1], out[2, 2] = 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)


@njit(cache=True)
def joint_pose(kind, q_off, ax, ax2, e1, e2, PR, Pp, S_const, k, q, F, R, p, S):
    """Pose ``(R[k], p[k])`` of body k in its parent at q, and ``S[k]`` for a universal joint.

    The joint motion ``(R_J, p_J)`` of :func:`dynamics.joints.transform` (built in the
    scratch ``F``) is composed with the joint placement: ``R = R_place R_J``,
    ``p = p_place + R_place p_J``.

    Returns
    -------
    (6, 6) array whose rows 0..n_k-1 are H(k) at q (body frame)
    """
    o = q_off[k]
    kd = kind[k]
    for i in range(3):
        for j in range(3):
            F[i, j] = 1.0 if i == j else 0.0
        F[3, i] = 0.0
    if kd == REVOLUTE:
        rotation_about(ax[k], q[o], F, 0)
    elif kd == PRISMATIC:
        for i in range(3):
            F[3, i] = q[o] * ax[k, i]
    elif kd == CYLINDRICAL:
        rotation_about(ax[k], q[o], F, 0)
        for i in range(3):
            F[3, i] = q[o + 1] * ax[k, i]
    elif kd == UNIVERSAL:
        universal_pose(ax[k], ax2[k], q[o], q[o + 1], F, S[k])
    elif kd == SPHERICAL:
        rotation_of_quaternion(q, o, F)
    elif kd == PLANAR:
        rotation_about(ax[k], q[o + 2], F, 0)
        for i in range(3):
            F[3, i] = q[o] * e1[k, i] + q[o + 1] * e2[k, i]
    elif kd == FREE:
        rotation_of_quaternion(q, o + 3, F)
        for i in range(3):
            F[3, i] = q[o + i]
    f00, f01, f02, f10, f11, f12 = F[0, 0], F[0, 1], F[0, 2], F[1, 0], F[1, 1], F[1, 2]
    f20, f21, f22, t0, t1, t2 = F[2, 0], F[2, 1], F[2, 2], F[3, 0], F[3, 1], F[3, 2]
    for i in range(3):
        a0, a1, a2 = PR[k, i, 0], PR[k, i, 1], PR[k, i, 2]
        R[k, i, 0] = a0 * f00 + a1 * f10 + a2 * f20
        R[k, i, 1] = a0 * f01 + a1 * f11 + a2 * f21
        R[k, i, 2] = a0 * f02 + a1 * f12 + a2 * f22
        p[k, i] = Pp[k, i] + a0 * t0 + a1 * t1 + a2 * t2
    if kd == UNIVERSAL:
        return S[k]
    return S_const[k]


@njit(cache=True)
def universal_pose(a1, a2, q1, q2, F, Sk):
    """``R_J = Rot(a1, q1) Rot(a2, q2)`` into ``F[:3, :3]``; H rows ``[R2^T a1; 0]``, ``[a2; 0]``."""
    rotation_about(a1, q1, F, 0)
    rotation_about(a2, q2, F, 3)
    for i in range(3):
        r0, r1, r2 = F[i, 0], F[i, 1], F[i, 2]
        for j in range(3):
            F[i, j] = r0 * F[3, j] + r1 * F[4, j] + r2 * F[5, j]
    for j in range(6):
        Sk[0, j] = 0.0
        Sk[1, j] = 0.0
    for i in range(3):
        Sk[0, i] = F[3, i] * a1[0] + F[4, i] * a1[1] + F[5, i] * a1[2]
        Sk[1, i] = a2[i]
    for i in range(3):
        F[3, i] = 0.0


@njit(cache=True)
def add_universal_bias(a2, Sk, v1, v2, out):
    """``out += S_dot v = [-(v1 v2) a2 x h1; 0]`` with ``h1 = R2^T a1`` (see ``joints.universal_cJ``)."""
    s = -v1 * v2
    h = Sk[0]
    out[0] += s * (a2[1] * h[2] - a2[2] * h[1])
    out[1] += s * (a2[2] * h[0] - a2[0] * h[2])
    out[2] += s * (a2[0] * h[1] - a2[1] * h[0])


@njit(cache=True)
def motion_to_child(R, p, V, out):
    """``out = phi*(parent, k) V = [R^T w; R^T (v + w x p)]`` for V = [w; v] in the parent frame."""
    w0, w1, w2 = V[0], V[1], V[2]
    u0 = V[3] + w1 * p[2] - w2 * p[1]
    u1 = V[4] + w2 * p[0] - w0 * p[2]
    u2 = V[5] + w0 * p[1] - w1 * p[0]
    for i in range(3):
        out[i] = R[0, i] * w0 + R[1, i] * w1 + R[2, i] * w2
        out[3 + i] = R[0, i] * u0 + R[1, i] * u1 + R[2, i] * u2


@njit(cache=True)
def add_force_to_parent(R, p, f, out):
    """``out += phi(parent, k) f = [R n + p x (R F); R F]`` for f = [n; F] in the child frame."""
    n0 = R[0, 0] * f[0] + R[0, 1] * f[1] + R[0, 2] * f[2]
    n1 = R[1, 0] * f[0] + R[1, 1] * f[1] + R[1, 2] * f[2]
    n2 = R[2, 0] * f[0] + R[2, 1] * f[1] + R[2, 2] * f[2]
    g0 = R[0, 0] * f[3] + R[0, 1] * f[4] + R[0, 2] * f[5]
    g1 = R[1, 0] * f[3] + R[1, 1] * f[4] + R[1, 2] * f[5]
    g2 = R[2, 0] * f[3] + R[2, 1] * f[4] + R[2, 2] * f[5]
    out[0] += n0 + p[1] * g2 - p[2] * g1
    out[1] += n1 + p[2] * g0 - p[0] * g2
    out[2] += n2 + p[0] * g1 - p[1] * g0
    out[3] += g0
    out[4] += g1
    out[5] += g2


@njit(cache=True)
def force_columns_to_parent(R, p, X, ncol):
    """Columns ``X[:, :ncol]`` (forces in the child frame) replaced by ``phi(parent, k) X``."""
    for c in range(ncol):
        f0, f1, f2, f3, f4, f5 = X[0, c], X[1, c], X[2, c], X[3, c], X[4, c], X[5, c]
        g0 = R[0, 0] * f3 + R[0, 1] * f4 + R[0, 2] * f5
        g1 = R[1, 0] * f3 + R[1, 1] * f4 + R[1, 2] * f5
        g2 = R[2, 0] * f3 + R[2, 1] * f4 + R[2, 2] * f5
        X[0, c] = R[0, 0] * f0 + R[0, 1] * f1 + R[0, 2] * f2 + p[1] * g2 - p[2] * g1
        X[1, c] = R[1, 0] * f0 + R[1, 1] * f1 + R[1, 2] * f2 + p[2] * g0 - p[0] * g2
        X[2, c] = R[2, 0] * f0 + R[2, 1] * f1 + R[2, 2] * f2 + p[0] * g1 - p[1] * g0
        X[3, c], X[4, c], X[5, c] = g0, g1, g2


@njit(cache=True)
def set_rotated_block(R, I, r0, c0, Y, y0, x0):
    """``Y[y0:y0+3, x0:x0+3] = R I[r0:r0+3, c0:c0+3] R^T``."""
    t00 = I[r0 + 0, c0] * R[0, 0] + I[r0 + 0, c0 + 1] * R[0, 1] + I[r0 + 0, c0 + 2] * R[0, 2]
    t01 = I[r0 + 0, c0] * R[1, 0] + I[r0 + 0, c0 + 1] * R[1, 1] + I[r0 + 0, c0 + 2] * R[1, 2]
    t02 = I[r0 + 0, c0] * R[2, 0] + I[r0 + 0, c0 + 1] * R[2, 1] + I[r0 + 0, c0 + 2] * R[2, 2]
    t10 = I[r0 + 1, c0] * R[0, 0] + I[r0 + 1, c0 + 1] * R[0, 1] + I[r0 + 1, c0 + 2] * R[0, 2]
    t11 = I[r0 + 1, c0] * R[1, 0] + I[r0 + 1, c0 + 1] * R[1, 1] + I[r0 + 1, c0 + 2] * R[1, 2]
    t12 = I[r0 + 1, c0] * R[2, 0] + I[r0 + 1, c0 + 1] * R[2, 1] + I[r0 + 1, c0 + 2] * R[2, 2]
    t20 = I[r0 + 2, c0] * R[0, 0] + I[r0 + 2, c0 + 1] * R[0, 1] + I[r0 + 2, c0 + 2] * R[0, 2]
    t21 = I[r0 + 2, c0] * R[1, 0] + I[r0 + 2, c0 + 1] * R[1, 1] + I[r0 + 2, c0 + 2] * R[1, 2]
    t22 = I[r0 + 2, c0] * R[2, 0] + I[r0 + 2, c0 + 1] * R[2, 1] + I[r0 + 2, c0 + 2] * R[2, 2]
    Y[y0 + 0, x0 + 0] = R[0, 0] * t00 + R[0, 1] * t10 + R[0, 2] * t20
    Y[y0 + 0, x0 + 1] = R[0, 0] * t01 + R[0, 1] * t11 + R[0, 2] * t21
    Y[y0 + 0, x0 + 2] = R[0, 0] * t02 + R[0, 1] * t12 + R[0, 2] * t22
    Y[y0 + 1, x0 + 0] = R[1, 0] * t00 + R[1, 1] * t10 + R[1, 2] * t20
    Y[y0 + 1, x0 + 1] = R[1, 0] * t01 + R[1, 1] * t11 + R[1, 2] * t21
    Y[y0 + 1, x0 + 2] = R[1, 0] * t02 + R[1, 1] * t12 + R[1, 2] * t22
    Y[y0 + 2, x0 + 0] = R[2, 0] * t00 + R[2, 1] * t10 + R[2, 2] * t20
    Y[y0 + 2, x0 + 1] = R[2, 0] * t01 + R[2, 1] * t11 + R[2, 2] * t21
    Y[y0 + 2, x0 + 2] = R[2, 0] * t02 + R[2, 1] * t12 + R[2, 2] * t22


@njit(cache=True)
def add_inertia_to_parent(R, p, I, out, Y):
    """``out += phi(parent, k) I phi*(parent, k)`` for a symmetric (6, 6) I; Y (6, 6) scratch.

    With ``I = [[A, B], [B^T, C]]`` rotated to ``A', B', C'`` (``R X R^T``) and
    ``BC = B' + ~p C'``: ``phi I phi* = [[A' + ~p B'^T - BC ~p, BC], [BC^T, C']]``.
    """
    set_rotated_block(R, I, 0, 0, Y, 0, 0)
    set_rotated_block(R, I, 0, 3, Y, 0, 3)
    set_rotated_block(R, I, 3, 3, Y, 3, 3)
    p0, p1, p2 = p[0], p[1], p[2]
    for j in range(3):
        c0, c1, c2 = Y[3, 3 + j], Y[4, 3 + j], Y[5, 3 + j]
        Y[3, j] = Y[0, 3 + j] + p1 * c2 - p2 * c1
        Y[4, j] = Y[1, 3 + j] + p2 * c0 - p0 * c2
        Y[5, j] = Y[2, 3 + j] + p0 * c1 - p1 * c0
    for i in range(3):
        x0, x1, x2 = Y[3 + i, 0], Y[3 + i, 1], Y[3 + i, 2]
        q0, q1, q2 = x1 * p2 - x2 * p1, x2 * p0 - x0 * p2, x0 * p1 - x1 * p0
        for j in range(3):
            b0, b1, b2 = Y[j, 3], Y[j, 4], Y[j, 5]
            pb = (p1 * b2 - p2 * b1, p2 * b0 - p0 * b2, p0 * b1 - p1 * b0)
            out[i, j] += Y[i, j] + pb[i] - (q0 if j == 0 else (q1 if j == 1 else q2))
    for i in range(3):
        for j in range(3):
            out[i, 3 + j] += Y[3 + i, j]
            out[3 + j, i] += Y[3 + i, j]
            out[3 + i, 3 + j] += Y[3 + i, 3 + j]


@njit(cache=True)
def add_motion_cross(V, U, out):
    """``out += V x U = [w x u_w; v x u_w + w x u_v]`` (crm(V) U)."""
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    out[0] += w1 * U[2] - w2 * U[1]
    out[1] += w2 * U[0] - w0 * U[2]
    out[2] += w0 * U[1] - w1 * U[0]
    out[3] += v1 * U[2] - v2 * U[1] + w1 * U[5] - w2 * U[4]
    out[4] += v2 * U[0] - v0 * U[2] + w2 * U[3] - w0 * U[5]
    out[5] += v0 * U[1] - v1 * U[0] + w0 * U[4] - w1 * U[3]


@njit(cache=True)
def add_force_cross(V, f, out):
    """``out += crf(V) f = [w x n + v x F; w x F]``."""
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    out[0] += w1 * f[2] - w2 * f[1] + v1 * f[5] - v2 * f[4]
    out[1] += w2 * f[0] - w0 * f[2] + v2 * f[3] - v0 * f[5]
    out[2] += w0 * f[1] - w1 * f[0] + v0 * f[4] - v1 * f[3]
    out[3] += w1 * f[5] - w2 * f[4]
    out[4] += w2 * f[3] - w0 * f[5]
    out[5] += w0 * f[4] - w1 * f[3]


@njit(cache=True)
def set_product(M, x, out):
    """``out = M x`` for M (6, 6) and x (6,)."""
    for i in range(6):
        out[i] = (M[i, 0] * x[0] + M[i, 1] * x[1] + M[i, 2] * x[2]
                  + M[i, 3] * x[3] + M[i, 4] * x[4] + M[i, 5] * x[5])


@njit(cache=True)
def set_subspace_motion(Sk, nk, x, o, out):
    """``out = H*(k) x[o:o+n_k] = sum_i x[o+i] S_i`` (6,)."""
    for j in range(6):
        out[j] = 0.0
    for i in range(nk):
        xi = x[o + i]
        for j in range(6):
            out[j] += xi * Sk[i, j]


@njit(cache=True)
def invert_spd(D, nk):
    """In-place inverse of the SPD block ``D[:nk, :nk]`` (Gauss-Jordan); returns ``log det D``."""
    logdet = 0.0
    for i in range(nk):
        piv = D[i, i]
        logdet += np.log(piv)
        inv = 1.0 / piv
        D[i, i] = 1.0
        for j in range(nk):
            D[i, j] *= inv
        for r in range(nk):
            if r != i:
                fac = D[r, i]
                D[r, i] = 0.0
                for j in range(nk):
                    D[r, j] -= fac * D[i, j]
    return logdet
