"""Names in URDF and SDFormat exports are valid for ROS tools (issue 24): CAD part names such as
``Arm:1/upper`` become ``Arm_1_upper`` with the original in a comment, references follow, and the files
load in Pinocchio and Drake with the dynamics of the original (Pinocchio's mass matrix against ours)."""

from __future__ import annotations

import re
from pathlib import Path

import mbcompose
import numpy as np
import pytest
from mbcompose import dynamics
from mbcompose.parsers.exporters import ROS_NAME, export, ros_safe_names

SAMPLE = Path(__file__).parents[2] / "samples" / "double_pendulum" / "double_pendulum.yaml"
RENAMES = {"link1": "Arm:1/upper", "link2": "Arm:1/lower arm", "shoulder": "Shoulder:1", "elbow": "2 elbow"}


def _cad_named(tmp_path) -> Path:
    text = SAMPLE.read_text()
    for old, new in RENAMES.items():
        text = re.sub(rf"\b{old}\b", f'"{new}"', text)
    path = tmp_path / "cad_named.yaml"
    path.write_text(text)
    return path


def _exported(tmp_path, suffix: str, tags: str):
    """The composition of the CAD-named pendulum and its export's text, whose ``tags`` names are ROS-safe."""
    composition = mbcompose.compose(_cad_named(tmp_path))
    out = tmp_path / f"arm{suffix}"
    export(composition.assembly, out)
    text = out.read_text()
    names = re.findall(rf'<(?:{tags}) name="([^"]+)"', text)
    assert names and all(ROS_NAME.match(n) for n in names), names
    return composition, out, text


def test_safe_names_are_unique_and_leave_good_names_alone():
    renames = ros_safe_names(["base", "Servo:1/Horn", "Servo_1_Horn", "1st link", "a b", "link_0.0", "a-b"])
    assert renames == {"Servo:1/Horn": "Servo_1_Horn_2", "1st link": "1st_link", "a b": "a_b"}
    assert all(ROS_NAME.match(n) for n in renames.values())


def test_urdf_export_names_are_ros_safe_and_pinocchio_gives_our_mass_matrix(tmp_path):
    pin = pytest.importorskip("pinocchio")
    composition, out, text = _exported(tmp_path, ".urdf", "link|joint")
    for original in RENAMES.values():
        assert f"original name: {original}" in text
    pm = pin.buildModelFromUrdf(str(out))
    model = composition.model
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = rng.uniform(-1.0, 1.0, model.nq)
        qp = np.zeros(pm.nq)
        for name in model.joint_names:
            qp[pm.joints[pm.getJointId(ros_safe_names([name]).get(name, name))].idx_q] = q[model.q_slice(name)][0]
        np.testing.assert_allclose(pin.crba(pm, pm.createData(), qp), dynamics.mass_matrix(model, q),
                                   rtol=0, atol=1e-12)


def test_sdf_export_names_are_ros_safe_and_drake_reads_it(tmp_path):
    pytest.importorskip("pydrake")
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    composition, out, text = _exported(tmp_path, ".sdf", "link|joint|frame")
    assert "original name: Arm:1/upper" in text
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(str(out))
    plant.Finalize()
    assert plant.num_velocities() == composition.model.nv
    assert plant.HasJointNamed("Shoulder_1") and plant.HasJointNamed("2_elbow")
