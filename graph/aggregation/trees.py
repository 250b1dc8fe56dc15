"""Tree digraphs in networkx: root, parents, ancestry, paths, canonical order (seed 000, section 2).

The walks on parent maps are :mod:`dynamics.topology`'s (the one home of tree
topology); this module reads a :class:`networkx.DiGraph` arborescence into them.
Conventions (tree digraphs parent -> child, ancestors, the seed's notation) are those of
:mod:`graph.aggregation`, which re-exports every public name of this module.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import networkx as nx

from mbcompose.dynamics import topology

__all__ = ["tree_root", "parent_of", "parent_map", "ancestors_or_self", "lowest_common_ancestor", "canonical_order", "node_set", "edge_set"]


def tree_root(tree: nx.DiGraph) -> Hashable:
    """The root of a tree digraph; raises ``ValueError`` if ``tree`` is not one.

    Parameters
    ----------
    tree : networkx.DiGraph
        Must be an arborescence (edges parent -> child).

    Returns
    -------
    Hashable
        The unique node without parent.
    """
    if not isinstance(tree, nx.DiGraph) or tree.is_multigraph():
        raise ValueError("a tree must be a networkx.DiGraph (not a multigraph)")
    if tree.number_of_nodes() == 0 or not nx.is_arborescence(tree):
        raise ValueError("the digraph is not a tree (an arborescence with edges parent -> child)")
    return next(n for n, d in tree.in_degree() if d == 0)


def parent_of(tree: nx.DiGraph, node: Hashable) -> Hashable | None:
    """The parent of ``node`` (seed: ``p(k)``), or ``None`` for the root."""
    preds = list(tree.predecessors(node))
    return preds[0] if preds else None


def parent_map(tree: nx.DiGraph) -> dict:
    """``{child: parent}`` of a tree digraph (the root has no entry), for :mod:`dynamics.topology`."""
    return {v: u for u, v in tree.edges}


def _root(tree: nx.DiGraph) -> Hashable:
    return next(n for n, d in tree.in_degree() if d == 0)


def ancestors_or_self(tree: nx.DiGraph, node: Hashable) -> list:
    """``[node, parent(node), ..., root]``: the path from ``node`` up to the root
    (:func:`dynamics.topology.path_to_root`)."""
    return topology.path_to_root(parent_map(tree), node, _root(tree))


def lowest_common_ancestor(tree: nx.DiGraph, nodes: Iterable[Hashable]) -> Hashable:
    """The deepest node that is an ancestor-or-self of every node in ``nodes``
    (:func:`dynamics.topology.lowest_common_ancestor`).

    Parameters
    ----------
    nodes : iterable of Hashable
        Non-empty set of nodes of ``tree``.
    """
    return topology.lowest_common_ancestor(parent_map(tree), nodes, _root(tree))


def canonical_order(tree: nx.DiGraph) -> list:
    """A strictly canonical ordering of the nodes: every child before its parent.

    The seed's canonical numbering (seed 000 section 2.1, seed 003 section 2) has
    ``index(parent(k)) > index(k)``; it makes ``E_A`` strictly block lower triangular
    and ``A`` block lower triangular.  The order returned is the reverse of a
    depth-first preorder from the root (children visited in ``tree.successors``
    order), so it is also *strictly* canonical: the nodes of each serial-chain
    segment are consecutive (tip first, base last).

    Returns
    -------
    list
        All nodes, leaves first, root last.
    """
    root = tree_root(tree)
    return list(nx.dfs_preorder_nodes(tree, root))[::-1]


def node_set(tree: nx.DiGraph, sub) -> frozenset:
    nodes = frozenset(sub.nodes if isinstance(sub, nx.Graph) else sub)
    missing = [n for n in nodes if n not in tree]
    if missing:
        raise ValueError(f"nodes not in the tree: {missing!r}")
    return nodes


def edge_set(tree: nx.DiGraph, sub) -> frozenset:
    if isinstance(sub, nx.Graph):
        edges = frozenset(sub.edges)
        bad = [e for e in edges if not tree.has_edge(*e)]
        if bad:
            raise ValueError(f"edges not in the tree (parent -> child): {bad!r}")
        return edges
    return frozenset(tree.subgraph(node_set(tree, sub)).edges)
