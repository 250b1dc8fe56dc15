"""Joint limits on closed chains (joint couplings and loops): inelastic stops through the constraints.

A coupled pendulum (a mimic joint with a tighter range than its leader) must stop when the
*dependent* joint reaches its limit, hold there while gravity pushes into it, and move exactly as
the unlimited system before the impact; example-robot-data's panda (mimic fingers) keeps every joint
in its range."""

from __future__ import annotations

import os
import sysconfig

import numpy as np
import pytest

from mbcompose import compose
from mbcompose.dynamics.simulation import JointProperties, simulate
from mbcompose.graph.model import joint_properties

TWO_BARS = """<robot name="coupled">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.25 0 0"/><mass value="1"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.2 0 0"/><mass value="0.5"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="leader" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.5" effort="1" velocity="1"/></joint>
  <joint name="follower" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.5 0 0"/>
    <axis xyz="0 1 0"/><mimic joint="leader" multiplier="0.5"/>
    <limit lower="-0.2" upper="0.2" effort="1" velocity="1"/></joint>
</robot>
"""


def _run(path, duration, limited=True, samples=401):
    c = compose(path)
    props = joint_properties(c.tree, c.model)
    if not limited:
        props = JointProperties(props.damping, np.full_like(props.lower, -np.inf), np.full_like(props.upper, np.inf))
    tree = c.model.tree_model
    return c.model, props, simulate(c.model, tree.neutral(), np.zeros(tree.nv), duration, samples=samples,
                                    joints=props)


def test_a_dependent_joint_stops_the_coupled_chain(tmp_path):
    path = tmp_path / "coupled.urdf"
    path.write_text(TWO_BARS)
    model, props, limited = _run(path, 1.0)
    _, _, free = _run(path, 1.0, limited=False)
    assert model.kind == "embedded"
    tree = model.tree_model
    leader, follower = tree.q_slice("leader").start, tree.q_slice("follower").start
    # the bars fall from horizontal (gravity about +y turns them to positive angles): the follower, at half
    # the leader's angle, reaches its 0.2 limit when the leader is at 0.4
    assert free.q[-1, follower] > 0.2
    np.testing.assert_allclose(free.q[:, follower], 0.5 * free.q[:, leader], atol=1e-9)
    assert limited.q[:, follower].max() <= 0.2 + 1e-9
    hit = int(np.argmax(free.q[:, follower] > 0.2))
    np.testing.assert_allclose(limited.q[:hit], free.q[:hit], atol=1e-8)
    after = limited.t > limited.t[hit] + 0.01
    np.testing.assert_allclose(limited.q[after, follower], 0.2, atol=1e-9)
    np.testing.assert_allclose(limited.q[after, leader], 0.4, atol=1e-9)
    np.testing.assert_allclose(limited.v[after], 0.0, atol=1e-9)
    assert limited.limit_contacts >= 1


ERD = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots")
PANDA = os.path.join(ERD, "panda_description", "urdf", "panda.urdf")


@pytest.mark.skipif(not os.path.isfile(PANDA), reason=f"example-robot-data's panda not at {PANDA}")
def test_panda_with_mimic_fingers_keeps_its_limits():
    model, props, result = _run(PANDA, 0.4, samples=81)
    assert model.kind == "embedded"
    lower, upper = props.lower, props.upper
    tree = model.tree_model
    for name in tree.joint_names:
        qs, vs = tree.q_slice(name), tree.v_slice(name)
        assert np.all(result.q[:, qs] >= lower[vs] - 1e-9), name
        assert np.all(result.q[:, qs] <= upper[vs] + 1e-9), name
    assert result.limit_contacts > 0
    assert np.max(result.closure) < 1e-9
