"""Sensitivities (seed 002 Eqs. 38, 42-48) against central finite differences.

References: central differences of the recursively computed quantities along
``q (+) h e_i`` (the same chart in which the analytic derivatives are taken),
Pinocchio's non-linear effects and gravity for ``C v``, and the skew-symmetry of
``M_dot - 2 C`` with ``M_dot`` by finite differences along v.
"""

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose.dynamics.coriolis import christoffel_symbols, coriolis_matrix, coriolis_matrix_christoffel
from mbcompose.dynamics.fixman import fixman_gradient, fixman_gradient_eq48
from mbcompose.dynamics.innovations import innovations_factors_sko
from mbcompose.dynamics.model import weights
from mbcompose.dynamics.riccati import articulated_body
from mbcompose.dynamics.sensitivity import (articulated_body_sensitivity, innovations_factors_sensitivity,
                                  mass_matrix_sensitivity)
from trees import ALL_TYPES, q_to_pin, random_bodies, random_q, to_pinocchio, v_perm

H = 1e-5
EUCLIDEAN = ("revolute", "prismatic", "cylindrical", "universal", "continuous", "fixed")


def make(seed, types=ALL_TYPES, n=None):
    rng = np.random.default_rng(4000 + seed)
    model = dyn.build_model(random_bodies(rng, n or int(rng.integers(3, 12)), types))
    return model, random_q(model, rng), rng


def fd(model, q, i, f):
    e = np.zeros(model.nv)
    e[i] = H
    return (f(dyn.integrate(model, q, e)) - f(dyn.integrate(model, q, -e))) / (2 * H)


def rel(a, b):
    if np.size(b) == 0:
        return 0.0
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(1.0, np.max(np.abs(b)))


@pytest.mark.parametrize("seed", range(8))
def test_mass_matrix_sensitivity_eq42_matches_finite_differences(seed):
    model, q, _ = make(seed)
    dM = mass_matrix_sensitivity(model, q)
    for i in range(model.nv):
        assert rel(dM[i], fd(model, q, i, lambda x: dyn.mass_matrix(model, x))) < 1e-6
        assert np.allclose(dM[i], mass_matrix_sensitivity(model, q, i))


def ab_quantities(model, q):
    w = weights(model, q[None])
    ab = articulated_body(w)
    return w, ab


@pytest.mark.parametrize("seed", range(6))
def test_articulated_body_sensitivities_eq43_44_match_finite_differences(seed):
    model, q, _ = make(seed)
    for i in range(model.nv):
        s = articulated_body_sensitivity(model, q, i)
        e = np.zeros(model.nv)
        e[i] = H
        abp = ab_quantities(model, dyn.integrate(model, q, e))[1]
        abm = ab_quantities(model, dyn.integrate(model, q, -e))[1]
        for name, an in (("P", s.lam), ("D", s.dD), ("Dinv", s.dDinv), ("G", s.dG), ("tau_bar", s.dtau_bar),
                         ("psi", s.dpsi), ("K", s.dK)):
            for k in range(model.n_bodies):
                if an[k] is None:
                    continue
                num = (getattr(abp, name)[k][0] - getattr(abm, name)[k][0]) / (2 * H)
                assert rel(an[k][0], num) < 1e-6, (name, i, k)


@pytest.mark.parametrize("seed", range(6))
def test_innovations_factor_sensitivities_eq45_46_match_finite_differences(seed):
    model, q, _ = make(seed)
    for i in range(model.nv):
        dL, dLinv = innovations_factors_sensitivity(model, q, i)
        assert rel(dL, fd(model, q, i, lambda x: dyn.innovations_factors(model, x).L)) < 1e-6
        assert rel(dLinv, fd(model, q, i, lambda x: dyn.innovations_factors(model, x).Linv)) < 1e-6


@pytest.mark.parametrize("seed", range(8))
def test_fixman_gradient_eq48_matches_finite_difference_of_logdet(seed):
    model, q, _ = make(seed, n=int(4 + 3 * seed))
    g = fixman_gradient(model, q)
    num = np.array([fd(model, q, i, lambda x: dyn.mass_matrix_logdet(model, x)) for i in range(model.nv)])
    assert rel(g, num) < 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_sensitivities_with_universal_joints_match_finite_differences(seed):
    model, q, _ = make(seed, ("universal", "revolute"), n=6)
    num = np.array([fd(model, q, i, lambda x: dyn.mass_matrix_logdet(model, x)) for i in range(model.nv)])
    assert rel(fixman_gradient(model, q), num) < 1e-6
    for i in range(model.nv):
        dL, dLinv = innovations_factors_sensitivity(model, q, i)
        assert rel(dL, fd(model, q, i, lambda x: dyn.innovations_factors(model, x).L)) < 1e-6
        assert rel(dLinv, fd(model, q, i, lambda x: dyn.innovations_factors(model, x).Linv)) < 1e-6
        s = articulated_body_sensitivity(model, q, i)
        for k in range(model.n_bodies):
            assert rel(s.dG[k][0], fd(model, q, i, lambda x: ab_quantities(model, x)[1].G[k][0])) < 1e-6
            assert rel(s.lam[k][0], fd(model, q, i, lambda x: ab_quantities(model, x)[1].P[k][0])) < 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_fixman_general_form_reduces_to_literal_eq48_for_revolute_joints(seed):
    model, q, _ = make(seed, ("revolute",), n=10)
    assert rel(fixman_gradient(model, q), fixman_gradient_eq48(model, q)) < 1e-10


@pytest.mark.parametrize("seed", range(8))
def test_Mdot_minus_2C_is_skew_and_Cv_is_the_velocity_part_of_pinocchio_bias(seed):
    pin = pytest.importorskip("pinocchio")
    model, q, rng = make(seed)
    v = rng.normal(size=model.nv)
    C = coriolis_matrix(model, q, v)
    h = 1e-6
    Mdot = (dyn.mass_matrix(model, dyn.integrate(model, q, v, h)) -
            dyn.mass_matrix(model, dyn.integrate(model, q, v, -h))) / (2 * h)
    S = Mdot - 2 * C
    assert np.max(np.abs(S + S.T)) < 1e-6 * max(1.0, np.max(np.abs(Mdot)))
    pm, jid, off = to_pinocchio(model)
    pd = pm.createData()
    perm = v_perm(model)
    qp = q_to_pin(model, q)
    ref = pin.nonLinearEffects(pm, pd, qp, v[perm]) - pin.computeGeneralizedGravity(pm, pd, qp)
    assert rel((C @ v)[perm], ref) < 1e-10


@pytest.mark.parametrize("seed", range(5))
def test_christoffel_symbols_eq38_give_the_same_coriolis_matrix(seed):
    model, q, rng = make(seed, EUCLIDEAN)
    v = rng.normal(size=model.nv)
    c = christoffel_symbols(model, q)
    assert np.allclose(c, np.swapaxes(c, -1, -2))           # symmetric in (j, k)
    assert rel(coriolis_matrix_christoffel(model, q, v), coriolis_matrix(model, q, v)) < 1e-10


def test_christoffel_symbols_refuse_non_euclidean_coordinates():
    model, q, _ = make(0, ("spherical", "revolute"), n=4)
    if model.is_euclidean:
        pytest.skip("draw had no spherical joint")
    with pytest.raises(ValueError):
        christoffel_symbols(model, q)
