"""Decomposition of a tree into serial-chain segments (seed 000, section 7).

Seed 000 (Jain, *Multibody graph transformations and analysis, Part I*), section 7
and Figs. 6-7; seed 003, section 2 (strictly canonical trees, Figs. 4-5).

A **serial-chain segment** (branch) is a maximal directed path ``n_j -> ... -> 1_j``
of the tree in which every node but the last has exactly one child.  A segment
starts at the root or at a child of a node with two or more children, and ends
(its tip ``1_j``) at a leaf or at a node with two or more children (a *branching*
node); the children of a tip are the bases ``n_k`` of its child segments (Eq. 44:
the connector block ``E_A_{j,k}`` has its only non-zero block at ``(1_j, n_k)``).
Every segment is identified by its tip, so

    number of segments = number of leaves + number of branching nodes,

e.g. 3 + 2 = 5 for seed 000, Fig. 6.  (Equivalently ``1 + sum`` of the child
counts of the branching nodes.)  The seed does not state this count; it follows
from the definition above.

Serial chains satisfy the aggregation condition (seed 000, 5.2), so aggregating
all segments (:func:`segment_tree`) gives the coarser tree of Fig. 6 whose
:func:`graph.aggregation.blocks.sko_pattern`, ``spo_pattern`` and
``mass_matrix_pattern`` are the segment-level structures of Eqs. 43, 45 and
Fig. 7: dense diagonal blocks, ``E_A`` blocks only for adjacent segments, ``A`` and
mass matrix blocks only for related segments.

Trees are :class:`networkx.DiGraph` arborescences, edges parent -> child (see
:mod:`graph.aggregation`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import networkx as nx

from mbcompose.graph.aggregation import Aggregation, aggregate_disjoint, tree_root

__all__ = ["Segment", "branching_nodes", "leaves", "segment_tree", "serial_chain_segments"]


@dataclass(frozen=True, order=True)
class Segment:
    """Label of the compound node of segment ``index`` in :func:`segment_tree`."""

    index: int


def leaves(tree: nx.DiGraph) -> list:
    """Nodes without children."""
    return [n for n, d in tree.out_degree() if d == 0]


def branching_nodes(tree: nx.DiGraph) -> list:
    """Nodes with two or more children."""
    return [n for n, d in tree.out_degree() if d >= 2]


def serial_chain_segments(tree: nx.DiGraph) -> list[tuple]:
    """Split a tree into its serial-chain segments (seed 000, section 7, Fig. 6).

    Returns
    -------
    list of tuple
        Each segment as the directed path from its base ``n_j`` (first) to its tip
        ``1_j`` (last).  Segments are listed in depth-first preorder of their bases,
        the root's segment first, children in ``tree.successors`` order.  Every node
        is in exactly one segment.
    """
    root = tree_root(tree)
    out = []
    stack = [root]
    while stack:
        base = stack.pop()
        seg = [base]
        children = list(tree.successors(base))
        while len(children) == 1:
            seg.append(children[0])
            children = list(tree.successors(children[0]))
        out.append(tuple(seg))
        stack.extend(reversed(children))
    return out


def segment_tree(tree: nx.DiGraph, order: Sequence[Hashable] | None = None) -> Aggregation:
    """The coarser tree whose nodes are the serial-chain segments (seed 000, Fig. 6).

    Parameters
    ----------
    order : sequence of Hashable, optional
        Order of all nodes of ``tree`` fixing the member order inside each segment
        node (default :func:`graph.aggregation.canonical_order`: tip first, base
        last, the seed's indices ``1_j ... n_j``).

    Returns
    -------
    Aggregation
        Compound nodes ``Segment(i)`` for the ``i``-th segment of
        :func:`serial_chain_segments`; the edge ``Segment(j) -> Segment(k)`` exists
        when the tip of ``j`` is the parent of the base of ``k`` (its
        ``original_edges`` attribute holds that one edge).
    """
    segs = serial_chain_segments(tree)
    return aggregate_disjoint(tree, segs, labels=[Segment(i) for i in range(len(segs))], order=order)
