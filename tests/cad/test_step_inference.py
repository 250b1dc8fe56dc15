"""Joints inferred from mating geometry (issue 11's rules), on assemblies made with OpenCascade.

Each mechanism is placed by a rigid transform that is not axis-aligned, some parts
sit in a nested sub-assembly, and every case is repeated with placement noise of
0.02 mm and 2e-4 rad (read with contact_tol 0.05 mm). The expected joints are
written from the geometry by hand (type, the two parts, the axis in the local
frame mapped by the same transform).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

pytest.importorskip("OCP")

import cad_shapes as S  # noqa: E402

from mbcompose.parsers import GROUND, InputError, read_assembly  # noqa: E402

R_WORLD = S.WORLD[:3, :3]

#: name -> (mechanism factory, reader options, expected (type, reference, secondary, local axis or None))
CASES = {
    "press_fit": (lambda: S.pin_mechanism(5.0, shoulder=False), {}, ("fixed", "plate", "pin", None)),
    "bearing_without_shoulder": (lambda: S.pin_mechanism(5.2, shoulder=False), {},
                                 ("cylindrical", "plate", "pin", [0, 0, 1])),
    "bearing_with_shoulder": (lambda: S.pin_mechanism(5.2, shoulder=True), {},
                              ("revolute", "plate", "pin", [0, 0, 1])),
    "plate_on_plate": (S.stacked_plates, {}, ("fixed", "plate_a", "plate_b", None)),
    "planar_contact_kept": (S.stacked_plates, {"planar_contacts": "planar"},
                            ("planar", "plate_a", "plate_b", [0, 0, 1])),
    "slot": (S.slot_mechanism, {}, ("prismatic", "base", "slider", [1, 0, 0])),
    "ball": (lambda: S.ball_mechanism(4.8), {}, ("spherical", "socket", "ball", None)),
    "ball_press_fit": (lambda: S.ball_mechanism(5.0), {}, ("fixed", "socket", "ball", None)),
    "two_coaxial_bearings": (S.two_bearings, {}, ("revolute", "frame", "shaft", [1, 0, 0])),
}


def _check(assembly, expected):
    jtype, ref, sec, axis = expected
    inferred = [j for j in assembly.joints if not j.implicit]
    assert [(j.type, j.reference, j.secondary) for j in inferred] == [(jtype, ref, sec)]
    ground = [j for j in assembly.joints if j.implicit]
    assert [(j.reference, j.secondary) for j in ground] == [(GROUND, ref)]
    if axis is not None:
        want = R_WORLD @ np.asarray(axis, float)
        assert abs(abs(float(inferred[0].axis @ want)) - 1.0) < 1e-6
    return inferred[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_rule_gives_exactly_the_expected_joint(case, tmp_path):
    make, options, expected = CASES[case]
    path = S.write_mechanism(tmp_path / f"{case}.step", make(), nest=(expected[2],))
    joint = _check(read_assembly(path, mesh_dir=tmp_path / "meshes", **options), expected)
    if expected[0] in ("revolute", "cylindrical"):      # the axis passes through the local origin
        origin_world = S.WORLD[:3, 3] * 1e-3
        off = joint.origin - origin_world
        assert np.linalg.norm(off - (off @ joint.axis) * joint.axis) < 1e-9
    if expected[0] == "spherical":                       # at the socket's centre
        np.testing.assert_allclose(joint.origin, S.WORLD[:3, 3] * 1e-3, atol=1e-9)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_rule_survives_placement_noise(case, tmp_path):
    make, options, expected = CASES[case]
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    path = S.write_mechanism(tmp_path / f"{case}.step", make(), nest=(expected[2],), rng=rng)
    _check(read_assembly(path, mesh_dir=tmp_path / "meshes", contact_tol=0.05, **options), expected)


def test_clearance_beyond_max_clearance_is_no_contact_and_the_part_is_an_error(tmp_path):
    path = S.write_mechanism(tmp_path / "loose.step", S.pin_mechanism(6.0, shoulder=False))
    with pytest.raises(InputError, match="part pin touches no other part"):
        read_assembly(path, mesh_dir=tmp_path / "meshes")


def test_a_wider_max_clearance_makes_the_loose_pin_a_bearing(tmp_path):
    path = S.write_mechanism(tmp_path / "loose.step", S.pin_mechanism(6.0, shoulder=False))
    a = read_assembly(path, mesh_dir=tmp_path / "meshes", max_clearance=1.5)
    assert [j.type for j in a.joints if not j.implicit] == ["cylindrical"]
    (c,) = a.contacts
    assert c.kind == "bearing" and c.clearance == pytest.approx(1e-3, rel=1e-9)
    assert c.radii == pytest.approx((5e-3, 6e-3), rel=1e-9)


def test_declared_joint_replaces_the_inferred_one(tmp_path):
    from mbcompose.parsers import Joint
    path = S.write_mechanism(tmp_path / "pin.step", S.pin_mechanism(5.2, shoulder=True))
    declared = Joint("spin", "continuous", "plate", "pin", axis=[0, 0, 1])
    a = read_assembly(path, mesh_dir=tmp_path / "meshes", joints=[declared])
    assert [(j.name, j.type) for j in a.joints if not j.implicit] == [("spin", "continuous")]


def test_joint_names_and_actuation_by_pair(tmp_path):
    path = S.write_mechanism(tmp_path / "pin.step", S.pin_mechanism(5.2, shoulder=True))
    a = read_assembly(path, mesh_dir=tmp_path / "meshes", joint_names={"hinge": ["pin", "plate"]},
                      actuated=["hinge"])
    (j,) = [j for j in a.joints if not j.implicit]
    assert (j.name, j.type, j.actuated) == ("hinge", "revolute", True)


@pytest.mark.slow
def test_an_assembly_of_300_parts_reads_and_infers_every_joint(tmp_path):
    """The outcome only (timing is benchmarks/step_assembly.py's job): 301 parts, 150 fixed, 150 revolutes."""
    path = S.write_mechanism(tmp_path / "wheels.step", S.wheels_on_a_plate(150))
    a = read_assembly(path, mesh_dir=tmp_path / "meshes")
    assert len(a.bodies) == 301
    joints = [(j.type, j.reference, j.secondary) for j in a.joints if not j.implicit]
    assert sorted(joints) == sorted([("fixed", "plate", f"pin_{k}") for k in range(150)]
                                    + [("revolute", f"pin_{k}", f"wheel_{k}") for k in range(150)])


def test_pipeline_mating_options_reach_the_step_reader(tmp_path):
    from mbcompose.composer.config import load_pipeline
    from mbcompose.composer.compose import read_stage
    S.write_mechanism(tmp_path / "loose.step", S.pin_mechanism(6.0, shoulder=False))
    (tmp_path / "p.yaml").write_text("input: loose.step\noptions:\n  mating: {max_clearance: 1.5}\n")
    cfg = load_pipeline(tmp_path / "p.yaml")
    assert dict(cfg.options.mating) == {"max_clearance": 1.5}
    a = read_stage(tmp_path / "loose.step", cfg.options, mesh_dir=tmp_path / "m")
    assert [j.type for j in a.joints if not j.implicit] == ["cylindrical"]
    (tmp_path / "q.yaml").write_text("input: loose.step\noptions:\n  mating: {max_clearence: 1.5}\n")
    with pytest.raises(InputError, match="max_clearence"):
        load_pipeline(tmp_path / "q.yaml")


def test_a_ball_bearing_without_names_turns_about_its_ball_circle(tmp_path):
    """The rolling-bearing rule by geometry: rings and balls named 'a', 'b', 'p_k'; reference: the
    bearing built about the local z axis, centre at the local origin, placed by S.WORLD."""
    path = S.write_mechanism(tmp_path / "bearing.step", S.ball_bearing(), nest=("b",))
    a = read_assembly(path, mesh_dir=tmp_path / "meshes")
    moving = [j for j in a.joints if not j.implicit and j.type != "fixed"]
    assert [(j.type, j.reference, j.secondary) for j in moving] == [("revolute", "a", "b")]
    assert abs(abs(float(moving[0].axis @ (R_WORLD @ [0, 0, 1]))) - 1.0) < 1e-9
    np.testing.assert_allclose(moving[0].origin, S.WORLD[:3, 3] * 1e-3, atol=1e-9)
    assert "rolling bearing by geometry: 7 balls of radius 2.5 mm" in moving[0].source.note
    welded = {j.secondary for j in a.joints if j.type == "fixed" and not j.implicit}
    assert welded == {f"p_{k}" for k in range(7)}            # the balls ride with the outer ring


def test_balls_off_one_circle_make_no_bearing(tmp_path):
    path = S.write_mechanism(tmp_path / "bearing.step", S.ball_bearing(off_circle=0.2))
    with pytest.raises(InputError, match="touches no other part"):
        read_assembly(path, mesh_dir=tmp_path / "meshes")


def test_a_surface_model_servo_is_a_massless_connector_whose_horn_carries_the_arm(tmp_path, caplog):
    """Reference: the mechanism as built (cad_shapes.surface_servo_arm): one revolute about the horn axis
    (local z through (0, 5, 0)) between the case side (base and servo) and the arm; masses are the
    solids' analytic volumes (boxes) times their density, the servo's surfaces add none."""
    path = S.write_mechanism(tmp_path / "servo.step", S.surface_servo_arm())
    with caplog.at_level("WARNING"):
        a = read_assembly(path, mesh_dir=tmp_path / "meshes")
    assert "kept for mating only: massless" in caplog.text
    moving = [j for j in a.joints if not j.implicit and j.type != "fixed"]
    assert [(j.type, j.reference, j.secondary, j.actuated) for j in moving] == [("revolute", "servo", "arm", True)]
    assert abs(abs(float(moving[0].axis @ (R_WORLD @ [0, 0, 1]))) - 1.0) < 1e-9
    off = moving[0].origin - (S.WORLD[:3, :3] @ [0, 5, 0] + S.WORLD[:3, 3]) * 1e-3
    assert np.linalg.norm(off - (off @ moving[0].axis) * moving[0].axis) < 1e-9
    mass = {b.name: b.mass.mass for b in a.bodies}
    assert mass["servo"] == 0.0
    assert mass["base"] == pytest.approx(1000.0 * 4.8 * 30 * 20 * 1e-9, rel=1e-9)
    assert mass["arm"] == pytest.approx(1000.0 * 16 * 31 * 2 * 1e-9, rel=1e-9)
    welded = [(j.reference, j.secondary) for j in a.joints if j.type == "fixed" and not j.implicit]
    assert welded == [("base", "servo")]


def test_a_surface_model_no_rule_names_is_still_skipped(tmp_path, caplog):
    """The same file with the servo's product named 'cover': skipped (one warning), so the arm touches nothing."""
    path = S.write_mechanism(tmp_path / "cover.step", S.surface_servo_arm(name="cover"))
    with caplog.at_level("WARNING"), pytest.raises(InputError, match="part arm touches no other part"):
        read_assembly(path, mesh_dir=tmp_path / "meshes")
    assert "1 parts without a closed solid" in caplog.text
