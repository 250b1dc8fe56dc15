"""Declared joints, rigid groups and ignored parts of the STEP wrapper; ``inspect --write-joints``; the rules.

References: the mechanisms' geometry written by hand (cad_shapes: a pin r 5 pressed in a plate along
local z, two plates); the four-bar sample's known mechanism (samples/fourbar/README.md: dof 1, one
loop); for the written joints, the model of the STEP file read without any declaration (the file
read back must give the same mass matrix at random configurations, 1e-9, and an edited line must
change only its joint); the rules' vocabularies from the standards' names (DIN 912, ISO 4762, M2x6).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("OCP")

import cad_shapes as S  # noqa: E402

from mbcompose import compose  # noqa: E402
from mbcompose.dynamics import mass_matrix  # noqa: E402
from mbcompose.dynamics.embedding import complete_configuration  # noqa: E402
from mbcompose.graph import analyse  # noqa: E402
from mbcompose.parsers import InputError, read_assembly  # noqa: E402
from mbcompose.parsers.step import rules  # noqa: E402
from mbcompose.parsers.step.inference import clamped  # noqa: E402
from mbcompose.parsers.step.joints_file import joints_yaml  # noqa: E402
from mbcompose.parsers.step.mating import Contact  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FOURBAR = REPO / "samples" / "fourbar_cad" / "fourbar.step"
R_WORLD = S.WORLD[:3, :3]


def _moving(assembly):
    return [j for j in assembly.joints if not j.implicit and not j.source.note.startswith("rigid group")]


@pytest.fixture(scope="module")
def press_fit(tmp_path_factory):
    """A pin pressed in a plate (no clearance): inference welds it."""
    d = tmp_path_factory.mktemp("press")
    return S.write_mechanism(d / "pin.step", S.pin_mechanism(5.0, shoulder=False))


def _wrapper(tmp_path, step, text):
    path = tmp_path / "w.yaml"
    path.write_text(f"assembly: {step}\n{text}")
    return path


def test_a_declared_revolute_takes_its_axis_from_the_press_fit(press_fit, tmp_path):
    assert [j.type for j in _moving(read_assembly(press_fit, mesh_dir=tmp_path))] == []     # welded
    w = _wrapper(tmp_path, press_fit, "joints:\n  - {between: [plate, pin], type: revolute, name: spin}\n")
    a = read_assembly(w)
    (j,) = _moving(a)
    assert (j.name, j.type, j.reference, j.secondary) == ("spin", "revolute", "plate", "pin")
    assert abs(abs(float(j.axis @ (R_WORLD @ [0, 0, 1.0]))) - 1.0) < 1e-9
    off = j.origin - S.WORLD[:3, 3] * 1e-3                  # the axis passes through the local origin
    assert np.linalg.norm(off - (off @ j.axis) * j.axis) < 1e-9
    assert analyse(a).dof == 1


def test_given_axis_and_origin_win_and_globs_match(press_fit, tmp_path):
    w = _wrapper(tmp_path, press_fit, "units: {length: mm}\njoints:\n"
                 "  - {between: [\"pl*\", \"p?n\"], type: prismatic, axis: [1, 0, 0], origin: [1, 2, 3]}\n")
    (j,) = _moving(read_assembly(w))
    assert j.type == "prismatic"
    np.testing.assert_allclose(j.axis, [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(j.origin, [1e-3, 2e-3, 3e-3], atol=1e-15)


@pytest.mark.parametrize("text, message", [
    ("joints:\n  - {between: [plate, pinn], type: revolute}\n", "w.yaml:3: joints[0].between[1]: no part matches 'pinn' (did you mean 'pin'?)"),
    ("ignore: [\"bolt*\"]\n", "w.yaml:2: ignore[0]: no part matches 'bolt*'"),
    ("rigid: [[plate, \"x*\"]]\n", "w.yaml:2: rigid[0][1]: no part matches 'x*'"),
    ("joints:\n  - {between: [plate, pin], type: revolute, axle: [0, 0, 1]}\n", "w.yaml:3: joints[0].axle: unknown key 'axle'"),
    ("joints:\n  - {between: [plate, pin], type: screw}\n", "w.yaml:3: joints[0].type: unknown joint type 'screw'"),
    ("rigid: [[plate, pin]]\njoints:\n  - {between: [plate, pin], type: revolute}\n", "both sides of the joint"),
])
def test_bad_declarations_are_one_line_at_their_line(press_fit, tmp_path, text, message):
    w = _wrapper(tmp_path, press_fit, text)
    with pytest.raises(InputError) as e:
        read_assembly(w)
    assert message in str(e.value)


def test_a_between_whose_groups_do_not_touch_is_an_error_and_the_cli_writes_nothing(tmp_path):
    step = S.write_mechanism(tmp_path / "apart.step", [
        ("a", S.product("a", S.box((0, 0, 0), (10, 10, 10))), np.eye(4)),
        ("b", S.product("b", S.box((20, 0, 0), (30, 10, 10))), np.eye(4))])
    w = _wrapper(tmp_path, step, "joints:\n  - {between: [a, b], type: revolute}\n")
    out = tmp_path / "joints.yaml"
    run = subprocess.run([sys.executable, "-m", "mbcompose", "inspect", str(w), "--write-joints", str(out)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2 and not out.exists()
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("error: ") and "w.yaml:3:" in line and "do not touch: give 'axis' and 'origin'" in line
    w.write_text(f"assembly: {step}\nunits: {{length: mm}}\n"
                 "joints:\n  - {between: [a, b], type: revolute, axis: [0, 0, 1], origin: [15, 5, 5]}\n")
    assert analyse(read_assembly(w)).dof == 1          # with the axis and origin given, no contact needed


def test_ignore_and_rigid(tmp_path):
    parts = S.pin_mechanism(5.2, shoulder=True) + [
        ("thread_1", S.product("thread_1", S.box((30, 30, 30), (31, 31, 31))), np.eye(4))]
    step = S.write_mechanism(tmp_path / "m.step", parts)
    with pytest.raises(InputError, match="thread_1 touches no other part"):
        read_assembly(step, mesh_dir=tmp_path)
    a = read_assembly(_wrapper(tmp_path, step, "ignore: [\"*thread*\"]\n"))
    assert {b.name for b in a.bodies} == {"plate", "pin"} and [j.type for j in _moving(a)] == ["revolute"]
    a = read_assembly(_wrapper(tmp_path, step, "ignore: [\"*thread*\"]\nrigid: [[plate, pin]]\n"))
    assert _moving(a) == [] and analyse(a).dof == 0


def _model_matrix(path, q_seed=7):
    comp = compose(path)
    model = comp.model
    rng = np.random.default_rng(q_seed)
    q = model.neutral() + 0.3 * rng.standard_normal(model.nq)
    if hasattr(model, "loops"):                  # a closed chain: close the loop about the random guess
        q = complete_configuration(model, q)
    return comp, mass_matrix(model, q), q


def test_write_joints_read_back_gives_the_same_model(tmp_path):
    original = read_assembly(FOURBAR, mesh_dir=tmp_path / "m")
    out = tmp_path / "joints.yaml"
    out.write_text(joints_yaml(original, FOURBAR, out))
    back = read_assembly(out)
    a, b = _moving(original), _moving(back)
    assert [(j.type, j.reference, j.secondary) for j in a] == [(j.type, j.reference, j.secondary) for j in b]
    for ja, jb in zip(a, b):
        np.testing.assert_allclose(jb.axis, ja.axis, atol=1e-12)
        np.testing.assert_allclose(jb.origin, ja.origin, atol=1e-12)
    assert analyse(back).dof == analyse(original).dof == 1
    comp_a, m_a, q = _model_matrix(FOURBAR)
    comp_b, m_b, _ = _model_matrix(out)
    assert comp_a.model.joint_names == comp_b.model.joint_names
    np.testing.assert_allclose(m_b, m_a, rtol=0, atol=1e-9 * max(1.0, np.abs(m_a).max()))


def test_an_edited_line_changes_exactly_that_joint(tmp_path):
    original = read_assembly(FOURBAR, mesh_dir=tmp_path / "m")
    out = tmp_path / "joints.yaml"
    lines = joints_yaml(original, FOURBAR, out).splitlines()
    k = next(i for i, line in enumerate(lines) if "type: revolute" in line)
    lines[k] = lines[k].replace("type: revolute", "type: cylindrical")
    out.write_text("\n".join(lines) + "\n")
    a, b = _moving(original), _moving(read_assembly(out))
    changed = [(ja.name, ja.type, jb.type) for ja, jb in zip(a, b) if ja.type != jb.type
               or not np.allclose(ja.axis, jb.axis) or not np.allclose(ja.origin, jb.origin)]
    assert len(a) == len(b) and len(changed) == 1 and changed[0][1:] == ("revolute", "cylindrical")


def test_inspect_write_joints_on_the_cli(tmp_path):
    out = tmp_path / "j.yaml"
    run = subprocess.run([sys.executable, "-m", "mbcompose", "inspect", str(FOURBAR), "--write-joints", str(out)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert text.count("type: revolute") == 4 and "# confidence" in text and "assembly:" in text


@pytest.mark.parametrize("name, path, fastener", [
    ("SOLID_4", ("arm", "FHS_M2_5X10:1", "SOLID"), True),
    ("DIN 912 M3x8", (), True), ("ISO 4762 - M4 x 10", (), True), ("M2x6", (), True),
    ("hex nut", (), True), ("washer_m3", (), True), ("heat set insert", (), True), ("standoff", (), True),
    ("dowel pin", (), True), ("rivet", (), True), ("bracket", ("arm",), False), ("Base:1", (), False),
    ("pin_a", (), False), ("MX-64 horn", (), False),
])
def test_fastener_names(name, path, fastener):
    assert (rules.fastener_by_name(name, path) is not None) is fastener


def test_servo_units_split_case_and_output():
    parts = [("case", ("arm", "XL,XC-330 v1:6", "DC15_A01_CASE_M_DUMMY:1")),
             ("horn", ("arm", "XL,XC-330 v1:6", "DC15_A01_HORN_DUMMY:1")),
             ("bracket", ("arm", "bracket:1")),
             ("sts", ("arm", "STS3215 servo", "body")), ("sts_horn", ("arm", "STS3215 servo", "horn")),
             ("lonely", ("arm", "SG90", "body"))]
    units = rules.servo_units(parts)
    assert [(u.case, u.output) for u in units] == [(("case",), ("horn",)), (("sts",), ("sts_horn",))]


def test_a_servo_named_as_the_encoder_variant_is_an_encoder():
    """XL330-M077 (Koch v1.1's leader names its servo product 'Robotis_DYNAMIXEL_XL330_M077_T') is an
    encoder; the M288 of the follower and an unnamed variant are not."""
    parts = [("c1", ("arm", "Robotis_DYNAMIXEL_XL330_M077_T", "case")), ("h1", ("arm", "Robotis_DYNAMIXEL_XL330_M077_T", "horn")),
             ("c2", ("arm", "XL330-M288-T", "case")), ("h2", ("arm", "XL330-M288-T", "horn")),
             ("c3", ("arm", "XL,XC-330 v1:1", "case")), ("h3", ("arm", "XL,XC-330 v1:1", "horn"))]
    units = rules.servo_units(parts)
    assert [u.encoder is not None for u in units] == [True, False, False]
    assert "M077" in units[0].encoder and "not actuated" in units[0].encoder


def test_one_part_servos_and_connectors_by_name():
    """A leaf named (or whose product is named) as a servo model is a one-part servo, its accessories
    and the parts of a servo sub-assembly are not; surface models of servos and ROBOTIS horns are
    connectors, a Fusion screw cover is not."""
    parts = [("s1", ("arm", "Robotis_DYNAMIXEL_XL330_M077_T")), ("sp", ("arm", "Robotis_DYNAMIXEL_XL430_Spacer")),
             ("case", ("arm", "XL,XC-330 v1:6", "DC15_A01_CASE_M_DUMMY:1")), ("shoulder", ("arm", "shoulder"))]
    out = rules.leaf_servos(parts, {"shoulder": "XL430-W250-T"})
    assert [(p, e is not None) for p, _, e in out] == [("s1", True), ("shoulder", False)]
    assert rules.connector_by_name("Robotis_FPX330_H101") and rules.connector_by_name("NAUO3", "Robotis_HN11_I101")
    assert rules.connector_by_name("x", "Robotis_DYNAMIXEL_XL330_M288_T")
    assert rules.connector_by_name("DX124_SCREW-COVER:1", "DX124_SCREW-COVER") is None


def _planar(n, point=(0, 0, 0)):
    return Contact("planar", "a", "b", (0, 0), (0.0, 0.0), 0.0, np.asarray(point, float), np.asarray(n, float), 1.0)


def test_clamped_means_opposite_parallel_faces_only():
    assert clamped([_planar([1, 0, 0]), _planar([-1, 0, 0], (5, 0, 0))], 1e-3)
    assert not clamped([_planar([1, 0, 0]), _planar([1, 0, 0], (0, 3, 0))], 1e-3)
    assert not clamped([_planar([1, 0, 0]), _planar([-1, 0, 0], (5, 0, 0)), _planar([0, 0, 1])], 1e-3)   # a slot


@pytest.mark.parametrize("name, body", [("ground", "ground"), ("world", "world"), ("base", "base")])
def test_a_part_named_like_the_world_is_just_a_part(tmp_path, name, body):
    sys.path.insert(0, str(FOURBAR.parent))
    try:
        import make_step
    finally:
        sys.path.remove(str(FOURBAR.parent))
    tree = make_step.fourbar_tree()
    tree.children[0].name = name                      # the base link
    path = tmp_path / f"{name}.step"
    make_step.write_step(path, tree, unit="MM")
    a = read_assembly(path, mesh_dir=tmp_path / "m")
    assert body in {b.name for b in a.bodies}
    analysis = analyse(a)
    assert analysis.dof == 1 and len(analysis.loops) == 1


def _fit(shaft, hole, x, kind="bearing", r=1.5):
    return Contact(kind, shaft, hole, (0, 0), (r, r + 0.1), 0.1, np.array([x, 0.0, 0.0]), np.array([1.0, 0, 0]))


def test_a_shank_through_parts_pressed_together_is_a_fastener_a_pin_through_a_gap_is_not():
    contacts = [_fit("s", "plate_a", 0.0), _fit("s", "plate_b", 5.0, "press fit")]
    assert rules.fastener_by_geometry("s", contacts, frozenset({frozenset(("plate_a", "plate_b"))})) is not None
    assert rules.fastener_by_geometry("s", contacts, frozenset()) is None             # the plates do not touch
    assert rules.fastener_by_geometry("hinge_pin", contacts, frozenset({frozenset(("plate_a", "plate_b"))})) is None
    assert rules.fastener_by_geometry("s", contacts[:1], frozenset({frozenset(("plate_a", "plate_b"))})) is None


def test_a_zero_clearance_shaft_of_a_large_body_in_a_large_body_is_a_journal_for_review(tmp_path):
    block = S.fuse(S.box((-30, -30, -10), (30, 30, 0)), S.cylinder(5, (0, 0, 0), (0, 0, 10)))   # shaft r 5 on top
    lid = S.cut(S.box((-30, -30, 0), (30, 30, 10)), S.cylinder(5, (0, 0, -1), (0, 0, 11)))      # bore r 5, no clearance
    step = S.write_mechanism(tmp_path / "journal.step", [("block", S.product("block", block), np.eye(4)),
                                                         ("lid", S.product("lid", lid), np.eye(4))])
    (j,) = _moving(read_assembly(step, mesh_dir=tmp_path / "m"))
    assert j.type == "revolute" and j.source.note.startswith("confidence 0.50: a zero-clearance fit")
    assert abs(abs(float(j.axis @ (R_WORLD @ [0, 0, 1.0]))) - 1.0) < 1e-9
    pin = S.write_mechanism(tmp_path / "pin.step", S.pin_mechanism(5.0, shoulder=True))   # a pin is pressed
    assert _moving(read_assembly(pin, mesh_dir=tmp_path / "m2")) == []


def test_a_rolling_bearing_by_name_turns_its_inner_ring_and_lumps_its_balls(tmp_path):
    from mbcompose.parsers.step.writer import Node, write_step
    outer = S.cut(S.cylinder(11, (0, 0, -3.5), (0, 0, 3.5)), S.cylinder(9, (0, 0, -4), (0, 0, 4)))
    inner = S.cut(S.cylinder(6, (0, 0, -3.5), (0, 0, 3.5)), S.cylinder(4, (0, 0, -4), (0, 0, 4)))
    ball = S.product("Ball", S.sphere(1.4))                 # on the 7.5 mm pitch circle: touches neither ring
    balls = [Node("Ball", ball, placement=S.rigid(translation=(7.5 * np.cos(t), 7.5 * np.sin(t), 0)))
             for t in np.linspace(0, 2 * np.pi, 8, endpoint=False)]
    tree = Node("top", children=[Node("bearing 608-2RS", placement=S.WORLD, children=[
        Node("Outer_Ring", S.product("Outer_Ring", outer)), Node("Inner_Ring", S.product("Inner_Ring", inner)),
        *balls])])
    path = tmp_path / "608.step"
    write_step(path, tree, unit="MM")
    a = read_assembly(path, mesh_dir=tmp_path / "m")
    (j,) = _moving(a)
    assert (j.type, {j.reference, j.secondary}) == ("revolute", {"Outer_Ring", "Inner_Ring"})
    assert abs(abs(float(j.axis @ (R_WORLD @ [0, 0, 1.0]))) - 1.0) < 1e-9
    off = j.origin - S.WORLD[:3, 3] * 1e-3
    assert np.linalg.norm(off - (off @ j.axis) * j.axis) < 1e-9           # on the rings' axis
    analysis = analyse(a)
    assert analysis.dof == 1
    welds = [(j.reference, j.secondary) for j in a.joints if j.source.note.startswith("rigid group")]
    assert {p for w in welds for p in w} == {"Outer_Ring"} | {f"Ball_{k}" for k in range(1, 9)}
    assert len(welds) == 8                                   # the 8 balls ride with the outer ring


def test_a_servo_by_name_is_an_actuated_revolute_about_its_horn_fit(tmp_path):
    from mbcompose.parsers.step.writer import Node, write_step
    case = S.cut(S.box((-10, -10, -20), (10, 10, 0)), S.cylinder(3, (0, 0, -5), (0, 0, 1)))
    horn = S.fuse(S.cylinder(3, (0, 0, -5), (0, 0, 0)), S.cylinder(8, (0, 0, 0), (0, 0, 2)))   # pressed on the spline
    tree = Node("arm", children=[
        Node("base", S.product("base", S.box((-20, -20, -25), (20, 20, -20)))),
        Node("bracket", S.product("bracket", S.box((-15, -15, 2), (15, 15, 5)))),
        Node("XL330-M288 servo", placement=S.WORLD @ S.rigid(), children=[
            Node("case", S.product("case", case)), Node("horn", S.product("horn", horn))])])
    tree.children[0].placement = tree.children[1].placement = S.WORLD
    path = tmp_path / "servo.step"
    write_step(path, tree, unit="MM")
    a = read_assembly(path, mesh_dir=tmp_path / "m")
    (j,) = _moving(a)
    assert (j.name, j.type, j.actuated) == ("XL330-M288 servo", "revolute", True)
    assert {j.reference, j.secondary} == {"case", "horn"} and j.source.note.startswith("confidence 0.90: servo")
    assert abs(abs(float(j.axis @ (R_WORLD @ [0, 0, 1.0]))) - 1.0) < 1e-9
    off = j.origin - S.WORLD[:3, 3] * 1e-3
    assert np.linalg.norm(off - (off @ j.axis) * j.axis) < 1e-9
    welds = {frozenset((w.reference, w.secondary)) for w in a.joints if w.source.note.startswith("rigid group")}
    assert welds == {frozenset(("base", "case")), frozenset(("horn", "bracket"))}
    assert analyse(a).dof == 1


def test_passive_makes_joints_not_actuated_and_actuated_wins(tmp_path):
    """The wrapper's 'passive:' (servos used as encoders) against the four-bar's actuated crank (a servo
    joint made passive: koch_leader in test_corpus_joints.py)."""
    text = (FOURBAR.parent / "fourbar.yaml").read_text().replace("assembly: fourbar.step", f"assembly: {FOURBAR}")
    wrapper = tmp_path / "w.yaml"
    wrapper.write_text(text + 'passive: ["*_pivot"]\n')
    a = read_assembly(wrapper)
    assert a.joint("crank_pivot").actuated                      # 'actuated' names it: it wins
    assert not [j.name for j in a.joints if j.actuated and j.name != "crank_pivot"]
    wrapper.write_text(text + 'passive: ["crank_pivto"]\n')
    with pytest.raises(InputError, match=r"passive.*no joint 'crank_pivto'.*did you mean"):
        read_assembly(wrapper)
