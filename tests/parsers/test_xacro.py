"""``.xacro`` inputs (expanded by the ``xacro`` package) and ``package://`` look-ups (``--package-dir``,
``options.packages``), checked against Pinocchio reading the same expansion."""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose.composer.cli import main
from mbcompose.dynamics import mass_matrix
from mbcompose.parsers import InputError, read_assembly
from mbcompose.parsers.urdf.xacro import expand_xacro

xacro = pytest.importorskip("xacro")
pin = pytest.importorskip("pinocchio")

PACKAGE = Path(__file__).parents[1] / "data" / "xacro" / "two_link_description"
XACRO = PACKAGE / "urdf" / "two_link.urdf.xacro"


def _pinocchio_mass_matrix(urdf_text: str, q) -> np.ndarray:
    model = pin.buildModelFromXML(urdf_text)
    data = model.createData()
    return pin.crba(model, data, np.asarray(q, float))


def _ours(path, q, **options) -> np.ndarray:
    from mbcompose import compose

    return mass_matrix(compose(path, **options).model, np.asarray(q, float))


@pytest.mark.parametrize("args", [{}, {"upper_length": "0.7", "lower_mass": "2.5"}])
def test_xacro_mass_matrix_matches_pinocchio_on_the_same_expansion(args):
    q = [0.3, -1.1]
    text = expand_xacro(XACRO, args)
    assert "xacro:" not in text
    np.testing.assert_allclose(_ours(XACRO, q, xacro_args=args), _pinocchio_mass_matrix(text, q), rtol=0, atol=1e-12)


def test_xacro_arguments_change_the_model():
    assembly = read_assembly(XACRO, xacro_args={"upper_length": "0.7"})
    np.testing.assert_allclose(assembly.joint("lower_joint").origin, [0.7, 0, 0])
    assert read_assembly(XACRO).joint("lower_joint").origin[0] == pytest.approx(0.5)


def test_find_answers_from_package_dirs_when_the_file_moved(tmp_path):
    moved = tmp_path / "elsewhere" / "two_link.urdf.xacro"
    moved.parent.mkdir()
    shutil.copy(XACRO, moved)
    with pytest.raises(InputError, match=r"\$\(find two_link_description\).*--package-dir two_link_description=DIR"):
        read_assembly(moved)
    assembly = read_assembly(moved, package_dirs=[("two_link_description", PACKAGE)])
    assert [b.name for b in assembly.bodies] == ["base_link", "upper", "lower"]
    assert read_assembly(moved, package_dirs=[PACKAGE.parent]).joint("lower_joint") is not None


def test_moved_urdf_finds_its_meshes_with_package_dir_and_says_how_without(tmp_path, caplog):
    urdf = tmp_path / "two_link.urdf"
    urdf.write_text(expand_xacro(XACRO))
    assembly = read_assembly(urdf, check_meshes=False)
    assert "--package-dir two_link_description=DIR" in caplog.text
    assert not [g for b in assembly.bodies for g in b.geometry if g.kind == "mesh"]
    found = read_assembly(urdf, package_dirs=[("two_link_description", PACKAGE)])
    meshes = [g.file for b in found.bodies for g in b.geometry if g.kind == "mesh"]
    assert meshes and all(Path(f) == PACKAGE / "meshes" / "bar.stl" for f in meshes)


def test_cli_xacro_arg_and_package_dir(tmp_path):
    runner = CliRunner()
    r = runner.invoke(main, ["eval", str(XACRO), "mass-matrix", "--q", "upper_joint=0.3", "--q", "lower_joint=-1.1",
                             "--xacro-arg", "upper_length=0.7", "--format", "json"])
    assert r.exit_code == 0, r.output
    import json

    ours = np.array(json.loads(r.output)["value"])
    reference = _pinocchio_mass_matrix(expand_xacro(XACRO, {"upper_length": "0.7"}), [0.3, -1.1])
    np.testing.assert_allclose(ours, reference, atol=1e-12)
    r = runner.invoke(main, ["inspect", str(XACRO), "--xacro-arg", "upper_length"])
    assert r.exit_code == 2 and "expected NAME=VALUE" in r.output
    r = runner.invoke(main, ["inspect", str(XACRO), "--package-dir", f"two_link_description={tmp_path / 'no'}"])
    assert r.exit_code == 2 and "is not a folder" in r.output
    r = runner.invoke(main, ["inspect", str(PACKAGE / "package.xml"), "--xacro-arg", "a=1"])
    assert r.exit_code == 2


def test_a_published_xacro_that_xacro_cannot_expand_is_one_error():
    """example-robot-data's hector quadrotor includes a ``package://`` path, which xacro does not
    resolve in includes (and a ``urdf/`` folder the package does not have): one error, exit 2."""
    share = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
    hector = share / "hector_description" / "robots" / "quadrotor_base.xacro"
    if not hector.is_file():
        pytest.skip(f"example-robot-data's hector model not at {hector}")
    r = CliRunner().invoke(main, ["inspect", str(hector)])
    assert r.exit_code == 2
    assert r.output.startswith("error: ") and "xacro could not expand the file" in r.output
    assert "Traceback" not in r.output


def test_pipeline_packages_and_xacro_args(tmp_path):
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(f"input: {XACRO}\noptions:\n  packages: {{two_link_description: {PACKAGE}}}\n"
                        f"  xacro_args: {{upper_length: 0.7}}\noutputs:\n  directory: out\n  report: false\n")
    r = CliRunner().invoke(main, ["run", str(pipeline)])
    assert r.exit_code == 0, r.output
    written = next((tmp_path / "out").glob("*.yaml")).read_text()
    assert "0.7" in written


def test_batch_worker_warnings_keep_their_prefix(tmp_path):
    """A batch runs its inputs in worker processes; their warnings reach stderr as ``warning: ...``."""
    import subprocess
    import sys

    moved = tmp_path / "two_link.urdf.xacro"
    shutil.copy(XACRO, moved)
    (tmp_path / "two_link_description").mkdir()
    shutil.copytree(PACKAGE / "urdf", tmp_path / "two_link_description" / "urdf")
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(f"inputs: [two_link.urdf.xacro, {Path(__file__).parents[2] / 'samples/double_pendulum/double_pendulum.yaml'}]\n"
                        "outputs:\n  directory: out\n  report: false\n  graphs: []\n")
    r = subprocess.run([sys.executable, "-m", "mbcompose", "run", str(pipeline)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "warning: " in r.stderr and "visual mesh not found" in r.stderr
    assert not [line for line in r.stderr.splitlines() if line.startswith("'package://")]
    assert (tmp_path / "out" / "two_link").is_dir()
