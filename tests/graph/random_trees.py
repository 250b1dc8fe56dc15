"""Seeded random trees for the graph tests: parent -> child arborescences with mixed
hashable labels (strings, tuples, integers) and shuffled node and edge order."""

from __future__ import annotations

import networkx as nx
import numpy as np


def _labels(rng, n):
    pool = [f"b{i}" for i in range(n)] + [(i, "x") for i in range(n)] + [1000 + 7 * i for i in range(n)]
    return [pool[i] for i in rng.choice(len(pool), size=n, replace=False)]


def random_tree(rng: np.random.Generator, n: int) -> nx.DiGraph:
    """A random tree (parent -> child) with arbitrary hashable labels and shuffled edge order."""
    kind = rng.integers(4)
    if kind == 3 and n > 1:
        und = nx.random_labeled_tree(n, seed=int(rng.integers(2**31)))
        root = int(rng.integers(n))
        edges = list(nx.bfs_edges(und, root))
    else:
        edges = []
        for k in range(1, n):
            if kind == 0:
                p = rng.integers(k)
            elif kind == 1:
                p = k - 1 if rng.random() < 0.7 else rng.integers(k)
            else:
                p = rng.integers(max(1, k // 3))
            edges.append((int(p), k))
    lab = _labels(rng, n)
    rng.shuffle(edges)
    t = nx.DiGraph()
    t.add_nodes_from(lab[i] for i in rng.permutation(n))
    t.add_edges_from((lab[a], lab[b]) for a, b in edges)
    assert nx.is_arborescence(t)
    return t
