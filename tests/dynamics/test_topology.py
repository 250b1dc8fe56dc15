"""dynamics.topology against networkx on seeded random trees and graphs."""

import networkx as nx
import numpy as np
import pytest

from mbcompose.dynamics import topology as T


def random_parent_array(n, seed):
    rng = np.random.default_rng(seed)
    return [int(rng.integers(-1, k)) for k in range(n)]


def as_digraph(parent):
    g = nx.DiGraph()
    g.add_node(-1)
    g.add_edges_from((p, k) for k, p in enumerate(parent))
    return g


@pytest.mark.parametrize("seed", range(5))
def test_paths_and_lowest_common_ancestors_match_networkx(seed):
    parent = random_parent_array(30, seed)
    g = as_digraph(parent)
    undirected = g.to_undirected(as_view=True)
    rng = np.random.default_rng(100 + seed)
    for _ in range(40):
        u, v = (int(x) for x in rng.integers(0, 30, 2))
        assert T.lowest_common_ancestor(parent, (u, v)) == nx.lowest_common_ancestor(g, u, v)
        assert T.tree_path(parent, u, v) == nx.shortest_path(undirected, u, v)
        assert set(T.ancestors(parent, u)) == nx.ancestors(g, u) - {-1}
        assert T.path_to_root(parent, u) == nx.shortest_path(g, -1, u)[::-1]


def test_paths_on_a_mapping_with_named_nodes():
    parent = {"a": "ground", "b": "a", "c": "a", "d": "c"}
    assert T.tree_path(parent, "b", "d", root="ground") == ["b", "a", "c", "d"]
    assert T.lowest_common_ancestor(parent, ["b", "d"], root="ground") == "a"
    assert T.loop_set(parent, "b", "d", root="ground") == {"b", "c", "d"}


def satisfies_aggregation_condition(parent, S):
    """Seed 000 Lemma 5 read on a parent array: the parents of S outside S are one node p(S)."""
    return len({parent[k] for k in S if parent[k] not in S}) == 1


@pytest.mark.parametrize("seed", range(5))
def test_loop_sets_are_disjoint_aggregation_sets_covering_each_loop(seed):
    parent = random_parent_array(25, seed)
    g = as_digraph(parent)
    rng = np.random.default_rng(200 + seed)
    chords = [tuple(int(x) for x in rng.choice(25, 2, replace=False)) for _ in range(3)]
    sets = T.loop_sets(parent, chords)
    for i, S in enumerate(sets):
        assert satisfies_aggregation_condition(parent, S)
        for other in sets[i + 1:]:
            assert not S & other
    for a, b in chords:
        lca = nx.lowest_common_ancestor(g, a, b)
        loop = set(nx.shortest_path(g.to_undirected(as_view=True), a, b)) - {lca}
        assert any(loop <= S for S in sets)


@pytest.mark.parametrize("seed", range(4))
def test_spanning_tree_is_a_tree_and_leaves_one_chord_per_independent_loop(seed):
    rng = np.random.default_rng(seed)
    nodes = [f"b{i}" for i in range(12)]
    edges = [(("g" if k == 0 else nodes[int(rng.integers(0, k))]), nodes[k], False) for k in range(12)]
    edges += [(nodes[int(i)], nodes[int(j)], bool(rng.integers(0, 2))) for i, j in rng.integers(0, 12, (5, 2))
              if i != j]
    order = rng.permutation(len(edges))
    edges = [edges[i] for i in order]
    tree, chords, unreached = T.spanning_tree(nodes, edges, "g")
    g = nx.Graph()
    g.add_edges_from((p, c) for _, p, c in tree)
    assert nx.is_tree(g) and set(g.nodes) == set(nodes) | {"g"} and not unreached
    assert sorted(chords + [i for i, _, _ in tree]) == list(range(len(edges)))
    seen = {"g"}
    for i, p, c in tree:
        assert p in seen and {p, c} == set(edges[i][:2])
        seen.add(c)
    # a deferred (loop-closure) edge is in the tree only where no other edge reaches its child
    for i, p, c in tree:
        if edges[i][2]:
            plain = nx.Graph([(a, b) for a, b, d in edges if not d])
            plain.add_node("g")
            assert c not in plain or not nx.has_path(plain, "g", c)


def test_spanning_tree_reports_unreached_nodes_and_unknown_ends():
    tree, chords, unreached = T.spanning_tree(["a", "b", "c"], [("g", "a", False), ("b", "c", False)], "g")
    assert [(p, c) for _, p, c in tree] == [("g", "a")] and chords == [1] and unreached == ["b", "c"]
    with pytest.raises(KeyError):
        T.spanning_tree(["a"], [("g", "x", False)], "g")
