"""Sensitivity operators of seed 002 section 5 (Eqs. 39-48) against central finite differences.

Rigid trees with rotational hinges (the paper's assumption).  Which operator
derivative formulas hold depends on the frame the node blocks are expressed in;
every variant is checked for every hinge i against finite differences of the
dense block matrices built from :func:`dynamics.model.weights`:

* inertial ("world") frames -- Eqs. 41a, c, d as printed once ``<=``/``>=`` are read as
  "i and outboard" on the left and "strictly outboard" on the right; Eq. 41b derived
  again: ``[phi]_i = phi H~_{=i} phi - phi H~_{<=i} + H~_{<i} phi``; Eqs. 43-46 as printed
  except Eq. 44f, whose left factor must be ``H~_{<=i}`` (derived again, checked);
* body frames of :mod:`dynamics.model` -- only ``E_phi(parent(i), i)`` moves:
  ``[E_phi]_i = E_phi H~_{=i}``, ``[phi]_i = (phi - I) H~_{=i} phi``, ``[M]_i = [H*]_i = 0``;
* hinge frames (Listing 18) -- ``[E_phi]_i = H~_{=i} E_phi``, ``[M]_i = H~_{=i} M - M H~_{=i}``.

Eq. 42 (mass matrix, against Pinocchio's crba) and Eq. 48 (Fixman gradient, against
``slogdet``) do not depend on the frames and are checked in all of them.
"""

from __future__ import annotations

import numpy as np
import pytest

from mbcompose.dynamics.workbench import (EPhiClass, EPsiClass, GClass, H_iClass, HClass, Hd_iClass, HStarClass, Hs_iClass,
                                IdClass, KClass, MClass, PClass, SKOStarClass, SPOClass, Subgraph, DClass,
                                DinvClass, TauBarClass, TauClass)
from test_workbench_support import (Dense, block_udu, central_difference, frame_blocks, pin_mass_matrix,
                                    random_rigid_model, rel_err)

FD_TOL = 1e-6
N = 9


@pytest.fixture(scope="module")
def system():
    rng = np.random.default_rng(2024)
    model = random_rigid_model(rng, N, types=("revolute",))
    return model, rng.normal(size=model.nv)


def g_in(model, q, frames):
    return Subgraph.from_blocks(*frame_blocks(model, q, frames))


def fd(model, q, i, frames, what):
    def f(x):
        d = Dense(*frame_blocks(model, x, frames))
        if what in ("E", "phi", "M", "H"):
            return getattr(d, what)
        a = d.articulated(d.riccati_P())
        if what == "P":
            return d.riccati_P()
        return a[what]
    return central_difference(f, q, i)


HINGES = list(range(N))


@pytest.mark.parametrize("i", HINGES)
def test_eq_41_basic_operator_derivatives_in_inertial_frames(system, i):
    model, q = system
    g = g_in(model, q, "world")
    Hle, Hlt, Hd = H_iClass(g, i), Hs_iClass(g, i), Hd_iClass(g, i)
    ephi, M, Hst = EPhiClass(g), MClass(g), HStarClass(g)
    phi = SPOClass(ephi)
    assert rel_err((Hle * ephi - ephi * Hlt).asArray(), fd(model, q, i, "world", "E")) < FD_TOL  # Eq. 41a
    assert rel_err((phi * Hd * phi - phi * Hle + Hlt * phi).asArray(), fd(model, q, i, "world", "phi")) < FD_TOL
    assert rel_err((Hlt * Hst).asArray(), fd(model, q, i, "world", "H").T) < FD_TOL  # Eq. 41c
    assert rel_err((Hle * M - M * Hle).asArray(), fd(model, q, i, "world", "M")) < FD_TOL  # Eq. 41d


@pytest.mark.parametrize("i", HINGES[::2])
def test_basic_operator_derivatives_in_body_and_hinge_frames(system, i):
    model, q = system
    gb, gh = g_in(model, q, "body"), g_in(model, q, "hinge")
    Eb, Eh = EPhiClass(gb), EPhiClass(gh)
    Hdb, Hdh = Hd_iClass(gb, i), Hd_iClass(gh, i)
    assert rel_err((Eb * Hdb).asArray(), fd(model, q, i, "body", "E")) < FD_TOL
    phib = SPOClass(Eb)
    assert rel_err(((phib - IdClass(gb)) * Hdb * phib).asArray(), fd(model, q, i, "body", "phi")) < FD_TOL
    assert np.max(np.abs(fd(model, q, i, "body", "M"))) == 0
    assert rel_err((Hdh * Eh).asArray(), fd(model, q, i, "hinge", "E")) < FD_TOL
    assert rel_err((Hdh * MClass(gh) - MClass(gh) * Hdh).asArray(), fd(model, q, i, "hinge", "M")) < FD_TOL


@pytest.mark.parametrize("frames", ["body", "world", "hinge"])
def test_eq_42_mass_matrix_sensitivity_for_every_hinge(system, frames):
    model, q = system
    g = g_in(model, q, frames)
    H, Hst, M, ephi = HClass(g), HStarClass(g), MClass(g), EPhiClass(g)
    phi, phistar = SPOClass(ephi), SPOClass(ephi).getTranspose()
    for i in HINGES:
        Hd = Hd_iClass(g, i)
        Mi = H * phi * (Hd * phi * M - M * phistar * Hd) * phistar * Hst
        ref = central_difference(lambda x: pin_mass_matrix(model, x), q, i)
        assert rel_err(Mi.asArray(), ref) < FD_TOL, i


@pytest.mark.parametrize("i", HINGES)
def test_eqs_43_44_articulated_body_sensitivities_in_inertial_frames(system, i):
    model, q = system
    g = g_in(model, q, "world")
    H, Hst, P, epsi = HClass(g), HStarClass(g), PClass(g), EPsiClass(g)
    D, Dinv, G, tau, taubar = DClass(g), DinvClass(g), GClass(g), TauClass(g), TauBarClass(g)
    Hd, Hs = Hd_iClass(g, i), Hs_iClass(g, i)
    lam = epsi.LyapunovRecursion(Hd * P - P * Hd)  # Eq. 43
    assert rel_err(lam.asArray(), fd(model, q, i, "world", "P") - (Hs * P - P * Hs).asArray()) < FD_TOL
    assert rel_err((H * lam * Hst).asArray(), fd(model, q, i, "world", "D")) < FD_TOL  # 44a
    assert rel_err((-1.0 * Dinv * H * lam * Hst * Dinv).asArray(), fd(model, q, i, "world", "Dinv")) < FD_TOL  # 44b
    assert rel_err((taubar * lam * Hst * Dinv + Hs * G).asArray(), fd(model, q, i, "world", "G")) < FD_TOL  # 44c
    tau_i = taubar * lam * Hst * Dinv * H + Hs * tau - tau * Hs  # 44d
    assert rel_err((-1.0 * tau_i).asArray(), fd(model, q, i, "world", "taubar")) < FD_TOL  # 44d-e
    # 44f as printed has H~_{<i} on the left; derived again from E_psi = E_phi tau_bar, Eq. 41a and
    # Eq. 44e the left factor is H~_{<=i} (as in Eq. 41a); the printed form fails when i has children
    Hle = H_iClass(g, i)
    epsi_i = Hle * epsi - epsi * Hs - epsi * lam * Hst * Dinv * H  # 44f (corrected)
    assert rel_err(epsi_i.asArray(), fd(model, q, i, "world", "Epsi")) < FD_TOL
    printed = Hs * epsi - epsi * Hs - epsi * lam * Hst * Dinv * H
    has_children = any(model.parent[c] == i for c in range(N))
    assert (rel_err(printed.asArray(), fd(model, q, i, "world", "Epsi")) < FD_TOL) == (not has_children)
    # D_i does not depend on the frames: compare with the U D U* elimination of Pinocchio's M
    fdD = central_difference(lambda x: block_udu(pin_mass_matrix(model, x), np.arange(N + 1))[1], q, i)
    assert rel_err((H * lam * Hst).asArray(), fdD) < FD_TOL


@pytest.mark.parametrize("i", HINGES)
def test_eqs_45_46_innovations_factor_sensitivities_in_inertial_frames(system, i):
    model, q = system
    g = g_in(model, q, "world")
    H, Hst, P, epsi, ephi = HClass(g), HStarClass(g), PClass(g), EPsiClass(g), EPhiClass(g)
    Dinv, taubar, K, Id = DinvClass(g), TauBarClass(g), KClass(g), IdClass(g)
    phi, psi = SPOClass(ephi), SPOClass(epsi)
    Hd = Hd_iClass(g, i)
    lam = epsi.LyapunovRecursion(Hd * P - P * Hd)
    InFacInv = Id - H * psi * K
    InFac_i = H * phi * (Hd * (phi - Id) * P + taubar * lam) * Hst * Dinv  # Eq. 45
    InFacInv_i = -H * psi * (Hd * phi * K + taubar * lam * Hst * Dinv) * InFacInv  # Eq. 46
    U = lambda x: block_udu(pin_mass_matrix(model, x), np.arange(N + 1))[0]  # noqa: E731
    assert rel_err(InFac_i.asArray(), central_difference(U, q, i)) < FD_TOL
    assert rel_err(InFacInv_i.asArray(), central_difference(lambda x: np.linalg.inv(U(x)), q, i)) < FD_TOL


@pytest.mark.parametrize("frames", ["body", "world", "hinge"])
def test_eq_48_fixman_potential_gradient_for_every_hinge(system, frames):
    model, q = system
    g = g_in(model, q, frames)
    H, Hst, Dinv, P, epsi = HClass(g), HStarClass(g), DinvClass(g), PClass(g), EPsiClass(g)
    Y = SKOStarClass(epsi).LyapunovRecursion(Hst * Dinv * H)
    for i in HINGES:
        grad = 2 * np.trace(P(i) @ Y(i) @ Hd_iClass(g, i)(i))
        ref = central_difference(lambda x: np.linalg.slogdet(pin_mass_matrix(model, x))[1], q, i)
        assert abs(grad - ref) < FD_TOL * max(1.0, abs(ref)), i


def test_sensitivity_operators_refuse_non_rotational_or_multi_dof_nodes():
    rng = np.random.default_rng(5)
    from test_workbench_support import random_generic_sko

    g = Subgraph.from_blocks(*random_generic_sko(rng, 5))
    with pytest.raises(ValueError, match="single-dof hinge"):
        Hd_iClass(g, 0)
