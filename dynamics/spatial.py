"""Spatial algebra in Jain's convention (angular first).

Seed 002 (Jain, PyCraft), Eq. 14 and seed 001 section 2: a spatial velocity is
V = [omega; v], a spatial force f = [N; F] (moment first).

Rotation helpers used at the parsers' boundary live here as well, so that there
is one convention for rpy and quaternions in the whole project:

* ``rpy_to_matrix(r, p, y) = Rz(y) @ Ry(p) @ Rx(r)`` (URDF's fixed-axis X-Y-Z);
* quaternions are ``[w, x, y, z]`` (scalar first).
"""

from __future__ import annotations

import math

import numpy as np

from .tolerances import GIMBAL_LOCK_ATOL, PARALLEL_SINE, SINGULAR_FLOOR, SMALL_ANGLE


def skew(x) -> np.ndarray:
    """The cross-product matrix ~x with ``skew(x) @ y == cross(x, y)``; x (3,) -> (3, 3)."""
    x = np.asarray(x, dtype=float)
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def rot_x(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy_to_matrix(rpy) -> np.ndarray:
    """Rotation for roll, pitch, yaw about fixed x, y, z: ``Rz(y) Ry(p) Rx(r)`` (URDF)."""
    r, p, y = (float(v) for v in rpy)
    if r == p == y == 0.0:
        return np.eye(3)
    return np.array(_rpy_rows((math.cos(r), math.cos(p), math.cos(y)), (math.sin(r), math.sin(p), math.sin(y))))


def rpy_to_matrices(rpy) -> np.ndarray:
    """:func:`rpy_to_matrix` of each row of ``rpy`` (n, 3) at once, (n, 3, 3): the same numbers
    (``math.cos``/``math.sin`` and the same products, element by element)."""
    rpy = np.asarray(rpy, dtype=float).reshape(-1, 3)
    flat = rpy.ravel().tolist()
    cos, sin = (np.array(list(map(f, flat))).reshape(-1, 3).T for f in (math.cos, math.sin))
    return np.ascontiguousarray(np.array(_rpy_rows(cos, sin)).transpose(2, 0, 1))


def _rpy_rows(cos, sin) -> list:
    """The rows of ``Rz(y) Ry(p) Rx(r)`` from ``(cos r, cos p, cos y)`` and the sines (floats or arrays)."""
    (cr, cp, cy), (sr, sp, sy) = cos, sin
    return [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr]]


def matrix_to_rpy(R) -> np.ndarray:
    """Inverse of :func:`rpy_to_matrix` (pitch in [-pi/2, pi/2])."""
    R = np.asarray(R, dtype=float)
    p = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    if np.isclose(np.cos(p), 0.0, atol=GIMBAL_LOCK_ATOL):
        r = 0.0
        y = np.arctan2(-R[0, 1], R[1, 1])
    else:
        r = np.arctan2(R[2, 1], R[2, 2])
        y = np.arctan2(R[1, 0], R[0, 0])
    return np.array([r, p, y])


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrix of a quaternion ``[w, x, y, z]`` (normalised first)."""
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def matrix_to_quat(R) -> np.ndarray:
    """Unit quaternion ``[w, x, y, z]`` with w >= 0 of a rotation matrix."""
    R = np.asarray(R, dtype=float)
    t = np.trace(R)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s])
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        q = np.empty(4)
        q[0] = (R[k, j] - R[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (R[j, i] + R[i, j]) / s
        q[1 + k] = (R[k, i] + R[i, k]) / s
    q /= np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def axis_angle_to_matrix(axis, angle: float) -> np.ndarray:
    """Rodrigues' formula; ``axis`` (3,) need not be unit."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    K = skew(a)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


# ---------------------------------------------------------------------------
# Spatial algebra (batched).  All functions below accept leading batch
# dimensions ``...`` and work on the last axes.
# ---------------------------------------------------------------------------

def skew_batch(x) -> np.ndarray:
    """Batched :func:`skew`: x (..., 3) -> (..., 3, 3)."""
    x = np.asarray(x, dtype=float)
    lead = x.shape[:-1]
    # the entries gathered from (x0, x1, x2, -x0, -x1, -x2, 0): one concatenate and one take
    signed = np.concatenate((x, -x, np.zeros(lead + (1,))), axis=-1)
    return signed[..., _SKEW_ENTRIES].reshape(lead + (3, 3))


#: where each entry of ``skew(x)`` is in ``(x0, x1, x2, -x0, -x1, -x2, 0)``, row by row
_SKEW_ENTRIES = np.array([6, 5, 1, 2, 6, 3, 4, 0, 6])


def phi_transform(R, l) -> np.ndarray:
    """Rigid-body transformation phi(x, y) of seed 002 Eq. 4 with a rotation.

    ``phi(x, y)`` maps a spatial force ``f = [N; F]`` acting at frame ``y``
    (components in ``y``) to the equivalent force at frame ``x`` (components in
    ``x``)::

        phi(x, y) = [[R, ~l R], [0, R]]

    and its transpose ``phi*(x, y)`` maps a spatial velocity ``[omega; v]`` of
    frame ``x`` to frame ``y``.

    Parameters
    ----------
    R : (..., 3, 3) float
        Orientation of frame ``y`` in frame ``x`` (``R_x_y``).
    l : (..., 3) float
        Origin of ``y`` relative to the origin of ``x``, components in ``x``.

    Returns
    -------
    (..., 6, 6) float
    """
    R = np.asarray(R, dtype=float)
    l = np.asarray(l, dtype=float)
    shape = np.broadcast_shapes(R.shape[:-2], l.shape[:-1])
    out = np.zeros(shape + (6, 6))
    out[..., :3, :3] = R
    out[..., 3:, 3:] = R
    out[..., :3, 3:] = skew_batch(l) @ R
    return out


def cross3(a, b) -> np.ndarray:
    """Batched 3-vector cross product over the last axis (faster than np.cross on small stacks)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def motion_cross(V, U) -> np.ndarray:
    """``crm(V) @ U`` without forming crm: (..., 6), (..., 6) -> (..., 6)."""
    w, v = V[..., :3], V[..., 3:]
    return np.concatenate([cross3(w, U[..., :3]), cross3(v, U[..., :3]) + cross3(w, U[..., 3:])], axis=-1)


def force_cross(V, f) -> np.ndarray:
    """``crf(V) @ f`` without forming crf: (..., 6), (..., 6) -> (..., 6)."""
    w, v = V[..., :3], V[..., 3:]
    return np.concatenate([cross3(w, f[..., :3]) + cross3(v, f[..., 3:]), cross3(w, f[..., 3:])], axis=-1)


def crm(V) -> np.ndarray:
    """Motion cross-product matrix: ``crm(V) @ U = V x U`` for V = [omega; v] (..., 6) -> (..., 6, 6).

    ``crm(V) = [[~omega, 0], [~v, ~omega]]`` (angular first).  For a pure
    rotation ``V = [h; 0]`` this is seed 002's ``H~*(k)`` of Eq. 39.
    """
    V = np.asarray(V, dtype=float)
    out = np.zeros(V.shape[:-1] + (6, 6))
    w = skew_batch(V[..., :3])
    out[..., :3, :3] = w
    out[..., 3:, 3:] = w
    out[..., 3:, :3] = skew_batch(V[..., 3:])
    return out


def crf(V) -> np.ndarray:
    """Force cross-product matrix ``crf(V) = -crm(V)^T`` (..., 6) -> (..., 6, 6).

    ``crf(V) @ f`` is the rate of change of a force ``f`` fixed in a frame moving
    with spatial velocity ``V``; the gyroscopic force of a body is
    ``b = crf(V) M V``.
    """
    return -np.swapaxes(crm(V), -1, -2)


def spatial_inertia(mass, com, inertia_com) -> np.ndarray:
    """Spatial inertia about the body frame origin, seed 002 Eq. 14.

    ``M = [[J, m ~p], [-m ~p, m I]]`` with ``J = I_c - m ~p ~p`` the rotational
    inertia about the frame origin.

    Parameters
    ----------
    mass : (...,) float, kg
    com : (..., 3) float, m, centre of mass p in the body frame
    inertia_com : (..., 3, 3) float, kg m^2, about the centre of mass, body axes

    Returns
    -------
    (..., 6, 6) float
    """
    m = np.asarray(mass, dtype=float)
    P = skew_batch(com)
    mm = m[..., None, None]
    mP = mm * P
    J = np.asarray(inertia_com, dtype=float) - mm * (P @ P)  # the shape of all three broadcast
    out = np.empty(J.shape[:-2] + (6, 6))
    out[..., :3, :3] = J
    out[..., :3, 3:] = mP
    out[..., 3:, :3] = -mP
    out[..., 3:, 3:] = mm * _EYE3
    return out


#: the 3 x 3 identity, read-only
_EYE3 = np.eye(3)
_EYE3.setflags(write=False)


def rotation_about_axis(axis, angle) -> np.ndarray:
    """Batched Rodrigues rotation: axis (..., 3) unit, angle (...) -> (..., 3, 3)."""
    K = skew_batch(axis)
    a = np.asarray(angle, dtype=float)[..., None, None]
    return np.eye(3) + np.sin(a) * K + (1.0 - np.cos(a)) * (K @ K)


def shortest_rotation(u, w) -> np.ndarray:
    """The rotation (3, 3) of smallest angle taking direction ``u`` (3,) to direction ``w`` (3,)
    (neither need be unit); for opposite directions, the half turn about an axis normal to ``u``."""
    u = np.asarray(u, dtype=float) / np.linalg.norm(u)
    w = np.asarray(w, dtype=float) / np.linalg.norm(w)
    c = float(u @ w)
    x = np.cross(u, w)
    s = np.linalg.norm(x)
    if s < PARALLEL_SINE:
        if c > 0:
            return np.eye(3)
        n = np.cross(u, [1.0, 0, 0] if abs(u[0]) < 0.9 else [0, 1.0, 0])
        n /= np.linalg.norm(n)
        return 2 * np.outer(n, n) - np.eye(3)
    K = skew_batch(x / s)
    return np.eye(3) + s * K + (1 - c) * K @ K


def quat_to_matrix_batch(q) -> np.ndarray:
    """Batched quaternion ``[w, x, y, z]`` (..., 4) -> rotation (..., 3, 3); normalises first."""
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    out = np.empty(q.shape[:-1] + (3, 3))
    out[..., 0, 0] = 1 - 2 * (y * y + z * z)
    out[..., 0, 1] = 2 * (x * y - w * z)
    out[..., 0, 2] = 2 * (x * z + w * y)
    out[..., 1, 0] = 2 * (x * y + w * z)
    out[..., 1, 1] = 1 - 2 * (x * x + z * z)
    out[..., 1, 2] = 2 * (y * z - w * x)
    out[..., 2, 0] = 2 * (x * z - w * y)
    out[..., 2, 1] = 2 * (y * z + w * x)
    out[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return out


def quat_multiply(a, b) -> np.ndarray:
    """Hamilton product of quaternions ``[w, x, y, z]``, batched (..., 4)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    w1, v1 = a[..., :1], a[..., 1:]
    w2, v2 = b[..., :1], b[..., 1:]
    w = w1 * w2 - np.sum(v1 * v2, axis=-1, keepdims=True)
    v = w1 * v2 + w2 * v1 + np.cross(v1, v2)
    return np.concatenate([w, v], axis=-1)


def quat_exp(w) -> np.ndarray:
    """Unit quaternion of the rotation vector w (..., 3): ``[cos(|w|/2), sin(|w|/2) w/|w|]``."""
    w = np.asarray(w, dtype=float)
    th = np.linalg.norm(w, axis=-1, keepdims=True)
    small = th < SMALL_ANGLE
    s = np.where(small, 0.5 - th**2 / 48.0, np.sin(th / 2) / np.where(small, 1.0, th))
    return np.concatenate([np.cos(th / 2), s * w], axis=-1)


def matrix_to_quat_batch(R) -> np.ndarray:
    """Batched :func:`matrix_to_quat` (Shepperd's method): (..., 3, 3) -> (..., 4), w >= 0."""
    R = np.asarray(R, dtype=float)
    m00, m11, m22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    cand = np.stack([1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22], -1)
    i = np.argmax(cand, axis=-1)
    s = 2.0 * np.sqrt(np.maximum(np.take_along_axis(cand, i[..., None], -1)[..., 0], SINGULAR_FLOOR))
    a21, a12 = R[..., 2, 1], R[..., 1, 2]
    a02, a20 = R[..., 0, 2], R[..., 2, 0]
    a10, a01 = R[..., 1, 0], R[..., 0, 1]
    q0 = np.stack([0.25 * s, (a21 - a12) / s, (a02 - a20) / s, (a10 - a01) / s], -1)
    q1 = np.stack([(a21 - a12) / s, 0.25 * s, (a01 + a10) / s, (a02 + a20) / s], -1)
    q2 = np.stack([(a02 - a20) / s, (a01 + a10) / s, 0.25 * s, (a12 + a21) / s], -1)
    q3 = np.stack([(a10 - a01) / s, (a02 + a20) / s, (a12 + a21) / s, 0.25 * s], -1)
    q = np.choose(i[..., None], [q0, q1, q2, q3])
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def so3_log(R) -> np.ndarray:
    """Rotation vector of R (..., 3, 3) -> (..., 3), angle in [0, pi]."""
    return quat_log(matrix_to_quat_batch(R))


def quat_log(q) -> np.ndarray:
    """Rotation vector of a unit quaternion (..., 4) -> (..., 3) (shortest rotation)."""
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    q = np.where(q[..., :1] < 0, -q, q)
    s = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    th = 2.0 * np.arctan2(s, q[..., :1])
    small = s < SMALL_ANGLE
    f = np.where(small, 2.0 / np.where(small, q[..., :1], 1.0), th / np.where(small, 1.0, s))
    return f * q[..., 1:]


def so3_left_jacobian(w) -> np.ndarray:
    """``J(w) = I + (1 - cos t)/t^2 ~w + (t - sin t)/t^3 ~w^2``, t = |w|; (..., 3) -> (..., 3, 3).

    ``exp([w; v]) = (exp(~w), J(w) v)`` on SE(3).
    """
    w = np.asarray(w, dtype=float)
    t = np.linalg.norm(w, axis=-1)[..., None, None]
    small = t < 1e-5
    ts = np.where(small, 1.0, t)
    a = np.where(small, 0.5 - t**2 / 24.0, (1 - np.cos(ts)) / ts**2)
    b = np.where(small, 1.0 / 6.0 - t**2 / 120.0, (ts - np.sin(ts)) / ts**3)
    K = skew_batch(w)
    return np.eye(3) + a * K + b * (K @ K)


def se3_exp(V):
    """Exponential of a twist ``V = [omega; v]`` (..., 6): returns (R (..., 3, 3), p (..., 3))."""
    V = np.asarray(V, dtype=float)
    R = quat_to_matrix_batch(quat_exp(V[..., :3]))
    p = (so3_left_jacobian(V[..., :3]) @ V[..., 3:, None])[..., 0]
    return R, p


def se3_log(R, p) -> np.ndarray:
    """Inverse of :func:`se3_exp`: (R, p) -> twist (..., 6) ``[omega; v]``."""
    w = so3_log(R)
    v = np.linalg.solve(so3_left_jacobian(w), np.asarray(p, dtype=float)[..., None])[..., 0]
    return np.concatenate([w, v], axis=-1)
