"""Bad CAD input: one line ``error: FILE: part NAME: what is wrong``, exit 2, nothing written."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose.composer.cli.commands import main
from mbcompose.parsers import InputError, read_assembly

SEEKER = Path(__file__).resolve().parents[2] / "samples" / "seeker_cad" / "seeker.step"


def _cli_error(*args) -> str:
    out = CliRunner().invoke(main, list(args))
    assert out.exit_code == 2, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out.output
    return lines[0]


def test_without_ocp_a_step_file_gives_one_line_naming_the_cad_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "OCP", None)
    monkeypatch.setitem(sys.modules, "OCP.STEPCAFControl", None)
    with pytest.raises(InputError, match=r"install the 'cad' extra \(pip install 'mbcompose\[cad\]'\)"):
        read_assembly(SEEKER)
    line = _cli_error("inspect", str(SEEKER))
    assert "mbcompose[cad]" in line and line.startswith(f"error: {SEEKER}: ")


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_a_file_that_is_not_step(tmp_path):
    line = _cli_error("inspect", str(_write(tmp_path, "x.step", "solid cube\nendsolid\n")))
    assert "not a readable STEP file" in line


def test_a_truncated_step_file(tmp_path):
    text = SEEKER.read_text()
    line = _cli_error("inspect", str(_write(tmp_path, "t.stp", text[: len(text) // 2])))
    assert "x.step" not in line and "t.stp" in line


def test_an_unknown_length_unit(tmp_path):
    text = SEEKER.read_text().replace("SI_UNIT(.MILLI.,.METRE.)", "SI_UNIT(.MEGA.,.METRE.)")
    assert "MEGA" in text
    line = _cli_error("inspect", str(_write(tmp_path, "u.step", text)))
    assert "unknown length unit 'megametre'" in line


def test_run_writes_nothing_for_a_bad_step_input(tmp_path):
    step = _write(tmp_path, "bad.step", "ISO-10303-21;\nHEADER;\n")
    pipe = _write(tmp_path, "pipeline.yaml", "input: bad.step\noutputs: {directory: out}\n")
    _cli_error("run", str(pipe))
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert step.exists()


ocp = pytest.importorskip("OCP")


def test_an_empty_assembly(tmp_path):
    from mbcompose.parsers.step.writer import Node, write_step
    write_step(tmp_path / "e.step", Node("top", children=[]))
    assert "empty assembly" in _cli_error("inspect", str(tmp_path / "e.step"))


def _single(tmp_path, name, shape):
    from mbcompose.parsers.step.writer import Node, Product, write_step
    write_step(tmp_path / f"{name}.step", Node("top", children=[Node(name, Product(name, shape))]))
    return tmp_path / f"{name}.step"


def test_a_part_with_surfaces_only(tmp_path):
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeFace
    from OCP.gp import gp_Dir, gp_Pln, gp_Pnt
    face = BRepBuilderAPI_MakeFace(gp_Pln(gp_Pnt(0, 0, 0), gp_Dir(0, 0, 1)), -5.0, 5.0, -5.0, 5.0).Face()
    line = _cli_error("inspect", str(_single(tmp_path, "sheet", face)))
    assert "part sheet: open shell" in line


def test_an_open_shell(tmp_path):
    import cad_shapes as S
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeSolid, BRepBuilderAPI_Sewing
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS
    sew, faces = BRepBuilderAPI_Sewing(), TopExp_Explorer(S.box((0, 0, 0), (10, 10, 10)), TopAbs_FACE)
    for _ in range(5):                       # a box without its sixth face
        sew.Add(faces.Current())
        faces.Next()
    sew.Perform()
    shell = (getattr(TopoDS, "Shell_s", None) or TopoDS.Shell)(sew.SewedShape())
    line = _cli_error("inspect", str(_single(tmp_path, "cup", BRepBuilderAPI_MakeSolid(shell).Solid())))
    assert "part cup: open shell" in line


def test_a_solid_with_non_positive_volume(tmp_path):
    """An inside-out solid (STEP writers fix its orientation, so it is handed to the part stage directly)."""
    import cad_shapes as S

    from mbcompose.parsers.step import brep, reader as step
    leaf = brep.LeafPart("inside_out", ("inside_out",), S.box((0, 0, 0), (5, 5, 5)).Reversed(), np.eye(4), None, None)
    part = step.Part("inside_out", leaf, 1000.0, "test")
    with pytest.raises(InputError, match="part inside_out: the solid's volume is not positive"):
        step._part_body("x.step", part, step._Products().of(leaf.shape), tmp_path)


def test_a_density_that_is_not_positive(tmp_path):
    import cad_shapes as S
    path = S.write_mechanism(tmp_path / "p.step", S.pin_mechanism(5.2, shoulder=True))
    with pytest.raises(InputError, match="density for 'pin' must be a positive number"):
        read_assembly(path, densities={"pin": -2.0}, mesh_dir=tmp_path / "m")
    wrapper = _write(tmp_path, "p.yaml", "assembly: p.step\nparts:\n  pin: {density: -2}\n")
    line = _cli_error("inspect", str(wrapper))
    assert "p.yaml:3" in line and "parts.pin.density" in line


def test_two_crossing_bearings_lock_the_pair_and_one_leaves_a_cylindrical_joint(tmp_path):
    """A rod in one bearing is cylindrical; a rod in two crossing bearings has no freedom left."""
    import cad_shapes as S
    plate = S.product("block", S.cut(S.box((-10, -10, -10), (10, 10, 10)), S.cylinder(4.2, (0, 0, -11), (0, 0, 11))))
    rod = S.product("rod", S.cylinder(4, (0, 0, -12), (0, 0, 12)))
    path = S.write_mechanism(tmp_path / "screwy.step", [("block", plate, np.eye(4)), ("rod", rod, np.eye(4))])
    a = read_assembly(path, mesh_dir=tmp_path / "m")
    assert [j.type for j in a.joints if not j.implicit] == ["cylindrical"]
    block2 = S.product("block2", S.cut(S.box((-10, -10, -10), (10, 10, 10)),
                                       S.cylinder(4.2, (0, 0, -11), (0, 0, 11)), S.cylinder(4.2, (-11, 0, 5), (11, 0, 5))))
    rod2 = S.product("rod2", S.fuse(S.cylinder(4, (0, 0, -12), (0, 0, 12)), S.cylinder(4, (-12, 0, 5), (12, 0, 5))))
    path = S.write_mechanism(tmp_path / "locked.step", [("block", block2, np.eye(4)), ("rod", rod2, np.eye(4))])
    a = read_assembly(path, mesh_dir=tmp_path / "m2")
    assert [j.type for j in a.joints if not j.implicit] == ["fixed"]      # two crossing bearings lock the pair


def test_wrapper_option_errors_point_at_the_yaml_line(tmp_path):
    """A mistyped part or joint in the wrapper names the wrapper's file and line, not the STEP file."""
    import shutil
    shutil.copy(SEEKER, tmp_path / "seeker.step")
    text = (SEEKER.parent / "seeker.yaml").read_text()
    cases = {"joint_names": text.replace("fix_cam_a: [shaft_a, camera]", "fix_cam_a: [shaft_a, camra]"),
             "actuated": text.replace("actuated: [pitch_a, yaw_a]", "actuated: [pitch_a, yaw_q]"),
             "ground": text.replace("ground: housing", "ground: hosing")}
    for key, mutated in cases.items():
        wrapper = _write(tmp_path, "seeker.yaml", mutated)
        line = next(k for k, l in enumerate(mutated.splitlines(), 1) if l.startswith(key))
        got = _cli_error("inspect", str(wrapper))
        assert any(got.startswith(f"error: {wrapper}:{n}: {key}: ") for n in (line, line + 1)), got
    fixed = _write(tmp_path, "seeker.yaml", text.replace("actuated: [pitch_a, yaw_a]", "actuated: [fix_yaw_a]"))
    assert "fix_yaw_a is fixed and cannot be actuated" in _cli_error("inspect", str(fixed))
