"""From bodies and joints in the assembly frame to an SKO tree model.

The graph stage hands over rigid bodies (composites, or the assembly's own
bodies when lumping is off) with mass properties in the assembly frame at the
reference configuration, and the joints between them.  This module picks a
spanning tree of the joint graph rooted at ground, orients it base to tips,
and builds the :class:`dynamics.SKOModel`.  Joints left out of the tree are the
chords that close loops.

Frames (the convention every exporter and comparison relies on): the frame of
each tree joint, and so the frame of the body it carries, is placed at the
joint's origin with the assembly's axes at the reference configuration.  A
revolute or prismatic joint's coordinate is then the angle or displacement
about ``Joint.axis`` exactly as declared, which is what URDF, SDF and MJCF
mean too.  A joint's ``armature`` (rotor inertia) and ``ref`` (the coordinate at the
reference configuration, MuJoCo's ``qpos0``) go to the model unchanged: a reversed
one-axis joint negates its axis, so ``q - ref`` keeps its meaning.

Spanning tree: :func:`parsers.topology.tree_edges` (breadth first from
ground, loop-closure joints last; :func:`dynamics.topology.spanning_tree`).  A one-axis joint traversed backwards has its
axis negated, so its coordinate keeps its meaning; a multi-axis joint
(universal, spherical, planar, free) cannot be reversed without changing its
coordinates, so that case is an input error that says which joint to flip.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from mbcompose import dynamics
from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.records import record
from mbcompose.parsers.assembly import GROUND, Joint, MassProperties, frozen
from mbcompose.parsers.errors import InputError
from mbcompose.parsers.topology import TreeEdge, tree_edges

from .forces import element_specs, force_elements, needs_inertia, rotor_armature

#: the placement rotation of every body (assembly axes), read-only
_EYE = np.eye(3)
_EYE.setflags(write=False)


@record(eq=True)
class RigidBody:
    """A body for the tree: name, mass properties in the assembly frame (com and
    inertia about it, assembly axes) at the reference configuration, members."""

    name: str
    mass: MassProperties
    members: tuple[str, ...] = ()


@record(eq=True)
class TreeModel:
    """The SKO model of a spanning tree and the chords that close loops.

    model : the :class:`dynamics.SKOModel` (one node per body, in ``edges`` order).
    edges : tree joints oriented base to tips; ``edges[k]`` carries body ``k``.
    chords : joints not in the tree (one per independent loop).
    bodies : the bodies, by name.
    """

    model: object
    edges: tuple[TreeEdge, ...]
    chords: tuple[Joint, ...]
    bodies: dict


def _tree_edges(body_names: Sequence[str], joints: Sequence[Joint]) -> tuple[list[TreeEdge], list[Joint]]:
    """The tree of :func:`parsers.topology.tree_edges` with input errors: (edges, chords)."""
    try:
        edges, chords, missing = tree_edges(body_names, joints)
    except KeyError as exc:
        raise InputError(exc.args[0]) from None
    if missing:
        raise InputError(f"bodies not connected to ground by any chain of joints: {', '.join(missing)}")
    return edges, chords


def _oriented_axes(edge: TreeEdge) -> tuple[np.ndarray, np.ndarray | None]:
    """(axis, axis2) of a tree joint traversed from its secondary body (``edge.reversed``)."""
    j = edge.joint
    if not JOINTS[j.type].reversible:
        raise InputError(
            f"joint '{j.name}' ({j.type}) would be traversed from '{j.secondary}' to '{j.reference}' "
            f"in the spanning tree from ground; swap its reference and secondary bodies",
            file=j.source.file, line=j.source.line)
    return -np.array(j.axis), None


def build_tree_model(bodies: Sequence[RigidBody], joints: Sequence[Joint], gravity, actuators=(),
                     forces=()) -> TreeModel:
    """Build the SKO model of the spanning tree of ``joints`` over ``bodies``, with the joints' springs
    and dampers and the ``actuators`` (:class:`parsers.assembly.Actuator`) that drive tree joints
    (:func:`.forces.force_elements`).

    Parameters
    ----------
    bodies : rigid bodies with mass properties in the assembly frame.
    joints : joints between them (and ground), origins/axes in the assembly frame.
    gravity : (3,) m/s^2 in the assembly frame.
    forces : the Assembly's ``springs`` and ``forces`` records (:func:`.forces.element_specs`).
    """
    by_name = {b.name: b for b in bodies}
    edges, chords = _tree_edges([b.name for b in bodies], joints)
    index = {e.child: k for k, e in enumerate(edges)}
    parents = [-1 if e.parent == GROUND else index[e.parent] for e in edges]
    origins = np.array([e.joint.origin for e in edges], dtype=float).reshape(-1, 3)
    # each joint's origin in its parent's frame (ground, index -1: the assembly origin, the zero row appended)
    parent_origins = np.zeros((len(origins) + 1, 3))
    parent_origins[:-1] = origins
    placements = frozen(origins - parent_origins[parents])
    masses = [by_name[e.child].mass for e in edges]
    coms = frozen(np.array([mp.com for mp in masses], dtype=float).reshape(-1, 3) - origins)
    specs, rotors = [], rotor_armature(forces)
    for e, parent, placement, com, mp in zip(edges, parents, list(placements), list(coms), masses):  # (rows made in C)
        j = e.joint
        axis, axis2 = _oriented_axes(e) if e.reversed else (j.axis, j.axis2)
        specs.append(dynamics.BodySpec(
            name=e.child, parent=parent, joint_type=j.type, joint_name=j.name,
            placement_rotation=_EYE, placement_translation=placement, mass=mp.mass, com=com,
            inertia=mp.inertia, axis=axis, axis2=axis2,
            armature=j.armature + rotors[j.name] if j.name in rotors else j.armature, ref=j.ref))
    tree_joints = [e.joint for e in edges]
    g = np.asarray(gravity, dtype=float)
    inertia = None
    if needs_inertia(tree_joints):          # springdamper: the joints' inertia at the reference configuration
        bare = dynamics.build_model(specs, gravity=g)
        w0 = np.diag(dynamics.mass_matrix_inverse(bare, bare.neutral()))      # MuJoCo's dof_invweight0
        inertia = {j.name: 1.0 / float(w0[bare.v_slice(j.name)][0]) for j in tree_joints if j.springdamper is not None}
    owner = {m: b.name for b in bodies for m in (b.members or (b.name,))} if forces else {}
    elements = element_specs(forces, tree_joints, owner)
    model = dynamics.build_model(specs, gravity=g, forces=force_elements(tree_joints, chords, actuators, inertia,
                                                                         elements))
    return TreeModel(model, tuple(edges), tuple(chords), by_name)
