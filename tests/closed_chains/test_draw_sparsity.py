"""Sparsity pictures (seed 000, Figs. 6-7): patterns vs numeric operators with random blocks."""

import networkx as nx
import numpy as np
import pytest

from mbcompose.graph.draw.sparsity import draw_sparsity, sparsity_patterns
from mechanisms import load

FIG6_LIKE = nx.DiGraph([(0, 1), (1, 2), (2, 3), (2, 4), (4, 5), (4, 6), (6, 7), (3, 8), (8, 9)])


def numeric_patterns(tree, order, rng, d=2):
    """Random d x d blocks on the tree edges: E_A, A = (I - E_A)^-1, M = A Mb A^T (H = I)."""
    pos = {n: i for i, n in enumerate(order)}
    n = len(order)
    E = np.zeros((n * d, n * d))
    for p, c in tree.edges:
        if p in pos and c in pos:
            E[pos[p] * d:(pos[p] + 1) * d, pos[c] * d:(pos[c] + 1) * d] = rng.normal(size=(d, d))
    A = np.linalg.inv(np.eye(n * d) - E)
    Mb = np.zeros_like(E)
    for i in range(n):
        X = rng.normal(size=(d, d))
        Mb[i * d:(i + 1) * d, i * d:(i + 1) * d] = X @ X.T + np.eye(d)
    M = A @ Mb @ A.T
    blk = lambda X: np.abs(X).reshape(n, d, n, d).max(axis=(1, 3)) > 1e-12
    return blk(E), blk(A), blk(M)


def test_patterns_equal_the_nonzero_blocks_of_random_numeric_operators():
    rng = np.random.default_rng(0)
    for seed in range(10):
        t = nx.random_labeled_rooted_tree(15, seed=seed)
        tree = nx.bfs_tree(t, t.graph["root"])
        pat = sparsity_patterns(tree)
        E, A, M = numeric_patterns(tree, pat.order, rng)
        assert np.array_equal(pat.E_A, E) and np.array_equal(pat.A, A) and np.array_equal(pat.M, M)


def test_segment_order_gives_seed_eq_43_structure_for_the_fig_6_like_tree():
    pat = sparsity_patterns(FIG6_LIKE)
    assert len(pat.segments) == 5           # 3 leaves + 2 branching nodes
    assert not np.any(np.triu(pat.E_A))     # children before parents: strictly lower
    segs = [set(range(s.start, s.stop)) for s, _ in pat.segments]
    seg_of = {i: k for k, s in enumerate(segs) for i in s}
    for i, j in zip(*np.nonzero(pat.E_A)):
        if seg_of[i] != seg_of[j]:
            # a connector block: tip of the parent segment (its first row) to base of the child
            assert i == min(segs[seg_of[i]]) and j == max(segs[seg_of[j]])


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_draw_sparsity_writes_the_picture(tmp_path, suffix):
    out = draw_sparsity(FIG6_LIKE, tmp_path / f"fig6.{suffix}")
    assert out.exists() and out.stat().st_size > 1000


def test_draw_sparsity_takes_models_and_hides_the_virtual_ground(tmp_path):
    name = "leg_fourbar_knee"
    asm, tm, em = load(name)
    for obj in (em, tm.model):
        pat = sparsity_patterns(obj)
        assert set(pat.order) == set(tm.model.body_names)
    assert draw_sparsity(em, tmp_path / "leg.png").exists()
    fig = draw_sparsity(tm.model)                 # no path: the figure, for the report
    assert len(fig.axes) == 3
