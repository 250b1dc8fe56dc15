"""What ``mbcompose inspect`` tables show (issue 27, point 9): joints in the order the file writes
them, the ``* actuated`` legend only where a row is starred, counts in words.  The reference order
is the file's own, read with the standard library's XML parser (not ours)."""

import json
import os
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET

import pytest

SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
UR5 = os.path.join(SHARE, "example-robot-data", "robots", "ur_description", "urdf", "ur5_robot.urdf")


def inspect(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", "-m", "mbcompose", "inspect", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.skipif(not os.path.exists(UR5), reason="example-robot-data is not installed")
def test_reduced_joints_of_the_ur5_are_in_the_files_order():
    moving = [j.get("name") for j in ET.parse(UR5).getroot().findall("joint") if j.get("type") != "fixed"]
    out = inspect(UR5)
    assert out.returncode == 0, out.stderr
    table = out.stdout.split("Reduced joints")[1].split("\n\n")[0]
    rows = [line.split() for line in table.splitlines()[3:] if line and not line.startswith("(")]
    assert [row[-1] for row in rows if row[0] != "FIXED"] == moving


def test_no_actuated_legend_without_a_starred_joint_and_counts_in_words(tmp_path):
    path = tmp_path / "one.xml"
    path.write_text('<mujoco><worldbody><body name="a"><joint name="j"/><geom type="sphere" size=".1"/>'
                    '</body></worldbody></mujoco>')
    out = inspect(str(path))
    assert out.returncode == 0, out.stderr
    assert "* actuated" not in out.stdout and "1 body, 1 joint," in out.stdout
    assert "(none (" not in out.stdout
    starred = tmp_path / "motor.xml"
    starred.write_text(path.read_text().replace("</mujoco>", '<actuator><motor joint="j"/></actuator></mujoco>'))
    out = inspect(str(starred))
    assert "REVOLUTE*" in out.stdout and "* actuated" in out.stdout
    assert json.loads(inspect(str(starred), "--format", "json").stdout)["reduced_joints"][0]["actuated"]
