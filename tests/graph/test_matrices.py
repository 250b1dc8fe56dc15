"""Incidence, cut-set and circuit matrices (seed 004, Eqs. 1-4).

Independent reference for B: each chord's fundamental circuit walked along the
tree path with networkx, signs from the element orientations.
"""

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from mbcompose.graph.matrices import incidence_matrix, topology_matrices
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


def check_matrices(sg):
    tm = topology_matrices(sg)
    v, e = len(sg.nodes), len(sg.elements)
    assert tm.A.shape == (v - 1, e)
    assert tm.A_T.shape == (v - 1, v - 1) and tm.A_C.shape == (v - 1, e - v + 1)
    assert abs(round(np.linalg.det(tm.A_T))) == 1
    # Eq. 1 and Eq. 2: the cut-set matrix is A_T^-1 [A_T A_C]
    assert np.array_equal(tm.cutset[:, : v - 1], np.eye(v - 1, dtype=int))
    assert np.allclose(np.linalg.solve(tm.A_T, tm.A_ordered()), tm.cutset)
    # Eq. 4 and orthogonality
    assert np.array_equal(tm.B_T, -tm.A_C.T @ np.rint(np.linalg.inv(tm.A_T)).astype(int).T)
    assert not np.any(tm.A_ordered() @ tm.B.T)
    assert not np.any(tm.A @ tm.B_in_element_order().T)
    # rows of B are the fundamental circuits
    assert np.array_equal(tm.B, circuit_rows_by_tree_walk(sg, tm.branches, tm.chords))
    # rank: A has full row rank v-1, B has e-v+1 independent rows
    assert np.linalg.matrix_rank(tm.A) == v - 1 and np.linalg.matrix_rank(tm.B) == e - v + 1
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
    for k, e in enumerate(sg.elements):
        col = {rows[i]: A[i, k] for i in np.flatnonzero(A[:, k])}
        expected = {n: s for n, s in ((e.tail, 1), (e.head, -1)) if n != "ground"}
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
