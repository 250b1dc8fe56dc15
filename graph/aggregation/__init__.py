"""Partitioning and aggregation of tree digraphs (seed 000, sections 3 and 5).

Jain, *Multibody graph transformations and analysis, Part I: tree topology
systems* (seed ``000_a20564953ff4dafd.txt``).  This module is the pure graph side
and its public face: tree basics (:mod:`graph.aggregation.trees`), subgraph closures, the
partition of a tree by a path-induced subgraph, the aggregation condition and
the aggregation subgraph (:mod:`graph.aggregation.subgraphs`), node contraction
(:mod:`graph.aggregation.contraction`) and, here, the compound nodes of loops.  The block
(operator) structure built on top of it lives in :mod:`graph.aggregation.blocks`,
serial-chain segments in :mod:`graph.aggregation.segments`.

Conventions
-----------
* A **tree** is a :class:`networkx.DiGraph` that is an arborescence
  (:func:`networkx.is_arborescence`): a single root, every other node has exactly
  one parent.  Edges point from the **parent** (inboard) node to the **child**
  (outboard) node, the orientation of the seed's standard digraph (seed 000,
  section 2.2: "edges oriented from the inboard to the outboard body").  Node
  labels are arbitrary hashables.  Whether the inertial frame is a node is the
  caller's choice; it is then an ordinary (root) node here.
* ``j`` is an **ancestor** of ``i`` (seed: ``i < j``) when there is a directed path
  from ``j`` to ``i``; two nodes are **related** when one is an ancestor of the
  other.  "Paths" in the definitions below are directed paths (this is what the
  proof of Lemma 1 uses, and why a path-induced subgraph of a tree may be a forest,
  seed Fig. 3).
* A **subgraph** argument (``sub``) is either a :class:`networkx.DiGraph` whose
  nodes and edges belong to the tree (its edge set matters for
  :func:`is_induced`), or any iterable of nodes, which stands for the induced
  subgraph on those nodes.

Definitions and results implemented (seed 000)
-----------------------------------------------
* Induced subgraph ``S_I`` and path-induced subgraph ``S_P`` (section 3), with
  ``S <= S_I <= S_P`` (Eq. 21).  On a tree, ``S_P`` has the nodes of ``S`` plus
  every node that has an ancestor in ``S`` and a descendant in ``S``, and all tree
  edges between them.
* Lemma 1: a path-induced ``S`` partitions the nodes into ``S``, the child
  subgraph ``C`` (descendants of ``S`` not in ``S``) and the parent subgraph ``P``
  (the rest); ``C`` and ``P`` are path-induced.  The only edges between the parts
  are ``S -> C`` (the connector block ``B_S`` of Eq. 22) and ``P -> S`` (the
  connector ``E_S``); there is no ``P -> C`` edge.  Lemma 2 (the block structure of
  ``A``, Eq. 24) is the operator side, see :mod:`graph.aggregation.blocks`.
* Section 5.1: node contraction and subgraph aggregation.  Lemma 3: aggregating
  ``S`` or ``S_I`` gives the same digraph, and the edges that disappear are exactly
  those of ``S_I``.
* Assumption 1 (aggregation condition) and Lemma 5: the aggregated digraph is a
  tree if and only if the (induced) subgraph satisfies the aggregation condition.
  Lemma 4: a subgraph satisfying it is path-induced.
* Lemma 6: the aggregation subgraph ``S_A``, with ``S <= S_I <= S_P <= S_A``
  (Eq. 28).

Two places where the seed's wording is made precise here
---------------------------------------------------------
*Aggregation condition.*  Assumption 1 asks that ``S`` be induced and that the
set of its parents ``p(S) = {parent(s) : s in S, parent(s) not in S}`` contain
exactly one node, "necessarily the ancestor of all the nodes in S".  Read
literally this rejects ``S`` = a subtree containing the root (``p(S)`` empty),
whose aggregate is a tree (the proof of Lemma 5 itself only uses "at most one
node"), and the ancestor clause is not automatic when ``S`` holds the root:
in ``r -> p -> s`` the set ``S = {r, s}`` has ``p(S) = {p}`` yet aggregating it
makes the cycle ``S -> p -> S``.  The condition used here is the one that makes
Lemma 5 an equivalence: ``S`` is non-empty and induced, and every node of ``S``
*enters* ``S`` through the same place, i.e. walking up from any ``s`` in ``S``, the
first node outside ``S`` is the same node ``p`` for all ``s`` (or there is none, for
all ``s``: ``S`` is a subtree that contains the root).  When the root is not in
``S`` this is exactly Assumption 1; ``p`` is then the single parent ``p(S)``.

*"Minus its root" in Lemma 6.3.*  ``S_A`` is defined as the smallest subgraph
containing ``S`` that satisfies the aggregation condition.  Let ``l`` be the lowest
common ancestor of the nodes of ``S`` and ``U`` the smallest subtree containing
``S`` (the union of the tree paths from ``l`` to the nodes of ``S``; "subtree" means
a connected sub-arborescence, not all descendants of ``l``).  Then

* if ``l`` is not in ``S``: ``S_A = U - {l}`` (Lemma 6.3 literally; ``p(S_A) = {l}``);
* if ``l`` is in ``S`` (e.g. ``S`` is a serial chain): ``S_A = U``; removing ``l`` would
  drop a node of ``S``.  The root that is removed is then ``parent(l)``.

Both cases read: ``S_A`` plus its parent node is the smallest subtree containing
``S`` whose root is not in ``S``, and ``S_A`` is that subtree minus its root
(matching the proof of Lemma 6.3: "with the parent node added in, the new
subgraph is a subtree").  If ``l`` is the tree root and in ``S``, ``S_A = U`` has no
parent.

References
----------
Jain, A., Multibody graph transformations and analysis, Part I: tree topology
systems, Nonlinear Dyn. (2011), sections 3, 5 (seed 000).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import networkx as nx

from mbcompose.dynamics import topology

from .contraction import Aggregation, aggregate, aggregate_disjoint, contract_nodes
from .subgraphs import (Partition, aggregation_subgraph, induced_subgraph, is_induced, is_path_induced, partition,
                        path_induced_subgraph, satisfies_aggregation_condition, subgraph_children, subgraph_parents)
from .trees import (ancestors_or_self, canonical_order, lowest_common_ancestor, parent_map, parent_of,
                    tree_root)

__all__ = [
    "Aggregation",
    "Partition",
    "aggregate",
    "aggregate_disjoint",
    "aggregation_subgraph",
    "ancestors_or_self",
    "canonical_order",
    "contract_nodes",
    "induced_subgraph",
    "is_induced",
    "is_path_induced",
    "loop_aggregation_nodes",
    "loop_aggregation_sets",
    "lowest_common_ancestor",
    "parent_map",
    "parent_of",
    "partition",
    "path_induced_subgraph",
    "satisfies_aggregation_condition",
    "subgraph_children",
    "subgraph_parents",
    "tree_root",
]


# --------------------------------------------------------------------- loops

def loop_aggregation_nodes(tree: nx.DiGraph, u: Hashable, v: Hashable) -> frozenset:
    """Nodes that become one compound node when a chord ``u - v`` closes a loop.

    The loop closed by a chord (cut-edge) between ``u`` and ``v`` is the tree path
    ``u ... l ... v`` (``l`` their lowest common ancestor) plus the chord.  Each tree
    edge is the hinge of its child node, so the hinges in the loop are those of the
    path nodes other than ``l``; ``l``'s own hinge is outside the loop.  The compound
    node is the aggregation subgraph of that set, which is the set itself:
    Lemma 6.3 read literally on ``S = {u, v}`` -- the smallest subtree containing the
    loop's end nodes, minus its root ``l``.  It satisfies the aggregation condition
    with ``p(S_A) = {l}``; when ``u`` is an ancestor of ``v`` (``l = u``) it is the
    path below ``u`` down to ``v``.

    Parameters
    ----------
    tree : networkx.DiGraph
        Spanning tree of the mechanism's digraph (parent -> child).
    u, v : Hashable
        The two distinct nodes joined by the chord joint.

    Returns
    -------
    frozenset
        Nodes of the tree path from ``u`` to ``v`` without their lowest common
        ancestor.
    """
    tree_root(tree)
    if u not in tree or v not in tree:
        raise ValueError(f"chord end not in the tree: {u!r}, {v!r}")
    if u == v:
        raise ValueError("a chord joining a node to itself closes no loop")
    return topology.loop_set(parent_map(tree), u, v, tree_root(tree))


def loop_aggregation_sets(tree: nx.DiGraph, chords: Iterable[tuple[Hashable, Hashable]]) -> list[frozenset]:
    """Disjoint compound-node sets for several loops (constraint embedding, seed 000 5.3).

    Starts from :func:`loop_aggregation_nodes` of every chord and merges sets that
    share a node, replacing the union by its aggregation subgraph ``S_A`` (the
    union of two sets satisfying the aggregation condition need not satisfy it),
    until the sets are pairwise disjoint.  Each result satisfies the aggregation
    condition, so :func:`aggregate_disjoint` of the list keeps a tree.

    Parameters
    ----------
    tree : networkx.DiGraph
        Spanning tree (parent -> child).
    chords : iterable of (u, v)
        The chord joints, as pairs of tree nodes.

    Returns
    -------
    list of frozenset
        Pairwise disjoint node sets, in the order of the first chord each contains.
    """
    chords = list(chords)
    for u, v in chords:
        loop_aggregation_nodes(tree, u, v)
    return topology.loop_sets(parent_map(tree), chords, tree_root(tree))
