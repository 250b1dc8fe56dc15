"""Tree topology on parent maps: ancestors, paths, lowest common ancestors, loop sets.

The one home of these walks for every package (``graph``, ``parsers.exporters``,
``composer`` and ``dynamics`` itself).  A tree is given by its parent map
``parent`` -- a sequence (``parent[k]`` for node ``k``, as in
:class:`dynamics.sko.SKOTree`) or a mapping (node -> parent node) -- and the
``root`` that every walk ends at.  For the parent arrays of the dynamics the
root is ground, ``GROUND = -1``, which is not a node of the array; for a
mapping, ``root`` is the one node without an entry.  Nodes are whatever the
map holds (integers, body names).

Loop sets follow seed 000 (Jain, graph transformations I): a chord ``a - b``
closes the loop made of the tree path between ``a`` and ``b``; the nodes of that
path except their lowest common ancestor satisfy the aggregation condition
(Lemma 6.3), and a union of such sets is replaced by its aggregation subgraph
``S_A`` (the tree paths from each member up to the lowest common ancestor ``l``
of the union, ``l`` included only when it is a member).

The spanning tree of a joint graph is :func:`spanning_tree` (breadth first from
the root, with the ordering rules of the input formats).

References
----------
Jain, A., Multibody graph transformations and analysis, Part I (seed 000),
section 5.3 and Lemma 6.3.
"""

from __future__ import annotations

from collections import deque
from typing import Hashable, Iterable, Sequence

__all__ = ["GROUND", "path_to_root", "ancestors", "lowest_common_ancestor", "tree_path",
           "satisfies_aggregation_condition", "aggregation_set", "loop_set", "loop_sets", "spanning_tree"]

#: the root of the parent arrays of the dynamics (ground, not a node of the array).
GROUND = -1


def path_to_root(parent, node, root=GROUND) -> list:
    """``[node, parent(node), ..., root]``: the nodes from ``node`` up to the root, both included."""
    out = [node]
    while node != root:
        node = parent[node]
        out.append(node)
    return out


def ancestors(parent, node, root=GROUND) -> list:
    """Strict ancestors of ``node``, nearest first, the root left out."""
    return path_to_root(parent, node, root)[1:-1]


def lowest_common_ancestor(parent, nodes: Iterable[Hashable], root=GROUND):
    """The deepest node that is an ancestor-or-self of every node of ``nodes`` (the root if no other).

    Raises ``ValueError`` for an empty set.
    """
    nodes = list(nodes)
    if not nodes:
        raise ValueError("the lowest common ancestor of an empty set is undefined")
    chain = path_to_root(parent, nodes[0], root)
    depth_of = {n: i for i, n in enumerate(chain)}
    best = 0
    for k in nodes[1:]:
        while k not in depth_of:
            k = parent[k]
        best = max(best, depth_of[k])
    return chain[best]


def tree_path(parent, u, v, root=GROUND) -> list:
    """The nodes of the tree path ``u ... lca(u, v) ... v``, in that order (the root where passed)."""
    lca = lowest_common_ancestor(parent, (u, v), root)
    up = path_to_root(parent, u, root)
    down = path_to_root(parent, v, root)
    return up[:up.index(lca) + 1] + down[:down.index(lca)][::-1]


def satisfies_aggregation_condition(parent, S, root=GROUND) -> bool:
    """The aggregation condition (seed 000, Assumption 1; Lemma 5: aggregating ``S`` leaves a tree).

    ``S`` is non-empty and every member enters ``S`` from the same node: the first node outside ``S``
    above every ``s`` in ``S`` is one and the same (``p(S) = {p}``), or there is none for every ``s``
    (``S`` holds the root: ``p(S)`` empty).  ``parent``: a parent map with ``root`` its root.
    """
    S = set(S)
    entries = set()
    for s in S:
        p = s
        while p in S and p != root:
            p = parent[p]
        entries.add(None if p in S else p)
    return len(entries) == 1


def aggregation_set(parent, nodes: Iterable[Hashable], root=GROUND) -> frozenset:
    """The node set of the aggregation subgraph ``S_A`` of ``nodes`` (seed 000 Lemma 6.3).

    The union of the tree paths from each node up to their lowest common
    ancestor ``l``; ``l`` itself belongs to it only when it is one of ``nodes``.
    """
    nodes = frozenset(nodes)
    lca = lowest_common_ancestor(parent, nodes, root)
    out = set()
    for s in nodes:  # s's path up to lca; it joins the path of an earlier node at a node already in out
        while s != lca and s not in out:
            out.add(s)
            s = parent[s]
    if lca in nodes:
        out.add(lca)
    return frozenset(out)


def loop_set(parent, a, b, root=GROUND) -> frozenset:
    """The nodes of the loop closed by a chord ``a - b`` that move relative to its base:
    the tree path from ``a`` to ``b`` without their lowest common ancestor (seed 000 Lemma 6.3)."""
    lca = lowest_common_ancestor(parent, (a, b), root)
    return frozenset(tree_path(parent, a, b, root)) - {lca}


def loop_sets(parent, chords: Iterable[tuple[Hashable, Hashable]], root=GROUND,
              couplings: Iterable[Iterable[Hashable]] = ()) -> list[frozenset]:
    """Disjoint compound-node sets for the loops of ``chords`` (pairs of nodes; seed 000 5.3)
    and for ``couplings`` (groups of nodes whose joint coordinates are coupled).

    Starts from :func:`loop_set` of every chord and the :func:`aggregation_set` of every
    coupled group (every node included: their joints' coordinates are constrained), and replaces two sets that share a
    node by the :func:`aggregation_set` of their union (which satisfies the
    aggregation condition where a bare union need not), until the sets are
    pairwise disjoint.

    Returns
    -------
    list of frozenset, in the order of the first chord (then coupling) each contains.
    """
    sets = [loop_set(parent, a, b, root) for a, b in chords]
    sets += [aggregation_set(parent, set(nodes), root) for nodes in couplings]
    i = 0
    while i < len(sets):
        j = next((j for j in range(i + 1, len(sets)) if sets[i] & sets[j]), None)
        if j is None:
            i += 1
            continue
        sets[i] = aggregation_set(parent, sets[i] | sets[j], root)
        del sets[j]
        i = 0
    return sets


def spanning_tree(nodes: Sequence[Hashable], edges: Sequence[tuple[Hashable, Hashable, bool]], root
                  ) -> tuple[list[tuple[int, Hashable, Hashable]], list[int], list[Hashable]]:
    """Breadth-first spanning tree of a graph with ordered, directed edges, grown from ``root``.

    Parameters
    ----------
    nodes : the nodes other than the root.
    edges : ``(tail, head, deferred)`` per edge, in input order; a ``deferred`` edge
        (a declared loop closure) joins the tree only to reach a node no other edge
        reaches.  At each node, edges met from their tail come before edges met from
        their head, then input order.

    Returns
    -------
    tree : ``(edge index, parent node, child node)``, parents before children.
    chords : indices of the edges outside the tree, increasing.
    unreached : nodes no chain of edges connects to the root, in input order.

    Raises ``KeyError`` naming the index of an edge with an unknown end.
    """
    out_of: dict = {root: [], **{n: [] for n in nodes}}  # node -> edges with it as tail, input order
    into: dict = {root: [], **{n: [] for n in nodes}}  # node -> edges with it as head
    for i, (tail, head, _) in enumerate(edges):
        if tail not in out_of or head not in out_of:
            raise KeyError(i, tail if tail not in out_of else head)
        out_of[tail].append(i)
        into[head].append(i)
    reached, used, tree = {root}, set(), []
    # the second pass, deferred edges allowed, changes nothing when there are none
    for allow_deferred in (False, True) if any(deferred for _, _, deferred in edges) else (False,):
        queue = deque([root, *(child for _, _, child in tree)])
        while queue:
            node = queue.popleft()
            for i in out_of[node] + into[node]:  # met from their tail first (a self-loop never joins)
                tail, head, deferred = edges[i]
                other = head if tail == node else tail
                if other in reached or i in used or (deferred and not allow_deferred):
                    continue
                used.add(i)
                reached.add(other)
                tree.append((i, node, other))
                queue.append(other)
    chords = [i for i in range(len(edges)) if i not in used]
    return tree, chords, [n for n in nodes if n not in reached]
