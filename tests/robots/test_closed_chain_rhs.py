"""The adaptive closed-chain simulator's right-hand side on the compiled kernels (issue 25 must-show 1).

``dynamics.simulation.closed`` evaluates a state ``y = [q, v]`` with the split of the current segment
held: the loops closed by the compiled Newton (all loops per iteration), ``v = X v_i``, the embedded
forward dynamics, all on ``em.create_data(splits=...)``; the split's quality from the compiled closure
Jacobian of every row.  Each piece against the numpy reference (``dynamics.closed.embedding`` with the
same split; ``dynamics.rates.configuration_rate``), on the MJCF five-bar closed by a ``connect`` (its
default split turns singular as it falls), a file with joint couplings (rows of the kernels since this
change) and, when the Menagerie corpus is present, cassie and iit_softfoot.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mbcompose import compose, dynamics
from mbcompose.dynamics.closed import embedding as E
from mbcompose.dynamics.compiled import closed_api
from mbcompose.dynamics.compiled import closed_kernels as ck
from mbcompose.dynamics.dispatch import backend
from mbcompose.dynamics.kinematics import integrate
from mbcompose.dynamics.rates import QUATERNION_GAIN, configuration_rate
from mbcompose.dynamics.simulation.closed import split_quality, state_rate
from menagerie_standins import robot_file

DATA = Path(__file__).resolve().parents[1] / "data"
FIVEBAR = DATA / "mjcf" / "fivebar_connect.xml"
COUPLINGS = DATA / "sdf" / "couplings.sdf"
MENAGERIE = {"cassie": ("agility_cassie", "cassie.xml"), "iit_softfoot": ("iit_softfoot", "softfoot.xml")}


def model(name):
    if name == "fivebar":
        return compose(str(FIVEBAR)).model
    if name == "couplings":
        return compose(str(COUPLINGS)).model
    path = robot_file(*MENAGERIE[name])
    if path is None:
        pytest.skip(f"Menagerie's {name} is absent (tests/robots/menagerie_standins.py)")
    return compose(str(path)).model


def moved_states(em, rng, n, step=0.15):
    """(q, v) closed states reached from the reference by small steps of every coordinate (the loops closed
    by the numpy reference after each), v tangent to the constraints; states where a loop cannot close
    are skipped."""
    out, q = [], em.neutral()
    tm = em.tree_model
    while len(out) < n:
        try:
            q = E.complete_configuration(em, integrate(tm, q, rng.uniform(-step, step, size=em.nv)))
            out.append((q, E.project_velocity(em, q, rng.normal(size=em.nv))))
        except E.ClosureError:
            q = em.neutral()
    return out


def rel(x, ref):
    return np.max(np.abs(x - ref)) / max(1.0, np.max(np.abs(ref)))


@pytest.mark.parametrize("name", ["fivebar", "couplings", "cassie", "iit_softfoot"])
def test_compiled_state_completion_and_accelerations_on_a_chosen_split_are_the_references(name):
    """At moved states, with the split chosen there (not the default one) and with the default one: the
    compiled closure from a perturbed q, the velocity completion and the forward dynamics on
    ``create_data(splits=...)`` equal ``embedding.complete_state(..., splits=...)`` and the numpy
    embedded forward dynamics; the kernel itself runs (no decline: backend "compiled")."""
    em = model(name)
    rng = np.random.default_rng(4)
    for q, v in moved_states(em, rng, 3):
        for split in (E.choose_partition(em, q), {lp.node: (lp.rows, lp.dep, lp.ind) for lp in em.loops}):
            data = em.create_data(splits=split)
            guess = integrate(em.tree_model, q, 1e-4 * rng.normal(size=em.nv))
            vg = v + 1e-3 * rng.normal(size=em.nv)
            with backend("compiled"):
                qc, vc = closed_api.complete_state(em, guess, vg, tol=1e-12, splits=split, data=data)
                a = np.empty(em.nv)
                assert ck.embedded_forward_dynamics(*data.packed, qc, vc, np.ones(em.nv), a) == ck.OK
            q_ref, v_ref = E.complete_state(em, guess, vg, tol=1e-12, splits=split)
            assert np.abs(qc - q_ref).max() < 1e-11 and rel(vc, v_ref) < 1e-10
            assert rel(a, E.forward_dynamics(em, q_ref, v_ref, np.ones(em.nv))) < 1e-9


@pytest.mark.parametrize("name", ["fivebar", "couplings", "cassie", "iit_softfoot"])
def test_compiled_closure_jacobian_of_every_row_and_the_split_quality_are_the_references(name):
    em = model(name)
    rng = np.random.default_rng(8)
    for q, _ in moved_states(em, rng, 3):
        terms = E.terms_at(em, q)
        with backend("compiled"):
            jac = closed_api.loop_jacobians(em, q)
        for lp in em.loops:
            np.testing.assert_allclose(jac[lp.node], E.loop_closure(terms, lp, slice(None))[1], rtol=0, atol=1e-12)
        default = {lp.node: (lp.rows, lp.dep, lp.ind) for lp in em.loops}
        assert abs(split_quality(em, q, default) - E.partition_quality(em, q, default)) < 1e-9


@pytest.mark.parametrize("name", ["fivebar", "cassie"])
def test_configuration_rate_of_one_state_is_the_batched_function(name):
    """The simulator's q_dot (index arrays gathered once) against :func:`dynamics.rates.configuration_rate`
    with the quaternion stabilisation, at states off the unit sphere (cassie: a free joint, 4 balls)."""
    em = model(name)
    tm = em.tree_model
    rate = state_rate(tm)
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, v = em.neutral() + 0.2 * rng.normal(size=em.nq), rng.normal(size=em.nv)
        np.testing.assert_allclose(rate(q, v), configuration_rate(tm, q, v, stabilise=QUATERNION_GAIN),
                                   rtol=0, atol=1e-14)


def test_a_rounded_loop_on_a_split_keeping_other_rows_stays_compiled_and_matches_the_references(tmp_path):
    """A rounded loop (``test_rounded_loops``' double parallelogram, one crank 3e-8 m long: one of its rows is
    nearly dependent and dropped with a slack) on a split whose kept rows are not the default split's, as
    generalized coordinate partitioning may choose while the loop moves: the row slacks follow the split
    (``ClosedFlat.with_split``: the row it drops may keep the rounding, the row the default split dropped must
    close), so the compiled state completion and forward dynamics run (backend "compiled": no decline; with
    the default split's slacks Newton's method did not converge) and equal the numpy completion on the same
    split to 1e-12 and a Lagrange-multiplier solve on the split's kept rows (numpy tree M and bias, closure
    Jacobian and ``Gdot v`` of ``dynamics.closed.closure``) to 1e-12 relative."""
    import sys

    import scipy.linalg as sla
    from mbcompose.dynamics.closed.closure import closure_bias, closure_jacobian

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "closed_chains"))
    from test_rounded_loops import ANGLES, CRANKS

    path = tmp_path / "cranks.xml"
    path.write_text(CRANKS)
    em = compose(str(path)).model
    lp, tm = em.loops[0], em.tree_model
    rng = np.random.default_rng(3)
    for angle in ANGLES:
        q = E.complete_configuration(em, q_ind={em.independent[0]: angle}, q_guess=em.neutral())
        G = E.loop_closure(E.terms_at(em, q), lp, slice(None))[1]
        swaps = [np.sort(np.r_[np.delete(lp.rows, k), r]) for k in range(len(lp.rows))
                 for r in range(len(lp.all_rows)) if r not in lp.rows]
        rows = next(s for s in swaps if np.linalg.cond(G[np.ix_(s, lp.dep)]) < 1e3)
        split = {lp.node: (rows, lp.dep, lp.ind)}
        data = em.create_data(splits=split)
        guess = integrate(tm, q, 1e-4 * rng.normal(size=em.nv))
        guess[em.independent_v] = q[em.independent_v]
        v, tau = rng.normal(size=em.nv), rng.normal(size=em.nv)
        with backend("compiled"):
            qc, vc = closed_api.complete_state(em, guess, v, tol=1e-12, splits=split, data=data)
            a = np.empty(em.nv)
            assert ck.embedded_forward_dynamics(*data.packed, qc, vc, tau, a) == ck.OK
        q_ref, v_ref = E.complete_state(em, guess, v, tol=1e-12, splits=split)
        assert np.abs(qc - q_ref).max() < 1e-12 and np.abs(vc - v_ref).max() < 1e-12
        with backend("numpy"):
            M, C = dynamics.mass_matrix(tm, q_ref), dynamics.bias_forces(tm, q_ref, v_ref)
        kept = lp.all_rows[rows]
        Gk, gamma = closure_jacobian(tm, em.chords, q_ref)[kept], closure_bias(tm, em.chords, q_ref, v_ref)[kept]
        K = np.block([[M, Gk.T], [Gk, np.zeros((len(kept), len(kept)))]])
        a_ref = sla.solve(K, np.concatenate([tau - C, -gamma]))[:em.nv]
        assert rel(a, a_ref) < 1e-12, rel(a, a_ref)
