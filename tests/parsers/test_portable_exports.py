"""Exports a user can move: meshes copied into ``assets/`` and referenced relatively.

The seeker (STL meshes) and talos from example-robot-data (STL meshes, DAE visuals
converted) are exported to URDF, MJCF and SDFormat, the output folder is copied
elsewhere and the original removed, and the copies load there: MJCF in MuJoCo,
URDF in Pinocchio (geometry included, meshes found through ``package_dirs``),
SDFormat in our reader with every mesh inside the copied folder.
"""

import os
import re
import shutil
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from mbcompose.composer.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
TALOS = os.path.join(SHARE, "example-robot-data", "robots", "talos_data", "robots", "talos_reduced.urdf")


def export_and_move(source, tmp_path, *options):
    out = tmp_path / "written"
    out.mkdir()
    for suffix in ("urdf", "xml", "sdf", "yaml"):
        r = CliRunner().invoke(main, ["convert", str(source), "-o", str(out / f"model.{suffix}"), *options])
        assert r.exit_code == 0, r.output
    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(out, moved)
    shutil.rmtree(out)
    return moved


def mesh_references(folder: Path) -> list[str]:
    refs = []
    for name in ("model.urdf", "model.xml", "model.sdf"):
        root = ET.parse(folder / name).getroot()
        refs += [el.get("filename") for el in root.iter("mesh") if el.get("filename")]
        refs += [el.get("file") for el in root.iter("mesh") if el.get("file")]
        refs += [el.text for el in root.iter("uri")]
    return refs


def check_loads_where_it_was_copied(folder: Path, n_meshes: int | None = None, ours=("model.sdf", "model.yaml")):
    mujoco = pytest.importorskip("mujoco")
    pin = pytest.importorskip("pinocchio")
    refs = mesh_references(folder)
    assert refs and all(re.fullmatch(r"assets/[\w.-]+\.(stl|obj)", r) for r in refs), refs
    assert all((folder / r).is_file() for r in refs)
    assert n_meshes is None or len(list((folder / "assets").iterdir())) == n_meshes
    m = mujoco.MjModel.from_xml_path(str(folder / "model.xml"))
    assert m.nmesh > 0
    mujoco.mj_step(m, mujoco.MjData(m))
    model, collision, visual = pin.buildModelsFromUrdf(str(folder / "model.urdf"), package_dirs=[str(folder)])
    paths = [g.meshPath for g in list(collision.geometryObjects) + list(visual.geometryObjects)
             if g.meshPath not in ("", "BOX", "CYLINDER", "SPHERE")]   # primitives have a kind name
    assert paths and all(Path(p).resolve().is_relative_to(folder.resolve()) for p in paths)
    from mbcompose.parsers import read_assembly

    for name in ours:
        a = read_assembly(folder / name)
        files = [g.file for b in a.bodies for g in b.geometry if g.kind == "mesh"]
        assert files and all(Path(f).resolve().is_relative_to(folder.resolve()) for f in files)
    return m, model


def test_seeker_exports_load_in_mujoco_and_pinocchio_after_moving_the_folder(tmp_path):
    folder = export_and_move(ROOT / "samples/seeker/seeker.yaml", tmp_path)
    m, model = check_loads_where_it_was_copied(folder, n_meshes=9)
    assert m.njnt == 2 and model.nq == 2


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(TALOS), reason="example-robot-data not installed")
def test_talos_without_lumping_exports_load_in_mujoco_and_pinocchio_after_moving_the_folder(tmp_path):
    folder = export_and_move(TALOS, tmp_path, "--no-lumping")
    # the native YAML reader refuses talos's point masses (zero inertia), so only the SDF is read back
    m, model = check_loads_where_it_was_copied(folder, ours=("model.sdf",))
    assert m.nu == model.nv                   # one actuator per actuated joint, names unique
    names = [m.actuator(i).name for i in range(m.nu)]
    assert len(set(names)) == len(names)


def test_a_motor_driving_two_joints_gives_two_uniquely_named_actuators():
    from dataclasses import replace

    from mbcompose.parsers import read_assembly
    from mbcompose.parsers.assembly import Motor
    from mbcompose.parsers.exporters.mjcf import mjcf_element

    a = read_assembly(ROOT / "samples/double_pendulum/double_pendulum.yaml")
    motor = Motor(name="differential")
    a = replace(a, joints=tuple(replace(j, actuated=True, motor=motor) for j in a.joints))
    motors = mjcf_element(a).find("actuator").findall("motor")
    assert [(x.get("name"), x.get("joint")) for x in motors] == [
        ("differential", "shoulder"), ("differential_elbow", "elbow")]
