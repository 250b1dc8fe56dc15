"""Joint limits in the fixed-step simulation of closed chains (issue 25): inelastic stops through the
constraints, met at the end of the step that crosses them.

The four-bar sample falls from its reference (crank up) under gravity, its crank turning to negative
angles; a lower limit of -0.3 rad on the crank stops the linkage there and holds it.  Reference: the
adaptive path, whose stops are events of the integrator located to its tolerance (``tests/robots/
test_closed_chain_stops.py`` holds it against the unlimited motion and the analytic rest position); the
fixed-step run must keep the crank in its range, hold it at the stop, and follow the adaptive run to
the step's accuracy.
"""

from __future__ import annotations

import numpy as np
import pytest

from mbcompose.dynamics.simulation import JointProperties, simulate

from mechanisms import load

LOWER = -0.3                 # rad, the crank's limit
DURATION = 0.3               # s: the crank reaches its stop at about 0.21 s


@pytest.fixture(scope="module")
def fourbar():
    _, _, em = load("fourbar")
    tree = em.tree_model
    k = tree.v_slice("crank_pivot").start
    lower, upper = np.full(em.nv, -np.inf), np.full(em.nv, np.inf)
    lower[k] = LOWER
    props = JointProperties(np.zeros(em.nv), lower, upper)
    adaptive = simulate(em, tree.neutral(), np.zeros(em.nv), DURATION, samples=31, joints=props)
    return em, k, props, adaptive


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_fixed_step_closed_chain_holds_a_crank_limit_as_the_adaptive_path_does(fourbar, method):
    em, k, props, adaptive = fourbar
    tree = em.tree_model
    dt = 2e-3
    fixed = simulate(em, tree.neutral(), np.zeros(em.nv), DURATION, samples=31, joints=props, method=method, dt=dt)
    assert adaptive.limit_contacts >= 1 and fixed.limit_contacts >= 1
    assert adaptive.q[:, k].min() >= LOWER - 1e-9
    assert fixed.q[:, k].min() >= LOWER - 1e-12                   # clamped on the stop, never past it
    held = adaptive.t >= 0.25
    np.testing.assert_allclose(fixed.q[held, k], LOWER, atol=1e-12)
    np.testing.assert_allclose(fixed.v[held], 0.0, atol=1e-9)
    assert fixed.closure.max() <= 1e-10
    # before, at and after the stop: the step's accuracy (RK4 to its order, the stop time to one step)
    gap = np.abs(fixed.q - adaptive.q).max()
    assert gap <= (1e-6 if method == "rk4" else 0.05), gap
