"""URDF writer: an Assembly whose joint graph is a tree (or cut to one) as a URDF robot.

Layout of the output (read back by :func:`parsers.urdf.reader.read_urdf` into the
same bodies, joint frames and mass properties):

* a massless root link ``world`` stands for ground (the reader maps it back to
  GROUND); every joint from ground is a joint from ``world``;
* each body is a link whose frame is the body frame.  URDF puts a joint's
  frame at its child link's origin, so where a revolute/continuous joint's axis
  does not pass through the child body's origin (or a planar joint's origin
  differs from it) the link frame is moved to the joint origin (same
  orientation) and the link's inertial and shapes are re-expressed there; the
  body pose read back is then that link frame (logged);
* joint types: fixed, revolute, continuous, prismatic, planar, free ->
  ``floating``; a cylindrical joint ``NAME`` becomes a continuous ``NAME_hinge`` and a
  prismatic ``NAME_slide`` on the same axis (our coordinate order: angle, then slide) through a
  massless link ``NAME_carrier`` (named as the MJCF export names its two joints), a universal joint two revolutes ``NAME_1`` (axis) and
  ``NAME_2`` (axis2) through ``NAME_carrier``: exact, said in one warning; a spherical joint
  has no URDF type and is refused (ExportError);
* a joint met from its secondary side is flipped (axis negated), so the
  coordinate keeps its sign; couplings become ``mimic`` with the signs fixed (a
  polynomial, constant or tendon coupling, which mimic cannot express, is an ExportError);
* a joint's ``ref`` is folded into its origin (the child link frame at ``q = 0`` is the
  reference pose moved by ``-ref`` along the joint), so URDF's coordinate is ours; its
  ``armature`` is left out (URDF has none; logged once);
* a joint's damping, with the damping and Coulomb friction of its ``joint_spring``/``joint_friction``
  elements, becomes ``<dynamics damping friction>`` (:func:`parsers.exporters.joint_dynamics`); URDF
  has no joint stiffness, so springs (a joint's own, an element's, MJCF ``springdamper``) and the
  other force elements (between body points, point loads, DC motors) are left out, named in one
  warning each;
* actuated joints get a ``<transmission>`` (gear ratio as mechanicalReduction);
* loops: refused with the loop named, unless ``cut_loops=True``;
* frames (``Assembly.frames``: the parts of a lumped composite, a tool point; and the
  ``frames`` option) become massless links welded to their body (joint ``NAME_frame``);
* shapes: a visual shape becomes ``<visual>``, a collision shape ``<collision>`` (and
  ``<visual>`` too when its body has no visual shape), a CAD or YAML shape both, so
  Pinocchio's VISUAL and COLLISION models and RViz see the part; colours as
  ``<material><color rgba>`` (one name per colour); a capsule becomes a cylinder and two
  spheres (the same solid); an ellipsoid has no URDF shape (left out, one warning);
* actuator gains, biases and control ranges (MJCF ``general``/``position``/``velocity``)
  have no URDF field: the transmissions are written, the rest named in one warning.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.spatial import rotation_about_axis
from mbcompose.dynamics.tolerances import GEOMETRY_ATOL

from ..assembly import GROUND, Assembly, JointForceElement, Pose
from ..xml import fmt, write_xml
from . import (ExportError, JointDynamics, export_tree, frames_by_body, joint_dynamics, loop_description, on_axis,
               rename_in_tree, rgba_of, robust_rpy, ros_safe_names, shown_and_colliding, warn_dropped,
               warn_force_elements, warn_springdampers, warn_untaken_limits)
from .assets import absolute_reference

log = logging.getLogger(__name__)

URDF_TYPES = {"fixed": "fixed", "revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic",
              "planar": "planar", "free": "floating"}


def split_joint(jtype: str) -> tuple | None:
    """The two URDF joints a joint type URDF lacks is written as, through a massless link:
    ((name suffix, URDF type, which axis), ...): a universal joint (two axes) two revolutes, a
    cylindrical one a continuous and a prismatic on its axis; None for the others."""
    facts = JOINTS[jtype]
    if jtype in URDF_TYPES:
        return None
    if facts.has_axis2:
        return ("1", "revolute", "axis"), ("2", "revolute", "axis2")
    if facts.moves_as == "cylindrical":
        return ("hinge", "continuous", "axis"), ("slide", "prismatic", "axis")
    return None
ROOT = "world"


def _origin(parent: ET.Element, pose: Pose):
    ET.SubElement(parent, "origin", xyz=fmt(pose.translation), rpy=fmt(robust_rpy(pose.rotation)))


def _capsule_parts(g) -> list:
    """A capsule as the cylinder and the two spheres it is made of (the same solid)."""
    from dataclasses import replace

    r, h = g.params["radius"], g.params["length"]
    cyl = replace(g, kind="cylinder", params={"radius": r, "length": h})
    caps = [replace(g, kind="sphere", params={"radius": r}, pose=g.pose.compose(Pose(np.eye(3), [0, 0, z])))
            for z in (-h / 2, h / 2)]
    return [cyl, *caps]


class _Shapes:
    """Writes ``<visual>``/``<collision>`` elements; one material name per colour; what URDF cannot
    hold counted for one warning."""

    def __init__(self, mesh_reference):
        self.mesh_reference = mesh_reference
        self.materials: dict[tuple, str] = {}
        self.skipped: dict[str, int] = {}
        self.capsules = 0

    def body(self, link: ET.Element, body, X_link_body: Pose) -> None:
        for g, shown, colliding in shown_and_colliding(body):
            parts = _capsule_parts(g) if g.kind == "capsule" else [g]
            self.capsules += g.kind == "capsule"
            for part in parts:
                for role, on in (("visual", shown), ("collision", colliding)):
                    if on:
                        self.shape(link, part, X_link_body, role)

    def shape(self, link, g, X_link_body: Pose, role: str) -> None:
        if not _shape(link, g, X_link_body, role, self.mesh_reference):
            self.skipped[g.kind] = self.skipped.get(g.kind, 0) + 1
            return
        rgba = rgba_of(g)
        if role == "visual" and rgba is not None:
            key = (g.material.name if g.material is not None else None, rgba)
            if key not in self.materials:
                base = key[0] or "color"
                taken = set(self.materials.values())
                name, k = base, 1
                while name in taken:
                    name, k = f"{base}_{k}", k + 1
                self.materials[key] = name
            mat = ET.SubElement(link.findall("visual")[-1], "material", name=self.materials[key])
            ET.SubElement(mat, "color", rgba=fmt(rgba))

    def warn(self, name: str) -> None:
        if self.capsules:
            log.warning("URDF export of %s: URDF has no capsule; %d capsule(s) written as a cylinder and two "
                        "spheres", name, self.capsules)
        if self.skipped:
            log.warning("URDF export of %s: URDF has no %s shape; left out: %s", name, " or ".join(self.skipped),
                        ", ".join(f"{n} {k}" for k, n in self.skipped.items()))


def _shape(parent: ET.Element, g, X_link_body: Pose, role: str, mesh_reference=absolute_reference) -> bool:
    if g.kind not in ("box", "cylinder", "sphere", "mesh"):
        return False
    el = ET.SubElement(parent, role)
    _origin(el, X_link_body.compose(g.pose))
    geo = ET.SubElement(el, "geometry")
    p = g.params
    if g.kind == "box":
        ET.SubElement(geo, "box", size=fmt(p["size"]))
    elif g.kind == "cylinder":
        ET.SubElement(geo, "cylinder", radius=fmt(p["radius"]), length=fmt(p["length"]))
    elif g.kind == "sphere":
        ET.SubElement(geo, "sphere", radius=fmt(p["radius"]))
    else:
        ET.SubElement(geo, "mesh", filename=mesh_reference(g.file),
                      scale=fmt(np.broadcast_to(p.get("scale", 1.0), (3,))))
    return True


def _motion_by(j, amount: float, X_world_link: Pose) -> Pose:
    """The child link's motion by ``amount`` (rad or m) along one-axis joint ``j``, in its link frame."""
    if not amount:
        return Pose()
    axis = X_world_link.rotation.T @ j.axis
    if j.type == "prismatic":
        return Pose(np.eye(3), amount * axis)
    return Pose(rotation_about_axis(axis, amount), np.zeros(3))


def _link_poses(a: Assembly, parent, order) -> dict[str, Pose]:
    """Each link's frame in the assembly frame: the body frame, moved to the joint origin where the
    joint's axis misses it (module docstring)."""
    link_pose: dict[str, Pose] = {ROOT: Pose()}
    for name in order:
        j = parent[name].joint
        if j.type not in URDF_TYPES and split_joint(j.type) is None:
            raise ExportError(f"joint {j.name!r} of type {j.type!r} has no URDF equivalent (export to MJCF or "
                              "SDFormat, or declare it as revolute joints)")
        body = a.body(name)
        p = body.pose.translation
        if (JOINTS[j.type].moves_as == "revolute" and not on_axis(p, j.origin, j.axis)) or \
                (j.type == "cylindrical" and not on_axis(p, j.origin, j.axis)) or \
                ((j.type == "planar" or JOINTS[j.type].has_axis2)
                 and not np.allclose(p, j.origin, atol=GEOMETRY_ATOL)):
            p = j.origin
            log.info("URDF export: link %r frame moved to joint %r origin", name, j.name)
        link_pose[name] = Pose(body.pose.rotation, p)
    return link_pose


def _link(robot, body, X_link_body: Pose, shapes: _Shapes | None) -> None:
    """The ``<link>`` of ``body`` with its inertial re-expressed in the link frame, and its shapes."""
    link = ET.SubElement(robot, "link", name=body.name)
    mp = body.mass
    inl = ET.SubElement(link, "inertial")
    R = X_link_body.rotation
    J = R @ mp.inertia @ R.T
    ET.SubElement(inl, "origin", xyz=fmt(X_link_body.apply(mp.com)), rpy="0 0 0")
    ET.SubElement(inl, "mass", value=fmt(mp.mass))
    ET.SubElement(inl, "inertia", ixx=fmt(J[0, 0]), ixy=fmt(J[0, 1]), ixz=fmt(J[0, 2]),
                  iyy=fmt(J[1, 1]), iyz=fmt(J[1, 2]), izz=fmt(J[2, 2]))
    if shapes is not None:
        shapes.body(link, body, X_link_body)


def _joint(robot, j, name: str, jtype: str, parent_link: str, child_link: str, origin: Pose, axis,
           dyn: JointDynamics | None = None) -> ET.Element:
    """One URDF ``<joint>``: origin, links, axis (link frame), limit, and ``<dynamics damping friction>``
    of ``j`` (``dyn``: its damping and its elements', :func:`parsers.exporters.joint_dynamics`)."""
    el = ET.SubElement(robot, "joint", name=name, type=jtype)
    _origin(el, origin)
    ET.SubElement(el, "parent", link=parent_link)
    ET.SubElement(el, "child", link=child_link)
    if axis is not None:
        ET.SubElement(el, "axis", xyz=fmt(axis))
    lim = j.limits
    if jtype in JOINTS and JOINTS[jtype].one_coordinate:
        attrs = {"effort": fmt(lim.effort or 0.0), "velocity": fmt(lim.velocity or 0.0)}
        if JOINTS[j.type].takes_limits:
            if lim.lower is not None:
                attrs["lower"] = fmt(lim.lower)
            if lim.upper is not None:
                attrs["upper"] = fmt(lim.upper)
        ET.SubElement(el, "limit", **attrs)
    if dyn is not None and (dyn.damping or dyn.friction):
        attrs = {"damping": fmt(dyn.damping)}
        if dyn.friction and jtype in JOINTS and JOINTS[jtype].one_coordinate:
            attrs["friction"] = fmt(dyn.friction)
        ET.SubElement(el, "dynamics", **attrs)
    return el


def _tree_joint(robot, j, parent_link: str, name: str, link_pose, dyn: JointDynamics | None) -> None:
    """The URDF joint(s) of tree joint ``j`` carrying link ``name``: one, or two through a massless
    link ``NAME_carrier`` for the types of :func:`split_joint`."""
    X_parent_child = link_pose[parent_link].inverse().compose(link_pose[name])
    R = link_pose[name].rotation.T
    if j.type in URDF_TYPES:
        origin = X_parent_child.compose(_motion_by(j, -j.ref, link_pose[name]))
        _joint(robot, j, j.name, URDF_TYPES[j.type], parent_link, name, origin,
               R @ j.axis if JOINTS[j.type].has_axis else None, dyn)
        return
    carrier = f"{j.name}_carrier"
    if carrier in link_pose:
        raise ExportError(f"joint {j.name!r}: link name {carrier!r} (its carrier link) is taken")
    ET.SubElement(robot, "link", name=carrier)
    (s1, t1, a1), (s2, t2, a2) = split_joint(j.type)
    axis2 = j.axis2 if j.axis2 is not None else np.cross(j.axis, [0.0, 0.0, 1.0]) if abs(j.axis[2]) < 0.9 \
        else np.cross(j.axis, [1.0, 0.0, 0.0])
    axes = {"axis": j.axis, "axis2": axis2 / np.linalg.norm(axis2)}
    _joint(robot, j, f"{j.name}_{s1}", t1, parent_link, carrier, X_parent_child, R @ axes[a1], dyn)
    _joint(robot, j, f"{j.name}_{s2}", t2, carrier, name, Pose(), R @ axes[a2], dyn)


def urdf_element(a: Assembly, *, cut_loops: bool = False, geometry: bool = True, frames=None,
                 mesh_reference=absolute_reference) -> ET.Element:
    """The ``<robot>`` element for ``a`` (see :func:`write_urdf`)."""
    if ROOT in a.body_names:
        raise ExportError(f"body name {ROOT!r} is reserved for ground in URDF exports")
    parent, order, chords = export_tree(a)
    warn_dropped(a, "URDF", ("armature",))
    warn_untaken_limits(a, "URDF")
    robot = ET.Element("robot", name=a.name)
    if chords:
        if not cut_loops:
            j = chords[0]
            raise ExportError(f"joint {j.name!r} closes the loop {loop_description(parent, j)}; URDF describes "
                              f"trees only (pass cut_loops=True to leave out {len(chords)} loop joint(s))")
        names = ", ".join(j.name for j in chords)
        log.warning("URDF export of %s: loop joints left out: %s", a.name, names)
        robot.append(ET.Comment(f" loop-closing joints left out (cut_loops): {names} "))
    ET.SubElement(robot, "link", name=ROOT)
    link_pose = _link_poses(a, parent, order)
    shapes = _Shapes(mesh_reference) if geometry else None
    for name in order:
        body = a.body(name)
        _link(robot, body, link_pose[name].inverse().compose(body.pose), shapes)
    if shapes is not None:
        shapes.warn(a.name)
    split, dynamics = [], _joint_dynamics(a)
    for name in order:
        j = parent[name].joint
        _tree_joint(robot, j, ROOT if j.reference == GROUND else j.reference, name, link_pose, dynamics.get(j.name))
        if j.type not in URDF_TYPES:
            split.append(f"{j.name} ({j.type})")
    if split:
        log.warning("URDF export of %s: URDF has no cylindrical or universal joint; written as two joints through "
                    "a massless link NAME_carrier (cylindrical: NAME_hinge, NAME_slide; universal: NAME_1, NAME_2): "
                    "%s", a.name, ", ".join(split))
    _frames(robot, frames_by_body(a, frames), link_pose)
    _mimics(robot, a, {n: -1.0 if parent[n].flipped else 1.0 for n in order}, parent)
    _transmissions(robot, a, parent, order)
    _ros_safe(robot)
    return robot


def _ros_safe(robot) -> None:
    """Link and joint names ROS tools take (:func:`ros_safe_names`; links and joints are two namespaces),
    each renamed one with its original in a comment."""
    links = ros_safe_names(el.get("name") for el in robot.findall("link"))
    rename_in_tree(robot, links, ("link",), (("parent", "link"), ("child", "link")))
    joints = ros_safe_names(el.get("name") for el in robot.findall("joint"))
    rename_in_tree(robot, joints, ("joint",), (("mimic", "joint"),))


def _joint_dynamics(a: Assembly) -> dict[str, JointDynamics]:
    """Each joint's damping and Coulomb friction (URDF ``<dynamics>``); one warning names what URDF cannot
    hold: joint springs (stiffness: URDF has none), ``springdamper``, force elements other than a joint's."""
    dynamics = joint_dynamics(a)
    sprung = [n for n, d in dynamics.items() if d.stiffness]
    if sprung:
        log.warning("URDF export of %s: URDF has no joint stiffness; springs left out (damping and friction "
                    "kept) on %s", a.name, ", ".join(sprung))
    warn_springdampers(a, "URDF")
    warn_force_elements(a, "URDF", (JointForceElement,), "URDF holds a joint's damping and friction only")
    return dynamics


def _frames(robot, frames: dict, link_pose) -> None:
    """Each named frame as a massless link on a fixed joint ``NAME_frame`` to its body's link."""
    for body, named in frames.items():
        if body not in link_pose:
            raise ExportError(f"frames: unknown body {body!r}")
        for fname, pose in named:
            ET.SubElement(robot, "link", name=fname)
            el = ET.SubElement(robot, "joint", name=f"{fname}_frame", type="fixed")
            _origin(el, link_pose[body].inverse().compose(pose))
            ET.SubElement(el, "parent", link=body)
            ET.SubElement(el, "child", link=fname)


def _mimics(robot, a: Assembly, child_sign: dict, parent) -> None:
    """Couplings as ``<mimic>``, signs fixed for flipped joints; what mimic cannot say is an ExportError."""
    sign = {parent[n].joint.name: s for n, s in child_sign.items()}
    for c in a.couplings:
        if c.joint_terms or c.leader_terms or c.higher or c.leader is None:
            raise ExportError(f"coupling of joint {c.joint!r} ({c.source}) is not linear in one leader joint: "
                              "URDF mimic cannot express it (export to MJCF)")
        if c.joint not in sign or c.leader not in sign:
            log.warning("URDF export: coupling %s <- %s left out (joint not in the tree)", c.joint, c.leader)
            continue
        el = robot.find(f"joint[@name='{c.joint}']")
        sj, sl = sign[c.joint], sign[c.leader]
        ET.SubElement(el, "mimic", joint=c.leader, multiplier=fmt(sj * sl * c.multiplier), offset=fmt(sj * c.offset))


def _transmissions(robot, a: Assembly, parent, order) -> None:
    """A ``<transmission>`` per actuated one-coordinate joint; actuator laws URDF cannot hold, one warning."""
    for name in order:
        j = parent[name].joint
        if j.actuated and JOINTS[j.type].one_coordinate:
            t = ET.SubElement(robot, "transmission", name=f"{j.name}_transmission")
            ET.SubElement(t, "type").text = "transmission_interface/SimpleTransmission"
            ET.SubElement(t, "joint", name=j.name)
            act = ET.SubElement(t, "actuator", name=j.motor.name if j.motor else f"{j.name}_motor")
            ET.SubElement(act, "mechanicalReduction").text = fmt(j.motor.gear_ratio if j.motor else 1.0)
    lost = [f"{x.name} ({x.kind}{' on tendon ' + x.tendon if x.tendon else ''})" for x in a.actuators
            if x.gain != (1.0, 0.0, 0.0) or x.bias_type != "none" or x.ctrlrange is not None or x.tendon]
    if lost:
        log.warning("URDF export of %s: URDF has no actuator gain, bias, control range or tendon (MJCF general, "
                    "position, velocity, tendon=); transmissions only for: %s", a.name, ", ".join(lost))


def write_urdf(a: Assembly, path, *, cut_loops: bool = False, geometry: bool = True, frames=None,
               mesh_reference=absolute_reference) -> Path:
    """Write ``a`` as URDF to ``path``.

    Parameters
    ----------
    a : Assembly
        A mechanism whose joint graph is a tree (else see ``cut_loops``).
    path : str or Path
        Output file.
    cut_loops : bool
        Leave out loop-closing joints instead of refusing the assembly.
    geometry : bool
        Write visual and collision shapes.
    frames : mapping body name -> sequence of (frame name, Pose), optional
        Named frames carried by a body beside ``a.frames`` (e.g. the original parts of a
        lumped composite), poses in the assembly frame at the reference configuration;
        each becomes a massless link welded by a fixed joint ``<name>_frame``.
    mesh_reference : callable, mesh file -> the reference written (default its absolute
        path; :meth:`parsers.exporters.assets.MeshAssets.reference` for ``assets/NAME``).

    Returns
    -------
    Path
        The written file.  Raises :class:`ExportError` when the assembly has a
        loop (without ``cut_loops``) or a spherical joint (URDF has none).
    """
    root = urdf_element(a, cut_loops=cut_loops, geometry=geometry, frames=frames, mesh_reference=mesh_reference)
    write_xml(root, path)
    return Path(path)
