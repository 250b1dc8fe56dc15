"""Writers that turn an :class:`~parsers.assembly.Assembly` into URDF, MJCF or SDFormat.

Every body becomes one link/body with its mass properties and shapes (visual and
collision apart, :func:`shown_and_colliding`; colours, :func:`rgba_of`).  A
lumped composite is exported as the body it is, with its merged mass
properties; every writer keeps ``Assembly.frames`` (the original parts of the
composites, the input's own frames such as a tool point) and the frames of its
``frames={body: [(name, Pose), ...]}`` option as named frames (URDF: massless
links on fixed joints; MJCF: sites; SDFormat: ``<frame>``; :func:`frames_by_body`),
poses in the assembly frame at the reference configuration.  What a format
cannot hold is named in one logged warning per kind of fact.
Formats differ in what they can say about closed loops:

* URDF describes trees only: a mechanism with loops is refused, naming the
  loop, unless ``cut_loops=True`` (the loop-closing joints are then left out
  and listed in a comment and a logged warning);
* MJCF closes loops with ``<equality>`` constraints (spherical -> ``connect``,
  fixed -> ``weld``, revolute -> two ``connect`` on the axis);
* SDFormat keeps every joint, loops included.

The spanning tree (seed 004: the tree T of the joint graph; its chords close
the loops) is grown from ground through joints not marked ``loop``
first (:func:`export_tree`); a tree joint met from its secondary side is
flipped (reference and secondary swapped, axes negated so that the coordinate
keeps its sign).

Joint ``armature`` (rotor inertia) is written to MJCF only; URDF and SDFormat have no
such field, so it is left out with one logged warning (:func:`warn_dropped`).  Joint ``ref``
(the coordinate at the reference configuration) is written to MJCF as ``ref``, folded into
the joint origin in URDF (the child link's frame at ``q = 0`` is its reference pose moved by
``-ref``, so URDF's coordinate is ours), and left out of SDFormat with a warning (there the
coordinate is ``q - ref``).

Position limits (``lower``/``upper``) are written for the joint types that take them
(revolute and prismatic: the rule of :mod:`dynamics.joints`), as URDF ``<limit>``, MJCF
``range`` and SDFormat ``<limit>``; limits on other moving joints (built in code: no reader
makes them) are left out with one warning (:func:`warn_untaken_limits`).

``export(assembly, path, **options)`` chooses the writer by suffix
(:data:`EXPORTERS`).
"""

from __future__ import annotations

import importlib
import logging
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from mbcompose.dynamics import topology
from mbcompose.dynamics.joints import JOINTS, joint_types
from mbcompose.dynamics.tolerances import GEOMETRY_ATOL, SINGULAR_FLOOR

from ..assembly import GROUND, Assembly, Joint, JointForceElement
from ..topology import tree_edges

log = logging.getLogger(__name__)


class ExportError(ValueError):
    """The assembly cannot be written in the requested format (the message says why)."""


#: a name ROS tools take for a link, joint or frame (tf frame ids, robot_state_publisher, MoveIt): no '/'
#: (a namespace separator), ':' or white space, all of which CAD part names have ('Servo:1/Horn <2>');
#: '.' and '-', common in published URDFs (link_0.0, base_link-base_fixed_joint), are kept
ROS_NAME = re.compile(r"[^/:\s]+\Z")


def ros_safe_names(names) -> dict[str, str]:
    """Old -> new for each of ``names`` that ROS tools would not take (:data:`ROS_NAME`): each '/', ':'
    and white space becomes '_', and a name already taken gets ``_2``, ``_3``...; the names that are fine
    are not in the map."""
    names = list(dict.fromkeys(names))
    taken, out = set(names), {}
    for name in names:
        if ROS_NAME.match(name):
            continue
        base = re.sub(r"[/:\s]", "_", name) or "_"
        new, k = base, 2
        while new in taken:
            new, k = f"{base}_{k}", k + 1
        taken.add(new)
        out[name] = new
    return out


def rename_in_tree(root, renames: dict[str, str], named: tuple[str, ...], references: tuple[tuple[str, str], ...]) -> None:
    """Apply ``renames`` (:func:`ros_safe_names`) in the ElementTree ``root`` of an export: the ``name`` of
    each element whose tag is in ``named`` (with a comment before it giving the original name) and each
    reference ``(tag, attribute)`` (``attribute`` "" for the element's text)."""
    if not renames:
        return
    for parent in list(root.iter()):
        for i, el in reversed(list(enumerate(parent))):
            if el.tag in named and el.get("name") in renames:
                original = el.get("name")
                el.set("name", renames[original])
                parent.insert(i, ET.Comment(f" original name: {original.replace('--', '- -')} "))
            for tag, attribute in references:
                if el.tag != tag:
                    continue
                if attribute and el.get(attribute) in renames:
                    el.set(attribute, renames[el.get(attribute)])
                elif not attribute and el.text and el.text.strip() in renames:
                    el.text = renames[el.text.strip()]


@dataclass(frozen=True)
class TreeJoint:
    """A joint oriented parent -> child along the spanning tree.

    joint : the joint, flipped when needed so that ``joint.reference`` is the parent.
    flipped : True when reference and secondary were swapped.
    """

    joint: Joint
    flipped: bool


def flip(j: Joint) -> Joint:
    """The same joint seen from the other side: reference and secondary swapped.

    The coordinate keeps its sign: a revolute or prismatic axis is negated; a
    universal joint's axes swap and are negated (its two coordinates swap order).
    Revolute and prismatic limits become ``[-upper, -lower]``.
    """
    kw = {"reference": j.secondary, "secondary": j.reference}
    facts = JOINTS[j.type]
    if facts.has_axis2:
        kw["axis"] = -(j.axis2 if j.axis2 is not None else j.axis)
        kw["axis2"] = -j.axis
    elif facts.has_axis:
        kw["axis"] = -(j.secondary_axis if j.secondary_axis is not None else j.axis)
        if j.secondary_axis is not None:
            kw["secondary_axis"] = -j.axis
    if j.secondary_origin is not None:
        kw["origin"], kw["secondary_origin"] = j.secondary_origin, j.origin
    if facts.takes_limits:
        lim = j.limits
        kw["limits"] = replace(lim, lower=None if lim.upper is None else -lim.upper,
                               upper=None if lim.lower is None else -lim.lower)
    return replace(j, **kw)


def export_tree(a: Assembly) -> tuple[dict[str, TreeJoint], list[str], list[Joint]]:
    """Spanning tree of the joint graph rooted at ground (:func:`parsers.topology.tree_edges`).

    Returns
    -------
    parent_joint : body name -> :class:`TreeJoint` that carries it (flipped when met
        from its secondary side).
    order : body names, parents before children (breadth first).
    chords : joints outside the tree (each closes one loop), as in the assembly.

    Raises ExportError when a body is not connected to ground.
    """
    try:
        edges, chords, missing = tree_edges([b.name for b in a.bodies], a.joints)
    except KeyError as exc:
        raise ExportError(exc.args[0]) from None
    if missing:
        raise ExportError(f"bodies not connected to ground: {', '.join(missing)}")
    parent = {e.child: TreeJoint(flip(e.joint) if e.reversed else e.joint, e.reversed) for e in edges}
    return parent, [e.child for e in edges], chords


def loop_description(parent: dict[str, TreeJoint], j: Joint) -> str:
    """The bodies of the loop a chord ``j`` closes, along the tree from its secondary body and back."""
    parents = {child: tj.joint.reference for child, tj in parent.items()}
    return " -> ".join(topology.tree_path(parents, j.secondary, j.reference, GROUND) + [j.secondary])


def robust_rpy(R) -> np.ndarray:
    """Roll, pitch, yaw with ``rpy_to_matrix(rpy) == R`` to rounding error, near gimbal lock too.

    Pitch from the first column; yaw from the first column (any value where it
    is undetermined); roll from what remains, ``(Rz(y) Ry(p))^T R = Rx(r)``, so
    that the three angles reproduce R even when pitch is close to +-90 degrees
    (where :func:`dynamics.spatial.matrix_to_rpy` loses digits).
    """
    from mbcompose.dynamics.spatial import rot_y, rot_z

    R = np.asarray(R, dtype=float)
    p = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    y = np.arctan2(R[1, 0], R[0, 0]) if np.hypot(R[0, 0], R[1, 0]) > SINGULAR_FLOOR else 0.0
    M = (rot_z(y) @ rot_y(p)).T @ R
    r = np.arctan2(M[2, 1], M[1, 1])
    return np.array([r, p, y])


def on_axis(point, origin, axis, tol: float = GEOMETRY_ATOL) -> bool:
    """True when ``point`` lies on the line through ``origin`` along ``axis``."""
    d = np.asarray(point, float) - np.asarray(origin, float)
    n = np.asarray(axis, float)
    return bool(np.linalg.norm(d - n * (d @ n)) <= tol * max(1.0, np.linalg.norm(d)))


def warn_untaken_limits(a: Assembly, format_name: str) -> None:
    """One warning naming the moving joints of ``a`` with position limits (``lower``/``upper``) their
    type does not take (:mod:`dynamics.joints`: revolute and prismatic only); the exporters leave
    those out (a fixed joint's, from a locked pair, go without a word: it has no coordinate)."""
    joints = [f"{j.name} ({j.type})" for j in a.joints
              if not JOINTS[j.type].takes_limits and JOINTS[j.type].nv
              and (j.limits.lower is not None or j.limits.upper is not None)]
    if joints:
        log.warning("%s export of %s: only %s joints take position limits; left out for %s", format_name, a.name,
                    ", ".join(joint_types(takes_limits=True)), ", ".join(joints))


def warn_dropped(a: Assembly, format_name: str, fields: tuple[str, ...]) -> None:
    """One warning per joint field in ``fields`` (``armature``, ``ref``) that some joint of ``a``
    sets and ``format_name`` cannot express, naming those joints."""
    for name in fields:
        joints = [j.name for j in a.joints if getattr(j, name)]
        if joints:
            log.warning("%s export of %s: %s has no joint %s; left out for %s", format_name, a.name, format_name,
                        name, ", ".join(joints))


@dataclass(frozen=True)
class JointDynamics:
    """The spring, damper and Coulomb friction parallel to one joint, as a format with one such set per
    joint holds them (URDF ``<dynamics>``, SDFormat ``<axis><dynamics>``): the joint's own spring and
    damper plus its ``joint_spring``/``joint_friction`` elements (:class:`~parsers.assembly.
    JointForceElement`), summed.  Springs in parallel add exactly:
    ``-k1 (q - r1) - k2 (q - r2) = -(k1 + k2) (q - (k1 r1 + k2 r2) / (k1 + k2))``.

    stiffness N m/rad or N/m; springref rad or m (absolute, like ``q``); damping N m s/rad or N s/m;
    friction N m or N (the elements' regularised Coulomb friction, ``-friction tanh(v / friction_velocity)``).
    """

    stiffness: float = 0.0
    springref: float = 0.0
    damping: float = 0.0
    friction: float = 0.0


def joint_dynamics(a: Assembly) -> dict[str, JointDynamics]:
    """Joint name -> :class:`JointDynamics` of every joint of ``a`` with a spring, damper or friction
    (its own or a joint element's).  A joint's ``springdamper`` (stiffness and damping from its
    inertia) is not resolved here: :func:`warn_springdampers` names those joints."""
    out = {j.name: JointDynamics(j.stiffness, j.springref, j.damping) for j in a.joints
           if j.stiffness or j.damping}
    for e in a.forces:
        if not isinstance(e, JointForceElement) or e.joint not in a.joint_names:
            continue
        d = out.get(e.joint, JointDynamics(springref=a.joint(e.joint).springref))
        k = d.stiffness + e.stiffness
        ref = (d.stiffness * d.springref + e.stiffness * e.rest) / k if k else d.springref
        out[e.joint] = JointDynamics(k, ref, d.damping + e.damping, d.friction + e.friction)
    return out


def warn_springdampers(a: Assembly, format_name: str) -> None:
    """One warning naming the joints whose spring and damper follow from their inertia (MJCF
    ``springdamper``), which ``format_name`` cannot say."""
    joints = [j.name for j in a.joints if j.springdamper is not None]
    if joints:
        log.warning("%s export of %s: %s has no spring given by a time constant and damping ratio (MJCF "
                    "springdamper); left out for %s", format_name, a.name, format_name, ", ".join(joints))


def warn_force_elements(a: Assembly, format_name: str, kept: tuple = (), why: str = "") -> None:
    """One warning naming the force elements of ``a`` (``springs`` and ``forces``) whose record type is not
    in ``kept``: ``format_name`` cannot hold them (``why`` says what it lacks)."""
    lost = [f"{e.name} ({type(e).__name__})" for e in (*a.springs, *a.forces) if not isinstance(e, kept)]
    lost += [f"{e.name} (joint {e.joint!r} not in the export)" for e in a.forces
             if isinstance(e, JointForceElement) and isinstance(e, kept) and e.joint not in a.joint_names]
    if lost:
        log.warning("%s export of %s: force elements left out%s: %s", format_name, a.name,
                    f" ({why})" if why else "", ", ".join(lost))


def frames_by_body(a: Assembly, frames=None) -> dict[str, list]:
    """The named frames an export writes: ``a.frames`` (a lumped assembly's parts, the input's own
    frames such as a tool point) and ``frames`` (body name -> [(name, Pose), ...], poses in the
    assembly frame at the reference configuration), by body; a name given twice is written once."""
    out: dict[str, list] = {}
    seen: set = set()
    for body, name, pose in [(f.body, f.name, f.pose) for f in a.frames] + \
            [(b, n, p) for b, named in (frames or {}).items() for n, p in named]:
        if name not in seen:
            seen.add(name)
            out.setdefault(body, []).append((name, pose))
    return out


def shown_and_colliding(body) -> list[tuple]:
    """``(geometry, shown, colliding)`` for each shape of ``body``: a 'visual' shape is shown only; a
    'collision' one collides, and is shown too when the body has no visual shape (so a viewer of the
    export shows what a viewer of the input showed); an 'inertial' one (CAD, YAML) is both."""
    has_visual = any(g.role == "visual" for g in body.geometry)
    return [(g, g.role == "visual" or not has_visual, g.role != "visual") for g in body.geometry]


def rgba_of(g) -> tuple | None:
    """The colour of shape ``g``: its material's, else a reader's ``rgba`` parameter (STEP), else None."""
    if g.material is not None:
        return g.material.rgba
    rgba = g.params.get("rgba") if hasattr(g.params, "get") else None
    return None if rgba is None else tuple(float(x) for x in rgba)


#: suffix -> "module:function"; ``f(assembly, path, **options)``.
EXPORTERS = {
    ".urdf": "mbcompose.parsers.exporters.urdf:write_urdf",
    ".sdf": "mbcompose.parsers.exporters.sdf:write_sdf",
    ".mjcf": "mbcompose.parsers.exporters.mjcf:write_mjcf",
    ".xml": "mbcompose.parsers.exporters.mjcf:write_mjcf",
}


def writer_for(suffix: str):
    """The writer ``f(assembly, path, **options)`` of a file suffix (``.urdf``, ``.sdf``, ``.mjcf``,
    ``.xml``: MJCF); ExportError naming the known suffixes if none."""
    suffix = suffix.lower()
    if suffix not in EXPORTERS:
        raise ExportError(f"no exporter for suffix {suffix!r} (known: {', '.join(sorted(EXPORTERS))})")
    module, func = EXPORTERS[suffix].split(":")
    return getattr(importlib.import_module(module), func)


def export(assembly: Assembly, path, **options) -> Path:
    """Write ``assembly`` to ``path`` in the format its suffix names (:func:`writer_for`)."""
    return writer_for(Path(path).suffix)(assembly, path, **options)


__all__ = ["EXPORTERS", "ExportError", "JointDynamics", "TreeJoint", "export", "joint_dynamics",
           "warn_force_elements", "warn_springdampers", "flip", "writer_for", "loop_description", "on_axis",
           "robust_rpy", "export_tree", "frames_by_body", "rgba_of", "shown_and_colliding", "warn_dropped",
           "warn_untaken_limits", "ROS_NAME", "ros_safe_names", "rename_in_tree"]
