"""URDF writer: an Assembly whose joint graph is a tree (or cut to one) as a URDF robot.

Size: :func:`urdf_element` is over the 80-line function limit: it writes one element per
URDF tag in document order, which reads like the file it produces.

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
  ``floating``; spherical, universal and cylindrical joints have no URDF type
  and are refused (ExportError);
* a joint met from its secondary side is flipped (axis negated), so the
  coordinate keeps its sign; couplings become ``mimic`` with the signs fixed (a
  polynomial, constant or tendon coupling, which mimic cannot express, is an ExportError);
* a joint's ``ref`` is folded into its origin (the child link frame at ``q = 0`` is the
  reference pose moved by ``-ref`` along the joint), so URDF's coordinate is ours; its
  ``armature`` is left out (URDF has none; logged once);
* actuated joints get a ``<transmission>`` (gear ratio as mechanicalReduction);
* loops: refused with the loop named, unless ``cut_loops=True``;
* ``frames`` (e.g. the parts of a lumped composite) become massless links
  welded to their body.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.spatial import rotation_about_axis
from mbcompose.dynamics.tolerances import GEOMETRY_ATOL

from ..assembly import GROUND, Assembly, Pose
from ..xml import fmt, write_xml
from . import ExportError, export_tree, loop_description, on_axis, robust_rpy, warn_dropped, warn_untaken_limits
from .assets import absolute_reference

log = logging.getLogger(__name__)

URDF_TYPES = {"fixed": "fixed", "revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic",
              "planar": "planar", "free": "floating"}
ROOT = "world"


def _origin(parent: ET.Element, pose: Pose):
    ET.SubElement(parent, "origin", xyz=fmt(pose.translation), rpy=fmt(robust_rpy(pose.rotation)))


def _shape(parent: ET.Element, g, X_link_body: Pose, role: str, mesh_reference=absolute_reference) -> bool:
    if g.kind not in ("box", "cylinder", "sphere", "mesh"):
        log.warning("URDF has no %s shape: skipped", g.kind)
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
    link_pose: dict[str, Pose] = {ROOT: Pose()}
    for name in order:
        j = parent[name].joint
        if j.type not in URDF_TYPES:
            raise ExportError(f"joint {j.name!r} of type {j.type!r} has no URDF equivalent")
        body = a.body(name)
        p = body.pose.translation
        if (JOINTS[j.type].moves_as == "revolute" and not on_axis(p, j.origin, j.axis)) or \
                (j.type == "planar" and not np.allclose(p, j.origin, atol=GEOMETRY_ATOL)):
            p = j.origin
            log.info("URDF export: link %r frame moved to joint %r origin", name, j.name)
        link_pose[name] = Pose(body.pose.rotation, p)
    for name in order:
        body = a.body(name)
        X_link_body = link_pose[name].inverse().compose(body.pose)
        link = ET.SubElement(robot, "link", name=name)
        mp = body.mass
        inl = ET.SubElement(link, "inertial")
        R = X_link_body.rotation
        J = R @ mp.inertia @ R.T
        ET.SubElement(inl, "origin", xyz=fmt(X_link_body.apply(mp.com)), rpy="0 0 0")
        ET.SubElement(inl, "mass", value=fmt(mp.mass))
        ET.SubElement(inl, "inertia", ixx=fmt(J[0, 0]), ixy=fmt(J[0, 1]), ixz=fmt(J[0, 2]),
                      iyy=fmt(J[1, 1]), iyz=fmt(J[1, 2]), izz=fmt(J[2, 2]))
        if geometry:
            for g in body.geometry:
                _shape(link, g, X_link_body, "visual" if g.role == "visual" else "collision", mesh_reference)
    sign = {}
    for name in order:
        tj = parent[name]
        j = tj.joint
        sign[j.name] = -1.0 if tj.flipped else 1.0
        pname = ROOT if j.reference == GROUND else j.reference
        el = ET.SubElement(robot, "joint", name=j.name, type=URDF_TYPES[j.type])
        X_parent_child = link_pose[pname].inverse().compose(link_pose[name])
        _origin(el, X_parent_child.compose(_motion_by(j, -j.ref, link_pose[name])))
        ET.SubElement(el, "parent", link=pname)
        ET.SubElement(el, "child", link=name)
        if JOINTS[j.type].has_axis:
            ET.SubElement(el, "axis", xyz=fmt(link_pose[name].rotation.T @ j.axis))
        lim = j.limits
        if JOINTS[j.type].one_coordinate:
            attrs = {"effort": fmt(lim.effort or 0.0), "velocity": fmt(lim.velocity or 0.0)}
            if JOINTS[j.type].takes_limits:
                lo, hi = lim.lower, lim.upper
                if lo is not None:
                    attrs["lower"] = fmt(lo)
                if hi is not None:
                    attrs["upper"] = fmt(hi)
            ET.SubElement(el, "limit", **attrs)
        if j.damping:
            ET.SubElement(el, "dynamics", damping=fmt(j.damping))
    for body, named in (frames or {}).items():
        if body not in link_pose:
            raise ExportError(f"frames: unknown body {body!r}")
        for fname, pose in named:
            ET.SubElement(robot, "link", name=fname)
            el = ET.SubElement(robot, "joint", name=f"{fname}_frame", type="fixed")
            _origin(el, link_pose[body].inverse().compose(pose))
            ET.SubElement(el, "parent", link=body)
            ET.SubElement(el, "child", link=fname)
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
    for name in order:
        j = parent[name].joint
        if j.actuated and j.type != "fixed":
            t = ET.SubElement(robot, "transmission", name=f"{j.name}_transmission")
            ET.SubElement(t, "type").text = "transmission_interface/SimpleTransmission"
            ET.SubElement(t, "joint", name=j.name)
            act = ET.SubElement(t, "actuator", name=j.motor.name if j.motor else f"{j.name}_motor")
            ET.SubElement(act, "mechanicalReduction").text = fmt(j.motor.gear_ratio if j.motor else 1.0)
    return robot


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
        Named frames carried by a body (e.g. the original parts of a lumped
        composite), poses in the assembly frame at the reference configuration;
        each becomes a massless link welded by a fixed joint ``<name>_frame``.
    mesh_reference : callable, mesh file -> the reference written (default its absolute
        path; :meth:`parsers.exporters.assets.MeshAssets.reference` for ``assets/NAME``).

    Returns
    -------
    Path
        The written file.  Raises :class:`ExportError` when the assembly has a
        loop (without ``cut_loops``) or a joint type URDF lacks.
    """
    root = urdf_element(a, cut_loops=cut_loops, geometry=geometry, frames=frames, mesh_reference=mesh_reference)
    write_xml(root, path)
    return Path(path)
