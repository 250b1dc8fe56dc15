"""Partitioning and aggregation of tree digraphs (seed 000, sections 3 and 5).

Jain, *Multibody graph transformations and analysis, Part I: tree topology
systems* (seed ``000_a20564953ff4dafd.txt``).  This module is the pure graph side:
subgraph closures, the partition of a tree by a path-induced subgraph, the
aggregation condition, the aggregation subgraph and node contraction.  The block
(operator) structure built on top of it lives in :mod:`graph.aggregation_blocks`,
serial-chain segments in :mod:`graph.segments`.

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
  ``A``, Eq. 24) is the operator side, see :mod:`graph.aggregation_blocks`.
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

import logging
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from mbcompose.dynamics import topology

logger = logging.getLogger(__name__)

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
    "tree_path",
    "tree_root",
]


# ----------------------------------------------------------------------------- basics

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
    tree : networkx.DiGraph
        A tree (parent -> child).
    nodes : iterable of Hashable
        Non-empty set of nodes of ``tree``.
    """
    return topology.lowest_common_ancestor(parent_map(tree), nodes, _root(tree))


def tree_path(tree: nx.DiGraph, u: Hashable, v: Hashable) -> list:
    """The nodes of the (undirected) tree path ``u ... lca(u, v) ... v``, in that order
    (:func:`dynamics.topology.tree_path`)."""
    return topology.tree_path(parent_map(tree), u, v, _root(tree))


def canonical_order(tree: nx.DiGraph) -> list:
    """A strictly canonical ordering of the nodes: every child before its parent.

    The seed's canonical numbering (seed 000 section 2.1, seed 003 section 2) has
    ``index(parent(k)) > index(k)``; it makes ``E_A`` strictly block lower triangular
    and ``A`` block lower triangular.  The order returned is the reverse of a
    depth-first preorder from the root (children visited in ``tree.successors``
    order), so it is also *strictly* canonical: the nodes of each serial-chain
    segment are consecutive (tip first, base last).

    Parameters
    ----------
    tree : networkx.DiGraph
        A tree (parent -> child).

    Returns
    -------
    list
        All nodes, leaves first, root last.
    """
    root = tree_root(tree)
    return list(nx.dfs_preorder_nodes(tree, root))[::-1]


def _node_set(tree: nx.DiGraph, sub) -> frozenset:
    nodes = frozenset(sub.nodes if isinstance(sub, nx.Graph) else sub)
    missing = [n for n in nodes if n not in tree]
    if missing:
        raise ValueError(f"nodes not in the tree: {missing!r}")
    return nodes


def _edge_set(tree: nx.DiGraph, sub) -> frozenset:
    if isinstance(sub, nx.Graph):
        edges = frozenset(sub.edges)
        bad = [e for e in edges if not tree.has_edge(*e)]
        if bad:
            raise ValueError(f"edges not in the tree (parent -> child): {bad!r}")
        return edges
    return frozenset(tree.subgraph(_node_set(tree, sub)).edges)


# ------------------------------------------------------------------- induced closures

def induced_subgraph(tree: nx.DiGraph, sub) -> nx.DiGraph:
    """The induced subgraph ``S_I`` of ``sub`` (seed 000, section 3).

    ``S_I`` has the nodes of ``S`` and every tree edge between two of them.

    Parameters
    ----------
    tree : networkx.DiGraph
        A tree (parent -> child).
    sub : networkx.DiGraph or iterable of nodes
        The subgraph ``S``.

    Returns
    -------
    networkx.DiGraph
        A copy, with the node and edge attributes of ``tree``.
    """
    return nx.DiGraph(tree.subgraph(_node_set(tree, sub)))


def is_induced(tree: nx.DiGraph, sub) -> bool:
    """Whether ``sub`` holds every tree edge between two of its nodes (``S == S_I``)."""
    return _edge_set(tree, sub) == frozenset(tree.subgraph(_node_set(tree, sub)).edges)


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

    Parameters
    ----------
    tree : networkx.DiGraph
        A tree (parent -> child).
    sub : networkx.DiGraph or iterable of nodes
        The subgraph ``S``.

    Returns
    -------
    networkx.DiGraph
        ``S_P``, generally a forest, with the attributes of ``tree``.
    """
    return nx.DiGraph(tree.subgraph(_path_closure(tree, _node_set(tree, sub))))


def is_path_induced(tree: nx.DiGraph, sub) -> bool:
    """Whether ``sub`` equals its path-induced subgraph (``S == S_P``, nodes and edges)."""
    nodes = _node_set(tree, sub)
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
    tree : networkx.DiGraph
        A tree (parent -> child).
    sub : networkx.DiGraph or iterable of nodes
        A path-induced subgraph ``S`` (checked; ``ValueError`` otherwise).

    Returns
    -------
    Partition
        ``S``, ``C``, ``P`` and the connector edges.  There is no edge between ``P``
        and ``C`` and none from ``C`` or ``S`` into ``P`` (the zero blocks of Eq. 22).
    """
    tree_root(tree)
    S = _node_set(tree, sub)
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
    S = _node_set(tree, sub)
    return frozenset(p for s in S if (p := parent_of(tree, s)) is not None and p not in S)


def subgraph_children(tree: nx.DiGraph, sub) -> frozenset:
    """``C(S)``: the children of nodes of ``S`` that are not in ``S`` (seed 000, 5.2)."""
    S = _node_set(tree, sub)
    return frozenset(c for s in S for c in tree.successors(s) if c not in S)


def _entries(tree: nx.DiGraph, S: frozenset) -> set:
    # the first node outside S above each node of S (None: above the root)
    out = set()
    for s in S:
        a = parent_of(tree, s)
        while a is not None and a in S:
            a = parent_of(tree, a)
        out.add(a)
    return out


def satisfies_aggregation_condition(tree: nx.DiGraph, sub) -> bool:
    """The aggregation condition (seed 000, Assumption 1, as made precise above).

    ``S`` is non-empty and induced, and every node of ``S`` enters ``S`` from the same
    node: the first node outside ``S`` above any ``s`` in ``S`` is one and the same node
    ``p`` (then ``p(S) = {p}`` and ``p`` is an ancestor of all of ``S``), or there is
    none for every ``s`` (``S`` is a subtree holding the root, ``p(S)`` empty).  By
    Lemma 5 this holds exactly when aggregating ``S`` leaves a tree.

    Parameters
    ----------
    tree : networkx.DiGraph
        A tree (parent -> child).
    sub : networkx.DiGraph or iterable of nodes
        The subgraph ``S``.
    """
    tree_root(tree)
    S = _node_set(tree, sub)
    if not S or not is_induced(tree, sub):
        return False
    return len(_entries(tree, S)) == 1


def aggregation_subgraph(tree: nx.DiGraph, sub) -> nx.DiGraph:
    """The aggregation subgraph ``S_A`` of ``sub`` (seed 000, section 5.3, Lemma 6).

    The smallest subgraph containing ``S`` that satisfies the aggregation condition:
    with ``l`` the lowest common ancestor of ``S`` and ``U`` the union of the tree paths
    from ``l`` to the nodes of ``S``, ``S_A = U - {l}`` when ``l`` is not in ``S`` and
    ``S_A = U`` when it is (see the module docstring for "minus its root").

    Parameters
    ----------
    tree : networkx.DiGraph
        A tree (parent -> child).
    sub : networkx.DiGraph or iterable of nodes
        A non-empty subgraph ``S``.

    Returns
    -------
    networkx.DiGraph
        ``S_A`` (induced, path-induced), with the attributes of ``tree``.
    """
    tree_root(tree)
    S = _node_set(tree, sub)
    if not S:
        raise ValueError("the aggregation subgraph of an empty subgraph is undefined")
    U = topology.aggregation_set(parent_map(tree), S, _root(tree))
    return nx.DiGraph(tree.subgraph(U))


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
    S = _node_set(tree, sub)
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
    tree : networkx.DiGraph
        A tree (parent -> child).
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
    sets = [_node_set(tree, s) for s in subs]
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
    tree : networkx.DiGraph
        A tree (parent -> child).
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
    return topology.loop_set(parent_map(tree), u, v, _root(tree))


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
    return topology.loop_sets(parent_map(tree), chords, _root(tree))
