"""MJCF features MuJoCo compiles that the reader once refused: ``<replicate>``, ``<attach>`` with
model assets, inline and ``.msh`` meshes, primitive geoms fitted to a mesh, actuator gears.

Every reference is MuJoCo's compiled model of the same file (``mujoco.MjModel``): names, masses,
geom sizes, ``mj_fullM`` and ``qfrc_bias`` through :func:`check_against_mujoco`.  The small models
live in ``tests/data/mjcf/`` (each says in a comment what it exercises; ``mujoco_*.xml`` are MuJoCo's
own ``<replicate>`` examples).
"""

import glob
import os
from pathlib import Path

import numpy as np
import pytest

from mbcompose.parsers import InputError
from mbcompose.parsers.mjcf.reader import read_mjcf
from mujoco_refs import joint_name
from test_mujoco_corpora import check_against_mujoco

mujoco = pytest.importorskip("mujoco")

DATA = Path(__file__).parents[1] / "data" / "mjcf"
MODELS = sorted(glob.glob(str(DATA / "*.xml")))


def test_feature_models_are_found():
    assert {Path(p).stem for p in MODELS} >= {"replicate_arms", "inline_meshes", "fitted_geoms", "fitted_geoms_aabb",
                                              "attach_parent", "attach_child", "mujoco_newton_cradle",
                                              "mujoco_replicate_tendon", "shell_geoms"}


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_feature_models_match_mujoco(path):
    check_against_mujoco(path)


def test_replicate_names_frames_and_followers_are_mujocos():
    path = str(DATA / "replicate_arms.xml")
    m = mujoco.MjModel.from_xml_path(path)
    a = read_mjcf(path)
    ours = {b.name for b in a.bodies if "__" not in b.name}     # without the multi-joint chain bodies
    assert ours == {m.body(i).name or f"body{i}" for i in range(1, m.nbody)}
    assert "base-1" in ours and "tip-2" in ours                 # sep and index
    joints = {j.name: j for j in a.joints}
    assert {joint_name(m, k) for k in range(m.njnt)} <= set(joints)
    assert "pitch1-2" in joints                                  # inner suffix, then outer
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    for i in range(1, m.nbody):                                  # replica frames: R(i euler), offsets accumulated
        np.testing.assert_allclose(a.body(m.body(i).name or f"body{i}").pose.translation, d.xpos[i], atol=1e-12)
    gears = {m.joint(m.actuator_trnid[k, 0]).name: m.actuator_gear[k, 0] for k in range(m.nu)}
    assert len(gears) == 6                                       # two actuators, followed into three replicas
    assert {n: joints[n].motor.gear_ratio for n in joints if joints[n].actuated} == gears
    assert len(a.couplings) == m.neq == 3                        # tendon and equality followed too


def test_attach_names_followers_and_units_are_mujocos():
    path = str(DATA / "attach_parent.xml")
    m = mujoco.MjModel.from_xml_path(path)
    a = read_mjcf(path)
    assert {b.name for b in a.bodies} == {m.body(i).name for i in range(1, m.nbody)}
    joints = {j.name: j for j in a.joints}
    assert {m.joint(k).name for k in range(m.njnt)} <= set(joints)
    gears = {m.joint(m.actuator_trnid[k, 0]).name: m.actuator_gear[k, 0] for k in range(m.nu)}
    assert {n: j.motor.gear_ratio for n, j in joints.items() if j.actuated} == gears == {
        "a_j": 4.0, "w_j": 4.0, "copy_w_j": 4.0}
    assert len(a.couplings) == m.neq == 3
    for k in range(m.njnt):                     # the child's degrees, in this file's radians
        j = joints[m.joint(k).name]
        if j.limits.lower is not None:
            np.testing.assert_allclose([j.limits.lower, j.limits.upper], m.jnt_range[k], atol=1e-15)


def test_inspect_json_reports_each_joints_gear_ratio():
    from mbcompose import compose
    from mbcompose.composer.inspect import render_json

    rows = {j["name"]: j for j in render_json(compose(DATA / "attach_parent.xml").analysis)["joints"]}
    assert (rows["a_j"]["actuated"], rows["a_j"]["gear_ratio"]) == (True, 4.0)
    assert (rows["a_k"]["actuated"], rows["a_k"]["gear_ratio"]) == (False, None)


@pytest.mark.parametrize("snippet, words", [
    ('<attach model="nope" body="link" prefix="x_"/>', "unknown model asset 'nope'"),
    ('<attach model="arm" body="lnk" prefix="x_"/>', "no body 'lnk' in model asset 'arm'"),
    ('<attach model="arm" body="link"/>', "needs attribute 'prefix'"),
    ('<attach prefix="x_"/>', "self-attach needs attribute 'body' or 'frame'"),
])
def test_malformed_attach_names_file_and_line(snippet, words):
    text = f"""<mujoco><asset><model name="arm" file="{DATA / 'attach_child.xml'}"/></asset>
      <worldbody><body><joint/><geom size="0.1"/>
      {snippet}</body></worldbody></mujoco>"""
    with pytest.raises(InputError) as exc:
        read_mjcf("bad.xml", text=text)
    assert exc.value.line == 3 and words in str(exc.value)


def test_attached_model_with_other_mass_settings_is_refused(tmp_path):
    (tmp_path / "child.xml").write_text('<mujoco><compiler inertiafromgeom="true"/><worldbody><body name="l">'
                                        '<joint/><geom size="0.1"/></body></worldbody></mujoco>')
    (tmp_path / "parent.xml").write_text('<mujoco>\n<asset>\n<model name="c" file="child.xml"/></asset><worldbody>'
                                         '<attach model="c" body="l" prefix="x_"/></worldbody></mujoco>')
    with pytest.raises(InputError) as exc:
        read_mjcf(tmp_path / "parent.xml")
    assert exc.value.line == 3 and "'inertiafromgeom' differs" in str(exc.value)


def _mujoco_fitted_sizes(path):
    m = mujoco.MjModel.from_xml_path(path)
    return [(mujoco.mjtGeom(m.geom_type[g]).name[len("mjGEOM_"):].lower(), m.geom_size[g].copy())
            for g in range(m.ngeom)]


@pytest.mark.parametrize("name, rtol", [("fitted_geoms", 1e-12), ("fitted_geoms_aabb", 1e-6)])
def test_fitted_geom_sizes_are_mujocos(name, rtol):
    """Equal-inertia box sizes agree to rounding; the bounding box in MuJoCo's principal frame
    (its eigen solver, single-precision vertices) to about 1e-8 (parsers/mjcf/fit.py)."""
    path = str(DATA / f"{name}.xml")
    ref = _mujoco_fitted_sizes(path)
    geoms = [g for b in read_mjcf(path).bodies for g in b.geometry]
    assert [g.kind for g in geoms] == [kind for kind, _ in ref]
    for g, (kind, size) in zip(geoms, ref):
        p = g.params
        ours = {"sphere": lambda: [p["radius"]], "capsule": lambda: [p["radius"], p["length"] / 2],
                "cylinder": lambda: [p["radius"], p["length"] / 2], "box": lambda: np.asarray(p["size"]) / 2,
                "ellipsoid": lambda: p["radii"]}[kind]()
        np.testing.assert_allclose(ours, size[:len(ours)], rtol=rtol, err_msg=kind)


def _write_msh(path: Path, vertices, faces):
    header = np.array([len(vertices), 0, 0, len(faces)], dtype="<i4")
    path.write_bytes(header.tobytes() + np.asarray(vertices, "<f4").tobytes() + np.asarray(faces, "<i4").tobytes())


def test_binary_msh_mesh_matches_mujoco(tmp_path):
    """MuJoCo's legacy binary mesh (dm_control's fruit fly uses it): a slanted closed prism."""
    v = [[0, 0, 0], [0.2, 0, 0], [0, 0.1, 0], [0.05, 0.02, 0.15], [0.25, 0.02, 0.15], [0.05, 0.12, 0.15]]
    f = [[0, 2, 1], [3, 4, 5], [0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4], [2, 0, 3], [2, 3, 5]]
    _write_msh(tmp_path / "prism.msh", v, f)
    xml = tmp_path / "msh.xml"
    xml.write_text("""<mujoco><asset><mesh file="prism.msh" scale="1 2 1"/></asset><worldbody>
      <body pos="0 0 1"><joint axis="1 1 0"/><geom type="mesh" mesh="prism"/>
      <body pos="0.3 0 0"><joint type="ball"/><geom type="box" mesh="prism"/></body></body>
      </worldbody></mujoco>""")
    check_against_mujoco(str(xml))


@pytest.mark.parametrize("snippet, line, words", [
    ('<worldbody>\n<replicate count="0"><body/></replicate></worldbody>', 3, "count"),
    ('<asset>\n<mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1" face="0 1 7"/></asset>', 3, "mesh@face"),
    ('<asset>\n<mesh name="m" vertex="0 0 0 1 0 0 0 1"/></asset>', 3, "4 vertices"),
    ('<asset><mesh name="rock" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset>\n<worldbody><body><joint/>'
     '<geom type="box" mesh="rok"/></body></worldbody>', 3, "did you mean 'rock'"),
])
def test_malformed_features_name_file_and_line(snippet, line, words):
    with pytest.raises(InputError) as exc:
        read_mjcf("bad.xml", text=f"<mujoco>\n{snippet}</mujoco>")
    assert exc.value.line == line and words in str(exc.value) and exc.value.file == "bad.xml"


def test_replicate_bomb_is_refused_before_it_is_written_out():
    from mbcompose.parsers import limits

    inner = '<body><joint/><geom size="0.1"/></body>'
    for _ in range(6):                                       # 100^6 bodies if written out
        inner = f'<replicate count="100">{inner}</replicate>'
    with pytest.raises(InputError) as exc:
        read_mjcf("bomb.xml", text=f"<mujoco><worldbody>\n{inner}</worldbody></mujoco>")
    assert "xml_elements" in str(exc.value) and exc.value.line == 2
    with limits.using(limits.checked_limits({"xml_elements": 50})):
        with pytest.raises(InputError, match="xml_elements"):
            read_mjcf(DATA / "replicate_arms.xml")


def test_actuator_defaults_are_shared_by_all_actuator_kinds():
    """MuJoCo's <default> has one actuator slot: a <general gear> default applies to a <motor>."""
    text = """<mujoco><default><general gear="7"/><default class="x"><motor gear="5"/></default></default>
      <worldbody><body><joint name="a"/><geom size=".1"/><body><joint name="b"/><geom size=".1"/>
      <body><joint name="c"/><geom size=".1"/></body></body></body></worldbody>
      <actuator><motor joint="a"/><position class="x" joint="b"/><velocity joint="c" gear="2 0 0 0 0 0"/></actuator>
      </mujoco>"""
    m = mujoco.MjModel.from_xml_string(text)
    joints = {j.name: j for j in read_mjcf("x.xml", text=text).joints}
    assert [joints[n].motor.gear_ratio for n in "abc"] == m.actuator_gear[:, 0].tolist()


def test_shell_inertia_of_primitive_geoms_is_mujocos():
    """Each body's mass and principal moments against MuJoCo's body_mass and body_inertia (M and the
    bias forces of the same file: test_feature_models_match_mujoco)."""
    path = DATA / "shell_geoms.xml"
    m = mujoco.MjModel.from_xml_path(str(path))
    a = read_mjcf(path)
    for k in range(1, m.nbody):
        mp = a.body(m.body(k).name).mass
        assert mp.mass == pytest.approx(m.body_mass[k], rel=1e-12)
        np.testing.assert_allclose(np.linalg.eigvalsh(mp.inertia), np.sort(m.body_inertia[k]), rtol=1e-9)
