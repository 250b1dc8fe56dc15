"""Closed-chain forward dynamics by constraint embedding vs a dense Lagrange-multiplier
reference and Pinocchio's constrained dynamics (see mechanisms.py for the references)."""

import numpy as np
import pytest

from mbcompose.dynamics import embedding as E
from mechanisms import PinTwin, available, load, random_states

SAMPLES = available()


def rel(x, ref):
    return np.max(np.abs(x - ref)) / max(1.0, np.max(np.abs(ref)))


@pytest.mark.parametrize("name", SAMPLES)
def test_accelerations_of_all_joints_match_dense_lagrange_multiplier_reference(name):
    asm, tm, em = load(name)
    twin = PinTwin(tm)
    rng = np.random.default_rng(7)
    for q, v, tau in random_states(em, rng, 20):
        a = E.forward_dynamics(em, q, v, tau)
        a_ref, Qc_ref = twin.lagrange_accelerations(q, v, tau)
        assert rel(a, a_ref) < 1e-8, name
        # the generalized constraint force G^T lambda is unique even with redundant constraints
        cf = E.constraint_forces(em, q, v, tau)
        assert rel(cf.generalized, Qc_ref) < 1e-6, name


@pytest.mark.parametrize("name", SAMPLES)
def test_accelerations_match_pinocchio_constraint_dynamics(name):
    asm, tm, em = load(name)
    twin = PinTwin(tm)
    rng = np.random.default_rng(11)
    for q, v, tau in random_states(em, rng, 20):
        a = E.forward_dynamics(em, q, v, tau)
        a_pin = twin.constraint_dynamics(q, v, tau)
        assert rel(a, a_pin) < 1e-6, name


@pytest.mark.parametrize("name", SAMPLES)
def test_states_are_closed_and_velocities_in_the_null_space_of_the_independent_jacobian(name):
    asm, tm, em = load(name)
    twin = PinTwin(tm)
    rng = np.random.default_rng(3)
    for q, v, tau in random_states(em, rng, 5):
        qp = twin.qp(q)
        assert np.max(np.abs(twin.error(qp))) < 1e-9
        G = twin.jacobian(qp)
        assert np.max(np.abs(twin.jacobian_fd(qp) - G)) < 1e-8 * max(1.0, np.max(np.abs(G)))
        assert np.max(np.abs(twin.jacobian_fd(qp) @ twin.vpin(v))) < 1e-7 * max(1.0, np.max(np.abs(v)))
