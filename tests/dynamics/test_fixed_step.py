"""The compiled fixed-step simulator (:mod:`dynamics.compiled.simulate_api`).

References: scipy's DOP853 at 1e-12 on the numpy reference dynamics (convergence at
the integrators' orders), free fall (a stop reached at the analytic time), and the
numpy CRBA (an inelastic stop is an impulse along ``M^-1 e_j``: it leaves the other
coordinates' generalized momentum ``(M v)_i`` unchanged).
"""

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose.dynamics import aba, crba, kinematics
from mbcompose.dynamics.compiled.simulate_api import limited_coordinates, simulate_fixed_step
from trees import random_model, random_q


def _reference_final_state(model, q0, v0, tau, damping, T):
    """(q, v) at T by scipy's DOP853 at 1e-12 on the numpy reference dynamics."""
    from scipy.integrate import solve_ivp

    from mbcompose.dynamics import rates

    def f(t, y):
        q, v = y[:model.nq], y[model.nq:]
        return np.concatenate([rates.configuration_rate(model, q, v, stabilise=10.0),
                               aba.forward_dynamics(model, q, v, tau - damping * v)])
    y = solve_ivp(f, (0, T), np.concatenate([q0, v0]), method="DOP853", rtol=1e-12, atol=1e-12).y[:, -1]
    return y[:model.nq], y[model.nq:]


@pytest.mark.parametrize("types", [("revolute", "prismatic", "cylindrical", "universal"),
                                   ("free", "spherical", "revolute", "planar")])
def test_fixed_step_simulation_converges_at_the_integrators_order_to_a_tight_reference(types):
    model, rng = random_model(4, n=6, types=types)
    q0, v0 = random_q(model, rng), rng.normal(size=model.nv) * 0.5
    damping, tau = rng.uniform(0, 0.3, size=model.nv), rng.normal(size=model.nv)
    T = 0.4
    q_ref, v_ref = _reference_final_state(model, q0, v0, tau, damping, T)
    final = {}
    for integrator, order in (("rk4", 4), ("euler", 1)):
        errs = final[integrator] = []
        for n in (100, 200):
            run = simulate_fixed_step(model, q0, v0, T / n, n, integrator, tau, damping, stride=n // 10)
            assert run.t[-1] == pytest.approx(T) and run.Q.shape == (11, model.nq) and run.limit_contacts == 0
            errs.append(max(np.abs(kinematics.difference(model, q_ref, run.Q[-1])).max(),
                            np.abs(run.V[-1] - v_ref).max()))
        assert np.log2(errs[0] / errs[1]) == pytest.approx(order, abs=0.1)
    assert final["rk4"][1] < 1e-8 and final["euler"][1] < 0.1
    with pytest.raises(ValueError):
        simulate_fixed_step(model, q0, v0, 0.01, 10, "rk5")


def slider(axis=(0.0, 0.0, 1.0)):
    """One body of 2 kg on a prismatic joint along ``axis``, gravity -z."""
    return dyn.build_model([dyn.BodySpec("block", -1, "prismatic", "slide", np.eye(3), np.zeros(3), 2.0,
                                         np.zeros(3), 0.01 * np.eye(3), axis=axis)])


@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_a_falling_slider_stops_on_its_lower_limit_at_the_free_fall_time_and_stays(integrator):
    model, g, h, dt = slider(), 9.81, 0.1, 1e-3
    run = simulate_fixed_step(model, [0.0], [0.0], dt, 400, integrator, lower=[-h], upper=[np.inf])
    t_hit = np.sqrt(2 * h / g)
    before = run.t < t_hit - dt
    tol = 1e-12 if integrator == "rk4" else g * dt * 0.41       # rk4 is exact on a parabola
    np.testing.assert_allclose(run.Q[before, 0], -g * run.t[before] ** 2 / 2, atol=tol)
    after = run.t > t_hit + dt
    assert np.all(run.Q[after, 0] == -h) and np.all(run.V[after, 0] == 0.0)
    assert run.limit_contacts == 1 and run.Q[:, 0].min() == -h


def test_a_stop_is_the_impulse_along_the_inverse_mass_matrix_column_of_its_coordinate():
    model, rng = random_model(11, n=4, types=("revolute", "prismatic"))
    q0, v0 = random_q(model, rng), rng.normal(size=model.nv)
    lower = np.full(model.nv, -np.inf)
    lower[1] = q0[1] - 1e-9                  # coordinate 1 reaches its stop within the first step
    v0[1] = -1.0
    dt = 1e-6
    run = simulate_fixed_step(model, q0, v0, dt, 1, "rk4", lower=lower, stride=1)
    assert run.limit_contacts == 1 and run.Q[1, 1] == lower[1] and run.V[1, 1] == 0.0
    free = simulate_fixed_step(model, q0, v0, dt, 1, "rk4")
    M = crba.mass_matrix(model, run.Q[1])
    others = np.arange(model.nv) != 1
    np.testing.assert_allclose((M @ run.V[1])[others], (M @ free.V[1])[others], atol=1e-6)
    assert np.abs(run.V[1] - free.V[1]).max() > 0.1          # the stop did change the other velocities


def test_limits_on_coordinates_that_are_not_rates_are_refused():
    model, _ = random_model(5, n=3, types=("spherical",))
    with pytest.raises(ValueError, match="cannot take coordinate limits"):
        limited_coordinates(model, np.zeros(model.nv), None)
    with pytest.raises(ValueError, match="lower <= upper"):
        limited_coordinates(slider(), [1.0], [0.0])
