"""Kinematic loops of the reduced joint graph and their classification (seed 004, section 4).

Seed 004: "possibly overconstrained systems can be recognized in the system
graph as kinematic loops"; the seed leaves the check to a kinematics tool
(IAMS).  Here it is done numerically at the reference configuration.

The *reduced joint graph* has the nodes ground and the composites and one edge
per joint of the reduced graph (:mod:`graph.reduce`).  Its spanning tree is a
minimum cost tree (Kruskal) with weights fixed 0, actuated 1, other 2, ties
broken by joint name: welds and actuated joints are tree joints wherever
possible, so actuated coordinates stay independent.  Every other joint (a
chord) closes one fundamental circuit, ``L1, L2, ...`` in chord-name order,
oriented like its chord: the chord from its reference to its secondary body,
then the tree path back.

Closure Jacobian of a loop: walking around a loop the relative twists add up
to zero, ``sum_k sigma_k S_k qdot_k = 0`` with ``S_k`` (6 x nv_k) the motion
subspace of joint k (:func:`graph.subspaces.joint_subspace`, common point and
length for all joints) and ``sigma_k = +1`` when the walk goes from the
joint's reference to its secondary body, else ``-1``.  ``J = [sigma_k S_k]``
has 6 rows (spatial closure) and ``f = sum nv_k`` columns.  With
``r = rank J`` (numerical, :data:`graph.subspaces.RANK_RTOL`):

* ``mobility = f - r`` (instantaneous, at the reference configuration);
* ``redundant constraints = 6 - r``; a planar four-bar of spatial revolutes has
  r = 3, hence 3 redundant constraints and mobility 1;
* the loop is *over-constrained* when ``mobility <= 0`` (it cannot move).

Degrees of freedom of the mechanism: the sum of the joint freedoms of the
reduced graph minus the rank of all closure Jacobians stacked (6 rows per
loop, one column per joint freedom), which accounts for coupled loops
(a joint shared by two loops).  Parts not connected to ground contribute
only their joint freedoms; they are reported as an error.

Closure at the reference configuration: a joint's two attachment points must
coincide and its axis must be the same line on both bodies.  In the Assembly
model a joint has one ``origin`` and ``axis`` in the assembly frame, so this
holds unless the input gives the secondary body's attachment separately
(``Joint.secondary_origin``, ``Joint.secondary_axis``: a CAD snapshot of an
unassembled loop).  The *gap* of a joint is the distance between its
attachment points plus ``L`` times the angle between the two axis lines (axis
joints only); a loop containing a joint whose gap exceeds ``GAP_RTOL * L`` (:data:`dynamics.tolerances.ATTACHMENT_GAP_RTOL`)
cannot close: error ``loop-not-closed``.  The same gap on a tree joint is a
``joint-frame-gap`` warning (the body poses of the file disagree with the joint).
"""

from __future__ import annotations

from typing import Callable, Sequence

import networkx as nx
import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.records import record
from mbcompose.dynamics.tolerances import ATTACHMENT_GAP_RTOL as GAP_RTOL, SINGULAR_FLOOR
from mbcompose.parsers.assembly import GROUND

from .issues import ERROR, INFO, WARNING, Issue
from .reduce import ReducedJoint
from .subspaces import RANK_RTOL, LazySubspaces, Once, numerical_rank



@record(eq=True)
class Loop:
    """A fundamental circuit of the reduced joint graph and its classification.

    joints : joint names around the loop, the chord first.
    signs : +1 where the walk goes reference -> secondary, else -1.
    bodies : composites (or ground) visited, starting at the chord's reference.
    n_equations : 6 (spatial closure).
    n_freedoms : sum of the joints' freedoms.
    rank : numerical rank of the closure Jacobian.
    mobility : n_freedoms - rank.
    redundant_constraints : n_equations - rank.
    closes : whether the joint frames meet at the reference configuration.
    gap : largest attachment gap of a joint of the loop, m (see module docstring).
    """

    name: str
    chord: str
    joints: tuple[str, ...]
    signs: tuple[int, ...]
    bodies: tuple[str, ...]
    n_equations: int
    n_freedoms: int
    rank: int
    mobility: int
    redundant_constraints: int
    closes: bool
    gap: float

    @property
    def overconstrained(self) -> bool:
        return self.mobility <= 0

    @property
    def kind(self) -> str:
        """``'over-constrained'``, ``'redundant constraints'`` or ``'mobile'``."""
        if self.overconstrained:
            return "over-constrained"
        if self.redundant_constraints > 0:
            return "redundant constraints"
        return "mobile"


@record
class LoopAnalysis:
    """Loops, tree and mobility of a reduced joint graph.

    tree : joint names of the spanning tree (forest).
    loops : fundamental circuits, classified.
    dof : degrees of freedom of the mechanism (see module docstring).
    total_rank : rank of the stacked closure Jacobians.
    disconnected : composites not connected to ground, sorted.
    issues : errors and warnings.
    """

    tree: tuple[str, ...]
    loops: tuple[Loop, ...]
    dof: int
    total_rank: int
    disconnected: tuple[str, ...]
    issues: tuple[Issue, ...]


TREE_WEIGHT_FIXED, TREE_WEIGHT_ACTUATED, TREE_WEIGHT_OTHER = 0, 1, 2


def planar_motion(J, rtol: float) -> bool:
    """True when every column of J (6, f), spatial velocities ``[omega; v]`` in one frame, is a
    planar motion of one plane: angular parts along one normal n, linear parts normal to n."""
    J = np.asarray(J, dtype=float)
    if J.size == 0:
        return False
    scale = max(float(np.abs(J).max()), SINGULAR_FLOOR)
    W, V = J[:3], J[3:]
    if np.abs(W).max() > rtol * scale:
        U, sw, _ = np.linalg.svd(W)
        if sw[1] > rtol * sw[0]:
            return False
        n = U[:, 0]
    else:
        U, _, _ = np.linalg.svd(V)
        n = U[:, 2]
    return bool(np.abs(n @ V).max() <= rtol * scale)


def joint_tree(nodes: Sequence[str], joints: Sequence[ReducedJoint]) -> tuple[str, ...]:
    """Minimum cost spanning forest of the joint graph (weights in the module docstring)."""
    return _spanning_forest(nodes, joints)[0]


def _spanning_forest(nodes: Sequence[str], joints: Sequence[ReducedJoint]) -> tuple[tuple[str, ...], dict]:
    """:func:`joint_tree` and each node's component, as one node of it (Kruskal, with a
    union-find over a dict); the components are None when the forest is one tree."""
    up = {n: n for n in nodes}

    def find(n):
        while up.setdefault(n, n) != n:
            up[n] = up[up[n]]
            n = up[n]
        return n

    tree = []
    for j in sorted(joints, key=lambda j: (TREE_WEIGHT_FIXED if j.type == "fixed" else TREE_WEIGHT_ACTUATED
                                           if j.actuated else TREE_WEIGHT_OTHER, j.name)):
        a, b = find(j.reference), find(j.secondary)
        if a != b:
            up[a] = b
            tree.append(j.name)
    return tuple(sorted(tree)), None if len(tree) == len(up) - 1 else {n: find(n) for n in list(up)}


def attachment_gap(j: ReducedJoint, length: float = 1.0) -> float:
    """Gap between the joint's attachments on its two bodies, m (see module docstring)."""
    gap = 0.0
    if j.secondary_origin is not None:
        gap += float(np.linalg.norm(np.asarray(j.secondary_origin) - j.origin))
    if j.secondary_axis is not None and JOINTS[j.type].has_axis:
        a = np.asarray(j.axis, float) / np.linalg.norm(j.axis)
        b = np.asarray(j.secondary_axis, float) / np.linalg.norm(j.secondary_axis)
        gap += length * float(np.arctan2(np.linalg.norm(np.cross(a, b)), abs(a @ b)))
    return gap


def _rank_issues(loop: Loop, J, rtol: float) -> list[Issue]:
    """Over-constrained loop (warning), planar loop (information) or redundant constraints (warning)."""
    seq, f, rank = loop.joints, loop.n_freedoms, loop.rank
    what = f"loop {loop.name} ({', '.join(seq)})"
    if loop.overconstrained:
        return [Issue(WARNING, "overconstrained-loop", f"{what} is over-constrained: {f} joint freedoms, "
                      f"closure rank {rank}, mobility {f - rank}", (loop.name, *seq))]
    if loop.redundant_constraints == 3 and planar_motion(J, rtol):
        return [Issue(INFO, "planar-loop", f"{what} is planar: its 3 out-of-plane closure constraints are "
                      f"redundant, as expected (mobility {f - rank})", (loop.name, *seq))]
    if loop.redundant_constraints:
        return [Issue(WARNING, "redundant-constraints", f"{what} has {6 - rank} redundant closure constraints "
                      f"(rank {rank} of 6), mobility {f - rank}", (loop.name, *seq))]
    return []


def analyse_loops(nodes: Sequence[str], joints: Sequence[ReducedJoint], length: float | Callable[[], float] = 1.0,
                  rtol: float = RANK_RTOL) -> LoopAnalysis:
    """Fundamental circuits, closure Jacobian ranks, mobility and dof.

    Parameters
    ----------
    nodes : composite names (ground is added).
    joints : joints of the reduced graph, ``reference``/``secondary`` naming nodes.
    length : characteristic length L for the twists, m, or a function giving it (called only when
        a loop or a joint with two attachments needs it: a plain tree does not).
    rtol : relative tolerance of numerical ranks.
    """
    get_length = Once(length) if callable(length) else lambda: length
    nodes = [GROUND] + [n for n in nodes if n != GROUND]
    by_name = {j.name: j for j in joints}
    tree, components = _spanning_forest(nodes, joints)
    tset = set(tree)
    chords = sorted(n for n in by_name if n not in tset)
    if chords:  # the tree as a graph, and the joints' twists, for the loops' paths and Jacobians
        T = nx.MultiGraph()
        T.add_nodes_from(nodes)
        for name in tree:
            j = by_name[name]
            T.add_edge(j.reference, j.secondary, key=name)
        length = get_length()
        S = LazySubspaces(joints, lambda: (np.mean([j.origin for j in joints], axis=0), length))
        col0, c = {}, 0
        for j in sorted(joints, key=lambda j: j.name):
            col0[j.name] = c
            c += j.nv
    n_free = sum(j.nv for j in joints)
    issues: list[Issue] = []
    loops: list[Loop] = []
    rows = []
    for k, name in enumerate(chords):
        ch = by_name[name]
        path = nx.shortest_path(T, ch.secondary, ch.reference)
        seq, signs, bodies = [name], [1], [ch.reference, ch.secondary]
        for u, v in zip(path[:-1], path[1:]):
            key = sorted(T[u][v].keys())[0]
            j = by_name[key]
            seq.append(key)
            signs.append(1 if (j.reference, j.secondary) == (u, v) else -1)
            bodies.append(v)
        bodies = bodies[:-1]
        J = np.hstack([s * S[n] for n, s in zip(seq, signs)]) if seq else np.zeros((6, 0))
        rank = numerical_rank(J, rtol)
        f = sum(by_name[n].nv for n in seq)
        gap = max(attachment_gap(by_name[n], length) for n in seq)
        closes = gap <= GAP_RTOL * length
        loop = Loop(f"L{k + 1}", name, tuple(seq), tuple(signs), tuple(bodies), 6, f, rank, f - rank, 6 - rank,
                    closes, gap)
        loops.append(loop)
        big = np.zeros((6, n_free))
        for n, s in zip(seq, signs):
            big[:, col0[n]:col0[n] + by_name[n].nv] += s * S[n]
        rows.append(big)
        if not closes:
            bad = [n for n in seq if attachment_gap(by_name[n], length) > GAP_RTOL * length]
            issues.append(Issue(ERROR, "loop-not-closed",
                                f"loop {loop.name} ({', '.join(seq)}) cannot close at the reference configuration: "
                                f"the attachments of {', '.join(bad)} on their two bodies are {gap:.6g} m apart", (loop.name, *bad)))
        issues += _rank_issues(loop, J, rtol)
    for name in tree:
        j = by_name[name]
        if j.secondary_origin is None and j.secondary_axis is None:  # one attachment: no gap
            continue
        g = attachment_gap(j, get_length())
        if g > GAP_RTOL * get_length():
            issues.append(Issue(WARNING, "joint-frame-gap",
                                f"joint {name}: its attachments on its two bodies are {g:.6g} m apart", (name,)))
    total_rank = numerical_rank(np.vstack(rows), rtol) if rows else 0
    disconnected = tuple(sorted(n for n in nodes if components[n] != components[GROUND])) if components else ()
    if disconnected:
        issues.insert(0, Issue(ERROR, "disconnected",
                               f"not connected to ground by any chain of joints: {', '.join(disconnected)}",
                               disconnected))
    return LoopAnalysis(tree=tree, loops=tuple(loops), dof=n_free - total_rank, total_rank=total_rank,
                        disconnected=disconnected, issues=tuple(issues))
