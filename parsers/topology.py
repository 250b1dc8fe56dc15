"""The spanning tree of an assembly's joint graph, grown from ground.

One breadth-first search (:func:`dynamics.topology.spanning_tree`) serves the
dynamics model (:mod:`graph.model.tree`) and the tree-shaped exporters
(:mod:`parsers.exporters`); this module adapts it to the assembly's joints.
Joints declared as loop closures (``Joint.loop``, e.g. MJCF equality
constraints) are used only for bodies no other joint reaches; at each body,
joints met from their reference side come before joints met from their
secondary side, then input order.  Joints left out of the tree are the chords,
one per independent loop.
"""

from __future__ import annotations

from typing import Sequence

from mbcompose.dynamics import topology
from mbcompose.dynamics.records import record

from .assembly import GROUND, Joint


@record(eq=True)
class TreeEdge:
    """A tree joint oriented base to tips: ``parent`` -> ``child`` (body names).

    reversed : True when the joint is met from its secondary body, i.e.
        ``joint.secondary == parent``.
    """

    joint: Joint
    parent: str
    child: str
    reversed: bool


def tree_edges(body_names: Sequence[str], joints: Sequence[Joint]
               ) -> tuple[list[TreeEdge], list[Joint], list[str]]:
    """Breadth-first spanning tree of the joints from ground.

    Returns
    -------
    edges : tree joints, parents before children (breadth first).
    chords : joints outside the tree, in input order.
    unreached : bodies no chain of joints connects to ground, in input order.

    Raises KeyError naming a joint that refers to an unknown body.
    """
    try:
        tree, chords, unreached = topology.spanning_tree(
            body_names, [(j.reference, j.secondary, j.loop) for j in joints], GROUND)
    except KeyError as exc:
        i, end = exc.args
        raise KeyError(f"joint '{joints[i].name}' refers to unknown body '{end}'") from None
    edges = [TreeEdge(joints[i], parent, child, joints[i].secondary == parent) for i, parent, child in tree]
    return edges, [joints[i] for i in chords], unreached
