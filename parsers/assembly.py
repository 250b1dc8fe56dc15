"""The Assembly data model: what every reader returns.

An :class:`Assembly` is plain, frozen data in SI units (m, kg, s, rad) with
explicit frames; it holds no behaviour beyond small derived views.  Frames:

* the *assembly frame* is the world frame of the input file;
* each body has a *body frame* whose pose in the assembly frame at the
  reference configuration is ``Body.pose``;
* mass properties are given in the body frame: ``com`` is the centre of mass
  in body coordinates and ``inertia`` is the 3x3 inertia tensor about the
  centre of mass, along the body axes;
* a joint's ``origin`` and ``axis`` are expressed in the assembly frame at the
  reference configuration (all joint coordinates zero).

The reserved body name :data:`GROUND` stands for the fixed world; it is never
listed among ``Assembly.bodies``.

Every value remembers where it came from (:class:`Source`): a file and line, or
a note such as ``computed from meshes/camera.stl at density 2700 kg/m^3``.

Joint types and their coordinates (nq, nv) are listed in :data:`JOINT_TYPES`.
Seed 004 (Diaz-Calderon et al.), Table 1, is the layout of the kinematic
description: type, reference body, secondary body, actuated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping

import numpy as np

from mbcompose.dynamics.joints import JOINTS

from .provenance import Source

GROUND = "ground"

#: joint type -> (nq, nv): number of position and velocity coordinates (:data:`dynamics.joints.JOINTS`).
JOINT_TYPES: Mapping[str, tuple[int, int]] = {t: (j.nq, j.nv) for t, j in JOINTS.items()}

#: joint types whose ``axis`` is meaningful (the normal, for planar).
AXIAL_JOINTS = frozenset(t for t, j in JOINTS.items() if j.has_axis)


_FLOAT = np.dtype(float)


def frozen(a: np.ndarray) -> np.ndarray:
    """``a`` (a float array just computed, referred to nowhere else) made read-only in place."""
    a.setflags(write=False)
    return a


def of_frozen(cls, common=None, /, **fields):
    """An instance of a frozen dataclass here (Pose, MassProperties) with ``fields`` as its
    ``__post_init__`` leaves them (floats; arrays read-only, see :func:`frozen`), unchecked;
    ``common``: a dict of more fields, shared by many instances (copied)."""
    obj = object.__new__(cls)
    if common is None:
        obj.__dict__.update(fields)
    else:
        obj.__dict__.update(common, **fields)
    return obj


def _frozen(a, shape) -> np.ndarray:
    """A read-only float copy of ``a`` with ``shape``; ``a`` itself when it already is one
    (read-only, owning its data: nothing can change it), as the frozen dataclasses share
    arrays with each other (a pose's translation as a joint origin, ...)."""
    if type(a) is np.ndarray and a.dtype is _FLOAT and a.shape == shape and a.base is None \
            and not a.flags.writeable:
        return a
    arr = np.array(a, dtype=float)
    arr.shape = shape
    arr.setflags(write=False)
    return arr


#: the identity rotation every default Pose shares (read-only)
_EYE = _frozen(np.eye(3), (3, 3))


@dataclass(frozen=True, eq=False)
class Pose:
    """A rigid placement: ``x_outer = rotation @ x_inner + translation``.

    rotation : (3, 3) float, proper orthogonal.
    translation : (3,) float, metres.
    """

    rotation: np.ndarray = field(default_factory=lambda: _EYE)
    translation: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self):
        object.__setattr__(self, "rotation", _frozen(self.rotation, (3, 3)))
        object.__setattr__(self, "translation", _frozen(self.translation, (3,)))

    def compose(self, inner: "Pose") -> "Pose":
        """The pose of ``inner`` (given relative to this pose) in the outer frame."""
        R, Ri = self.rotation, inner.rotation
        # the shared identity (the default rotation) is skipped: R @ I == R exactly
        rotation = R if Ri is _EYE else Ri if R is _EYE else frozen(R @ Ri)
        translation = (inner.translation if R is _EYE else R @ inner.translation) + self.translation
        return of_frozen(Pose, rotation=rotation, translation=frozen(translation))

    def inverse(self) -> "Pose":
        rt = self.rotation.T
        return Pose(rt, -rt @ self.translation)

    def apply(self, points) -> np.ndarray:
        """Map points (..., 3) from the inner to the outer frame."""
        return np.asarray(points, dtype=float) @ self.rotation.T + self.translation

    def matrix(self) -> np.ndarray:
        """The 4x4 homogeneous matrix."""
        m = np.eye(4)
        m[:3, :3] = self.rotation
        m[:3, 3] = self.translation
        return m

    def isclose(self, other: "Pose", atol: float = 1e-12) -> bool:
        return bool(np.allclose(self.rotation, other.rotation, atol=atol)
                    and np.allclose(self.translation, other.translation, atol=atol))

    def __repr__(self) -> str:
        return f"Pose(rotation={self.rotation.tolist()}, translation={self.translation.tolist()})"


@dataclass(frozen=True, eq=False)
class MassProperties:
    """Mass, centre of mass and central inertia of a rigid body.

    mass : float, kg, >= 0 (0 only for a massless frame).
    com : (3,) float, centre of mass in the body frame, m.
    inertia : (3, 3) float, inertia tensor about the centre of mass along the
        body axes, kg m^2, symmetric positive semi-definite.
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "mass", float(self.mass))
        object.__setattr__(self, "com", _frozen(self.com, (3,)))
        object.__setattr__(self, "inertia", _frozen(self.inertia, (3, 3)))

    @classmethod
    def zero(cls) -> "MassProperties":
        return cls(0.0, np.zeros(3), np.zeros((3, 3)))

    def inertia_about_origin(self) -> np.ndarray:
        """Inertia about the body-frame origin (parallel-axis theorem), (3, 3)."""
        c = self.com
        return self.inertia + self.mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))

    def __repr__(self) -> str:
        return (f"MassProperties(mass={self.mass!r}, com={self.com.tolist()}, "
                f"inertia={self.inertia.tolist()})")


@dataclass(frozen=True, eq=False)
class Geometry:
    """A shape attached to a body.

    kind : 'mesh', 'box', 'cylinder', 'sphere', 'capsule' or 'ellipsoid'.
    params : dict of SI sizes: box ``size`` (3,), cylinder/capsule ``radius``
        and ``length`` (along local z; a capsule's length excludes its caps),
        sphere ``radius``, ellipsoid ``radii`` (3,), mesh ``scale`` (3,).
    pose : placement of the shape in the body frame.
    file : the mesh file (absolute path) for kind 'mesh'.
    role : 'inertial', 'visual' or 'collision'.
    """

    kind: str
    params: Mapping[str, object] = field(default_factory=dict)
    pose: Pose = field(default_factory=Pose)
    file: str | None = None
    role: str = "inertial"


@dataclass(frozen=True, eq=False)
class Body:
    """A rigid part.

    name : unique name (never :data:`GROUND`).
    pose : pose of the body frame in the assembly frame at the reference configuration.
    mass : mass properties in the body frame.
    geometry : shapes, each placed in the body frame.
    sources : key ('pose', 'mass', 'com', 'inertia', ...) -> :class:`Source`.
    """

    name: str
    pose: Pose
    mass: MassProperties
    geometry: tuple[Geometry, ...] = ()
    sources: Mapping[str, Source] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Limits:
    """Joint limits; ``None`` where not given. Units: rad or m, per second, N or N m."""

    lower: float | None = None
    upper: float | None = None
    velocity: float | None = None
    effort: float | None = None


@dataclass(frozen=True, eq=False)
class Motor:
    """A motor acting along an actuated joint's freedoms (a driver element of seed 004)."""

    name: str
    max_effort: float | None = None
    gear_ratio: float = 1.0
    rotor_inertia: float = 0.0


@dataclass(frozen=True, eq=False)
class Joint:
    """A joint between a reference body and a secondary body.

    name : unique name.
    type : one of :data:`JOINT_TYPES`.
    reference, secondary : body names (either may be :data:`GROUND`).
    origin : (3,) joint centre in the assembly frame at the reference configuration, m.
    axis : (3,) unit axis in the assembly frame (revolute, continuous, prismatic,
        cylindrical: the axis; universal: the first axis, fixed in the reference
        body; planar: the plane normal). For other types it is +z and unused.
    axis2 : (3,) unit second axis of a universal joint (fixed in the secondary
        body), orthogonal to ``axis`` at the reference configuration; else None.
    secondary_origin : (3,) the attachment point on the secondary body, in the
        assembly frame at the reference configuration, when the input gives it
        separately (MJCF ``connect`` anchors, YAML ``secondary_origin``); None
        means it coincides with ``origin``.  A gap means the joint is not
        assembled at the reference configuration (a loop that does not close).
    secondary_axis : (3,) the joint axis as attached to the secondary body when
        given separately; None means it coincides with ``axis``.
    limits : :class:`Limits`.
    actuated : True when a motor drives the joint (starred in seed 004's tables).
    motor : the driving motor, if described.
    damping : viscous damping along each freedom, N m s/rad or N s/m.
    armature : rotor (reflected) inertia added to each freedom's diagonal of the
        mass matrix, kg m^2 or kg (MJCF ``armature``, YAML ``armature``).
    ref : the joint's coordinate (rad or m) at the reference configuration, where the
        bodies are as given (MJCF ``ref``: MuJoCo's ``qpos0``; YAML ``ref``); revolute,
        continuous and prismatic joints only.  Our coordinate is the input's own (MuJoCo's
        ``qpos``): the joint moves its body by ``q - ref`` from the given pose.
    loop : True when the input marks the joint as closing a kinematic loop
        (MJCF ``equality``); the graph stage finds loops itself either way.
    implicit : True when the reader added the joint (the base weld or free
        joint of ``base: fixed|floating``) rather than the input declaring it.
    source : where the joint was declared.
    """

    name: str
    type: str
    reference: str
    secondary: str
    origin: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    axis2: np.ndarray | None = None
    secondary_origin: np.ndarray | None = None
    secondary_axis: np.ndarray | None = None
    limits: Limits = field(default_factory=Limits)
    actuated: bool = False
    motor: Motor | None = None
    damping: float = 0.0
    armature: float = 0.0
    ref: float = 0.0
    loop: bool = False
    implicit: bool = False
    source: Source = field(default_factory=Source)

    def __post_init__(self):
        if self.type not in JOINT_TYPES:
            raise ValueError(f"unknown joint type {self.type!r}")
        object.__setattr__(self, "origin", _frozen(self.origin, (3,)))
        object.__setattr__(self, "axis", _frozen(self.axis, (3,)))
        for key in ("axis2", "secondary_origin", "secondary_axis"):
            if getattr(self, key) is not None:
                object.__setattr__(self, key, _frozen(getattr(self, key), (3,)))

    @property
    def nq(self) -> int:
        return JOINT_TYPES[self.type][0]

    @property
    def nv(self) -> int:
        return JOINT_TYPES[self.type][1]


@dataclass(frozen=True, eq=False)
class Coupling:
    """A holonomic coupling of two joint coordinates (URDF ``mimic``, MJCF ``equality/joint``)::

        q[joint] = offset + multiplier * q[leader] + sum_k higher[k] * q[leader] ** (k + 2)

    joint : the follower, a one-coordinate joint.
    leader : the joint it follows; None holds ``joint`` at ``offset``.
    multiplier, offset : the linear part (URDF ``mimic``); MJCF ``polycoef`` a0, a1.
    higher : coefficients of the powers 2, 3, ... of ``q[leader]`` (MJCF ``polycoef`` a2..a4).
    joint_terms, leader_terms : for linear combinations of coordinates (MJCF fixed tendons),
        ``((joint, coef), ...)`` replacing ``q[joint]`` and ``q[leader]`` by ``sum coef * q[joint]``
        (``joint`` and ``leader`` then name the first joint of each, for messages).
    """

    joint: str
    leader: str | None
    multiplier: float = 1.0
    offset: float = 0.0
    higher: tuple[float, ...] = ()
    source: Source = field(default_factory=Source)
    joint_terms: tuple[tuple[str, float], ...] = ()
    leader_terms: tuple[tuple[str, float], ...] = ()

    @property
    def follower_sum(self) -> tuple[tuple[str, float], ...]:
        """The follower side as ``((joint, coef), ...)``."""
        return self.joint_terms or ((self.joint, 1.0),)

    @property
    def leader_sum(self) -> tuple[tuple[str, float], ...]:
        """The leader side as ``((joint, coef), ...)`` (empty: a constant)."""
        if self.leader_terms:
            return self.leader_terms
        return ((self.leader, 1.0),) if self.leader is not None else ()

    @property
    def coefficients(self) -> tuple[float, ...]:
        """Polynomial coefficients of ``q[leader]``, constant first."""
        return (self.offset, self.multiplier if self.leader is not None else 0.0, *self.higher)


@dataclass(frozen=True, eq=False)
class SpringDamper:
    """A linear spring-damper between a point of body ``a`` and a point of body ``b``.

    Points are given in the assembly frame at the reference configuration.
    """

    name: str
    body_a: str
    point_a: np.ndarray
    body_b: str
    point_b: np.ndarray
    stiffness: float = 0.0
    damping: float = 0.0
    rest_length: float | None = None
    source: Source = field(default_factory=Source)


@dataclass(frozen=True, eq=False)
class Frame:
    """A named frame fixed to a body (a part kept inside a lumped composite, a sensor site).

    body : the body it is fixed to.
    pose : the frame's pose in the assembly frame at the reference configuration.
    """

    name: str
    body: str
    pose: Pose
    source: Source = field(default_factory=Source)


@dataclass(frozen=True, eq=False)
class Assembly:
    """A mechanical assembly: bodies, joints and forces in SI units.

    name : assembly name.
    bodies : the rigid parts (ground excluded).
    joints : all joints, including fixed ones and joints that close loops.
    gravity : (3,) gravitational acceleration in the assembly frame, m/s^2.
    couplings : joint couplings (mimic).
    springs : spring-damper force elements.
    frames : named frames fixed to bodies.
    source_file : the file the assembly was read from.
    contacts : contacts between parts found in a CAD assembly (``parsers.step.mating.Contact``,
        SI units), from which its joints were inferred; empty for other inputs.
    """

    name: str
    bodies: tuple[Body, ...]
    joints: tuple[Joint, ...]
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    couplings: tuple[Coupling, ...] = ()
    springs: tuple[SpringDamper, ...] = ()
    frames: tuple[Frame, ...] = ()
    source_file: str | None = None
    contacts: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "gravity", _frozen(self.gravity, (3,)))
        object.__setattr__(self, "bodies", tuple(self.bodies))
        object.__setattr__(self, "joints", tuple(self.joints))
        object.__setattr__(self, "frames", tuple(self.frames))

    @cached_property
    def _bodies_by_name(self) -> dict[str, Body]:
        return {b.name: b for b in reversed(self.bodies)}  # the first of a name wins

    @cached_property
    def _joints_by_name(self) -> dict[str, Joint]:
        return {j.name: j for j in reversed(self.joints)}

    def body(self, name: str) -> Body:
        """The body called ``name`` (KeyError if none); a dict look-up, O(1)."""
        return self._bodies_by_name[name]

    def joint(self, name: str) -> Joint:
        """The joint called ``name`` (KeyError if none); a dict look-up, O(1)."""
        return self._joints_by_name[name]

    @cached_property
    def body_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bodies)

    @cached_property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    @property
    def total_mass(self) -> float:
        return float(sum(b.mass.mass for b in self.bodies))
