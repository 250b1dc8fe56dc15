"""Malformed URDF, SDFormat and MJCF files: one InputError each, with the file and the exact line.

The expected line of each case was read off the file by hand (the element that
is wrong; for XML syntax errors, the line where the document stops being
well-formed).  Every file is read through the registry (``parsers.read_assembly``),
so ``.xml`` files also go through the root-element dispatch.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mbcompose import parsers
from mbcompose.parsers import InputError

MALFORMED = Path(__file__).parent / "data" / "malformed"

#: file -> (line, words the message must contain)
CASES = {
    "urdf_syntax_error.urdf": (4, "syntax error"),
    "urdf_unknown_parent_link.urdf": (5, "unknown parent link 'nope'"),
    "urdf_cycle.urdf": (5, "cycle"),
    "urdf_cycle_below_root.urdf": (6, "cycle"),
    "urdf_missing_mesh.urdf": (5, "mesh file not found"),
    "urdf_non_numeric.urdf": (7, "expected numbers"),
    "urdf_missing_joint_type.urdf": (4, "needs attribute 'type'"),
    "urdf_two_roots.urdf": (3, "2 root links"),
    "urdf_unknown_joint_type.urdf": (5, "unknown joint type 'hinge'"),
    "urdf_negative_mass.urdf": (4, "mass must be >= 0"),
    "urdf_two_parents.urdf": (6, "two parent joints"),
    "urdf_wrong_count.urdf": (6, "expected 3 numbers"),
    "urdf_duplicate_link.urdf": (4, "duplicate link name 'a'"),
    "urdf_no_robot_name.urdf": (3, "no name"),
    "urdf_zero_axis.urdf": (7, "axis must be non-zero"),
    "urdf_missing_inertia_value.urdf": (5, "'izz'"),
    "urdf_massless_subtree.urdf": (3, "moves no mass"),
    "sdf_syntax_error.sdf": (5, "mismatched tag"),
    "sdf_unknown_child_link.sdf": (6, "unknown child link 'b'"),
    "sdf_unknown_joint_type.sdf": (5, "'hinge' is not supported"),
    "sdf_negative_mass.sdf": (5, "mass must be >= 0"),
    "sdf_non_numeric_pose.sdf": (5, "expected numbers"),
    "sdf_missing_version.sdf": (3, "'version'"),
    "sdf_unknown_relative_to.sdf": (5, "unknown frame 'nowhere'"),
    "sdf_missing_mesh.sdf": (8, "mesh file not found"),
    "sdf_missing_axis.sdf": (5, "needs <axis>"),
    "mjcf_syntax_error.xml": (6, "mismatched tag"),
    "mjcf_unknown_class.xml": (8, "unknown default class 'leg'"),
    "mjcf_unknown_mesh.xml": (5, "unknown mesh 'wheel'"),
    "mjcf_missing_mesh_file.xml": (4, "mesh file not found"),
    "mjcf_negative_mass.xml": (5, "mass must be >= 0"),
    "mjcf_unknown_joint_type.xml": (5, "unknown joint type 'revolute'"),
    "mjcf_equality_unknown_body.xml": (6, "unknown body 'b'"),
    "mjcf_two_orientations.xml": (3, "several orientations"),
    "mjcf_massless_moving_body.xml": (3, "no mass"),
    "mjcf_nested_free_joint.xml": (6, "top-level"),
    "mjcf_non_numeric.xml": (3, "expected numbers"),
    "mjcf_global_coordinate.xml": (2, "global"),
    "mjcf_duplicate_body.xml": (4, "duplicate body name 'a'"),
    "urdf_unexpanded_xacro.urdf": (3, "xacro"),
    "mjcf_free_joint_not_alone.xml": (5, "only joint of its body"),
}


def test_every_malformed_file_has_a_case():
    assert sorted(p.name for p in MALFORMED.iterdir()) == sorted(CASES)
    assert len(CASES) >= 20


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_file_gives_input_error_with_file_and_line(name):
    line, words = CASES[name]
    path = MALFORMED / name
    with pytest.raises(InputError) as exc:
        parsers.read_assembly(path)
    err = exc.value
    assert err.file == str(path)
    assert err.line == line, str(err)
    assert words in str(err)
    assert "\n" not in str(err)
    assert str(err).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("name", ["urdf_unknown_joint_type.urdf", "urdf_two_roots.urdf", "urdf_cycle.urdf",
                                  "urdf_no_robot_name.urdf", "mjcf_two_orientations.xml",
                                  "mjcf_free_joint_not_alone.xml", "mjcf_massless_moving_body.xml",
                                  "mjcf_unknown_class.xml", "mjcf_equality_unknown_body.xml"])
def test_mujoco_and_pinocchio_refuse_the_same_files(name):
    """Independent check that these files are really malformed."""
    path = MALFORMED / name
    if name.endswith(".urdf"):
        pin = pytest.importorskip("pinocchio")
        with pytest.raises((RuntimeError, ValueError)):
            pin.buildModelFromUrdf(str(path))
    else:
        mujoco = pytest.importorskip("mujoco")
        with pytest.raises(ValueError):
            mujoco.MjModel.from_xml_path(str(path))


def test_cli_inspect_exits_with_code_2_and_one_line(tmp_path):
    exe = shutil.which("mbcompose") or str(Path(sys.executable).parent / "mbcompose")
    if not Path(exe).exists():
        pytest.skip("mbcompose CLI not installed")
    path = MALFORMED / "urdf_negative_mass.urdf"
    out = subprocess.run([exe, "inspect", str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"{path}:4" in lines[0]
