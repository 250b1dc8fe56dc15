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

The facts of each type (the table above, the axes it has, whether a spanning tree may
traverse it backwards, whether it takes position limits, a ``ref``, a coupling, and its
code in the compiled kernels) live in one table, :data:`JOINTS` (one :class:`JointType`
each, as Pinocchio has one joint model per type); every other module reads them there,
``JOINTS[joint.type].takes_limits``, and the format modules keep only their name maps
(URDF ``floating`` -> ``free``, MJCF ``hinge`` -> ``revolute``, SDFormat ``ball``).

Position limits: one rule
-------------------------
``Limits.lower``/``upper`` bound the one coordinate of a **revolute or prismatic** joint,
and only theirs (``takes_limits``):

* a continuous joint is a revolute joint without limits: URDF gives it none ("has no upper
  and lower limits"; Pinocchio's and MuJoCo's URDF importers ignore any written), nor does
  SDFormat; a file that writes some is told so (a warning, file:line) and they are dropped;
* cylindrical and universal joints have two coordinates and ``Limits`` one pair: no reader
  gives a pair that means both (SDFormat's ``universal``/``revolute2`` limit each axis
  apart), so the pair is dropped with a warning rather than applied to the wrong one;
* spherical, planar and free joints have no coordinate a pair can bound (MJCF's ``ball``
  range is a cone on the rotation angle, which nothing here enforces: dropped, with a
  warning);
* the native YAML format refuses ``lower``/``upper`` on other types (as it refuses ``ref``);
  velocity and effort limits stay allowed on every moving joint.

The simulators stop exactly these coordinates (``graph.model.passive``: a joint built in
code with limits on another type is simulated without them, with a warning) and the
exporters write exactly these (URDF ``lower``/``upper``, MJCF ``range``, SDFormat
``<limit>``); the fixed-step kernels could stop any coordinate with ``q_dot = v``
(``euclidean``), which is a capability, not the rule.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Mapping

import numpy as np

from .spatial import (quat_exp, quat_log, quat_multiply, quat_to_matrix_batch, rotation_about_axis,
                      se3_exp, se3_log, skew_batch)
from .tolerances import SMALL_ANGLE

@dataclass(frozen=True)
class JointType:
    """The facts of one joint type, as Pinocchio's joint models hold theirs (see :data:`JOINTS`).

    name : the type's name (the key in :data:`JOINTS`).
    nq, nv : number of position coordinates and of velocity coordinates.
    neutral : (nq,) the configuration at which the bodies are as given (identity quaternions
        [w, x, y, z]); a joint's ``ref`` replaces it for the one-coordinate types.
    has_axis : the joint's ``axis`` is meaningful (for planar: the plane's normal); for the
        other types it is +z and unused.
    has_axis2 : the joint has a second axis ``axis2`` (universal: fixed in the secondary body).
    moves_as : the type whose motion model this one shares: itself, or revolute for
        continuous (a revolute joint whose angle has no limits).
    reversible : a spanning tree may traverse the joint from its secondary body to its
        reference body: the coordinates keep their meaning with the axis negated (one axis
        at most; a universal joint would swap its coordinates, a spherical, planar or free
        joint's coordinates would become those of the inverse motion).
    takes_limits : the joint's position limits (``Limits.lower``/``upper``) bound its one
        coordinate and the simulators stop it there (see the module docstring: the rule).
    takes_ref : the joint's coordinate may have a reference value ``ref`` (MJCF's ``ref``,
        MuJoCo's ``qpos0``): one coordinate along or about one axis.
    couplable : a coupling (URDF ``mimic``, MJCF ``equality/joint``, a fixed tendon) may hold
        its coordinate: one coordinate.
    constant_H : the motion subspace ``H(k)`` is constant in the body frame.
    euclidean : ``q_dot = v`` (the configuration is a vector space; integrate is ``q + v``).
    kernel : the joint's code in the compiled kernels (:mod:`dynamics.compiled`); types that
        move alike share one.
    q_units, v_units : the quantity of each position and velocity coordinate, one letter each: 'a' an
        angle (rad; rad/s), 'l' a length (m; m/s), '1' none (a quaternion's components).
    """

    name: str
    nq: int
    nv: int
    neutral: tuple[float, ...]
    has_axis: bool
    has_axis2: bool
    moves_as: str
    reversible: bool
    takes_limits: bool
    takes_ref: bool
    couplable: bool
    constant_H: bool
    euclidean: bool
    kernel: int
    q_units: str
    v_units: str

    def __post_init__(self):
        if len(self.q_units) != self.nq or len(self.v_units) != self.nv or set(self.q_units + self.v_units) - set("al1"):
            raise ValueError(f"joint type {self.name!r}: q_units/v_units must give one of 'a', 'l', '1' per "
                             f"coordinate ({self.nq} and {self.nv})")

    @property
    def one_coordinate(self) -> bool:
        """One position and one velocity coordinate (revolute, continuous, prismatic)."""
        return self.nq == 1 and self.nv == 1


def _table(*rows) -> Mapping[str, JointType]:
    """A read-only name -> :class:`JointType` map of rows of the fields in their order."""
    names = [f.name for f in fields(JointType)]
    return MappingProxyType({row[0]: JointType(**dict(zip(names, row, strict=True))) for row in rows})


_, X = False, True           # the table's no and yes
#: joint type name -> :class:`JointType`, the one home of the facts of each joint type (module table).
JOINTS: Mapping[str, JointType] = _table(
    # name         nq nv neutral                              axis axis2 moves_as     rev lim ref cpl  H  eucl kernel q_units  v_units
    ("fixed",       0, 0, (),                                  _,   _,   "fixed",       X,  _,  _,  _,  X,  X,   0,     "",      ""),
    ("revolute",    1, 1, (0.0,),                              X,   _,   "revolute",    X,  X,  X,  X,  X,  X,   1,     "a",     "a"),
    ("continuous",  1, 1, (0.0,),                              X,   _,   "revolute",    X,  _,  X,  X,  X,  X,   1,     "a",     "a"),
    ("prismatic",   1, 1, (0.0,),                              X,   _,   "prismatic",   X,  X,  X,  X,  X,  X,   2,     "l",     "l"),
    ("cylindrical", 2, 2, (0.0, 0.0),                          X,   _,   "cylindrical", X,  _,  _,  _,  X,  X,   3,     "al",    "al"),
    ("universal",   2, 2, (0.0, 0.0),                          X,   X,   "universal",   _,  _,  _,  _,  _,  X,   4,     "aa",    "aa"),
    ("spherical",   4, 3, (1.0, 0.0, 0.0, 0.0),                _,   _,   "spherical",   _,  _,  _,  _,  X,  _,   5,     "1111",  "aaa"),
    ("planar",      3, 3, (0.0, 0.0, 0.0),                     X,   _,   "planar",      _,  _,  _,  _,  X,  _,   6,     "lla",   "lla"),
    ("free",        7, 6, (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0), _,   _,   "free",        _,  _,  _,  _,  X,  _,   7,     "lll1111", "aaalll"),
)  # columns: has_axis, has_axis2, moves_as, reversible, takes_limits, takes_ref, couplable, constant_H, euclidean
del _, X

def joint_types(**facts) -> tuple[str, ...]:
    """The names of the joint types whose facts have the given values, in table order.

    >>> joint_types(takes_limits=True)
    ('revolute', 'prismatic')
    >>> joint_types(has_axis2=True)
    ('universal',)
    """
    unknown = set(facts) - {f.name for f in fields(JointType)} - {"one_coordinate"}
    if unknown:
        raise TypeError(f"unknown joint-type facts: {', '.join(sorted(unknown))}")
    return tuple(t for t, j in JOINTS.items() if all(getattr(j, k) == v for k, v in facts.items()))


#: joint type -> the position coordinate that is its angle about its axis (the types that turn about it)
_AXIS_ANGLE = {"revolute": 0, "continuous": 0, "cylindrical": 0, "planar": 2}
#: joint type -> the position coordinate that is its slide along its axis
_AXIS_SLIDE = {"prismatic": 0, "cylindrical": 1}


def axis_angle_coordinate(jtype: str) -> int | None:
    """The index (in the joint's q) of its angle of rotation about its axis, None for the types that do
    not turn about one axis (planar: its third coordinate, about the plane's normal)."""
    return _AXIS_ANGLE.get(_facts(jtype).name)


def axis_slide_coordinate(jtype: str) -> int | None:
    """The index (in the joint's q) of its slide along its axis, None for the types that do not slide."""
    return _AXIS_SLIDE.get(_facts(jtype).name)


def has_quaternion(jtype: str) -> bool:
    """The joint's orientation is a unit quaternion, its last four position coordinates (spherical, free)."""
    j = _facts(jtype)
    return j.nq == j.nv + 1


def _facts(jtype: str) -> JointType:
    """``JOINTS[jtype]``; ValueError naming the known types for another name."""
    try:
        return JOINTS[jtype]
    except KeyError:
        raise ValueError(f"unknown joint type {jtype!r} (known: {', '.join(JOINTS)})") from None


def neutral(jtype: str) -> np.ndarray:
    """Reference configuration of one joint, (nq,): ``JOINTS[jtype].neutral`` as an array."""
    return np.array(_facts(jtype).neutral, dtype=float)


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
    jtype = _facts(jtype).moves_as
    if jtype == "revolute":
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
    jtype = _facts(jtype).moves_as
    if jtype == "revolute":
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
    if _facts(jtype).euclidean:
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
    if _facts(jtype).euclidean:
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


__all__ = ["JointType", "JOINTS", "joint_types", "neutral", "plane_basis", "motion_subspace",
           "transform", "universal_H", "universal_cJ", "universal_dH", "integrate", "difference", "normalize",
           "skew_batch"]
