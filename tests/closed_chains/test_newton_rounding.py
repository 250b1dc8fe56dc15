"""The closure Newton's end at the rounding floor (:data:`dynamics.tolerances.NEWTON_ROUNDING_STEP`): a
polishing step that moves no dependent coordinate by more than it is not taken, in the numpy reference and the
compiled kernels alike.  References: the closure error and Jacobian of :mod:`dynamics.closed.closure`
(evaluated apart from the Newton iteration) and the numpy reference for the compiled kernels."""

import numpy as np

from mbcompose.dynamics.closed import embedding as E
from mbcompose.dynamics.closed.closure import closure_error, closure_jacobian
from mbcompose.dynamics.compiled import closed_api
from mbcompose.dynamics.tolerances import NEWTON_ROUNDING_STEP, SIMULATION_CLOSURE_TOL
from mechanisms import load


def test_a_stage_of_the_fourbar_closes_in_three_evaluations_and_a_further_step_is_below_the_floor(monkeypatch):
    """An RK4 stage's configuration (closed state + dt/2 times a tangent velocity, dt = 1e-3): Newton's step,
    one polishing step, then the step at the returned q is below the floor and not taken (the old rule took it
    and evaluated once more).  The closure error there is at rounding level, and Newton's step computed from
    the closure Jacobian apart from the iteration is below the floor in every dependent coordinate."""
    asm, tm, em = load("fourbar")
    tree, lp = em.tree_model, em.loops[0]
    v0 = np.zeros(em.nv)
    v0[em.independent_v] = 2.0
    q0 = E.complete_configuration(em, em.neutral(), tol=SIMULATION_CLOSURE_TOL)
    v0 = E.complete_velocity(em, q0, v0[em.independent_v])
    guess = q0 + 5e-4 * v0
    calls, original = [], E._closure_at
    monkeypatch.setattr(E, "_closure_at", lambda *a: calls.append(1) or original(*a))
    splits = {lp.node: (lp.rows, lp.dep, lp.ind)}
    q = E.complete_configuration(em, guess, tol=SIMULATION_CLOSURE_TOL, splits=splits)
    assert len(calls) == 3
    e = closure_error(tree, em.chords, q)
    assert np.abs(e).max() <= SIMULATION_CLOSURE_TOL
    dep = lp.v_idx[lp.dep]
    step = np.linalg.solve(closure_jacobian(tree, em.chords, q)[lp.rows][:, dep], e[lp.rows])
    assert np.abs(step).max() <= NEWTON_ROUNDING_STEP
    assert np.array_equal(q[em.independent_v], guess[em.independent_v])
    qc = closed_api.complete_configuration(em, guess, tol=SIMULATION_CLOSURE_TOL)
    assert np.abs(qc - q).max() < 1e-12
