"""SDFormat joints: axes, limits, and the joints that are couplings (screw, gearbox, ``<mimic>``).

* ``revolute``, ``continuous``, ``prismatic``, ``fixed``, ``ball`` (spherical) and
  ``universal`` (``axis`` fixed in the parent, ``axis2`` in the child) map to the
  joint types of the same freedoms.  ``revolute2`` (``axis`` in the parent,
  ``axis2`` in the child) is a universal joint when its axes are orthogonal, and
  refused otherwise.
* ``screw``: one freedom, rotation ``theta`` about the axis with translation
  ``d = p theta / (2 pi)`` along it, ``p`` = ``<screw_thread_pitch>`` in metres per
  revolution (right-handed when positive, SDFormat 1.10), or ``-2 pi /
  <thread_pitch>`` (the older rad/m, left-handed when positive); 1 m/rev when
  neither is given.  Exactly: a prismatic joint ``NAME_translation`` from the
  parent to a massless body ``NAME_carriage``, then the revolute joint ``NAME``
  to the child (both at the screw's origin, along its axis), and the coupling
  ``q[NAME_translation] = p / (2 pi) q[NAME]``.  Limits and damping apply to the rotation.
* ``gearbox``: no joint of its own; the coupling ``theta_2 = -gearbox_ratio theta_1``
  of the angle ``theta_1`` of the parent and ``theta_2`` of the child, each relative
  to ``gearbox_reference_body`` about ``axis`` and ``axis2`` (SDFormat joint.sdf).
  Each angle must be the coordinate of a revolute (or continuous) joint between
  the reference body and that link, about a parallel axis; the coupling is
  written on those two joints (signs fixed by their axes and directions).
* ``<axis><mimic joint="LEADER">`` (SDFormat 1.11): ``q = multiplier (q[LEADER] -
  reference) + offset`` as a coupling of this joint.

Couplings are :class:`~parsers.assembly.Coupling` s, embedded like URDF ``mimic``.

A limit of magnitude 1e16 or more (SDFormat's default, meaning "unbounded"), beyond the
``magnitude`` limit or infinite is no limit (:func:`parsers.limits.joint_bound`).

Position limits (``<limit><lower>``/``<upper>``) are kept for the joint types that take them
(revolute, prismatic, and a screw's rotation: :mod:`dynamics.joints`); on a continuous joint
(whose range SDFormat leaves unbounded) or either axis of a universal/revolute2 joint (two
coordinates, one limit pair in the assembly) they are dropped with a warning.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.tolerances import DECLARED_GEOMETRY_ATOL

from ..assembly import Body, Coupling, Joint, Limits, MassProperties, Pose, Source
from ..errors import FOREIGN_TEXT
from ..limits import joint_bound
from ..xml import child_text, error, file_of, text_bool, text_float, text_floats, where

JOINT_MAP = {"revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic", "fixed": "fixed",
             "ball": "spherical", "universal": "universal", "revolute2": "universal", "screw": "revolute",
             "gearbox": None}
#: the SDFormat types with an ``<axis>`` (a gearbox, no joint of its own, has both)
AXIAL = tuple(s for s, t in JOINT_MAP.items() if t is None or JOINTS[t].has_axis)

#: the SDFormat types whose limits bound their coordinate (for messages)
_LIMITED = tuple(s for s, t in JOINT_MAP.items() if t is not None and JOINTS[t].takes_limits)

log = logging.getLogger(__name__)
log.addFilter(FOREIGN_TEXT)  # (warnings about a file outside the model folder say where, not what)


def joint_axis(a_el, X_joint: Pose, frames, jname, jtype):
    """(unit axis in the world, Limits, damping) of an ``<axis>`` or ``<axis2>``.

    ``frames``: the scope's view (``v17``, ``resolve(name, at)`` -> world pose, ``model_pose()``).
    """
    xyz_el = a_el.find("xyz")
    if xyz_el is None:
        raise error(a_el, f"joint {jname!r}: <{a_el.tag}> needs <xyz>")
    v = text_floats(xyz_el, 3)
    if not np.linalg.norm(v) > 0:
        raise error(xyz_el, f"joint {jname!r}: axis must be non-zero")
    v = v / np.linalg.norm(v)
    expressed = xyz_el.get("expressed_in")
    if expressed is not None:
        if not frames.v17:
            raise error(xyz_el, "xyz@expressed_in needs SDFormat 1.7 or later")
        R = frames.resolve(expressed, xyz_el).rotation
    else:
        upm = a_el.find("use_parent_model_frame")
        if upm is not None and text_bool(upm):
            if frames.v17:
                raise error(upm, "<use_parent_model_frame> was removed in SDFormat 1.7; use xyz@expressed_in")
            R = frames.model_pose().rotation
        else:
            R = X_joint.rotation
    return R @ v, _limits(a_el.find("limit"), jname, jtype), _damping(a_el)


def _limits(l_el, jname, jtype) -> Limits:
    if l_el is None:
        return Limits()

    def val(tag):
        c = l_el.find(tag)
        if c is None:
            return None
        try:
            x = joint_bound(c.text or "")
        except ValueError:
            return text_float(c)  # (raises the reader's message for it)
        return None if x is None or abs(x) >= 1e16 else x
    lo, hi = val("lower"), val("upper")
    ours = JOINT_MAP.get(jtype)
    if ours is not None and not JOINTS[ours].takes_limits:
        if lo is not None or hi is not None:
            log.warning("%s: joint %r: a %s joint takes no position limits (only %s joints do); lower/upper "
                        "ignored", where(l_el), jname, jtype, ", ".join(_LIMITED))
        lo = hi = None
    if lo is not None and hi is not None and lo > hi:
        raise error(l_el, f"joint {jname!r}: limit lower {lo:g} > upper {hi:g}")
    eff, vel = val("effort"), val("velocity")
    return Limits(lo, hi, None if vel is not None and vel < 0 else vel, None if eff is not None and eff < 0 else eff)


def _damping(a_el) -> float:
    d_el = a_el.find("dynamics")
    if d_el is not None and d_el.find("damping") is not None:
        return text_float(d_el.find("damping"))
    return 0.0


def axis_spring(j_el, name: str) -> tuple[float, float]:
    """(stiffness, spring reference) of a one-axis joint's ``<axis><dynamics>`` (``spring_stiffness``,
    ``spring_reference``: N m/rad or N/m, and the coordinate where the spring is relaxed; 0 when not
    given); a ``friction`` (Coulomb) there is not modelled, warned."""
    d_el = j_el.find("axis/dynamics")
    if d_el is None:
        return 0.0, 0.0
    if d_el.find("friction") is not None and text_float(d_el.find("friction")):
        log.warning("%s: joint %r: <dynamics><friction> (Coulomb friction) is not modelled, ignored", where(d_el), name)
    return tuple(text_float(d_el.find(key)) if d_el.find(key) is not None else 0.0
                 for key in ("spring_stiffness", "spring_reference"))


def joint_axes(j_el, X: Pose, frames, name):
    """(axis, axis2, limits, damping) of a joint in the world (``axis2`` None unless two axes)."""
    jtype = j_el.get("type")
    if jtype not in AXIAL:
        return np.array([0.0, 0.0, 1.0]), None, Limits(), 0.0
    a_el = j_el.find("axis")
    if a_el is None:
        raise error(j_el, f"joint {name!r} of type {jtype!r} needs <axis>")
    axis, lim, damping = joint_axis(a_el, X, frames, name, jtype)
    axis2 = None
    if jtype in ("universal", "revolute2", "gearbox"):
        a2 = j_el.find("axis2")
        if a2 is None:
            raise error(j_el, f"{jtype} joint {name!r} needs <axis2>")
        axis2 = joint_axis(a2, X, frames, name, jtype)[0]
        if jtype != "gearbox" and abs(axis @ axis2) > DECLARED_GEOMETRY_ATOL:
            what = ("revolute2 joints with axes that are not orthogonal have no equivalent in the tree "
                    "(only the orthogonal case, a universal joint, is read)" if jtype == "revolute2"
                    else "axis and axis2 must be orthogonal")
            raise error(a2, f"{jtype} joint {name!r}: {what}")
    return axis, axis2, lim, damping


def screw_pitch(j_el, name) -> float:
    """Metres of translation per revolution (module docstring)."""
    p = j_el.find("screw_thread_pitch")
    if p is not None:
        return text_float(p)
    t = j_el.find("thread_pitch")
    if t is None:
        return 1.0
    tp = text_float(t)
    if tp == 0:
        raise error(t, f"screw joint {name!r}: thread_pitch must be non-zero (rad/m)")
    return -2.0 * math.pi / tp


def screw_parts(joint: Joint, pitch: float, el) -> tuple[list[Joint], Body, Coupling]:
    """A screw joint as a prismatic joint, a massless carriage, the revolute ``joint`` and their coupling."""
    src = Source(file_of(el), el.sourceline, f"screw joint {joint.name}")
    carriage = Body(f"{joint.name}_carriage", Pose(np.eye(3), joint.origin), MassProperties.zero(), (),
                    {"pose": src, "mass": src})
    slide = Joint(f"{joint.name}_translation", "prismatic", joint.reference, carriage.name, origin=joint.origin,
                  axis=joint.axis, source=src)
    turn = Joint(joint.name, "revolute" if joint.limits.lower is not None else "continuous", carriage.name,
                 joint.secondary, origin=joint.origin, axis=joint.axis, limits=joint.limits,
                 damping=joint.damping, source=joint.source)
    return [slide, turn], carriage, Coupling(slide.name, turn.name, pitch / (2.0 * math.pi), 0.0, source=src)


def mimic_coupling(j_el, name: str, leader_of, at_axis2=False) -> Coupling | None:
    """The ``<mimic>`` of a joint's ``<axis>`` as a coupling (``leader_of``: written name -> joint name)."""
    a2 = j_el.find("axis2")
    if a2 is not None and a2.find("mimic") is not None:
        raise error(a2.find("mimic"), f"joint {name!r}: <mimic> in <axis2> couples a joint of two coordinates; "
                                      "only one-coordinate joints can be coupled")
    a_el = j_el.find("axis")
    m = None if a_el is None else a_el.find("mimic")
    if m is None:
        return None
    leader = m.get("joint")
    if not leader:
        raise error(m, f"joint {name!r}: <mimic> needs attribute 'joint'")
    if m.get("axis", "axis") != "axis":
        raise error(m, f"joint {name!r}: <mimic axis={m.get('axis')!r}> follows the second axis of a two-coordinate "
                       "joint; only one-coordinate joints can be coupled")
    k, off, ref = (_child_float(m, tag, d) for tag, d in (("multiplier", 1.0), ("offset", 0.0), ("reference", 0.0)))
    return Coupling(name, leader_of(leader, m), k, off - k * ref, source=Source(file_of(m), m.sourceline, "SDFormat mimic"))


def _child_float(el, tag, default) -> float:
    c = el.find(tag)
    return default if c is None else text_float(c)


def gearbox_coupling(name, el, axis, axis2, ends, reference_body, joints) -> Coupling:
    """The coupling a gearbox joint enforces (module docstring); ``ends``: (parent body, child body)."""
    ratio = _child_float(el, "gearbox_ratio", 1.0)
    sides = []
    for body, a, what in ((ends[0], axis, "parent"), (ends[1], axis2, "child")):
        j, sign = _geared_joint(joints, reference_body, body, a)
        if j is None:
            raise error(el, f"gearbox joint {name!r}: no revolute joint joins gearbox_reference_body "
                            f"{reference_body!r} and the {what} {body!r} about the gearbox's "
                            f"{'axis' if what == 'parent' else 'axis2'} (a gearbox couples two such joints)")
        sides.append((j, sign))
    (j1, s1), (j2, s2) = sides
    return Coupling(j2.name, j1.name, -ratio * s1 * s2, 0.0, source=Source(file_of(el), el.sourceline, f"gearbox joint {name}"))


def _geared_joint(joints, reference_body, body, axis):
    """(joint, sign): the revolute joint between the two bodies whose coordinate is ``sign`` times the
    angle of ``body`` relative to ``reference_body`` about ``axis``; (None, 0) when there is none."""
    for j in joints:
        if JOINTS[j.type].moves_as != "revolute" or {j.reference, j.secondary} != {reference_body, body}:
            continue
        c = float(j.axis @ axis)
        if abs(abs(c) - 1.0) > DECLARED_GEOMETRY_ATOL:
            continue
        return j, (1.0 if c > 0 else -1.0) * (1.0 if j.secondary == body else -1.0)
    return None, 0.0


def gearbox_reference(el, name) -> str:
    ref = child_text(el, "gearbox_reference_body")
    if not ref:
        raise error(el, f"gearbox joint {name!r} needs <gearbox_reference_body>")
    return ref
