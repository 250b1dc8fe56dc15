"""Spatial algebra in Jain's convention (angular first).

Seed 002 (Jain, PyCraft), Eq. 14 and seed 001 section 2: a spatial velocity is
V = [omega; v], a spatial force f = [N; F] (moment first).

Rotation helpers used at the parsers' boundary live here as well, so that there
is one convention for rpy and quaternions in the whole project:

* ``rpy_to_matrix(r, p, y) = Rz(y) @ Ry(p) @ Rx(r)`` (URDF's fixed-axis X-Y-Z);
* quaternions are ``[w, x, y, z]`` (scalar first).
"""

from __future__ import annotations

import numpy as np


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
    return rot_z(y) @ rot_y(p) @ rot_x(r)


def matrix_to_rpy(R) -> np.ndarray:
    """Inverse of :func:`rpy_to_matrix` (pitch in [-pi/2, pi/2])."""
    R = np.asarray(R, dtype=float)
    p = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    if np.isclose(np.cos(p), 0.0, atol=1e-12):
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
