"""FMU tunable parameters and body poses (``mbcompose convert FILE -o X.fmu --fmu-output-pose BODY``), checked
with FMPy.

References: a parameter set through FMPy (``start_values``) against ``mbcompose simulate`` of the model file
with that value edited (the lumped seeker written by ``convert -o X.yaml``, whose composites carry explicit
mass properties; an MJCF double pendulum with joint springs), every joint coordinate to 1e-6 (the issue's
number, as in test_fmu.py); the pose outputs against :func:`dynamics.kinematics.body_poses` (the numpy
forward kinematics) evaluated on FMPy's own joint outputs at the same times, to 1e-9, and at the start
against the poses the input file gives the parts at the reference configuration.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from mbcompose.composer.cli import main

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402
from test_fmu import AGREEMENT, SAMPLES, joint_columns, pytestmark, run, simulate_csv  # noqa: E402,F401

#: pose outputs against the numpy forward kinematics on the same joint values, m and 1
POSE_AGREEMENT = 1e-9
#: a parameter's new value changes the motion by more than this many times AGREEMENT
VISIBLE = 100

SPRUNG_MJCF = """<mujoco model="sprung">
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="link1" pos="0 0 0">
      <joint name="shoulder" type="hinge" axis="0 1 0" stiffness="3.0" springref="0.2" damping="0.02"/>
      <inertial pos="0 0 -0.25" mass="1" diaginertia="0.021 0.021 0.0003"/>
      <body name="link2" pos="0 0 -0.5">
        <joint name="elbow" type="hinge" axis="0 1 0" stiffness="{elbow}" springref="0.3"/>
        <inertial pos="0 0 -0.2" mass="0.8" diaginertia="0.011 0.011 0.0002"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def convert(tmp_path, path, name, *options) -> str:
    out = tmp_path / name
    result = CliRunner().invoke(main, ["convert", str(path), "-o", str(out), *options])
    assert result.exit_code == 0, result.output
    return str(out)


def tunable(fmu) -> dict[str, float]:
    md = fmpy.read_model_description(fmu)
    return {v.name: float(v.start) for v in md.modelVariables if v.causality == "parameter"}


def assert_parameter_acts_as_the_edited_file(fmu, name, value, edited_csv, default_csv):
    """FMPy with ``name = value`` against ``simulate`` of the edited file, both interfaces; the edit visible."""
    columns = joint_columns(edited_csv)
    assert max(np.abs(edited_csv[c] - default_csv[c]).max() for c in columns) > VISIBLE * AGREEMENT
    for fmi_type in ("ModelExchange", "CoSimulation"):
        r = run(fmu, fmi_type, start_values={name: value}, output=columns)
        worst = {c: float(np.abs(r[c] - edited_csv[c]).max()) for c in columns}
        assert max(worst.values()) < AGREEMENT, (fmi_type, name, worst)


def test_a_mass_set_through_fmpy_moves_the_seeker_as_the_model_file_with_that_mass(tmp_path):
    fmu = convert(tmp_path, SAMPLES / "seeker" / "seeker.yaml", "seeker.fmu")
    params = tunable(fmu)
    assert "shaft_a.mass" in params and "housing.mass" not in params     # the housing is welded to the ground
    lumped = tmp_path / "lumped.yaml"
    convert(tmp_path, SAMPLES / "seeker" / "seeker.yaml", "lumped.yaml")
    doc = yaml.safe_load(lumped.read_text())
    body = next(b for b in doc["bodies"] if b["name"] == "shaft_a")
    assert body["inertial"]["mass"] == pytest.approx(params["shaft_a.mass"], rel=1e-12)
    new = 3.0 * params["shaft_a.mass"]
    body["inertial"]["mass"] = new
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert_parameter_acts_as_the_edited_file(fmu, "shaft_a.mass", new, simulate_csv(tmp_path, edited),
                                             simulate_csv(tmp_path, lumped))


def test_a_spring_stiffness_set_through_fmpy_moves_the_pendulum_as_the_file_with_that_stiffness(tmp_path):
    default, edited = tmp_path / "sprung.xml", tmp_path / "edited.xml"
    default.write_text(SPRUNG_MJCF.format(elbow=4.0))
    edited.write_text(SPRUNG_MJCF.format(elbow=9.0))
    fmu = convert(tmp_path, default, "sprung.fmu")
    assert validate_fmu(fmu) == []
    params = tunable(fmu)
    assert params["elbow.stiffness"] == 4.0 and params["shoulder.stiffness"] == 3.0
    assert_parameter_acts_as_the_edited_file(fmu, "elbow.stiffness", 9.0, simulate_csv(tmp_path, edited),
                                             simulate_csv(tmp_path, default))


def test_a_geared_motor_s_ratio_is_not_tunable_its_resistance_is(tmp_path):
    """The rotor's reflected inertia N^2 J is a constant of the generated code: N is not a parameter."""
    params = tunable(convert(tmp_path, SAMPLES / "seeker" / "seeker_motors.yaml", "motors.fmu"))
    assert "pitch_motor.resistance" in params and "pitch_motor.torque_constant" in params
    assert not [name for name in params if name.endswith(".gear_ratio")]


# ---------------------------------------------------------------- body poses


def pose_of(result, name):
    """(T, 3) positions and (T, 3, 3) rotations of the outputs NAME.x .. NAME.R[2][2]."""
    p = np.stack([result[f"{name}.{a}"] for a in "xyz"], axis=-1)
    R = np.stack([result[f"{name}.R[{i}][{j}]"] for i in range(3) for j in range(3)], axis=-1)
    return p, R.reshape(-1, 3, 3)


@pytest.mark.parametrize("sample, names", [("seeker/seeker.yaml", ("gimbal_ring", "shaft_a", "camera", "shaft_b")),
                                           ("fourbar/fourbar.yaml", ("crank", "coupler", "rocker"))])
def test_the_pose_outputs_are_the_forward_kinematics_of_the_fmu_s_joint_outputs(tmp_path, sample, names):
    import mbcompose
    from mbcompose.dynamics.kinematics import body_poses
    from mbcompose.dynamics.simulation.result import coordinate_columns

    path = SAMPLES / sample
    options = [a for n in names for a in ("--fmu-output-pose", n)]
    fmu = convert(tmp_path, path, "m.fmu", *options)
    assert validate_fmu(fmu) == []
    composition = mbcompose.compose(str(path))
    tree = composition.model.tree_model
    columns = list(coordinate_columns(tree))
    outputs = [*columns, *(f"{n}.{a}" for n in names for a in ("x", "y", "z", *(f"R[{i}][{j}]" for i in range(3)
                                                                                 for j in range(3))))]
    # each name's frame as the file places it at the reference configuration, and the tree body carrying it
    placed = {b.name: (b.name, b.pose) for b in composition.lumped.bodies}
    placed.update({f.name: (f.body, f.pose) for f in composition.lumped.frames})
    R0, p0 = body_poses(tree, composition.model.neutral())
    for fmi_type in ("ModelExchange", "CoSimulation"):
        r = run(fmu, fmi_type, output=outputs)
        R_body, p_body = body_poses(tree, np.stack([r[c] for c in columns], axis=-1))
        moved = False
        for name in names:
            p, R = pose_of(r, name)
            body, pose = placed[name]
            k = tree.body_names.index(body)
            R_file, p_file = np.asarray(pose.rotation), np.asarray(pose.translation)
            # at the start (the reference configuration): where the file puts the frame
            assert np.abs(p[0] - p_file).max() < POSE_AGREEMENT, (fmi_type, name)
            assert np.abs(R[0] - R_file).max() < POSE_AGREEMENT, (fmi_type, name)
            # later: carried by its body, whose pose is the numpy forward kinematics of FMPy's joint outputs
            R_kf, p_kf = R0[k].T @ R_file, R0[k].T @ (p_file - p0[k])
            R_ref, p_ref = R_body[:, k] @ R_kf, p_body[:, k] + R_body[:, k] @ p_kf
            assert np.abs(p - p_ref).max() < POSE_AGREEMENT, (fmi_type, name)
            assert np.abs(R - R_ref).max() < POSE_AGREEMENT, (fmi_type, name)
            moved |= np.abs(R - R[0]).max() > 1e-3
        assert moved


def test_an_unknown_pose_name_is_one_error_with_the_closest_name(tmp_path):
    out = tmp_path / "seeker.fmu"
    result = CliRunner().invoke(main, ["convert", str(SAMPLES / "seeker" / "seeker.yaml"), "-o", str(out),
                                       "--fmu-output-pose", "camra"])
    assert result.exit_code == 2, result.output
    assert "no body or part 'camra'" in result.output and "did you mean 'camera'?" in result.output
    assert not out.exists()
    result = CliRunner().invoke(main, ["convert", str(SAMPLES / "seeker" / "seeker.yaml"), "-o",
                                       str(tmp_path / "s.urdf"), "--fmu-output-pose", "camera"])
    assert result.exit_code == 2 and "--fmu-output-pose" in result.output and "not of a .urdf file" in result.output
