"""Compiled closed-chain forward dynamics (``dynamics.compiled.closed_api``, the ``embedded`` row of the
dispatch table) against the numpy constraint embedding, Pinocchio's ``constraintDynamics`` and a dense
KKT solve with Pinocchio's M and C."""

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose import parsers
from mbcompose.graph.model.closed import embed_tree_model
from mbcompose.dynamics import embedding as E
from mbcompose.dynamics.closed.closure import ClosureError
from mbcompose.dynamics.compiled import closed_api
from mbcompose.dynamics.dispatch import algorithm
from mechanisms import PinTwin, available, load, random_states, tree_of
from test_planar_chord import MECHANISM
from test_random_closed_chains import closed_chain, closed_states, kkt_accelerations
from trees import random_model, random_q, to_pinocchio, v_perm

PLANAR_SAMPLES = ("fourbar", "fivebar", "leg_fourbar_knee")


def rel(x, ref):
    return np.max(np.abs(x - ref)) / max(1.0, np.max(np.abs(ref)))


def pin_constraint_dynamics(twin):
    """``a(q, v, tau)`` by ``pinocchio.constraintDynamics`` on ``twin``'s spanning tree and constraints."""
    import pinocchio as pin

    data, cms, cds, prox = twin.constraint_solver(mu=1e-10)
    return lambda q, v, tau: twin.v_from_pin(pin.constraintDynamics(twin.pm, data, twin.qp(q), twin.vpin(v),
                                                                     twin.vpin(tau), cms, cds, prox))


def test_the_embedded_row_of_the_dispatch_table_is_the_compiled_kernel():
    asm, tm, em = load("fourbar")
    q, v, tau = random_states(em, np.random.default_rng(0), 1)[0]
    dyn.forward_dynamics(em, q, v, tau)
    assert algorithm(em, "forward_dynamics") is closed_api.forward_dynamics


@pytest.mark.parametrize("name", available())
def test_compiled_accelerations_equal_the_numpy_embedding_on_every_closed_sample(name):
    asm, tm, em = load(name)
    for q, v, tau in random_states(em, np.random.default_rng(5), 8):
        a = dyn.forward_dynamics(em, q, v, tau)
        assert rel(a, E.forward_dynamics(em, q, v, tau)) < 1e-10, name


@pytest.mark.parametrize("name", PLANAR_SAMPLES)
def test_compiled_accelerations_equal_pinocchio_constraint_dynamics(name):
    asm, tm, em = load(name)
    pin_fd = pin_constraint_dynamics(PinTwin(tm, planar=True))
    for q, v, tau in random_states(em, np.random.default_rng(13), 8):
        a_pin = pin_fd(q, v, tau)
        assert rel(dyn.forward_dynamics(em, q, v, tau), a_pin) < 1e-10, name


@pytest.mark.parametrize("seed", range(12))
def test_compiled_accelerations_equal_kkt_on_random_closed_chains_with_every_chord_type(seed):
    model, chords, q0, rng = closed_chain(seed)
    em = E.embed(model, chords, q_ref=q0)
    pm, _, _ = to_pinocchio(model)
    pd = pm.createData()
    n_ok = 0
    for q, v in closed_states(model, em, rng, 4):
        tau = rng.normal(size=model.nv)
        a = dyn.forward_dynamics(em, q, v, tau)
        assert rel(a, E.forward_dynamics(em, q, v, tau)) < 1e-10
        assert rel(a, kkt_accelerations(model, pm, pd, chords, q, v, tau)) < 1e-7
        n_ok += 1
    assert n_ok >= 2


def test_loop_through_a_planar_joint(tmp_path):
    """The planar joint is a tree joint of the loop here; planar chords are among the random chains'."""
    path = tmp_path / "planar_chord.yaml"
    path.write_text(MECHANISM)
    em = embed_tree_model(tree_of(parsers.read_assembly(path)))
    assert "planar" in em.tree_model.joint_types and len(em.loops) == 1
    for q, v, tau in random_states(em, np.random.default_rng(4), 6):
        assert rel(dyn.forward_dynamics(em, q, v, tau), E.forward_dynamics(em, q, v, tau)) < 1e-10


def test_batches_give_the_accelerations_of_each_state():
    asm, tm, em = load("leg_fourbar_knee")
    states = random_states(em, np.random.default_rng(6), 5)
    Q, V, T = (np.array(x) for x in zip(*states))
    A = dyn.forward_dynamics(em, Q, V, T)
    assert A.shape == (5, em.nv)
    for a, (q, v, tau) in zip(A, states):
        assert rel(a, E.forward_dynamics(em, q, v, tau)) < 1e-10
    A0 = dyn.forward_dynamics(em, Q[0], V[0], T)        # one state broadcast against a batch of forces
    for a, tau in zip(A0, T):
        assert rel(a, E.forward_dynamics(em, Q[0], V[0], tau)) < 1e-10


def test_open_configurations_raise_the_closure_error_of_the_reference():
    asm, tm, em = load("fourbar")
    q = em.neutral()
    q[em.q_slice("crank_pivot")] += 0.3
    with pytest.raises(ClosureError, match="not closed"):
        dyn.forward_dynamics(em, q, np.zeros(3), np.zeros(3))
    with pytest.raises(TypeError, match="external forces"):
        dyn.forward_dynamics(em, em.neutral(), np.zeros(3), np.zeros(3), f_ext=np.zeros((3, 6)))


def dead_centre_state():
    """The four-bar with the rocker independent at the dead centre of its default dependent set:
    crank (0.09) and coupler (0.25) in line, C at distance r1 = 0.34 from A and r2 = 0.26 from D
    (triangle A-D-C, analytic); (tm, em0, em, q, v) with the rocker turning at 1.3 rad/s."""
    asm, tm, em0 = load("fourbar")
    em = E.embed(tm.model, em0.chords, independent=["rocker_pivot"])
    r1, r2 = 0.34, 0.26
    x = (r1 ** 2 - r2 ** 2 + 0.3 ** 2) / (2 * 0.3)
    Cp = np.array([x, np.sqrt(r1 ** 2 - x ** 2)])
    q = np.zeros(3)
    q[em.q_slice("crank_pivot")] = -(np.arctan2(Cp[1], Cp[0]) - np.pi / 2)
    q[em.q_slice("crank_coupler")] = -(0.0 - (np.arctan2(0.15, 0.2) - np.pi / 2))
    q[em.q_slice("rocker_pivot")] = -(np.arctan2(Cp[1], Cp[0] - 0.3) - np.arctan2(0.24, -0.1))
    return tm, em0, em, q, E.complete_velocity(em0, q, [1.3])


def test_dead_centre_of_the_default_dependent_set_gives_the_accelerations_of_the_lagrange_solution():
    """Crank and coupler in line with the rocker independent: the default dependent block is singular,
    the kernel declines, and the reference re-picks the dependent set."""
    tm, em0, em, q, v = dead_centre_state()
    tau = np.random.default_rng(2).normal(size=3) * 0.01
    a_ref, _ = PinTwin(tm).lagrange_accelerations(q, v, tau)
    a = dyn.forward_dynamics(em, q, v, tau)
    assert np.allclose(a, a_ref, atol=1e-9 * max(1.0, np.abs(a_ref).max()))


def test_lists_other_dtypes_and_readonly_arrays_take_the_general_path_to_the_same_accelerations():
    asm, tm, em = load("fivebar")
    q, v, tau = random_states(em, np.random.default_rng(8), 1)[0]
    tau = tau.astype(np.float32).astype(np.float64)         # exact in single precision
    a_ref = E.forward_dynamics(em, q, v, tau)
    ro = np.broadcast_to(q, q.shape)
    for args in ((list(q), list(v), list(tau)), (ro, v, tau.astype(np.float32)), (q, v[None], tau)):
        a = dyn.forward_dynamics(em, *args)
        assert rel(np.reshape(a, -1), a_ref) < 1e-10
    with pytest.raises(ValueError, match="shape"):
        dyn.forward_dynamics(em, q[:-1], v, tau)


@pytest.mark.parametrize("seed", (1, 5))
def test_rotor_inertia_of_the_tree_joints_enters_like_in_the_numpy_embedding_and_pinocchio(seed):
    model, chords, q0, rng = closed_chain(seed)
    model.armature = rng.uniform(0.0, 0.5, size=model.nv)
    em = E.embed(model, chords, q_ref=q0)
    pm, _, _ = to_pinocchio(model)
    pm.armature = model.armature[v_perm(model)]
    pd = pm.createData()
    for q, v, tau in random_states(em, rng, 3, spread=0.1):
        a = dyn.forward_dynamics(em, q, v, tau)
        assert rel(a, E.forward_dynamics(em, q, v, tau)) < 1e-10
        assert rel(a, kkt_accelerations(model, pm, pd, chords, q, v, tau)) < 1e-7


def test_embedding_without_chords_gives_the_tree_accelerations():
    model, rng = random_model(4, n=8)
    em = E.embed(model, [])
    q = random_q(model, rng)
    v, tau = rng.normal(size=(2, model.nv))
    a_ref = dyn.forward_dynamics(model, q, v, tau)
    assert np.allclose(dyn.forward_dynamics(em, q, v, tau), a_ref, atol=1e-10 * max(1.0, np.abs(a_ref).max()))


# ---- backends and declines -----------------------------------------------------------------------------

import logging
from pathlib import Path

import mbcompose
from mbcompose.dynamics.dispatch import CompiledDeclined, backend

COUPLINGS = Path(__file__).resolve().parents[1] / "data" / "sdf" / "couplings.sdf"


@pytest.mark.parametrize("name", PLANAR_SAMPLES + ("seeker_bearings",))
def test_forward_dynamics_and_closure_on_each_backend_give_the_numpy_reference(name):
    """Under ``backend("compiled")`` every call runs its kernel (a decline would raise; the given Data is
    written), under ``backend("numpy")`` the reference (the Data stays untouched), with the same numbers."""
    asm, tm, em = load(name)
    rng = np.random.default_rng(21)
    for q, v, tau in random_states(em, rng, 3):
        results = {}
        guess = q.copy()
        guess[em.dependent_v] += rng.uniform(-1e-3, 1e-3, size=len(em.dependent_v))    # (nq = nv here)
        for which in ("numpy", "compiled"):
            data = em.create_data()
            with backend(which):
                a = dyn.forward_dynamics(em, q, v, tau, data=data)
                qc = closed_api.complete_configuration(em, guess, data=data)
                vc = closed_api.complete_velocity(em, qc, v[em.independent_v], data=data)
            assert bool(np.any(data.fields.M)) == (which == "compiled") == bool(np.any(data.tree.work))
            results[which] = a, qc, vc
        for x, ref in zip(results["compiled"], results["numpy"]):
            assert rel(x, ref) < 1e-10, name


def test_linear_couplings_run_the_compiled_tree(caplog):
    """Linear joint couplings only (``X`` constant): forward dynamics from the compiled tree's mass
    matrix and bias, equal to the numpy embedding at random states, with no decline logged."""
    coupled = mbcompose.compose(COUPLINGS).model
    if coupled.constant_basis is None:
        pytest.skip("the couplings file has non-linear couplings or loops")
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = E.complete_configuration(coupled, coupled.neutral() + 0.3 * rng.standard_normal(coupled.nq))
        v = E.complete_velocity(coupled, q, rng.standard_normal(coupled.n_independent))
        tau = rng.standard_normal(coupled.nv)
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger=closed_api.log.name):
            a = dyn.forward_dynamics(coupled, q, v, tau)
        np.testing.assert_allclose(a, E.forward_dynamics(coupled, q, v, tau), rtol=0, atol=1e-10)
        assert not [r for r in caplog.records if r.name == closed_api.log.name]


def test_declines_run_the_reference_and_say_why_or_raise_under_the_compiled_backend(caplog):
    """The dead centre of the default dependent set (the kernel declines, the reference re-picks the
    dependent coordinates): logged at DEBUG in the default backend, CompiledDeclined when the compiled
    backend is forced.  Joint couplings are rows of the kernels (no decline): the compiled closure of a
    coupled model runs under the compiled backend and gives the reference's configuration."""
    tm, em0, em, q, v = dead_centre_state()
    coupled = mbcompose.compose(COUPLINGS).model
    qk = coupled.neutral()
    guess = qk + 0.05 * np.random.default_rng(2).standard_normal(coupled.nq)
    with backend("compiled"):
        closed = closed_api.complete_configuration(coupled, guess)
    np.testing.assert_allclose(closed, E.complete_configuration(coupled, guess, adaptive=False), rtol=0, atol=1e-12)
    cases = [(em, (q, v, np.zeros(3)), "near singular")]
    for model, state, why in cases:
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger=closed_api.log.name):
            a = dyn.forward_dynamics(model, *state)
        assert np.allclose(a, E.forward_dynamics(model, *state), rtol=0, atol=1e-12)
        said = [r.message for r in caplog.records if r.name == closed_api.log.name]
        assert len(said) == 1 and why in said[0] and "numpy embedding" in said[0]
        with backend("compiled"), pytest.raises(CompiledDeclined, match=why):
            dyn.forward_dynamics(model, *state)


def test_the_two_buffers_of_a_data_hold_the_six_packed_arrays_and_give_the_kernel_of_ten_arrays():
    """The one-configuration entry takes the data's two buffers (six array arguments instead of ten): their
    sections are the packed arrays the other kernels take (the same memory), copies of the model's, and the
    accelerations are those of the ten-array kernel and of the numpy embedding."""
    from mbcompose.dynamics.compiled import closed_kernels as ck

    asm, tm, em = load("leg_fourbar_knee")
    data, flat, cf = em.create_data(), em.tree_model.flat_model, em.closed_flat
    ints, floats, work, cint, cflt, cwork = data.packed
    for section, model_array in ((ints, flat.ints), (floats, flat.floats), (cint, cf.cint), (cflt, cf.cflt)):
        assert np.array_equal(section, model_array) and not np.shares_memory(section, model_array)
    for section, buffer in ((ints, data.int_buffer), (cint, data.int_buffer), (floats, data.float_buffer),
                            (work, data.float_buffer), (cflt, data.float_buffer), (cwork, data.float_buffer)):
        assert np.shares_memory(section, buffer)
    assert np.shares_memory(work, data.tree.work) and np.shares_memory(cwork, data.work)
    for q, v, tau in random_states(em, np.random.default_rng(21), 4):
        a6, a10 = np.empty(em.nv), np.empty(em.nv)
        assert ck.buffered_forward_dynamics(data.int_buffer, data.float_buffer, q, v, tau, a6) == ck.OK
        assert ck.embedded_forward_dynamics(*data.packed, q, v, tau, a10) == ck.OK
        assert np.array_equal(a6, a10)
        assert rel(a6, E.forward_dynamics(em, q, v, tau)) < 1e-12
        assert rel(dyn.forward_dynamics(em, q, v, tau, data=data), a6) == 0.0


def test_buffers_that_do_not_hold_their_sections_are_refused_by_the_kernel():
    """A float buffer shorter than its sections, an int buffer cut inside its descriptor table or a descriptor
    pointing outside: the kernel returns BAD_SHAPE (it reads nothing outside the buffers)."""
    from mbcompose.dynamics.compiled import closed_kernels as ck

    asm, tm, em = load("fourbar")
    data = em.create_data()
    q, v, tau = random_states(em, np.random.default_rng(22), 1)[0]
    out = np.empty(em.nv)
    assert ck.buffered_forward_dynamics(data.int_buffer, data.float_buffer[:-1].copy(), q, v, tau, out) == ck.BAD_SHAPE
    assert ck.buffered_forward_dynamics(data.int_buffer[:5].copy(), data.float_buffer, q, v, tau, out) == ck.BAD_SHAPE
    bad = data.int_buffer.copy()
    bad[0] = bad.size            # the first section (the tree's ints) would start at the end of the buffer
    assert ck.buffered_forward_dynamics(bad, data.float_buffer, q, v, tau, out) == ck.BAD_SHAPE
    assert ck.buffered_forward_dynamics(data.int_buffer, data.float_buffer, q[:-1].copy(), v, tau, out) == ck.BAD_SHAPE
    assert rel(dyn.forward_dynamics(em, q, v, tau), E.forward_dynamics(em, q, v, tau)) < 1e-12
