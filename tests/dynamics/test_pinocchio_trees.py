"""Mass matrix, inverse and forward dynamics agree with Pinocchio on random trees.

Reference: Pinocchio (crba, rnea with external forces, aba) on the same
mechanism built through its Python API (conventions mapped in ``trees.py``).
"""

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from trees import ALL_TYPES, fext_to_pin, q_to_pin, random_bodies, random_q, to_pinocchio, v_perm

pin = pytest.importorskip("pinocchio")

SEEDS = range(60)


def rel_err(x, ref):
    return np.max(np.abs(x - ref)) / max(1.0, np.max(np.abs(ref)))


def make(seed):
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(2, 41)) if seed % 3 else int(rng.integers(25, 41))
    model = dyn.build_model(random_bodies(rng, n, ALL_TYPES))
    return model, rng


def test_random_trees_cover_every_joint_type_and_branching():
    seen, branching = set(), 0
    for s in SEEDS:
        m, _ = make(s)
        seen.update(m.joint_types)
        branching += any(len(c) > 1 for c in m.tree.children)
    assert seen == set(ALL_TYPES)
    assert branching >= 40


@pytest.mark.parametrize("seed", SEEDS)
def test_mass_matrix_rnea_aba_match_pinocchio_on_random_tree(seed):
    model, rng = make(seed)
    pm, jid, off = to_pinocchio(model)
    pd = pm.createData()
    perm = v_perm(model)
    assert pm.nv == model.nv
    for _ in range(2):
        q = random_q(model, rng)
        v = rng.normal(size=model.nv)
        a = rng.normal(size=model.nv)
        fext = rng.normal(size=(model.n_bodies, 6))
        qp = q_to_pin(model, q)
        # mass matrix
        Mp = pin.crba(pm, pd, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        M = dyn.mass_matrix(model, q)
        assert rel_err(M[np.ix_(perm, perm)], Mp) < 1e-10
        # inverse dynamics with gravity and external forces
        taup = pin.rnea(pm, pd, qp, v[perm], a[perm], fext_to_pin(model, jid, off, fext))
        tau = dyn.inverse_dynamics(model, q, v, a, f_ext=fext)
        assert rel_err(tau[perm], taup) < 1e-10
        # forward dynamics
        t2 = rng.normal(size=model.nv)
        ap = pin.aba(pm, pd, qp, v[perm], t2[perm])
        acc = dyn.forward_dynamics(model, q, v, t2)
        assert rel_err(acc[perm], ap) < 1e-10
