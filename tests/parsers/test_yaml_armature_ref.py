"""Native YAML joint keys ``armature`` (rotor inertia) and ``ref`` (the coordinate at the
reference configuration), against the closed form of a pendulum:
``M = I_axis + armature`` and gravity torque ``-m g l sin(q - ref)`` for a body that hangs
straight down at ``q = ref``.
"""

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.parsers import read_assembly
from mbcompose.parsers.yaml.format import write_yaml

PENDULUM = """
units: {angle: deg}
gravity: [0, 0, -9.81]
bodies:
  - name: bob
    pose: {xyz: [0, 0, -0.5]}
    inertial: {mass: 2.0, inertia: {ixx: 0.01, iyy: 0.02, izz: 0.03}}
joints:
  - {name: hinge, type: revolute, reference: ground, secondary: bob, axis: [0, 1, 0],
     armature: 0.7, ref: 30}
"""


def test_armature_and_ref_of_a_pendulum_give_the_closed_form(tmp_path):
    path = tmp_path / "pendulum.yaml"
    path.write_text(PENDULUM)
    model = compose(str(path)).model
    ref = np.radians(30)
    assert model.neutral() == pytest.approx([ref])
    m, l, g = 2.0, 0.5, 9.81
    for q in (ref, ref + 0.4, -1.1):
        assert dynamics.mass_matrix(model, [q])[0, 0] == pytest.approx(0.02 + m * l**2 + 0.7, rel=1e-12)
        tau = dynamics.inverse_dynamics(model, [q], [0.0], [0.0])[0]
        # rotation about +y by (q - ref) moves the bob from -z towards -x: gravity pulls it back
        assert tau == pytest.approx(m * g * l * np.sin(q - ref), rel=1e-12, abs=1e-12)


def test_yaml_writes_armature_and_ref_back(tmp_path):
    path = tmp_path / "pendulum.yaml"
    path.write_text(PENDULUM)
    a = read_assembly(path)
    again = tmp_path / "again.yaml"
    again.write_text(write_yaml(a))
    j = read_assembly(again).joint("hinge")
    assert (j.armature, j.ref) == (pytest.approx(0.7), pytest.approx(np.radians(30)))


def test_rotors_of_colinear_redundant_joints_add_up(tmp_path, caplog):
    """Two co-linear bearings of one shaft: the reduced joint turns both rotors, ``I_axis + a1 + a2``;
    with the bearings kept, the loop-closing one has no coordinate and its rotor is left out, warned."""
    path = tmp_path / "shaft.yaml"
    path.write_text("""
bodies:
  - name: shaft
    inertial: {mass: 1.0, inertia: {ixx: 0.3, iyy: 0.2, izz: 0.2}}
joints:
  - {name: front, type: revolute, reference: ground, secondary: shaft, origin: [0.2, 0, 0], axis: [1, 0, 0],
     armature: 0.05, actuated: true}
  - {name: rear, type: revolute, reference: shaft, secondary: ground, origin: [-0.2, 0, 0], axis: [1, 0, 0],
     armature: 0.02}
""")
    model = compose(str(path)).model
    assert dynamics.mass_matrix(model, model.neutral()).ravel() == pytest.approx([0.3 + 0.05 + 0.02], rel=1e-10)
    model = compose(str(path), redundant_joints="keep").model
    assert dynamics.mass_matrix(model, model.neutral()).ravel() == pytest.approx([0.3 + 0.05], rel=1e-10)
    assert f"{path}:8: armature of loop-closing joint 'rear' left out" in " ".join(caplog.messages)
