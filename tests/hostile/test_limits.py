"""Unit tests of parsers/limits.py, the bounded YAML/XML readers and the output guarantees."""

import os
import struct

import pytest

from mbcompose.composer.outputs import OutputSet, atomic_write_text, remove_leftovers
from mbcompose.parsers import limits
from mbcompose.parsers.errors import InputError, did_you_mean
from mbcompose.parsers.massprops import load_mesh
from mbcompose.parsers.xml import parse_xml
from mbcompose.parsers.yaml.document import check_alias_expansion, loads_yaml

from models import tetra_stl


def test_yaml_12_exponents_are_numbers():
    root = loads_yaml("a: 1.0e7\nb: 1e7\nc: -2.5E-3\nd: 1.0e+7\ne: 1e7x\n")
    values = root.plain()
    assert values["a"] == 10_000_000.0 and values["b"] == 10_000_000.0 and values["d"] == 10_000_000.0
    assert values["c"] == -0.0025
    assert values["e"] == "1e7x"


def test_alias_expansion_counts_every_value_without_expanding():
    import yaml

    # a0 = [x, x, x]: 4 values; a1 = [a0, a0, a0]: 1 + 3 * 4 = 13; root mapping: 1 + keys 2 + 4 + 13
    node = yaml.compose("k0: &a [x, x, x]\nk1: [*a, *a, *a]\n")
    assert check_alias_expansion(node, "f.yaml") == 1 + 2 + 4 + 13


def test_an_alias_bomb_is_refused_quickly():
    bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
    with pytest.raises(InputError, match="yaml_nodes"):
        loads_yaml(bomb, "bomb.yaml")


def test_limits_are_raised_for_one_block_only():
    text = "a: [[[[1]]]]\n"
    with limits.using(limits.checked_limits({"nesting_depth": 3})):
        with pytest.raises(InputError, match="nesting_depth=3"):
            loads_yaml(text)
    assert loads_yaml(text).plain() == {"a": [[[[1]]]]}


def test_bad_limit_names_and_values_are_refused_with_a_suggestion():
    with pytest.raises(ValueError, match="did you mean 'mesh_faces'"):
        limits.checked_limits({"mesh_face": 3})
    for bad in (-1, 0, float("inf"), float("nan"), "x", 2.5):
        with pytest.raises(ValueError):
            limits.checked_limits({"samples": bad})


def test_numbers_beyond_the_magnitude_limit_are_input_errors():
    with pytest.raises(InputError, match="magnitude"):
        loads_yaml("m: 1.0e13\n", "m.yaml").mapping()["m"].number()
    with pytest.raises(InputError, match="magnitude"):
        from mbcompose.parsers.xml import attr_floats

        attr_floats(parse_xml(text='<a xyz="0 1e308 1e308"/>'), "xyz", 3)


def test_special_files_are_refused_before_they_are_opened(tmp_path):
    fifo = tmp_path / "model.urdf"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        parse_xml(fifo)
    with pytest.raises(InputError, match="device"):
        limits.read_input_bytes("/dev/zero")


def test_a_binary_stl_over_the_face_limit_is_refused_from_its_header(tmp_path):
    stl = tmp_path / "tetra.stl"
    stl.write_bytes(tetra_stl())
    assert len(load_mesh(stl).faces) == 4
    with limits.using(limits.checked_limits({"mesh_faces": 3})):
        with pytest.raises(InputError, match="mesh_faces"):
            load_mesh(stl)
    huge = tmp_path / "huge.stl"  # header claims 10 million faces; the size matches a sparse file
    with open(huge, "wb") as fh:
        fh.write(b"x" * 80 + struct.pack("<I", 10_000_000))
        fh.truncate(84 + 50 * 10_000_000)
    with limits.using(limits.checked_limits({"input_bytes": 10 ** 9})):
        with pytest.raises(InputError, match="mesh triangles"):
            load_mesh(huge)


def test_did_you_mean_finds_the_closest_name():
    assert did_you_mean("bodys", ["bodies", "joints"]) == " (did you mean 'bodies'?)"
    assert did_you_mean("zzz", ["bodies", "joints"]) == ""


def test_a_failed_set_removes_the_folders_it_created(tmp_path):
    target = tmp_path / "a" / "b" / "out.txt"
    with pytest.raises(RuntimeError):
        with OutputSet(create_dirs=True) as out:
            out.add_text(target, "x")
            raise RuntimeError("stage failed")
    assert list(tmp_path.iterdir()) == []


def test_write_errors_of_the_file_system_are_input_errors(tmp_path):
    def refuse(path):
        raise PermissionError(13, "Permission denied")

    from mbcompose.composer.outputs import atomic_write

    with pytest.raises(InputError, match="Permission denied") as exc:
        atomic_write(tmp_path / "x.txt", refuse)
    assert exc.value.file == str(tmp_path / "x.txt")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(InputError, match="in the way"):
        atomic_write_text(tmp_path / "afile" / "x.txt", "y", create_dirs=True)


def test_leftovers_of_dead_runs_are_removed_and_live_ones_kept(tmp_path):
    dead = tmp_path / ".a.txt.mbc999999999.abcd.part"
    live = tmp_path / f".a.txt.mbc{os.getppid()}.abcd.part"
    user = tmp_path / "notes.part"
    for p in (dead, live, user):
        p.write_text("x")
    assert remove_leftovers(tmp_path) == [dead]
    assert live.exists() and user.exists()


def test_files_read_are_recorded_and_never_written(tmp_path):
    model = tmp_path / "m.yaml"
    model.write_text("a: 1\n")
    with limits.recording_inputs() as read:
        from mbcompose.parsers.yaml.document import load_yaml

        load_yaml(model)
    assert read == {model.resolve()}
    with pytest.raises(InputError, match="refusing to overwrite"):
        atomic_write_text(model, "b: 2\n", inputs=read)
    assert model.read_text() == "a: 1\n"


@pytest.mark.parametrize("ratio", ["nan", "inf", "1e308", "lots"])
def test_a_urdf_transmission_ratio_that_is_not_a_finite_number_is_replaced_by_one(tmp_path, ratio, caplog):
    """Issue 13: Pinocchio loads such files and a transmission is not dynamics, so the reduction is
    ignored with a warning naming the line (never used as a number)."""
    from mbcompose.parsers import read_assembly
    from models import urdf_model

    text = urdf_model().replace("</robot>", '<transmission name="t"><joint name="shoulder"/><actuator name="m">'
                                f'<mechanicalReduction>{ratio}</mechanicalReduction></actuator></transmission>'
                                "</robot>")
    path = tmp_path / "arm.urdf"
    path.write_text(text)
    motor = read_assembly(path).joint("shoulder").motor
    assert motor.gear_ratio == 1.0
    line = text[:text.index("<mechanicalReduction>")].count("\n") + 1
    assert f"{path}:{line}" in caplog.text and "mechanicalReduction" in caplog.text
