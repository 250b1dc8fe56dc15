"""Block structure of the SKO/SPO operators of a tree and of an aggregated tree.

Seed 000 (Jain, *Multibody graph transformations and analysis, Part I*), sections
2, 4, 6, 7; seed 003 (Jain, *Graph theoretic foundations, Part I*) for BWA
matrices.  This is the graph-side input of the dynamics of aggregated trees
(Lemmas 7-9, Corollary 6.1): which blocks of ``E_A``, ``A = (I - E_A)^-1``, of the
mass matrix, of the aggregated ``E_A_a``, ``A_a`` and of the transform ``T_a`` are
non-zero, plus the few dense matrices (selection, permutation, ``T_a``) that the
dynamics code needs to build ``E_A_a = I - (I - E_A) T_a^-1``, ``A_a = T_a A`` and
``H_a = H T_a^-1``.

Conventions
-----------
* Trees are :class:`networkx.DiGraph` arborescences with edges parent -> child
  (see :mod:`graph.aggregation`).
* ``order`` is a sequence listing every node once: block row/column ``i`` belongs
  to node ``order[i]``.  Default :func:`graph.aggregation.canonical_order`
  (children before parents, the seed's canonical numbering, which makes ``E_A``
  strictly block lower triangular and ``A`` block lower triangular).
* ``dims`` (the weight dimensions ``m_k``, seed 000 footnote 2) is an ``int`` (the
  same for all nodes, 6 for rigid bodies) or a mapping node -> int.  Scalar
  matrices are ``(N, N)`` with ``N = sum_k m_k``, node ``order[i]`` owning the rows
  ``slices[order[i]]``.
* Patterns are node-level ``(n, n)`` boolean arrays, ``True`` for a block that is
  non-zero for generic weights (a structural non-zero).

The operators (seed 000, Eqs. 9, 22-24, 29-37)
-----------------------------------------------
* ``E_A = sum_k e_{p(k)} A(p(k), k) e_k^*`` (Eq. 9): block ``(p(k), k)`` for every
  edge, i.e. block ``(i, j)`` is non-zero iff ``i`` is the parent of ``j``.
* ``A = (I - E_A)^-1 = I + E_A + E_A^2 + ...`` (nilpotent; seed 003 Lemma 4):
  block ``(i, j)`` is non-zero iff ``i`` is ``j`` or an ancestor of ``j``.
* Mass matrix ``H A M A^* H^*`` (Eq. 20, seed 000 Fig. 7): block ``(i, j)`` (joint
  blocks of nodes ``i``, ``j``) non-zero iff ``i`` and ``j`` are related or equal.
* Aggregation of ``S`` (satisfying the aggregation condition, entry node ``j``)
  with the partition ``C, S, P`` of Lemma 1:

  - ``T_a = diag(I, A_S^-1, I)`` (Eq. 35) in the block order ``(C, S, P)``.  Since
    ``A_S^-1 = I - E_A_S`` and ``E_A_S`` is the ``(S, S)`` block of ``E_A``, in *any*
    node order ``T_a = I - Sigma_S E_A Sigma_S`` and
    ``T_a^-1 = (I - Sigma_S) + Sigma_S A Sigma_S``, where ``Sigma_S`` is the diagonal
    0/1 selection matrix of the blocks of ``S`` (:func:`selection_matrix`).  ``T_a``
    is therefore not a permutation: it is the identity outside ``S`` and
    ``I - E_A_S`` on the ``S`` block.  Its pattern: the diagonal plus the edges inside
    ``S``; the pattern of ``T_a^-1``: the diagonal plus the ancestor relation inside
    ``S``.
  - ``E_A_a`` (Eq. 31) is ``E_A`` with the ``(S, S)`` block removed and the ``(P, S)``
    connector ``E_S`` replaced by ``E_S A_S``, whose only non-zero row is the entry
    node ``j`` and whose row is full (Eq. 34 and footnote 6).  Equivalently
    ``E_A_a = I - (I - E_A) T_a^-1``.
  - ``A_a = T_a A`` (Eq. 35): like ``A``, except that inside ``S`` only the diagonal
    survives (the ``I`` block) and in the rows of ``S`` against ``C`` (block
    ``B_S A_C``) only the *nearest* ancestor in ``S`` of a node of ``C`` is non-zero.
  - ``H_a = H T_a^-1`` (Eq. 37); block diagonal for the aggregated tree.

  To use the aggregated tree's SKO model, stack the original nodes as
  :meth:`graph.aggregation.Aggregation.stack_order` lists them (each compound node's
  members consecutive, the compound node of dimension ``m_S = sum m_k``, Eq. 29)
  and move between the two stackings with :func:`permutation_matrix`:
  ``x_stack = Pi x``, ``X_stack = Pi X Pi^T``.

Example
-------
From a tree ``t`` (stacked in ``order``, weight dimensions ``dims``, SKO operator
``E_A``) to the operators of the aggregated tree, stacked node by node::

    S = loop_aggregation_nodes(t, u, v)                  # graph.aggregation (chord u - v)
    agg = aggregate(t, S)                                # compound node agg.compound_nodes[0]
    T_a = aggregation_transform(E_A, order, dims, S)     # Eq. 35
    E_A_a = aggregated_sko(E_A, order, dims, S)          # Eq. 31
    a_order = canonical_order(agg.tree)
    Pi = permutation_matrix(order, agg.stack_order(a_order), dims)
    E_A_a_stacked = Pi @ E_A_a @ Pi.T                    # blocks: compound_dims(agg, dims)
    # H_a = H T_a^-1 (Eq. 37): permute its rows with the joint dimensions instead

References
----------
Jain, A., Multibody graph transformations and analysis, Part I (seed 000),
Eqs. 9, 22-24, 31-37, 43-45.  Jain, A., Graph theoretic foundations of multibody
dynamics, Part I (seed 003), section 4 (BWA matrices and 1-resolvents).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import networkx as nx
import numpy as np

from mbcompose.graph.aggregation import (Aggregation, canonical_order, parent_of, satisfies_aggregation_condition,
                                         tree_root)
from mbcompose.graph.aggregation.trees import node_set

__all__ = [
    "aggregated_sko_pattern",
    "aggregated_spo_pattern",
    "block_slices",
    "compound_dims",
    "expand_pattern",
    "mass_matrix_pattern",
    "permutation_matrix",
    "selection_matrix",
    "sko_pattern",
    "spo_pattern",
    "transform_inverse_pattern",
    "transform_pattern",
]


# ------------------------------------------------------------------ helpers

def _order(tree: nx.DiGraph, order) -> list:
    tree_root(tree)
    order = canonical_order(tree) if order is None else list(order)
    if len(order) != tree.number_of_nodes() or set(order) != set(tree.nodes):
        raise ValueError("order must list every node of the tree exactly once")
    return order


def _sizes(order: Sequence[Hashable], dims) -> np.ndarray:
    if isinstance(dims, Mapping):
        return np.array([int(dims[n]) for n in order], dtype=int)
    return np.full(len(order), int(dims), dtype=int)


def block_slices(order: Sequence[Hashable], dims: int | Mapping) -> dict:
    """Rows of each node's block in a stacked vector.

    Parameters
    ----------
    order : sequence of Hashable
        Node order of the stacking.
    dims : int or Mapping
        Weight dimension ``m_k`` of each node.

    Returns
    -------
    dict
        node -> ``slice`` into the stacked ``(N,)`` vector, ``N = sum m_k``.
    """
    sizes = _sizes(order, dims)
    ends = np.cumsum(sizes)
    return {n: slice(int(e - s), int(e)) for n, s, e in zip(order, sizes, ends)}


def compound_dims(aggregation: Aggregation, dims: int | Mapping) -> dict:
    """Weight dimension of every node of an aggregated tree (seed 000, Eq. 29).

    Parameters
    ----------
    aggregation : Aggregation
        From :func:`graph.aggregation.aggregate`.
    dims : int or Mapping
        ``m_k`` of the original nodes.

    Returns
    -------
    dict
        aggregated node -> ``m_S = sum_{k in S} m_k``.
    """
    return {a: int(_sizes(mem, dims).sum()) for a, mem in aggregation.members.items()}


def expand_pattern(pattern: np.ndarray, sizes: Sequence[int] | np.ndarray) -> np.ndarray:
    """Expand a node-level ``(n, n)`` pattern to the scalar ``(N, N)`` one.

    Parameters
    ----------
    pattern : (n, n) bool
        Block pattern.
    sizes : (n,) int
        Block sizes, in the order of the pattern's rows (and columns).

    Returns
    -------
    (N, N) bool
        ``N = sum(sizes)``; block ``(i, j)`` is all ``pattern[i, j]``.  This is what
        :func:`matplotlib.pyplot.spy` draws for seed 000, Figs. 6-7.
    """
    sizes = np.asarray(sizes, dtype=int)
    return np.repeat(np.repeat(np.asarray(pattern, dtype=bool), sizes, axis=0), sizes, axis=1)


def selection_matrix(order: Sequence[Hashable], dims: int | Mapping, nodes) -> np.ndarray:
    """``Sigma_S``: the diagonal 0/1 matrix that keeps the blocks of ``nodes``.

    Parameters
    ----------
    order : sequence of Hashable
        Node order of the stacking.
    dims : int or Mapping
        ``m_k``.
    nodes : iterable of Hashable
        The nodes ``S`` whose blocks are kept.

    Returns
    -------
    (N, N) float
    """
    sl = block_slices(order, dims)
    d = np.zeros(sum(s.stop - s.start for s in sl.values()))
    for n in nodes:
        d[sl[n]] = 1.0
    return np.diag(d)


def permutation_matrix(order_from: Sequence[Hashable], order_to: Sequence[Hashable],
                       dims: int | Mapping) -> np.ndarray:
    """Block permutation ``Pi`` with ``x_to = Pi x_from`` for stacked vectors.

    Parameters
    ----------
    order_from, order_to : sequence of Hashable
        Two orderings of the same nodes.
    dims : int or Mapping
        ``m_k`` (blocks move whole).

    Returns
    -------
    (N, N) float
        Orthogonal; a stacked operator transforms as ``X_to = Pi X_from Pi^T``.
    """
    if len(order_from) != len(order_to) or set(order_from) != set(order_to):
        raise ValueError("the two orders must list the same nodes")
    sf, st = block_slices(order_from, dims), block_slices(order_to, dims)
    N = sum(s.stop - s.start for s in sf.values())
    Pi = np.zeros((N, N))
    for n in order_from:
        Pi[st[n], sf[n]] = np.eye(sf[n].stop - sf[n].start)
    return Pi


# ------------------------------------------------------------ tree patterns

def sko_pattern(tree: nx.DiGraph, order: Sequence[Hashable] | None = None) -> np.ndarray:
    """Block pattern of the SKO operator ``E_A`` (seed 000, Eq. 9).

    Returns
    -------
    (n, n) bool
        ``[i, j]`` is ``True`` iff ``order[i]`` is the parent of ``order[j]``.
    """
    order = _order(tree, order)
    idx = {k: i for i, k in enumerate(order)}
    out = np.zeros((len(order),) * 2, dtype=bool)
    for a, b in tree.edges:
        out[idx[a], idx[b]] = True
    return out


def spo_pattern(tree: nx.DiGraph, order: Sequence[Hashable] | None = None) -> np.ndarray:
    """Block pattern of the SPO operator ``A = (I - E_A)^-1`` (seed 003, Lemma 4).

    Returns
    -------
    (n, n) bool
        ``[i, j]`` is ``True`` iff ``order[i]`` is ``order[j]`` or one of its ancestors.
    """
    order = _order(tree, order)
    idx = {k: i for i, k in enumerate(order)}
    out = np.eye(len(order), dtype=bool)
    for k in order:
        p = parent_of(tree, k)
        while p is not None:
            out[idx[p], idx[k]] = True
            p = parent_of(tree, p)
    return out


def mass_matrix_pattern(tree: nx.DiGraph, order: Sequence[Hashable] | None = None) -> np.ndarray:
    """Joint-block pattern of the mass matrix ``H A M A^* H^*`` (seed 000, Fig. 7).

    Returns
    -------
    (n, n) bool
        ``[i, j]`` is ``True`` iff the nodes are equal or related; expand with the
        joint dimensions (:func:`expand_pattern`) for the scalar pattern.
    """
    A = spo_pattern(tree, order)
    return A | A.T


# --------------------------------------------------------- aggregated patterns

def _checked_S(tree: nx.DiGraph, sub) -> frozenset:
    if not satisfies_aggregation_condition(tree, sub):
        raise ValueError("the subgraph does not satisfy the aggregation condition "
                         "(seed 000, Assumption 1)")
    return node_set(tree, sub)


def transform_pattern(tree: nx.DiGraph, sub, order: Sequence[Hashable] | None = None) -> np.ndarray:
    """Block pattern of ``T_a = diag(I, A_S^-1, I)`` (seed 000, Eq. 35).

    Returns
    -------
    (n, n) bool
        The diagonal plus ``(parent, child)`` for the edges inside ``S``
        (``A_S^-1 = I - E_A_S``).
    """
    order = _order(tree, order)
    S = _checked_S(tree, sub)
    mask = np.array([k in S for k in order])
    return np.eye(len(order), dtype=bool) | (sko_pattern(tree, order) & np.outer(mask, mask))


def transform_inverse_pattern(tree: nx.DiGraph, sub, order: Sequence[Hashable] | None = None) -> np.ndarray:
    """Block pattern of ``T_a^-1 = diag(I, A_S, I)``: diagonal plus ancestry inside ``S``."""
    order = _order(tree, order)
    S = _checked_S(tree, sub)
    mask = np.array([k in S for k in order])
    return np.eye(len(order), dtype=bool) | (spo_pattern(tree, order) & np.outer(mask, mask))


def aggregated_sko_pattern(tree: nx.DiGraph, sub, order: Sequence[Hashable] | None = None) -> np.ndarray:
    """Block pattern of ``E_A_a`` (seed 000, Eq. 31) over the *original* nodes.

    Returns
    -------
    (n, n) bool
        The edges of the tree not inside ``S``, except that the connector edges
        ``P -> S`` are replaced by the full row ``(j, s)`` for every ``s`` in ``S``, ``j``
        the entry node of ``S`` (Eq. 34).  Grouping the rows and columns of ``S``
        into one block gives the ``E_A`` pattern of the aggregated tree (Lemma 7).
    """
    order = _order(tree, order)
    S = _checked_S(tree, sub)
    idx = {k: i for i, k in enumerate(order)}
    out = np.zeros((len(order),) * 2, dtype=bool)
    for a, b in tree.edges:
        if b not in S:
            out[idx[a], idx[b]] = True
    entry = {parent_of(tree, s) for s in S} - S
    for j in entry - {None}:
        for s in S:
            out[idx[j], idx[s]] = True
    return out


def aggregated_spo_pattern(tree: nx.DiGraph, sub, order: Sequence[Hashable] | None = None) -> np.ndarray:
    """Block pattern of ``A_a = T_a A`` (seed 000, Eq. 35) over the original nodes.

    Returns
    -------
    (n, n) bool
        As :func:`spo_pattern`, except that inside ``S`` only the diagonal remains,
        and a row ``s`` in ``S`` reaches a node outside ``S`` only when ``s`` is the
        *nearest* ancestor in ``S`` of that node (block ``B_S A_C``).
    """
    order = _order(tree, order)
    S = _checked_S(tree, sub)
    idx = {k: i for i, k in enumerate(order)}
    out = np.eye(len(order), dtype=bool)
    for k in order:
        p = parent_of(tree, k)
        seen_S = False
        while p is not None:
            if p in S:
                if k not in S and not seen_S:
                    out[idx[p], idx[k]] = True
                seen_S = True
            else:
                out[idx[p], idx[k]] = True
            p = parent_of(tree, p)
    return out
