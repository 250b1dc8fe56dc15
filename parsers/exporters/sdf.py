"""SDFormat writer: an Assembly as one SDFormat 1.8 model, loops kept as joints.

Layout (read back by :func:`parsers.sdf.reader.read_sdf` into the same bodies, joint
frames and mass properties):

* every body is a ``<link>`` with ``<pose relative_to="__model__">`` (the model
  frame is the assembly frame), an ``<inertial>`` (always written, massless
  bodies included, since SDFormat's default would be 1 kg) whose pose is the
  centre of mass along the link axes, and its shapes;
* every joint is kept, loops included: revolute, continuous, prismatic, fixed,
  spherical -> ``ball``, universal (``axis``, ``axis2``).  The joint frame is
  placed at the joint origin with the model's orientation
  (``<pose relative_to="__model__">``) and axes are written
  ``expressed_in="__model__"``.  Ground is ``world``; a joint whose secondary
  body is ground is flipped (SDFormat's child cannot be the world);
* a ``free`` joint from ground is left out (an SDFormat link not joined to the
  world floats); free joints between bodies, planar and cylindrical joints are
  refused (ExportError);
* frames (``Assembly.frames``: the parts of a lumped composite, a tool point; and the
  ``frames`` option) become ``<frame>`` elements attached to their body;
* shapes: a visual shape becomes ``<visual>``, a collision shape ``<collision>`` (and a
  ``<visual>`` too when its body has no visual shape), a CAD or YAML shape both; colours as
  ``<material>`` ``<ambient>`` and ``<diffuse>``;
* a joint's damping and spring, with its ``joint_spring``/``joint_friction`` elements' (springs in
  parallel add: :func:`parsers.exporters.joint_dynamics`), become ``<axis><dynamics>`` ``damping``,
  ``friction``, ``spring_stiffness`` and ``spring_reference`` (SDFormat's coordinate: ours less
  ``ref``); a joint without an axis (ball) has no place for them, MJCF ``springdamper`` and force
  elements between body points, point loads and DC motors have none either (each kind named in one
  warning);
* joint ``armature`` and ``ref`` have no SDFormat field: left out, logged once each (the
  exported coordinate is then ``q - ref``);
* couplings (URDF mimic, MJCF equality/joint, SDFormat screw/gearbox/mimic) become
  ``<mimic joint="LEADER">`` in the follower's ``<axis>`` (SDFormat 1.11; the file is then
  version 1.11): ``q = multiplier q[LEADER] + offset``.  A polynomial, constant or
  tendon coupling, which ``<mimic>`` cannot express, is refused (ExportError);
* a screw as the SDFormat reader builds it (``NAME_translation``, massless
  ``NAME_carriage``, ``NAME``, their coupling) is written back as one ``screw`` joint
  with ``<screw_thread_pitch>`` (SDFormat 1.10).
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.tolerances import GEOMETRY_ATOL

from ..assembly import GROUND, Assembly, JointForceElement
from ..xml import fmt, write_xml
from . import (ExportError, JointDynamics, flip, frames_by_body, joint_dynamics, rename_in_tree, rgba_of, robust_rpy,
               ros_safe_names, shown_and_colliding, warn_dropped, warn_force_elements, warn_springdampers,
               warn_untaken_limits)
from .assets import absolute_reference

log = logging.getLogger(__name__)

SDF_TYPES = {"revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic", "fixed": "fixed",
             "spherical": "ball", "universal": "universal"}


def _pose(el, pose=None, translation=None, relative_to=None):
    p = ET.SubElement(el, "pose")
    if relative_to:
        p.set("relative_to", relative_to)
    if pose is None:
        p.text = fmt(np.concatenate([translation, np.zeros(3)]))
    else:
        p.text = fmt(np.concatenate([pose.translation, robust_rpy(pose.rotation)]))


def _shape(link, g, role, k, mesh_reference=absolute_reference):
    kinds = {"box", "cylinder", "sphere", "capsule", "ellipsoid", "mesh"}
    if g.kind not in kinds:
        return
    el = ET.SubElement(link, role, name=f"{role}_{k}")
    _pose(el, g.pose)
    geo = ET.SubElement(el, "geometry")
    s = ET.SubElement(geo, g.kind)
    p = g.params
    if g.kind == "box":
        ET.SubElement(s, "size").text = fmt(p["size"])
    elif g.kind in ("cylinder", "capsule"):
        ET.SubElement(s, "radius").text = fmt(p["radius"])
        ET.SubElement(s, "length").text = fmt(p["length"])
    elif g.kind == "sphere":
        ET.SubElement(s, "radius").text = fmt(p["radius"])
    elif g.kind == "ellipsoid":
        ET.SubElement(s, "radii").text = fmt(p["radii"])
    else:
        ET.SubElement(s, "uri").text = mesh_reference(g.file)
        ET.SubElement(s, "scale").text = fmt(np.broadcast_to(p.get("scale", 1.0), (3,)))
    rgba = rgba_of(g)
    if role == "visual" and rgba is not None:
        mat = ET.SubElement(el, "material")
        ET.SubElement(mat, "ambient").text = fmt(rgba)
        ET.SubElement(mat, "diffuse").text = fmt(rgba)


def _screws(a: Assembly, frames) -> dict:
    """revolute joint name -> (its prismatic joint, screw_thread_pitch m/rev) of each screw as the SDFormat
    reader builds it (``NAME_translation`` to a massless, shapeless ``NAME_carriage`` held by no other joint
    or frame, then ``NAME`` at the same origin along the same axis, ``q[NAME_translation] = k q[NAME]``)."""
    joints = {j.name: j for j in a.joints}
    held = {}
    for j in a.joints:
        for b in (j.reference, j.secondary):
            held[b] = held.get(b, 0) + 1
    out = {}
    for c in a.couplings:
        turn, slide = joints.get(c.leader), joints.get(c.joint)
        if (turn is None or slide is None or c.joint != f"{c.leader}_translation" or c.offset or c.higher
                or c.joint_terms or c.leader_terms or slide.type != "prismatic"
                or JOINTS[turn.type].moves_as != "revolute" or slide.secondary != f"{c.leader}_carriage"
                or turn.reference != slide.secondary or held.get(slide.secondary) != 2
                or slide.secondary in (frames or {}) or turn.secondary == GROUND):
            continue
        carriage = a.body(slide.secondary)
        lim = slide.limits
        if (carriage.mass.mass != 0 or carriage.geometry or abs(float(slide.axis @ turn.axis) - 1) > GEOMETRY_ATOL
                or not np.allclose(slide.origin, turn.origin, rtol=0, atol=GEOMETRY_ATOL) or slide.damping
                or any(x is not None for x in (lim.lower, lim.upper, lim.velocity, lim.effort))):
            continue
        out[turn.name] = (slide, 2 * np.pi * c.multiplier)
    return out


def _mimics(a: Assembly, written: dict, screws: dict) -> dict:
    """follower joint name -> (leader, multiplier, offset) of each coupling (module docstring)."""
    out = {}
    for c in a.couplings:
        if c.leader in screws and c.joint == screws[c.leader][0].name:
            continue
        if c.higher or c.joint_terms or c.leader_terms or c.leader is None:
            raise ExportError(f"coupling of joint {c.joint!r} ({c.source}) is not linear in one leader joint: "
                              "SDFormat <mimic> cannot express it (export to MJCF)")
        for name in (c.joint, c.leader):
            if name not in written or not JOINTS[written[name]].couplable:
                raise ExportError(f"coupling of joint {c.joint!r}: joint {name!r} is not a one-axis joint of the "
                                  "SDFormat export")
        if c.joint in out:
            raise ExportError(f"joint {c.joint!r} follows two couplings; SDFormat has one <mimic> per axis")
        out[c.joint] = (c.leader, c.multiplier, c.offset)
    return out


def sdf_element(a: Assembly, *, geometry: bool = True, frames=None,
                mesh_reference=absolute_reference) -> ET.Element:
    """The ``<sdf>`` element for ``a`` (see :func:`write_sdf`)."""
    warn_dropped(a, "SDFormat", ("armature", "ref"))
    warn_untaken_limits(a, "SDFormat")
    frames = frames_by_body(a, frames)
    screws = _screws(a, frames)
    if a.actuators:
        log.warning("SDFormat export of %s: SDFormat has no actuators (a simulator's plugins drive joints); left "
                    "out: %s", a.name, ", ".join(x.name for x in a.actuators))
    mimics = _mimics(a, {j.name: j.type for j in a.joints}, screws)
    dynamics = joint_dynamics(a)
    warn_springdampers(a, "SDFormat")
    unsprung = [f"{n} ({a.joint(n).type})" for n, d in dynamics.items()
                if (d.stiffness or d.damping) and not JOINTS[a.joint(n).type].has_axis]
    if unsprung:
        log.warning("SDFormat export of %s: SDFormat holds springs and dampers in a joint's <axis>; left out for "
                    "%s", a.name, ", ".join(unsprung))
    warn_force_elements(a, "SDFormat", (JointForceElement,), "SDFormat holds a joint's spring, damping and friction")
    sdf = ET.Element("sdf", version="1.11" if mimics else "1.10" if screws else "1.8")
    world = ET.SubElement(sdf, "world", name=a.name)
    ET.SubElement(world, "gravity").text = fmt(a.gravity)
    model = ET.SubElement(world, "model", name=a.name)
    carriages = {slide.secondary for slide, _ in screws.values()}
    for b in a.bodies:
        if b.name not in carriages:
            _link(model, b, geometry, mesh_reference)
    for body, named in frames.items():
        if body not in a.body_names:
            raise ExportError(f"frames: unknown body {body!r}")
        for fname, pose in named:
            fel = ET.SubElement(model, "frame", name=fname, attached_to=body)
            _pose(fel, pose, relative_to="__model__")
    slides = {slide.name for slide, _ in screws.values()}
    for j in a.joints:
        if j.type == "free":
            if GROUND in (j.reference, j.secondary):
                continue
            raise ExportError(f"free joint {j.name!r} between two bodies has no SDFormat equivalent")
        if j.type not in SDF_TYPES:
            raise ExportError(f"joint {j.name!r} of type {j.type!r} has no SDFormat equivalent")
        if j.name not in slides:
            _joint(model, flip(j) if j.secondary == GROUND else j, mimics, screws.get(j.name), dynamics)
    names = ros_safe_names(el.get("name") for el in model if el.tag in ("link", "joint", "frame"))
    rename_in_tree(model, names, ("link", "joint", "frame"),
                   (("parent", ""), ("child", ""), ("frame", "attached_to"), ("pose", "relative_to"), ("mimic", "joint")))
    return sdf


def _link(model, b, geometry, mesh_reference) -> None:
    """A body as a ``<link>`` placed relative to the model frame, its inertial always written."""
    if b.name in ("world", "__model__"):
        raise ExportError(f"body name {b.name!r} is reserved in SDFormat")
    link = ET.SubElement(model, "link", name=b.name)
    _pose(link, b.pose, relative_to="__model__")
    inl = ET.SubElement(link, "inertial")
    mp = b.mass
    _pose(inl, translation=mp.com)
    ET.SubElement(inl, "mass").text = fmt(mp.mass)
    it = ET.SubElement(inl, "inertia")
    J = mp.inertia
    for key, (r, c) in {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2),
                        "izz": (2, 2)}.items():
        ET.SubElement(it, key).text = fmt(J[r, c])
    if geometry:
        for k, (g, shown, colliding) in enumerate(shown_and_colliding(b)):
            for role, on in (("visual", shown), ("collision", colliding)):
                if on:
                    _shape(link, g, role, k, mesh_reference)


def _joint(model, j, mimics, screw, dynamics) -> None:
    """A joint (a screw's revolute part as the whole ``screw``: ``screw`` = (prismatic part, pitch))."""
    el = ET.SubElement(model, "joint", name=j.name, type="screw" if screw else SDF_TYPES[j.type])
    parent = screw[0].reference if screw else j.reference
    ET.SubElement(el, "parent").text = "world" if parent == GROUND else parent
    ET.SubElement(el, "child").text = j.secondary
    _pose(el, translation=j.origin, relative_to="__model__")
    if screw:
        ET.SubElement(el, "screw_thread_pitch").text = fmt(screw[1])
    axes = []
    if JOINTS[j.type].has_axis:
        axes.append(("axis", j.axis))
    if JOINTS[j.type].has_axis2:
        axes.append(("axis2", j.axis2 if j.axis2 is not None else np.cross(j.axis, [0, 0, 1.0])))
    for tag, v in axes:
        ax = ET.SubElement(el, tag)
        ET.SubElement(ax, "xyz", expressed_in="__model__").text = fmt(v)
        if tag == "axis":
            _axis_details(ax, j, mimics.get(j.name), dynamics.get(j.name))


def _axis_details(ax, j, mimic, dyn: JointDynamics | None) -> None:
    """Limits, ``<dynamics>`` (damping, friction, spring_reference, spring_stiffness: ``dyn``, the joint's
    own and its elements', :func:`parsers.exporters.joint_dynamics`) and the ``<mimic>`` of a joint's
    first axis."""
    lim = j.limits
    if not JOINTS[j.type].takes_limits:
        lim = replace(lim, lower=None, upper=None)
    if any(x is not None for x in (lim.lower, lim.upper, lim.effort, lim.velocity)):
        le = ET.SubElement(ax, "limit")
        for key, v in (("lower", lim.lower), ("upper", lim.upper), ("effort", lim.effort),
                       ("velocity", lim.velocity)):
            if v is not None:
                ET.SubElement(le, key).text = fmt(v)
    if dyn is not None and (dyn.damping or dyn.friction or dyn.stiffness):
        de = ET.SubElement(ax, "dynamics")
        values = {"damping": dyn.damping, "friction": dyn.friction}
        if JOINTS[j.type].one_coordinate:
            # SDFormat's coordinate is ours less ``ref`` (``ref`` is left out, warned)
            values.update(spring_reference=dyn.springref - j.ref, spring_stiffness=dyn.stiffness)
        for key, value in values.items():
            if value:
                ET.SubElement(de, key).text = fmt(value)
    if mimic is not None:
        leader, k, off = mimic
        mim = ET.SubElement(ax, "mimic", joint=leader, axis="axis")
        for key, val in (("multiplier", k), ("offset", off), ("reference", 0.0)):
            ET.SubElement(mim, key).text = fmt(val)


def write_sdf(a: Assembly, path, *, geometry: bool = True, frames=None,
              mesh_reference=absolute_reference) -> Path:
    """Write ``a`` as SDFormat 1.8 to ``path`` (every joint kept, loops included).

    Parameters
    ----------
    a : Assembly
    path : str or Path
    geometry : bool
        Write visual and collision shapes.
    frames : mapping body name -> sequence of (frame name, Pose), optional
        Named frames carried by a body (poses in the assembly frame at the
        reference configuration), written as ``<frame attached_to=body>``.
    mesh_reference : callable, mesh file -> the reference written (default its absolute
        path; :meth:`parsers.exporters.assets.MeshAssets.reference` for ``assets/NAME``).

    Returns
    -------
    Path
        The written file.  Raises :class:`ExportError` for joints SDFormat lacks.
    """
    write_xml(sdf_element(a, geometry=geometry, frames=frames, mesh_reference=mesh_reference), path)
    return Path(path)
