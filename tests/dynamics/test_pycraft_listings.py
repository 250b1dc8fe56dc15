"""Seed 002 (PyCraft), Listings 1-23, transcribed and executed.

Each test is named after its listing and keeps the listing's code as close to
the paper's text as Python allows (Python needs ``@`` for products of plain
blocks and ``np.trace`` for ``Trace{}``; typos of the printed listings are
noted where they occur).  Results are checked against independent references:
dense block matrices built from the block definitions (``E_phi`` dense,
``phi = (I - E_phi)^-1`` by numpy), numpy's inv/det, a dense block ``U D U*``
elimination of Pinocchio's mass matrix (innovations factors without Riccati),
Pinocchio (crba, rnea, aba, frame Jacobians, computeMinverse) and central
finite differences for the sensitivities.

System ``g``: a seeded random branching tree of 12 rigid bodies with revolute
(and, where the listing allows, prismatic) joints, blocks from
:func:`dynamics.model.weights` in body frames unless a test says otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest

from mbcompose.dynamics.workbench import (BStarClass, EPhiClass, EPsiClass, H_iClass, HClass, Hd_iClass, HStarClass,
                                Hs_iClass, IdClass, MClass, PClass, SKOStarClass, SpatialDiagonalMatrixOperator,
                                SpatialVector, SPOClass, SPOStarClass, SKOClass, Subgraph)
from test_workbench_support import (Dense, block_udu, central_difference, frame_blocks, model_blocks,
                                    pin_mass_matrix, random_rigid_model, rel_err, subtree, to_pinocchio)

pin = pytest.importorskip("pinocchio")

TOL = 1e-10
FD_TOL = 1e-6


def make(seed=3, n=12, chain=False, types=("revolute", "prismatic"), frames="body", v=False):
    rng = np.random.default_rng(seed)
    model = random_rigid_model(rng, n, chain=chain, types=types)
    q = rng.normal(size=model.nv)
    vel = rng.normal(size=model.nv) if v else None
    if frames == "body":
        g = Subgraph.from_model(model, q, vel)
    else:
        g = Subgraph.from_blocks(*frame_blocks(model, q, frames))
    g.v_test = vel
    return model, q, g, rng


def basic(g):
    """Listings 1, 2 (the operators), 6-9 (articulated body operators), in the paper's names."""
    ns = {}
    ns["H"] = HClass(g)
    ns["ephi"] = EPhiClass(g)
    ns["M"] = MClass(g)
    ns["Hst"] = HStarClass(g)
    ns["phi"] = SPOClass(ns["ephi"])
    ns["phistar"] = SPOStarClass(ns["ephi"])
    ns["P"] = PClass(g)
    ns["D"] = ns["H"] * ns["P"] * ns["Hst"]
    ns["Dinv"] = ns["D"].inverse()
    ns["G"] = ns["P"] * ns["Hst"] * ns["Dinv"]
    ns["K"] = ns["ephi"] * ns["G"]
    ns["tau"] = ns["G"] * ns["H"]
    ns["Id"] = IdClass(g)
    ns["taubar"] = ns["Id"] - ns["tau"]
    ns["epsi"] = EPsiClass(g)
    ns["psi"] = SPOClass(ns["epsi"])
    ns["psistar"] = SPOStarClass(ns["epsi"])
    return ns


def pin_data(model, q):
    pm = to_pinocchio(model)
    return pm, pm.createData()


# ---------------------------------------------------------------------------
# Section 3
# ---------------------------------------------------------------------------


def test_listing_01_basic_operators_H_ephi_M():
    model, q, g, _ = make()
    H = HClass(g)            # instance of H operator (Eq. 6)
    ephi = EPhiClass(g)      # instance of E_phi operator (Eq. 7)
    M = MClass(g)            # instance of M operator (Eq. 15)
    ref = Dense(*model_blocks(model, q))
    assert np.array_equal(H.asArray(), ref.H)
    assert np.array_equal(ephi.asArray(), ref.E)
    # M(k) of Eq. 14 written out from the mass properties
    for k in range(model.n_bodies):
        m, p, Ic = model.mass[k], model.com[k], model.inertia_com[k]
        pt = np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
        Mk = np.block([[Ic - m * pt @ pt, m * pt], [-m * pt, m * np.eye(3)]])
        assert np.allclose(M[k][k], Mk, atol=1e-14)
    assert np.array_equal(M.asArray(), ref.M)
    # E_phi has the sparsity of the tree's adjacency matrix (seed 002 Eq. 7)
    for i in range(model.n_bodies):
        for j in range(model.n_bodies):
            assert np.any(ephi[i][j]) == (model.parent[j] == i)


def test_listing_02_jacobian_and_mass_matrix():
    model, q, g, rng = make()
    H, ephi, M = HClass(g), EPhiClass(g), MClass(g)
    offsets = {3: rng.normal(size=3), 7: rng.normal(size=3), 11: rng.normal(size=3)}
    nodes = list(offsets.items())
    Hst = HStarClass(g)                    # instance of H* operator (Eq. 6)
    phi = SPOClass(ephi)                   # instance of phi operator (Eq. 9)
    phistar = SPOStarClass(ephi)           # instance of phi* operator (Eq. 9)
    bstar = BStarClass(g, nodes)           # instance of B* operator (Eq. 12)
    Jac = bstar * phistar * Hst            # evaluate the J Jacobian (Eq. 13)
    massmat = H * phi * M * phistar * Hst  # evaluate the M mass matrix (Eq. 16)
    marray = massmat.asArray()             # get M matrix content as a numpy array
    assert isinstance(marray, np.ndarray) and marray.shape == (model.nv, model.nv)
    assert rel_err(marray, pin_mass_matrix(model, q)) < TOL
    # Jacobian against Pinocchio's LOCAL frame Jacobians ([v; w] -> [w; v])
    pm, data = pin_data(model, q)
    fids = [pm.addFrame(pin.Frame(f"nd{k}", k + 1, 0, pin.SE3(np.eye(3), l), pin.FrameType.OP_FRAME))
            for k, l in nodes]
    data = pm.createData()
    pin.computeJointJacobians(pm, data, q)
    pin.updateFramePlacements(pm, data)
    Jref = np.vstack([pin.getFrameJacobian(pm, data, f, pin.ReferenceFrame.LOCAL)[[3, 4, 5, 0, 1, 2]] for f in fids])
    assert rel_err(Jac.asArray(), Jref) < TOL


def test_listing_03_inverse_dynamics_product_is_newton_euler():
    model, q, g, rng = make()
    ns = basic(g)
    H, phi, M, phistar, Hst = (ns[k] for k in ("H", "phi", "M", "phistar", "Hst"))
    thetaddot = SpatialVector(g.joint_space, rng.normal(size=model.nv))
    T = H * phi * M * phistar * Hst * thetaddot  # evaluate M thetaddot for inverse dynamics (Eq. 17)
    assert isinstance(T, SpatialVector) and T.space == g.joint_space
    pm, data = pin_data(model, q)
    ref = pin.rnea(pm, data, q, np.zeros(model.nv), thetaddot.asArray())  # zero gravity, zero velocity
    assert rel_err(T.asArray(), ref) < TOL


def test_listing_04_composite_body_inertia_is_forward_lyapunov_solution():
    model, q, g, _ = make()
    ns = basic(g)
    ephi, M = ns["ephi"], ns["M"]
    R = ephi.LyapunovRecursion(M)  # instance of R operator (Eq. 19)
    assert isinstance(R, SpatialDiagonalMatrixOperator)
    ref = Dense(*model_blocks(model, q))
    # R is the block diagonal of phi M phi* (seed 001 Lemma 3) and solves Eq. 21
    assert rel_err(R.asArray(), ref.blockdiag_x(ref.phi @ ref.M @ ref.phi.T)) < TOL
    Rd = R.asArray()
    assert rel_err(ref.M, Rd - ref.E @ Rd @ ref.E.T) < TOL


def test_listing_05_crb_decomposition_of_the_mass_matrix():
    model, q, g, _ = make()
    ns = basic(g)
    H, phi, phistar, Hst = ns["H"], ns["phi"], ns["phistar"], ns["Hst"]
    R = ns["ephi"].LyapunovRecursion(ns["M"])
    massmat = H * (phi * R + R * phistar - R) * Hst  # the mass matrix M (Eq. 16)
    assert rel_err(massmat.asArray(), pin_mass_matrix(model, q)) < TOL
    ref = Dense(*model_blocks(model, q))
    assert rel_err((phi * R + R * phistar - R).asArray(), ref.phi @ ref.M @ ref.phi.T) < TOL  # Eq. 18


# ---------------------------------------------------------------------------
# Section 4
# ---------------------------------------------------------------------------


def test_listing_06_articulated_body_inertia_solves_the_riccati_equation():
    model, q, g, _ = make()
    P = PClass(g)  # instance of P operator (Eq. 22)
    ref = Dense(*model_blocks(model, q))
    assert rel_err(P.asArray(), ref.riccati_P()) < TOL
    Pd = P.asArray()
    a = ref.articulated(Pd)
    assert rel_err(ref.M, Pd - a["Epsi"] @ Pd @ a["Epsi"].T) < TOL  # Eq. 25


def test_listing_07_articulated_body_operators():
    model, q, g, _ = make()
    H, Hst, P, ephi = HClass(g), HStarClass(g), PClass(g), EPhiClass(g)
    D = H * P * Hst        # evaluate D (Eq. 24)
    Dinv = D.inverse()     # evaluate D^-1 (Eq. 24)
    G = P * Hst * Dinv     # evaluate G (Eq. 24)
    K = ephi * G           # evaluate K (Eq. 24)
    tau = G * H            # evaluate tau (Eq. 24)
    Id = IdClass(g)        # the identity operator
    taubar = Id - tau      # evaluate tau-bar (Eq. 24)
    for op in (D, Dinv, G, tau, taubar):  # "Except for K, all of the operator instances above are block-diagonal"
        assert isinstance(op, SpatialDiagonalMatrixOperator)
    assert isinstance(K, SKOClass) and not isinstance(K, SpatialDiagonalMatrixOperator)
    Mpin = pin_mass_matrix(model, q)
    U, Dref = block_udu(Mpin, Dense(*model_blocks(model, q)).vo)
    assert rel_err(D.asArray(), Dref) < TOL
    assert rel_err(Dinv.asArray(), np.linalg.inv(Dref)) < TOL
    ref = Dense(*model_blocks(model, q))
    a = ref.articulated(ref.riccati_P())
    for name, op in (("G", G), ("K", K), ("taubar", taubar)):
        assert rel_err(op.asArray(), a[name]) < TOL
    assert (H * G - Id).isZero() and (H * taubar).isZero()  # seed 001 Eq. 38


def test_listing_08_epsi_is_ephi_times_taubar():
    model, q, g, _ = make()
    ns = basic(g)
    epsi = EPsiClass(g)  # instance of E_psi operator (Eq. 24)
    assert (epsi - ns["ephi"] * ns["taubar"]).isZero()
    ref = Dense(*model_blocks(model, q))
    assert rel_err(epsi.asArray(), ref.articulated(ref.riccati_P())["Epsi"]) < TOL
    for i in range(model.n_bodies):  # the structure of E_phi (non-zero blocks only on tree edges)
        for j in range(model.n_bodies):
            if model.parent[j] != i:
                assert not np.any(epsi[i][j])


def test_listing_09_psi_spo_operators():
    model, q, g, rng = make()
    eps = EPsiClass(g)
    psi = SPOClass(eps)          # instance of psi = (I - E_psi)^-1 operator
    psistar = SPOStarClass(eps)  # instance of psi* operator
    ref = Dense(*model_blocks(model, q))
    psi_ref = np.linalg.inv(ref.I - eps.asArray())
    assert rel_err(psi.asArray(), psi_ref) < TOL
    assert rel_err(psistar.asArray(), psi_ref.T) < TOL
    x = SpatialVector(g.node_space, rng.normal(size=g.node_space.size))
    assert rel_err((psi * x).asArray(), psi_ref @ x.asArray()) < TOL
    assert rel_err((psistar * x).asArray(), psi_ref.T @ x.asArray()) < TOL


def test_listing_10_operator_identities_eq_26_and_27():
    model, q, g, _ = make()
    ns = basic(g)
    Id, H, psi, K, phi, D, M, psistar, Hst = (ns[k] for k in ("Id", "H", "psi", "K", "phi", "D", "M", "psistar", "Hst"))
    assert ((Id - H * psi * K) * H * phi - H * psi).isZero()  # verify Eq. 26 identity
    assert (D - H * psi * M * psistar * Hst).isZero()         # verify Eq. 27 identity
    # the same two sides, dense
    ref = Dense(*model_blocks(model, q))
    a = ref.articulated(ref.riccati_P())
    lhs = (np.eye(model.nv) - ref.H @ a["psi"] @ a["K"]) @ ref.H @ ref.phi
    assert rel_err(lhs, ref.H @ a["psi"]) < TOL
    assert rel_err(ref.H @ a["psi"] @ ref.M @ a["psi"].T @ ref.H.T, a["D"]) < TOL


def test_listing_11_innovations_factorization():
    model, q, g, _ = make()
    ns = basic(g)
    Id, H, phi, K, D = (ns[k] for k in ("Id", "H", "phi", "K", "D"))
    InFac = Id + H * phi * K                   # Innovations factor [I + H phi K] (Eq. 28)
    massmat = InFac * D * InFac.getTranspose()  # Innovations factorization of M (Eq. 28)
    Mpin = pin_mass_matrix(model, q)
    assert rel_err(massmat.asArray(), Mpin) < TOL
    U, _ = block_udu(Mpin, Dense(*model_blocks(model, q)).vo)
    assert rel_err(InFac.asArray(), U) < TOL


def test_listing_12_innovations_factor_inverse():
    model, q, g, _ = make()
    ns = basic(g)
    Id, H, phi, K, psi = (ns[k] for k in ("Id", "H", "phi", "K", "psi"))
    InFac = Id + H * phi * K
    InFacInv = Id - H * psi * K  # evaluate [I - H psi K]
    assert (InFac * InFacInv).isIdentity()  # verify Eq. 29 identity
    assert rel_err(InFacInv.asArray(), np.linalg.inv(InFac.asArray())) < TOL


def test_listing_13_mass_matrix_inverse():
    model, q, g, _ = make()
    ns = basic(g)
    Id, H, phi, M, phistar, Hst, psi, K, Dinv = (ns[k] for k in ("Id", "H", "phi", "M", "phistar", "Hst", "psi",
                                                                 "K", "Dinv"))
    massmat = H * phi * M * phistar * Hst
    InFacInv = Id - H * psi * K
    massmatInv = InFacInv.getTranspose() * Dinv * InFacInv  # evaluate M^-1 (Eq. 30)
    assert (massmat * massmatInv).isIdentity()  # verify that this is inverse of M
    pm, data = pin_data(model, q)
    Minv = pin.computeMinverse(pm, data, q)
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    assert rel_err(massmatInv.asArray(), Minv) < 1e-9
    assert rel_err(massmatInv.asArray(), np.linalg.inv(pin_mass_matrix(model, q))) < 1e-9


def test_listing_14_articulated_body_forward_dynamics():
    model, q, g, rng = make(v=True)
    ns = basic(g)
    psi, K, P, H, Dinv, psistar, Hst, G, ephi = (ns[k] for k in ("psi", "K", "P", "H", "Dinv", "psistar", "Hst",
                                                                 "G", "ephi"))
    a, b = g.a(), g.b()
    ephistar = SKOStarClass(ephi)
    tau_in = rng.normal(size=model.nv)
    T = SpatialVector(g.joint_space, tau_in)
    z = psi * (K * T + P * a + b)  # evaluate z (Eq. 31)
    eps = T - H * z  # evaluate epsilon (Eq. 31)
    nu = Dinv * eps  # evaluate nu (Eq. 31)
    alpha = psistar * (Hst * nu + a)  # evaluate alpha (Eq. 31)
    thetaddot = nu - G.getTranspose() * ephistar * alpha  # evaluate thetaddot (Eq. 31)
    pm, data = pin_data(model, q)
    ref = pin.aba(pm, data, q, g.v_test, tau_in)  # zero gravity; a, b of g are those of this v
    assert rel_err(thetaddot.asArray(), ref) < 1e-9
    # and the dense expression M^-1 (T - C), C = H phi (b + M phi* a) (Eq. 17)
    d = Dense(*model_blocks(model, q))
    C = d.H @ d.phi @ (b.asArray() + d.M @ d.phi.T @ a.asArray())
    assert rel_err(thetaddot.asArray(), np.linalg.solve(d.mass, tau_in - C)) < 1e-9


def test_listing_15_backward_lyapunov_recursion_for_upsilon():
    model, q, g, _ = make()
    ns = basic(g)
    Hst, Dinv, H, epsi = ns["Hst"], ns["Dinv"], ns["H"], ns["epsi"]
    epsistar = SKOStarClass(epsi)
    Y = epsistar.LyapunovRecursion(Hst * Dinv * H)  # instance of Upsilon operator (Eq. 36)
    assert isinstance(Y, SpatialDiagonalMatrixOperator)
    d = Dense(*model_blocks(model, q))
    a = d.articulated(d.riccati_P())
    Omega = a["psi"].T @ d.H.T @ a["Dinv"] @ d.H @ a["psi"]  # Eq. 34, dense
    assert rel_err(Y.asArray(), d.blockdiag_x(Omega)) < TOL  # Y = diagonal of Omega (seed 001 Lemma 5)
    # the operational space compliance of pick-off nodes: Lambda^-1 = B* Omega B = J M^-1 J*  (Eqs. 32-34)
    Minv = np.linalg.inv(pin_mass_matrix(model, q))
    B = BStarClass(g, [(5, np.ones(3)), (9, None)])
    J = (B * ns["phistar"] * Hst).asArray()
    assert rel_err((B * SPOStarClass(epsi) * Hst * Dinv * H * SPOClass(epsi) * B.getTranspose()).asArray(),
                   J @ Minv @ J.T) < 1e-9


def test_listing_16_operational_space_compliance_decomposition_on_a_serial_chain():
    # Eq. 35 is stated "for serial chain systems"
    model, q, g, _ = make(chain=True, n=10)
    ns = basic(g)
    Id, H, psi, K, Dinv, Hst, psistar, epsi = (ns[k] for k in ("Id", "H", "psi", "K", "Dinv", "Hst", "psistar",
                                                               "epsi"))
    InFacInv = Id - H * psi * K
    massmatInv = InFacInv.getTranspose() * Dinv * InFacInv
    epsistar = SKOStarClass(epsi)
    Y = epsistar.LyapunovRecursion(Hst * Dinv * H)
    psist = psistar  # the printed listing spells psi* as 'psist'
    phi, phistar = ns["phi"], ns["phistar"]
    # The printed listing has psistar * Hst * massmatInv * H * psi, but Eqs. 33-34 give
    # Omega = psi* H* D^-1 H psi = phi* H* M^-1 H phi (Eq. 26); with psi in place of phi the
    # identity fails (checked below).
    Omega = phistar * Hst * massmatInv * H * phi  # evaluate Omega (Eq. 34)
    assert (Omega - (psist * Y + Y * psi - Y)).isZero()  # verify Eq. 35 identity
    d = Dense(*model_blocks(model, q))
    a = d.articulated(d.riccati_P())
    Minv = np.linalg.inv(pin_mass_matrix(model, q))
    assert rel_err(Omega.asArray(), d.phi.T @ d.H.T @ Minv @ d.H @ d.phi) < 1e-9
    assert rel_err(Omega.asArray(), a["psi"].T @ d.H.T @ a["Dinv"] @ d.H @ a["psi"]) < 1e-9
    assert not (psistar * Hst * massmatInv * H * psi - (psist * Y + Y * psi - Y)).isZero()


# ---------------------------------------------------------------------------
# Section 5: sensitivities (rotational hinges, as the paper assumes)
# ---------------------------------------------------------------------------

BD3 = 3


def _tilde(h):
    ht = np.array([[0, -h[2], h[1]], [h[2], 0, -h[0]], [-h[1], h[0], 0]])
    return np.block([[ht, np.zeros((3, 3))], [np.zeros((3, 3)), ht]])  # Eq. 39


def test_listing_17_sensitivity_basic_classes():
    model, q, g, _ = make(types=("revolute",))
    bd3 = BD3
    Hi_3 = H_iClass(g, bd3)    # instance of H~_{<=i} operator
    Hsi_3 = Hs_iClass(g, bd3)  # instance of H~_{<i} operator
    Hdi_3 = Hd_iClass(g, bd3)  # instance of H~_{=i} operator
    Ht = _tilde(model.axis[bd3])  # H*(3) = [h; 0] in body 3's frame
    out = subtree(model.parent, bd3)
    for k in range(model.n_bodies):
        assert np.allclose(Hi_3[k][k], Ht if k in out else 0, atol=0)
        assert np.allclose(Hsi_3[k][k], Ht if (k in out and k != bd3) else 0, atol=0)
        assert np.allclose(Hdi_3[k][k], Ht if k == bd3 else 0, atol=0)
    assert (Hi_3 - Hsi_3 - Hdi_3).isZero()


def _hinge_g(model, q):
    return Subgraph.from_blocks(*frame_blocks(model, q, "hinge"))


def test_listing_18_derivatives_of_basic_operators_in_hinge_frames():
    """Listing 18 holds when node k's blocks are expressed in a frame fixed on its parent at
    hinge k (then only E_phi(i, children) and M(i) depend on theta_i, on the left).  The
    printed ``Hdi_3 * phi * Hdi_3 - phi * Hdi_3`` is garbled; derived again:
    ``[phi]_i = phi [E_phi]_i phi = phi Hdi (phi - I)`` since ``[E_phi]_i = Hdi E_phi``."""
    model, q, _, _ = make(types=("revolute",))
    g = _hinge_g(model, q)
    ns = basic(g)
    phi, M = ns["phi"], ns["M"]
    Hdi_3 = Hd_iClass(g, BD3)
    phi_3 = phi * Hdi_3 * phi - phi * Hdi_3  # evaluate [phi]_theta_i (Eq. 41b in hinge frames)
    M_3 = Hdi_3 * M - M * Hdi_3  # evaluate [M]_theta_i (Eq. 41d in hinge frames)
    fd_phi = central_difference(lambda x: Dense(*frame_blocks(model, x, "hinge")).phi, q, BD3)
    fd_M = central_difference(lambda x: Dense(*frame_blocks(model, x, "hinge")).M, q, BD3)
    assert rel_err(phi_3.asArray(), fd_phi) < FD_TOL
    assert rel_err(M_3.asArray(), fd_M) < FD_TOL


@pytest.mark.parametrize("frames", ["body", "hinge", "world"])
def test_listing_19_mass_matrix_derivative(frames):
    model, q, g, _ = make(types=("revolute",), frames=frames)
    ns = basic(g)
    H, phi, M, phistar, Hst = (ns[k] for k in ("H", "phi", "M", "phistar", "Hst"))
    Hdi_3 = Hd_iClass(g, BD3)
    # evaluate M_theta_3 (Eq. 42)
    massmat_3 = H * phi * (Hdi_3 * phi * M - M * phistar * Hdi_3) * phistar * Hst
    fd = central_difference(lambda x: pin_mass_matrix(model, x), q, BD3)
    assert rel_err(massmat_3.asArray(), fd) < FD_TOL


def _world(seed=3):
    model, q, g, _ = make(seed=seed, types=("revolute",), frames="world")
    return model, q, g


def test_listing_20_forward_lyapunov_solution_lambda():
    model, q, g = _world()
    ns = basic(g)
    epsi, P = ns["epsi"], ns["P"]
    Hdi_3 = Hd_iClass(g, BD3)
    lambda_3 = epsi.LyapunovRecursion(Hdi_3 * P - P * Hdi_3)  # evaluate lambda_theta_3 (Eq. 43)
    # dense solution of Eq. 43: lambda = X + E_psi lambda E_psi*, iterated to its fixed point
    d = Dense(*frame_blocks(model, q, "world"))
    a = d.articulated(d.riccati_P())
    X = (Hdi_3 * P - P * Hdi_3).asArray()
    lam = X.copy()
    for _ in range(model.n_bodies + 1):
        lam = X + a["Epsi"] @ lam @ a["Epsi"].T
    assert rel_err(lambda_3.asArray(), lam) < TOL
    # and its meaning in inertial frames: lambda = [P]_theta_i - (H~_{<i} P - P H~_{<i})
    Hs_3 = Hs_iClass(g, BD3)
    fdP = central_difference(lambda x: Dense(*frame_blocks(model, x, "world")).riccati_P(), q, BD3)
    assert rel_err(lambda_3.asArray(), fdP - (Hs_3 * P - P * Hs_3).asArray()) < FD_TOL


def _D_of(model, x):
    d = Dense(*frame_blocks(model, x, "world"))
    return block_udu(d.mass, d.vo)


def test_listing_21_articulated_body_sensitivities():
    model, q, g = _world()
    ns = basic(g)
    epsi, P, H, Hst, Dinv, taubar, G = (ns[k] for k in ("epsi", "P", "H", "Hst", "Dinv", "taubar", "G"))
    Hdi_3 = Hd_iClass(g, BD3)
    Hs_3 = Hs_iClass(g, BD3)
    lambda_3 = epsi.LyapunovRecursion(Hdi_3 * P - P * Hdi_3)
    Dinvs = Dinv  # the printed listing writes D^-1 as 'Dinvs'
    D_3 = H * lambda_3 * Hst  # evaluate D_theta_3 (Eq. 44a)
    G_3 = taubar * lambda_3 * Hst * Dinvs + Hs_3 * G  # evaluate G_theta_3 (Eq. 44c)
    fdD = central_difference(lambda x: _D_of(model, x)[1], q, BD3)
    assert rel_err(D_3.asArray(), fdD) < FD_TOL

    def G_of(x):
        d = Dense(*frame_blocks(model, x, "world"))
        return d.articulated(d.riccati_P())["G"]

    assert rel_err(G_3.asArray(), central_difference(G_of, q, BD3)) < FD_TOL


def test_listing_22_innovations_factor_sensitivities():
    model, q, g = _world()
    ns = basic(g)
    epsi, P, H, Hst, Dinv, taubar, phi, psi, K, Id = (ns[k] for k in ("epsi", "P", "H", "Hst", "Dinv", "taubar",
                                                                      "phi", "psi", "K", "Id"))
    Hd_3 = Hd_iClass(g, BD3)
    lambda_3 = epsi.LyapunovRecursion(Hd_3 * P - P * Hd_3)
    Dinvs = Dinv
    phitilde = phi - Id  # phi~ = phi - I (seed 001 Corollary 3.1)
    InFacInv = Id - H * psi * K
    # evaluate [I + H phi K]_theta_3 (Eq. 45)
    InFac_3 = H * phi * (Hd_3 * phitilde * P + taubar * lambda_3) * Hst * Dinvs
    # evaluate [I - H psi K]_theta_3 (Eq. 46)
    InFacInv_3 = -H * psi * (Hd_3 * phi * K + taubar * lambda_3 * Hst * Dinvs) * InFacInv
    fdU = central_difference(lambda x: _D_of(model, x)[0], q, BD3)
    fdUinv = central_difference(lambda x: np.linalg.inv(_D_of(model, x)[0]), q, BD3)
    assert rel_err(InFac_3.asArray(), fdU) < FD_TOL
    assert rel_err(InFacInv_3.asArray(), fdUinv) < FD_TOL


@pytest.mark.parametrize("frames", ["body", "world"])
def test_listing_23_fixman_potential_gradient(frames):
    model, q, g, _ = make(types=("revolute",), frames=frames)
    ns = basic(g)
    P, Hst, Dinv, H, epsi = ns["P"], ns["Hst"], ns["Dinv"], ns["H"], ns["epsi"]
    Y = SKOStarClass(epsi).LyapunovRecursion(Hst * Dinv * H)
    Hd_3 = Hd_iClass(g, BD3)
    grad_fixman_3 = 2 * np.trace(P(3) @ Y(3) @ Hd_3(3))  # evaluate d log det M / d theta_3 (Eq. 48)
    fd = central_difference(lambda x: np.linalg.slogdet(pin_mass_matrix(model, x))[1], q, BD3)
    assert abs(grad_fixman_3 - fd) < FD_TOL * max(1.0, abs(fd))
