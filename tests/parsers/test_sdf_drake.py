"""SDFormat files read by us and by Drake (libsdformat): placements, M(q) and inverse dynamics.

Drake parses nested models, ``<include>`` (through its package map), frames,
``placement_frame``, degrees and quaternions, and the screw joint, independently
of our reader.  Drake's resolver needs ``model://NAME/`` with a trailing slash;
ours reads both spellings.  Gearbox joints are not in Drake: their reference is
Pinocchio (test_sdf_couplings.py).
"""

from pathlib import Path

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.dynamics import embedding
from mbcompose.parsers.sdf.reader import read_sdf

pytest.importorskip("pydrake")
from pydrake.multibody.parsing import Parser  # noqa: E402
from pydrake.multibody.plant import MultibodyPlant  # noqa: E402
from pydrake.multibody.tree import BodyIndex, MultibodyForces  # noqa: E402

SDF = Path(__file__).resolve().parents[1] / "data" / "sdf"
MODELS = SDF / "models"


def drake_plant(text):
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    for name in ("two_link_arm", "sun"):
        parser.package_map().Add(name, str(MODELS / name))
    parser.AddModelsFromString(text, "sdf")
    plant.Finalize()
    return plant


def scoped_name(plant, element, top):
    """Drake's model instance and element name as our scoped name (``top::`` dropped)."""
    name = f"{plant.GetModelInstanceName(element.model_instance())}::{element.name()}"
    return name[len(top) + 2:] if name.startswith(top + "::") else name


def drake_joint(plant, name):
    """Drake's joint for our ``name``: Drake puts a joint of model ``robot`` in its child's model instance."""
    scope, _, short = name.rpartition("::")
    for j in map(plant.get_joint, plant.GetJointIndices()):
        instance = plant.GetModelInstanceName(j.model_instance())
        if j.name() == short and (instance == f"robot::{scope}" if scope else instance.startswith("robot")):
            return j
    raise KeyError(name)


def workshop(tmp_path, edit=lambda t: t):
    text = edit((SDF / "workshop.sdf").read_text()).replace("model://two_link_arm<", "model://two_link_arm/<")
    text = text.replace("model://sun<", "model://sun/<")
    path = tmp_path / "workshop.sdf"
    path.write_text(text)
    return path, text


def assert_same_dynamics(plant, ours, names, rng, reduce=None):
    """M and inverse dynamics (gravity included) of ``ours`` in Drake's coordinates ``names``."""
    ctx = plant.CreateDefaultContext()
    joints = [drake_joint(plant, n) for n in names]
    for _ in range(3):
        q, v, a = rng.uniform(-1, 1, len(names)), rng.normal(size=len(names)), rng.normal(size=len(names))
        qd, vd, ad = (np.zeros(plant.num_positions()) for _ in range(3))
        for k, j in enumerate(joints):
            qd[j.position_start()], vd[j.velocity_start()], ad[j.velocity_start()] = q[k], v[k], a[k]
        plant.SetPositions(ctx, qd)
        plant.SetVelocities(ctx, vd)
        idx = [j.velocity_start() for j in joints]
        M = plant.CalcMassMatrix(ctx)[np.ix_(idx, idx)]
        tau = (plant.CalcInverseDynamics(ctx, ad, MultibodyForces(plant))
               - plant.CalcGravityGeneralizedForces(ctx))[idx]
        qo, vo, ao, perm = reduce(q, v, a) if reduce else _ours_state(ours, names, q, v, a)
        Mo = dynamics.mass_matrix(ours, qo)
        rows = perm if Mo.shape[0] == ours.nv else [list(ours.independent).index(n) for n in names]
        np.testing.assert_allclose(Mo[np.ix_(rows, rows)], M, atol=1e-12)
        np.testing.assert_allclose(dynamics.inverse_dynamics(ours, qo, vo, ao)[perm], tau, atol=1e-11)


def _ours_state(ours, names, q, v, a):
    perm = [ours.v_slice(n).start for n in names]
    qo, vo, ao = np.zeros(ours.nq), np.zeros(ours.nv), np.zeros(ours.nv)
    qo[perm], vo[perm], ao[perm] = q, v, a
    return qo, vo, ao, perm


SENSOR = """      <frame name="pitch_frame" attached_to="pitch"><pose degrees="true">0 0.01 0.02 0 30 0</pose></frame>
      <link name="sensor">
        <pose relative_to="pitch_frame">0.01 0 0 0 0 0</pose>
        <inertial><pose>0 0 0.01 0 0 0</pose><mass>0.1</mass>
          <inertia><ixx>0.0001</ixx><iyy>0.0002</iyy><izz>0.0003</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia>
        </inertial>
      </link>
      <joint name="sensor_mount" type="fixed"><parent>pitch_frame</parent><child>sensor</child></joint>
"""


@pytest.mark.parametrize("edit", [
    lambda t: t,
    lambda t: t.replace("<name>arm</name>", "<name>arm</name><placement_frame>tip</placement_frame>"),
    lambda t: t.replace('<pose relative_to="mount"/>', '<pose relative_to="mount" rotation_format="quat_xyzw">'
                        '0.01 0.02 0.03 0.5 0.5 0.5 0.5</pose>'),
    lambda t: t.replace("<child>shoulder::housing</child>", "<child>shoulder</child>"),
    lambda t: t.replace("    </model>\n  </world>", SENSOR + "    </model>\n  </world>"),
], ids=["as_written", "placement_frame", "quaternion", "child_is_a_model_frame", "frame_attached_to_a_joint"])
def test_nested_and_included_models_match_drake(edit, tmp_path):
    """As written, with the included arm placed by its frame 'tip', with the shoulder placed by a
    quaternion, and with the yaw joint's child given as the shoulder model (its canonical link, the
    joint frame at the model frame)."""
    path, text = workshop(tmp_path, edit)
    plant = drake_plant(text)
    ctx = plant.CreateDefaultContext()
    a = read_sdf(path, model="robot", model_paths=[MODELS])
    for b in range(plant.num_bodies()):
        body = plant.get_body(BodyIndex(b))
        name = scoped_name(plant, body, "robot")
        if name in ("DefaultModelInstance::world", "ground_plane::plane") or name.startswith("WorldModelInstance"):
            continue
        X = plant.EvalBodyPoseInWorld(ctx, body)
        np.testing.assert_allclose(a.body(name).pose.translation, X.translation(), atol=1e-12, err_msg=name)
        np.testing.assert_allclose(a.body(name).pose.rotation, X.rotation().matrix(), atol=1e-12, err_msg=name)
        assert a.body(name).mass.mass == pytest.approx(body.default_mass(), rel=1e-15)
    for name in ("yaw", "pitch", "arm::elbow", "arm::tool_weld"):
        X = drake_joint(plant, name).frame_on_child().CalcPoseInWorld(ctx)
        np.testing.assert_allclose(a.joint(name).origin, X.translation(), atol=1e-12, err_msg=name)
    ours = compose(path, model="robot", model_paths=[str(MODELS)]).model
    assert_same_dynamics(plant, ours, ["yaw", "pitch", "arm::elbow"], np.random.default_rng(3))


SCREW = """<?xml version="1.0"?>
<sdf version="1.10"><model name="robot">
  <link name="base"><inertial><mass>2</mass></inertial></link>
  <joint name="anchor" type="fixed"><parent>world</parent><child>base</child></joint>
  <link name="nut"><pose degrees="true">0.1 0 0.3 10 20 30</pose>
    <inertial><pose>0.01 0.02 0.03 0 0 0</pose><mass>0.5</mass>
      <inertia><ixx>0.002</ixx><iyy>0.003</iyy><izz>0.004</izz><ixy>0.0001</ixy><ixz>0.0002</ixz><iyz>0</iyz></inertia>
    </inertial></link>
  <joint name="lead" type="screw"><parent>base</parent><child>nut</child>
    <axis><xyz>0.2 0.3 1</xyz></axis><screw_thread_pitch>PITCH</screw_thread_pitch></joint>
</model></sdf>"""


@pytest.mark.parametrize("pitch", [0.02, -0.5])
def test_screw_joint_matches_drakes_screw_joint(pitch, tmp_path):
    text = SCREW.replace("PITCH", repr(pitch))
    path = tmp_path / "screw.sdf"
    path.write_text(text)
    plant = drake_plant(text)
    assert plant.num_positions() == 1
    ours = compose(path).model
    assert ours.independent == ("lead",)

    def reduce(q, v, a):           # our screw: (translation, rotation), the translation coupled
        qo = embedding.complete_configuration(ours, q_ind={"lead": q[0]})
        vo = embedding.complete_velocity(ours, qo, v)
        ao = np.zeros(ours.nv)
        ao[ours.v_slice("lead")] = a
        ao[ours.v_slice("lead_translation")] = pitch / (2 * np.pi) * a
        return qo, vo, ao, [ours.v_slice("lead").start]
    assert_same_dynamics(plant, ours, ["lead"], np.random.default_rng(11), reduce)
    # our SDF export writes the screw back whole: Drake reads it to the same dynamics
    from mbcompose.parsers.exporters.sdf import write_sdf

    out = write_sdf(read_sdf(path), tmp_path / "back.sdf")
    assert_same_dynamics(drake_plant(out.read_text()), ours, ["lead"], np.random.default_rng(12), reduce)
