"""The records of the force elements a tree model carries: joint springs, dampers and actuators with
MuJoCo's semantics, and the elements of the native format's ``forces:`` section (a spring-damper with
Coulomb friction parallel to a joint, a spring-damper between two body points, a constant force and
torque at a body point).  :mod:`dynamics.forces` evaluates them; its docstring gives their terminal
equations (seed 004 Fig. 1)."""

from __future__ import annotations

from dataclasses import field, replace

import numpy as np

from .joints import JOINTS
from .records import record

__all__ = ["JointSpring", "ActuatorSpec", "JointForce", "PointSpring", "PointLoad", "DCMotorSpec", "TendonSpec",
           "ForceElements"]

#: MuJoCo's activation dynamics that :class:`ActuatorSpec` takes, by code (the index)
DYN_TYPES = ("none", "integrator", "filter", "filterexact")

#: (nq, nv) of the joints whose configuration is a unit quaternion ``[w, x, y, z]`` (nq 4, nv 3) or
#: ``[p; quaternion]`` (nq 7, nv 6): their springs pull towards the identity (module docstring of
#: :mod:`dynamics.forces`)
QUATERNION_JOINT_SHAPES = ((4, 3), (7, 6))


@record(eq=True)
class JointSpring:
    """The spring and damper parallel to one joint.

    joint : the joint's name.
    stiffness : N m/rad or N/m; damping : N m s/rad or N s/m (every velocity coordinate).
    springref : the coordinate (rad or m) where a hinge's or slide's spring is relaxed; a ball's and
        a free joint's spring is relaxed at the reference configuration (``neutral()``).
    """

    joint: str
    stiffness: float = 0.0
    damping: float = 0.0
    springref: float = 0.0


@record(eq=True)
class ActuatorSpec:
    """An actuator on a one-coordinate joint, or along the :class:`TendonSpec` named ``tendon`` (``joint``
    then unused; see :mod:`dynamics.forces`).

    gain, bias : (3,) affine coefficients (constant, per unit length, per unit velocity).
    ctrlrange, forcerange : (lower, upper); (-inf, inf) when not limited.
    dyntype : MuJoCo's activation dynamics, one of :data:`DYN_TYPES`: ``none`` (the force's input is
        ``ctrl``) or an activation ``act`` (a state; the force's input) with ``act_dot = ctrl``
        (``integrator``) or ``(ctrl - act) / timeconst`` (``filter``, ``filterexact``).
    timeconst : s, the filters' time constant (MuJoCo's ``dynprm[0]``, at least ``MJ_MINVAL``).
    actrange : (lower, upper) the activation is held in; (-inf, inf) when not limited.
    actearly : MuJoCo's ``actearly`` (kept for the exports; :mod:`dynamics.forces` says what it means here).
    """

    name: str
    joint: str
    gear: float = 1.0
    gain: tuple = (1.0, 0.0, 0.0)
    bias: tuple = (0.0, 0.0, 0.0)
    ctrlrange: tuple = (-np.inf, np.inf)
    forcerange: tuple = (-np.inf, np.inf)
    tendon: str | None = None
    dyntype: str = "none"
    timeconst: float = 1.0
    actrange: tuple = (-np.inf, np.inf)
    actearly: bool = False

    def __post_init__(self):
        if self.dyntype not in DYN_TYPES:
            raise ValueError(f"actuator {self.name!r}: dyntype must be one of {DYN_TYPES}, got {self.dyntype!r}")

    @property
    def stateful(self) -> bool:
        """True when the actuator has an activation state."""
        return self.dyntype != "none"


@record(eq=True)
class JointForce:
    """A spring, damper and Coulomb friction parallel to a one-coordinate joint (the native format's
    ``joint_spring`` and ``joint_friction``).

    stiffness : N m/rad or N/m; rest : the coordinate where the spring is relaxed (rad or m);
    damping : N m s/rad or N s/m; friction : the Coulomb friction torque or force (N m or N),
    regularised as ``-friction tanh(v / friction_velocity)`` (friction_velocity rad/s or m/s, > 0).
    """

    name: str
    joint: str
    stiffness: float = 0.0
    damping: float = 0.0
    rest: float = 0.0
    friction: float = 0.0
    friction_velocity: float = 1.0


@record(eq=True)
class PointSpring:
    """A linear spring-damper between a point of body ``body_a`` and a point of ``body_b`` (None: ground).

    point_a, point_b : (3,) the points in the assembly frame at the reference configuration
    (``model.neutral()``), m; stiffness N/m, damping N s/m, rest_length m.
    """

    name: str
    body_a: str | None
    point_a: tuple
    body_b: str | None
    point_b: tuple
    stiffness: float = 0.0
    damping: float = 0.0
    rest_length: float = 0.0


@record(eq=True)
class PointLoad:
    """A constant force (N) and torque (N m), both in the ground frame, applied at a point of ``body``
    given in the assembly frame at the reference configuration (m)."""

    name: str
    body: str
    point: tuple
    force: tuple = (0.0, 0.0, 0.0)
    torque: tuple = (0.0, 0.0, 0.0)


@record(eq=True)
class DCMotorSpec:
    """A DC motor on a one-coordinate joint (:func:`dynamics.forces.motor_rates` gives its equations).

    resistance ohm, inductance H, torque_constant N m/A, back_emf_constant V s/rad, gear_ratio rotor
    rad per joint rad (or per m), efficiency in (0, 1].  Its rotor inertia is the joint's armature
    (the model builder adds ``gear_ratio^2 rotor_inertia`` there).
    """

    name: str
    joint: str
    resistance: float
    inductance: float
    torque_constant: float
    back_emf_constant: float
    gear_ratio: float = 1.0
    efficiency: float = 1.0


@record(eq=True)
class TendonSpec:
    """A tendon (MuJoCo's, :mod:`dynamics.forces` gives its length, Jacobian and forces).

    joints : ((joint, coef), ...): a fixed tendon ``L = sum coef q`` over one-coordinate joints.
    sites : ((body or None for ground, (3,) point in the assembly frame at ``model.neutral()``, m), ...): a
        spatial tendon through these points, in order (``L`` the sum of the distances).
    stiffness N/m (or N m/rad), damping N s/m; springlength (lower, upper) or None: the length at
    ``spring_q``, the configuration ``neutral()`` with these ((joint, coordinate), ...) set
    (MuJoCo's ``qpos_spring``).
    """

    name: str
    joints: tuple = ()
    sites: tuple = ()
    stiffness: float = 0.0
    damping: float = 0.0
    springlength: tuple | None = None
    spring_q: tuple = ()


@record(eq=True)
class ForceElements:
    """The force elements of a tree model, by joint and body name (:class:`dynamics.SKOModel` resolves
    them to its coordinates once: :meth:`indexed`).

    springs, actuators : joint springs and dampers and actuators (MuJoCo's semantics);
    elements : :class:`JointForce`, :class:`PointSpring`, :class:`PointLoad` and :class:`DCMotorSpec` records.
    """

    springs: tuple[JointSpring, ...] = ()
    actuators: tuple[ActuatorSpec, ...] = ()
    elements: tuple = ()
    # set by :meth:`indexed`
    layout: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def actuator_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.actuators)

    @property
    def activation_names(self) -> tuple[str, ...]:
        """The actuators with an activation state, in the order of the activations (MuJoCo's ``act``)."""
        return tuple(a.name for a in self.actuators if a.stateful)

    @property
    def motor_names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.elements if isinstance(e, DCMotorSpec))

    def indexed(self, model) -> "ForceElements":
        """These elements with their coordinates in ``model`` (anything with ``joint_types``,
        ``joint_index``, ``q_slice``, ``v_slice``, ``nv``): the arrays the evaluations use, read-only.
        A kind of element the model does not carry (no springs, no actuators, no ``forces:``
        elements: most robots) gets the shared empty arrays of :data:`_EMPTY_LAYOUT`."""
        damping = np.zeros(model.nv)
        lay = {**_EMPTY_LAYOUT, "damping": damping}
        if self.springs:
            lay.update(_spring_layout(self.springs, model, damping))
        damping.setflags(write=False)
        if self.elements:
            lay.update(_element_layout(self.elements, model))
        if self.actuators:
            lay.update(_actuator_layout(self.actuators, model, [t.name for t in lay["tendons"]]))
        return ForceElements(self.springs, self.actuators, self.elements, lay)


def _spring_layout(springs, model, damping: np.ndarray) -> dict:
    """The index and stiffness arrays of the joint ``springs`` in ``model``'s coordinates; their
    damping is written into ``damping`` (nv,)."""
    types = dict(zip(model.joint_names, model.joint_types))
    lay = {"q1": [], "v1": [], "k1": [], "ref1": [], "balls": [], "frees": []}
    for s in springs:
        if s.joint not in types:
            raise ValueError(f"joint spring on unknown joint {s.joint!r}")
        qs, vs = model.q_slice(s.joint), model.v_slice(s.joint)
        damping[vs] = s.damping
        if not s.stiffness:
            continue
        if vs.stop - vs.start == 1 and qs.stop - qs.start == 1:
            lay["q1"].append(qs.start), lay["v1"].append(vs.start)
            lay["k1"].append(s.stiffness), lay["ref1"].append(s.springref)
        elif (JOINTS[types[s.joint]].nq, JOINTS[types[s.joint]].nv) in QUATERNION_JOINT_SHAPES:
            # q a unit quaternion (a ball) or [p; quaternion] (a free joint), JOINTS' coordinates
            kind = "balls" if JOINTS[types[s.joint]].nv == 3 else "frees"
            lay[kind].append((qs.start, vs.start, s.stiffness))
        else:
            raise ValueError(f"joint {s.joint!r} ({types[s.joint]}): springs act on one-coordinate joints "
                             "and on those whose configuration is a quaternion (ball, free)")
    for key in ("q1", "v1"):
        lay[key] = np.array(lay[key], dtype=int)
    lay["k1"], lay["ref1"] = np.array(lay["k1"], dtype=float), np.array(lay["ref1"], dtype=float)
    return lay


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _empty_layout() -> dict:
    """The layout of no springs, no ``forces:`` elements and no actuators (every array empty and
    read-only, every list an empty tuple), except ``damping``, which :meth:`ForceElements.indexed`
    sizes per model."""
    ints = lambda *shape: _read_only(np.zeros(shape or (0,), dtype=int))
    floats = lambda *shape: _read_only(np.zeros(shape or (0,), dtype=float))
    lay = {"q1": ints(), "v1": ints(), "k1": floats(), "ref1": floats(), "balls": (), "frees": (),
           "point_springs": (), "loads": (), "tendons": ()}
    lay.update({key: ints() for key in ("jf_v", "jf_q", "motor_v", "act_q", "act_v", "act_t", "act_states",
                                        "act_dyn")})
    lay.update({key: floats() for key in ("jf_k", "jf_c", "jf_rest", "jf_f", "jf_vf", "motor_R", "motor_L",
                                          "motor_kt", "motor_ke", "motor_N", "motor_eta", "gear", "act_tau")})
    lay.update(gain=floats(0, 3), bias=floats(0, 3), ctrlrange=floats(0, 2), forcerange=floats(0, 2),
               actrange=floats(0, 2))
    return lay


#: what :meth:`ForceElements.indexed` starts from: the arrays of a model without force elements,
#: shared by every such model (read-only)
_EMPTY_LAYOUT = _empty_layout()


def _actuator_layout(actuators, model, tendons) -> dict:
    """Index and parameter arrays of ``actuators`` in ``model``'s coordinates: a joint actuator's
    coordinate (``act_q``, ``act_v``; -1 on a tendon) and a tendon actuator's index in ``tendons``
    (``act_t``, -1 on a joint)."""
    qa, va, ta = [], [], []
    for a in actuators:
        if a.tendon is not None:
            if a.tendon not in tendons:
                raise ValueError(f"actuator {a.name!r}: unknown tendon {a.tendon!r}")
            qa.append(-1), va.append(-1), ta.append(tendons.index(a.tendon))
            continue
        ta.append(-1)
        qs, vs = model.q_slice(a.joint), model.v_slice(a.joint)
        if qs.stop - qs.start != 1 or vs.stop - vs.start != 1:
            raise ValueError(f"actuator {a.name!r}: joint {a.joint!r} has {vs.stop - vs.start} freedoms; "
                             "actuators drive one-coordinate joints")
        qa.append(qs.start), va.append(vs.start)
    n = len(actuators)
    rows = lambda key, width: np.array([getattr(a, key) for a in actuators], dtype=float).reshape(n, width)
    return {"act_q": np.array(qa, dtype=int), "act_v": np.array(va, dtype=int), "act_t": np.array(ta, dtype=int),
            "gear": rows("gear", 1)[:, 0],
            "gain": rows("gain", 3), "bias": rows("bias", 3), "ctrlrange": rows("ctrlrange", 2),
            "forcerange": rows("forcerange", 2),
            "act_states": np.array([i for i, a in enumerate(actuators) if a.stateful], dtype=int),
            "act_dyn": np.array([DYN_TYPES.index(a.dyntype) for a in actuators if a.stateful], dtype=int),
            "act_tau": np.array([a.timeconst for a in actuators if a.stateful], dtype=float),
            "actrange": np.array([a.actrange for a in actuators if a.stateful], dtype=float).reshape(-1, 2)}


def _one_coordinate(model, joint: str, what: str) -> int:
    """The velocity index of the one-coordinate joint ``joint`` (ValueError naming ``what`` otherwise)."""
    if joint not in model.joint_names:
        raise ValueError(f"{what}: unknown joint {joint!r}")
    qs, vs = model.q_slice(joint), model.v_slice(joint)
    if qs.stop - qs.start != 1 or vs.stop - vs.start != 1:
        raise ValueError(f"{what}: joint {joint!r} has {vs.stop - vs.start} freedoms; it takes one-coordinate joints")
    return vs.start, qs.start


def _local_point(model, body: str | None, point, poses) -> tuple[int, np.ndarray]:
    """(body index or -1 for ground, the point in that body's frame) of a point given in the assembly
    frame at the reference configuration (``poses``: ``body_poses`` at ``neutral()``)."""
    p = np.asarray(point, dtype=float)
    if body is None:
        return -1, p
    k = model.body_index(body)
    R, o = poses
    return k, R[k].T @ (p - o[k])


def _element_layout(elements, model) -> dict:
    """Index and parameter arrays of the :class:`JointForce`, :class:`PointSpring` and :class:`PointLoad`
    records in ``model``'s coordinates and body frames."""
    from .kinematics import body_poses

    joint = [e for e in elements if isinstance(e, JointForce)]
    idx = [_one_coordinate(model, e.joint, f"force element {e.name!r}") for e in joint]
    col = lambda key: np.array([getattr(e, key) for e in joint], dtype=float)
    lay = {"jf_v": np.array([i[0] for i in idx], dtype=int), "jf_q": np.array([i[1] for i in idx], dtype=int),
           "jf_k": col("stiffness"), "jf_c": col("damping"), "jf_rest": col("rest"), "jf_f": col("friction"),
           "jf_vf": col("friction_velocity"), "point_springs": [], "loads": []}
    motors = [e for e in elements if isinstance(e, DCMotorSpec)]
    idx = [_one_coordinate(model, e.joint, f"DC motor {e.name!r}")[0] for e in motors]
    col = lambda key: np.array([getattr(e, key) for e in motors], dtype=float)
    lay.update({"motor_v": np.array(idx, dtype=int), "motor_R": col("resistance"), "motor_L": col("inductance"),
                "motor_kt": col("torque_constant"), "motor_ke": col("back_emf_constant"),
                "motor_N": col("gear_ratio"), "motor_eta": col("efficiency")})
    lay["tendons"] = [_tendon_layout(e, model) for e in elements if isinstance(e, TendonSpec)]
    others = [e for e in elements if not isinstance(e, (JointForce, DCMotorSpec, TendonSpec))]
    if not others:
        return lay
    poses = body_poses(model, model.neutral())
    for e in others:
        if isinstance(e, PointSpring):
            a, b = _local_point(model, e.body_a, e.point_a, poses), _local_point(model, e.body_b, e.point_b, poses)
            lay["point_springs"].append((a, b, e.stiffness, e.damping, e.rest_length))
        elif isinstance(e, PointLoad):
            lay["loads"].append((_local_point(model, e.body, e.point, poses),
                                 np.concatenate([np.asarray(e.torque, float), np.asarray(e.force, float)])))
        else:
            raise TypeError(f"not a force element record: {type(e).__name__}")
    return lay


@record(eq=True)
class TendonLayout:
    """A tendon in a model's coordinates: ``coef`` (nv,) of a fixed tendon (``L = coef . q[q_index]``,
    ``q_index`` (nv,) the coordinate of each velocity, -1 where coef is 0), or ``sites`` ((body index or -1,
    (3,) point in that body's frame), ...) of a spatial one; ``lower``, ``upper`` its spring's lengths."""

    name: str
    coef: np.ndarray | None
    q_index: np.ndarray | None
    sites: tuple
    stiffness: float
    damping: float
    lower: float
    upper: float


def _tendon_layout(t: TendonSpec, model) -> TendonLayout:
    """The :class:`TendonLayout` of ``t`` in ``model``; a default spring length is the tendon's length at
    ``t.spring_q`` (:func:`dynamics.forces.tendon_lengths`)."""
    from .forces import tendon_kinematics
    from .kinematics import body_poses

    coef = q_index = None
    sites = ()
    if t.joints:
        coef, q_index = np.zeros(model.nv), np.full(model.nv, -1)
        for joint, c in t.joints:
            v, q = _one_coordinate(model, joint, f"tendon {t.name!r}")
            coef[v] += c
            q_index[v] = q
    else:
        poses = body_poses(model, model.neutral())
        sites = tuple(_local_point(model, body, point, poses) for body, point in t.sites)
    lay = TendonLayout(t.name, coef, q_index, sites, t.stiffness, t.damping, 0.0, 0.0)
    if t.springlength is not None:
        return replace(lay, lower=t.springlength[0], upper=t.springlength[1])
    q = model.neutral()
    for joint, value in t.spring_q:
        q[model.q_slice(joint)] = value
    length = float(tendon_kinematics(model, lay, q[None, :], np.zeros((1, model.nv)))[0][0])
    return replace(lay, lower=length, upper=length)
