"""The one rule for position limits (:mod:`dynamics.joints`): ``lower``/``upper`` bound the coordinate
of a revolute or prismatic joint and no other.  What each reader, the simulators and the exporters do
with limits written on another type, and what the user is told.

References: MuJoCo and Pinocchio compile the same URDF (a continuous joint gets no limits from
either); a pendulum's free swing (energy: from rest at the top it passes the bottom at
``sqrt(2 g h)``) against the stop of a revolute joint.
"""

import logging
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from mbcompose import compose
from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.simulation import simulate
from mbcompose.graph.model.passive import joint_properties
from mbcompose.parsers import GROUND, Assembly, Body, Joint, Limits, MassProperties, Pose, read_assembly
from mbcompose.parsers.exporters.mjcf import mjcf_element
from mbcompose.parsers.exporters.sdf import sdf_element
from mbcompose.parsers.exporters.urdf import urdf_element

INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'


def pendulum_urdf(jtype: str) -> str:
    """A 1 kg point-like bob 0.5 m from a horizontal axis, held up at the top (the link frame on the
    axis, the bob above it), the joint limited to [-0.5, 0.5] rad as written."""
    return (f'<robot name="p"><link name="base"/>\n<link name="bob"><inertial><origin xyz="0 0 0.5"/>'
            f'<mass value="1"/><inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>\n'
            f'<joint name="swing" type="{jtype}"><parent link="base"/><child link="bob"/><axis xyz="0 1 0"/>\n'
            f'<limit lower="-0.5" upper="0.5" effort="1" velocity="10"/></joint></robot>\n')


@pytest.fixture
def urdfs(tmp_path):
    out = {}
    for jtype in ("revolute", "continuous"):
        out[jtype] = tmp_path / f"{jtype}.urdf"
        out[jtype].write_text(pendulum_urdf(jtype))
    return out


def test_a_continuous_urdf_joint_with_limits_is_read_without_them_and_the_user_is_told(urdfs, caplog):
    with caplog.at_level(logging.WARNING, logger="mbcompose"):
        continuous = read_assembly(urdfs["continuous"]).joint("swing")
    assert (continuous.limits.lower, continuous.limits.upper) == (None, None)
    assert (continuous.limits.effort, continuous.limits.velocity) == (1.0, 10.0)
    assert (f"{urdfs['continuous']}:4: joint 'swing': a continuous joint has no position limits "
            "(only revolute, prismatic joints do); lower/upper ignored") in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mbcompose"):
        revolute = read_assembly(urdfs["revolute"]).joint("swing")
    assert (revolute.limits.lower, revolute.limits.upper) == (-0.5, 0.5) and not caplog.text


def test_mujoco_and_pinocchio_compile_the_same_urdfs_alike(urdfs):
    mujoco = pytest.importorskip("mujoco")
    pin = pytest.importorskip("pinocchio")
    for jtype, path in urdfs.items():
        m = mujoco.MjModel.from_xml_path(str(path))
        assert bool(m.jnt_limited[0]) == JOINTS[jtype].takes_limits
        p = pin.buildModelFromUrdf(str(path))
        bounds_the_angle = p.nq == 1 and np.allclose([p.lowerPositionLimit[0], p.upperPositionLimit[0]], [-0.5, 0.5])
        assert bounds_the_angle == JOINTS[jtype].takes_limits


def test_the_simulators_stop_the_revolute_pendulum_and_let_the_continuous_one_swing_through(urdfs):
    m, g, h, q0 = 1.0, 9.81, 0.5, 0.3
    inertia = m * h * h + 1e-4                      # about the axis: the bob and its own inertia
    for jtype, path in urdfs.items():
        comp = compose(str(path))
        props = comp.joint_properties
        assert np.isfinite([props.lower[0], props.upper[0]]).all() == JOINTS[jtype].takes_limits
        for method in ("adaptive", "rk4"):
            run = simulate(comp.model, [q0], [0.0], 1.0, samples=101, method=method, dt=1e-3, joints=props)
            q, v = run.q[:, 0], run.v[:, 0]
            if JOINTS[jtype].takes_limits:
                assert q.max() == pytest.approx(0.5, abs=1e-9) and run.limit_contacts >= 1
                continue
            assert q.max() > np.pi and run.limit_contacts == 0          # through the bottom, past the limit
            np.testing.assert_allclose(v ** 2, 2 * m * g * h * (np.cos(q0) - np.cos(q)) / inertia, atol=1e-5)


def one_joint_assembly(jtype: str, limits: Limits) -> Assembly:
    """A body on one joint of ``jtype`` to ground, built in code (no reader drops its limits)."""
    body = Body("b", Pose(), MassProperties(1.0, np.zeros(3), 0.01 * np.eye(3)))
    axis2 = np.array([1.0, 0.0, 0.0]) if JOINTS[jtype].has_axis2 else None
    return Assembly("a", (body,), (Joint("j", jtype, GROUND, "b", axis=np.array([0.0, 0.0, 1.0]), axis2=axis2,
                                         limits=limits),))


@pytest.mark.parametrize("jtype", ["continuous", "universal", "cylindrical"])
def test_exporters_write_position_limits_only_where_they_apply_and_say_what_they_left_out(jtype, caplog):
    a = one_joint_assembly(jtype, Limits(-1.0, 1.0, velocity=3.0, effort=2.0))
    with caplog.at_level(logging.WARNING, logger="mbcompose"):
        elements = {"MJCF": mjcf_element(a)}
        if jtype != "cylindrical":                  # SDFormat has no cylindrical joint, URDF neither nor universal
            elements["SDFormat"] = sdf_element(a)
        if jtype == "continuous":
            elements["URDF"] = urdf_element(a)
    for fmt, el in elements.items():
        text = ET.tostring(el, encoding="unicode")
        assert "<lower>" not in text and 'lower="' not in text and 'range="' not in text, (fmt, text)
        assert (f"{fmt} export of a: only revolute, prismatic joints take position limits; left out for "
                f"j ({jtype})") in caplog.text
    if jtype == "continuous":
        assert '<limit effort="2.0" velocity="3.0" />' in ET.tostring(elements["URDF"], encoding="unicode")


def test_a_revolute_joints_limits_are_exported_by_every_writer(caplog):
    a = one_joint_assembly("revolute", Limits(-1.0, 1.0, velocity=3.0, effort=2.0))
    with caplog.at_level(logging.WARNING, logger="mbcompose"):
        texts = [ET.tostring(f(a), encoding="unicode") for f in (mjcf_element, sdf_element, urdf_element)]
    assert 'range="-1.0 1.0"' in texts[0] and "<lower>-1.0</lower>" in texts[1] and 'lower="-1.0"' in texts[2]
    assert "position limits" not in caplog.text


def test_a_tree_joint_built_with_limits_it_cannot_take_is_simulated_without_them_with_a_warning(caplog):
    from mbcompose.graph import analyse
    from mbcompose.graph.model import build_model

    a = one_joint_assembly("continuous", Limits(-1.0, 1.0))
    tree, model = build_model(a, analyse(a))
    with caplog.at_level(logging.WARNING, logger="mbcompose"):
        props = joint_properties(tree, model)
    assert np.isinf(props.lower).all() and np.isinf(props.upper).all()
    assert ("position limits of j (continuous) are not enforced: only revolute, prismatic joints take "
            "position limits") in caplog.text


SDF = """<?xml version="1.0"?>
<sdf version="1.8"><model name="m">
<link name="base"><inertial><mass>1</mass></inertial></link>
<joint name="root" type="fixed"><parent>world</parent><child>base</child></joint>
<link name="wheel"><inertial><mass>1</mass></inertial></link>
<joint name="spin" type="continuous"><parent>base</parent><child>wheel</child>
  <axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper><effort>2</effort></limit></axis></joint>
<link name="head"><inertial><mass>1</mass></inertial></link>
<joint name="u" type="universal"><parent>wheel</parent><child>head</child>
  <axis><xyz>1 0 0</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit></axis>
  <axis2><xyz>0 1 0</xyz></axis2></joint>
</model></sdf>
"""


def test_sdformat_continuous_and_universal_limits_are_dropped_with_a_warning(tmp_path, caplog):
    path = tmp_path / "m.sdf"
    path.write_text(SDF)
    with caplog.at_level(logging.WARNING, logger="mbcompose"):
        a = read_assembly(path)
    for name, line, jtype in (("spin", 7, "continuous"), ("u", 10, "universal")):
        lim = a.joint(name).limits
        assert (lim.lower, lim.upper) == (None, None)
        assert (f"{path}:{line}: joint {name!r}: a {jtype} joint takes no position limits (only revolute, "
                "prismatic, screw joints do); lower/upper ignored") in caplog.text
    assert a.joint("spin").limits.effort == 2.0


def test_an_mjcf_ball_range_is_not_a_position_limit_and_the_user_is_told(tmp_path, caplog):
    path = tmp_path / "ball.xml"
    path.write_text('<mujoco><worldbody><body name="b">\n<joint name="neck" type="ball" range="0 30" limited="true"/>'
                    '<geom size="0.1"/></body></worldbody></mujoco>\n')
    with caplog.at_level(logging.WARNING, logger="mbcompose"):
        lim = read_assembly(path).joint("neck").limits
    assert (lim.lower, lim.upper) == (None, None)
    assert f"{path}:2: joint 'neck': the range of a ball joint (a cone of 0.523599 rad in MuJoCo) is not enforced" \
        in caplog.text
