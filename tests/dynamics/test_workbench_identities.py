"""Operator identities of seed 002 (Eqs. 18, 21, 26, 27, 29, 30, 35) and seed 001 (Lemmas 3, 5, 6, 9,
10, 11) typed as workbench expressions on seeded random trees.

Models: generic SKO models with random non-square weights, random joint maps
(some nodes with n_k = 0) and random SPD inertias (seed 001 section 2.3), as
branching trees and as serial chains; and rigid-body trees of
:func:`dynamics.build_model` (revolute and prismatic joints).  Up to 20 nodes.

Reference: every side of every identity is also evaluated densely with numpy
from the block lists (``E`` dense, ``phi = inv(I - E)``, ``P`` from a dense
fixed-point iteration of the Riccati equation, ``psi = inv(I - E_psi)``), and
both the operator value and ``(lhs - rhs).isZero()`` are checked to 1e-10
(relative to the size of the terms).
"""

from __future__ import annotations

import numpy as np
import pytest

from mbcompose.dynamics.workbench import (DClass, DinvClass, EPhiClass, EPsiClass, GClass, HClass, HStarClass, IdClass,
                                KClass, MClass, PClass, SKOStarClass, SPOClass, SPOStarClass, Subgraph,
                                TauBarClass, TauClass)
from test_workbench_support import Dense, model_blocks, random_generic_sko, random_rigid_model, rel_err

TOL = 1e-10

CASES = [("generic", s) for s in range(6)] + [("generic-chain", s) for s in range(3)] + \
        [("rigid", s) for s in range(4)] + [("rigid-chain", 0)]


def build(kind, seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(8, 21))
    chain = kind.endswith("chain")
    if kind.startswith("generic"):
        blocks = random_generic_sko(rng, n, chain=chain)
    else:
        model = random_rigid_model(rng, n, chain=chain, types=("revolute", "prismatic"))
        blocks = model_blocks(model, rng.normal(size=model.nv))
    g = Subgraph.from_blocks(*blocks)
    d = Dense(*blocks)
    P = d.riccati_P()
    return g, d, dict(d.articulated(P), P=P)


class Ops:
    """The workbench operators of g, with the papers' names."""

    def __init__(self, g):
        self.H, self.Hst, self.M, self.P = HClass(g), HStarClass(g), MClass(g), PClass(g)
        self.ephi, self.epsi = EPhiClass(g), EPsiClass(g)
        self.phi, self.phistar = SPOClass(self.ephi), SPOStarClass(self.ephi)
        self.psi, self.psistar = SPOClass(self.epsi), SPOStarClass(self.epsi)
        self.D, self.Dinv, self.G, self.K = DClass(g), DinvClass(g), GClass(g), KClass(g)
        self.tau, self.taubar = TauClass(g), TauBarClass(g)
        self.Id = IdClass(g)
        self.phitilde = self.phi - self.Id
        self.psitilde = self.psi - self.Id


def check(lhs, rhs, lhs_dense, rhs_dense):
    assert rel_err(lhs.asArray(), lhs_dense) < TOL
    assert rel_err(rhs.asArray(), rhs_dense) < TOL
    assert rel_err(lhs_dense, rhs_dense) < TOL  # the identity itself, dense
    assert (lhs - rhs).isZero()


@pytest.fixture(params=CASES, ids=[f"{k}-{s}" for k, s in CASES])
def case(request):
    g, d, a = build(*request.param)
    return g, Ops(g), d, a


def test_derived_operators_match_the_dense_definitions_of_eq_24(case):
    g, o, d, a = case
    for name in ("P", "D", "Dinv", "G", "K", "taubar"):
        assert rel_err(getattr(o, name).asArray(), a[name]) < TOL, name
    assert (o.D - o.H * o.P * o.Hst).isZero()
    assert (o.G - o.P * o.Hst * o.Dinv).isZero()
    assert (o.K - o.ephi * o.G).isZero()
    assert (o.taubar - (o.Id - o.G * o.H)).isZero()
    assert (o.epsi - o.ephi * o.taubar).isZero()
    assert rel_err(o.epsi.asArray(), a["Epsi"]) < TOL


def test_eq_16_mass_matrix_and_eq_18_20_crb_decomposition(case):
    g, o, d, a = case
    R = o.ephi.LyapunovRecursion(o.M)
    check(o.phi * o.M * o.phistar, o.phi * R + R * o.phistar - R, d.phi @ d.M @ d.phi.T, d.phi @ d.M @ d.phi.T)
    assert rel_err((o.H * o.phi * o.M * o.phistar * o.Hst).asArray(), d.mass) < TOL
    Rd = R.asArray()
    assert rel_err(d.M, Rd - d.E @ Rd @ d.E.T) < TOL  # Eq. 21


def test_lemma_3_forward_lyapunov_with_two_different_spo_operators(case):
    # phi X psi* = Y + phi~ Y + Y psi~*,  X = Y - E_phi Y E_psi*  (seed 001 Eqs. 11-12)
    g, o, d, a = case
    X = o.M
    Y = o.ephi.LyapunovRecursion(X, o.epsi)
    Yd = Y.asArray()
    assert rel_err(X.asArray(), Yd - d.E @ Yd @ a["Epsi"].T) < TOL
    Z = d.phi @ d.M @ a["psi"].T
    check(o.phi * X * o.psistar, Y + o.phitilde * Y + Y * (o.psistar - o.Id), Z, Z)


def test_eq_26_four_identities(case):
    g, o, d, a = case
    Id, H, phi, psi, K = o.Id, o.H, o.phi, o.psi, o.K
    I = np.eye(d.H.shape[0])
    Hd, ph, ps, Kd = d.H, d.phi, a["psi"], a["K"]
    check((Id - H * psi * K) * H * phi, H * psi, (I - Hd @ ps @ Kd) @ Hd @ ph, Hd @ ps)
    check(phi * K * (Id - H * psi * K), psi * K, ph @ Kd @ (I - Hd @ ps @ Kd), ps @ Kd)
    check((Id + H * phi * K) * H * psi, H * phi, (I + Hd @ ph @ Kd) @ Hd @ ps, Hd @ ph)
    check(psi * K * (Id + H * phi * K), phi * K, ps @ Kd @ (I + Hd @ ph @ Kd), ph @ Kd)


def test_eq_27_H_psi_M_psistar_Hst_is_D(case):
    g, o, d, a = case
    check(o.H * o.psi * o.M * o.psistar * o.Hst, o.D, d.H @ a["psi"] @ d.M @ a["psi"].T @ d.H.T, a["D"])


def test_eq_28_29_30_innovations_factorization_inverse_and_mass_matrix_inverse(case):
    g, o, d, a = case
    InFac = o.Id + o.H * o.phi * o.K
    InFacInv = o.Id - o.H * o.psi * o.K
    U = np.eye(d.mass.shape[0]) + d.H @ d.phi @ a["K"]
    check(InFac * o.D * InFac.getTranspose(), o.H * o.phi * o.M * o.phistar * o.Hst, U @ a["D"] @ U.T, d.mass)
    assert rel_err(InFacInv.asArray(), np.linalg.inv(U)) < TOL  # Eq. 29 against numpy's inverse
    assert (InFac * InFacInv).isIdentity() and (InFacInv * InFac).isIdentity()
    Minv = InFacInv.getTranspose() * o.Dinv * InFacInv  # Eq. 30
    assert rel_err(Minv.asArray(), np.linalg.inv(d.mass)) < 1e-9
    assert (o.H * o.phi * o.M * o.phistar * o.Hst * Minv).isIdentity(1e-9)
    # det M = prod det D(k) (seed 001 Lemma 11) against numpy's det
    logdet = sum(np.log(np.linalg.det(o.D(k))) for k in g.nodes if o.D(k).size)
    assert abs(logdet - np.linalg.slogdet(d.mass)[1]) < 1e-9 * max(1.0, abs(logdet))


def test_lemma_9_identities_eqs_38_to_41(case):
    g, o, d, a = case
    Id, H, G, tau, taubar, phi, epsi, psi, P, M = o.Id, o.H, o.G, o.tau, o.taubar, o.phi, o.epsi, o.psi, o.P, o.M
    assert (H * G - Id).isZero() and (H * tau - H).isZero() and (H * taubar).isZero()  # Eq. 38
    check(Id + H * phi * o.K, H * phi * G, np.eye(d.mass.shape[0]) + d.H @ d.phi @ a["K"], d.H @ d.phi @ a["G"])
    check(H * phi * taubar, H * phi * epsi, d.H @ d.phi @ a["taubar"], d.H @ d.phi @ a["Epsi"])  # Eq. 39
    check(H * phi * tau, H * phi * (Id - epsi), d.H @ d.phi @ (d.I - a["taubar"]),
          d.H @ d.phi @ (d.I - a["Epsi"]))  # Eq. 40
    Z = d.phi @ d.M @ a["psi"].T
    check(phi * M * o.psistar, P + o.phitilde * P + P * o.psitilde.getTranspose(), Z, Z)  # Eq. 41


def test_lemma_10_identities_eqs_42_to_48(case):
    g, o, d, a = case
    Id, H, Hst, K, D, P, M, phi, psi, phistar, psistar = (o.Id, o.H, o.Hst, o.K, o.D, o.P, o.M, o.phi, o.psi,
                                                          o.phistar, o.psistar)
    ph, ps, Kd, Hd, Pd = d.phi, a["psi"], a["K"], d.H, a["P"]
    I = d.I
    psiinv, phiinv = psi.inverse(), phi.inverse()
    check(psi * M * psistar, P + o.psitilde * P + P * o.psitilde.getTranspose(), ps @ d.M @ ps.T,
          ps @ d.M @ ps.T)  # Eq. 42
    check(psiinv - phiinv, K * H, np.linalg.inv(ps) - np.linalg.inv(ph), Kd @ Hd)  # Eq. 43
    check(psiinv * phi, Id + K * H * phi, np.linalg.inv(ps) @ ph, I + Kd @ Hd @ ph)  # Eq. 44
    check(phi * psiinv, Id + phi * K * H, ph @ np.linalg.inv(ps), I + ph @ Kd @ Hd)
    check(phiinv * psi, Id - K * H * psi, np.linalg.inv(ph) @ ps, I - Kd @ Hd @ ps)
    check(psi * phiinv, Id - psi * K * H, ps @ np.linalg.inv(ph), I - ps @ Kd @ Hd)
    check(H * psi * M * psistar * Hst, D, Hd @ ps @ d.M @ ps.T @ Hd.T, a["D"])  # Eq. 46
    # Eq. 47, derived again (tildes lost in the OCR): phi M phi* = P + phi~ P + P phi~* + phi K D K* phi*
    check(phi * M * phistar, P + o.phitilde * P + P * o.phitilde.getTranspose() + phi * K * D * K.T * phistar,
          ph @ d.M @ ph.T, Pd + (ph - I) @ Pd + Pd @ (ph - I).T + ph @ Kd @ a["D"] @ Kd.T @ ph.T)
    check(phi * M * phistar * Hst, (Id + phi * K * H) * P * phistar * Hst, ph @ d.M @ ph.T @ Hd.T,
          (I + ph @ Kd @ Hd) @ Pd @ ph.T @ Hd.T)  # Eq. 48


def test_backward_lyapunov_gives_the_diagonal_of_omega_and_eq_35_holds_on_chains(case):
    g, o, d, a = case
    Y = SKOStarClass(o.epsi).LyapunovRecursion(o.Hst * o.Dinv * o.H)  # Eqs. 36-37
    Om = a["psi"].T @ d.H.T @ a["Dinv"] @ d.H @ a["psi"]
    Omega = o.psistar * o.Hst * o.Dinv * o.H * o.psi  # Eq. 34
    assert rel_err(Omega.asArray(), Om) < TOL
    assert rel_err(Y.asArray(), d.blockdiag_x(Om)) < TOL  # seed 001 Lemma 5
    Yd = Y.asArray()
    X = d.H.T @ a["Dinv"] @ d.H
    assert rel_err(X, Yd - d.blockdiag_x(a["Epsi"].T @ Yd @ a["Epsi"])) < TOL  # Eq. 22
    decomposition = o.psistar * Y + Y * o.psi - Y
    # Eqs. 33-34: Omega = phi* H* M^-1 H phi, with M^-1 from numpy
    assert rel_err(Om, d.phi.T @ d.H.T @ np.linalg.inv(d.mass) @ d.H @ d.phi) < 1e-9
    if (np.diff(d.parent) == 1).all():  # serial chain: Eq. 35 (seed 001 Lemma 6)
        check(Omega, decomposition, Om, Om)
    else:  # trees: Eq. 35 holds on the blocks of related node pairs (seed 001 Eq. 21)
        diff = (Omega - decomposition).asArray()
        for i in range(len(d.m)):
            for j in range(len(d.m)):
                if _related(d.parent, i, j):
                    assert np.max(np.abs(diff[d.xs(i), d.xs(j)]), initial=0) < TOL * max(1, np.abs(Om).max())


def _related(parent, i, j):
    def anc(k):
        out = {k}
        while parent[k] >= 0:
            k = parent[k]
            out.add(k)
        return out

    return i in anc(j) or j in anc(i)
