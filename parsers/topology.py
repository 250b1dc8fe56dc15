"""The spanning tree of an assembly's joint graph, grown from ground.

One breadth-first search serves the dynamics model (:mod:`composer.tree`) and
the tree-shaped exporters (:mod:`parsers.exporters`).  Joints declared as loop
closures (``Joint.loop``, e.g. MJCF equality constraints) are used only for
bodies no other joint reaches; at each body, joints met from their reference
side come before joints met from their secondary side, then input order.
Joints left out of the tree are the chords, one per independent loop.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

from .assembly import GROUND, Joint


@dataclass(frozen=True)
class TreeEdge:
    """A tree joint oriented base to tips: ``parent`` -> ``child`` (body names).

    reversed : True when the joint is met from its secondary body, i.e.
        ``joint.secondary == parent``.
    """

    joint: Joint
    parent: str
    child: str
    reversed: bool


def spanning_tree(body_names: Sequence[str], joints: Sequence[Joint]
                  ) -> tuple[list[TreeEdge], list[Joint], list[str]]:
    """Breadth-first spanning tree from ground.

    Returns
    -------
    edges : tree joints, parents before children (breadth first).
    chords : joints outside the tree, in input order.
    unreached : bodies no chain of joints connects to ground, in input order.

    Raises KeyError naming a joint that refers to an unknown body.
    """
    order = {j.name: i for i, j in enumerate(joints)}
    incident: dict[str, list[Joint]] = {GROUND: [], **{b: [] for b in body_names}}
    for j in joints:
        for end in (j.reference, j.secondary):
            if end not in incident:
                raise KeyError(f"joint '{j.name}' refers to unknown body '{end}'")
        incident[j.reference].append(j)
        incident[j.secondary].append(j)
    reached, used, edges = {GROUND}, set(), []
    for allow_loop_joints in (False, True):
        queue = deque([GROUND, *(e.child for e in edges)])
        while queue:
            body = queue.popleft()
            for j in sorted(incident[body], key=lambda j: (j.secondary == body, order[j.name])):
                other = j.secondary if j.reference == body else j.reference
                if j.name in used or other in reached or (j.loop and not allow_loop_joints):
                    continue
                used.add(j.name)
                reached.add(other)
                edges.append(TreeEdge(j, body, other, reversed=(j.secondary == body)))
                queue.append(other)
    chords = [j for j in joints if j.name not in used]
    return edges, chords, [b for b in body_names if b not in reached]
