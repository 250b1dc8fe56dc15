"""Block structure of E_A, A, the mass matrix and the aggregated operators.

Seed 000, Eqs. 9, 20, 22-24 (Lemma 2), 31 (Lemma 7), 35 (Lemma 8), 37
(Lemma 9) and Corollary 6.1, on seeded random trees with random weight blocks of
non-uniform sizes.  References: dense numerical inverses (numpy.linalg.inv) of
operators assembled here directly from the tree edges, ancestry from
``nx.descendants``, the aggregated tree from ``nx.quotient_graph``.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from mbcompose.graph.aggregation import (
    aggregate,
    aggregation_subgraph,
    canonical_order,
    partition,
    path_induced_subgraph,
)
from mbcompose.graph.aggregation.transforms import (aggregated_sko, aggregation_transform, aggregation_transform_inverse)
from mbcompose.graph.aggregation.blocks import (aggregated_sko_pattern, aggregated_spo_pattern, block_slices, compound_dims, expand_pattern, mass_matrix_pattern, permutation_matrix, selection_matrix, sko_pattern, spo_pattern, transform_inverse_pattern, transform_pattern)
from random_trees import random_tree

TOL = 1e-10


def cases(seed, count, n_max=12):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        t = random_tree(rng, int(rng.integers(1, n_max + 1)))
        dims = {k: int(rng.integers(1, 4)) for k in t.nodes}
        yield rng, t, dims


def my_slices(order, dims):
    out, start = {}, 0
    for k in order:
        out[k] = slice(start, start + dims[k])
        start += dims[k]
    return out, start


def build_E(rng, tree, order, dims):
    """E_A = sum_k e_p(k) w(p(k), k) e_k^* (Eq. 9) with random weight blocks."""
    sl, N = my_slices(order, dims)
    E = np.zeros((N, N))
    for a, b in tree.edges:
        E[sl[a], sl[b]] = 0.5 * rng.normal(size=(dims[a], dims[b]))
    return E


def blocks_nonzero(X, rows, cols, dims_r, dims_c=None):
    dims_c = dims_r if dims_c is None else dims_c
    sr, _ = my_slices(rows, dims_r)
    sc, _ = my_slices(cols, dims_c)
    tol = TOL * max(1.0, np.abs(X).max(initial=0.0))
    return np.array([[np.abs(X[sr[a], sc[b]]).max(initial=0.0) > tol for b in cols] for a in rows])


def ancestor_or_self(tree, order):
    return np.array([[a == b or b in nx.descendants(tree, a) for b in order] for a in order])


def shuffled(rng, tree):
    order = list(tree.nodes)
    rng.shuffle(order)
    return order


# ----------------------------------------------------------------------- tree

def test_nonzero_blocks_of_A_are_the_ancestor_relation_in_any_order():
    for rng, t, dims in cases(20, 200):
        for order in (canonical_order(t), shuffled(rng, t)):
            E = build_E(rng, t, order, dims)
            A = np.linalg.inv(np.eye(E.shape[0]) - E)
            ref = ancestor_or_self(t, order)
            assert np.array_equal(blocks_nonzero(A, order, order, dims), ref)
            assert np.array_equal(spo_pattern(t, order), ref)
            parent = np.array([[t.has_edge(a, b) for b in order] for a in order])
            assert np.array_equal(blocks_nonzero(E, order, order, dims), parent)
            assert np.array_equal(sko_pattern(t, order), parent)
        # canonical numbering: E_A strictly lower, A lower triangular (seed 003 Remark 4.2)
        order = canonical_order(t)
        E = build_E(rng, t, order, dims)
        assert np.allclose(np.triu(E), 0.0)
        assert np.allclose(np.triu(np.linalg.inv(np.eye(E.shape[0]) - E), 1), 0.0)


def test_mass_matrix_blocks_vanish_exactly_for_unrelated_nodes():
    for rng, t, dims in cases(21, 150):
        order = shuffled(rng, t)
        E = build_E(rng, t, order, dims)
        A = np.linalg.inv(np.eye(E.shape[0]) - E)
        sl, N = my_slices(order, dims)
        jd = {k: int(rng.integers(1, dims[k] + 1)) for k in order}
        jsl, Nj = my_slices(order, jd)
        H = np.zeros((Nj, N))
        Mb = np.zeros((N, N))
        for k in order:
            H[jsl[k], sl[k]] = rng.normal(size=(jd[k], dims[k]))
            X = rng.normal(size=(dims[k], dims[k]))
            Mb[sl[k], sl[k]] = X @ X.T + np.eye(dims[k])
        M = H @ A @ Mb @ A.T @ H.T
        ref = np.array([[a == b or b in nx.descendants(t, a) or a in nx.descendants(t, b) for b in order]
                        for a in order])
        assert np.array_equal(blocks_nonzero(M, order, order, jd), ref)
        assert np.array_equal(mass_matrix_pattern(t, order), ref)


def test_lemma2_partitioned_structure_of_E_A_and_A():
    for rng, t, dims in cases(22, 150):
        nodes = list(t.nodes)
        pick = [nodes[i] for i in rng.choice(len(nodes), size=int(rng.integers(1, len(nodes) + 1)), replace=False)]
        S = frozenset(path_induced_subgraph(t, pick).nodes)
        part = partition(t, S)
        canon = canonical_order(t)
        order = [k for k in canon if k in part.C] + [k for k in canon if k in S] + [k for k in canon if k in part.P]
        E = build_E(rng, t, order, dims)
        A = np.linalg.inv(np.eye(E.shape[0]) - E)
        sl, N = my_slices(order, dims)

        def idx(X):
            return np.array([i for k in order if k in X for i in range(sl[k].start, sl[k].stop)], dtype=int)

        c, s, p = idx(part.C), idx(S), idx(part.P)

        def blk(X, r, q):
            return X[np.ix_(r, q)]

        # Eq. 22: zero blocks
        for r, q in ((c, s), (c, p), (s, p), (p, c)):
            assert np.allclose(blk(E, r, q), 0.0)
        inv = np.linalg.inv
        A_C, A_S, A_P = (inv(np.eye(len(x)) - blk(E, x, x)) for x in (c, s, p))
        B_S, E_S = blk(E, s, c), blk(E, p, s)
        # Eq. 24
        assert np.allclose(blk(A, c, c), A_C) and np.allclose(blk(A, s, s), A_S) and np.allclose(blk(A, p, p), A_P)
        assert np.allclose(blk(A, s, c), A_S @ B_S @ A_C)
        assert np.allclose(blk(A, p, s), A_P @ E_S @ A_S)
        assert np.allclose(blk(A, p, c), A_P @ E_S @ A_S @ B_S @ A_C)
        for r, q in ((c, s), (c, p), (s, p)):
            assert np.allclose(blk(A, r, q), 0.0)


# ------------------------------------------------------------------ aggregation

def _aggregation_case(rng, t):
    nodes = list(t.nodes)
    k = int(rng.integers(1, min(4, len(nodes)) + 1))
    S = frozenset(nodes[i] for i in rng.choice(len(nodes), size=k, replace=False))
    return frozenset(aggregation_subgraph(t, S).nodes)


def _quotient(t, S):
    part = [S] + [frozenset([k]) for k in t.nodes if k not in S]
    q = nx.quotient_graph(t, part)
    return nx.relabel_nodes(q, {b: ("AGG" if b == S else next(iter(b))) for b in q.nodes})


def test_lemmas7_8_aggregated_sko_and_spo_and_their_patterns():
    for rng, t, dims in cases(23, 200):
        S = _aggregation_case(rng, t)
        order = shuffled(rng, t)
        E = build_E(rng, t, order, dims)
        N = E.shape[0]
        A = np.linalg.inv(np.eye(N) - E)
        T = aggregation_transform(E, order, dims, S)
        sl, _ = my_slices(order, dims)
        s = np.array([i for k in order if k in S for i in range(sl[k].start, sl[k].stop)], dtype=int)
        o = np.setdiff1d(np.arange(N), s)
        # T_a = diag(I, A_S^-1, I), with A_S the (S, S) block of A (Lemma 2)
        assert np.allclose(T[np.ix_(s, s)], np.linalg.inv(A[np.ix_(s, s)]))
        assert np.allclose(T[np.ix_(o, o)], np.eye(len(o))) and np.allclose(T[np.ix_(s, o)], 0.0)
        assert np.allclose(T[np.ix_(o, s)], 0.0)
        Tinv = aggregation_transform_inverse(E, order, dims, S)
        assert np.allclose(Tinv @ T, np.eye(N))
        Ea = aggregated_sko(E, order, dims, S)
        Aa = T @ A
        # Lemma 8: A_a = T_a A is the 1-resolvent of E_A_a, and E_A_a = I - (I - E_A) T_a^-1
        assert np.allclose(np.linalg.inv(np.eye(N) - Ea), Aa)
        assert np.allclose(Ea, np.eye(N) - (np.eye(N) - E) @ np.linalg.inv(T))
        # original-node patterns
        assert np.array_equal(blocks_nonzero(Ea, order, order, dims), aggregated_sko_pattern(t, S, order))
        assert np.array_equal(blocks_nonzero(Aa, order, order, dims), aggregated_spo_pattern(t, S, order))
        assert np.array_equal(blocks_nonzero(T, order, order, dims), transform_pattern(t, S, order))
        assert np.array_equal(blocks_nonzero(np.linalg.inv(T), order, order, dims),
                              transform_inverse_pattern(t, S, order))
        # Lemma 7: grouped by compound node, E_A_a is a BWA matrix of the aggregated tree
        agg = aggregate(t, S, label="AGG")
        q = _quotient(t, S)
        assert set(agg.tree.edges) == set(q.edges)
        a_order = canonical_order(agg.tree)
        stack = agg.stack_order(a_order)
        Pi = permutation_matrix(order, stack, dims)
        Ea_s, Aa_s = Pi @ Ea @ Pi.T, Pi @ Aa @ Pi.T
        cd = compound_dims(agg, dims)
        assert cd["AGG"] == sum(dims[k] for k in S)
        assert np.array_equal(blocks_nonzero(Ea_s, a_order, a_order, cd),
                              np.array([[q.has_edge(a, b) for b in a_order] for a in a_order]))
        assert np.array_equal(blocks_nonzero(Aa_s, a_order, a_order, cd), ancestor_or_self(q, a_order))
        assert np.allclose(np.triu(Ea_s), 0.0)  # canonical for the aggregated tree


def test_lemma9_and_corollary61_joint_map_is_block_diagonal_and_mass_matrix_unchanged():
    for rng, t, dims in cases(24, 150):
        S = _aggregation_case(rng, t)
        order = shuffled(rng, t)
        E = build_E(rng, t, order, dims)
        N = E.shape[0]
        A = np.linalg.inv(np.eye(N) - E)
        sl, _ = my_slices(order, dims)
        jd = {k: int(rng.integers(1, dims[k] + 1)) for k in order}
        jsl, Nj = my_slices(order, jd)
        H = np.zeros((Nj, N))
        Mb = np.zeros((N, N))
        for k in order:
            H[jsl[k], sl[k]] = rng.normal(size=(jd[k], dims[k]))
            X = rng.normal(size=(dims[k], dims[k]))
            Mb[sl[k], sl[k]] = X @ X.T + np.eye(dims[k])
        T = aggregation_transform(E, order, dims, S)
        Ha = H @ np.linalg.inv(T)
        Aa = T @ A
        assert np.allclose(H @ A @ Mb @ A.T @ H.T, Ha @ Aa @ Mb @ Aa.T @ Ha.T)
        agg = aggregate(t, S, label="AGG")
        a_order = canonical_order(agg.tree)
        stack = agg.stack_order(a_order)
        Ha_s = permutation_matrix(order, stack, jd) @ Ha @ permutation_matrix(order, stack, dims).T
        nz = blocks_nonzero(Ha_s, a_order, a_order, compound_dims(agg, jd), compound_dims(agg, dims))
        assert np.array_equal(nz, np.eye(len(a_order), dtype=bool))


# --------------------------------------------------------------------- helpers

def test_permutation_and_selection_matrices_move_and_keep_whole_blocks():
    for rng, t, dims in cases(25, 50):
        a, b = shuffled(rng, t), shuffled(rng, t)
        Pi = permutation_matrix(a, b, dims)
        x = rng.normal(size=Pi.shape[1])
        sa, sb = my_slices(a, dims)[0], my_slices(b, dims)[0]
        y = Pi @ x
        assert all(np.array_equal(y[sb[k]], x[sa[k]]) for k in a)
        assert np.allclose(Pi @ Pi.T, np.eye(len(x)))
        assert block_slices(a, dims) == sa
        keep = {k for k in a if rng.random() < 0.5}
        z = selection_matrix(a, dims, keep) @ x
        assert all(np.array_equal(z[sa[k]], x[sa[k]] if k in keep else 0 * x[sa[k]]) for k in a)


def test_expand_pattern_matches_kron_for_uniform_blocks_and_fills_blocks_otherwise():
    rng = np.random.default_rng(26)
    P = rng.random((5, 5)) < 0.4
    assert np.array_equal(expand_pattern(P, [6] * 5), np.kron(P, np.ones((6, 6))).astype(bool))
    sizes = [1, 3, 2, 1, 4]
    X = expand_pattern(P, sizes)
    order = list(range(5))
    assert np.array_equal(blocks_nonzero(X.astype(float), order, order, dict(enumerate(sizes))), P)
