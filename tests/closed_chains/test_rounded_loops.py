"""Loops whose file geometry is rounded (issue 25): ranked at the input geometry's tolerance, they move.

Three parallel cranks of 0.3 m carry a coupler (a double parallelogram: Gruebler's count says 0, its
geometry says 1 degree of freedom); the third crank is written 3e-8 m longer, as a file rounded to 7
digits would have it.  Ranked at ``CLOSURE_RANK_RTOL`` the loop would lock away from the reference (its
rows separate by the rounding as it moves); ranked at ``GRAPH_RANK_RTOL`` as the graph stage ranks it, a
nearly dependent row is dropped: the kept rows close to ``CLOSURE_TOL``, the dropped one keeps the
file's rounding (a few 1e-9 m over +-0.6 rad, below ``ROUNDED_CLOSURE_TOL``).

References: MuJoCo's compiled model of the same file (its mobility at the graph stage's rank, and
its constrained model in minimal coordinates, ``tests/robots/test_menagerie.py``'s method with MuJoCo's
rows ranked at ``GRAPH_RANK_RTOL``: they agree to the rounding's size, the mechanism as written being
mobile only to it), and the numpy reference for the compiled kernels.
"""

from __future__ import annotations

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.dynamics import embedding as E
from mbcompose.dynamics.closed.embedding import closing_error, dropped_error, loop_closure, terms_at
from mbcompose.dynamics.compiled import closed_api
from mbcompose.dynamics.dispatch import backend
from mbcompose.dynamics.tolerances import CLOSURE_TOL, GRAPH_RANK_RTOL, ROUNDED_CLOSURE_TOL

mujoco = pytest.importorskip("mujoco")

EPS = 3e-8                                   # m, the third crank's rounding
CRANKS = f"""<mujoco><compiler angle="radian"/><option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="crank1"><joint name="crank1" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.01" mass="0.3"/>
      <body name="coupler" pos="0 0 0.3"><joint name="coupler" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.01" mass="0.2"/></body></body>
    <body name="crank2" pos="0.1 0 0"><joint name="crank2" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.01" mass="0.3"/></body>
    <body name="crank3" pos="0.2 0 0"><joint name="crank3" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 {0.3 + EPS!r}" size="0.01" mass="0.3"/></body>
  </worldbody>
  <equality><connect body1="crank2" body2="coupler" anchor="0 0 0.3"/>
    <connect body1="crank3" body2="coupler" anchor="0 0 {0.3 + EPS!r}"/></equality>
</mujoco>"""
ANGLES = np.linspace(-0.6, 0.6, 5)           # rad, the independent crank


@pytest.fixture(scope="module")
def cranks(tmp_path_factory):
    path = tmp_path_factory.mktemp("rounded") / "cranks.xml"
    path.write_text(CRANKS)
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    return compose(str(path)).model, m


def _closed(em, angle):
    return E.complete_configuration(em, q_ind={em.independent[0]: angle}, q_guess=em.neutral())


def test_rounded_double_parallelogram_has_mujocos_mobility_at_the_graph_rank(cranks):
    em, m = cranks
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    J = d.efc_J.reshape(d.nefc, m.nv)
    s = np.linalg.svd(J, compute_uv=False)
    assert s[-1] > 1e-9 * s[0]               # MuJoCo's rows: rank 4 at CLOSURE_RANK_RTOL (the neck-like lock)
    assert em.n_independent == m.nv - int(np.sum(s > GRAPH_RANK_RTOL * s[0])) == 1
    assert em.loops[0].slack == ROUNDED_CLOSURE_TOL


def test_kept_rows_close_and_the_dropped_row_keeps_only_the_rounding(cranks):
    em, _ = cranks
    lp = em.loops[0]
    for angle in ANGLES:
        q = _closed(em, angle)
        e = loop_closure(terms_at(em, q), lp, slice(None))[0]
        assert closing_error(lp, e) <= CLOSURE_TOL
        assert dropped_error(lp, e) <= 1e-8            # the rounding: EPS (1 - cos) and its kin, 2.6e-9 at 0.6 rad
        assert q[em.tree_model.q_slice(em.independent[0])][0] == angle


def test_rounded_loop_minimal_dynamics_match_mujoco_to_the_rounding(cranks):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "robots"))
    from mujoco_refs import reference_orientations
    from test_menagerie import connect_offsets, minimal_reference, mujoco_constrained

    em, m = cranks
    d = mujoco.MjData(m)
    B, offsets = reference_orientations(m), connect_offsets(m)
    rng = np.random.default_rng(5)
    for angle in ANGLES:
        q = _closed(em, angle)
        v = E.complete_velocity(em, q, rng.normal(size=1))
        closure, A, gamma, M, bias = mujoco_constrained(m, d, em, q, v, B, offsets)
        assert closure <= 1e-8                           # MuJoCo sees the dropped row's rounding only
        U, s, _ = np.linalg.svd(A)
        r = int(np.sum(s > GRAPH_RANK_RTOL * s[0]))
        M_ref, h_ref = minimal_reference(em, U[:, :r].T @ A, U[:, :r].T @ gamma, M, bias)
        M_e = E.mass_matrix(em, q)
        h_e = E.inverse_dynamics(em, q, v, np.zeros(em.nv))[list(em.independent_v)]
        # the file's mechanism is mobile to its rounding only: rows chosen differently differ by ~EPS / L
        assert np.abs(M_e - M_ref).max() <= 1e-6 * np.abs(M_ref).max()
        assert np.abs(h_e - h_ref).max() <= 1e-6 * max(1.0, np.abs(h_ref).max())
        if angle == 0.0:                                 # at the reference the rows are exactly dependent
            assert np.abs(M_e - M_ref).max() <= 1e-12 * np.abs(M_ref).max()


def test_compiled_closure_and_dynamics_of_a_rounded_loop_match_the_numpy_reference(cranks):
    em, _ = cranks
    rng = np.random.default_rng(9)
    for angle in ANGLES:
        q = _closed(em, angle)
        guess = q + rng.normal(scale=1e-3, size=em.nq)
        guess[em.independent_v] = q[em.independent_v]
        with backend("numpy"):
            q_np = E.complete_configuration(em, guess, adaptive=False)
        with backend("compiled"):
            q_c = closed_api.complete_configuration(em, guess)
        np.testing.assert_allclose(q_c, q_np, atol=1e-12)
        v = E.complete_velocity(em, q, rng.normal(size=1))
        tau = rng.normal(size=em.nv)
        with backend("numpy"):
            a_np = dynamics.forward_dynamics(em, q, v, tau)
        with backend("compiled"):
            a_c = dynamics.forward_dynamics(em, q, v, tau)
        np.testing.assert_allclose(a_c, a_np, atol=1e-10 * max(1.0, np.abs(a_np).max()))
