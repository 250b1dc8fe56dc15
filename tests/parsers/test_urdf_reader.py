"""URDF reader on small hand-written files; references are worked out by hand."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mbcompose import parsers
from mbcompose.parsers import GROUND, InputError
from mbcompose.parsers.urdf.reader import read_urdf
from mbcompose.parsers.urdf.geometry import MeshFiles, resolve_uri

DATA = Path(__file__).parent / "data"

RX90 = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
RZ90 = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])


def test_link_poses_compose_joint_origins_down_the_tree():
    a = read_urdf(DATA / "arm.urdf", package_dirs=[DATA])
    assert a.name == "arm"
    assert a.body_names == ("base", "upper", "fore", "tool")
    assert a.body("base").pose.isclose(parsers.Pose())
    up = a.body("upper").pose
    np.testing.assert_allclose(up.rotation, RX90, atol=1e-15)
    np.testing.assert_allclose(up.translation, [0, 0, 0.1], atol=1e-15)
    fore = a.body("fore").pose
    np.testing.assert_allclose(fore.rotation, RX90 @ RZ90, atol=1e-15)
    np.testing.assert_allclose(fore.translation, [0.4, 0, 0.1], atol=1e-15)
    tool = a.body("tool").pose
    np.testing.assert_allclose(tool.translation, [0.4, 0, 0.2], atol=1e-15)


def test_joint_origins_and_axes_are_in_the_assembly_frame():
    a = read_urdf(DATA / "arm.urdf", package_dirs=[DATA])
    root = a.joint("root_joint")
    assert (root.type, root.reference, root.secondary) == ("fixed", GROUND, "base")
    sh = a.joint("shoulder")
    assert (sh.type, sh.reference, sh.secondary) == ("revolute", "base", "upper")
    np.testing.assert_allclose(sh.origin, [0, 0, 0.1], atol=1e-15)
    np.testing.assert_allclose(sh.axis, [0, -1, 0], atol=1e-15)
    assert (sh.limits.lower, sh.limits.upper, sh.limits.effort, sh.limits.velocity) == (-1, 2, 10, 3)
    assert sh.damping == 0.25
    assert sh.actuated and sh.motor.name == "shoulder_motor" and sh.motor.gear_ratio == 50
    sl = a.joint("slide")
    assert sl.type == "prismatic" and not sl.actuated
    np.testing.assert_allclose(sl.origin, [0.4, 0, 0.1], atol=1e-15)
    np.testing.assert_allclose(sl.axis, [0, 0, 1], atol=1e-15)
    assert a.joint("tool_weld").type == "fixed"
    assert sh.source.line == 36


def test_inertial_origin_rotates_the_inertia_into_the_link_frame():
    a = read_urdf(DATA / "arm.urdf", package_dirs=[DATA])
    up = a.body("upper").mass
    assert up.mass == 1.5
    np.testing.assert_allclose(up.com, [0.2, 0, 0])
    np.testing.assert_allclose(up.inertia, np.diag([0.004, 0.001, 0.005]), atol=1e-15)
    assert a.body("tool").mass.mass == 0.0
    assert a.total_mass == pytest.approx(4.0, abs=1e-15)
    assert a.body("base").sources["mass"].line == 6


def test_package_uri_resolves_through_package_dirs_and_parent_folders(tmp_path):
    mesh = DATA / "meshpkg" / "meshes" / "box_10x20x30cm.obj"
    uri = "package://meshpkg/meshes/box_10x20x30cm.obj"
    assert resolve_uri(uri, tmp_path, [DATA]) == mesh.resolve()
    assert resolve_uri(uri, tmp_path, []) is None
    # next to the file: DATA holds a folder named after the package
    assert resolve_uri(uri, DATA, []) == mesh.resolve()
    # an ancestor named after the package
    assert resolve_uri(uri, DATA / "meshpkg" / "meshes", []) == mesh.resolve()
    assert resolve_uri("meshpkg/meshes/box_10x20x30cm.obj", DATA, []) == mesh.resolve()
    # the package folder found first is remembered: later look-ups, with or without "." and ".."
    # parts, give the same normalised path
    for rel in ("meshes/box_10x20x30cm.obj", "./meshes/../meshes/box_10x20x30cm.obj", "meshes//box_10x20x30cm.obj"):
        assert resolve_uri(f"package://meshpkg/{rel}", tmp_path, [DATA]) == mesh.resolve()
        assert str(resolve_uri(f"package://meshpkg/{rel}", tmp_path, [str(DATA) + "/."])) == str(mesh.resolve())
    a = read_urdf(DATA / "arm.urdf")
    g = [g for g in a.body("fore").geometry if g.kind == "mesh"][0]
    assert Path(g.file) == mesh.resolve() and g.role == "collision"
    np.testing.assert_array_equal(g.params["scale"], [2, 1, 1])



def test_mesh_files_answer_as_os_path_isfile_does(tmp_path):
    """MeshFiles.is_file lists each folder once; its answers are os.path.isfile's (the reference)."""
    import os

    (tmp_path / "a.stl").write_bytes(b"solid x")
    (tmp_path / "sub").mkdir()
    os.symlink(tmp_path / "a.stl", tmp_path / "link.stl")
    os.symlink(tmp_path / "gone.stl", tmp_path / "broken.stl")
    os.mkfifo(tmp_path / "fifo.stl")
    meshes = MeshFiles(tmp_path)
    names = ["a.stl", "link.stl", "broken.stl", "fifo.stl", "sub", "gone.stl", "sub/x.stl", "nofolder/x.stl",
             "a.stl/x.stl"]
    for name in names:
        path = str(tmp_path / name)
        assert meshes.is_file(path) == os.path.isfile(path), name


def test_missing_collision_mesh_is_skipped_when_the_inertial_is_given(tmp_path, caplog):
    text = (DATA / "arm.urdf").read_text().replace("package://meshpkg", "package://nopkg")
    f = tmp_path / "arm.urdf"
    f.write_text(text)
    a = read_urdf(f)                                    # Pinocchio loads it too: the mesh is not needed
    assert not [g for g in a.body("fore").geometry if g.kind == "mesh"]
    assert f"{f}:32" in caplog.text and "nopkg" in caplog.text


def test_missing_collision_mesh_is_an_error_at_the_mesh_line_when_the_link_has_no_inertial(tmp_path):
    text = (DATA / "arm.urdf").read_text().replace("package://meshpkg", "package://nopkg")
    lines = text.splitlines()
    assert "<inertial>" in lines[26] and "</inertial>" in lines[29]
    f = tmp_path / "arm.urdf"
    f.write_text("\n".join(lines[:26] + [""] * 4 + lines[30:]))
    with pytest.raises(InputError) as exc:
        read_urdf(f)
    assert exc.value.line == 32 and exc.value.file == str(f)
    assert "nopkg" in str(exc.value)


def test_links_without_inertial_take_mass_from_collision_geometry_on_request():
    a = read_urdf(DATA / "geometry_mass.urdf", inertia_from_geometry_density=1000.0)
    box = a.body("boxlink").mass
    m = 1000 * 0.2 * 0.4 * 0.6
    assert box.mass == pytest.approx(m, rel=1e-12)
    np.testing.assert_allclose(box.com, [0.1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(box.inertia, m / 12 * np.diag([0.4**2 + 0.6**2, 0.2**2 + 0.6**2, 0.2**2 + 0.4**2]),
                               rtol=1e-12, atol=1e-15)
    mesh = a.body("meshlink").mass          # 0.1 x 0.2 x 0.6 box turned 90 deg about z
    m = 1000 * 0.1 * 0.2 * 0.6
    assert mesh.mass == pytest.approx(m, rel=1e-9)
    np.testing.assert_allclose(mesh.com, [0, 0, 0.5], atol=1e-12)
    np.testing.assert_allclose(mesh.inertia, m / 12 * np.diag([0.1**2 + 0.6**2, 0.2**2 + 0.6**2, 0.2**2 + 0.1**2]),
                               rtol=1e-9, atol=1e-12)
    assert "density 1000" in a.body("boxlink").sources["mass"].note
    assert a.body("base").mass.mass == 0.0


def test_massless_moving_leaf_is_refused_unless_allowed():
    with pytest.raises(InputError) as exc:
        read_urdf(DATA / "geometry_mass.urdf")
    assert exc.value.line == 5 and "boxlink" in str(exc.value)   # j1 moves no mass at all
    a = read_urdf(DATA / "geometry_mass.urdf", massless="allow")
    assert a.total_mass == 0.0


def test_world_root_is_ground_and_mimic_is_kept_as_a_coupling():
    a = read_urdf(DATA / "mimic_world.urdf")
    assert "world" not in a.body_names and "root_joint" not in a.joint_names
    mount = a.joint("mount")
    assert (mount.reference, mount.secondary, mount.type) == (GROUND, "palm", "fixed")
    np.testing.assert_allclose(a.body("left").pose.translation, [0, 0.05, 1])
    (c,) = a.couplings
    assert (c.joint, c.leader, c.multiplier, c.offset) == ("right_slide", "left_slide", 1.0, 0.001)
    assert c.source.line == 32


def test_floating_base_gives_a_free_root_joint():
    a = read_urdf(DATA / "arm.urdf", package_dirs=[DATA], base="floating")
    root = a.joint("root_joint")
    assert (root.type, root.reference, root.secondary, root.nq, root.nv) == ("free", GROUND, "base", 7, 6)


def test_registry_reads_urdf_by_suffix_and_xml_by_root_element(tmp_path):
    a = parsers.read_assembly(DATA / "arm.urdf", package_dirs=[DATA])
    assert a.body_names == ("base", "upper", "fore", "tool")
    x = tmp_path / "robot.xml"
    x.write_text((DATA / "mimic_world.urdf").read_text())
    assert parsers.read_assembly(x).name == "gripper"
    x.write_text("<?xml version='1.0'?>\n<html/>")
    with pytest.raises(InputError) as exc:
        parsers.read_assembly(x)
    assert exc.value.line == 2


def test_read_assembly_from_the_command_line_import():
    code = ("from mbcompose import parsers; a = parsers.read_assembly(%r); print(len(a.bodies), len(a.joints))"
            % str(DATA / "mimic_world.urdf"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["3", "3"]


@pytest.mark.parametrize("base", ["fixed", "floating"])
def test_planar_floating_and_base_options_match_pinocchio(base):
    pin = pytest.importorskip("pinocchio")
    path = str(DATA / "planar_floating.urdf")
    a = read_urdf(path, base=base)
    m = pin.buildModelFromUrdf(path) if base == "fixed" else pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    d = m.createData()
    pin.framesForwardKinematics(m, d, pin.neutral(m))
    # Pinocchio stores planar and continuous rotations as (cos, sin): one q more each
    assert sum(j.nq for j in a.joints) == m.nq - 2
    assert sum(j.nv for j in a.joints) == m.nv
    assert a.joint("root_joint").type == ("free" if base == "floating" else "fixed")
    assert (a.joint("slide_plane").type, a.joint("fly").type) == ("planar", "free")
    for b in a.bodies:
        np.testing.assert_allclose(b.pose.matrix(), d.oMf[m.getFrameId(b.name)].homogeneous, atol=1e-14)
    for name in ("slide_plane", "fly", "hinge"):
        i = m.getJointId(name)
        np.testing.assert_allclose(a.joint(name).origin, d.oMi[i].translation, atol=1e-14)
    np.testing.assert_allclose(a.joint("slide_plane").axis, d.oMi[m.getJointId("slide_plane")].rotation[:, 2], atol=1e-14)
    hinge_axis = d.oMi[m.getJointId("hinge")].rotation @ np.array([0, 1, 1]) / np.sqrt(2)
    np.testing.assert_allclose(a.joint("hinge").axis, hinge_axis, atol=1e-14)


def _chain_urdf(inertias, origins) -> str:
    """A chain of links l0 - l1 - ..., link k with ``<inertia>`` attributes ``inertias[k]``
    (a dict) and inertial ``<origin>`` attributes ``origins[k]`` (text)."""
    links, joints = [], []
    for k, (inertia, origin) in enumerate(zip(inertias, origins)):
        attrs = " ".join(f'{key}="{v}"' for key, v in inertia.items())
        links.append(f'<link name="l{k}"><inertial><origin {origin}/><mass value="1"/>'
                     f'<inertia {attrs}/></inertial></link>')
        if k:
            joints.append(f'<joint name="j{k}" type="revolute"><parent link="l{k - 1}"/><child link="l{k}"/>'
                          '<origin xyz="0 0 0.5"/><axis xyz="0 1 0"/></joint>')
    return '<robot name="chain">\n' + "\n".join(links + joints) + "\n</robot>\n"


UNIT = {"ixx": 1, "ixy": 0, "ixz": 0, "iyy": 1, "iyz": 0, "izz": 1}


def test_inertials_read_together_rotate_each_into_its_link_frame(tmp_path):
    # the reference: R J R^T by hand for rpy = (pi/2, 0, 0) (RX90) and (0, 0, pi/2) (RZ90)
    J = {"ixx": 1, "ixy": 0.1, "ixz": 0, "iyy": 2, "iyz": 0, "izz": 3}
    Jm = np.array([[1, 0.1, 0], [0.1, 2, 0], [0, 0, 3]])
    f = tmp_path / "chain.urdf"
    f.write_text(_chain_urdf([J, J, J], ['xyz="0 0 0"', 'rpy="1.5707963267948966 0 0"',
                                         'xyz="1 2 3" rpy="0 0 1.5707963267948966"']))
    a = read_urdf(f)
    np.testing.assert_array_equal(a.body("l0").mass.inertia, Jm)
    np.testing.assert_allclose(a.body("l1").mass.inertia, RX90 @ Jm @ RX90.T, atol=1e-15)
    np.testing.assert_allclose(a.body("l2").mass.inertia, RZ90 @ Jm @ RZ90.T, atol=1e-15)
    np.testing.assert_array_equal(a.body("l2").mass.com, [1, 2, 3])


@pytest.mark.parametrize("bad, words", [({"izz": "abc"}, "inertia@izz: expected numbers"),
                                        ({"ixx": "nan"}, "inertia@ixx: values must be finite")])
def test_a_bad_inertia_among_good_ones_is_reported_at_its_line(tmp_path, bad, words):
    f = tmp_path / "chain.urdf"
    f.write_text(_chain_urdf([UNIT, UNIT, {**UNIT, **bad}, UNIT], ['xyz="0 0 0"'] * 4))
    with pytest.raises(InputError) as exc:
        read_urdf(f)
    assert exc.value.line == 4 and words in str(exc.value)  # link l2: line 4


@pytest.mark.parametrize("origin, words", [('xyz="0 0"', "expected 3 numbers"),
                                           ('rpy="0 x 0"', "expected numbers"),
                                           ('xyz="0 0 1e300"', "magnitude")])
def test_a_bad_origin_among_good_ones_is_reported_at_its_line(tmp_path, origin, words):
    f = tmp_path / "chain.urdf"
    f.write_text(_chain_urdf([UNIT] * 4, ['xyz="0 0 0"', 'xyz="0 0 1"', origin, 'xyz="0 0 1"']))
    with pytest.raises(InputError) as exc:
        read_urdf(f)
    assert exc.value.line == 4 and words in str(exc.value)


def test_an_unphysical_inertia_among_good_ones_is_warned_at_its_line(tmp_path, caplog):
    # principal moments 1, 1, 3: 1 + 1 < 3 breaks the triangle inequality; diag(1, 2, 3) is physical
    f = tmp_path / "chain.urdf"
    f.write_text(_chain_urdf([UNIT, {**UNIT, "izz": 3}, {**UNIT, "iyy": 2, "izz": 3}], ['xyz="0 0 0"'] * 3))
    a = read_urdf(f)
    warned = [line for line in caplog.text.splitlines() if "triangle inequality" in line]
    assert len(warned) == 1 and f"{f}:3: link 'l1'" in warned[0]
    np.testing.assert_array_equal(a.body("l1").mass.inertia, np.diag([1.0, 1.0, 3.0]))  # kept as written


@pytest.mark.parametrize("extra, refused", [("<!-- <xacro:leg prefix='a'/> -->", False),
                                            ("<!-- a comment --><xacro:leg prefix='a'/>", True),
                                            ("<![CDATA[ <xacro:leg/> ]]>", False)])
def test_xacro_elements_are_refused_but_not_in_comments_or_text(tmp_path, extra, refused):
    f = tmp_path / "chain.urdf"
    f.write_text(_chain_urdf([UNIT, UNIT], ['xyz="0 0 0"'] * 2).replace("</robot>", extra + "\n</robot>"))
    if refused:
        with pytest.raises(InputError, match="unexpanded xacro"):
            read_urdf(f)
    else:
        assert read_urdf(f).body_names == ("l0", "l1")
