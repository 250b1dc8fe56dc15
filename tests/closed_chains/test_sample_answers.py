"""The samples' README answers (computed there from planar / vector loop geometry), and
the seeker with kept bearings against the reduced seeker."""

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose.dynamics import embedding as E
from mechanisms import CLOSED, load, random_states, tree_of

RATES = {
    # sample: (driven coordinate, {coordinate: rate per unit driven rate at the reference})
    "fourbar": [("crank_pivot", {"crank_coupler": -8 / 7, "coupler_rocker": 3 / 7, "rocker_pivot": 2 / 7})],
    "slider_crank": [("crank_pivot", {"crank_rod": -25 / 21, "rod_slider": 4 / 21, "slide": 2 / 35})],
    "fivebar": [("left_pivot", {"right_pivot": 0.0, "left_elbow": -8 / 5, "right_elbow": 3 / 5, "apex": 6 / 5}),
                ("right_pivot", {"left_pivot": 0.0, "left_elbow": 3 / 5, "right_elbow": -8 / 5, "apex": -6 / 5})],
    "leg_fourbar_knee": [("knee_front_upper", {"knee_front_lower": 16 / 11, "knee_rear_upper": 13 / 11,
                                               "knee_rear_lower": 14 / 11, "hip": 0.0, "ankle": 0.0})],
    "rssr": [("crank_pivot", {"rocker_pivot": 0.25})],
    "seeker_bearings": [("yaw_a", {"yaw_b": 1.0, "pitch_a": 0.0, "pitch_b": 0.0})],
}
INDEPENDENT = {
    "fourbar": ("crank_pivot",), "slider_crank": ("crank_pivot",), "fivebar": ("left_pivot", "right_pivot"),
    "leg_fourbar_knee": ("hip", "knee_front_upper", "ankle"), "seeker_bearings": ("pitch_a", "yaw_a"),
}


def chord_rate(em, name, q, v):
    """Rate of a chord joint (revolute about +y in the planar samples): difference of the
    absolute in-plane rates of its two bodies, from the tree's own joint rates."""
    c = next(c for c in em.chords if c.name == name)
    V = dyn.body_velocities(em.tree_model, q, v)
    R, _ = dyn.body_poses(em.tree_model, q)
    w = lambda b: np.zeros(3) if b < 0 else R[b] @ V[b, :3]
    return float(c.axis @ (w(c.body_b) - w(c.body_a)))


@pytest.mark.parametrize("name", list(RATES))
def test_reference_rates_are_the_readme_ratios(name):
    asm, tm, em = load(name)
    q = em.neutral()
    for driven, expected in RATES[name]:
        v_ind = np.array([1.0 if c == driven else 0.0 for c in em.independent])
        if driven not in em.independent:
            pytest.fail(f"{driven} should be independent in {name}")
        v = E.complete_velocity(em, q, v_ind)
        for coord, r in expected.items():
            got = chord_rate(em, coord, q, v) if coord in [c.name for c in em.chords] else v[em.v_slice(coord)][0]
            assert got == pytest.approx(r, abs=1e-9), (name, coord)


@pytest.mark.parametrize("name", list(INDEPENDENT))
def test_actuated_joints_are_the_independent_coordinates(name):
    asm, tm, em = load(name)
    assert em.independent == INDEPENDENT[name]
    assert len(em.independent) + len(em.dependent) == em.nv


def test_rssr_has_mobility_two_including_the_coupler_spin():
    asm, tm, em = load("rssr")
    assert em.n_independent == 2 and "crank_pivot" in em.independent
    assert [c.name for c in em.chords] == ["coupler_rocker"]


def test_rssr_crank_turns_fully_and_the_rocker_swing_is_the_readme_range():
    asm, tm, em = load("rssr")
    q = em.neutral()
    phi = []
    for th in np.linspace(0.0, 2 * np.pi, 361):
        q = E.complete_configuration(em, q, q_ind={"crank_pivot": th})
        phi.append(q[em.q_slice("rocker_pivot")][0])
    assert np.degrees(min(phi)) == pytest.approx(-5.96, abs=0.05)
    assert np.degrees(max(phi)) == pytest.approx(38.66, abs=0.05)


def test_leg_knee_loop_is_local_to_the_knee():
    asm, tm, em = load("leg_fourbar_knee")
    (lp,) = em.loops
    names = {tm.model.body_names[b] for b in lp.bodies}
    assert names == {"front_link", "rear_link", "shank"}


def test_seeker_with_kept_bearings_has_the_dynamics_of_the_reduced_seeker():
    asm, tm, em = load("seeker_bearings")
    red = tree_of(asm, drop=("pitch_b", "yaw_b")).model
    assert not tree_of(asm, drop=("pitch_b", "yaw_b")).chords
    assert em.independent == ("pitch_a", "yaw_a")
    rng = np.random.default_rng(4)
    ind = [em.v_slice(n).start for n in em.independent]
    for q, v, tau in random_states(em, rng, 10, spread=0.4):
        qr = red.neutral()
        vr = np.zeros(red.nv)
        tr = np.zeros(red.nv)
        for n in ("pitch_a", "yaw_a"):
            qr[red.q_slice(n)] = q[em.q_slice(n)]
            vr[red.v_slice(n)] = v[em.v_slice(n)]
        # torques only at the kept joints: the bearings pitch_b, yaw_b are passive
        t = np.zeros(em.nv)
        for n in ("pitch_a", "yaw_a"):
            t[em.v_slice(n)] = tau[em.v_slice(n)]
            tr[red.v_slice(n)] = tau[em.v_slice(n)]
        Mr = dyn.mass_matrix(red, qr)
        Me = E.mass_matrix(em, q)
        idx = [red.v_slice(n).start for n in ("pitch_a", "yaw_a")]
        assert np.allclose(Me, Mr[np.ix_(idx, idx)], rtol=1e-10, atol=1e-14 * np.abs(Mr).max())
        a = E.forward_dynamics(em, q, v, t)
        ar = dyn.forward_dynamics(red, qr, vr, tr)
        scale = max(1.0, np.abs(ar).max())
        assert np.allclose(a[ind], ar[idx], rtol=0, atol=1e-9 * scale)
        assert a[em.v_slice("yaw_b")][0] == pytest.approx(a[em.v_slice("yaw_a")][0], abs=1e-9 * scale)
        assert q[em.q_slice("yaw_b")][0] == pytest.approx(q[em.q_slice("yaw_a")][0], abs=1e-10)
        # and the same joint forces from inverse dynamics
        tau_e = E.inverse_dynamics(em, q, v, a)
        tau_r = dyn.inverse_dynamics(red, qr, vr, ar)
        assert np.allclose(tau_e[ind], tau_r[idx], atol=1e-9 * max(1.0, np.abs(tau_r).max()))


@pytest.mark.parametrize("name", list(RATES))
def test_chord_coordinates_and_rates(name):
    """Chord rates equal the README ratios (reference) and the finite difference of the chord
    coordinates along a closed trajectory; coordinates are zero at the reference."""
    from mbcompose.dynamics.kinematics import integrate
    from mbcompose.dynamics.spatial import quat_to_matrix, so3_log

    asm, tm, em = load(name)
    q = em.neutral()
    chords = [c.name for c in em.chords]
    for driven, expected in RATES[name]:
        v_ind = np.array([1.0 if c == driven else 0.0 for c in em.independent])
        v = E.complete_velocity(em, q, v_ind)
        cc = E.chord_coordinates(em, q, v)
        for c in chords:
            qc, vc = cc[c]
            if len(vc) == 0:
                continue
            if c in expected:
                assert vc[0] == pytest.approx(expected[c], abs=1e-9)
            h = 1e-6
            q2 = E.complete_configuration(em, integrate(em.tree_model, q, h * v))
            qc2 = E.chord_coordinates(em, q2)[c][0]
            if len(qc) == 4:      # spherical: R(0)^T R(h) = exp(h omega_b)
                fd = so3_log(quat_to_matrix(qc).T @ quat_to_matrix(qc2)) / h
            else:
                fd = (qc2 - qc) / h
            assert np.allclose(vc, fd, atol=1e-5), (name, c)
            assert np.allclose(qc[:len(qc) if len(qc) != 4 else 0], 0.0, atol=1e-12)


def test_pipeline_seeker_with_kept_bearings_equals_the_reduced_seeker():
    """Through composer.compose (lumped composites): redundant_joints='keep' (loops embedded)
    against the default removal of pitch_b and yaw_b."""
    from mbcompose import composer
    path = CLOSED["seeker_bearings"]
    kept = composer.compose(path, redundant_joints="keep").model
    red = composer.compose(path).model
    assert {c.name for c in kept.chords} == {"pitch_b", "yaw_b"}
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = kept.neutral()
        qr = red.neutral()
        v = np.zeros(kept.nv)
        vr = np.zeros(red.nv)
        t = np.zeros(kept.nv)
        tr = np.zeros(red.nv)
        for n in ("pitch_a", "yaw_a"):
            x, xd, f = rng.uniform(-0.4, 0.4), rng.normal(), rng.normal() * 1e-3
            q[kept.q_slice(n)], v[kept.v_slice(n)], t[kept.v_slice(n)] = x, xd, f
            qr[red.q_slice(n)], vr[red.v_slice(n)], tr[red.v_slice(n)] = x, xd, f
        q = E.complete_configuration(kept, q)
        v = E.complete_velocity(kept, q, v)
        a = E.forward_dynamics(kept, q, v, t)
        ar = dyn.forward_dynamics(red, qr, vr, tr)
        for n in ("pitch_a", "yaw_a"):
            assert a[kept.v_slice(n)] == pytest.approx(ar[red.v_slice(n)], rel=1e-9, abs=1e-9)
        cc = E.chord_coordinates(kept, q, v)
        assert cc["pitch_b"][0][0] == pytest.approx(q[kept.q_slice("pitch_a")][0], abs=1e-12)
        assert cc["yaw_b"][1][0] == pytest.approx(v[kept.v_slice("yaw_a")][0], abs=1e-12)
