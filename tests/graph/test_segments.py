"""Serial-chain segments (seed 000, section 7, Eqs. 43-45, Figs. 6-7).

References: the segment definition checked node by node with out-degrees, the
segment tree against ``nx.quotient_graph`` / ``nx.is_arborescence``, block
patterns against dense inverses of randomly weighted operators, and the seed's
Fig. 6 example (five segments, Eqs. 43 and 45).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from mbcompose.graph.aggregation import canonical_order
from mbcompose.graph.aggregation.blocks import mass_matrix_pattern, sko_pattern, spo_pattern
from mbcompose.graph.aggregation.segments import (Segment, branching_nodes, leaves, segment_tree, serial_chain_segments)
from random_trees import random_tree


def cases(seed, count=300, n_max=40):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield rng, random_tree(rng, int(rng.integers(1, n_max + 1)))


def test_every_node_is_in_exactly_one_segment_and_each_segment_is_a_maximal_directed_path():
    for _, t in cases(30):
        segs = serial_chain_segments(t)
        flat = [k for s in segs for k in s]
        assert len(flat) == len(set(flat)) == len(t)
        root = next(n for n, d in t.in_degree() if d == 0)
        for s in segs:
            assert all(t.has_edge(a, b) for a, b in zip(s, s[1:]))
            assert all(t.out_degree(k) == 1 for k in s[:-1])
            assert t.out_degree(s[-1]) != 1  # tip: a leaf or a branching node
            base_parent = next(iter(t.predecessors(s[0])), None)
            assert s[0] == root or t.out_degree(base_parent) >= 2
        assert segs[0][0] == root


def test_number_of_segments_is_leaves_plus_branching_nodes():
    for _, t in cases(31):
        segs = serial_chain_segments(t)
        n_leaves = sum(1 for k in t.nodes if t.out_degree(k) == 0)
        n_branch = sum(1 for k in t.nodes if t.out_degree(k) >= 2)
        assert len(segs) == n_leaves + n_branch == len(leaves(t)) + len(branching_nodes(t))
        assert len(segs) == 1 + sum(t.out_degree(k) for k in t.nodes if t.out_degree(k) >= 2)


def test_segment_tree_is_the_networkx_quotient_and_an_arborescence():
    for _, t in cases(32, 150):
        segs = serial_chain_segments(t)
        st = segment_tree(t)
        q = nx.quotient_graph(t, [frozenset(s) for s in segs])
        assert nx.is_arborescence(q) and nx.is_arborescence(st.tree)
        name = {frozenset(s): Segment(i) for i, s in enumerate(segs)}
        assert set(st.tree.edges) == {(name[a], name[b]) for a, b in q.edges}
        for j, k in st.tree.edges:
            (edge,) = st.tree.edges[j, k]["original_edges"]
            assert edge == (segs[j.index][-1], segs[k.index][0])  # tip of j -> base of k (Eq. 44)
        for i, s in enumerate(segs):
            assert set(st.members[Segment(i)]) == set(s)


def test_canonical_order_is_strictly_canonical_segments_are_consecutive():
    for _, t in cases(33, 150):
        order = canonical_order(t)
        pos = {k: i for i, k in enumerate(order)}
        for s in serial_chain_segments(t):
            assert [pos[k] for k in s] == list(range(pos[s[0]], pos[s[0]] - len(s), -1))


def _fig6_tree():
    """Seed 000, Fig. 6 / Eq. 43: segments 1, 2, 3 are tips; 4 carries 1 and 2; 5 carries 3 and 4."""
    t = nx.DiGraph()
    chains = {5: ["r", "a5"], 4: ["b4", "c4", "d4"], 3: ["e3"], 2: ["f2", "g2"], 1: ["h1", "i1", "j1"]}
    for c in chains.values():
        nx.add_path(t, c)
    t.add_edges_from([("a5", "e3"), ("a5", "b4"), ("d4", "h1"), ("d4", "f2")])
    return t, chains


def test_fig6_example_gives_five_segments_with_the_block_structure_of_eqs_43_and_45():
    t, chains = _fig6_tree()
    segs = serial_chain_segments(t)
    assert sorted(map(tuple, segs)) == sorted(tuple(c) for c in chains.values())
    st = segment_tree(t)
    seed_no = {Segment(i): next(n for n, c in chains.items() if tuple(c) == s) for i, s in enumerate(segs)}
    order = sorted(st.tree.nodes, key=seed_no.__getitem__)  # seed numbering 1..5 (canonical)
    E = sko_pattern(st.tree, order)
    A = spo_pattern(st.tree, order)
    off = lambda X: {(i + 1, j + 1) for i, j in zip(*np.nonzero(X)) if i != j}  # noqa: E731
    assert off(E) == {(4, 1), (4, 2), (5, 3), (5, 4)}  # Eq. 43
    assert off(A) == {(4, 1), (4, 2), (5, 1), (5, 2), (5, 3), (5, 4)}  # Eq. 45
    assert np.all(np.diag(A))
    M = mass_matrix_pattern(st.tree, order)  # Fig. 7: zero only for unrelated segments
    assert {(i + 1, j + 1) for i, j in zip(*np.nonzero(~M))} == {(1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2),
                                                               (3, 4), (4, 3)}


def test_segment_blocks_of_weighted_operators_eqs_43_44_and_serial_chain_diagonal_blocks():
    for rng, t in cases(34, 60, 20):
        order = canonical_order(t)
        idx = {k: i for i, k in enumerate(order)}
        n = len(order)
        E = np.zeros((6 * n, 6 * n))
        for a, b in t.edges:
            E[6 * idx[a]:6 * idx[a] + 6, 6 * idx[b]:6 * idx[b] + 6] = 0.3 * rng.normal(size=(6, 6))
        A = np.linalg.inv(np.eye(6 * n) - E)
        tol = 1e-10 * max(1.0, np.abs(A).max())
        nzE = np.array([[np.abs(E[6 * i:6 * i + 6, 6 * j:6 * j + 6]).max() > tol for j in range(n)]
                        for i in range(n)])
        nzA = np.array([[np.abs(A[6 * i:6 * i + 6, 6 * j:6 * j + 6]).max() > tol for j in range(n)]
                        for i in range(n)])
        segs = serial_chain_segments(t)
        seg_of = {k: i for i, s in enumerate(segs) for k in s}
        st = segment_tree(t)
        for j, sj in enumerate(segs):
            rj = [idx[k] for k in sj]
            # diagonal block: canonical serial chain -> E on the first sub-diagonal, A dense lower
            sub = nzE[np.ix_(sorted(rj), sorted(rj))]
            assert np.array_equal(sub, np.eye(len(rj), k=-1, dtype=bool))
            assert np.array_equal(nzA[np.ix_(sorted(rj), sorted(rj))], np.tril(np.ones((len(rj),) * 2, dtype=bool)))
            for k, sk in enumerate(segs):
                if j == k:
                    continue
                blockE = {(order[r], order[c]) for r in rj for c in (idx[x] for x in sk) if nzE[r, c]}
                if st.tree.has_edge(Segment(j), Segment(k)):
                    assert blockE == {(sj[-1], sk[0])}  # Eq. 44
                else:
                    assert blockE == set()
                related = nx.has_path(st.tree, Segment(j), Segment(k))
                anyA = nzA[np.ix_(rj, [idx[x] for x in sk])].any()
                assert anyA == related  # Eq. 45
        assert len(seg_of) == n


def test_single_node_and_chain_trees():
    t = nx.DiGraph()
    t.add_node("only")
    assert serial_chain_segments(t) == [("only",)]
    chain = nx.path_graph(5, create_using=nx.DiGraph)
    assert serial_chain_segments(chain) == [(0, 1, 2, 3, 4)]
    with pytest.raises(ValueError):
        serial_chain_segments(nx.DiGraph([(0, 1), (2, 1)]))
