"""SDFormat reader: frame semantics of 1.6 and 1.7+, joint types, loops, floating models.

References are worked out by hand in the comments, and the four-bar is compared
with the YAML sample samples/fourbar/fourbar.yaml (read by the YAML reader) and
with the bar masses of its README (density x volume).
"""

from pathlib import Path

import numpy as np
import pytest

from mbcompose import parsers
from mbcompose.parsers import GROUND, InputError
from mbcompose.parsers.sdf.reader import read_sdf

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
RZ90 = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
RX90 = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])


def test_sdf16_poses_are_relative_to_the_model_and_joints_to_their_child():
    a = read_sdf(DATA / "sdf16_features.sdf", model="m16")
    np.testing.assert_allclose(a.gravity, [0, 0, -3.7])
    A, B, C = (a.body(n) for n in "abc")
    np.testing.assert_allclose(A.pose.translation, [1, 0, 1], atol=1e-15)
    np.testing.assert_allclose(A.pose.rotation, RZ90, atol=1e-15)
    np.testing.assert_allclose(B.pose.translation, [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(B.pose.rotation, RZ90 @ RX90, atol=1e-15)
    np.testing.assert_allclose(C.pose.translation, [-1, 0, 1], atol=1e-15)
    np.testing.assert_allclose(A.mass.com, [0.1, 0, 0])
    np.testing.assert_allclose(A.mass.inertia, np.diag([0.2, 0.1, 0.3]), atol=1e-15)
    ja = a.joint("ja")
    assert (ja.type, ja.reference, ja.secondary) == ("revolute", GROUND, "a")
    np.testing.assert_allclose(ja.origin, [1, 0, 1], atol=1e-15)
    np.testing.assert_allclose(ja.axis, [0, 1, 0], atol=1e-15)
    assert (ja.limits.lower, ja.limits.upper, ja.limits.effort, ja.limits.velocity, ja.damping) == (-1, 1, 3, 2, 0.5)
    jb = a.joint("jb")
    assert (jb.type, jb.reference, jb.secondary) == ("universal", "a", "b")
    np.testing.assert_allclose(jb.origin, [0.5, 0, 1], atol=1e-15)
    np.testing.assert_allclose(jb.axis, [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(jb.axis2, [0, 1, 0], atol=1e-15)
    jc = a.joint("jc")
    assert jc.type == "spherical" and jc.nq == 4
    np.testing.assert_allclose(jc.origin, [-1, 0, 1], atol=1e-15)
    jca = a.joint("jca")            # use_parent_model_frame: y of the model = -x of the world
    np.testing.assert_allclose(jca.axis, [-1, 0, 0], atol=1e-15)


def test_joint_graph_with_a_cycle_is_kept_as_a_loop_not_an_error():
    a = read_sdf(DATA / "sdf16_features.sdf", model="m16")
    names = {j.name for j in a.joints}
    assert {"ja", "jb", "jc", "jca"} <= names
    assert not any(j.type == "free" for j in a.joints)


def test_model_not_joined_to_the_world_floats_and_defaults_apply():
    a = read_sdf(DATA / "sdf16_features.sdf", model="box")
    free = a.joint("lid_free")
    assert (free.type, free.reference, free.secondary) == ("free", GROUND, "lid")
    h = a.joint("hinge")
    assert h.type == "continuous" and h.limits.lower is None
    lid = a.body("lid")
    assert lid.mass.mass == 1.0
    np.testing.assert_array_equal(lid.mass.inertia, np.eye(3))     # SDFormat's default inertia
    np.testing.assert_allclose(a.body("body").pose.translation, [5, 5, 1])


def test_static_model_welds_every_link():
    text = (DATA / "sdf16_features.sdf").read_text().replace('<model name="box">', '<model name="box"><static>true</static>')
    a = read_sdf(DATA / "x.sdf", text=text, model="box")
    assert a.joint("lid_static").type == "fixed" and a.joint("body_static").reference == GROUND
    assert "lid_free" not in a.joint_names


def fourbar_yaml():
    return parsers.read_assembly(ROOT / "samples" / "fourbar" / "fourbar.yaml")


def assert_same_bodies(a, ref, atol=1e-12):
    assert sorted(a.body_names) == sorted(ref.body_names)
    for rb in ref.bodies:
        b = a.body(rb.name)
        assert b.pose.isclose(rb.pose, atol), rb.name
        assert b.mass.mass == pytest.approx(rb.mass.mass, rel=1e-12), rb.name
        np.testing.assert_allclose(b.mass.com, rb.mass.com, atol=atol, err_msg=rb.name)
        np.testing.assert_allclose(b.mass.inertia, rb.mass.inertia, atol=atol, err_msg=rb.name)


def assert_same_joint_frames(a, ref, atol=1e-12):
    for rj in ref.joints:
        j = a.joint(rj.name)
        assert {j.reference, j.secondary} == {rj.reference, rj.secondary}, rj.name
        np.testing.assert_allclose(j.origin, rj.origin, atol=atol, err_msg=rj.name)
        if j.type == rj.type:
            np.testing.assert_allclose(j.axis, rj.axis, atol=atol, err_msg=rj.name)


def test_fourbar_in_sdformat_equals_the_yaml_sample():
    ref = fourbar_yaml()
    a = parsers.read_assembly(DATA / "fourbar.sdf")
    assert_same_bodies(a, ref)
    assert sorted(a.joint_names) == sorted(ref.joint_names)
    assert_same_joint_frames(a, ref)
    for j in a.joints:
        assert j.type == ref.joint(j.name).type == "revolute"
        assert (j.reference, j.secondary) == (ref.joint(j.name).reference, ref.joint(j.name).secondary)
    masses = {"crank": 7850 * 0.09 * 0.01 * 0.02, "coupler": 7850 * 0.25 * 0.01 * 0.02,
              "rocker": 7850 * 0.26 * 0.01 * 0.02}
    for n, m in masses.items():
        assert a.body(n).mass.mass == pytest.approx(m, rel=1e-12)


def test_fourbar_in_mjcf_with_connect_equals_the_yaml_sample():
    ref = fourbar_yaml()
    a = parsers.read_assembly(DATA / "fourbar_mjcf.xml")
    assert_same_bodies(a, ref)
    assert sorted(a.joint_names) == sorted(ref.joint_names)
    assert_same_joint_frames(a, ref)
    tree = [j for j in a.joints if not j.loop]
    assert all(j.type == "revolute" for j in tree) and len(tree) == 3
    (loop,) = [j for j in a.joints if j.loop]
    # an MJCF connect is a point constraint: the closing joint is spherical at D
    assert (loop.name, loop.type, loop.reference, loop.secondary) == ("rocker_pivot", "spherical", GROUND, "rocker")
    assert a.joint("crank_pivot").actuated


def test_fourbar_mjcf_matches_mujoco():
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_path(str(DATA / "fourbar_mjcf.xml"))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    a = parsers.read_assembly(DATA / "fourbar_mjcf.xml")
    for i in range(1, m.nbody):
        b = a.body(m.body(i).name)
        assert b.mass.mass == pytest.approx(m.body_mass[i], rel=1e-12)
        np.testing.assert_allclose(b.pose.translation, d.xpos[i], atol=1e-12)
    np.testing.assert_allclose(a.joint("coupler_rocker").origin, d.xanchor[2], atol=1e-12)


def test_sdf_through_the_registry(tmp_path):
    assert parsers.read_assembly(DATA / "fourbar.sdf").name == "fourbar"
    f = tmp_path / "fourbar.xml"
    f.write_text((DATA / "fourbar.sdf").read_text())
    assert parsers.read_assembly(f).name == "fourbar"


def test_relative_to_cycle_is_an_error_with_the_line():
    text = """<sdf version="1.8"><model name="m">
<frame name="f1" attached_to="l"><pose relative_to="f2">0 0 0 0 0 0</pose></frame>
<frame name="f2" attached_to="l"><pose relative_to="f1">0 0 0 0 0 0</pose></frame>
<link name="l"><pose relative_to="f1"/></link>
</model></sdf>"""
    with pytest.raises(InputError) as exc:
        read_sdf("cyc.sdf", text=text)
    assert "cycle" in str(exc.value) and exc.value.line in (2, 3)


def test_fourbar_loop_structure_is_the_same_in_yaml_sdformat_and_mjcf():
    analysis = pytest.importorskip("mbcompose.graph.analysis")
    results = {}
    for name, path in (("yaml", ROOT / "samples" / "fourbar" / "fourbar.yaml"), ("sdf", DATA / "fourbar.sdf"),
                       ("mjcf", DATA / "fourbar_mjcf.xml")):
        an = analysis.analyse(parsers.read_assembly(path))
        assert an.dof == 1, name
        (loop,) = an.loops
        results[name] = (sorted(loop.joints), sorted(set(loop.bodies)), loop.mobility)
    assert results["yaml"] == results["sdf"] == results["mjcf"]
    assert results["yaml"][0] == ["coupler_rocker", "crank_coupler", "crank_pivot", "rocker_pivot"]


@pytest.mark.parametrize("shape, message", [
    ("<box><size>0.25 -0.0 0.02</size></box>", "<box> <size> must be positive"),
    ("<cylinder><radius>0</radius><length>1</length></cylinder>", "<cylinder> <radius> must be positive"),
    ("<sphere><radius>-1</radius></sphere>", "<sphere> <radius> must be positive")])
def test_a_shape_without_volume_is_an_error_at_its_line(tmp_path, shape, message):
    # found by the fuzz test: a zero box side with a <density> gave a body of NaN inertia
    path = tmp_path / "flat.sdf"
    path.write_text(f"""<sdf version="1.9"><model name="m"><link name="l">
<collision name="c"><density>1000</density><geometry>
{shape}
</geometry></collision></link></model></sdf>
""")
    with pytest.raises(InputError, match=message) as info:
        read_sdf(path)
    assert info.value.line == 3
