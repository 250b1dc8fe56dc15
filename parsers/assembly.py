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

import math
from dataclasses import MISSING, field, fields
from functools import cache, cached_property
from typing import Mapping, NamedTuple

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.records import record
from mbcompose.dynamics.tolerances import GEOMETRY_ATOL

from .provenance import Source

#: the fixed world's node in every assembly, graph and model: a name no part can have (angle
#: brackets; :class:`Body` refuses it), so a part or link named ``ground``, ``world`` or ``base``
#: stays an ordinary body under its own name (issue 24).  Files name the world in their own words:
#: :data:`GROUND_WORD` in the YAML formats, ``world`` in URDF, SDFormat and MJCF; the readers map
#: those words to this node.
GROUND = "<ground>"
#: the word by which the YAML assembly format (and a STEP wrapper's own joints) names the world
GROUND_WORD = "ground"

#: joint type -> (nq, nv): number of position and velocity coordinates (:data:`dynamics.joints.JOINTS`).
JOINT_TYPES: Mapping[str, tuple[int, int]] = {t: (j.nq, j.nv) for t, j in JOINTS.items()}

#: joint types whose ``axis`` is meaningful (the normal, for planar).
AXIAL_JOINTS = frozenset(t for t, j in JOINTS.items() if j.has_axis)


_FLOAT = np.dtype(float)
_isfinite = math.isfinite
#: ``_all(x, None)``, ``_any(x, None)``: ``x.all()``, ``x.any()`` over every element, as the ufunc
#: reductions themselves (the methods reach them through a Python layer of numpy's)
_all, _any = np.logical_and.reduce, np.logical_or.reduce


def frozen(a: np.ndarray) -> np.ndarray:
    """``a`` (a float array just computed, referred to nowhere else) made read-only in place."""
    a.setflags(write=False)
    return a


def _shareable(a, shape: tuple) -> bool:
    """True when ``a`` is a read-only float array of ``shape`` that nothing can change through another
    array: it owns its data, or its base (the stack it is a row of) is read-only too."""
    return (type(a) is np.ndarray and a.shape == shape and a.dtype is _FLOAT and not a.flags.writeable
            and (a.base is None or not a.base.flags.writeable))


def _checked(a, shape: tuple, what: str) -> np.ndarray:
    """``a`` as a read-only float array of ``shape`` with finite values; ValueError naming ``what``
    otherwise.  ``a`` itself when it is such an array already and nothing can change it through
    another array (it owns its data, or its base, the stack it is a row of, is read-only too):
    the frozen classes share such arrays with each other (a pose's translation as a joint origin,
    ...) instead of copying them; else a read-only copy."""
    if type(a) is np.ndarray and a.shape == shape and a.dtype is _FLOAT and not a.flags.writeable \
            and (a.base is None or not a.base.flags.writeable):
        arr = a
    else:
        try:
            arr = np.array(a, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{what} must be numbers of shape {shape}, got {a!r}") from None
        if arr.shape != shape:
            raise ValueError(f"{what} must have shape {shape}, got shape {arr.shape}")
        arr.setflags(write=False)
    if not all(map(_isfinite, arr.ravel().tolist())):
        raise ValueError(f"{what} must be finite, got {arr.tolist()}")
    return arr


def _checked_stack(a, shape: tuple, what: str) -> np.ndarray:
    """:func:`_checked` of a stack of ``n`` values of ``shape`` (``(n, *shape)``), in one numpy pass."""
    if type(a) is np.ndarray and a.shape[1:] == shape and a.ndim == len(shape) + 1 and a.dtype is _FLOAT \
            and not a.flags.writeable and (a.base is None or not a.base.flags.writeable):
        arr = a
    else:
        try:
            arr = np.array(a, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{what} must be numbers of shape (n, {', '.join(map(str, shape))})") from None
        if arr.shape[1:] != shape or arr.ndim != len(shape) + 1:
            raise ValueError(f"{what} must have shape (n, {', '.join(map(str, shape))}), got shape {arr.shape}")
        arr.setflags(write=False)
    if not _all(np.isfinite(arr), None):
        raise ValueError(f"{what} must be finite")
    return arr


def _set(obj, name: str, value) -> None:
    """Replace field ``name`` of a frozen object being built (its ``__post_init__``)."""
    obj.__dict__[name] = value


def _checked_float(x, what: str) -> float:
    """``x`` as a finite float; ValueError naming ``what`` otherwise."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {x!r}") from None
    if not _isfinite(v):
        raise ValueError(f"{what} must be finite, got {v!r}")
    return v


def _built(cls, fields_: dict):
    """An instance of one of the classes here with ``fields_``, which one of its own methods has just
    checked as ``__post_init__`` would (its ``many`` checks a batch at once, ``Pose.compose`` the
    arrays it computes).  ``fields_`` is a dict made for this instance alone: it becomes the
    instance's ``__dict__`` (no copy)."""
    obj = _new(cls)
    _setattr(obj, "__dict__", fields_)
    return obj


_new, _setattr = object.__new__, object.__setattr__


def _finite(arr: np.ndarray, what: str) -> np.ndarray:
    """``arr`` (a read-only float array a method computed) when all its values are finite; else ValueError."""
    if not all(map(_isfinite, arr.ravel().tolist())):
        raise ValueError(f"{what} must be finite, got {arr.tolist()}")
    return arr


#: the identity rotation every default Pose shares (read-only)
_EYE = frozen(np.eye(3))


def _frozen_zeros() -> np.ndarray:
    """A new read-only (3,) zero vector (the default of a record's point or translation: a read-only
    array of its own, which the record's check keeps instead of copying)."""
    return frozen(np.zeros(3))


@record
class Pose:
    """A rigid placement: ``x_outer = rotation @ x_inner + translation``.

    rotation : (3, 3) float, proper orthogonal.
    translation : (3,) float, metres.

    The constructor checks shapes and that every value is finite, and keeps read-only arrays
    (its own copies unless they are read-only already); :meth:`many` checks a stack of poses
    at once.
    """

    rotation: np.ndarray = field(default_factory=lambda: _EYE)
    translation: np.ndarray = field(default_factory=_frozen_zeros)

    def __post_init__(self):
        _set(self, "rotation", _checked(self.rotation, (3, 3), "Pose.rotation"))
        _set(self, "translation", _checked(self.translation, (3,), "Pose.translation"))

    @classmethod
    def many(cls, rotations, translations) -> list["Pose"]:
        """The poses of ``rotations`` (n, 3, 3) and ``translations`` (n, 3), checked all at once
        (shapes, finite values).  ``rotations`` may also be a list of n read-only (3, 3) arrays
        (rows of a stack, or the shared identity rotation of ``Pose()``): each pose keeps its own."""
        t = _checked_stack(translations, (3,), "Pose.translation")
        if isinstance(rotations, np.ndarray):
            R = list(_checked_stack(rotations, (3, 3), "Pose.rotation"))
        else:
            R = list(rotations)
            turned = [k for k, r in enumerate(R) if r is not _EYE]  # (the shared identity needs no check)
            if turned:
                stack = _checked_stack(np.array([R[k] for k in turned], dtype=float), (3, 3), "Pose.rotation")
                for k, checked in zip(turned, stack):
                    if not _shareable(R[k], (3, 3)):
                        R[k] = checked
        if len(R) != len(t):
            raise ValueError(f"Pose.many: {len(R)} rotations for {len(t)} translations")
        return [_built(cls, {"rotation": r, "translation": x}) for r, x in zip(R, t)]

    def compose(self, inner: "Pose") -> "Pose":
        """The pose of ``inner`` (given relative to this pose) in the outer frame (the arrays it
        computes are checked; a rotation it keeps is one of the two poses')."""
        R, Ri = self.rotation, inner.rotation
        # the shared identity (the default rotation) is skipped: R @ I == R exactly
        if Ri is _EYE or R is _EYE:
            rotation = R if Ri is _EYE else Ri
        else:
            rotation = R @ Ri
            rotation.setflags(write=False)
            _finite(rotation, "Pose.rotation")
        translation = (inner.translation if R is _EYE else R @ inner.translation) + self.translation
        translation.setflags(write=False)
        return _built(Pose, {"rotation": rotation, "translation": _finite(translation, "Pose.translation")})

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

    def isclose(self, other: "Pose", atol: float = GEOMETRY_ATOL) -> bool:
        return bool(np.allclose(self.rotation, other.rotation, atol=atol)
                    and np.allclose(self.translation, other.translation, atol=atol))

    def __repr__(self) -> str:
        return f"Pose(rotation={self.rotation.tolist()}, translation={self.translation.tolist()})"


@record
class MassProperties:
    """Mass, centre of mass and central inertia of a rigid body.

    mass : float, kg, >= 0 (0 only for a massless frame).
    com : (3,) float, centre of mass in the body frame, m.
    inertia : (3, 3) float, inertia tensor about the centre of mass along the
        body axes, kg m^2, symmetric positive semi-definite.

    The constructor checks the shapes, that every value is finite and the mass not negative
    (physical consistency of the inertia is the readers' concern: files are read as written);
    :meth:`many` checks many at once.
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def __post_init__(self):
        mass = _checked_float(self.mass, "MassProperties.mass")
        if mass < 0.0:
            raise ValueError(f"MassProperties.mass must be >= 0, got {mass!r}")
        _set(self, "mass", mass)
        _set(self, "com", _checked(self.com, (3,), "MassProperties.com"))
        _set(self, "inertia", _checked(self.inertia, (3, 3), "MassProperties.inertia"))

    @classmethod
    def many(cls, masses, coms, inertias) -> list["MassProperties"]:
        """The mass properties of ``masses`` (n,), ``coms`` (n, 3) and ``inertias`` (n, 3, 3),
        checked all at once (shapes, finite values, masses not negative); rows shared."""
        m = np.asarray(masses, dtype=float)
        if m.ndim != 1 or not _all(np.isfinite(m), None) or _any(m < 0.0, None):
            raise ValueError("MassProperties.many: masses must be (n,) finite numbers >= 0")
        c = _checked_stack(coms, (3,), "MassProperties.com")
        J = _checked_stack(inertias, (3, 3), "MassProperties.inertia")
        if not len(m) == len(c) == len(J):
            raise ValueError(f"MassProperties.many: {len(m)} masses, {len(c)} centres, {len(J)} inertias")
        return [_built(cls, {"mass": mk, "com": ck, "inertia": jk}) for mk, ck, jk in zip(m.tolist(), c, J)]

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


@record
class Material:
    """The look of a shape (URDF ``<material>``, MJCF ``<material>``/``rgba``, SDFormat ``<material>``,
    a STEP part's colour): what exporters write so a model keeps its colours.

    name : the material's name in its file, or None for a bare colour.
    rgba : (4,) float tuple, red, green, blue, alpha, each in [0, 1].
    """

    name: str | None = None
    rgba: tuple = (0.5, 0.5, 0.5, 1.0)

    def __post_init__(self):
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise ValueError(f"Material.name must be a non-empty name or None, got {self.name!r}")
        rgba = tuple(_checked(self.rgba, (4,), "Material.rgba").tolist())
        if not all(0.0 <= x <= 1.0 for x in rgba):
            raise ValueError(f"Material.rgba must be 4 numbers in [0, 1], got {list(rgba)}")
        _set(self, "rgba", rgba)


@record
class Geometry:
    """A shape attached to a body.

    kind : 'mesh', 'box', 'cylinder', 'sphere', 'capsule' or 'ellipsoid'.
    params : dict of SI sizes: box ``size`` (3,), cylinder/capsule ``radius``
        and ``length`` (along local z; a capsule's length excludes its caps),
        sphere ``radius``, ellipsoid ``radii`` (3,), mesh ``scale`` (3,).
    pose : placement of the shape in the body frame.
    file : the mesh file (absolute path) for kind 'mesh'.
    role : 'inertial' (the shape gives the body its mass, shown and colliding), 'visual' (shown only:
        MJCF ``contype=conaffinity=0``, URDF ``<visual>``) or 'collision' (colliding; shown as well when
        its body has no visual shape).
    material : its :class:`Material` (colour), or None when the file gives none.
    """

    kind: str
    params: Mapping[str, object] = field(default_factory=dict)
    pose: Pose = field(default_factory=Pose)
    file: str | None = None
    role: str = "inertial"
    material: Material | None = None

    def __post_init__(self):
        if self.material is not None and not isinstance(self.material, Material):
            raise TypeError(f"Geometry.material must be a Material or None, got {type(self.material).__name__}")
        if self.role not in GEOMETRY_ROLES:
            raise ValueError(f"Geometry.role must be one of {', '.join(GEOMETRY_ROLES)}, got {self.role!r}")
        if not isinstance(self.pose, Pose):
            raise TypeError(f"Geometry.pose must be a Pose, got {type(self.pose).__name__}")


#: the roles of a :class:`Geometry`
GEOMETRY_ROLES = ("inertial", "visual", "collision")


@record
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

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or self.name == GROUND:
            raise ValueError(f"Body.name must be a non-empty name other than {GROUND!r}, got {self.name!r}")
        if not isinstance(self.pose, Pose) or not isinstance(self.mass, MassProperties):
            raise TypeError(f"body {self.name!r}: pose must be a Pose and mass a MassProperties, got "
                            f"{type(self.pose).__name__} and {type(self.mass).__name__}")
        if type(self.geometry) is not tuple:
            _set(self, "geometry", tuple(self.geometry))


@record
class Limits:
    """Joint limits; ``None`` where not given. Units: rad or m, per second, N or N m.

    Each is None or a number, kept as a float (infinite allowed: no bound; NaN refused).
    """

    lower: float | None = None
    upper: float | None = None
    velocity: float | None = None
    effort: float | None = None

    def __post_init__(self):
        for key in ("lower", "upper", "velocity", "effort"):
            v = getattr(self, key)
            if v is not None:
                if type(v) is not float:
                    try:
                        v = float(v)
                    except (TypeError, ValueError):
                        raise ValueError(f"Limits.{key} must be a number or None, got {v!r}") from None
                    _set(self, key, v)
                if v != v:
                    raise ValueError(f"Limits.{key} is NaN")


@record
class Motor:
    """A motor acting along an actuated joint's freedoms (a driver element of seed 004)."""

    name: str
    max_effort: float | None = None
    gear_ratio: float = 1.0
    rotor_inertia: float = 0.0

    def __post_init__(self):
        _set(self, "gear_ratio", _checked_float(self.gear_ratio, "Motor.gear_ratio"))
        _set(self, "rotor_inertia", _checked_float(self.rotor_inertia, "Motor.rotor_inertia"))
        if self.max_effort is not None:
            _set(self, "max_effort", _checked_float(self.max_effort, "Motor.max_effort"))


@record
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
    stiffness : joint spring stiffness, N m/rad or N/m (MJCF ``stiffness``, SDF ``spring_stiffness``):
        the spring force is ``-stiffness (q - springref)`` on a one-coordinate joint; a ball or
        free joint's spring pulls towards the reference configuration (MuJoCo's ``qpos_spring``).
    springref : the coordinate (rad or m) at which the joint spring is relaxed (MJCF ``springref``,
        absolute like ``q``: MuJoCo's ``qpos_spring``; SDF ``spring_reference``); one-coordinate joints.
    springdamper : (time constant s, damping ratio) or None (MJCF ``springdamper``, both positive): the
        stiffness and damping then follow from the joint's inertia ``m`` at the reference configuration
        (``1 / (M^-1)_ii``, MuJoCo's ``1 / dof_invweight0``), ``stiffness = m / (timeconst dampratio)^2``,
        ``damping = 2 m / timeconst``,
        replacing ``stiffness`` and ``damping`` (the model builder resolves them).
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
    origin: np.ndarray = field(default_factory=_frozen_zeros)
    axis: np.ndarray = field(default_factory=lambda: frozen(np.array([0.0, 0.0, 1.0])))
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
    stiffness: float = 0.0
    springref: float = 0.0
    springdamper: tuple[float, float] | None = None
    implicit: bool = False
    source: Source = field(default_factory=Source)

    def __post_init__(self):
        fields_ = self.__dict__
        fields_["origin"] = _checked(fields_["origin"], (3,), "Joint.origin")
        fields_["axis"] = _checked(fields_["axis"], (3,), "Joint.axis")
        _check_joint(fields_)

    @classmethod
    def many(cls, joints) -> list["Joint"]:
        """The joints of ``joints`` (dicts of the constructor's keywords), each checked as the
        constructor checks one, the ``origin`` and ``axis`` of all of them in one numpy pass:
        each joint's two are rows of two read-only stacks."""
        rows = [_with_defaults(cls, j) for j in joints]
        origins = _checked_stack([r["origin"] for r in rows] or np.zeros((0, 3)), (3,), "Joint.origin")
        axes = _checked_stack([r["axis"] for r in rows] or np.zeros((0, 3)), (3,), "Joint.axis")
        out = []
        for r, origin, axis in zip(rows, origins, axes):
            r["origin"], r["axis"] = origin, axis
            _check_joint(r)
            out.append(_built(cls, r))
        return out

    @property
    def nq(self) -> int:
        return JOINT_TYPES[self.type][0]

    @property
    def nv(self) -> int:
        return JOINT_TYPES[self.type][1]


def _check_joint(fields_: dict) -> None:
    """The checks of a :class:`Joint` (``fields_``: its fields, arrays ``origin`` and ``axis`` checked
    already) other than those two arrays; numbers made floats in place."""
    if fields_["type"] not in JOINT_TYPES:
        raise ValueError(f"joint {fields_['name']!r}: unknown joint type {fields_['type']!r} (known types: "
                         f"{', '.join(JOINT_TYPES)})")
    for key in ("axis2", "secondary_origin", "secondary_axis"):
        if fields_[key] is not None:
            fields_[key] = _checked(fields_[key], (3,), f"Joint.{key}")
    motor = fields_["motor"]
    if not isinstance(fields_["limits"], Limits) or not (motor is None or isinstance(motor, Motor)):
        raise TypeError(f"joint {fields_['name']!r}: limits must be Limits and motor a Motor or None")
    for key in ("damping", "ref", "stiffness", "springref"):
        v = fields_[key]
        if type(v) is not float or not _isfinite(v):
            fields_[key] = _checked_float(v, f"Joint.{key}")
    if fields_["springdamper"] is not None:
        tc, dr = (_checked_float(x, "Joint.springdamper") for x in fields_["springdamper"])
        if not (tc > 0 and dr > 0):
            raise ValueError(f"joint {fields_['name']!r}: springdamper must be two positive numbers, got {(tc, dr)}")
        fields_["springdamper"] = (tc, dr)
    if type(fields_["armature"]) is not float or not _isfinite(fields_["armature"]):
        fields_["armature"] = _checked_armature(fields_["armature"])


def _with_defaults(cls, given: dict) -> dict:
    """The fields of an instance of ``cls`` made of the keywords ``given``: a new dict, with the
    defaults of the fields ``given`` leaves out; TypeError as the constructor's for another key or a
    field without default left out."""
    names, defaults = _field_defaults(cls)
    out = dict(given)
    if len(out) != len(names) or not names.issuperset(out):
        unknown = sorted(set(out) - names)
        if unknown:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {unknown[0]!r}")
        for name, default, factory in defaults:
            if name not in out:
                if default is MISSING and factory is MISSING:
                    raise TypeError(f"{cls.__name__}() missing required argument: {name!r}")
                out[name] = default if factory is MISSING else factory()
    return out


@cache
def _field_defaults(cls) -> tuple[frozenset, tuple]:
    """(the field names of dataclass ``cls``, (name, default, default factory) of each field)."""
    return frozenset(f.name for f in fields(cls)), tuple((f.name, f.default, f.default_factory) for f in fields(cls))


def _checked_armature(value):
    """A joint's armature: one finite number, or one per freedom (a tuple of floats)."""
    if np.ndim(value) == 0:
        return _checked_float(value, "Joint.armature")
    return tuple(_checked_float(v, "Joint.armature") for v in np.ravel(value))


@record
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

    def __post_init__(self):
        _set(self, "multiplier", _checked_float(self.multiplier, "Coupling.multiplier"))
        _set(self, "offset", _checked_float(self.offset, "Coupling.offset"))
        _set(self, "higher", tuple(_checked_float(v, "Coupling.higher") for v in self.higher))

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


@record
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

    def __post_init__(self):
        _set(self, "point_a", _checked(self.point_a, (3,), "SpringDamper.point_a"))
        _set(self, "point_b", _checked(self.point_b, (3,), "SpringDamper.point_b"))
        _set(self, "stiffness", _checked_float(self.stiffness, "SpringDamper.stiffness"))
        _set(self, "damping", _checked_float(self.damping, "SpringDamper.damping"))
        if self.rest_length is not None:
            _set(self, "rest_length", _checked_float(self.rest_length, "SpringDamper.rest_length"))


#: the gain and bias types of an :class:`Actuator` (MuJoCo's ``gaintype``/``biastype`` that we model)
ACTUATOR_GAIN_TYPES = ("fixed", "affine")
ACTUATOR_BIAS_TYPES = ("none", "affine")
#: the activation dynamics of an :class:`Actuator` (MuJoCo's ``dyntype`` that we model)
ACTUATOR_DYN_TYPES = ("none", "integrator", "filter", "filterexact")


def _checked_range(value, what: str) -> tuple[float, float] | None:
    """None, or ``value`` as (lower, upper) floats with lower <= upper (infinite allowed, NaN refused)."""
    if value is None:
        return None
    lo, hi = (float(x) for x in value)
    if not lo <= hi:
        raise ValueError(f"{what} must be (lower, upper) with lower <= upper, got {(lo, hi)}")
    return lo, hi


@record
class Actuator:
    """An actuator driving one joint, with MuJoCo's semantics (a driver element of seed 004: a
    two-terminal edge parallel to the joint it drives, its input the control ``ctrl``).

    With ``length = gear q`` and ``velocity = gear v`` of the joint (one coordinate), the
    actuator force is ``gain ctrl + bias`` where ``gain = gain[0]`` (``gaintype`` fixed) or
    ``gain[0] + gain[1] length + gain[2] velocity`` (affine), ``bias`` 0 (none) or
    ``bias[0] + bias[1] length + bias[2] velocity`` (affine); ``ctrl`` is clamped to
    ``ctrlrange`` and the force to ``forcerange`` where given; the joint receives ``gear`` times
    the force (N m or N).

    name : unique among the assembly's actuators.
    joint : the joint it drives (one coordinate: revolute, continuous, prismatic); "" on a tendon.
    tendon : None, or the :class:`Tendon` it pulls along (MJCF ``tendon=``): ``length`` and ``velocity``
        are then ``gear L`` and ``gear L_dot`` and the joints receive ``gear J_L^T force``.
    kind : the element it was read from (``motor``, ``position``, ``velocity``, ``general`` ...).
    gear : transmission ratio, joint force per unit of actuator force.
    gain_type, bias_type : see above; gain, bias : (3,) their parameters.
    ctrlrange, forcerange : (lower, upper) or None (not limited).
    dyn_type : MuJoCo's activation dynamics: ``none`` (the force takes ``ctrl``), or an activation
        ``act`` (a state) that the force takes in place of ``ctrl``, with ``act_dot = ctrl``
        (``integrator``) or ``(ctrl - act) / timeconst`` (``filter``, ``filterexact``).
    timeconst : s, of the filters (MuJoCo's ``dynprm[0]``).
    actrange : (lower, upper) or None: the range ``act`` is held in (MuJoCo's ``actlimited``).
    actearly : MuJoCo's ``actearly`` (the force of its discrete step takes the next step's activation).
    """

    name: str
    joint: str
    kind: str = "general"
    gear: float = 1.0
    gain_type: str = "fixed"
    gain: tuple = (1.0, 0.0, 0.0)
    bias_type: str = "none"
    bias: tuple = (0.0, 0.0, 0.0)
    ctrlrange: tuple | None = None
    forcerange: tuple | None = None
    source: Source = field(default_factory=Source)
    tendon: str | None = None
    dyn_type: str = "none"
    timeconst: float = 1.0
    actrange: tuple | None = None
    actearly: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or not isinstance(self.joint, str):
            raise ValueError(f"Actuator.name and joint must be names, got {self.name!r}, {self.joint!r}")
        if self.dyn_type not in ACTUATOR_DYN_TYPES:
            raise ValueError(f"actuator {self.name!r}: dyn type must be one of {ACTUATOR_DYN_TYPES}, "
                             f"got {self.dyn_type!r}")
        _set(self, "timeconst", _checked_float(self.timeconst, "Actuator.timeconst"))
        _set(self, "actrange", _checked_range(self.actrange, f"actuator {self.name!r}: actrange"))
        _set(self, "actearly", bool(self.actearly))
        if self.gain_type not in ACTUATOR_GAIN_TYPES or self.bias_type not in ACTUATOR_BIAS_TYPES:
            raise ValueError(f"actuator {self.name!r}: gain type must be one of {ACTUATOR_GAIN_TYPES} and bias type "
                             f"one of {ACTUATOR_BIAS_TYPES}, got {self.gain_type!r}, {self.bias_type!r}")
        _set(self, "gear", _checked_float(self.gear, "Actuator.gear"))
        for key in ("gain", "bias"):
            _set(self, key, tuple(_checked(self.__dict__[key], (3,), f"Actuator.{key}").tolist()))
        for key in ("ctrlrange", "forcerange"):
            _set(self, key, _checked_range(self.__dict__[key], f"actuator {self.name!r}: {key}"))


# --- force elements of the native format's ``forces:`` section (seed 004 Fig. 1: two-terminal edges;
# the spring-damper between body points is :class:`SpringDamper` above) -------------------------------

def _nonnegative(obj, names: tuple[str, ...], what: str) -> None:
    for key in names:
        value = _checked_float(getattr(obj, key), f"{what}.{key}")
        if value < 0:
            raise ValueError(f"{what} {obj.name!r}: {key} must be >= 0, got {value:g}")
        _set(obj, key, value)


@record
class JointForceElement:
    """A spring, damper and Coulomb friction parallel to a one-coordinate joint (an edge between the
    joint's two attachment points, its across variable the joint coordinate).

    stiffness : N m/rad or N/m, relaxed at ``rest`` (the joint coordinate, rad or m);
    damping : N m s/rad or N s/m; friction : Coulomb friction torque or force (N m or N), regularised as
    ``-friction tanh(v / friction_velocity)`` (friction_velocity > 0, rad/s or m/s).
    """

    name: str
    joint: str
    stiffness: float = 0.0
    damping: float = 0.0
    rest: float = 0.0
    friction: float = 0.0
    friction_velocity: float = 0.01
    source: Source = field(default_factory=Source)

    def __post_init__(self):
        _nonnegative(self, ("stiffness", "damping", "friction"), "joint force element")
        _set(self, "rest", _checked_float(self.rest, "JointForceElement.rest"))
        vf = _checked_float(self.friction_velocity, "JointForceElement.friction_velocity")
        if not vf > 0:
            raise ValueError(f"joint force element {self.name!r}: friction_velocity must be > 0, got {vf:g}")
        _set(self, "friction_velocity", vf)


@record
class PointLoad:
    """A constant force (N) and torque (N m), both in the assembly (ground) frame, applied at ``point``
    (m, assembly frame at the reference configuration) of ``body``: an edge from ground to the point."""

    name: str
    body: str
    point: np.ndarray
    force: np.ndarray = field(default_factory=_frozen_zeros)
    torque: np.ndarray = field(default_factory=_frozen_zeros)
    source: Source = field(default_factory=Source)

    def __post_init__(self):
        for key in ("point", "force", "torque"):
            _set(self, key, _checked(getattr(self, key), (3,), f"PointLoad.{key}"))


@record
class DCMotor:
    """A DC motor driving a one-coordinate joint through a gear (seed 004 sections 3 and 5: a component
    of the electrical domain joined to the mechanism; its current a state, its voltage an input).

    Electrical port: ``inductance di/dt = voltage - resistance i - back_emf_constant w_m``; mechanical
    port: the joint receives ``efficiency gear_ratio torque_constant i``, with ``w_m = gear_ratio v``
    the rotor's speed (v the joint's) and the rotor's inertia reflected as ``gear_ratio^2 rotor_inertia``
    on the joint.

    resistance (ohm) and inductance (H) > 0; torque_constant (N m/A) and back_emf_constant (V s/rad)
    > 0; rotor_inertia (kg m^2) >= 0; gear_ratio (rotor turns per joint turn, or rad per m on a
    prismatic joint) != 0; efficiency in (0, 1].
    """

    name: str
    joint: str
    resistance: float
    inductance: float
    torque_constant: float
    back_emf_constant: float
    rotor_inertia: float = 0.0
    gear_ratio: float = 1.0
    efficiency: float = 1.0
    source: Source = field(default_factory=Source)

    def __post_init__(self):
        for key in ("resistance", "inductance", "torque_constant", "back_emf_constant"):
            value = _checked_float(getattr(self, key), f"DCMotor.{key}")
            if not value > 0:
                raise ValueError(f"DC motor {self.name!r}: {key} must be > 0, got {value:g}")
            _set(self, key, value)
        _nonnegative(self, ("rotor_inertia",), "DC motor")
        _set(self, "gear_ratio", _checked_float(self.gear_ratio, "DCMotor.gear_ratio"))
        if self.gear_ratio == 0:
            raise ValueError(f"DC motor {self.name!r}: gear_ratio must not be 0")
        eta = _checked_float(self.efficiency, "DCMotor.efficiency")
        if not 0 < eta <= 1:
            raise ValueError(f"DC motor {self.name!r}: efficiency must be in (0, 1], got {eta:g}")
        _set(self, "efficiency", eta)


@record
class Tendon:
    """An MJCF tendon as a force element (MuJoCo's semantics, XML reference ``tendon``): its length ``L``
    is ``sum coef_i q_i`` over one-coordinate joints (``fixed``) or the sum of the distances between
    consecutive sites (``spatial``, through sites only); its spring-damper pulls with
    ``-stiffness (L - lower)`` below ``lower``, ``-stiffness (L - upper)`` above ``upper`` (a dead band
    between them), and ``-damping L_dot``; an actuator with ``tendon=`` acts along it.

    joints : ((joint name, coef), ...) of a fixed tendon.
    sites : ((body name or GROUND, (3,) point in the assembly frame at the reference configuration, m), ...)
        of a spatial tendon, in path order.
    stiffness : N/m or N m/rad per unit of length; damping : N s/m per unit of length rate.
    springlength : (lower, upper), m (or rad for a fixed tendon), or None: the length where every joint is
        at its ``springref`` (MuJoCo's ``qpos_spring``).
    """

    name: str
    kind: str
    joints: tuple = ()
    sites: tuple = ()
    stiffness: float = 0.0
    damping: float = 0.0
    springlength: tuple | None = None
    source: Source = field(default_factory=Source)

    def __post_init__(self):
        if self.kind not in ("fixed", "spatial"):
            raise ValueError(f"tendon {self.name!r}: kind must be 'fixed' or 'spatial', got {self.kind!r}")
        _set(self, "joints", tuple((str(j), _checked_float(c, "Tendon.coef")) for j, c in self.joints))
        _set(self, "sites", tuple((str(b), _checked(p, (3,), "Tendon.sites")) for b, p in self.sites))
        if (self.kind == "fixed") != bool(self.joints) or (self.kind == "spatial" and len(self.sites) < 2):
            raise ValueError(f"tendon {self.name!r}: a fixed tendon needs joints, a spatial one two sites or more")
        _nonnegative(self, ("stiffness", "damping"), "tendon")
        _set(self, "springlength", _checked_range(self.springlength, f"tendon {self.name!r}: springlength"))


#: the records an :attr:`Assembly.forces` holds
FORCE_RECORDS = (JointForceElement, PointLoad, DCMotor, Tendon)


@record
class Frame:
    """A named frame fixed to a body (a part kept inside a lumped composite, a sensor site).

    body : the body it is fixed to.
    pose : the frame's pose in the assembly frame at the reference configuration.
    """

    name: str
    body: str
    pose: Pose
    source: Source = field(default_factory=Source)

    def __post_init__(self):
        if not isinstance(self.pose, Pose):
            raise TypeError(f"frame {self.name!r}: pose must be a Pose, got {type(self.pose).__name__}")


@record
class ValueUnits:
    """The units of the joint values a user gives for a file: the CLI's ``--q0``, ``--v0``, ``--q``,
    ``--v`` and a pipeline's ``simulation.initial`` (plain numbers; a number with a unit, ``20deg``, is
    exact whatever these say).  The native YAML format's ``units:`` sets them; URDF, SDFormat, MJCF
    (whose ``qpos`` is in rad and m whatever its ``angle``) and STEP inputs keep SI.

    length : metres per length unit (``length_name``); angle : radians per angle unit (``angle_name``).
    Velocities are in these per second; quaternion coordinates have no unit.
    """

    length: float = 1.0
    angle: float = 1.0
    length_name: str = "m"
    angle_name: str = "rad"

    def __post_init__(self):
        if not (np.isfinite(self.length) and self.length > 0 and np.isfinite(self.angle) and self.angle > 0):
            raise ValueError(f"ValueUnits: positive finite factors expected, got {self.length}, {self.angle}")

    @property
    def si(self) -> bool:
        """Plain numbers are SI (rad, m)."""
        return self.length == 1.0 and self.angle == 1.0

    def factors(self, kinds: str) -> np.ndarray:
        """(len(kinds),) SI per given unit of coordinates of ``kinds`` ('a' angle, 'l' length, '1' none;
        :attr:`dynamics.joints.JointType.q_units`)."""
        table = {"a": self.angle, "l": self.length, "1": 1.0}
        return np.array([table[k] for k in kinds])


#: the units of SI inputs (URDF, SDFormat, MJCF, STEP)
SI_VALUES = ValueUnits()


@record
class Assembly:
    """A mechanical assembly: bodies, joints and forces in SI units.

    name : assembly name.
    bodies : the rigid parts (ground excluded).
    joints : all joints, including fixed ones and joints that close loops.
    gravity : (3,) gravitational acceleration in the assembly frame, m/s^2.
    couplings : joint couplings (mimic).
    springs : spring-damper force elements between body points (:class:`SpringDamper`).
    forces : the other force elements (:data:`FORCE_RECORDS`: joint spring-damper-friction, point loads,
        DC motors).
    actuators : actuators driving joints (:class:`Actuator`), in the file's order.
    frames : named frames fixed to bodies.
    source_file : the file the assembly was read from.
    contacts : contacts between parts found in a CAD assembly (``parsers.step.mating.Contact``,
        SI units), from which its joints were inferred; empty for other inputs.
    value_units : the units of the joint values a user gives for this file (:class:`ValueUnits`).
    """

    name: str
    bodies: tuple[Body, ...]
    joints: tuple[Joint, ...]
    gravity: np.ndarray = field(default_factory=lambda: frozen(np.array([0.0, 0.0, -9.81])))
    couplings: tuple[Coupling, ...] = ()
    springs: tuple[SpringDamper, ...] = ()
    frames: tuple[Frame, ...] = ()
    source_file: str | None = None
    contacts: tuple = ()
    actuators: tuple[Actuator, ...] = ()
    forces: tuple = ()
    value_units: ValueUnits = SI_VALUES

    def __post_init__(self):
        if not isinstance(self.value_units, ValueUnits):
            raise TypeError(f"Assembly.value_units must be ValueUnits, got {type(self.value_units).__name__}")
        _set(self, "gravity", _checked(self.gravity, (3,), "Assembly.gravity"))
        fields_ = self.__dict__
        for key, cls in _ASSEMBLY_ITEMS:
            items = fields_[key]
            if type(items) is not tuple:
                items = fields_[key] = tuple(items)
            if items and not all(isinstance(x, cls) for x in items):
                bad = next(x for x in items if not isinstance(x, cls))
                what = " or ".join(c.__name__ for c in (cls if isinstance(cls, tuple) else (cls,)))
                raise TypeError(f"Assembly.{key} must hold {what}s, got a {type(bad).__name__}")

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

    @cached_property
    def body_stacks(self) -> BodyStacks:
        """The bodies' poses and mass properties stacked in rows (:class:`BodyStacks`), built on first
        use and kept: the scale check, the graph stage's twist reference and the composites' masses
        read the same rows."""
        return body_stacks(self.bodies)

    @cached_property
    def joint_origins(self) -> np.ndarray:
        """(m, 3) the joints' ``origin`` rows (assembly frame, m), read-only, in the order of ``joints``."""
        return frozen(np.concatenate([j.origin for j in self.joints]).reshape(-1, 3) if self.joints else np.zeros((0, 3)))


#: the collections of an :class:`Assembly` and the records each holds
_ASSEMBLY_ITEMS = (("bodies", Body), ("joints", Joint), ("couplings", Coupling), ("springs", SpringDamper),
                   ("frames", Frame), ("actuators", Actuator), ("forces", FORCE_RECORDS))


class BodyStacks(NamedTuple):
    """The values of an assembly's bodies in rows, in the order of ``Assembly.bodies`` (read-only arrays).

    translation : (n, 3) m, each body frame's origin in the assembly frame.
    rotation : (n, 3, 3) each body frame's orientation in the assembly frame, or None when every body
        keeps the shared identity rotation of ``Pose()`` (then ``R x == x`` exactly).
    mass : (n,) kg;  com : (n, 3) m, in the body frame;  inertia : (n, 3, 3) kg m^2, about the centre
        of mass along the body axes.
    """

    translation: np.ndarray
    rotation: np.ndarray | None
    mass: np.ndarray
    com: np.ndarray
    inertia: np.ndarray


def body_stacks(bodies) -> BodyStacks:
    """:class:`BodyStacks` of ``bodies`` (a sequence of :class:`Body`); ``np.concatenate`` of the rows,
    the cheapest stacking of small arrays."""
    if not bodies:
        return BodyStacks(*(frozen(np.zeros(s)) for s in ((0, 3), (0, 3, 3), (0,), (0, 3), (0, 3, 3))))
    poses, props = [b.pose for b in bodies], [b.mass for b in bodies]
    turned = not all(p.rotation is _EYE for p in poses)
    return BodyStacks(frozen(np.concatenate([p.translation for p in poses]).reshape(-1, 3)),
                      frozen(np.concatenate([p.rotation for p in poses]).reshape(-1, 3, 3)) if turned else None,
                      frozen(np.array([p.mass for p in props], dtype=float)),
                      frozen(np.concatenate([p.com for p in props]).reshape(-1, 3)),
                      frozen(np.concatenate([p.inertia for p in props]).reshape(-1, 3, 3)))
