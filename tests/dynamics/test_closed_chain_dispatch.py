"""The public dynamics functions accept the closed-chain models of composer.compose
(DESIGN.md contract), checked against a dense Lagrange solve built here."""

from pathlib import Path

import numpy as np
import pytest

from mbcompose import composer
from mbcompose import dynamics
from mbcompose.dynamics import embedding as E
from mbcompose.dynamics.closed.closure import closure_bias, closure_jacobian

ROOT = Path(__file__).resolve().parents[2]


def dense_lagrange(tree, chords, q, v, tau):
    M = dynamics.mass_matrix(tree, q)
    h = dynamics.bias_forces(tree, q, v)
    G = closure_jacobian(tree, chords, q)
    gamma = closure_bias(tree, chords, q, v)
    # least-squares KKT: redundant rows handled by lstsq on the stacked system
    K = np.block([[M, G.T], [G, np.zeros((len(G), len(G)))]])
    sol = np.linalg.lstsq(K, np.concatenate([tau - h, -gamma]), rcond=1e-12)[0]
    return sol[:tree.nv]


@pytest.mark.parametrize("sample", ["fourbar", "slider_crank"])
def test_forward_dynamics_of_a_composed_closed_chain_matches_dense_lagrange(sample):
    em = composer.compose(ROOT / f"samples/{sample}/{sample}.yaml").model
    rng = np.random.default_rng(1)
    q = E.complete_configuration(em, q_ind=rng.uniform(-0.5, 0.5, em.n_independent))
    v = E.complete_velocity(em, q, rng.normal(size=em.n_independent))
    tau = rng.normal(size=em.nv)
    a = dynamics.forward_dynamics(em, q, v, tau)
    np.testing.assert_allclose(a, dense_lagrange(em.tree_model, em.chords, q, v, tau), rtol=1e-8, atol=1e-8)
    tau_back = dynamics.inverse_dynamics(em, q, v, a)
    np.testing.assert_allclose(dynamics.forward_dynamics(em, q, v, tau_back), a, rtol=1e-8, atol=1e-8)


def test_minimal_mass_matrix_is_the_tree_mass_matrix_projected_on_the_null_space():
    em = composer.compose(ROOT / "samples/fourbar/fourbar.yaml").model
    q = E.complete_configuration(em, q_ind=[0.4])
    N = E.complete_velocity(em, q, [1.0])[:, None]
    expected = N.T @ dynamics.mass_matrix(em.tree_model, q) @ N
    np.testing.assert_allclose(dynamics.mass_matrix(em, q), expected, rtol=1e-12)
    batch = dynamics.mass_matrix(em, np.stack([q, q]))
    assert batch.shape == (2, 1, 1)


def test_lagrange_model_gives_the_same_accelerations_as_embedding():
    path = ROOT / "samples/slider_crank/slider_crank.yaml"
    em = composer.compose(path).model
    lm = composer.compose(path, loops="lagrange").model
    q = E.complete_configuration(em, q_ind=[0.9])
    v = E.complete_velocity(em, q, [2.0])
    tau = np.array([0.3, -1.0, 0.2])
    np.testing.assert_allclose(dynamics.forward_dynamics(lm, q, v, tau), dynamics.forward_dynamics(em, q, v, tau),
                               rtol=1e-9, atol=1e-9)
    with pytest.raises(TypeError, match="LagrangeModel"):
        dynamics.mass_matrix(lm, q)


def test_every_model_kind_dispatches_and_undefined_pairs_say_why():
    from mbcompose.dynamics.closed.aggregated import AggregatedModel
    from mbcompose.dynamics.closed.closure import closure_error

    path = ROOT / "samples/slider_crank/slider_crank.yaml"
    em = composer.compose(path).model
    tree = em.tree_model
    q_open = tree.neutral() + 0.05
    q, v = dynamics.consistent_state(em, q_open, np.ones(em.nv))
    assert np.max(np.abs(closure_error(tree, em.chords, q))) < 1e-9
    assert np.max(np.abs(closure_jacobian(tree, em.chords, q) @ v)) < 1e-9
    assert dynamics.consistent_state(tree, q_open, v)[0] is q_open
    with pytest.raises(TypeError, match="external forces"):
        dynamics.forward_dynamics(em, q, v, np.zeros(em.nv), f_ext=np.zeros((tree.n_bodies, 6)))
    am = AggregatedModel(tree, E.loop_sets(tree.parent, em.chords))
    # seed 000 Corollary 6.1: the aggregated tree has the tree's mass matrix and forward dynamics
    np.testing.assert_allclose(dynamics.mass_matrix(am, q), dynamics.mass_matrix(tree, q), atol=1e-12)
    tau = np.arange(em.nv, dtype=float)
    np.testing.assert_allclose(dynamics.forward_dynamics(am, q, v, tau), dynamics.forward_dynamics(tree, q, v, tau),
                               atol=1e-9)
    with pytest.raises(TypeError, match="jacobian is not defined for aggregated models"):
        dynamics.jacobian(am, q, 0)
