"""Minimal-coordinate mass matrix, inverse dynamics, constraint forces and closure errors
of embedded models, against Pinocchio (mass matrix, analytic frame Jacobians, KKT)."""

import numpy as np
import pytest

from mbcompose.dynamics import embedding as E
from mbcompose.dynamics.closed.closure import ClosureError
from mechanisms import PinTwin, available, load, random_states

SAMPLES = available()


def null_basis(twin, em, q):
    """``N = [I; -G_d^+ G_i]`` (independent coordinates first, then completed) from
    Pinocchio's closure Jacobian, in our v order: the reference velocity map."""
    G = twin.jacobian(twin.qp(q))
    Gv = np.empty_like(G)
    Gv[:, :] = G[:, np.argsort(twin.vp)]           # columns in our v order
    i, d = em.independent_v, em.dependent_v
    N = np.zeros((em.nv, len(i)))
    N[i] = np.eye(len(i))
    N[d] = -np.linalg.lstsq(Gv[:, d], Gv[:, i], rcond=1e-12)[0]
    return N


@pytest.mark.parametrize("name", SAMPLES)
def test_minimal_mass_matrix_is_N_transpose_M_N_from_pinocchio(name):
    asm, tm, em = load(name)
    twin = PinTwin(tm)
    rng = np.random.default_rng(21)
    for q, v, tau in random_states(em, rng, 5):
        qp = twin.qp(q)
        Mp = twin.pin.crba(twin.pm, twin.pd, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        M = Mp[np.ix_(np.argsort(twin.vp), np.argsort(twin.vp))]
        N = null_basis(twin, em, q)
        ref = N.T @ M @ N
        assert np.allclose(E.mass_matrix(em, q), ref, rtol=1e-9, atol=1e-10 * np.abs(ref).max())


@pytest.mark.parametrize("name", SAMPLES)
def test_inverse_dynamics_gives_the_independent_forces_of_the_lagrange_solution(name):
    asm, tm, em = load(name)
    twin = PinTwin(tm)
    rng = np.random.default_rng(22)
    for q, v, tau in random_states(em, rng, 5):
        tau[em.dependent_v] = 0.0                 # passive dependent joints
        a_ref, _ = twin.lagrange_accelerations(q, v, tau)
        tau_id = E.inverse_dynamics(em, q, v, a_ref)
        assert np.allclose(tau_id, tau, atol=1e-7 * max(1.0, np.abs(tau).max()))
        assert np.allclose(E.forward_dynamics(em, q, v, tau_id), a_ref, atol=1e-8 * max(1.0, np.abs(a_ref).max()))


def test_rssr_chord_force_equals_the_lagrange_multiplier():
    asm, tm, em = load("rssr")
    twin = PinTwin(tm)
    pin = twin.pin
    rng = np.random.default_rng(23)
    for q, v, tau in random_states(em, rng, 5):
        qp, vp, tp = twin.qp(q), twin.vpin(v), twin.vpin(tau)
        M = pin.crba(twin.pm, twin.pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        C = pin.rnea(twin.pm, twin.pd, qp, vp, np.zeros(twin.pm.nv))
        G = twin.jacobian(qp)
        K = np.block([[M, G.T], [G, np.zeros((3, 3))]])
        lam = np.linalg.solve(K, np.r_[tp - C, -twin.bias(qp, vp)])[twin.pm.nv:]
        cf = E.constraint_forces(em, q, v, tau)
        w = cf.wrenches["coupler_rocker"]
        # e = x_b - x_a, M a + C = tau - G^T lam: the force on the secondary body is -lam
        assert np.allclose(w[3:], -lam, atol=1e-8 * max(1.0, np.abs(lam).max()))
        assert np.allclose(w[:3], 0.0, atol=1e-12)


def fourbar_with_rocker_independent():
    asm, tm, em = load("fourbar")
    return tm, E.embed(tm.model, em.chords, independent=["rocker_pivot"])


def test_closure_error_is_a_value_error_naming_the_loop_and_its_joints():
    tm, em = fourbar_with_rocker_independent()
    assert em.independent == ("rocker_pivot",)
    # the rocker swings between 105.62 and 147.80 deg (README); 112.62 deg at q = 0
    with pytest.raises(ClosureError) as exc:
        E.complete_configuration(em, q_ind={"rocker_pivot": np.radians(112.62 - 165.0)})
    err = exc.value
    assert isinstance(err, ValueError)
    assert err.loop == "coupler_rocker"
    assert set(err.joints) == {"crank_pivot", "rocker_pivot", "crank_coupler", "coupler_rocker"}
    assert set(err.dependent) == {"crank_pivot", "crank_coupler"}


def test_dead_centre_where_the_closure_jacobian_loses_rank_raises():
    tm, em = fourbar_with_rocker_independent()
    # crank and coupler stretched in line: |AC| = 0.34, C on the rocker circle about D
    A, D = np.array([0.0, 0.0]), np.array([0.3, 0.0])
    r1, r2 = 0.34, 0.26
    x = (r1 ** 2 - r2 ** 2 + 0.3 ** 2) / (2 * 0.3)
    Cp = np.array([x, np.sqrt(r1 ** 2 - x ** 2)])
    th_c = np.arctan2(Cp[1], Cp[0])
    th_r = np.arctan2(Cp[1] - D[1], Cp[0] - D[0])
    q = np.zeros(3)
    q[em.q_slice("crank_pivot")] = -(th_c - np.pi / 2)
    q[em.q_slice("crank_coupler")] = -(0.0 - (np.arctan2(0.15, 0.2) - np.pi / 2))
    q[em.q_slice("rocker_pivot")] = -(th_r - np.arctan2(0.24, -0.1))
    assert np.degrees(th_r) == pytest.approx(105.62, abs=0.01)
    # minimal coordinates with the rocker independent are singular here ...
    with pytest.raises(ClosureError, match="loses rank") as exc:
        E.mass_matrix(em, q)
    assert set(exc.value.dependent) == {"crank_pivot", "crank_coupler"}
    with pytest.raises(ClosureError, match="loses rank"):
        E.complete_velocity(em, q, [1.0])
    # ... but the accelerations are not: forward dynamics re-picks the dependent set there
    asm, tm2, em2 = load("fourbar")
    twin = PinTwin(tm2)
    rng = np.random.default_rng(2)
    v = E.complete_velocity(em2, q, [1.3])
    tau = rng.normal(size=3) * 0.01
    a_ref, _ = twin.lagrange_accelerations(q, v, tau)
    for model in (em, em2):
        assert np.allclose(E.forward_dynamics(model, q, v, tau), a_ref, atol=1e-9 * max(1.0, np.abs(a_ref).max()))
    assert np.allclose(E.project_velocity(em, q, v), v, atol=1e-12)


def test_fivebar_with_distal_links_in_line_keeps_well_defined_accelerations():
    """Parallel singularity of the five-bar (both cranks independent): the minimal coordinates
    fail, the accelerations (and the projected velocities) do not."""
    from scipy.optimize import brentq

    asm, tm, em = load("fivebar")
    twin = PinTwin(tm)
    l1, l2 = 0.12, 0.1 * np.sqrt(2.0)
    A, Ep = np.array([0.0, 0.0]), np.array([0.2, 0.0])
    th1 = np.radians(-100.0)                      # cranks hang down at the reference (-90 deg)
    B = A + l1 * np.array([np.cos(th1), np.sin(th1)])
    f = lambda th2: np.linalg.norm(B - (Ep + l1 * np.array([np.cos(th2), np.sin(th2)]))) - 2 * l2
    th2 = brentq(f, np.radians(-90.0), 0.0)
    D = Ep + l1 * np.array([np.cos(th2), np.sin(th2)])
    ang = lambda x: np.arctan2(x[1], x[0])
    wrap = lambda x: np.angle(np.exp(1j * x))
    phi1, phi2 = ang(D - B), ang(B - D)
    q = np.zeros(em.nq)
    q[em.q_slice("left_pivot")] = -(th1 + np.pi / 2)
    q[em.q_slice("right_pivot")] = -(th2 + np.pi / 2)
    q[em.q_slice("left_elbow")] = -wrap((phi1 - th1) - np.pi / 4)
    q[em.q_slice("right_elbow")] = -wrap((phi2 - th2) + np.pi / 4)
    assert np.max(np.abs(twin.error(twin.qp(q)))) < 1e-12
    with pytest.raises(ClosureError, match="loses rank"):
        E.mass_matrix(em, q)
    rng = np.random.default_rng(9)
    v = E.project_velocity(em, q, rng.normal(size=em.nv))
    assert np.max(np.abs(twin.jacobian(twin.qp(q)) @ twin.vpin(v))) < 1e-12
    tau = rng.normal(size=em.nv) * 0.01
    a = E.forward_dynamics(em, q, v, tau)
    a_ref, _ = twin.lagrange_accelerations(q, v, tau)
    assert np.allclose(a, a_ref, atol=1e-8 * max(1.0, np.abs(a_ref).max()))


def test_rssr_rocker_outside_its_swing_cannot_close():
    asm, tm, em = load("rssr")
    em = E.embed(tm.model, em.chords, independent=["rocker_pivot"])
    E.complete_configuration(em, q_ind={"rocker_pivot": np.radians(30.0)})
    with pytest.raises(ClosureError, match="cannot close") as exc:
        E.complete_configuration(em, q_ind={"rocker_pivot": np.radians(-30.0)})
    assert exc.value.loop == "coupler_rocker"


def test_dynamics_at_an_open_configuration_raise_instead_of_returning_numbers():
    asm, tm, em = load("fourbar")
    q = em.neutral()
    q[em.q_slice("crank_pivot")] += 0.3
    with pytest.raises(ClosureError, match="not closed"):
        E.forward_dynamics(em, q, np.zeros(3), np.zeros(3))
    with pytest.raises(ClosureError):
        E.mass_matrix(em, q)


@pytest.mark.parametrize("name", SAMPLES)
def test_project_state_closes_the_loops_with_small_moves_and_projects_velocities(name):
    from mbcompose.dynamics.kinematics import integrate

    asm, tm, em = load(name)
    twin = PinTwin(tm)
    rng = np.random.default_rng(31)
    for q, v, tau in random_states(em, rng, 3):
        dq = rng.normal(size=em.nv) * 1e-4
        qp, vp = E.project_state(em, integrate(em.tree_model, q, dq), v + rng.normal(size=em.nv))
        assert np.max(np.abs(twin.error(twin.qp(qp)))) < 1e-10
        assert np.max(np.abs(twin.jacobian(twin.qp(qp)) @ twin.vpin(vp))) < 1e-9 * max(1.0, np.abs(vp).max())
        # the minimum-norm correction stays within the size of the perturbation
        assert np.max(np.abs(qp - q)) < 10 * np.abs(dq).max()
