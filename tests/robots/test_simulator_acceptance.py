"""Files their own simulator loads are read as that simulator reads them (issue 25).

Each feature is checked against the simulator that defines it:

* huge joint limits mean "no limit" (example-robot-data's iris, ``lower="-1e16"``): M, RNEA and
  ABA against Pinocchio, which loads the file;
* an undeclared ``world`` parent link is the ground (Drake's acrobot URDFs): M against pydrake's
  ``MultibodyPlant.CalcMassMatrix``;
* an SDFormat link named ``world`` is a link (pybullet's gripper worlds): the joints that name
  it hang from it, and the link masses agree with pybullet's ``getDynamicsInfo``; a mesh
  ``/meshes/x.stl`` that does not exist is read beside the file, as pybullet reads it (its
  kuka_with_gripper worlds);
* a massless body with joints above a welded massive body (Menagerie's iit_softfoot scene,
  reproduced in ``tests/data/mjcf/massless_slide_child.xml``): M and bias against MuJoCo; a
  massless body with joints and nothing welded to it is refused with MuJoCo's rule, where
  MuJoCo refuses it;
* a capsule with zero half-length: MuJoCo 4 refuses it, explicit or fitted to a mesh, and so do
  we.
"""

import glob
import os
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.parsers import GROUND, InputError
from robot_refs import assert_matches_pinocchio

DATA = Path(__file__).resolve().parents[1] / "data"
SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
IRIS = sorted(glob.glob(os.path.join(SHARE, "example-robot-data", "robots", "iris_description", "robots",
                                     "iris*.urdf")))


@pytest.mark.parametrize("path", IRIS, ids=os.path.basename)
def test_huge_urdf_limits_are_no_limits_and_iris_matches_pinocchio(path):
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromUrdf(path)
    assert np.all(np.abs(pm.upperPositionLimit) >= 1e16)          # Pinocchio keeps the number
    c = compose(path, package_dirs=[SHARE])
    rotors = [j for j in c.assembly.joints if "rotor" in j.name]
    assert len(rotors) == 4                                        # revolute in iris, fixed in iris_simple
    assert all(j.limits.lower is None and j.limits.upper is None for j in rotors)
    assert_matches_pinocchio(pm, c.model, n=3)


def test_huge_and_infinite_limits_read_as_none(tmp_path):
    urdf = tmp_path / "r.urdf"
    urdf.write_text('<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/>'
                    '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                    '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
                    '<limit lower="-inf" upper="1e13" effort="1e300" velocity="2"/></joint></robot>')
    lim = compose(urdf).assembly.joint("j").limits
    assert (lim.lower, lim.upper, lim.effort, lim.velocity) == (None, None, None, 2.0)
    sdf = tmp_path / "r.sdf"
    sdf.write_text("<sdf version='1.7'><model name='m'><link name='a'/><link name='b'/><joint name='j' "
                   "type='revolute'><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz><limit>"
                   "<lower>-1e16</lower><upper>1e16</upper><effort>1e20</effort></limit></axis></joint>"
                   "</model></sdf>")
    lim = compose(sdf).assembly.joint("j").limits
    assert (lim.lower, lim.upper, lim.effort) == (None, None, None)
    urdf.write_text(urdf.read_text().replace('lower="-inf"', 'lower="nan"'))
    with pytest.raises(InputError, match="limit@lower"):
        compose(urdf)


def _drake_acrobots():
    pydrake = pytest.importorskip("pydrake")
    root = os.path.join(os.path.dirname(pydrake.__file__), "share", "drake", "examples", "acrobot")
    return sorted(glob.glob(os.path.join(root, "*.urdf")))


def test_undeclared_world_parent_is_the_ground_as_drake_reads_it():
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    path = next(p for p in _drake_acrobots() if os.path.basename(p) == "Acrobot.urdf")
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(path)
    plant.Finalize()
    ctx = plant.CreateDefaultContext()
    c = compose(path)
    weld = c.assembly.joint("base_weld")
    assert weld.reference == GROUND and weld.type == "fixed"
    model = c.model
    assert model.nv == plant.num_velocities() == 2
    joints = [plant.GetJointByName(n) for n in model.joint_names if n != "base_weld"]
    perm = np.array([j.velocity_start() for j in joints])
    rng = np.random.default_rng(25)
    for _ in range(3):
        q = rng.uniform(-np.pi, np.pi, model.nq)
        q_drake = np.zeros(plant.num_positions())
        for j in joints:
            q_drake[j.position_start()] = q[model.q_slice(j.name())][0]
        plant.SetPositions(ctx, q_drake)
        M_ref = plant.CalcMassMatrix(ctx)[np.ix_(perm, perm)]
        np.testing.assert_allclose(dynamics.mass_matrix(model, q), M_ref, atol=1e-12 * np.abs(M_ref).max())


def _pybullet_masses(path) -> dict:
    """Link name -> mass of the one model pybullet's ``loadSDF`` reads from ``path`` (base included)."""
    pb = pytest.importorskip("pybullet")
    cid = pb.connect(pb.DIRECT)
    try:
        (body,) = pb.loadSDF(path, physicsClientId=cid)
        masses = {pb.getBodyInfo(body, physicsClientId=cid)[0].decode():
                  pb.getDynamicsInfo(body, -1, physicsClientId=cid)[0]}
        for k in range(pb.getNumJoints(body, physicsClientId=cid)):
            masses[pb.getJointInfo(body, k, physicsClientId=cid)[12].decode()] = \
                pb.getDynamicsInfo(body, k, physicsClientId=cid)[0]
    finally:
        pb.disconnect(cid)
    return masses


@pytest.mark.parametrize("rel", ["gripper/wsg50_one_motor_gripper.sdf", "gripper/wsg50_with_r2d2_gripper.sdf",
                                 "kuka_iiwa/kuka_with_gripper.sdf", "kuka_iiwa/kuka_with_gripper2.sdf"])
def test_pybullet_sdf_worlds_compose_as_pybullet_reads_them(rel):
    """pybullet's SDF worlds: a link named 'world' is a link (the joints naming it hang from it), and
    a mesh ``/meshes/x.stl`` that does not exist is read beside the file, as pybullet does."""
    pybullet_data = pytest.importorskip("pybullet_data")
    path = os.path.join(pybullet_data.getDataPath(), rel)
    masses = _pybullet_masses(path)
    a = compose(path).assembly
    assert set(masses) == set(a.body_names)
    for name, mass in masses.items():
        if name == "world":
            # no <inertial>: SDFormat's default 1 kg (pybullet makes the massless base static)
            assert mass == 0.0 and a.body(name).mass.mass == 1.0
            assert any(j.reference == "world" for j in a.joints)
            continue
        assert a.body(name).mass.mass == pytest.approx(mass, rel=1e-12), name


def test_massless_body_with_joint_above_a_welded_mass_matches_mujoco():
    from test_mujoco_corpora import check_against_mujoco

    check_against_mujoco(str(DATA / "mjcf" / "massless_slide_child.xml"))


@pytest.mark.parametrize("body", [
    '<body><joint axis="1 0 0"/><geom size="0.1"/><body pos="0 0 -1"><joint axis="1 0 0"/></body></body>',
    '<body><joint type="slide" axis="0 0 1"/><body pos="0 0 1"><joint axis="1 0 0"/><geom size="0.1"/></body></body>',
    '<body><joint axis="1 0 0"/><body pos="0 0 1"><inertial pos="0 0 0" mass="1" diaginertia="0 0 0"/></body></body>',
    '<body><joint axis="1 0 0"/><body pos="0 0 1"><inertial pos="0 0 0" mass="1" diaginertia="1e-3 1e-3 0"/>'
    '</body></body>',
], ids=["massless_leaf", "massless_parent_of_jointed_mass", "welded_point_mass", "welded_rod"])
def test_massless_moving_body_is_refused_where_mujoco_refuses_it(body, tmp_path):
    mujoco = pytest.importorskip("mujoco")
    text = f"<mujoco><worldbody>{body}</worldbody></mujoco>"
    with pytest.raises(ValueError, match="mass and inertia of moving bodies"):
        mujoco.MjModel.from_xml_string(text)
    path = tmp_path / "m.xml"
    path.write_text(text)
    with pytest.raises(InputError, match="mass and inertia of moving bodies must be larger than mjMINVAL") as exc:
        compose(path)
    assert exc.value.line == 1


CUBE = ('<mesh name="cube" vertex="-0.1 -0.1 -0.1  0.1 -0.1 -0.1  -0.1 0.1 -0.1  0.1 0.1 -0.1  '
        '-0.1 -0.1 0.1  0.1 -0.1 0.1  -0.1 0.1 0.1  0.1 0.1 0.1"/>')


@pytest.mark.parametrize("geom", ['size="0.05 0"', 'size="0.05 0" mass="0"', 'mesh="cube"', 'mesh="cube" mass="0"'],
                         ids=["explicit", "explicit_massless", "fitted_to_a_cube", "fitted_massless"])
def test_zero_length_capsule_is_refused_as_mujoco_refuses_it(geom, tmp_path):
    """MuJoCo 4 refuses a capsule of zero half-length, written or fitted (``fitaabb``: a cube's
    box gives radius = half-height), massless or not; so do we, at the geom's line."""
    mujoco = pytest.importorskip("mujoco")
    text = (f'<mujoco>\n<compiler fitaabb="true"/><asset>{CUBE}</asset>\n<worldbody><body><joint axis="1 0 0"/>'
            f'<geom size="0.01" pos="0.1 0 0"/>\n<geom type="capsule" {geom}/></body></worldbody></mujoco>\n')
    with pytest.raises(ValueError, match="size 1 must be positive"):
        mujoco.MjModel.from_xml_string(text)
    path = tmp_path / "m.xml"
    path.write_text(text)
    with pytest.raises(InputError, match="capsule' needs 2 positive size") as exc:
        compose(path)
    assert exc.value.line == 4
