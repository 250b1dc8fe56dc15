"""A four-bar's linearization in its independent coordinates against a Lagrange reference: central
differences (step 1e-5) of the dense Lagrange-multiplier accelerations of Pinocchio's twin of the
chain (mechanisms.PinTwin), at states closed here by least squares on the twin's point gaps and
velocities from the null space of its analytic constraint Jacobian (nothing of dynamics.closed), to
1e-6 relative to the largest entry."""

import numpy as np
from scipy.optimize import least_squares

from mbcompose.dynamics.linearize import linearize
from mechanisms import PinTwin, load, random_states

STEP = 1e-5


def _reference_state(em, twin, q_start, q_ind, v_ind):
    """Closed (q, v) with the independent coordinates q_ind, v_ind (revolute joints: q and v indices agree)."""
    ind = np.asarray(em.independent_v)
    dep = np.setdiff1d(np.arange(em.nv), ind)
    q = q_start.copy()
    q[ind] = q_ind

    def gaps(x):
        qq = q.copy()
        qq[dep] = x
        return twin.error(twin.qp(qq))

    sol = least_squares(gaps, q[dep], xtol=1e-15, ftol=1e-15, gtol=1e-15)
    q[dep] = sol.x
    P = np.array([twin.vpin(e) for e in np.eye(em.nv)]).T      # ours -> Pinocchio's velocities
    G = twin.jacobian(twin.qp(q)) @ P
    v = np.zeros(em.nv)
    v[ind] = v_ind
    v[dep] = np.linalg.lstsq(G[:, dep], -G[:, ind] @ v_ind, rcond=None)[0]
    return q, v


def test_fourbar_linearization_matches_a_lagrange_reference():
    asm, tm, em = load("fourbar")
    assert em.nq == em.nv
    twin = PinTwin(tm)
    rng = np.random.default_rng(5)
    for q, v, tau in random_states(em, rng, 3):
        lin = linearize(em, q, v, tau=tau, inputs=["tau"])
        ind = np.asarray(em.independent_v)
        n = len(ind)
        x0 = np.concatenate([q[ind], v[ind]])

        def accel(x, t=tau):
            qq, vv = _reference_state(em, twin, q, x[:n], x[n:])
            return twin.lagrange_accelerations(qq, vv, t)[0][ind]

        cols = []
        for j in range(2 * n):
            dx = np.zeros(2 * n)
            dx[j] = STEP
            cols.append((accel(x0 + dx) - accel(x0 - dx)) / (2 * STEP))
        A_ref = np.vstack([np.hstack([np.zeros((n, n)), np.eye(n)]), np.array(cols).T])
        scale = max(1.0, np.abs(A_ref).max())
        np.testing.assert_allclose(lin.A, A_ref, rtol=0, atol=1e-6 * scale)
        # joint forces enter linearly: B's columns are the accelerations of unit forces
        B_ref = np.array([(accel(x0, tau + e) - accel(x0, tau - e)) / 2 for e in np.eye(em.nv)]).T
        np.testing.assert_allclose(lin.B[n:], B_ref, rtol=0, atol=1e-6 * max(1.0, np.abs(B_ref).max()))
        assert lin.states == tuple(f"q:{c}" for c in em.independent) + tuple(f"v:{c}" for c in em.independent)
