"""MJCF compiler mass rules and default-class orientations against MuJoCo's compiled model."""

import numpy as np
import pytest

from mbcompose.dynamics.spatial import quat_to_matrix
from mbcompose.parsers.mjcf.reader import read_mjcf

mujoco = pytest.importorskip("mujoco")

MODEL = """<mujoco><compiler COMP/>
  <default><default class="tilted"><geom euler="0 40 0"/></default></default>
  <worldbody>
  <body name="a"><joint/><geom type="box" size="0.3 0.02 0.01" mass="0.001"/>
    <body name="b" pos="0 0 1"><joint axis="1 0 0"/><inertial pos="0 0 0" mass="2" diaginertia="0.1 0.1 0.15"/>
      <body name="c"><geom class="tilted" type="box" size="0.1 0.2 0.3" quat="0.9 0.1 0.3 0.2"/>
        <geom class="tilted" type="capsule" size="0.05 0.2" pos="0.3 0 0"/></body>
      <body name="e" pos="0 1 0"/>
    </body>
    <body name="f" pos="0 0 -1"><joint axis="0 1 0"/><inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.05"/></body>
  </body>
  <body name="s" pos="2 0 0"/>
</worldbody></mujoco>"""

SETTINGS = ['balanceinertia="true"', 'boundmass="0.5" balanceinertia="true"',
            'boundinertia="0.01" balanceinertia="true"', 'settotalmass="10" balanceinertia="true"',
            'boundmass="0.5" boundinertia="0.01" balanceinertia="true" settotalmass="10"']


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("compiler", SETTINGS)
def test_compiler_mass_rules_match_mujoco(compiler):
    text = MODEL.replace("COMP", compiler)
    m = mujoco.MjModel.from_xml_string(text)
    a = read_mjcf("x.xml", text=text)
    for i in range(1, m.nbody):
        b = a.body(m.body(i).name)
        R = quat_to_matrix(m.body_iquat[i])
        assert b.mass.mass == pytest.approx(m.body_mass[i], rel=1e-12, abs=1e-15), b.name
        if m.body_mass[i] > 0:                       # a massless body's centre means nothing
            np.testing.assert_allclose(b.mass.com, m.body_ipos[i], atol=1e-12, err_msg=b.name)
        np.testing.assert_allclose(b.mass.inertia, R @ np.diag(m.body_inertia[i]) @ R.T, atol=1e-12, err_msg=b.name)


def test_unbalanced_inertia_is_balanced_as_mujoco_does():
    text = MODEL.replace("COMP", 'balanceinertia="true"')
    J = read_mjcf("x.xml", text=text).body("f").mass.inertia
    np.testing.assert_allclose(J, np.eye(3) * (0.01 + 0.01 + 0.05) / 3, atol=1e-15)
