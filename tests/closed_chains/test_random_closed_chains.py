"""Constraint embedding on random closed chains (random trees, random chords of every type,
overlapping loops merged) against a dense KKT solve with Pinocchio's M and C."""

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose.dynamics import embedding as E
from mbcompose.dynamics.closed.closure import Chord, closure_bias, closure_error, closure_jacobian
from mbcompose.dynamics.kinematics import integrate
from mbcompose.dynamics.spatial import quat_to_matrix
from trees import q_to_pin, random_model, random_q, to_pinocchio, v_perm

CHORD_TYPES = ("spherical", "revolute", "universal", "cylindrical", "prismatic", "planar", "fixed")
TREE_TYPES = ("revolute", "prismatic", "spherical", "fixed", "revolute", "revolute")


def closed_chain(seed):
    model, rng = random_model(seed, n=int(np.random.default_rng(seed).integers(5, 11)), types=TREE_TYPES)
    q0 = random_q(model, rng)
    R, p = dyn.body_poses(model, q0)
    ext_R = lambda k: np.eye(3) if k < 0 else R[k]
    ext_p = lambda k: np.zeros(3) if k < 0 else p[k]
    chords = []
    for i in range(int(rng.integers(1, 4))):
        a, b = (int(x) for x in rng.choice(np.arange(-1, model.n_bodies), size=2, replace=False))
        t = str(rng.choice(CHORD_TYPES))
        x = rng.normal(size=3) * 0.5
        Rj = quat_to_matrix(rng.normal(size=4))
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        w = np.cross(u, rng.normal(size=3))
        chords.append(Chord(f"c{i}_{t}", t, a, b, R_a=ext_R(a).T @ Rj, p_a=ext_R(a).T @ (x - ext_p(a)),
                            R_b=ext_R(b).T @ Rj, p_b=ext_R(b).T @ (x - ext_p(b)), axis=u, axis2=w))
    return model, chords, q0, rng


def kkt_accelerations(model, pm, pd, chords, q, v, tau):
    import pinocchio as pin

    perm = v_perm(model)
    inv = np.argsort(perm)
    qp = q_to_pin(model, q)
    M = pin.crba(pm, pd, qp)
    M = (np.triu(M) + np.triu(M, 1).T)[np.ix_(inv, inv)]
    C = pin.rnea(pm, pd, qp, v[perm], np.zeros(model.nv))[inv]
    G = closure_jacobian(model, chords, q)
    gam = closure_bias(model, chords, q, v)
    U, s, Vt = np.linalg.svd(G)
    r = int(np.sum(s > 1e-9 * max(s[0], 1e-300))) if len(s) else 0
    Gr = Vt[:r]                                       # orthonormal basis of the row space
    gr = (U[:, :r].T @ gam) / s[:r]
    K = np.block([[M, Gr.T], [Gr, np.zeros((r, r))]])
    return np.linalg.solve(K, np.r_[tau - C, -gr])[:model.nv]


def closed_states(model, em, rng, tries):
    """Up to ``tries`` closed states (q, v) near the neutral configuration: independent coordinates
    moved at random, the loops closed by the numpy Newton (tries it cannot close are skipped) and
    consistent random velocities."""
    for _ in range(tries):
        dv = np.zeros(model.nv)
        dv[em.independent_v] = rng.uniform(-0.1, 0.1, size=em.n_independent)
        try:
            q = E.complete_configuration(em, integrate(model, em.neutral(), dv))
        except E.ClosureError:
            continue
        yield q, E.complete_velocity(em, q, rng.normal(size=em.n_independent))


@pytest.mark.parametrize("seed", range(12))
def test_embedded_forward_dynamics_equals_kkt_on_random_closed_chains(seed):
    model, chords, q0, rng = closed_chain(seed)
    assert np.max(np.abs(closure_error(model, chords, q0))) < 1e-12
    em = E.embed(model, chords, q_ref=q0)
    pm, _, _ = to_pinocchio(model)
    pd = pm.createData()
    n_ok = 0
    for q, v in closed_states(model, em, rng, 6):
        assert np.max(np.abs(closure_error(model, chords, q))) < 1e-9
        assert np.max(np.abs(closure_jacobian(model, chords, q) @ v), initial=0.0) < 1e-9 * max(1, np.abs(v).max())
        tau = rng.normal(size=model.nv)
        a = E.forward_dynamics(em, q, v, tau)
        a_ref = kkt_accelerations(model, pm, pd, chords, q, v, tau)
        assert np.max(np.abs(a - a_ref)) < 1e-7 * max(1.0, np.abs(a_ref).max())
        # the minimal mass matrix is X^T M X with X the embedding's velocity map
        X = np.column_stack([E.complete_velocity(em, q, e) for e in np.eye(em.n_independent)]) \
            if em.n_independent else np.zeros((model.nv, 0))
        Mm = dyn.mass_matrix(model, q)
        assert np.allclose(E.mass_matrix(em, q), X.T @ Mm @ X, atol=1e-9 * np.abs(Mm).max())
        n_ok += 1
    assert n_ok >= 3


def test_embedding_without_chords_is_the_tree():
    model, rng = random_model(4, n=8)
    em = E.embed(model, [])
    q = random_q(model, rng)
    v, tau = rng.normal(size=(2, model.nv))
    assert em.n_independent == model.nv and not em.loops
    assert np.allclose(E.forward_dynamics(em, q, v, tau), dyn.forward_dynamics(model, q, v, tau), atol=1e-10)
    assert np.allclose(E.mass_matrix(em, q), dyn.mass_matrix(model, q), atol=1e-12)
