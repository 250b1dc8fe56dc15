"""Compiled spatial algebra and joint kinematics on flat arrays (numba, angular first).

The same conventions as :mod:`dynamics.spatial` and :mod:`dynamics.joints`: a body's
pose in its parent is ``(R, p)`` with ``R = R_parent_k`` and ``p`` the origin of k
in the parent frame; ``phi(parent, k) = [[R, ~p R], [0, R]]`` (seed 002 Eq. 4) maps
forces to the parent and ``phi*`` maps velocities to the child.  Every helper
writes into arrays it is given and takes whole arrays (or the model and work fields ``m``, ``w``
of :mod:`dynamics.compiled.fields`) and row indices rather than row views (no allocation, no
reference counting: see :mod:`dynamics.compiled.jit`), so that the recursions allocate nothing
per body.
"""

from __future__ import annotations

import numpy as np

from .jit import inline, kernel

FIXED, REVOLUTE, PRISMATIC, CYLINDRICAL, UNIVERSAL, SPHERICAL, PLANAR, FREE = range(8)


@inline
def axis_rotation(ax, k, angle):
    """Rodrigues: the nine entries (row by row) of ``cos I + sin ~a + (1 - cos) a a^T`` for the unit
    axis a = ax[k]."""
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    x, y, z = ax[k, 0], ax[k, 1], ax[k, 2]
    return (c + t * x * x, t * x * y - s * z, t * x * z + s * y,
            t * x * y + s * z, c + t * y * y, t * y * z - s * x,
            t * x * z - s * y, t * y * z + s * x, c + t * z * z)


@inline
def rotation_about(ax, k, angle, out, row):
    """``out[row:row+3, :3]`` = the rotation of :func:`axis_rotation`."""
    r = axis_rotation(ax, k, angle)
    for i in range(3):
        out[row + i, 0], out[row + i, 1], out[row + i, 2] = r[3 * i], r[3 * i + 1], r[3 * i + 2]


@inline
def rotation_of_quaternion(q, o, out):
    """``out[:3, :3]`` = rotation of the quaternion ``q[o:o+4] = [w, x, y, z]`` (normalised first)."""
    w, x, y, z = q[o], q[o + 1], q[o + 2], q[o + 3]
    s = 1.0 / np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w * s, x * s, y * s, z * s
    out[0, 0], out[0, 1], out[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)
    out[1, 0], out[1, 1], out[1, 2] = 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)
    out[2, 0], out[2, 1], out[2, 2] = 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)


@inline
def joint_pose(m, w, k, q):
    """Pose ``(w.R[k], w.p[k])`` of body k in its parent at q, and ``w.S[k]`` (H(k) at q) for a
    universal joint (m, w: :data:`layout.ModelFields`, :data:`layout.WorkFields`).

    The joint motion ``(R_J, p_J)`` of :func:`dynamics.joints.transform` (built in the
    scratch ``w.joint_motion``) is composed with the joint placement: ``R = R_place R_J``,
    ``p = p_place + R_place p_J``.  The motion subspace of every other kind is the
    constant ``S_const[k]`` (see :func:`subspace`).
    """
    o = m.q_offset[k]
    kd = m.kind[k]
    F = w.joint_motion
    if kd == REVOLUTE:   # the common joint: the rotation in scalars, no joint translation
        f00, f01, f02, f10, f11, f12, f20, f21, f22 = axis_rotation(m.axis, k, q[o])
        set_placed_pose(m.placement_R, m.placement_p, k, f00, f01, f02, f10, f11, f12, f20, f21, f22,
                        0.0, 0.0, 0.0, w.R, w.p)
        return
    for i in range(3):
        for j in range(3):
            F[i, j] = 1.0 if i == j else 0.0
        F[3, i] = 0.0
    if kd == PRISMATIC:
        for i in range(3):
            F[3, i] = q[o] * m.axis[k, i]
    elif kd == CYLINDRICAL:
        rotation_about(m.axis, k, q[o], F, 0)
        for i in range(3):
            F[3, i] = q[o + 1] * m.axis[k, i]
    elif kd == UNIVERSAL:
        universal_pose(m.axis, m.axis2, k, q[o], q[o + 1], F, w.S)
    elif kd == SPHERICAL:
        rotation_of_quaternion(q, o, F)
    elif kd == PLANAR:
        rotation_about(m.axis, k, q[o + 2], F, 0)
        for i in range(3):
            F[3, i] = q[o] * m.e1[k, i] + q[o + 1] * m.e2[k, i]
    elif kd == FREE:
        rotation_of_quaternion(q, o + 3, F)
        for i in range(3):
            F[3, i] = q[o + i]
    set_placed_pose(m.placement_R, m.placement_p, k, F[0, 0], F[0, 1], F[0, 2], F[1, 0], F[1, 1], F[1, 2],
                    F[2, 0], F[2, 1], F[2, 2], F[3, 0], F[3, 1], F[3, 2], w.R, w.p)


@inline
def set_placed_pose(PR, Pp, k, f00, f01, f02, f10, f11, f12, f20, f21, f22, t0, t1, t2, R, p):
    """``R[k] = R_place R_J``, ``p[k] = p_place + R_place p_J`` for the joint motion ``R_J = [f_ij]``,
    ``p_J = t`` and the placement ``(PR[k], Pp[k])``."""
    for i in range(3):
        a0, a1, a2 = PR[k, i, 0], PR[k, i, 1], PR[k, i, 2]
        R[k, i, 0] = a0 * f00 + a1 * f10 + a2 * f20
        R[k, i, 1] = a0 * f01 + a1 * f11 + a2 * f21
        R[k, i, 2] = a0 * f02 + a1 * f12 + a2 * f22
        p[k, i] = Pp[k, i] + a0 * t0 + a1 * t1 + a2 * t2


@kernel(refcount=False)
def universal_pose(ax, ax2, k, q1, q2, F, S):
    """``R_J = Rot(a1, q1) Rot(a2, q2)`` into ``F[:3, :3]`` (F: the (6, 3) joint motion scratch, rows 3-5
    Rot(a2, q2) on the way, row 3 then p_J = 0); H rows ``S[k, 0] = [R2^T a1; 0]``, ``S[k, 1] = [a2; 0]``."""
    rotation_about(ax, k, q1, F, 0)
    rotation_about(ax2, k, q2, F, 3)
    for i in range(3):
        r0, r1, r2 = F[i, 0], F[i, 1], F[i, 2]
        for j in range(3):
            F[i, j] = r0 * F[3, j] + r1 * F[4, j] + r2 * F[5, j]
    for j in range(6):
        S[k, 0, j] = 0.0
        S[k, 1, j] = 0.0
    for i in range(3):
        S[k, 0, i] = F[3, i] * ax[k, 0] + F[4, i] * ax[k, 1] + F[5, i] * ax[k, 2]
        S[k, 1, i] = ax2[k, i]
    for i in range(3):
        F[3, i] = 0.0


@inline
def subspace(m, w, k, r, j):
    """Entry ``H(k)[r, j]`` at the current q: ``w.S`` (filled by :func:`joint_pose`) for a universal
    joint, ``m.S_const`` for every other kind."""
    return w.S[k, r, j] if m.kind[k] == UNIVERSAL else m.S_const[k, r, j]


@inline
def add_universal_bias(ax2, S, k, v1, v2, out, j):
    """``out[j] += S_dot v = [-(v1 v2) a2 x h1; 0]`` with ``h1 = S[k, 0, :3] = R2^T a1`` (see ``joints.universal_cJ``)."""
    s = -v1 * v2
    h0, h1, h2 = S[k, 0, 0], S[k, 0, 1], S[k, 0, 2]
    out[j, 0] += s * (ax2[k, 1] * h2 - ax2[k, 2] * h1)
    out[j, 1] += s * (ax2[k, 2] * h0 - ax2[k, 0] * h2)
    out[j, 2] += s * (ax2[k, 0] * h1 - ax2[k, 1] * h0)


@inline
def motion_to_child(R, p, k, X, i, out, j):
    """``out[j] = phi*(parent, k) X[i] = [R^T w; R^T (v + w x p)]`` for X[i] = [w; v] in the parent frame."""
    w0, w1, w2 = X[i, 0], X[i, 1], X[i, 2]
    u0 = X[i, 3] + w1 * p[k, 2] - w2 * p[k, 1]
    u1 = X[i, 4] + w2 * p[k, 0] - w0 * p[k, 2]
    u2 = X[i, 5] + w0 * p[k, 1] - w1 * p[k, 0]
    for r in range(3):
        out[j, r] = R[k, 0, r] * w0 + R[k, 1, r] * w1 + R[k, 2, r] * w2
        out[j, 3 + r] = R[k, 0, r] * u0 + R[k, 1, r] * u1 + R[k, 2, r] * u2


@inline
def add_force_to_parent(R, p, k, f, i, out, j):
    """``out[j] += phi(parent, k) f[i] = [R n + p x (R F); R F]`` for f[i] = [n; F] in the frame of k."""
    n0 = R[k, 0, 0] * f[i, 0] + R[k, 0, 1] * f[i, 1] + R[k, 0, 2] * f[i, 2]
    n1 = R[k, 1, 0] * f[i, 0] + R[k, 1, 1] * f[i, 1] + R[k, 1, 2] * f[i, 2]
    n2 = R[k, 2, 0] * f[i, 0] + R[k, 2, 1] * f[i, 1] + R[k, 2, 2] * f[i, 2]
    g0 = R[k, 0, 0] * f[i, 3] + R[k, 0, 1] * f[i, 4] + R[k, 0, 2] * f[i, 5]
    g1 = R[k, 1, 0] * f[i, 3] + R[k, 1, 1] * f[i, 4] + R[k, 1, 2] * f[i, 5]
    g2 = R[k, 2, 0] * f[i, 3] + R[k, 2, 1] * f[i, 4] + R[k, 2, 2] * f[i, 5]
    out[j, 0] += n0 + p[k, 1] * g2 - p[k, 2] * g1
    out[j, 1] += n1 + p[k, 2] * g0 - p[k, 0] * g2
    out[j, 2] += n2 + p[k, 0] * g1 - p[k, 1] * g0
    out[j, 3] += g0
    out[j, 4] += g1
    out[j, 5] += g2


@inline
def force_columns_to_parent(R, p, k, X, ncol):
    """Columns ``X[:, :ncol]`` (forces in the frame of k) replaced by ``phi(parent, k) X``."""
    for c in range(ncol):
        f0, f1, f2, f3, f4, f5 = X[0, c], X[1, c], X[2, c], X[3, c], X[4, c], X[5, c]
        g0 = R[k, 0, 0] * f3 + R[k, 0, 1] * f4 + R[k, 0, 2] * f5
        g1 = R[k, 1, 0] * f3 + R[k, 1, 1] * f4 + R[k, 1, 2] * f5
        g2 = R[k, 2, 0] * f3 + R[k, 2, 1] * f4 + R[k, 2, 2] * f5
        X[0, c] = R[k, 0, 0] * f0 + R[k, 0, 1] * f1 + R[k, 0, 2] * f2 + p[k, 1] * g2 - p[k, 2] * g1
        X[1, c] = R[k, 1, 0] * f0 + R[k, 1, 1] * f1 + R[k, 1, 2] * f2 + p[k, 2] * g0 - p[k, 0] * g2
        X[2, c] = R[k, 2, 0] * f0 + R[k, 2, 1] * f1 + R[k, 2, 2] * f2 + p[k, 0] * g1 - p[k, 1] * g0
        X[3, c], X[4, c], X[5, c] = g0, g1, g2


@inline
def set_rotated_block(R, k, X, r0, c0, Y, y0, x0):
    """``Y[y0:y0+3, x0:x0+3] = R[k] X[r0:r0+3, c0:c0+3] R[k]^T``."""
    for j in range(3):
        t0 = X[r0, c0] * R[k, j, 0] + X[r0, c0 + 1] * R[k, j, 1] + X[r0, c0 + 2] * R[k, j, 2]
        t1 = X[r0 + 1, c0] * R[k, j, 0] + X[r0 + 1, c0 + 1] * R[k, j, 1] + X[r0 + 1, c0 + 2] * R[k, j, 2]
        t2 = X[r0 + 2, c0] * R[k, j, 0] + X[r0 + 2, c0 + 1] * R[k, j, 1] + X[r0 + 2, c0 + 2] * R[k, j, 2]
        for a in range(3):
            Y[y0 + a, x0 + j] = R[k, a, 0] * t0 + R[k, a, 1] * t1 + R[k, a, 2] * t2


@inline
def add_inertia_to_parent(R, p, k, I, out, j, Y):
    """``out[j] += phi(parent, k) I phi*(parent, k)`` for a symmetric (6, 6) I; Y (6, 6) scratch.

    With ``I = [[A, B], [B^T, C]]`` rotated to ``A', B', C'`` (``R X R^T``) and
    ``BC = B' + ~p C'``: ``phi I phi* = [[A' + ~p B'^T - BC ~p, BC], [BC^T, C']]``.
    """
    set_rotated_block(R, k, I, 0, 0, Y, 0, 0)
    set_rotated_block(R, k, I, 0, 3, Y, 0, 3)
    set_rotated_block(R, k, I, 3, 3, Y, 3, 3)
    p0, p1, p2 = p[k, 0], p[k, 1], p[k, 2]
    for c in range(3):
        c0, c1, c2 = Y[3, 3 + c], Y[4, 3 + c], Y[5, 3 + c]
        Y[3, c] = Y[0, 3 + c] + p1 * c2 - p2 * c1     # Y[3 + r, c] = BC[r, c]
        Y[4, c] = Y[1, 3 + c] + p2 * c0 - p0 * c2
        Y[5, c] = Y[2, 3 + c] + p0 * c1 - p1 * c0
    for c in range(3):
        b0, b1, b2 = Y[c, 3], Y[c, 4], Y[c, 5]          # row c of B' = column c of B'^T
        x0, x1, x2 = Y[3 + c, 0], Y[3 + c, 1], Y[3 + c, 2]  # row c of BC
        out[j, 0, c] += Y[0, c] + p1 * b2 - p2 * b1       # (~p B'^T)[:, c] = p x B'[c]
        out[j, 1, c] += Y[1, c] + p2 * b0 - p0 * b2
        out[j, 2, c] += Y[2, c] + p0 * b1 - p1 * b0
        out[j, c, 0] -= x1 * p2 - x2 * p1                 # (BC ~p)[c] = BC[c] x p
        out[j, c, 1] -= x2 * p0 - x0 * p2
        out[j, c, 2] -= x0 * p1 - x1 * p0
    for r in range(3):
        for c in range(3):
            out[j, r, 3 + c] += Y[3 + r, c]
            out[j, 3 + c, r] += Y[3 + r, c]
            out[j, 3 + r, 3 + c] += Y[3 + r, 3 + c]


@inline
def set_rigid_inertia_moved(R, p, k, M_body, I, h, mass, j, Y):
    """The rigid inertia ``M_body[k] = [[I_o, ~h], [-~h, m 1]]`` (seed 002 Eq. 14) moved by
    ``T = [[R, ~p R], [0, R]]`` of ``(R[k], p[k])``, ``T I T*``, in 3+3 form: ``I[j]`` (3, 3) rotational
    inertia about the new origin (kg m^2), ``h[j] = h' = m c`` (3,) first moment (kg m), ``mass[j] = m``
    (kg); Y (6, 6) scratch.

    With ``hr = R h``: ``h' = hr + m p`` and
    ``I' = R I_o R^T - (hr p^T + p hr^T) + 2 (p . hr) 1 + m (|p|^2 1 - p p^T)`` (parallel axes).
    """
    m = M_body[k, 3, 3]
    h0, h1, h2 = M_body[k, 2, 4], M_body[k, 0, 5], M_body[k, 1, 3]
    p0, p1, p2 = p[k, 0], p[k, 1], p[k, 2]
    Y[0, 3] = R[k, 0, 0] * h0 + R[k, 0, 1] * h1 + R[k, 0, 2] * h2
    Y[1, 3] = R[k, 1, 0] * h0 + R[k, 1, 1] * h1 + R[k, 1, 2] * h2
    Y[2, 3] = R[k, 2, 0] * h0 + R[k, 2, 1] * h1 + R[k, 2, 2] * h2
    set_rotated_block(R, k, M_body[k], 0, 0, Y, 0, 0)
    diag = 2.0 * (p0 * Y[0, 3] + p1 * Y[1, 3] + p2 * Y[2, 3]) + m * (p0 * p0 + p1 * p1 + p2 * p2)
    for r in range(3):
        for c in range(3):
            s = Y[r, c] - Y[r, 3] * p[k, c] - p[k, r] * Y[c, 3] - m * p[k, r] * p[k, c]
            I[j, r, c] = s + diag if r == c else s
        h[j, r] = Y[r, 3] + m * p[k, r]
    mass[j] = m


@inline
def rigid_inertia_times(I, h, mass, k, X, i, c):
    """The force ``I(k) X[i, c] = [I_o w + h x v; m v - h x w]`` (six scalars) for the rigid inertia
    ``(I[k], h[k], mass[k])`` in 3+3 form and the motion ``X[i, c] = [w; v]``."""
    w0, w1, w2, v0, v1, v2 = X[i, c, 0], X[i, c, 1], X[i, c, 2], X[i, c, 3], X[i, c, 4], X[i, c, 5]
    h0, h1, h2, m = h[k, 0], h[k, 1], h[k, 2], mass[k]
    return (I[k, 0, 0] * w0 + I[k, 0, 1] * w1 + I[k, 0, 2] * w2 + h1 * v2 - h2 * v1,
            I[k, 1, 0] * w0 + I[k, 1, 1] * w1 + I[k, 1, 2] * w2 + h2 * v0 - h0 * v2,
            I[k, 2, 0] * w0 + I[k, 2, 1] * w1 + I[k, 2, 2] * w2 + h0 * v1 - h1 * v0,
            m * v0 - (h1 * w2 - h2 * w1), m * v1 - (h2 * w0 - h0 * w2), m * v2 - (h0 * w1 - h1 * w0))


@inline
def set_motion_cross(V, i, U, j, out, l):
    """``out[l] = V[i] x U[j] = [w x u_w; v x u_w + w x u_v]`` (crm(V) U)."""
    w0, w1, w2, v0, v1, v2 = V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5]
    u0, u1, u2, u3, u4, u5 = U[j, 0], U[j, 1], U[j, 2], U[j, 3], U[j, 4], U[j, 5]
    out[l, 0] = w1 * u2 - w2 * u1
    out[l, 1] = w2 * u0 - w0 * u2
    out[l, 2] = w0 * u1 - w1 * u0
    out[l, 3] = v1 * u2 - v2 * u1 + w1 * u5 - w2 * u4
    out[l, 4] = v2 * u0 - v0 * u2 + w2 * u3 - w0 * u5
    out[l, 5] = v0 * u1 - v1 * u0 + w0 * u4 - w1 * u3


@inline
def add_force_cross(V, i, f, j, out, l):
    """``out[l] += crf(V[i]) f[j] = [w x n + v x F; w x F]``."""
    w0, w1, w2, v0, v1, v2 = V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5]
    f0, f1, f2, f3, f4, f5 = f[j, 0], f[j, 1], f[j, 2], f[j, 3], f[j, 4], f[j, 5]
    out[l, 0] += w1 * f2 - w2 * f1 + v1 * f5 - v2 * f4
    out[l, 1] += w2 * f0 - w0 * f2 + v2 * f3 - v0 * f5
    out[l, 2] += w0 * f1 - w1 * f0 + v0 * f4 - v1 * f3
    out[l, 3] += w1 * f5 - w2 * f4
    out[l, 4] += w2 * f3 - w0 * f5
    out[l, 5] += w0 * f4 - w1 * f3


@inline
def set_inertia_times(I, k, X, i, out, j):
    """``out[j] = I[k] X[i]`` for (6, 6) matrices ``I[k]`` and rows ``X[i]`` (6,)."""
    x0, x1, x2, x3, x4, x5 = X[i, 0], X[i, 1], X[i, 2], X[i, 3], X[i, 4], X[i, 5]
    for r in range(6):
        out[j, r] = I[k, r, 0] * x0 + I[k, r, 1] * x1 + I[k, r, 2] * x2 + I[k, r, 3] * x3 + I[k, r, 4] * x4 \
            + I[k, r, 5] * x5


@kernel(refcount=False)
def invert_spd(D, k, nk):
    """In-place inverse of the SPD block ``D[k, :nk, :nk]`` (Gauss-Jordan); returns ``log det D[k]``."""
    logdet = 0.0
    for i in range(nk):
        piv = D[k, i, i]
        logdet += np.log(piv)
        inv = 1.0 / piv
        D[k, i, i] = 1.0
        for j in range(nk):
            D[k, i, j] *= inv
        for r in range(nk):
            if r != i:
                fac = D[k, r, i]
                D[k, r, i] = 0.0
                for j in range(nk):
                    D[k, r, j] -= fac * D[k, i, j]
    return logdet
