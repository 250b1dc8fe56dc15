"""Closed chains in the pipeline: the tree model plus its loop-closing chords.

``loops: embed`` (the default) builds the constraint-embedded model of
:mod:`dynamics.embedding` (seed 000: each loop's aggregation subgraph becomes a
compound node with minimal coordinates); ``loops: lagrange`` builds the dense
Lagrange-multiplier model of :mod:`dynamics.closed.lagrange` on the spanning tree.
Both expose every tree joint by name (independent and dependent alike).  Joint
couplings (URDF ``mimic``, MJCF ``equality/joint|tendon``) are embedded the same way
(:mod:`dynamics.closed.coupling`): the follower joint becomes a dependent coordinate.

The conversion from the composer's :class:`graph.model.tree.TreeModel` (joints of
the assembly) to the dynamics' :class:`dynamics.closed.closure.Chord` (body indices and
frames in body coordinates) lives here, so that ``dynamics`` reads no attribute
of a ``parsers`` or ``composer`` object.
"""

from __future__ import annotations

import logging

import numpy as np

from mbcompose.dynamics.closed.closure import Chord, ClosureError
from mbcompose.dynamics.closed.coupling import JointCoupling
from mbcompose.dynamics.closed.lagrange import LagrangeModel
from mbcompose.dynamics.embedding import EmbeddedModel, embed
from mbcompose.dynamics.joints import JOINTS, joint_types
from mbcompose.dynamics.spatial import shortest_rotation
from mbcompose.parsers.errors import InputError

from .tree import TreeModel

log = logging.getLogger(__name__)

__all__ = ["chords_from_tree_model", "couplings_for_tree_model", "embed_tree_model", "closed_chain_model"]


def chords_from_tree_model(tm: TreeModel) -> list[Chord]:
    """The chords of a tree model as :class:`dynamics.closed.closure.Chord` (ground is body -1).

    Body frames of the tree sit at their tree joint's origin with the assembly's
    axes at the reference configuration, so a chord's joint frames have assembly
    axes and origin ``Joint.origin`` on the reference body (``a``) and
    ``Joint.secondary_origin`` (or ``origin``) on the secondary body (``b``); a
    ``secondary_axis`` rotates ``J_b`` by the shortest rotation taking ``axis`` to it.
    """
    index = {e.child: k for k, e in enumerate(tm.edges)}
    origin = {e.child: np.asarray(e.joint.origin, float) for e in tm.edges}
    out = []
    for j in tm.chords:
        if j.armature:
            log.warning("%s:%s: armature of loop-closing joint %r left out (a loop closure has no coordinate "
                        "of its own to carry rotor inertia)", j.source.file, j.source.line, j.name)
        a, b = index.get(j.reference, -1), index.get(j.secondary, -1)
        oa = np.asarray(j.origin, float)
        ob = oa if j.secondary_origin is None else np.asarray(j.secondary_origin, float)
        Rb = np.eye(3) if j.secondary_axis is None else shortest_rotation(j.axis, j.secondary_axis)
        out.append(Chord(
            name=j.name, type=j.type, body_a=a, body_b=b,
            p_a=oa - (origin[j.reference] if a >= 0 else 0.0),
            p_b=ob - (origin[j.secondary] if b >= 0 else 0.0),
            R_b=Rb, axis=np.asarray(j.axis, float),
            axis2=None if j.axis2 is None else np.asarray(j.axis2, float),
            actuated=bool(j.actuated)))
    return out


def _coupled_edge(tm: TreeModel, edge_of: dict, name: str, coupling):
    """(body index, joint) of the tree joint ``name`` a coupling names (``edge_of``: joint name -> index
    of its tree edge, the first of a name); InputError when it has none."""
    k = edge_of.get(name)
    if k is not None:
        j = tm.edges[k].joint
        if not JOINTS[j.type].couplable:
            raise InputError(f"coupling of joint {coupling.joint!r}: joint {name!r} is {j.type}; only "
                             f"{', '.join(joint_types(couplable=True))} joints can be coupled",
                             file=coupling.source.file, line=coupling.source.line)
        return k, j
    where = "closes a loop" if any(j.name == name for j in tm.chords) else "is not a moving joint of the model"
    raise InputError(f"coupling of joint {coupling.joint!r}: joint {name!r} {where} (couplings of loop-closing, "
                     "fixed or merged joints are not supported)", file=coupling.source.file, line=coupling.source.line)


def couplings_for_tree_model(tm: TreeModel, couplings) -> list[JointCoupling]:
    """The assembly's :class:`parsers.assembly.Coupling` s as :class:`dynamics.closed.coupling.JointCoupling`
    (tree body and coordinate indices); a joint's coordinate keeps its meaning in the tree."""
    out = []
    m = tm.model
    edge_of: dict = {}
    for k, e in enumerate(tm.edges):
        edge_of.setdefault(e.joint.name, k)
    for c in couplings:
        sides = []
        for terms in (c.follower_sum, c.leader_sum):
            side = []
            for name, coef in terms:
                k, j = _coupled_edge(tm, edge_of, name, c)
                side.append((k, int(m.q_offset[k]), int(m.v_offset[k]), float(coef)))
            sides.append(side)
        follower, leader = sides
        out.append(JointCoupling(
            name=f"{c.joint}<-{c.leader}" if c.leader else c.joint,
            follower=tuple(t[1:] for t in follower), leader=tuple(t[1:] for t in leader),
            bodies=tuple(t[0] for t in follower + leader), coefficients=tuple(c.coefficients)))
    return out


def embed_tree_model(tm: TreeModel, independent=None, couplings=()) -> EmbeddedModel:
    """:func:`dynamics.embedding.embed` the chords and ``couplings`` (the assembly's) of a tree model;
    actuated tree joints and the leaders of couplings are kept independent when possible, followers
    are dependent when possible (as in Pinocchio's mimic joints)
    (``independent``: joint or coordinate names forced independent)."""
    followers = {c.joint for c in couplings}
    actuated = [e.joint.name for e in tm.edges if e.joint.actuated and e.joint.name not in followers] + \
        [c.leader for c in couplings if c.leader is not None and c.leader not in followers]
    return embed(tm.model, chords_from_tree_model(tm), actuated=actuated, independent=independent,
                 couplings=couplings_for_tree_model(tm, couplings))


def closed_chain_model(tree: TreeModel, loops: str = "embed", couplings=()):
    """The dynamics model of a closed chain or of coupled joints, ``loops`` 'embed' or 'lagrange'
    (see module docstring)."""
    try:
        if loops == "lagrange":
            if couplings:
                raise InputError("joint couplings need loops: embed (the Lagrange model has loop "
                                 "closures only)", file=couplings[0].source.file, line=couplings[0].source.line)
            return LagrangeModel(tree.model, chords_from_tree_model(tree))
        return embed_tree_model(tree, couplings=couplings)
    except ClosureError as exc:
        raise InputError(f"loop {exc.loop}: {exc}") from None
