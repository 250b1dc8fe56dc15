"""Loop closure functions: G = de/dq and gamma = Gdot v against finite differences, for every
chord type on random trees of every joint type; closure is zero where the frames coincide."""

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose.dynamics.closed.closure import Chord, chord_rows, closure_bias, closure_error, closure_jacobian
from mbcompose.dynamics.kinematics import integrate
from mbcompose.dynamics.spatial import quat_to_matrix
from trees import random_model, random_q

CHORD_TYPES = ("fixed", "revolute", "continuous", "prismatic", "cylindrical", "spherical", "universal", "planar",
               "free")


def random_chords(model, rng, n=None):
    out = []
    for t in CHORD_TYPES:
        a, b = rng.choice(np.arange(-1, model.n_bodies), size=2, replace=False)
        out.append(Chord(f"c_{t}", t, int(a), int(b), R_a=quat_to_matrix(rng.normal(size=4)), p_a=rng.normal(size=3),
                         R_b=quat_to_matrix(rng.normal(size=4)), p_b=rng.normal(size=3), axis=rng.normal(size=3),
                         axis2=rng.normal(size=3)))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_closure_jacobian_and_bias_match_finite_differences(seed):
    model, rng = random_model(seed, n=8)
    chords = random_chords(model, rng)
    q = random_q(model, rng)
    v = rng.normal(size=model.nv)
    G = closure_jacobian(model, chords, q)
    h = 1e-6
    I = np.eye(model.nv)
    G_fd = np.column_stack([(closure_error(model, chords, integrate(model, q, h * I[i]))
                             - closure_error(model, chords, integrate(model, q, -h * I[i]))) / (2 * h)
                            for i in range(model.nv)])
    assert np.allclose(G, G_fd, atol=1e-7 * max(1.0, np.abs(G).max()))
    # along q(t) = integrate(q, t v) the velocity v is constant: d/dt (G v) = Gdot v
    gamma_fd = (closure_jacobian(model, chords, integrate(model, q, h * v)) @ v
                - closure_jacobian(model, chords, integrate(model, q, -h * v)) @ v) / (2 * h)
    assert np.allclose(closure_bias(model, chords, q, v), gamma_fd, atol=1e-6 * max(1.0, np.abs(gamma_fd).max()))


def test_row_counts_are_the_constrained_freedoms_of_each_joint_type():
    expected = {"fixed": 6, "revolute": 5, "continuous": 5, "prismatic": 5, "cylindrical": 4, "spherical": 3,
                "universal": 4, "planar": 3, "free": 0}
    for t, n in expected.items():
        assert chord_rows(Chord("c", t, -1, 0, axis2=(1.0, 0, 0))).n == n


@pytest.mark.parametrize("seed", range(5))
def test_closure_vanishes_when_the_frames_coincide_and_not_otherwise(seed):
    model, rng = random_model(seed + 50, n=6)
    q = random_q(model, rng)
    R, p = dyn.body_poses(model, q)
    x = rng.normal(size=3)
    Rj = quat_to_matrix(rng.normal(size=4))
    a, b = 1, 4
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    w = np.cross(u, rng.normal(size=3))
    for t in CHORD_TYPES:
        c = Chord(t, t, a, b, R_a=R[a].T @ Rj, p_a=R[a].T @ (x - p[a]), R_b=R[b].T @ Rj, p_b=R[b].T @ (x - p[b]),
                  axis=u, axis2=w)
        assert np.max(np.abs(closure_error(model, [c], q)), initial=0.0) < 1e-12
        # move frame b along/about the joint's free directions: still closed; across them: not
        if t in ("revolute", "continuous"):
            Rt = quat_to_matrix(np.r_[np.cos(0.2), np.sin(0.2) * u])        # rotation about u (J_a axes)
            c2 = Chord(t, t, a, b, R_a=c.R_a, p_a=c.p_a, R_b=c.R_b @ Rt, p_b=c.p_b, axis=u)
            assert np.max(np.abs(closure_error(model, [c2], q))) < 1e-12
            c3 = Chord(t, t, a, b, R_a=c.R_a, p_a=c.p_a, R_b=c.R_b, p_b=c.p_b + 0.1 * (R[b].T @ Rj @ w), axis=u)
            assert np.max(np.abs(closure_error(model, [c3], q))) > 1e-3
