"""Subgraphs of a tree: induced and path-induced closures, the partition of Lemma 1, the aggregation
condition and the aggregation subgraph (seed 000, sections 3, 4 and 5.2-5.3).

Conventions (tree digraphs parent -> child, ancestors, the seed's notation) are those of
:mod:`graph.aggregation`, which re-exports every public name of this module.  Every function
takes ``tree``, a :class:`networkx.DiGraph` tree (parent -> child), and ``sub``, the subgraph
``S``: a :class:`networkx.DiGraph` or an iterable of its nodes.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import networkx as nx

from mbcompose.dynamics import topology

from .trees import ancestors_or_self, edge_set, node_set, parent_map, parent_of, tree_root

__all__ = ["induced_subgraph", "is_induced", "path_induced_subgraph", "is_path_induced", "Partition", "partition", "subgraph_parents", "subgraph_children", "satisfies_aggregation_condition", "aggregation_subgraph"]


# ------------------------------------------------------------------- induced closures

def induced_subgraph(tree: nx.DiGraph, sub) -> nx.DiGraph:
    """The induced subgraph ``S_I`` of ``sub`` (seed 000, section 3).

    ``S_I`` has the nodes of ``S`` and every tree edge between two of them.

    Returns
    -------
    networkx.DiGraph
        A copy, with the node and edge attributes of ``tree``.
    """
    return nx.DiGraph(tree.subgraph(node_set(tree, sub)))


def is_induced(tree: nx.DiGraph, sub) -> bool:
    """Whether ``sub`` holds every tree edge between two of its nodes (``S == S_I``)."""
    return edge_set(tree, sub) == frozenset(tree.subgraph(node_set(tree, sub)).edges)


def _path_closure(tree: nx.DiGraph, nodes: frozenset) -> frozenset:
    # a node is on a directed path between two nodes of S iff it has a proper
    # ancestor in S and a proper descendant in S
    below = set()
    for s in nodes:
        for a in ancestors_or_self(tree, s)[1:]:
            if a in below:
                break
            below.add(a)
    out = set(nodes)
    for k in below:
        if k in nodes:
            continue
        if any(a in nodes for a in ancestors_or_self(tree, k)[1:]):
            out.add(k)
    return frozenset(out)


def path_induced_subgraph(tree: nx.DiGraph, sub) -> nx.DiGraph:
    """The path-induced subgraph ``S_P`` of ``sub`` (seed 000, section 3, Fig. 2).

    ``S_P`` is the smallest subgraph containing ``S`` together with every directed
    path of the tree between two of its nodes.  On a tree it is the induced
    subgraph on the nodes of ``S`` and the nodes lying strictly between a node of
    ``S`` and one of its descendants in ``S``.

    Returns
    -------
    networkx.DiGraph
        ``S_P``, generally a forest, with the attributes of ``tree``.
    """
    return nx.DiGraph(tree.subgraph(_path_closure(tree, node_set(tree, sub))))


def is_path_induced(tree: nx.DiGraph, sub) -> bool:
    """Whether ``sub`` equals its path-induced subgraph (``S == S_P``, nodes and edges)."""
    nodes = node_set(tree, sub)
    return _path_closure(tree, nodes) == nodes and is_induced(tree, sub)


# ------------------------------------------------------------------------- Lemma 1

@dataclass(frozen=True)
class Partition:
    """The partition of a tree by a path-induced subgraph (seed 000, Lemma 1, Eq. 22).

    Attributes
    ----------
    S, C, P : frozenset
        Node sets of the subgraph, of the child subgraph (descendants of ``S`` not in
        ``S``) and of the parent subgraph (all other nodes: ancestors of ``S`` outside
        ``S`` and nodes unrelated to every node of ``S``).  Each part is path-induced;
        the subgraphs themselves are the induced subgraphs on these sets.
    B_S : frozenset of (parent, child)
        Connector edges ``S -> C`` (the block ``B_S`` of Eq. 22).
    E_S : frozenset of (parent, child)
        Connector edges ``P -> S`` (the block ``E_S`` of Eq. 22).
    """

    S: frozenset
    C: frozenset
    P: frozenset
    B_S: frozenset
    E_S: frozenset

    def part_of(self, node: Hashable) -> str:
        """``"S"``, ``"C"`` or ``"P"``."""
        return "S" if node in self.S else "C" if node in self.C else "P"


def partition(tree: nx.DiGraph, sub) -> Partition:
    """Partition the nodes of a tree by a path-induced subgraph (seed 000, Lemma 1).

    Parameters
    ----------
    sub : networkx.DiGraph or iterable of nodes
        A path-induced subgraph ``S`` (checked; ``ValueError`` otherwise).

    Returns
    -------
    Partition
        ``S``, ``C``, ``P`` and the connector edges.  There is no edge between ``P``
        and ``C`` and none from ``C`` or ``S`` into ``P`` (the zero blocks of Eq. 22).
    """
    tree_root(tree)
    S = node_set(tree, sub)
    if not is_path_induced(tree, sub):
        raise ValueError("Lemma 1 needs a path-induced subgraph S (S == S_P)")
    C = set()
    for s in S:
        C.update(nx.descendants(tree, s))
    C = frozenset(C - S)
    P = frozenset(tree.nodes) - S - C
    B_S = frozenset((a, b) for a, b in tree.edges if a in S and b in C)
    E_S = frozenset((a, b) for a, b in tree.edges if a in P and b in S)
    return Partition(S=S, C=C, P=P, B_S=B_S, E_S=E_S)


# ------------------------------------------------------- aggregation condition (5.2)

def subgraph_parents(tree: nx.DiGraph, sub) -> frozenset:
    """``p(S)``: the parents of nodes of ``S`` that are not in ``S`` (seed 000, 5.2)."""
    S = node_set(tree, sub)
    return frozenset(p for s in S if (p := parent_of(tree, s)) is not None and p not in S)


def subgraph_children(tree: nx.DiGraph, sub) -> frozenset:
    """``C(S)``: the children of nodes of ``S`` that are not in ``S`` (seed 000, 5.2)."""
    S = node_set(tree, sub)
    return frozenset(c for s in S for c in tree.successors(s) if c not in S)


def satisfies_aggregation_condition(tree: nx.DiGraph, sub) -> bool:
    """The aggregation condition (seed 000, Assumption 1, as made precise above).

    ``S`` is non-empty and induced, and every node of ``S`` enters ``S`` from the same
    node: the first node outside ``S`` above any ``s`` in ``S`` is one and the same node
    ``p`` (then ``p(S) = {p}`` and ``p`` is an ancestor of all of ``S``), or there is
    none for every ``s`` (``S`` is a subtree holding the root, ``p(S)`` empty).  By
    Lemma 5 this holds exactly when aggregating ``S`` leaves a tree.
    """
    root = tree_root(tree)
    S = node_set(tree, sub)
    if not S or not is_induced(tree, sub):
        return False
    return topology.satisfies_aggregation_condition(parent_map(tree), S, root)


def aggregation_subgraph(tree: nx.DiGraph, sub) -> nx.DiGraph:
    """The aggregation subgraph ``S_A`` of ``sub`` (seed 000, section 5.3, Lemma 6).

    The smallest subgraph containing ``S`` that satisfies the aggregation condition:
    with ``l`` the lowest common ancestor of ``S`` and ``U`` the union of the tree paths
    from ``l`` to the nodes of ``S``, ``S_A = U - {l}`` when ``l`` is not in ``S`` and
    ``S_A = U`` when it is (see the module docstring for "minus its root").

    Parameters
    ----------
    sub : networkx.DiGraph or iterable of nodes
        A non-empty subgraph ``S``.

    Returns
    -------
    networkx.DiGraph
        ``S_A`` (induced, path-induced), with the attributes of ``tree``.
    """
    tree_root(tree)
    S = node_set(tree, sub)
    if not S:
        raise ValueError("the aggregation subgraph of an empty subgraph is undefined")
    U = topology.aggregation_set(parent_map(tree), S, tree_root(tree))
    return nx.DiGraph(tree.subgraph(U))
