"""configuration_rate is the time derivative of integrate (central finite differences)."""

import numpy as np
import pytest

from mbcompose import dynamics
from mbcompose.dynamics.kinematics import integrate, random_configuration
from mbcompose.dynamics.rates import configuration_rate

TYPES = ["free", "spherical", "planar", "revolute", "universal", "cylindrical", "prismatic", "continuous"]


def chain(types, rng):
    specs = []
    for k, t in enumerate(types):
        a = rng.normal(size=3)
        a /= np.linalg.norm(a)
        a2 = np.cross(a, rng.normal(size=3))
        a2 /= np.linalg.norm(a2)
        R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        R *= np.sign(np.linalg.det(R))
        specs.append(dynamics.BodySpec(
            name=f"b{k}", parent=k - 1, joint_type=t, joint_name=f"j{k}", placement_rotation=R,
            placement_translation=rng.normal(size=3), mass=1.0 + k, com=rng.normal(size=3) * 0.1,
            inertia=np.diag([1.0, 1.2, 1.5]), axis=a, axis2=a2 if t == "universal" else None))
    return dynamics.build_model(specs)


@pytest.mark.parametrize("seed", range(5))
def test_configuration_rate_matches_central_difference_of_integrate(seed):
    rng = np.random.default_rng(seed)
    model = chain(TYPES, rng)
    q = random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    h = 1e-6
    fd = (integrate(model, q, v, h) - integrate(model, q, v, -h)) / (2 * h)
    np.testing.assert_allclose(configuration_rate(model, q, v), fd, atol=1e-8)


def test_stabilisation_vanishes_on_the_unit_sphere_and_pulls_back_off_it():
    rng = np.random.default_rng(7)
    model = chain(["spherical"], rng)
    q = random_configuration(model, rng)
    v = rng.normal(size=3)
    np.testing.assert_allclose(configuration_rate(model, q, v, stabilise=10.0),
                               configuration_rate(model, q, v), atol=1e-14)
    grown = 1.1 * q
    rate = configuration_rate(model, grown, np.zeros(3), stabilise=10.0)
    assert rate @ grown < 0


def test_batched_rates_equal_single_rates():
    rng = np.random.default_rng(3)
    model = chain(TYPES, rng)
    qs = np.stack([random_configuration(model, rng) for _ in range(4)])
    vs = rng.normal(size=(4, model.nv))
    batch = configuration_rate(model, qs, vs)
    for i in range(4):
        np.testing.assert_allclose(batch[i], configuration_rate(model, qs[i], vs[i]), atol=1e-15)
