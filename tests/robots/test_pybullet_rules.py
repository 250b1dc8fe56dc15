"""The reading rules pybullet_data's files asked for, on small files (run without the corpus).

References: MuJoCo refuses the same MJCF text; Pinocchio's floating model of a URDF whose
root link is ``world`` (it floats that massless link, we keep the robot fixed and warn).
"""

import logging

import pytest

from mbcompose import compose
from mbcompose.parsers import InputError

mujoco = pytest.importorskip("mujoco")
pin = pytest.importorskip("pinocchio")

ARM = ('<mujoco><compiler inertiafromgeom="{fromgeom}"/><worldbody><body name="b">'
       '<joint name="shoulder" axis="0 1 0"/><geom size="0.1" mass="1"/>{inertial}</body></worldbody>'
       '{extra}</mujoco>')


def _both_refuse(tmp_path, text, phrase, line):
    path = tmp_path / "m.xml"
    path.write_text(text)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(InputError) as exc:
        compose(str(path))
    assert phrase in str(exc.value) and exc.value.line == line


def test_motor_naming_a_missing_joint_is_refused_with_a_suggestion(tmp_path):
    text = ARM.format(fromgeom="auto", inertial="",
                      extra='\n<actuator><motor joint="shoulderr"/></actuator>')
    _both_refuse(tmp_path, text, "names joint 'shoulderr', which the model does not have "
                                 "(did you mean 'shoulder'?)", 2)


def test_fixed_tendon_naming_a_missing_joint_is_refused(tmp_path):
    text = ARM.format(fromgeom="auto", inertial="",
                      extra='<tendon><fixed name="t">\n<joint joint="elbow" coef="1"/></fixed></tendon>')
    _both_refuse(tmp_path, text, "<joint> names joint 'elbow'", 2)


@pytest.mark.parametrize("fromgeom", ["true", "false"])
def test_inertial_without_pos_is_refused_even_when_geoms_give_the_inertia(tmp_path, fromgeom):
    text = ARM.format(fromgeom=fromgeom, inertial='\n<inertial mass="1" diaginertia="1 1 1"/>', extra="")
    _both_refuse(tmp_path, text, "<inertial> needs attribute 'pos'", 2)


def test_world_root_stays_fixed_with_a_floating_base(tmp_path, caplog):
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r"><link name="world"/>\n<link name="arm"><inertial><mass value="1"/>'
                    '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
                    '<joint name="j" type="continuous"><parent link="world"/><child link="arm"/></joint></robot>')
    floating = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    assert floating.nv == 7                                # Pinocchio floats the massless world link
    with caplog.at_level(logging.WARNING, logger="mbcompose"):
        model = compose(str(path), base="floating").model
    assert model.joint_names == ("j",) and model.nv == pin.buildModelFromUrdf(str(path)).nv == 1
    assert f"{path}:1: the root link 'world' is the fixed world: base='floating' leaves the robot fixed" in caplog.text
