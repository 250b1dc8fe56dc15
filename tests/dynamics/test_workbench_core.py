"""Behaviour of the workbench classes (seed 002 section 3): typing rules, refusal of raw arrays,
structured products, transposes, inverses, block access, O(N) products, subgraphs.

References: dense numpy matrices built from the block lists (test_workbench_support.Dense),
Pinocchio's mass matrix, counts of block products for the O(N) claim.
"""

from __future__ import annotations

import numpy as np
import pytest

from mbcompose.dynamics import spo as _spo_module
from mbcompose.dynamics.workbench import (BStarClass, EPhiClass, EPsiClass, GClass, HClass, HStarClass, IdClass,
                                IncompatibleOperands, KClass, MClass, PClass, ProductOperator, SKOClass,
                                SKOStarClass, SpatialDiagonalMatrixOperator, SpatialVector, SPOClass,
                                SPOStarClass, Subgraph, SumOperator, TauBarClass, Phi, PhiStar, Psi, Dinv, K, H,
                                M, HStar, Id)
from test_workbench_support import (Dense, model_blocks, pin_mass_matrix, random_generic_sko, random_rigid_model,
                                    rel_err)

TOL = 1e-10


def generic(seed=0, n=12, chain=False):
    rng = np.random.default_rng(seed)
    blocks = random_generic_sko(rng, n, chain=chain)
    return Subgraph.from_blocks(*blocks), Dense(*blocks), rng


def rigid(seed=0, n=12):
    rng = np.random.default_rng(seed)
    model = random_rigid_model(rng, n)
    q = rng.normal(size=model.nv)
    return model, q, Subgraph.from_model(model, q), rng


# ---- refusing raw arrays and foreign operands --------------------------------------------------


@pytest.mark.parametrize("expr", [
    lambda op, x: op * x, lambda op, x: x * op, lambda op, x: op + x, lambda op, x: x + op,
    lambda op, x: op - x, lambda op, x: x - op, lambda op, x: op @ x, lambda op, x: x @ op,
])
def test_mixing_an_operator_with_a_raw_array_raises_a_typeerror_naming_both(expr):
    g, _, _ = generic()
    op = MClass(g)
    x = np.ones(g.node_space.size)
    with pytest.raises(TypeError) as err:
        expr(op, x)
    assert isinstance(err.value, IncompatibleOperands)
    msg = str(err.value)
    assert "MClass 'M'" in msg and "numpy.ndarray of shape" in msg


def test_raw_lists_and_matrices_are_refused_too():
    g, _, _ = generic()
    with pytest.raises(TypeError, match="list"):
        HClass(g) * [1.0] * g.joint_space.size
    with pytest.raises(TypeError, match="numpy.ndarray of shape"):
        SPOClass(EPhiClass(g)) * np.eye(g.node_space.size)
    v = SpatialVector(g.node_space)
    with pytest.raises(TypeError, match="SpatialVector"):
        v + np.ones(g.node_space.size)
    with pytest.raises(TypeError):
        np.ones(g.node_space.size) + v


def test_operators_of_different_subgraphs_do_not_mix():
    g1, _, _ = generic(seed=1)
    g2, _, _ = generic(seed=1)
    with pytest.raises(IncompatibleOperands, match="different subgraphs"):
        MClass(g1) * MClass(g2)
    with pytest.raises(IncompatibleOperands, match="different subgraphs"):
        MClass(g1) - MClass(g2)
    with pytest.raises(IncompatibleOperands, match="another subgraph"):
        MClass(g1) * SpatialVector(g2.node_space)


def test_incompatible_index_spaces_raise():
    g, _, _ = generic()
    with pytest.raises(IncompatibleOperands, match="columns of the first"):
        HClass(g) * HClass(g)
    with pytest.raises(IncompatibleOperands, match="needs a vector on"):
        MClass(g) * SpatialVector(g.joint_space)
    with pytest.raises(IncompatibleOperands, match="different spaces"):
        HClass(g) + HStarClass(g)


def test_truth_value_of_an_operator_is_refused():
    g, _, _ = generic()
    with pytest.raises(TypeError, match="isZero"):
        bool(MClass(g))


# ---- structured results -----------------------------------------------------------------------


def test_structured_products_and_sums_keep_their_class():
    g, _, _ = generic()
    Hh, Hs, Mm, P, ephi = HClass(g), HStarClass(g), MClass(g), PClass(g), EPhiClass(g)
    assert isinstance(Hh * P * Hs, SpatialDiagonalMatrixOperator)
    assert isinstance((Hh * P * Hs).inverse(), SpatialDiagonalMatrixOperator)
    assert isinstance(ephi * GClass(g), SKOClass) and isinstance(GClass(g).getTranspose() * SKOStarClass(ephi),
                                                                 ProductOperator)
    assert isinstance(Mm * ephi, SKOClass)
    assert isinstance(IdClass(g) - TauBarClass(g), SpatialDiagonalMatrixOperator)
    assert isinstance(ephi + ephi, SKOClass)
    assert isinstance(Hh * SPOClass(ephi) * Mm, ProductOperator)
    assert isinstance(SPOClass(ephi) - IdClass(g), SumOperator)
    assert IdClass(g) * Mm is Mm and Mm * IdClass(g) is Mm


def test_identity_adapts_to_the_joint_space():
    g, d, _ = generic()
    InFac = Id(g) - H(g) * Psi(g) * K(g)
    assert InFac.row == g.joint_space and InFac.col == g.joint_space
    assert IdClass(g).row == g.node_space
    x = SpatialVector(g.joint_space, np.arange(g.joint_space.size, dtype=float))
    assert np.array_equal((Id(g) * x).asArray(), x.asArray())


def test_intro_expressions_of_seed_002_section_1():
    g, d, _ = generic(seed=5)
    MassMat = H(g) * Phi(g) * M(g) * PhiStar(g) * HStar(g)
    InnovFactorInv = Id(g) - H(g) * Psi(g) * K(g)
    MassmatInv = InnovFactorInv.getTranspose() * Dinv(g) * InnovFactorInv
    assert (MassMat * MassmatInv).isIdentity(1e-9)
    assert rel_err(MassMat.asArray(), d.mass) < TOL
    assert rel_err(MassmatInv.asArray(), np.linalg.inv(d.mass)) < 1e-9


# ---- dense values, blocks, transposes, inverses --------------------------------------------------


def test_spo_and_sko_dense_values_blocks_and_transposes():
    g, d, _ = generic(seed=2)
    ephi = EPhiClass(g)
    phi, phistar = SPOClass(ephi), SPOStarClass(ephi)
    assert rel_err(phi.asArray(), d.phi) < TOL
    assert rel_err(phistar.asArray(), d.phi.T) < TOL
    assert rel_err(ephi.T.asArray(), d.E.T) < TOL
    assert rel_err(phi.getTranspose().asArray(), d.phi.T) < TOL
    assert phi.T.T.sko is ephi
    for i in g.nodes:
        for j in g.nodes:
            assert rel_err(phi[i][j], d.phi[d.xs(i), d.xs(j)]) < TOL
            assert rel_err(phistar[i, j], d.phi.T[d.xs(i), d.xs(j)]) < TOL
            assert np.array_equal(ephi[i][j], d.E[d.xs(i), d.xs(j)])
    # phi(i, j) is zero unless i is an ancestor-or-self of j (seed 003 Lemma 5)
    i, j = 3, 0
    assert not np.any(phi[i][j])
    # SPO inverse is I - E exactly
    assert rel_err(phi.inverse().asArray(), d.I - d.E) < TOL


def test_transpose_of_lazy_products_and_sums():
    g, d, _ = generic(seed=3)
    o = H(g) * Phi(g) * M(g) + 2.0 * H(g) * PhiStar(g) - H(g) * EPhiClass(g)
    A = o.asArray()
    ref = d.H @ d.phi @ d.M + 2.0 * d.H @ d.phi.T - d.H @ d.E
    assert rel_err(A, ref) < TOL
    assert rel_err(o.getTranspose().asArray(), ref.T) < TOL
    assert rel_err((-o).asArray(), -ref) < TOL


def test_block_diagonal_inverse_and_refusals():
    g, d, _ = generic(seed=4)
    Mm = MClass(g)
    assert rel_err(Mm.inverse().asArray(), np.linalg.inv(d.M)) < TOL
    assert (Mm * Mm.inverse()).isIdentity()
    with pytest.raises(TypeError, match="not square"):
        HClass(g).inverse()
    with pytest.raises(TypeError, match="inverse"):
        EPhiClass(g).inverse()
    with pytest.raises(TypeError, match="inverse"):
        (HClass(g) * Phi(g)).inverse()


def test_diagonal_call_returns_the_block():
    g, d, _ = generic(seed=4)
    Mm = MClass(g)
    for k in g.nodes:
        assert np.array_equal(Mm(k), d.M[d.xs(k), d.xs(k)])


def test_iszero_is_relative_to_the_terms_and_isidentity_needs_square_spaces():
    g, d, _ = generic(seed=6)
    Mm = MClass(g)
    assert (Mm - Mm).isZero() and not Mm.isZero()
    big = 1e8 * Mm
    assert (big * PClass(g) - big * PClass(g)).isZero()
    assert not HClass(g).isIdentity()
    assert IdClass(g).isIdentity()


def test_lyapunov_recursion_needs_a_block_diagonal_argument():
    g, d, _ = generic(seed=7)
    ephi = EPhiClass(g)
    with pytest.raises(TypeError, match="not block-diagonal"):
        ephi.LyapunovRecursion(SPOClass(ephi) * MClass(g))
    with pytest.raises(TypeError, match="block-diagonal"):
        ephi.LyapunovRecursion(d.M)
    # a lazy operator whose value is block diagonal is accepted
    R = ephi.LyapunovRecursion(HStarClass(g) * HClass(g) + MClass(g) - HStarClass(g) * HClass(g))
    assert rel_err(R.asArray(), d.blockdiag_x(d.phi @ d.M @ d.phi.T)) < TOL


# ---- vectors ------------------------------------------------------------------------------------


def test_spatial_vectors_index_by_node_and_take_multiple_columns():
    g, d, rng = generic(seed=8)
    x = rng.normal(size=(g.node_space.size, 3))
    X = SpatialVector(g.node_space, x)
    for k in g.nodes:
        assert np.array_equal(X[k], x[d.xs(k)])
    Y = SPOClass(EPhiClass(g)) * X
    assert Y.shape == (g.node_space.size, 3)
    assert rel_err(Y.asArray(), d.phi @ x) < TOL
    V = SpatialVector(g.node_space, {0: np.ones(d.m[0])})
    assert np.array_equal(V[0], np.ones(d.m[0])) and not np.any(V[1])
    W = SpatialVector(g.node_space, [np.full(m, k) for k, m in enumerate(d.m)])
    assert np.array_equal(W[3], np.full(d.m[3], 3.0))
    assert rel_err((2 * W - W / 2 + (-W)).asArray(), 0.5 * W.asArray()) < TOL
    with pytest.raises(ValueError):
        SpatialVector(g.node_space, np.ones(3))


def test_velocities_are_phistar_hstar_thetadot_as_in_eq_10():
    model, q, g, rng = rigid(seed=9)
    thetadot = SpatialVector(g.joint_space, rng.normal(size=model.nv))
    V = PhiStar(g) * HStar(g) * thetadot
    # seed 002 Eq. 3 by hand: V(k) = phi*(parent, k) V(parent) + H*(k) thetadot(k)
    _, phi, Hb, _ = model_blocks(model, q)
    for k in range(model.n_bodies):
        p = model.parent[k]
        ref = Hb[k].T @ thetadot[k] + (phi[k].T @ V[p] if p >= 0 else 0)
        assert rel_err(V[k], ref) < TOL


# ---- O(N) ----------------------------------------------------------------------------------------


def test_spo_vector_products_use_one_block_product_per_tree_edge(monkeypatch):
    """phi x and phi* x run the O(N) gather/scatter of seed 001 Lemmas 1-2: one block product
    per edge of the tree, never a dense phi."""
    g, d, rng = generic(seed=10, n=20)
    calls = []
    real_mul, real_mulT = _spo_module.mul, _spo_module.mulT
    monkeypatch.setattr(_spo_module, "mul", lambda A, x: calls.append(1) or real_mul(A, x))
    monkeypatch.setattr(_spo_module, "mulT", lambda A, x: calls.append(1) or real_mulT(A, x))
    x = SpatialVector(g.node_space, rng.normal(size=g.node_space.size))
    edges = int(np.sum(d.parent >= 0))
    y = Phi(g) * x
    assert len(calls) == edges
    calls.clear()
    z = PhiStar(g) * x
    assert len(calls) == edges
    calls.clear()
    T = H(g) * Phi(g) * M(g) * PhiStar(g) * HStar(g) * SpatialVector(g.joint_space, rng.normal(size=g.joint_space.size))
    assert len(calls) == 2 * edges
    assert rel_err(y.asArray(), d.phi @ x.asArray()) < TOL and rel_err(z.asArray(), d.phi.T @ x.asArray()) < TOL
    assert T.space == g.joint_space


# ---- subgraphs ------------------------------------------------------------------------------------


def _descendants(parent, k):
    out = {k}
    for j in range(len(parent)):
        if j > k and parent[j] in out:
            out.add(j)
    return sorted(out)


def test_subgraph_of_a_whole_subtree_gives_the_sub_block_of_the_full_mass_matrix():
    model, q, g, _ = rigid(seed=11, n=14)
    k = next(k for k in range(1, model.n_bodies) if len(_descendants(model.parent, k)) >= 3)
    nodes = _descendants(model.parent, k)
    gs = g.subgraph(nodes)
    Ms = (H(gs) * Phi(gs) * M(gs) * PhiStar(gs) * HStar(gs)).asArray()
    Mfull = pin_mass_matrix(model, q)
    assert rel_err(Ms, Mfull[np.ix_(nodes, nodes)]) < TOL
    # by body names as well
    gn = Subgraph.from_model(model, q, nodes=[f"b{j}" for j in nodes])
    assert rel_err((H(gn) * Phi(gn) * M(gn) * PhiStar(gn) * HStar(gn)).asArray(), Ms) < TOL
    with pytest.raises(IncompatibleOperands):
        M(gs) * M(g)


def test_subgraph_of_a_connected_limb_is_the_sko_model_restricted_to_it():
    model, q, g, _ = rigid(seed=12, n=14)
    parent = model.parent
    k = next(k for k in range(1, model.n_bodies) if len(_descendants(parent, k)) >= 3)
    tips = [j for j in _descendants(parent, k) if j != k and not any(parent[c] == j for c in range(len(parent)))]
    nodes = [j for j in _descendants(parent, k) if j not in tips[:1]]
    gs = g.subgraph(nodes)
    par, phi, Hb, Mb = model_blocks(model, q)
    loc = {j: i for i, j in enumerate(nodes)}
    ref = Dense([loc.get(int(par[j]), -1) for j in nodes], [phi[j] if par[j] in loc else None for j in nodes],
                [Hb[j] for j in nodes], [Mb[j] for j in nodes])
    assert rel_err((H(gs) * Phi(gs) * M(gs) * PhiStar(gs) * HStar(gs)).asArray(), ref.mass) < TOL
    Ig = Id(gs) - H(gs) * Psi(gs) * K(gs)
    assert rel_err((Ig.T * Dinv(gs) * Ig).asArray(), np.linalg.inv(ref.mass)) < 1e-9


def test_a_disconnected_node_set_is_refused():
    model, q, g, _ = rigid(seed=13, n=10)
    leaves = [j for j in range(model.n_bodies) if not any(model.parent[c] == j for c in range(model.n_bodies))]
    with pytest.raises(ValueError, match="not a connected subtree"):
        g.subgraph(leaves[:2])


def test_similarity_transform_preserves_the_mass_matrix():
    g, d, rng = generic(seed=14)
    X = [np.linalg.qr(rng.normal(size=(m, m)))[0] * 2.0 for m in d.m]
    g2 = g.similarity(X)
    assert rel_err((H(g2) * Phi(g2) * M(g2) * PhiStar(g2) * HStar(g2)).asArray(), d.mass) < TOL


def test_bstar_with_explicit_blocks_on_a_generic_model():
    g, d, rng = generic(seed=15)
    blk = rng.normal(size=(d.m[4], 2))
    Bst = BStarClass(g, [(4, blk), 2])
    ref = np.zeros((2 + d.m[2], d.phi.shape[0]))
    ref[:2, d.xs(4)] = blk.T
    ref[2:, d.xs(2)] = np.eye(d.m[2])
    assert np.array_equal(Bst.asArray(), ref)
    J = Bst * PhiStar(g) * HStar(g)
    assert rel_err(J.asArray(), ref @ d.phi.T @ d.H.T) < TOL
    assert rel_err(Bst.getTranspose().asArray(), ref.T) < TOL
    with pytest.raises(IncompatibleOperands):
        Bst * Bst


def test_epsi_and_k_reuse_the_riccati_solution_of_dynamics_riccati():
    g, d, _ = generic(seed=16)
    P = d.riccati_P()
    a = d.articulated(P)
    assert rel_err(EPsiClass(g).asArray(), a["Epsi"]) < TOL
    assert rel_err(KClass(g).asArray(), a["K"]) < TOL


@pytest.mark.parametrize("frames", ["world", "hinge"])
def test_from_model_frames_are_the_frame_changes_of_the_references(frames):
    from test_workbench_support import frame_blocks

    model, q, _, _ = rigid(seed=17, n=8)
    g = Subgraph.from_model(model, q, frames=frames)
    ref = Dense(*frame_blocks(model, q, frames))
    assert rel_err(EPhiClass(g).asArray(), ref.E) < TOL
    assert rel_err(MClass(g).asArray(), ref.M) < TOL
    assert rel_err(HClass(g).asArray(), ref.H) < TOL
    with pytest.raises(ValueError, match="frames"):
        Subgraph.from_model(model, q, frames="joint")


def test_the_examples_of_docs_workbench_md_run():
    """Every ```python block of docs/workbench.md, executed in order (its asserts use numpy and
    dyn.mass_matrix as references)."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).parents[2] / "docs" / "workbench.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    ns = {}
    exec(compile("\n".join(blocks), "docs/workbench.md", "exec"), ns)
    assert ns["marray"].shape == (ns["model"].nv, ns["model"].nv)
    ref = np.linalg.solve(ns["marray"], ns["Tv"].asArray() - (ns["H"] * ns["phi"] * (ns["b"] + ns["M"] * ns["phistar"] * ns["a"])).asArray())
    assert rel_err(ns["thetaddot"].asArray(), ref) < 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_every_joint_type_mass_matrix_inverse_and_forward_dynamics_against_pinocchio(seed):
    """Multi-dof and zero-dof joints (fixed, spherical, planar, free, ...) of dynamics.model, with the
    Pinocchio twin of tests/dynamics/trees.py (velocity order mapped by v_perm)."""
    pin = pytest.importorskip("pinocchio")
    from mbcompose import dynamics as dyn
    from trees import ALL_TYPES, q_to_pin, random_bodies, random_q, to_pinocchio, v_perm

    rng = np.random.default_rng(300 + seed)
    model = dyn.build_model(random_bodies(rng, 15, ALL_TYPES), gravity=(0.0, 0.0, 0.0))
    q = random_q(model, rng)
    v = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    g = Subgraph.from_model(model, q, v)
    pm, _, _ = to_pinocchio(model)
    pd = pm.createData()
    perm = v_perm(model)
    qp = q_to_pin(model, q)
    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    Mref = np.empty_like(Mp)
    Mref[np.ix_(perm, perm)] = Mp
    massmat = H(g) * Phi(g) * M(g) * PhiStar(g) * HStar(g)
    assert rel_err(massmat.asArray(), Mref) < TOL
    InFacInv = Id(g) - H(g) * Psi(g) * K(g)
    assert rel_err((InFacInv.T * Dinv(g) * InFacInv).asArray(), np.linalg.inv(Mref)) < 1e-9
    # Listing 14 with g's Coriolis/gyroscopic terms against Pinocchio's ABA
    psi, P, G = Psi(g), PClass(g), GClass(g)
    a, b = g.a(), g.b()
    T = SpatialVector(g.joint_space, tau)
    nu = Dinv(g) * (T - H(g) * (psi * (K(g) * T + P * a + b)))
    thetaddot = nu - G.T * SKOStarClass(EPhiClass(g)) * (Psi(g).T * (HStar(g) * nu + a))
    ap = pin.aba(pm, pd, qp, v[perm], tau[perm])
    ref = np.empty_like(ap)
    ref[perm] = ap
    assert rel_err(thetaddot.asArray(), ref) < 1e-9


def test_subgraph_picks_one_configuration_of_batched_weights():
    from mbcompose.dynamics.model import weights

    model, q, _, rng = rigid(seed=18, n=7)
    q2 = rng.normal(size=model.nv)
    w = weights(model, np.stack([q, q2]))
    g = Subgraph(w, batch_index=1)
    assert rel_err((H(g) * Phi(g) * M(g) * PhiStar(g) * HStar(g)).asArray(), pin_mass_matrix(model, q2)) < TOL


def test_workbench_on_an_aggregated_tree_with_compound_nodes():
    """Seed 002 section 6 anticipates compound bodies: the operators run unchanged on the SKO model
    of an aggregated tree (dynamics.closed.aggregated, seed 000 Lemmas 7-9; m_k = 6|S|).  Reference:
    Pinocchio's mass matrix and numpy's inverse, in the aggregated tree's coordinate order."""
    from mbcompose.dynamics.closed.aggregated import AggregatedModel
    from mbcompose.dynamics.topology import satisfies_aggregation_condition

    model, q, _, rng = rigid(seed=19, n=10)
    sets = []
    used = set()
    for c in range(1, model.n_bodies):
        p = int(model.parent[c])
        S = {p, c}
        if p >= 0 and not (S & used) and satisfies_aggregation_condition(model.tree.parent, S, -1):
            sets.append(sorted(S))
            used |= S
        if len(sets) == 2:
            break
    assert sets
    am = AggregatedModel(model, sets)
    wa, *_ = am.state(q)
    g = Subgraph(wa)
    assert max(g.tree.m) == 12
    perm = am.agg.v_perm
    Mref = pin_mass_matrix(model, q)[np.ix_(perm, perm)]
    massmat = H(g) * Phi(g) * M(g) * PhiStar(g) * HStar(g)
    assert rel_err(massmat.asArray(), Mref) < TOL
    InFacInv = Id(g) - H(g) * Psi(g) * K(g)
    assert (massmat * (InFacInv.T * Dinv(g) * InFacInv)).isIdentity(1e-9)
    R = EPhiClass(g).LyapunovRecursion(M(g))
    assert (H(g) * (Phi(g) * R + R * PhiStar(g) - R) * HStar(g) - massmat).isZero()
