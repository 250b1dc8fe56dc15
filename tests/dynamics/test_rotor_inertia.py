"""Rotor inertia (``armature``) and joint ``ref`` in the numpy reference recursions and the
compiled backend, against Pinocchio's ``model.armature`` (crba, rnea, aba) on seeded random
trees with every joint type; ``ref`` goes to Pinocchio as the coordinate shift ``q - ref``
of the same tree given without it.  (MuJoCo's view: ``tests/robots/test_mujoco_armature_ref.py``.)
"""

import dataclasses

import numpy as np
import pytest

from mbcompose import dynamics
from mbcompose.dynamics import aba, crba, energy, innovations, kinematics, rnea
from mbcompose.dynamics import joints as J
from trees import ALL_TYPES, q_to_pin, random_bodies, random_q, to_pinocchio, v_perm


def with_armature_and_ref(seed):
    """(model with armature and refs, the same tree without them, rng)."""
    rng = np.random.default_rng(900 + seed)
    plain = random_bodies(rng, int(rng.integers(3, 15)), ALL_TYPES)
    given = [dataclasses.replace(b, armature=tuple(rng.uniform(0, 0.5, J.JOINTS[b.joint_type].nv)),
                                 ref=float(rng.uniform(-1, 1)) if J.JOINTS[b.joint_type].takes_ref else 0.0)
             for b in plain]
    return dynamics.build_model(given), dynamics.build_model(plain), rng


@pytest.mark.parametrize("seed", range(4))
def test_numpy_reference_recursions_carry_armature_and_ref_like_pinocchio(seed):
    pin = pytest.importorskip("pinocchio")
    model, plain, rng = with_armature_and_ref(seed)
    pm, _, _ = to_pinocchio(plain)                  # the given placements; ref as a coordinate shift
    perm = v_perm(plain)
    pm.armature = model.armature[perm]
    pd = pm.createData()
    q = random_q(model, rng)
    shift = model.neutral() - plain.neutral()         # ref on one-coordinate joints, 0 elsewhere
    qp = q_to_pin(plain, q - shift)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    ip = np.argsort(perm)
    scale = max(1.0, np.abs(Mp).max())
    for M in (crba.mass_matrix(model, q), dynamics.mass_matrix(model, q)):
        np.testing.assert_allclose(M[np.ix_(perm, perm)], Mp, atol=1e-10 * scale)
    tau_p = pin.rnea(pm, pd, qp, v[perm], a[perm])
    for tau in (rnea.inverse_dynamics(model, q, v, a), dynamics.inverse_dynamics(model, q, v, a)):
        np.testing.assert_allclose(tau[perm], tau_p, atol=1e-10 * max(1.0, np.abs(tau_p).max()))
    acc_p = pin.aba(pm, pd, qp, v[perm], a[perm])
    for acc in (aba.forward_dynamics(model, q, v, a), dynamics.forward_dynamics(model, q, v, a)):
        np.testing.assert_allclose(acc[perm], acc_p, atol=1e-9 * max(1.0, np.abs(acc_p).max()))
    np.testing.assert_allclose(innovations.mass_matrix_inverse(model, q), np.linalg.inv(Mp)[np.ix_(ip, ip)],
                               atol=1e-9 * max(1.0, np.abs(np.linalg.inv(Mp)).max()))
    assert innovations.mass_matrix_logdet(model, q) == pytest.approx(np.linalg.slogdet(Mp)[1], rel=1e-10)
    assert energy.kinetic_energy(model, q, v) == pytest.approx(0.5 * v[perm] @ Mp @ v[perm], rel=1e-10)
    # at the reference configuration (ref) the bodies are at their given placements
    R, p = kinematics.body_poses(plain, plain.neutral())
    R_ref, p_ref = kinematics.body_poses(model, model.neutral())
    np.testing.assert_allclose(R_ref, R, atol=1e-12)
    np.testing.assert_allclose(p_ref, p, atol=1e-12)


def test_ref_on_a_multi_axis_joint_is_refused():
    (b,) = random_bodies(np.random.default_rng(0), 1, ("spherical",))
    with pytest.raises(ValueError, match="ref is defined for"):
        dynamics.build_model([dataclasses.replace(b, ref=0.1)])


@pytest.mark.parametrize("seed", range(3))
def test_aggregated_tree_keeps_each_members_rotor_inertia(seed):
    """Compound nodes (seed 000) carry their members' armature on the diagonal: M, inverse and
    forward dynamics of the aggregated tree equal Pinocchio's with ``model.armature``."""
    pin = pytest.importorskip("pinocchio")
    from mbcompose.dynamics.closed import aggregated as ag
    from mbcompose.dynamics.topology import satisfies_aggregation_condition

    model, plain, rng = with_armature_and_ref(seed + 10)
    pairs = [frozenset((int(model.parent[k]), k)) for k in range(model.n_bodies) if model.parent[k] >= 0]
    sets = [S for S in pairs if satisfies_aggregation_condition(model.tree.parent, S, -1)][:1]
    assert sets
    am = ag.AggregatedModel(model, sets)
    pm, _, _ = to_pinocchio(plain)
    perm = v_perm(plain)
    pm.armature = model.armature[perm]
    pd = pm.createData()
    q = random_q(model, rng)
    qp = q_to_pin(plain, q - (model.neutral() - plain.neutral()))
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    np.testing.assert_allclose(ag.mass_matrix(am, q)[np.ix_(perm, perm)], Mp, atol=1e-10 * max(1.0, np.abs(Mp).max()))
    acc = pin.aba(pm, pd, qp, v[perm], tau[perm])
    np.testing.assert_allclose(ag.forward_dynamics(am, q, v, tau)[perm], acc, atol=1e-9 * max(1.0, np.abs(acc).max()))
    t = pin.rnea(pm, pd, qp, v[perm], tau[perm])
    np.testing.assert_allclose(ag.inverse_dynamics(am, q, v, tau)[perm], t, atol=1e-9 * max(1.0, np.abs(t).max()))
