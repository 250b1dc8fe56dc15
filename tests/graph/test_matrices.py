"""Incidence, cut-set and circuit matrices (seed 004, Eqs. 1-4).

Independent reference for B: each chord's fundamental circuit walked along the
tree path with networkx, signs from the element orientations.
"""

from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from scipy import sparse

from mbcompose.graph.matrices import incidence_matrix, topology_matrices
from mbcompose.parsers.assembly import GROUND
from mbcompose.graph.system_graph import extended_graph

import graph_mechanisms as gm

SAMPLES = sorted(p for p in (Path(__file__).resolve().parents[2] / "samples").glob("*/*.yaml")
                 if p.name not in ("pipeline.yaml", "sweep.yaml"))


def circuit_rows_by_tree_walk(sg, branches, chords):
    """B from first principles: chord c, then the tree path from c's head back to its tail."""
    tree = nx.MultiGraph()
    tree.add_nodes_from(sg.nodes)
    for name in branches:
        e = sg.element(name)
        tree.add_edge(e.tail, e.head, key=name)
    col = {n: i for i, n in enumerate(tuple(branches) + tuple(chords))}
    B = np.zeros((len(chords), len(col)), dtype=int)
    for r, c in enumerate(chords):
        e = sg.element(c)
        B[r, col[c]] = 1
        path = nx.shortest_path(tree, e.head, e.tail)
        for u, v in zip(path[:-1], path[1:]):
            (key,) = tree[u][v].keys()
            b = sg.element(key)
            B[r, col[key]] = 1 if (b.tail, b.head) == (u, v) else -1
    return B


def dense_definitions(sg, branches):
    """A, A_T, A_C, cut-set, B_T and B from their dense definitions (Eqs. 1-4), with a dense inverse."""
    rows = [n for n in sg.nodes if n != GROUND]
    A = np.zeros((len(rows), len(sg.elements)), dtype=int)
    for k, e in enumerate(sg.elements):
        if e.tail != GROUND:
            A[rows.index(e.tail), k] += 1
        if e.head != GROUND:
            A[rows.index(e.head), k] -= 1
    chords = [e.name for e in sg.elements if e.name not in set(branches)]
    A_T = A[:, [sg.element(n).index for n in branches]]
    A_C = A[:, [sg.element(n).index for n in chords]]
    inv = np.linalg.inv(A_T) if len(rows) else np.zeros((0, 0))
    cutset = np.rint(inv @ np.hstack([A_T, A_C])).astype(int)
    B_T = np.rint(-A_C.T @ inv.T).astype(int)
    return A, A_T, A_C, cutset, B_T, np.hstack([B_T, np.eye(len(chords), dtype=int)])


def check_matrices(sg):
    tm = topology_matrices(sg)
    assert all(sparse.issparse(m) for m in (tm.A, tm.A_T, tm.A_C, tm.cutset, tm.B_T, tm.B))
    v, e = len(sg.nodes), len(sg.elements)
    A, A_T, A_C, cutset, B_T, B = dense_definitions(sg, tm.branches)
    assert tm.A.shape == (v - 1, e)
    assert tm.A_T.shape == (v - 1, v - 1) and tm.A_C.shape == (v - 1, e - v + 1)
    assert abs(round(np.linalg.det(A_T))) == 1
    # the sparse matrices equal the dense definitions (Eq. 1, Eq. 2 with A_T^-1, Eq. 4)
    for got, want in ((tm.A, A), (tm.A_T, A_T), (tm.A_C, A_C), (tm.cutset, cutset), (tm.B_T, B_T), (tm.B, B)):
        assert np.array_equal(got.toarray(), want)
    assert np.array_equal(tm.cutset.toarray()[:, : v - 1], np.eye(v - 1, dtype=int))
    # orthogonality
    assert not (tm.A_ordered() @ tm.B.T).count_nonzero()
    assert not (tm.A @ tm.B_in_element_order().T).count_nonzero()
    # rows of B are the fundamental circuits
    assert np.array_equal(tm.B.toarray(), circuit_rows_by_tree_walk(sg, tm.branches, tm.chords))
    # rank: A has full row rank v-1, B has e-v+1 independent rows
    assert np.linalg.matrix_rank(A) == v - 1 and np.linalg.matrix_rank(B) == e - v + 1
    return tm


def test_seeker_matrices_satisfy_eqs_1_to_4_and_orthogonality():
    tm = check_matrices(extended_graph(gm.seeker()))
    sg = extended_graph(gm.seeker())
    kinds = {sg.element(n).kind for n in tm.chords}
    # gravity and driver elements parallel body and joint elements: they are always chords
    assert {"gravity", "driver"} <= kinds


def test_incidence_matrix_signs_follow_element_orientation():
    sg = extended_graph(gm.fourbar())
    A, rows = incidence_matrix(sg)
    A = A.toarray()
    for k, e in enumerate(sg.elements):
        col = {rows[i]: A[i, k] for i in np.flatnonzero(A[:, k])}
        expected = {n: s for n, s in ((e.tail, 1), (e.head, -1)) if n != GROUND}
        assert col == expected


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_satisfy_eq_4_and_orthogonality(seed):
    rng = np.random.default_rng(seed)
    check_matrices(extended_graph(gm.random_assembly(rng, int(rng.integers(1, 12)), int(rng.integers(0, 6)))))


@pytest.mark.parametrize("make", [gm.bearing, gm.fourbar, gm.crossed_pair, gm.rssr])
def test_known_mechanisms_satisfy_eq_4_and_orthogonality(make):
    check_matrices(extended_graph(make()))


def test_the_sample_assemblies_are_found():
    assert {p.parent.name for p in SAMPLES} >= {"seeker", "fourbar", "slider_crank", "double_pendulum"}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.parent.name + "/" + p.name)
def test_every_sample_satisfies_eq_4_and_orthogonality(path):
    from mbcompose.parsers import read_assembly
    check_matrices(extended_graph(read_assembly(path)))


def test_a_given_tree_is_checked_and_used():
    sg = extended_graph(gm.fourbar())
    tm = topology_matrices(sg)
    joint = next(e.name for e in sg.elements if e.kind == "joint")
    arms = [n for n in tm.branches if sg.element(n).kind == "arm" and sg.element(n).joint == sg.element(joint).joint]
    other = tuple(sorted((set(tm.branches) - {arms[0]}) | {joint}, key=lambda n: int(n[1:])))
    tm2 = topology_matrices(sg, branches=other)
    A, A_T, A_C, cutset, B_T, B = dense_definitions(sg, other)
    assert np.array_equal(tm2.B.toarray(), B) and np.array_equal(tm2.cutset.toarray(), cutset)
    with pytest.raises(ValueError, match="spanning tree"):
        topology_matrices(sg, branches=tm.branches[:-1])
    gravity = next(n for n in tm.chords if sg.element(n).kind == "gravity")  # parallels a body branch
    closing = tuple(sorted((set(tm.branches) - {arms[0]}) | {gravity}, key=lambda n: int(n[1:])))
    with pytest.raises(ValueError, match="spanning tree"):
        topology_matrices(sg, branches=closing)
