"""SDFormat joint springs and dampers (``<axis><dynamics>`` ``spring_stiffness``, ``spring_reference``,
``damping``) give the generalized forces Drake's force elements give (its own SDFormat parser) and
the analytic ``-k (q - q_ref) - d v``; URDF ``<dynamics friction>`` is a regularised Coulomb friction
``-friction tanh(v / 0.01)``, in ``passive_forces`` and ``friction_forces``."""

import logging
from pathlib import Path

import numpy as np
import pytest

from mbcompose import compose, dynamics

SPRINGS = Path(__file__).resolve().parents[1] / "data" / "sdf" / "joint_springs.sdf"

URDF = """<robot name="r">
  <link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="a"/><child link="b"/><dynamics damping="0.3" friction="0.2"/></joint>
  <joint name="j2" type="continuous"><parent link="b"/><child link="c"/><dynamics damping="0.1" friction="0.4"/></joint>
</robot>"""


def test_sdf_joint_springs_are_analytic():
    model = compose(SPRINGS).model
    q, v = np.array([0.3, 0.1]), np.array([0.7, -0.4])
    expected = [-3 * (0.3 - 0.4) - 0.5 * 0.7, -7 * (0.1 + 0.2) - 0.25 * -0.4]
    np.testing.assert_allclose(dynamics.passive_forces(model, q, v), expected, rtol=1e-14)


def test_sdf_joint_springs_match_drake():
    pytest.importorskip("pydrake")
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import MultibodyForces

    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(SPRINGS))
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    model = compose(SPRINGS).model
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, v = rng.uniform(-1, 1, 2), rng.normal(size=2)
        plant.SetPositions(ctx, q)
        plant.SetVelocities(ctx, v)
        forces = MultibodyForces(plant)
        plant.CalcForceElementsContribution(ctx, forces)
        np.testing.assert_allclose(dynamics.passive_forces(model, q, v), forces.generalized_forces(), rtol=0,
                                   atol=1e-12)


def test_urdf_friction_is_a_regularised_coulomb_friction(tmp_path, caplog):
    path = tmp_path / "r.urdf"
    path.write_text(URDF)
    with caplog.at_level(logging.WARNING):
        model = compose(path).model
    assert not [r for r in caplog.records if "friction" in r.getMessage()]
    v = np.array([0.004, -1.0])
    friction = [-0.2 * np.tanh(0.4), 0.4 * np.tanh(100.0)]
    np.testing.assert_allclose(dynamics.friction_forces(model, model.neutral(), v), friction, rtol=1e-15)
    np.testing.assert_allclose(dynamics.passive_forces(model, model.neutral(), v),
                               [-0.3 * 0.004 + friction[0], 0.1 + friction[1]], rtol=1e-15)
