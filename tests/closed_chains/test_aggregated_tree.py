"""SKO model of an aggregated tree (seed 000 Lemmas 7-9, Corollary 6.1).

References: the original tree's own recursions (checked against Pinocchio in
tests/dynamics) for the system-level quantities, and the dense operator formulas
``T_a``, ``E_A_a = I - (I - E_A) T_a^-1``, ``H_a = H T_a^-1``, ``a_a = T_a^-* a`` of
graph.aggregation.blocks (written independently) for the blocks.
"""

import networkx as nx
import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose.dynamics.closed import aggregated as ag
from mbcompose.dynamics.batch import node_list, prepare
from mbcompose.dynamics.embedding import loop_sets
from mbcompose.graph.aggregation import loop_aggregation_sets
from mbcompose.graph.aggregation.blocks import permutation_matrix
from mbcompose.graph.aggregation.transforms import aggregation_transform
from trees import random_model, random_q

GROUND = "g"


def nx_tree(model):
    t = nx.DiGraph()
    t.add_node(GROUND)
    for k, p in enumerate(model.parent):
        t.add_edge(GROUND if p < 0 else int(p), k)
    return t


def random_sets(model, rng, n_chords):
    """Aggregation sets of random loops: graph.aggregation.loop_aggregation_sets of random chords."""
    nodes = [GROUND] + list(range(model.n_bodies))
    chords = []
    while len(chords) < n_chords:
        u, v = rng.choice(len(nodes), size=2, replace=False)
        chords.append((nodes[u], nodes[v]))
    sets = loop_aggregation_sets(nx_tree(model), chords)
    return [frozenset(int(s) for s in S) for S in sets], chords


def rel(x, ref):
    return np.max(np.abs(x - ref)) / max(1.0, np.max(np.abs(ref)))


@pytest.mark.parametrize("seed", range(30))
def test_corollary_6_1_aggregated_model_keeps_mass_matrix_coriolis_and_algorithms(seed):
    model, rng = random_model(seed, n_max=16)
    sets, _ = random_sets(model, rng, int(rng.integers(1, 4)))
    am = ag.AggregatedModel(model, sets)
    assert am.agg.tree.n_nodes == model.n_bodies - sum(len(S) - 1 for S in sets)
    q = random_q(model, rng)
    v, a, tau = rng.normal(size=(3, model.nv))
    M = dyn.mass_matrix(model, q)
    assert rel(ag.mass_matrix(am, q), M) < 1e-10
    assert rel(ag.bias_forces(am, q, v), dyn.bias_forces(model, q, v)) < 1e-10
    assert rel(ag.inverse_dynamics(am, q, v, a), dyn.inverse_dynamics(model, q, v, a)) < 1e-10
    assert rel(ag.forward_dynamics(am, q, v, tau), dyn.forward_dynamics(model, q, v, tau)) < 1e-9
    assert rel(ag.mass_matrix_inverse(am, q), np.linalg.inv(M)) < 1e-9
    assert abs(ag.mass_matrix_det(am, q) / np.linalg.det(M) - 1.0) < 1e-9


@pytest.mark.parametrize("seed", range(10))
def test_aggregated_blocks_equal_dense_operator_formulas_of_lemmas_7_to_9(seed):
    model, rng = random_model(seed + 100, n_max=10, types=("revolute", "prismatic", "spherical", "fixed",
                                                           "universal"))
    sets, _ = random_sets(model, rng, 2)
    agg = ag.aggregate_tree(model.tree, sets)
    q = random_q(model, rng)
    v = rng.normal(size=model.nv)
    _, _, _, w, V, ac, bc, ag_ = prepare(model, q, v)
    n = model.n_bodies
    order = [GROUND] + list(range(n))
    dims = {GROUND: 0, **{k: 6 for k in range(n)}}
    N = 6 * n
    E = np.zeros((N, N))
    for k in range(n):
        p = model.parent[k]
        if p >= 0:
            E[6 * p:6 * p + 6, 6 * k:6 * k + 6] = w.phi[k][0]
    Ta = np.eye(N)
    for S in sets:
        Ta = Ta @ aggregation_transform(E, order, dims, S)
    Tinv = np.linalg.inv(Ta)
    Ea_dense = np.eye(N) - (np.eye(N) - E) @ Tinv
    H = np.zeros((model.nv, N))
    for k in range(n):
        H[model.tree.v_slice(k), 6 * k:6 * k + 6] = w.H[k][0]
    Ha_dense = H @ Tinv
    a_orig = np.concatenate([ac[0, k] + ag_[k][0] for k in range(n)])
    aa_dense = Tinv.T @ a_orig

    wa = ag.aggregated_weights(agg, w)
    a_list = [ac[:, k] + ag_[k] for k in range(n)]
    a_a, _ = ag.aggregated_velocity_terms(agg, wa, a_list, node_list(bc))
    stack = [s for mem in agg.members for s in mem]
    Pi = permutation_matrix(order, [GROUND] + stack, dims)
    t = agg.tree
    Ea = np.zeros((N, N))
    Ha = np.zeros((model.nv, N))
    for b in range(t.n_nodes):
        if t.parent[b] >= 0:
            Ea[t.x_slice(t.parent[b]), t.x_slice(b)] = wa.phi[b][0]
        Ha[t.v_slice(b), t.x_slice(b)] = wa.H[b][0]
    assert np.allclose(Ea, Pi @ Ea_dense @ Pi.T, atol=1e-12)
    assert np.allclose(Ha, (Ha_dense @ Pi.T)[agg.v_perm], atol=1e-12)
    assert np.allclose(np.concatenate([x[0] for x in a_a]), Pi @ aa_dense, atol=1e-10)
    # Lemma 8: A_a = T_a A is the SPO of E_A_a
    A = np.linalg.inv(np.eye(N) - E)
    assert np.allclose(np.linalg.inv(np.eye(N) - Ea), Pi @ Ta @ A @ Pi.T, atol=1e-10)


@pytest.mark.parametrize("seed", range(20))
def test_embedding_loop_sets_equal_graph_loop_aggregation_sets(seed):
    model, rng = random_model(seed + 200, n_max=20)
    _, chords = random_sets(model, rng, int(rng.integers(1, 5)))

    class C:
        def __init__(self, a, b):
            self.body_a = -1 if a == GROUND else int(a)
            self.body_b = -1 if b == GROUND else int(b)

    ref = {frozenset(S) for S in loop_aggregation_sets(nx_tree(model), chords)}
    mine = set(loop_sets(model.parent, [C(a, b) for a, b in chords]))
    assert mine == ref


def test_aggregation_condition_is_enforced():
    model, rng = random_model(5, n=8)
    t = model.tree
    bad = None
    for k in range(t.n_nodes):
        for j in range(t.n_nodes):
            if j != k and not t.is_ancestor(k, j) and not t.is_ancestor(j, k) and t.parent[k] != t.parent[j]:
                bad = {k, j}
                break
        if bad:
            break
    assert bad is not None
    with pytest.raises(ValueError, match="aggregation condition"):
        ag.aggregate_tree(t, [bad])


def test_aggregated_model_takes_batches_of_configurations():
    model, rng = random_model(77, n=12)
    sets, _ = random_sets(model, rng, 2)
    am = ag.AggregatedModel(model, sets)
    Q = dyn.random_configuration(model, rng, batch=5)
    V, T = rng.normal(size=(2, 5, model.nv))
    assert np.allclose(ag.forward_dynamics(am, Q, V, T), dyn.forward_dynamics(model, Q, V, T), atol=1e-9)
    assert np.allclose(ag.mass_matrix(am, Q), dyn.mass_matrix(model, Q), atol=1e-10)
    assert np.allclose(ag.mass_matrix_det(am, Q) / dyn.mass_matrix_det(model, Q), 1.0)
