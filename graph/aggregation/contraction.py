"""Node contraction and aggregation of disjoint node sets that keep a tree (seed 000, section 5.1).

Conventions (tree digraphs parent -> child, ancestors, the seed's notation) are those of
:mod:`graph.aggregation`, which re-exports every public name of this module.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from .subgraphs import satisfies_aggregation_condition
from .trees import canonical_order, node_set, tree_root

logger = logging.getLogger(__name__)

__all__ = ["contract_nodes", "Aggregation", "aggregate_disjoint", "aggregate"]


# ------------------------------------------------------------- contraction (5.1)

def contract_nodes(tree: nx.DiGraph, sub, label: Hashable) -> nx.DiGraph:
    """Node contraction of the nodes of ``sub`` into one node (seed 000, section 5.1).

    Every edge between a node of ``S`` and a node outside becomes an edge between
    ``label`` and that node; edges between nodes of ``S`` disappear (Lemma 3:
    exactly the edges of ``S_I``).  The result need not be a tree.

    Parameters
    ----------
    tree : networkx.DiGraph
        Any digraph (usually a tree, parent -> child).
    sub : networkx.DiGraph or iterable of nodes
        The subgraph ``S`` (only its nodes matter).
    label : Hashable
        Name of the aggregated node; must not be a node of ``tree`` outside ``S``.

    Returns
    -------
    networkx.DiGraph
        The transformed digraph ``T_S``.  The aggregated node has attribute
        ``members`` (frozenset of ``S``); each edge incident to it has attribute
        ``original_edges`` (tuple of the original ``(parent, child)`` edges it stands
        for; an edge that already carries ``original_edges``, from an earlier
        contraction, passes those on).  Other nodes and edges keep their attributes.
    """
    S = node_set(tree, sub)
    if label in tree and label not in S:
        raise ValueError(f"label {label!r} is already a node of the tree outside the subgraph")
    out = nx.DiGraph()
    out.graph.update(tree.graph)
    for n, d in tree.nodes(data=True):
        if n not in S:
            out.add_node(n, **d)
    out.add_node(label, members=S)
    merged: dict = {}
    for a, b, d in tree.edges(data=True):
        if a in S and b in S:
            continue
        if a in S or b in S:
            key = (label if a in S else a, label if b in S else b)
            merged.setdefault(key, []).extend(d.get("original_edges", ((a, b),)))
        else:
            out.add_edge(a, b, **d)
    for (a, b), orig in merged.items():
        out.add_edge(a, b, original_edges=tuple(orig))
    return out


@dataclass(frozen=True)
class Aggregation:
    """A tree after aggregating disjoint subgraphs into compound nodes (Lemma 5).

    Attributes
    ----------
    tree : networkx.DiGraph
        The aggregated tree ``T_S`` (parent -> child).
    compound_nodes : tuple
        Labels of the new compound nodes, in the order the subgraphs were given.
    members : Mapping
        For *every* node ``a`` of ``tree``: the tuple of original nodes it stands for,
        in the stacking order (``(a,)`` for a node left alone).  A compound node of
        members ``(s_1, ..., s_m)`` has weight dimension ``m_S = sum m_{s_i}``
        (Eq. 29) and its stacked vectors are ``[x(s_1); ...; x(s_m)]`` (e.g. the
        6|S| spatial velocity ``V_S``).  Members follow the ``order`` given to
        :func:`aggregate` (default :func:`canonical_order`: children before parents,
        the seed's canonical numbering, so ``E_A_S`` is strictly lower triangular).
    node_map : Mapping
        Original node -> node of ``tree`` that holds it.
    """

    tree: nx.DiGraph
    compound_nodes: tuple
    members: Mapping
    node_map: Mapping

    def stack_order(self, order: Sequence[Hashable] | None = None) -> list:
        """Original nodes in the order of the aggregated tree's stacked vectors.

        Parameters
        ----------
        order : sequence of Hashable, optional
            An ordering of the nodes of the aggregated tree (default: its
            :func:`canonical_order`).

        Returns
        -------
        list
            ``members[a]`` concatenated for ``a`` in ``order``.
        """
        order = canonical_order(self.tree) if order is None else list(order)
        if len(order) != len(self.tree) or set(order) != set(self.tree.nodes):
            raise ValueError("order must list every node of the aggregated tree once")
        return [m for a in order for m in self.members[a]]


def aggregate_disjoint(tree: nx.DiGraph, subs: Sequence, labels: Sequence[Hashable] | None = None,
                       order: Sequence[Hashable] | None = None) -> Aggregation:
    """Aggregate several disjoint subgraphs, each into one compound node (seed 000, 5).

    The subgraphs are contracted one after the other; each must satisfy the
    aggregation condition (:func:`satisfies_aggregation_condition`) in the tree
    obtained so far, so that by Lemma 5 every step keeps a tree.  Subgraphs that
    each satisfy it in the original tree always qualify.

    Parameters
    ----------
    subs : sequence of (networkx.DiGraph or iterable of nodes)
        Pairwise disjoint, non-empty node sets of ``tree``.
    labels : sequence of Hashable, optional
        One label per subgraph; default ``tuple(members)``.  A label may not be
        another node of the tree.
    order : sequence of Hashable, optional
        An ordering of all nodes of ``tree``; members of a compound node are listed
        in this order.  Default :func:`canonical_order` (children first).

    Returns
    -------
    Aggregation

    Raises
    ------
    ValueError
        If ``tree`` is not a tree, the subgraphs overlap, or one fails the
        aggregation condition.
    """
    tree_root(tree)
    order = canonical_order(tree) if order is None else list(order)
    rank = {n: i for i, n in enumerate(order)}
    if len(rank) != len(order) or set(rank) != set(tree.nodes):
        raise ValueError("order must list every node of the tree exactly once")
    sets = [node_set(tree, s) for s in subs]
    if labels is not None and len(labels) != len(sets):
        raise ValueError("one label per subgraph")
    seen: set = set()
    for S in sets:
        if not S:
            raise ValueError("cannot aggregate an empty subgraph")
        if seen & S:
            raise ValueError(f"subgraphs overlap on {sorted(map(repr, seen & S))}")
        seen |= S
    current = tree
    members = {n: (n,) for n in tree.nodes}
    node_map = {n: n for n in tree.nodes}
    compound = []
    for i, S in enumerate(sets):
        mem = tuple(sorted(S, key=rank.__getitem__))
        label = mem if labels is None else labels[i]
        if not satisfies_aggregation_condition(current, S):
            raise ValueError(f"subgraph {i} ({sorted(map(repr, S))}) does not satisfy the "
                             "aggregation condition (seed 000, Assumption 1); aggregate its "
                             "aggregation subgraph S_A instead")
        if (label in members or label in tree) and label not in S:
            raise ValueError(f"label {label!r} is already a node of the tree")
        current = contract_nodes(current, S, label)
        current.nodes[label]["members"] = mem
        for m in mem:
            del members[m]
            node_map[m] = label
        members[label] = mem
        compound.append(label)
        logger.debug("aggregated %d nodes into %r", len(mem), label)
    return Aggregation(tree=current, compound_nodes=tuple(compound), members=members,
                       node_map=node_map)


def aggregate(tree: nx.DiGraph, sub, label: Hashable | None = None,
              order: Sequence[Hashable] | None = None) -> Aggregation:
    """Aggregate one subgraph into a compound node (seed 000, section 5, Lemma 5).

    Parameters
    ----------
    sub : networkx.DiGraph or iterable of nodes
        A subgraph satisfying the aggregation condition (use
        :func:`aggregation_subgraph` to get one from any subgraph).
    label : Hashable, optional
        Name of the compound node (default ``tuple(members)``).
    order : sequence of Hashable, optional
        Ordering of all nodes of ``tree`` that fixes the order of the members
        (default :func:`canonical_order`).

    Returns
    -------
    Aggregation
        With ``compound_nodes == (label,)``.
    """
    return aggregate_disjoint(tree, [sub], None if label is None else [label], order)
