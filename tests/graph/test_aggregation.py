"""Property tests of graph.aggregation (seed 000, Lemmas 1-6, Assumption 1).

Every claim is checked on seeded random trees against networkx used
independently: directed paths by ``nx.has_path``/``nx.shortest_path``, node
contraction by ``nx.contracted_nodes``/``nx.quotient_graph``, the tree property by
``nx.is_arborescence``, ancestry by ``nx.descendants``/``nx.ancestors``, lowest
common ancestors by ``nx.lowest_common_ancestor``, loops by ``nx.find_cycle``.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from mbcompose.dynamics import topology
from mbcompose.graph.aggregation import (
    aggregate,
    aggregate_disjoint,
    aggregation_subgraph,
    canonical_order,
    contract_nodes,
    induced_subgraph,
    is_induced,
    is_path_induced,
    loop_aggregation_nodes,
    loop_aggregation_sets,
    lowest_common_ancestor,
    parent_map,
    partition,
    path_induced_subgraph,
    satisfies_aggregation_condition,
    subgraph_parents,
    tree_root,
)
from random_trees import random_tree

N_CASES = 300


def random_subset(rng, tree, k=None):
    nodes = list(tree.nodes)
    k = int(rng.integers(1, len(nodes) + 1)) if k is None else k
    return frozenset(nodes[i] for i in rng.choice(len(nodes), size=k, replace=False))


def random_candidate(rng, tree):
    """Subsets of mixed kinds so that about half satisfy the aggregation condition."""
    S = random_subset(rng, tree, int(rng.integers(1, min(len(tree), 5) + 1)))
    kind = rng.integers(4)
    if kind == 0:
        return S
    SA = frozenset(aggregation_subgraph(tree, S).nodes)
    if kind == 1:
        return SA
    if kind == 2 and len(SA) > 1:
        return SA - {list(SA)[int(rng.integers(len(SA)))]}
    rest = [n for n in tree.nodes if n not in SA]
    return SA | {rest[int(rng.integers(len(rest)))]} if rest else SA


def cases(seed, n_min=1, n_max=14, count=N_CASES):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield rng, random_tree(rng, int(rng.integers(n_min, n_max + 1)))


# ----------------------------------------------------------- reference helpers

def ref_contract(tree, nodes):
    """Node contraction by networkx (self loops dropped), compound node = a member."""
    nodes = list(nodes)
    g = nx.DiGraph(tree)
    for other in nodes[1:]:
        g = nx.contracted_nodes(g, nodes[0], other, self_loops=False, copy=True)
    return g, nodes[0]


def ref_is_path_induced(tree, nodes, edges):
    for a, b in itertools.permutations(nodes, 2):
        if nx.has_path(tree, a, b):
            path = nx.shortest_path(tree, a, b)
            if not set(path) <= set(nodes) or not set(zip(path, path[1:])) <= set(edges):
                return False
    return True


def ref_path_closure(tree, nodes):
    out = set(nodes)
    while True:
        new = set(out)
        for a, b in itertools.permutations(out, 2):
            if nx.has_path(tree, a, b):
                new.update(nx.shortest_path(tree, a, b))
        if new == out:
            return out
        out = new


def edges_of(g):
    return set(g.edges)


# ----------------------------------------------------------------------- tests

def test_tree_root_rejects_non_trees():
    with pytest.raises(ValueError):
        tree_root(nx.DiGraph([(0, 1), (2, 1)]))
    with pytest.raises(ValueError):
        tree_root(nx.DiGraph([(0, 1), (1, 0)]))
    with pytest.raises(ValueError):
        tree_root(nx.DiGraph())
    assert tree_root(nx.DiGraph([("a", "b"), ("a", "c")])) == "a"


def test_lowest_common_ancestor_and_tree_path_match_networkx():
    for rng, t in cases(1, 2, 20, 100):
        u, v = random_subset(rng, t, 2) if len(t) > 1 else (tree_root(t),) * 2
        assert lowest_common_ancestor(t, (u, v)) == nx.lowest_common_ancestor(t, u, v)
        path = topology.tree_path(parent_map(t), u, v, tree_root(t))
        assert path == nx.shortest_path(t.to_undirected(as_view=True), u, v)


def test_canonical_order_puts_children_before_parents():
    for _, t in cases(2, 1, 25, 100):
        order = canonical_order(t)
        pos = {k: i for i, k in enumerate(order)}
        assert sorted(pos.values()) == list(range(len(t))) and set(pos) == set(t.nodes)
        assert all(pos[a] > pos[b] for a, b in t.edges)


def test_closures_are_nested_and_match_brute_force_definitions():
    """Eqs. 21 and 28: S <= S_I <= S_P <= S_A in nodes and edges; S_I, S_P by definition."""
    for rng, t in cases(3):
        nodes = random_subset(rng, t)
        sub = nx.DiGraph()
        sub.add_nodes_from(nodes)
        ind = t.subgraph(nodes)
        sub.add_edges_from(e for e in ind.edges if rng.random() < 0.5)
        SI = induced_subgraph(t, sub)
        SP = path_induced_subgraph(t, sub)
        SA = aggregation_subgraph(t, sub)
        assert set(SI.nodes) == set(nodes) and edges_of(SI) == set(ind.edges)
        assert set(SP.nodes) == ref_path_closure(t, nodes)
        assert ref_is_path_induced(t, set(SP.nodes), edges_of(SP))
        assert edges_of(SP) == set(t.subgraph(SP.nodes).edges)
        assert set(sub.nodes) <= set(SI.nodes) <= set(SP.nodes) <= set(SA.nodes)
        assert edges_of(sub) <= edges_of(SI) <= edges_of(SP) <= edges_of(SA)
        assert is_induced(t, sub) == (edges_of(sub) == set(ind.edges))
        assert is_path_induced(t, sub) == ref_is_path_induced(t, nodes, edges_of(sub))
        assert is_path_induced(t, SP) and is_path_induced(t, SA)


def test_partition_lemma1_parts_are_disjoint_path_induced_and_connected_only_s_to_c_and_p_to_s():
    for rng, t in cases(4):
        S = frozenset(path_induced_subgraph(t, random_subset(rng, t)).nodes)
        part = partition(t, S)
        assert part.S | part.C | part.P == set(t.nodes)
        assert not (part.S & part.C or part.S & part.P or part.C & part.P)
        desc = set().union(*(nx.descendants(t, s) for s in S))
        assert part.C == desc - S
        anc = set().union(*(nx.ancestors(t, s) for s in S))
        unrelated = {k for k in t.nodes if k not in S | desc | anc}
        assert part.P == (anc - S) | unrelated
        for X in (part.C, part.P):
            assert ref_is_path_induced(t, X, set(t.subgraph(X).edges))
        cross = {(part.part_of(a), part.part_of(b)) for a, b in t.edges} - {("S", "S"), ("C", "C"), ("P", "P")}
        assert cross <= {("S", "C"), ("P", "S")}
        assert part.B_S == {(a, b) for a, b in t.edges if a in S and b in part.C}
        assert part.E_S == {(a, b) for a, b in t.edges if a in part.P and b in S}


def test_partition_refuses_a_subgraph_that_is_not_path_induced():
    t = nx.DiGraph([("a", "b"), ("b", "c")])
    with pytest.raises(ValueError):
        partition(t, {"a", "c"})


def test_lemma3_aggregating_subgraph_or_its_induced_subgraph_gives_the_same_digraph():
    for rng, t in cases(5):
        nodes = random_subset(rng, t)
        sub = nx.DiGraph()
        sub.add_nodes_from(nodes)
        sub.add_edges_from(e for e in t.subgraph(nodes).edges if rng.random() < 0.5)
        a = contract_nodes(t, sub, "AGG")
        b = contract_nodes(t, induced_subgraph(t, sub), "AGG")
        assert set(a.nodes) == set(b.nodes) and edges_of(a) == edges_of(b)
        ref, keep = ref_contract(t, nodes)
        ref = nx.relabel_nodes(ref, {keep: "AGG"})
        assert set(a.nodes) == set(ref.nodes) and edges_of(a) == edges_of(ref)
        # the edges that disappear are exactly those of S_I
        lost = {e for e in t.edges if e[0] in nodes or e[1] in nodes}
        kept = {tuple(e) for d in (a.edges[u, v].get("original_edges", ()) for u, v in a.edges) for e in d}
        assert lost - kept == set(t.subgraph(nodes).edges)


def test_lemma5_aggregate_is_a_tree_exactly_when_the_aggregation_condition_holds():
    n_true = n_false = 0
    for rng, t in cases(6):
        S = random_candidate(rng, t)
        ref, _ = ref_contract(t, S)
        holds = satisfies_aggregation_condition(t, S)
        assert holds == nx.is_arborescence(ref), (list(t.edges), S)
        n_true += holds
        n_false += not holds
        if holds:
            agg = aggregate(t, S, label="AGG")
            assert nx.is_arborescence(agg.tree)
            r = nx.relabel_nodes(ref, {k: "AGG" for k in S if k in ref})
            assert edges_of(agg.tree) == edges_of(r)
            # when the root is outside S, Assumption 1 as stated: p(S) is one node, ancestor of all S
            if tree_root(t) not in S:
                (p,) = subgraph_parents(t, S)
                assert S <= nx.descendants(t, p)
        else:
            with pytest.raises(ValueError):
                aggregate(t, S)
    assert n_true > 30 and n_false > 30


def test_aggregation_condition_edge_cases_from_the_seed_wording():
    t = nx.DiGraph([("r", "p"), ("p", "s"), ("p", "q")])
    assert not satisfies_aggregation_condition(t, {"r", "s"})  # p(S) = {p} yet a cycle
    assert not nx.is_arborescence(ref_contract(t, ["r", "s"])[0])
    assert satisfies_aggregation_condition(t, set(t.nodes))  # p(S) empty, still a tree
    assert satisfies_aggregation_condition(t, {"s", "q"})  # siblings: Fig. 5 style
    assert not satisfies_aggregation_condition(t, set())
    sub = nx.DiGraph()
    sub.add_nodes_from(["p", "s"])  # not induced: misses the edge p -> s
    assert not satisfies_aggregation_condition(t, sub)


def test_lemma4_a_subgraph_satisfying_the_aggregation_condition_is_path_induced():
    hits = 0
    for rng, t in cases(7):
        S = random_candidate(rng, t)
        if satisfies_aggregation_condition(t, S):
            hits += 1
            assert ref_is_path_induced(t, S, set(t.subgraph(S).edges))
    assert hits > 50


def test_lemma6_aggregation_subgraph_is_the_smallest_superset_whose_aggregate_is_a_tree():
    """Brute force over all supersets on small trees, tree property by networkx."""
    for rng, t in cases(8, 1, 8, 60):
        S = random_subset(rng, t, int(rng.integers(1, min(4, len(t)) + 1)))
        SA = frozenset(aggregation_subgraph(t, S).nodes)
        rest = [k for k in t.nodes if k not in S]
        good = []
        for r in range(len(rest) + 1):
            for extra in itertools.combinations(rest, r):
                X = S | set(extra)
                if nx.is_arborescence(ref_contract(t, X)[0]):
                    good.append(frozenset(X))
        assert SA in good
        assert all(SA <= X for X in good)


def test_lemma6_aggregating_the_aggregation_subgraph_of_any_subgraph_gives_a_tree():
    for rng, t in cases(9, 1, 30):
        S = random_subset(rng, t)
        SA = aggregation_subgraph(t, S)
        assert satisfies_aggregation_condition(t, SA) and is_path_induced(t, SA)
        assert nx.is_arborescence(ref_contract(t, SA.nodes)[0])
        agg = aggregate(t, SA)
        assert nx.is_arborescence(agg.tree)
        (c,) = agg.compound_nodes
        assert set(agg.members[c]) == set(SA.nodes)
        # Lemma 6.3: S_A plus its parent is the smallest subtree holding S with root outside S
        lca = nx.lowest_common_ancestor(t, *S) if len(S) == 2 else lowest_common_ancestor(t, S)
        top = set(SA.nodes) | subgraph_parents(t, SA)
        assert lca in top
        sub = t.subgraph(top)
        assert nx.is_arborescence(sub)


def test_aggregation_members_follow_the_given_order_and_stack_order_lists_all_nodes():
    for rng, t in cases(10, 2, 20, 100):
        SA = frozenset(aggregation_subgraph(t, random_subset(rng, t)).nodes)
        order = list(t.nodes)
        rng.shuffle(order)
        agg = aggregate(t, SA, order=order)
        (c,) = agg.compound_nodes
        pos = {k: i for i, k in enumerate(order)}
        assert list(agg.members[c]) == sorted(SA, key=pos.__getitem__)
        assert all(agg.node_map[k] == c for k in SA)
        stack = agg.stack_order()
        assert sorted(map(repr, stack)) == sorted(map(repr, t.nodes))
        i = stack.index(agg.members[c][0])
        assert tuple(stack[i:i + len(SA)]) == agg.members[c]
        default = aggregate(t, SA)
        cpos = {k: i for i, k in enumerate(canonical_order(t))}
        assert all(cpos[a] < cpos[b] for a, b in zip(default.members[default.compound_nodes[0]],
                                                      default.members[default.compound_nodes[0]][1:]))


def test_aggregate_disjoint_matches_networkx_quotient_graph():
    done = 0
    for rng, t in cases(11, 3, 25, 150):
        blocks, used = [], set()
        for _ in range(int(rng.integers(1, 4))):
            free = [k for k in t.nodes if k not in used]
            if not free:
                break
            SA = frozenset(aggregation_subgraph(t, {free[int(rng.integers(len(free)))]}).nodes)
            if SA & used:
                continue
            if rng.random() < 0.5:
                grow = frozenset(aggregation_subgraph(t, SA | {free[int(rng.integers(len(free)))]}).nodes)
                SA = grow if not grow & used else SA
            blocks.append(SA)
            used |= SA
        agg = aggregate_disjoint(t, blocks, labels=[("blk", i) for i in range(len(blocks))])
        part = blocks + [frozenset([k]) for k in t.nodes if k not in used]
        q = nx.quotient_graph(t, part)
        assert nx.is_arborescence(q)
        name = {frozenset([k]): k for k in t.nodes if k not in used}
        name.update({b: ("blk", i) for i, b in enumerate(blocks)})
        assert edges_of(agg.tree) == {(name[a], name[b]) for a, b in q.edges}
        for u, v in agg.tree.edges:
            for a, b in agg.tree.edges[u, v].get("original_edges", [(u, v)]):
                assert t.has_edge(a, b) and agg.node_map[a] == u and agg.node_map[b] == v
        done += 1
    assert done == 150


def test_aggregate_disjoint_refuses_overlaps_and_bad_subgraphs():
    t = nx.DiGraph([(0, 1), (1, 2), (0, 3)])
    with pytest.raises(ValueError):
        aggregate_disjoint(t, [{1, 2}, {2}])
    with pytest.raises(ValueError):
        aggregate_disjoint(t, [{0, 2}])
    with pytest.raises(ValueError):
        aggregate(t, {3}, label=1)


def test_results_do_not_depend_on_node_labels():
    for rng, t in cases(12, 2, 20, 100):
        S = random_subset(rng, t)
        relabel = {k: ("new", i) for i, k in enumerate(t.nodes)}
        t2 = nx.relabel_nodes(t, relabel)
        S2 = {relabel[k] for k in S}
        assert {relabel[k] for k in aggregation_subgraph(t, S).nodes} == set(aggregation_subgraph(t2, S2).nodes)
        assert {relabel[k] for k in path_induced_subgraph(t, S).nodes} == set(path_induced_subgraph(t2, S2).nodes)
        assert satisfies_aggregation_condition(t, S) == satisfies_aggregation_condition(t2, S2)


def test_loop_aggregation_nodes_are_the_loop_hinges_and_aggregate_to_a_tree():
    for rng, t in cases(13, 2, 25):
        u, v = random_subset(rng, t, 2)
        L = loop_aggregation_nodes(t, u, v)
        lca = nx.lowest_common_ancestor(t, u, v)
        if t.has_edge(u, v) or t.has_edge(v, u):
            cycle_nodes = {u, v}  # chord parallel to a tree edge: a two-edge loop
        else:
            und = nx.Graph(t.to_undirected())
            und.add_edge(u, v)
            cycle_nodes = {a for e in nx.find_cycle(und, source=u) for a in e}
        assert L == cycle_nodes - {lca}
        # the hinges (edges parent -> k) of the members are exactly the tree edges of the loop
        loop_tree_edges = {(a, b) for a, b in t.edges if a in cycle_nodes and b in cycle_nodes}
        assert {(next(t.predecessors(k)), k) for k in L} == loop_tree_edges
        assert satisfies_aggregation_condition(t, L)
        assert subgraph_parents(t, L) == {lca}
        assert nx.is_arborescence(ref_contract(t, L)[0])
        agg = aggregate(t, L, label="LOOP")
        mapped = {agg.node_map[u], agg.node_map[v]}
        assert mapped == {"LOOP"} or mapped == {"LOOP", lca}


def test_loop_aggregation_nodes_simple_mechanisms():
    # four-bar: ground g with two cranks a, c, coupler b on a, chord b - c
    t = nx.DiGraph([("g", "a"), ("a", "b"), ("g", "c")])
    assert loop_aggregation_nodes(t, "b", "c") == {"a", "b", "c"}
    # chord from a body back to its grandparent
    t = nx.DiGraph([("g", "a"), ("a", "b"), ("b", "d")])
    assert loop_aggregation_nodes(t, "a", "d") == {"b", "d"}
    with pytest.raises(ValueError):
        loop_aggregation_nodes(t, "a", "a")


def test_loop_aggregation_sets_for_several_chords_are_disjoint_closed_and_keep_a_tree():
    merged_cases = 0
    for rng, t in cases(14, 3, 25, 200):
        nodes = list(t.nodes)
        chords = []
        for _ in range(int(rng.integers(1, 4))):
            u, v = random_subset(rng, t, 2)
            chords.append((u, v))
        sets = loop_aggregation_sets(t, chords)
        assert all(not (a & b) for a, b in itertools.combinations(sets, 2))
        for u, v in chords:
            L = loop_aggregation_nodes(t, u, v)
            assert sum(L <= X for X in sets) == 1
        for X in sets:
            assert satisfies_aggregation_condition(t, X)
            inside = [loop_aggregation_nodes(t, u, v) for u, v in chords if loop_aggregation_nodes(t, u, v) <= X]
            assert X == frozenset(aggregation_subgraph(t, frozenset().union(*inside)).nodes)
        merged_cases += len(sets) < len(chords)
        part = sets + [frozenset([k]) for k in nodes if not any(k in X for X in sets)]
        assert nx.is_arborescence(nx.quotient_graph(t, part))
        agg = aggregate_disjoint(t, sets)
        for u, v in chords:
            a, b = agg.node_map[u], agg.node_map[v]
            assert a == b or agg.tree.has_edge(a, b) or agg.tree.has_edge(b, a)
    assert merged_cases > 20
