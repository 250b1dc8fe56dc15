"""Regression: a link with zero mass but a rotational inertia keeps it when lumped (issue 13).

Reference: Pinocchio, which adds a massless link's inertia to the body it is
welded to (and keeps it on a moving massless link).  Before the fix
``parsers.massprops.combine`` dropped such parts and ``graph.composites`` zeroed
a massless composite's inertia (bolt: 1.4e-4 relative error in M).
"""

import glob
import os
import sysconfig

import numpy as np
import pytest

from mbcompose import compose
from mbcompose.parsers.assembly import MassProperties
from mbcompose.parsers.massprops import combine
from robot_refs import assert_matches_pinocchio

pin = pytest.importorskip("pinocchio")

SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")

URDF = """<robot name="rotor_arm">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="rotor"><inertial><origin xyz="0.1 0.05 0" rpy="0.3 0.2 0.1"/><mass value="0"/>
    <inertia ixx="0.004" ixy="0.001" ixz="0" iyy="0.003" iyz="0" izz="0.005"/></inertial></link>
  <link name="spinner"><inertial><mass value="0"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.003"/></inertial></link>
  <link name="tip"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="weld" type="fixed"><parent link="arm"/><child link="rotor"/><origin xyz="0.3 0 0"/></joint>
  <joint name="spin" type="continuous"><parent link="arm"/><child link="spinner"/>
    <origin xyz="0.4 0 0" rpy="0 0.4 0"/><axis xyz="0 0 1"/></joint>
  <joint name="elbow" type="revolute"><parent link="spinner"/><child link="tip"/>
    <origin xyz="0.1 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>
"""


def test_combine_keeps_the_inertia_of_a_massless_part():
    J = np.diag([1.0, 2.0, 3.0])
    heavy = MassProperties(2.0, [1.0, 0.0, 0.0], np.eye(3))
    merged = combine([heavy, MassProperties(0.0, [5.0, 5.0, 5.0], J)])
    assert merged.mass == 2.0
    np.testing.assert_allclose(merged.com, [1.0, 0.0, 0.0])
    np.testing.assert_allclose(merged.inertia, np.eye(3) + J)   # no parallel-axis term without mass
    only = combine([MassProperties(0.0, np.zeros(3), J)])
    assert only.mass == 0.0
    np.testing.assert_allclose(only.inertia, J)


def test_massless_rotor_inertia_matches_pinocchio(tmp_path):
    path = tmp_path / "rotor_arm.urdf"
    path.write_text(URDF)
    ours = compose(str(path)).model
    assert_matches_pinocchio(pin.buildModelFromUrdf(str(path)), ours)


BOLT = glob.glob(os.path.join(SHARE, "example-robot-data", "robots", "bolt_description", "robots", "bolt.urdf"))


@pytest.mark.skipif(not BOLT, reason="example-robot-data's bolt not installed")
def test_bolt_mass_matrix_matches_pinocchio():
    ours = compose(BOLT[0], package_dirs=[SHARE]).model
    assert_matches_pinocchio(pin.buildModelFromUrdf(BOLT[0]), ours)
