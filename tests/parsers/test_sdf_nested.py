"""SDFormat nested models, ``<include>`` over model search paths, ``<frame>`` s, worlds of several models.

Reference: tests/data/sdf/workshop_flat.urdf, the model ``robot`` of
tests/data/sdf/workshop.sdf flattened by hand (the poses are worked out in its
comment), read by Pinocchio: body placements at the reference configuration,
M(q), Newton-Euler and forward dynamics at random states.
"""

import os
from pathlib import Path

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.parsers import GROUND, InputError
from mbcompose.parsers.sdf.reader import read_sdf

SDF = Path(__file__).resolve().parents[1] / "data" / "sdf"
MODELS = SDF / "models"
WORKSHOP = SDF / "workshop.sdf"
MOVING = ("yaw", "pitch", "arm::elbow")
RZ90 = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
RX90 = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])


def test_nested_and_included_model_matches_the_hand_flattened_urdf_in_pinocchio():
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromUrdf(str(SDF / "workshop_flat.urdf"))
    pd = pm.createData()
    a = read_sdf(WORKSHOP, model="robot", model_paths=[MODELS])
    pin.framesForwardKinematics(pm, pd, pin.neutral(pm))
    assert sorted(a.body_names) == sorted(["base", "shoulder::housing", "arm::upper", "arm::lower", "arm::tool"])
    for b in a.bodies:
        X = pd.oMf[pm.getFrameId(b.name)]
        np.testing.assert_allclose(b.pose.translation, X.translation, atol=1e-12, err_msg=b.name)
        np.testing.assert_allclose(b.pose.rotation, X.rotation, atol=1e-12, err_msg=b.name)
    ours = compose(WORKSHOP, model="robot", model_paths=[str(MODELS)]).model
    perm = [ours.v_slice(pm.names[i]).start for i in range(1, pm.njoints)]
    assert sorted(pm.names[1:]) == sorted(MOVING) and ours.nv == 3
    rng = np.random.default_rng(13)
    for _ in range(4):
        q, v, acc = rng.uniform(-1, 1, 3), rng.normal(size=3), rng.normal(size=3)
        qo, vo, ao = np.empty(3), np.empty(3), np.empty(3)
        qo[perm], vo[perm], ao[perm] = q, v, acc
        Mp = pin.crba(pm, pd, q)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        np.testing.assert_allclose(dynamics.mass_matrix(ours, qo)[np.ix_(perm, perm)], Mp, atol=1e-12)
        tau = pin.rnea(pm, pd, q, v, acc)
        np.testing.assert_allclose(dynamics.inverse_dynamics(ours, qo, vo, ao)[perm], tau, atol=1e-11)
        np.testing.assert_allclose(dynamics.forward_dynamics(ours, qo, vo, np.asarray(dynamics.inverse_dynamics(
            ours, qo, vo, ao)))[perm], pin.aba(pm, pd, q, v, tau), atol=1e-9)


def test_world_models_are_scoped_and_a_static_model_is_welded():
    a = read_sdf(WORKSHOP, model_paths=[MODELS])      # one model has joints: all are read, scoped
    assert a.name == "workshop"
    weld = a.joint("ground_plane::plane_static")
    assert (weld.type, weld.reference, weld.secondary) == ("fixed", GROUND, "ground_plane::plane")
    assert a.body("ground_plane::plane").mass.mass == 0          # static, no <inertial>: massless
    j = a.joint("robot::arm::elbow")
    assert (j.reference, j.secondary) == ("robot::arm::upper", "robot::arm::lower")
    assert a.joint("robot::arm::tool_weld").reference == "robot::arm::lower"      # parent given as frame 'tip'
    assert a.joint("robot::pitch").source.file == str(WORKSHOP)
    assert a.joint("robot::arm::elbow").source.file.endswith("two_link_arm/arm.sdf")


def two_robots(tmp_path):
    text = WORKSHOP.read_text().replace('<model name="ground_plane">', '<model name="rover"><link name="body"/>'
                                        '<link name="wheel"/><joint name="axle" type="continuous"><parent>body'
                                        '</parent><child>wheel</child><axis><xyz>0 1 0</xyz></axis></joint></model>'
                                        '<model name="ground_plane">')
    path = tmp_path / "two.sdf"
    path.write_text(text)
    return path


def test_a_world_with_two_robots_needs_a_model_name(tmp_path):
    path = two_robots(tmp_path)
    with pytest.raises(InputError) as exc:
        read_sdf(path, model_paths=[MODELS])
    assert "rover, robot" in exc.value.message and "--model" in exc.value.message and exc.value.line == 3   # <world>
    with pytest.raises(InputError, match=r"no model 'robt'.*did you mean 'robot'"):
        read_sdf(path, model="robt", model_paths=[MODELS])
    a = read_sdf(path, model="rover", model_paths=[MODELS])
    assert a.name == "rover" and a.joint("body_free").type == "free" and a.joint("axle").secondary == "wheel"


def test_model_path_from_the_environment_and_model_config(tmp_path, monkeypatch):
    with pytest.raises(InputError) as exc:
        read_sdf(WORKSHOP, model="robot")
    assert exc.value.line == 5 and "'sun'" in exc.value.message and "--model-path" in exc.value.message
    for var in ("GZ_SIM_RESOURCE_PATH", "SDF_PATH", "IGN_GAZEBO_RESOURCE_PATH"):
        monkeypatch.setenv(var, os.pathsep.join([str(tmp_path), str(MODELS)]))
        assert read_sdf(WORKSHOP, model="robot").body("arm::tool").mass.mass == 0.3
        monkeypatch.delenv(var)
    # a folder without model.config uses model.sdf; the first folder of the search path wins
    (tmp_path / "two_link_arm").mkdir()
    (tmp_path / "two_link_arm" / "model.sdf").write_text(
        (MODELS / "two_link_arm" / "arm.sdf").read_text().replace("<mass>0.8</mass>", "<mass>0.81</mass>"))
    assert read_sdf(WORKSHOP, model="robot", model_paths=[tmp_path, MODELS]).body("arm::lower").mass.mass == 0.81
    assert read_sdf(WORKSHOP, model="robot", model_paths=[MODELS, tmp_path]).body("arm::lower").mass.mass == 0.8


def test_include_overrides_name_pose_and_static(tmp_path):
    text = WORKSHOP.read_text().replace("<name>arm</name>", "<name>limb</name><static>true</static>")
    text = text.replace("arm::upper", "limb::upper")
    path = tmp_path / "w.sdf"
    path.write_text(text)
    a = read_sdf(path, model="robot", model_paths=[MODELS])
    assert a.joint("limb::upper_static").type == "fixed" and "limb::elbow" in a.joint_names
    np.testing.assert_allclose(a.body("limb::upper").pose.translation, [0.5, 0.2, 0.3], atol=1e-15)


def test_placement_frame_places_the_model_by_another_frame(tmp_path):
    # the include's pose P (at (0.5, 0.2, 0.3), axes Rz90 Rx90 in the world) now places frame 'tip', which is
    # at T = (0.55, 0, 0), yaw 90 in the arm's frame: the arm's frame is P T^-1, T^-1 = ((0, 0.55, 0), yaw -90),
    # so upper (the arm frame) is at (0.5, 0.2, 0.3) + Rz90 Rx90 (0, 0.55, 0) = (0.5, 0.2, 0.85)
    text = WORKSHOP.read_text().replace("<name>arm</name>", "<name>arm</name><placement_frame>tip</placement_frame>")
    path = tmp_path / "w.sdf"
    path.write_text(text)
    a = read_sdf(path, model="robot", model_paths=[MODELS])
    np.testing.assert_allclose(a.body("arm::tool").pose.translation, [0.5, 0.2, 0.3], atol=1e-15)
    np.testing.assert_allclose(a.body("arm::upper").pose.translation, [0.5, 0.2, 0.85], atol=1e-15)
    np.testing.assert_allclose(a.body("arm::upper").pose.rotation, RZ90 @ RX90 @ RZ90.T, atol=1e-15)
    np.testing.assert_allclose(a.body("arm::tool").pose.rotation, RZ90 @ RX90, atol=1e-15)


REFUSALS = [
    ("<uri>model://two_link_arm</uri>", "<uri>https://fuel.gazebosim.org/1.0/OpenRobotics/models/Arm</uri>",
     "not fetched"),
    ("<include>", '<include merge="true">', "merge"),
    ("<name>arm</name>", "<name>arm</name><placement_frame>nowhere</placement_frame>", "unknown frame 'nowhere'"),
    ('<pose relative_to="mount"/>', '<pose relative_to="mont"/>', "did you mean 'mount'"),
    ("<child>shoulder::housing</child>", "<child>shoulder::housin</child>", "unknown child link 'shoulder::housin'"),
    ('<model name="shoulder">', '<model name="shoulder"><frame name="f" attached_to="__model__"/>'
     '<frame name="f"/>', "used twice"),
]


@pytest.mark.parametrize("old, new, message", REFUSALS, ids=[r[2] for r in REFUSALS])
def test_refusals_name_the_feature_the_file_and_the_line(old, new, message, tmp_path):
    text = WORKSHOP.read_text()
    assert old in text
    bad = text.replace(old, new, 1)
    path = tmp_path / "bad.sdf"
    path.write_text(bad)
    with pytest.raises(InputError) as exc:
        read_sdf(path, model="robot", model_paths=[MODELS])
    assert message in exc.value.message and exc.value.file == str(path)
    lines = bad.splitlines()
    assert exc.value.line is not None and any(k in lines[exc.value.line - 1] for k in (new.split(">")[0], "<include",
                                                                                          "<uri", "<child"))


def test_include_cycle_is_refused(tmp_path):
    d = tmp_path / "loop"
    d.mkdir()
    (d / "model.sdf").write_text('<sdf version="1.9"><model name="loop"><link name="l"/>\n'
                                 '<include><uri>model://loop</uri><name>again</name></include></model></sdf>')
    with pytest.raises(InputError, match="includes itself") as exc:
        read_sdf(d / "model.sdf", model_paths=[tmp_path])
    assert exc.value.line == 2


def test_cli_model_and_model_path_options(tmp_path):
    from click.testing import CliRunner

    from mbcompose.composer.cli.commands import main

    run = CliRunner().invoke
    out = run(main, ["inspect", str(two_robots(tmp_path)), "--model", "robot", "--model-path", str(MODELS),
                     "--format", "json"])
    assert out.exit_code == 0, out.output
    assert '"arm::elbow"' in out.output
    out = run(main, ["inspect", str(two_robots(tmp_path)), "--model-path", str(MODELS)])
    assert out.exit_code == 2 and "choose one with --model NAME" in out.output


def test_pipeline_options_sdf_choose_the_model_and_the_include_folders(tmp_path):
    from mbcompose.composer.compose import read_stage
    from mbcompose.composer.config import load_pipeline

    world = two_robots(tmp_path)
    (tmp_path / "models").symlink_to(MODELS)
    cfg = tmp_path / "pipeline.yaml"
    cfg.write_text(f"input: {world.name}\noptions:\n  sdf: {{model: robot, model_path: [models]}}\n")
    config = load_pipeline(cfg)
    assert config.options.sdf == {"model": "robot", "model_paths": (str(tmp_path / "models"),)}
    assert "arm::elbow" in read_stage(config.inputs[0], config.options).joint_names
    cfg.write_text("input: other.urdf\noptions:\n  sdf: {model: robot}\n")
    (tmp_path / "other.urdf").write_text((SDF.parent.parent / "parsers" / "data" / "arm.urdf").read_text())
    config = load_pipeline(cfg)
    with pytest.raises(InputError, match="options.sdf applies to SDFormat inputs only"):
        read_stage(config.inputs[0], config.options)
    cfg.write_text(f"input: {world.name}\noptions:\n  sdf: {{modle: robot}}\n")
    with pytest.raises(InputError, match="modle"):
        load_pipeline(cfg)


def test_joint_parent_frame_attached_to_an_unknown_frame_is_named(tmp_path):
    text = WORKSHOP.read_text().replace('<frame name="mount" attached_to="base">', '<frame name="mount" attached_to="bse">')
    path = tmp_path / "w.sdf"
    path.write_text(text.replace("<parent>base</parent>", "<parent>mount</parent>"))
    with pytest.raises(InputError, match=r"unknown frame 'bse' in the model \(did you mean 'base'\?\)") as exc:
        read_sdf(path, model="robot", model_paths=[MODELS])
    assert 'attached_to="bse"' in path.read_text().splitlines()[exc.value.line - 1]
