"""``base='floating'`` on an MJCF file (issue 27, point 1): each top-level body without joints (not
mocap, with mass, no plane) gets a free joint ``<body>_root_joint``; the reference is MuJoCo's model
of the same file with that ``<freejoint>`` written into it."""

import json
import subprocess
import sys

import pytest

from mbcompose import compose
from mujoco_refs import reference_orientations
from test_mujoco_corpora import assert_tree_matches_mujoco

mujoco = pytest.importorskip("mujoco")

#: an arm mounted on a jointless base, as Menagerie writes its arms, beside static scenery
ARM = """<mujoco model="arm">
  <worldbody>
    <geom name="floor" type="plane" size="2 2 .1"/>
    <body name="base" pos="0.1 -0.2 0.3" euler="0 0 30">
      <geom type="cylinder" size=".06 .05" mass="2"/>
      <body name="link1" pos="0 0 .1">
        <joint name="shoulder" type="hinge" axis="0 0 1" range="-2 2"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03" mass="1"/>
        <body name="link2" pos=".3 0 0">
          <joint name="elbow" type="hinge" axis="0 1 0" range="-2 2"/>
          <geom type="box" size=".1 .02 .02" pos=".1 0 0" mass=".5"/>
        </body>
      </body>
    </body>
    <body name="table" pos="1 0 0"><geom type="plane" size=".5 .5 .1"/></body>
  </worldbody>
</mujoco>
"""


def test_a_floating_base_gives_mujocos_dynamics_of_the_file_with_a_free_joint(tmp_path):
    path = tmp_path / "arm.xml"
    path.write_text(ARM)
    model = compose(path, base="floating").model
    assert model.joint_names[0] == "base_root_joint" and model.nv == 8
    freed = ARM.replace('euler="0 0 30">', 'euler="0 0 30"><freejoint name="base_root_joint"/>')
    m = mujoco.MjModel.from_xml_string(freed)
    assert_tree_matches_mujoco(m, mujoco.MjData(m), model, reference_orientations(m), n=3, rtol=1e-9, seed=3)


def test_fixed_base_is_mujocos_rule_and_the_cli_takes_base_floating(tmp_path):
    path = tmp_path / "arm.xml"
    path.write_text(ARM)
    assert compose(path).model.nv == 2                      # the default: welded, as MuJoCo compiles it
    out = subprocess.run([sys.executable, "-P", "-m", "mbcompose", "inspect", str(path), "--base", "floating",
                          "--format", "json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["dof"] == 8


def test_floating_a_file_whose_roots_all_have_joints_changes_nothing_and_says_so(tmp_path, caplog):
    path = tmp_path / "pendulum.xml"
    path.write_text('<mujoco><worldbody><body name="a"><joint name="j"/><geom type="sphere" size=".1"/>'
                    '</body></worldbody></mujoco>')
    assert compose(path, base="floating").model.nv == 1
    assert "base='floating' changes nothing" in caplog.text
