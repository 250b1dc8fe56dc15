"""Joint models: joint transform, joint map H(k), velocity terms, integration.

Frames (Pinocchio's convention): the *joint frame* is fixed in the parent body
at the joint's placement; the *body frame* of the child coincides with the
joint's moving frame.  A joint's motion ``(R_J(q), p_J(q))`` is the pose of the
moving frame in the joint frame.  Axes are unit vectors in the joint frame.
Spatial vectors are angular first (seed 002 Eq. 4, 14); ``H*(k) = S`` is the
6 x n_k motion subspace in the body frame, so the joint's contribution to the
body velocity is ``H*(k) v_k`` (seed 002 Eq. 3).

========== ===== ===== ================================================================
type        nq    nv   coordinates q / velocities v
========== ===== ===== ================================================================
fixed        0     0   --
revolute     1     1   angle about ``axis`` / its rate
continuous   1     1   same as revolute (angle, unbounded)
prismatic    1     1   displacement along ``axis``
cylindrical  2     2   (angle, displacement) about/along ``axis``
universal    2     2   (angle1 about ``axis``, angle2 about ``axis2``):
                       ``R_J = Rot(axis, q1) Rot(axis2, q2)``; v = q_dot; H depends on q2
spherical    4     3   unit quaternion [w, x, y, z] / angular velocity in the body frame
planar       3     3   (x, y, theta): in-plane position along (e1, e2) of the joint frame
                       and rotation about the normal n = ``axis``; v = (vx, vy, omega)
                       with (vx, vy) the in-plane velocity along the *body's* e1, e2
                       (body-frame, like Pinocchio's JointModelPlanar).  In-plane axis:
                       e1 = joint x axis projected on the plane (joint y axis if
                       |n . x| > 0.9), e2 = n x e1.
free         7     6   position (3, joint/parent frame) + quaternion [w, x, y, z];
                       v = [omega; v] in the body frame, **angular first**
========== ===== ===== ================================================================

``integrate`` is the exact exponential map on each joint's group (SO(3),
SE(2), SE(3)), so quaternions stay unit; ``difference`` is its inverse.  For
joints whose ``H`` is constant in the body frame (all but universal), the
derivative of the joint transform along ``v`` direction ``j`` is
``d phi*(p,k) = -crm(S_j) phi*(p,k)`` (used by :mod:`dynamics.sensitivity`).
"""

from __future__ import annotations

import numpy as np

from .spatial import (quat_exp, quat_log, quat_multiply, quat_to_matrix_batch, rotation_about_axis,
                      se3_exp, se3_log, skew_batch)
from .tolerances import SMALL_ANGLE

JOINT_TYPES = ("fixed", "revolute", "continuous", "prismatic", "cylindrical", "universal",
               "spherical", "planar", "free")
NQ = {"fixed": 0, "revolute": 1, "continuous": 1, "prismatic": 1, "cylindrical": 2, "universal": 2,
      "spherical": 4, "planar": 3, "free": 7}
NV = {"fixed": 0, "revolute": 1, "continuous": 1, "prismatic": 1, "cylindrical": 2, "universal": 2,
      "spherical": 3, "planar": 3, "free": 6}
#: joints whose H(k) is constant in the body frame
CONSTANT_H = {t for t in JOINT_TYPES if t != "universal"}
#: joints whose q is a Euclidean coordinate of v (q_dot = v)
EUCLIDEAN = {"fixed", "revolute", "continuous", "prismatic", "cylindrical", "universal"}


def neutral(jtype: str) -> np.ndarray:
    """Reference configuration of one joint, (nq,)."""
    if jtype == "spherical":
        return np.array([1.0, 0.0, 0.0, 0.0])
    if jtype == "free":
        return np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    return np.zeros(NQ[jtype])


def plane_basis(normal) -> tuple[np.ndarray, np.ndarray]:
    """In-plane axes (e1, e2) of a planar joint with unit normal n (3,); see module table."""
    n = np.asarray(normal, dtype=float)
    n = n / np.linalg.norm(n)
    ref = np.array([1.0, 0.0, 0.0]) if abs(n[0]) <= 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = ref - ref.dot(n) * n
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(n, e1)


def motion_subspace(jtype: str, axis, axis2=None) -> np.ndarray:
    """Constant H(k) (n_k, 6) in the body frame; for universal the value at q2 = 0.

    ``axis``, ``axis2`` (3,), or (g, 3) for g joints of the type at once: then (g, n_k, 6).
    """
    a = np.asarray(axis, dtype=float)
    z = np.zeros_like(a)
    lead = a.shape[:-1]
    if jtype == "fixed":
        return np.zeros(lead + (0, 6))
    if jtype in ("revolute", "continuous"):
        return np.concatenate([a, z], axis=-1)[..., None, :]
    if jtype == "prismatic":
        return np.concatenate([z, a], axis=-1)[..., None, :]
    if jtype == "cylindrical":
        return np.stack([np.concatenate([a, z], axis=-1), np.concatenate([z, a], axis=-1)], axis=-2)
    if jtype == "universal":
        return np.stack([np.concatenate([a, z], axis=-1),
                         np.concatenate([np.asarray(axis2, float), z], axis=-1)], axis=-2)
    if jtype == "spherical":
        return np.broadcast_to(np.hstack([np.eye(3), np.zeros((3, 3))]), lead + (3, 6)).copy()
    if jtype == "planar":
        if lead:
            return np.array([motion_subspace(jtype, n) for n in a.reshape(-1, 3)]).reshape(lead + (3, 6))
        e1, e2 = plane_basis(a)
        return np.array([np.concatenate([z, e1]), np.concatenate([z, e2]), np.concatenate([a, z])])
    if jtype == "free":
        return np.broadcast_to(np.eye(6), lead + (6, 6)).copy()
    raise ValueError(f"unknown joint type {jtype!r}")


def transform(jtype: str, q, axis, axis2=None):
    """Joint motion for a group of joints of one type, batched.

    Parameters
    ----------
    q : (B, g, nq) float
    axis, axis2 : (g, 3) float, unit, joint frame

    Returns
    -------
    R : (B, g, 3, 3) rotation of the moving frame in the joint frame
    p : (B, g, 3) origin of the moving frame in the joint frame
    """
    B, g = q.shape[:2]
    if jtype == "fixed":
        return np.broadcast_to(np.eye(3), (B, g, 3, 3)), np.zeros((B, g, 3))
    if jtype in ("revolute", "continuous"):
        return rotation_about_axis(axis, q[..., 0]), np.zeros((B, g, 3))
    if jtype == "prismatic":
        return np.broadcast_to(np.eye(3), (B, g, 3, 3)), q[..., 0:1] * axis
    if jtype == "cylindrical":
        return rotation_about_axis(axis, q[..., 0]), q[..., 1:2] * axis
    if jtype == "universal":
        return rotation_about_axis(axis, q[..., 0]) @ rotation_about_axis(axis2, q[..., 1]), np.zeros((B, g, 3))
    if jtype == "spherical":
        return quat_to_matrix_batch(q), np.zeros((B, g, 3))
    if jtype == "planar":
        e = np.array([plane_basis(a) for a in axis])  # (g, 2, 3)
        p = q[..., 0:1] * e[:, 0] + q[..., 1:2] * e[:, 1]
        return rotation_about_axis(axis, q[..., 2]), p
    if jtype == "free":
        return quat_to_matrix_batch(q[..., 3:7]), q[..., :3].copy()
    raise ValueError(f"unknown joint type {jtype!r}")


def universal_H(q, axis, axis2):
    """H(k) of universal joints (B, g, 2, 6): rows [R2^T a1; 0] and [a2; 0]."""
    R2 = rotation_about_axis(axis2, q[..., 1])
    h1 = (np.swapaxes(R2, -1, -2) @ axis[..., None])[..., 0]
    out = np.zeros(q.shape[:2] + (2, 6))
    out[..., 0, :3] = h1
    out[..., 1, :3] = axis2
    return out


def universal_cJ(q, v, axis, axis2):
    """Joint velocity-product term ``S_dot v`` of universal joints (B, g, 6)."""
    R2 = rotation_about_axis(axis2, q[..., 1])
    h1 = (np.swapaxes(R2, -1, -2) @ axis[..., None])[..., 0]
    out = np.zeros(q.shape[:2] + (6,))
    out[..., :3] = -(v[..., 0:1] * v[..., 1:2]) * np.cross(np.broadcast_to(axis2, h1.shape), h1)
    return out


def universal_dH(q, axis, axis2):
    """``dH(k)/dq2`` of universal joints (B, g, 2, 6); ``dH/dq1 = 0``."""
    R2 = rotation_about_axis(axis2, q[..., 1])
    h1 = (np.swapaxes(R2, -1, -2) @ axis[..., None])[..., 0]
    out = np.zeros(q.shape[:2] + (2, 6))
    out[..., 0, :3] = -np.cross(np.broadcast_to(axis2, h1.shape), h1)
    return out


def integrate(jtype: str, q, v, axis=None):
    """``q (+) v`` for one joint group: q (B, g, nq), v (B, g, nv) (already times dt)."""
    if jtype in EUCLIDEAN:
        return q + v
    if jtype == "spherical":
        out = quat_multiply(q, quat_exp(v))
        return out / np.linalg.norm(out, axis=-1, keepdims=True)
    if jtype == "free":
        R = quat_to_matrix_batch(q[..., 3:7])
        dR, dp = se3_exp(v)
        p = q[..., :3] + (R @ dp[..., None])[..., 0]
        quat = quat_multiply(q[..., 3:7], quat_exp(v[..., :3]))
        quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
        return np.concatenate([p, quat], axis=-1)
    if jtype == "planar":
        th, w = q[..., 2], v[..., 2]
        dx, dy = _se2_exp_translation(v[..., 0], v[..., 1], w)
        c, s = np.cos(th), np.sin(th)
        return np.stack([q[..., 0] + c * dx - s * dy, q[..., 1] + s * dx + c * dy, th + w], axis=-1)
    raise ValueError(jtype)


def _se2_exp_translation(vx, vy, w):
    small = np.abs(w) < SMALL_ANGLE
    ws = np.where(small, 1.0, w)
    a = np.where(small, 1.0 - w**2 / 6.0, np.sin(ws) / ws)
    b = np.where(small, w / 2.0, (1.0 - np.cos(ws)) / ws)
    return a * vx - b * vy, b * vx + a * vy


def difference(jtype: str, q0, q1):
    """``v`` with ``integrate(q0, v) = q1`` for one joint group (B, g, nq) -> (B, g, nv)."""
    if jtype in EUCLIDEAN:
        return q1 - q0
    if jtype == "spherical":
        conj = q0 * np.array([1.0, -1.0, -1.0, -1.0])
        return quat_log(quat_multiply(conj, q1))
    if jtype == "free":
        R0 = quat_to_matrix_batch(q0[..., 3:7])
        R1 = quat_to_matrix_batch(q1[..., 3:7])
        Rt = np.swapaxes(R0, -1, -2)
        return se3_log(Rt @ R1, (Rt @ (q1[..., :3] - q0[..., :3])[..., None])[..., 0])
    if jtype == "planar":
        w = q1[..., 2] - q0[..., 2]
        c, s = np.cos(q0[..., 2]), np.sin(q0[..., 2])
        dx, dy = q1[..., 0] - q0[..., 0], q1[..., 1] - q0[..., 1]
        lx, ly = c * dx + s * dy, -s * dx + c * dy
        small = np.abs(w) < SMALL_ANGLE
        ws = np.where(small, 1.0, w)
        a = np.where(small, 1.0 - w**2 / 6.0, np.sin(ws) / ws)
        b = np.where(small, w / 2.0, (1.0 - np.cos(ws)) / ws)
        det = a * a + b * b
        return np.stack([(a * lx + b * ly) / det, (-b * lx + a * ly) / det, w], axis=-1)
    raise ValueError(jtype)


def normalize(jtype: str, q):
    """Project q (B, g, nq) back onto the joint's configuration manifold (unit quaternions)."""
    if jtype == "spherical":
        return q / np.linalg.norm(q, axis=-1, keepdims=True)
    if jtype == "free":
        out = q.copy()
        out[..., 3:7] /= np.linalg.norm(out[..., 3:7], axis=-1, keepdims=True)
        return out
    return q


__all__ = ["JOINT_TYPES", "NQ", "NV", "CONSTANT_H", "EUCLIDEAN", "neutral", "plane_basis", "motion_subspace",
           "transform", "universal_H", "universal_cJ", "universal_dH", "integrate", "difference", "normalize",
           "skew_batch"]
