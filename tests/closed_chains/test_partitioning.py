"""Coordinate partitioning that follows the motion (generalized coordinate partitioning, per state).

References, independent of the embedding: the dense Lagrange-multiplier model
(``dynamics.closed.lagrange``: tree mass matrix and bias, closure Jacobian by rows of rank) integrated by
scipy for the simulations, and Pinocchio's tree with point constraints (``mechanisms.PinTwin``) for the
minimal-coordinate mass matrix and bias (its accelerations under unit independent forces give
``M_e^-1``).
"""

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.integrate import solve_ivp

from mbcompose import compose
from mbcompose.composer.cli.commands import main
from mbcompose.dynamics import embedding as E
from mbcompose.dynamics.closed import embedding as CE
from mbcompose.dynamics.closed import lagrange as L
from mbcompose.dynamics.closed.closure import ClosureError, closure_error
from mbcompose.dynamics.compiled import closed_api
from mbcompose.dynamics.dispatch import CompiledDeclined, backend
from mbcompose.dynamics.simulation import JointProperties, simulate
from mechanisms import PinTwin, load, random_states

FIVEBAR_CONNECT = Path(__file__).resolve().parents[1] / "data" / "mjcf" / "fivebar_connect.xml"


def default_rcond(em, q) -> float:
    """Reciprocal condition of the default dependent block of the (single) loop at q."""
    lp, m = em.loops[0], em.tree_model
    G = CE.loop_closure(CE.constraint_terms(em, CE.kinematics(m, CE.prepare(m, q)[3]), q), lp, slice(None))[1]
    return CE._rcond(G[np.ix_(lp.rows, lp.dep)])


def lagrange_run(em, q0, v0, duration, t_eval, damping, tol):
    """The dense Lagrange-multiplier model integrated over the full (q, v) by DOP853 (no projection)."""
    lm = L.LagrangeModel(em.tree_model, em.chords)

    def f(t, y):
        q, v = y[:em.nq], y[em.nq:]
        return np.concatenate([v, L.forward_dynamics(lm, q, v, -damping * v)])

    sol = solve_ivp(f, (0.0, duration), np.concatenate([q0, v0]), method="DOP853", rtol=tol, atol=tol,
                    t_eval=t_eval)
    assert sol.success
    return sol.y[:em.nq].T


def check_against_lagrange(em, q0, v0, duration=2.0, damping=0.05, tol=1e-10):
    d = np.full(em.nv, damping)
    joints = JointProperties(d, np.full(em.nv, -np.inf), np.full(em.nv, np.inf))
    res = simulate(em, q0, v0, duration, samples=101, rtol=tol, atol=tol, joints=joints)
    assert res.closure.max() < 1e-9
    q_ref = lagrange_run(em, res.q[0], res.v[0], duration, res.t, d, 1e-12)
    assert np.abs(closure_error(em.tree_model, em.chords, q_ref[-1])).max() < 1e-9   # the reference holds too
    assert np.abs(res.q - q_ref).max() < 1e-6
    return res


@pytest.mark.slow
def test_fivebar_closed_by_a_connect_falls_2_s_through_its_default_split_singularity_as_lagrange_does():
    """Before: 'the closure Jacobian loses rank (singular values of the dependent block 1.98e-09 ..)' at
    about 0.26 s.  The passive joints line up, so the run needs other dependent coordinates there."""
    em = compose(str(FIVEBAR_CONNECT)).model
    assert (em.independent, em.n_independent) == (("ja", "jb"), 2)
    res = check_against_lagrange(em, em.neutral(), np.zeros(em.nv))
    assert int(res.status.split(", ")[-1].split()[0]) > 1                  # it re-partitioned
    assert min(default_rcond(em, q) for q in res.q) < 1e-2                 # through the default's near-singularity


@pytest.mark.slow
@pytest.mark.parametrize("offset", [0.2, 1.0])
def test_fourbar_moved_away_from_the_reference_simulates_as_lagrange_does(offset):
    asm, tm, em = load("fourbar")
    guess = em.neutral()
    guess[em.tree_model.q_slice(em.independent[0])] += offset
    q0 = E.complete_configuration(em, guess)
    v0 = E.complete_velocity(em, q0, np.array([1.0]))
    check_against_lagrange(em, q0, v0, damping=0.0, tol=1e-11)     # two crank turns: a tighter tolerance


@pytest.mark.slow
def test_fixed_step_rk4_through_the_default_singularity_converges_at_fourth_order_to_lagrange(caplog):
    """The compiled loop integrates ``[q, v_ind]`` of the default split and declines as that split degrades
    (a threshold of stepper_rcond_switch); the numpy steps, which re-partition, take those steps."""
    import logging

    from mbcompose.dynamics.compiled import simulate_api

    em = compose(str(FIVEBAR_CONNECT)).model
    d = np.full(em.nv, 0.05)
    joints = JointProperties(d, np.full(em.nv, -np.inf), np.full(em.nv, np.inf))
    errors = []
    for dt in (1e-3, 5e-4):
        with caplog.at_level(logging.DEBUG, logger=simulate_api.log.name):
            res = simulate(em, em.neutral(), np.zeros(em.nv), 1.0, samples=101, method="rk4", dt=dt, joints=joints)
        assert res.closure.max() < 1e-9
        assert any("near singular" in r.message for r in caplog.records if r.name == simulate_api.log.name)
        caplog.clear()
        errors.append(np.abs(res.q - lagrange_run(em, res.q[0], res.v[0], 1.0, res.t, d, 1e-12)).max())
    assert errors[0] < 2e-5 and np.log2(errors[0] / errors[1]) == pytest.approx(4.0, abs=0.5), errors


def inverse_mass_by_lagrange(em, twin, q):
    """(M_e, a0): the minimal-coordinate mass matrix in ``em.independent`` order from the Lagrange reference's
    accelerations under unit independent forces, and its accelerations under none (at rest)."""
    zero = np.zeros(em.nv)
    a0 = twin.lagrange_accelerations(q, zero, zero)[0][em.independent_v]
    cols = []
    for j in em.independent_v:
        tau = zero.copy()
        tau[j] = 1.0
        cols.append(twin.lagrange_accelerations(q, zero, tau)[0][em.independent_v] - a0)
    return np.linalg.inv(np.column_stack(cols))


class DenseLagrange:
    """``lagrange_accelerations`` of :class:`mechanisms.PinTwin` from ``dynamics.closed.lagrange`` (for
    models read from a file, which have no Assembly twin)."""

    def __init__(self, em):
        self.lm = L.LagrangeModel(em.tree_model, em.chords)

    def lagrange_accelerations(self, q, v, tau):
        return L.forward_dynamics(self.lm, q, v, tau), None


def references():
    for name in ("fourbar", "fivebar", "leg_fourbar_knee"):
        yield pytest.param(name, id=name)
    yield pytest.param("fivebar_connect", id="mjcf_fivebar_connect")


@pytest.mark.parametrize("name", references())
def test_minimal_mass_matrix_and_bias_at_random_states_over_the_range_match_the_lagrange_reference(name):
    if name == "fivebar_connect":
        em = compose(str(FIVEBAR_CONNECT)).model
        twin = DenseLagrange(em)
    else:
        tm, em = load(name)[1:]
        twin = PinTwin(tm)
    rng = np.random.default_rng(5)
    checked = 0
    for q, v, tau in random_states(em, rng, 12, spread=np.pi):
        a_ref = twin.lagrange_accelerations(q, v, tau)[0]
        assert np.abs(E.forward_dynamics(em, q, v, tau) - a_ref).max() < 1e-8 * max(1.0, np.abs(a_ref).max())
        if default_rcond(em, q) < 1e-6:
            with pytest.raises(ClosureError):
                E.mass_matrix(em, q)
            continue
        M_ref = inverse_mass_by_lagrange(em, twin, q)
        scale = np.abs(M_ref).max()
        assert np.abs(E.mass_matrix(em, q) - M_ref).max() < 1e-9 * scale, name
        # bias: tau_i = M_e a_i + h_e with the reference's accelerations, forces on independent joints only
        t_i = np.zeros(em.nv)
        t_i[em.independent_v] = tau[em.independent_v]
        a_i = twin.lagrange_accelerations(q, v, t_i)[0][em.independent_v]
        h_ref = t_i[em.independent_v] - M_ref @ a_i
        h = CE.bias_forces(em, q, v)[em.independent_v]
        assert np.abs(h - h_ref).max() < 1e-9 * max(1.0, np.abs(h_ref).max()), name
        checked += 1
    assert checked >= 6, name


def test_per_state_rows_drop_the_redundant_connect_row_by_rank():
    em = compose(str(FIVEBAR_CONNECT)).model
    lp, m = em.loops[0], em.tree_model
    assert (len(lp.all_rows), len(lp.rows)) == (3, 2)
    rng = np.random.default_rng(2)
    for q, v, tau in random_states(em, rng, 8, spread=2.0):
        G = CE.loop_closure(CE.constraint_terms(em, CE.kinematics(m, CE.prepare(m, q)[3]), q), lp, slice(None))[1]
        rows, dep, ind = CE.partition_at(em, lp, G)
        assert np.linalg.matrix_rank(G[rows]) == np.linalg.matrix_rank(G) == 2
        assert len(dep) == 2 and CE._rcond(G[np.ix_(rows, dep)]) > 1e-8


def singular_default_state(em):
    """A closed five-bar state where the default dependent block (jc, jd) is singular: bisection of the
    sign of its determinant between two closed states on either side (passive links in line)."""
    lp, m = em.loops[0], em.tree_model

    def det(q):
        G = CE.loop_closure(CE.constraint_terms(em, CE.kinematics(m, CE.prepare(m, q)[3]), q), lp, slice(None))[1]
        return np.linalg.det(G[np.ix_(lp.rows, lp.dep)])

    qa = E.project_configuration(em, np.array([0.81137972, -0.7887789, 1.62965627, -1.57964128]))
    qb = E.project_configuration(em, np.array([0.84936451, -0.81956704, 1.63694969, -1.54488499]))
    assert np.sign(det(qa)) != np.sign(det(qb))
    for _ in range(60):
        qm = E.project_configuration(em, 0.5 * (qa + qb))
        qa, qb = (qm, qb) if np.sign(det(qm)) == np.sign(det(qa)) else (qa, qm)
    return qa


def test_the_compiled_path_declines_where_the_default_split_is_singular_and_the_numpy_path_switches():
    em = compose(str(FIVEBAR_CONNECT)).model
    q = singular_default_state(em)
    assert default_rcond(em, q) < 1e-6
    lm = L.LagrangeModel(em.tree_model, em.chords)
    rng = np.random.default_rng(4)
    v = E.project_velocity(em, q, rng.normal(size=em.nv))
    tau = rng.normal(size=em.nv)
    a_ref = L.forward_dynamics(lm, q, v, tau)
    with backend("compiled"), pytest.raises(CompiledDeclined):
        closed_api.forward_dynamics(em, q, v, tau)
    with backend("numpy"):
        a_numpy = E.forward_dynamics(em, q, v, tau)
    a_auto = closed_api.forward_dynamics(em, q, v, tau)           # declines, then the numpy path
    assert np.abs(a_numpy - a_ref).max() < 1e-8 * max(1.0, np.abs(a_ref).max())
    assert np.abs(a_auto - a_numpy).max() < 1e-12 * max(1.0, np.abs(a_ref).max())
    qs, vs = CE.complete_state(em, q, v)
    assert np.abs(qs - q).max() < 1e-9 and np.abs(vs - v).max() < 1e-9     # consistent: kept as it is
    with pytest.raises(ClosureError, match="loses rank"):
        E.complete_velocity(em, q, v)                              # the default split cannot complete here


def test_compiled_and_numpy_paths_agree_away_from_the_default_singularity():
    em = compose(str(FIVEBAR_CONNECT)).model
    lm = L.LagrangeModel(em.tree_model, em.chords)
    rng = np.random.default_rng(8)
    for q, v, tau in random_states(em, rng, 5, spread=0.5):
        if default_rcond(em, q) < 1e-3:
            continue
        a_ref = L.forward_dynamics(lm, q, v, tau)
        with backend("compiled"):
            a_compiled = closed_api.forward_dynamics(em, q, v, tau)
        with backend("numpy"):
            a_numpy = E.forward_dynamics(em, q, v, tau)
        scale = max(1.0, np.abs(a_ref).max())
        assert np.abs(a_compiled - a_ref).max() < 1e-8 * scale
        assert np.abs(a_numpy - a_ref).max() < 1e-8 * scale


def test_a_singular_state_stops_the_simulator_with_time_state_and_loop():
    em = compose(str(FIVEBAR_CONNECT)).model
    from mbcompose.dynamics.simulation.closed import stopped_at

    err = stopped_at(em, ClosureError("singular configuration: the closure rank falls to 1", "connect0",
                                      ("ja", "connect0")), 0.25, np.arange(2 * em.nv, dtype=float))
    text = str(err)
    assert "\n" not in text and "t = 0.25 s" in text and "'connect0'" in text and "ja=0" in text
    assert isinstance(err, ClosureError)


def test_the_cli_exits_2_with_one_line_where_the_loop_cannot_close(tmp_path):
    result = CliRunner().invoke(main, ["simulate", str(FIVEBAR_CONNECT), "--q0", "ja=-1.5,jb=1.5", "--duration",
                                       "0.1", "-o", str(tmp_path / "out.csv"), "--no-plot"])
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1 and "connect0" in result.output


@pytest.mark.parametrize("name", ["fixman_gradient", "mass_matrix_sensitivity"])
def test_tree_only_gradients_refuse_an_embedded_model_with_a_clear_error(name):
    from mbcompose import dynamics as dyn

    asm, tm, em = load("fourbar")
    with pytest.raises(TypeError, match="rigid-body trees"):
        getattr(dyn, name)(em, em.neutral())
