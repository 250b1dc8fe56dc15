"""Compiled loop closure, velocity completion and closed-chain fixed-step loop
(:mod:`dynamics.compiled.closure_kernels`) against the numpy reference (:mod:`dynamics.closed.embedding`,
the numpy steps of :mod:`dynamics.simulation.fixed_step`), the closure error and Jacobian of :mod:`dynamics.closed.closure`,
the orthogonal projection ``project_velocity`` and DOP853 at 1e-12."""

import logging

import numpy as np
import pytest

from mbcompose.dynamics.simulation import JointProperties, simulate
from mbcompose.dynamics import embedding as E
from mbcompose.dynamics.closed.closure import ClosureError, closure_error, closure_jacobian
from mbcompose.dynamics.compiled import closed_api, simulate_api
from mbcompose.dynamics.closed.embedding import project_velocity
from mbcompose.dynamics.dispatch import CompiledDeclined, backend
from mbcompose.dynamics.kinematics import integrate
from mechanisms import available, load, random_states

PLANAR_SAMPLES = ("fourbar", "fivebar", "leg_fourbar_knee")


def spy_on_stepper(monkeypatch):
    """Record (first step, step reached) of every call of the compiled closed-chain loop."""
    calls, original = [], simulate_api.closed_chain_stepper

    def stepper(*args, **kwargs):
        run = original(*args, **kwargs)
        if run is None:
            return None

        def spied(y, s0, steps, stride, Y):
            s = run(y, s0, steps, stride, Y)
            calls.append((s0, s))
            return s
        return spied

    monkeypatch.setattr(simulate_api, "closed_chain_stepper", stepper)
    return calls


@pytest.mark.parametrize("name", available())
def test_compiled_newton_closes_the_loops_as_the_numpy_newton_does(name):
    asm, tm, em = load(name)
    tree, rng = em.tree_model, np.random.default_rng(3)
    for q, v, tau in random_states(em, rng, 4):
        guess = integrate(tree, q, rng.uniform(-0.05, 0.05, size=em.nv))
        qc = closed_api.complete_configuration(em, guess, tol=1e-12)
        assert np.abs(closure_error(tree, em.chords, qc)).max() < 1e-12, name
        assert np.abs(qc - E.complete_configuration(em, q_guess=guess, tol=1e-12)).max() < 1e-12, name
        if em.nq == em.nv:                           # the independent coordinates are held
            assert np.array_equal(qc[em.independent_v], guess[em.independent_v])


def test_compiled_newton_gives_the_reference_outcome_where_the_loop_cannot_close():
    """Crank angles over a full turn: a four-bar's loop closes on part of it only; where it does not,
    the kernel declines and the reference raises its ClosureError."""
    asm, tm, em = load("fourbar")
    raised = 0
    for angle in np.linspace(-np.pi, np.pi, 13):
        guess = em.neutral()
        guess[em.q_slice("crank_pivot")] += angle
        try:
            expected = E.complete_configuration(em, q_guess=guess)
        except ClosureError as error:
            raised += 1
            with pytest.raises(ClosureError, match=str(error).split(":")[-1].strip()):
                closed_api.complete_configuration(em, guess)
            continue
        assert np.abs(closed_api.complete_configuration(em, guess) - expected).max() < 1e-12
    assert 0 < raised < 13


@pytest.mark.parametrize("name", available())
def test_compiled_velocity_completion_is_tangent_to_the_constraints_and_is_the_reference(name):
    asm, tm, em = load(name)
    tree, rng = em.tree_model, np.random.default_rng(4)
    for q, _, _ in random_states(em, rng, 4):
        v_i = rng.normal(size=em.n_independent)
        v = closed_api.complete_velocity(em, q, v_i)
        G = closure_jacobian(tree, em.chords, q)
        assert np.abs(G @ v).max() < 1e-12 * max(1.0, np.abs(v).max()), name
        assert np.array_equal(v[em.independent_v], v_i)
        assert np.abs(project_velocity(em, q, v) - v).max() < 1e-12 * max(1.0, np.abs(v).max())
        assert np.abs(v - E.complete_velocity(em, q, v_i)).max() < 1e-12 * max(1.0, np.abs(v).max())


def test_compiled_velocity_completion_of_an_open_configuration_raises_the_reference_error():
    asm, tm, em = load("fourbar")
    q = em.neutral()
    q[em.q_slice("crank_pivot")] += 0.3
    with pytest.raises(ClosureError, match="not closed"):
        closed_api.complete_velocity(em, q, [1.0])


@pytest.mark.parametrize("name", PLANAR_SAMPLES)
@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_compiled_loop_keeps_every_step_closed_and_equals_the_numpy_steps(name, method):
    asm, tm, em = load(name)
    rng = np.random.default_rng(7)
    q, v, tau = random_states(em, rng, 1, spread=0.3)[0]
    damping = rng.uniform(0.0, 0.05, size=em.nv)
    dt, steps = 2e-3, 100
    run = simulate_api.closed_chain_stepper(em, dt, method, 0.2 * tau, damping, 1e-12)
    y = np.concatenate([q, v[em.independent_v]])
    Y = np.empty((steps + 1, y.size))
    Y[0] = y
    assert run(y, 0, steps, 1, Y) == steps                 # no step declined
    closure = [np.abs(closure_error(em.tree_model, em.chords, qs)).max() for qs in Y[:, :em.nq]]
    assert max(closure) < 1e-9
    assert np.ptp(Y[:, em.nq:]) > 0.1                       # it moves

    joints = JointProperties(damping, np.full(em.nv, -np.inf), np.full(em.nv, np.inf))
    args = (em, q, v, steps * dt, steps + 1)
    kwargs = dict(torque=0.2 * tau, method=method, dt=dt, joints=joints)
    with backend("compiled"):                               # every step compiled, or CompiledDeclined
        compiled = simulate(*args, **kwargs)
    with backend("numpy"):                                  # every step, closure and completion in numpy
        reference = simulate(*args, **kwargs)
    scale = max(1.0, np.abs(reference.v).max())
    assert np.abs(compiled.q - reference.q).max() < 1e-10 * scale
    assert np.abs(compiled.v - reference.v).max() < 1e-10 * scale
    assert np.abs(compiled.q[:, :] - Y[:, :em.nq]).max() < 1e-12 * scale


def test_compiled_loop_converges_at_the_integrators_order_to_the_adaptive_reference():
    asm, tm, em = load("fourbar")
    v0 = np.zeros(em.nv)
    v0[em.independent_v] = 2.0
    q0, v0 = E.complete_configuration(em), E.complete_velocity(em, E.complete_configuration(em), v0)
    T = 0.4
    reference = simulate(em, q0, v0, T, 2, rtol=1e-12, atol=1e-12)
    for method, order, dts in (("rk4", 4, (2e-3, 1e-3)), ("euler", 1, (2e-3, 1e-3))):
        errors = [np.abs(simulate(em, q0, v0, T, 2, method=method, dt=dt).q[-1] - reference.q[-1]).max()
                  for dt in dts]
        assert np.log2(errors[0] / errors[1]) == pytest.approx(order, abs=0.1), (method, errors)


def test_steps_the_kernel_declines_are_taken_by_the_numpy_reference_and_logged(monkeypatch, caplog):
    """A stricter threshold on the dependent block's condition in the packed constants makes the kernels
    decline on part of the run (the four-bar's dependent block conditioning varies along it): the
    numpy steps take those, each decline is logged at DEBUG level, the run is the numpy run, and
    forcing the compiled backend turns the first decline into an error."""
    asm, tm, em = load("fourbar")
    v0 = np.zeros(em.nv)
    v0[em.independent_v] = 4.0
    q0 = E.complete_configuration(em)
    v0 = E.complete_velocity(em, q0, v0)
    conditions = []
    for q in simulate(em, q0, v0, 0.3, 31, method="rk4", dt=1e-2).q:
        G = closure_jacobian(em.tree_model, em.chords, q)[:, np.setdiff1d(np.arange(em.nv), em.independent_v)]
        conditions.append(np.linalg.norm(G) * np.linalg.norm(np.linalg.pinv(G)))
    em.closed_flat.fields.rcond_switch[()] = 1.0 / np.median(conditions)
    calls = spy_on_stepper(monkeypatch)
    with caplog.at_level(logging.DEBUG, logger=simulate_api.log.name):
        compiled = simulate(em, q0, v0, 0.3, 31, method="rk4", dt=1e-2)
    assert len(calls) > 2 and any(s == s0 for s0, s in calls) and any(s > s0 for s0, s in calls)
    declines = [r for r in caplog.records if r.name == simulate_api.log.name and "declined" in r.message]
    assert len(declines) == sum(s < 31 for _, s in calls) and "near singular" in declines[0].message
    with backend("numpy"):
        reference = simulate(em, q0, v0, 0.3, 31, method="rk4", dt=1e-2)
    assert np.abs(compiled.q - reference.q).max() < 1e-10
    assert np.abs(compiled.v - reference.v).max() < 1e-10 * max(1.0, np.abs(reference.v).max())
    with backend("compiled"), pytest.raises(CompiledDeclined, match="near singular"):
        simulate(em, q0, v0, 0.3, 31, method="rk4", dt=1e-2)


def test_forces_of_time_and_state_are_declined_by_the_compiled_loop_and_logged(caplog):
    asm, tm, em = load("fourbar")
    q0 = E.complete_configuration(em)
    v0 = E.complete_velocity(em, q0, np.ones(em.n_independent))
    constant = np.full(em.nv, 0.1)
    with caplog.at_level(logging.DEBUG, logger=simulate_api.log.name):
        varying = simulate(em, q0, v0, 0.05, 6, torque=lambda t, q, v: constant, method="rk4", dt=1e-2)
    said = [r.message for r in caplog.records if r.name == simulate_api.log.name]
    assert len(said) == 1 and "f(t, q, v)" in said[0] and "numpy steps" in said[0]
    fixed = simulate(em, q0, v0, 0.05, 6, torque=constant, method="rk4", dt=1e-2)
    assert np.abs(varying.q - fixed.q).max() < 1e-10
    with backend("compiled"), pytest.raises(CompiledDeclined, match="f\\(t, q, v\\)"):
        simulate(em, q0, v0, 0.05, 6, torque=lambda t, q, v: constant, method="rk4", dt=1e-2)


@pytest.mark.parametrize("name", PLANAR_SAMPLES)
def test_consistent_states_and_closure_errors_of_the_simulators_are_the_numpy_reference(name):
    """``simulation.closed.consistent_state`` (the compiled kernels on the default split where it has not
    degraded) gives the numpy ``complete_state`` (split chosen at q) to 1e-12, and ``closure_error`` the largest
    numpy closure error, from configurations moved off the loops."""
    from mbcompose.dynamics.closed.embedding import complete_state, terms_at
    from mbcompose.dynamics.simulation.closed import closure_error as largest_closure_error, consistent_state

    asm, tm, em = load(name)
    rng = np.random.default_rng(31)
    for q, v, tau in random_states(em, rng, 6):
        q_off = q + 1e-4 * rng.standard_normal(em.nq)
        v_off = v + 1e-3 * rng.standard_normal(em.nv)
        q_ref, v_ref = complete_state(em, q_off, v_off, tol=1e-12)
        qc, vc = consistent_state(em, q_off, v_off, 1e-12)
        assert np.max(np.abs(qc - q_ref)) < 1e-12 and np.max(np.abs(vc - v_ref)) < 1e-12 * max(1.0, np.abs(v_ref).max())
        for x in (q_off, qc):
            assert abs(largest_closure_error(em, x) - np.max(np.abs(terms_at(em, x).e))) < 1e-14
        with backend("numpy"):
            q_np, v_np = consistent_state(em, q_off, v_off, 1e-12)
        assert np.array_equal(q_np, q_ref) and np.array_equal(v_np, v_ref)


def test_result_energies_are_pinocchios_kinetic_and_potential_energy_sample_by_sample():
    """``simulation.result.energies`` over a trajectory (one batched call) against Pinocchio's
    ``computeKineticEnergy`` and ``computePotentialEnergy`` of the same spanning tree, sample by sample."""
    import pinocchio as pin
    from mechanisms import PinTwin
    from mbcompose.dynamics.simulation.result import energies

    asm, tm, em = load("leg_fourbar_knee")
    twin = PinTwin(tm, planar=True)
    data = twin.pm.createData()
    states = random_states(em, np.random.default_rng(32), 5)
    Q, V = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    total, kinetic = energies(em.tree_model, Q, V)
    for q, v, E_total, E_kin in zip(Q, V, total, kinetic):
        T = pin.computeKineticEnergy(twin.pm, data, twin.qp(q), twin.vpin(v))
        U = pin.computePotentialEnergy(twin.pm, data, twin.qp(q))
        assert abs(E_kin - T) < 1e-12 * max(1.0, abs(T))
        assert abs(E_total - (T + U)) < 1e-12 * max(1.0, abs(T) + abs(U))
    assert energies(em.tree_model, Q[:0], V[:0])[0].shape == (0,)


@pytest.mark.parametrize("seed", range(6))
def test_compiled_world_kinematics_and_chord_columns_are_the_numpy_ones_on_random_closed_chains(seed):
    """``closed_api.world_kinematics`` (one compiled Newton-Euler pass) gives the numpy world kinematics of every
    body (poses, joint columns, twists, bias accelerations) to 1e-12, and the chord coordinates and rates the
    simulators report from them are the numpy ``chord_coordinates`` of every chord type."""
    from test_random_closed_chains import closed_chain, closed_states
    from mbcompose.dynamics.batch import prepare
    from mbcompose.dynamics.closed.embedding import chord_coordinates
    from mbcompose.dynamics.simulation.closed import chord_columns
    from mbcompose.dynamics.world_kinematics import kinematics

    model, chords, q0, rng = closed_chain(seed)
    em = E.embed(model, chords, q_ref=q0)
    states = closed_states(model, em, rng, 3)
    for q, v in states:
        kin = closed_api.world_kinematics(em, q, v)
        _, _, _, w, V, ac, _, _ = prepare(model, q, v)
        ref = kinematics(model, w, V, ac)
        for name in ("R", "p", "S_w", "S_v", "p_col", "w", "v", "wd", "ad"):
            a, b = getattr(kin, name), getattr(ref, name)
            assert a.shape == b.shape and np.max(np.abs(a - b), initial=0.0) < 1e-12 * max(1.0, np.abs(b).max()), name
    qs, vs = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    names, values = chord_columns(em, qs, vs)
    with backend("numpy"):
        names_ref, values_ref = chord_columns(em, qs, vs)
    assert names == names_ref and np.max(np.abs(values - values_ref), initial=0.0) < 1e-12
    for q, v in states:
        for c, (qc, vc) in chord_coordinates(em, q, v, kin=closed_api.world_kinematics(em, q, v)).items():
            q_ref, v_ref = chord_coordinates(em, q, v)[c]
            assert np.allclose(qc, q_ref, rtol=0, atol=1e-12) and np.allclose(vc, v_ref, rtol=0, atol=1e-12)
