"""MJCF tendons (issue 26): fixed tendons ``L = sum coef q`` and spatial tendons through sites, their
springs (``stiffness``, ``springlength`` as one length, a dead band, or MuJoCo's default: the length at
``qpos_spring``) and dampers, and actuators with ``tendon=``: our ``passive_forces`` and
``actuator_forces`` equal MuJoCo's ``qfrc_spring + qfrc_damper`` and ``qfrc_actuator`` to 1e-9 at random
states and controls (hinges, slides, a ball and a free body carrying sites); the MJCF export keeps the
tendons (MuJoCo on the export gives the same forces); a spatial tendon that wraps around a geom is refused
with its file, line and the geom, its spring and actuator not applied.  The installed gymnasium and
dm_control models with tendons are in test_mujoco_forces.py (every model, tendons included) and
test_force_exports.py (their exports)."""

import logging

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.parsers.mjcf.reader import read_mjcf
from test_force_exports import check_mjcf_export_forces
from test_mujoco_forces import check_forces

mujoco = pytest.importorskip("mujoco")

TENDONS = """<mujoco>
  <compiler angle="radian"/>
  <default>
    <default class="soft"><tendon stiffness="4" damping="0.3"/></default>
  </default>
  <worldbody>
    <site name="anchor" pos="0.4 0.2 0.6"/>
    <body name="a" pos="0 0 0.5">
      <joint name="h1" type="hinge" axis="0 1 0" ref="0.2" springref="0.4"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0.5 0 0" mass="1"/>
      <site name="s_a" pos="0.3 0.05 0"/>
      <body name="b" pos="0.5 0 0">
        <joint name="h2" type="hinge" axis="0 0 1" springref="-0.3"/>
        <geom type="capsule" size="0.04" fromto="0 0 0 0.4 0 0" mass="0.7"/>
        <site name="s_b1" pos="0.1 0.03 0.02"/>
        <site name="s_b2" pos="0.35 -0.02 0"/>
        <body name="c" pos="0.4 0 0">
          <joint name="sl" type="slide" axis="1 0 0"/>
          <geom type="box" size="0.05 0.05 0.05" mass="0.4"/>
          <body name="d" pos="0.1 0 0">
            <joint name="ball" type="ball"/>
            <geom type="sphere" size="0.05" pos="0.1 0 0" mass="0.3"/>
            <site name="s_d" pos="0.15 0.02 0.01"/>
          </body>
        </body>
      </body>
    </body>
    <body name="f" pos="-0.5 0.3 1" euler="0.1 0.2 0.3">
      <freejoint name="free"/>
      <geom type="box" size="0.1 0.05 0.03" mass="0.5"/>
      <site name="s_f" pos="0.1 0 0.03"/>
    </body>
  </worldbody>
  <tendon>
    <fixed name="coupled" stiffness="3" damping="0.2" springlength="0.1 0.5">
      <joint joint="h1" coef="1"/>
      <joint joint="h2" coef="-0.5"/>
      <joint joint="sl" coef="2"/>
    </fixed>
    <fixed name="driven_only"><joint joint="h2" coef="1.5"/><joint joint="sl" coef="-1"/></fixed>
    <spatial name="rope" class="soft">
      <site site="anchor"/><site site="s_a"/><site site="s_b1"/><site site="s_b2"/><site site="s_d"/>
    </spatial>
    <spatial name="to_free" stiffness="2" damping="0.1" springlength="0.3">
      <site site="s_d"/><site site="s_f"/>
    </spatial>
    <spatial name="pulled"><site site="anchor"/><site site="s_b2"/></spatial>
  </tendon>
  <actuator>
    <general name="g" tendon="driven_only" gainprm="2 0.3 0.1" gaintype="affine" biasprm="0.1 -1 -0.2" biastype="affine" ctrlrange="-1 1"/>
    <position name="p" tendon="pulled" kp="5" kv="0.5"/>
    <motor name="m" tendon="coupled" gear="1.5" forcerange="-2 2"/>
    <motor name="mh" joint="h1" gear="2"/>
  </actuator>
</mujoco>"""

WRAPPING = """<mujoco>
  <worldbody>
    <site name="top" pos="0 0 1"/>
    <body name="a">
      <joint name="h" type="hinge" axis="0 1 0"/>
      <geom name="drum" type="cylinder" size="0.1 0.05" euler="90 0 0" mass="1"/>
      <site name="tip" pos="0.5 0 0"/>
      <site name="side" pos="0 0 0.3"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="wrapped" stiffness="5">
      <site site="top"/><geom geom="drum" sidesite="side"/><site site="tip"/>
    </spatial>
  </tendon>
  <actuator><motor name="pull" tendon="wrapped"/></actuator>
</mujoco>"""


def test_fixed_and_spatial_tendons_springs_dampers_and_actuators_match_mujoco(tmp_path):
    path = tmp_path / "tendons.xml"
    path.write_text(TENDONS)
    m, ours = check_forces(path, n=8)
    assert ours.actuator_names == ("g", "p", "m", "mh")
    assert {t.name for t in read_mjcf(path).forces} == {"coupled", "driven_only", "rope", "to_free", "pulled"}


def test_default_spring_length_is_the_length_at_the_joints_springref(tmp_path):
    path = tmp_path / "tendons.xml"
    path.write_text(TENDONS)
    m = mujoco.MjModel.from_xml_path(str(path))
    model = compose(path).model
    rope = next(t for t in model.tree_model.forces.layout["tendons"] if t.name == "rope")
    k = m.tendon("rope").id
    np.testing.assert_allclose([rope.lower, rope.upper], m.tendon_lengthspring[k], rtol=0, atol=1e-12)


def test_mjcf_export_keeps_the_tendons_and_their_actuators(tmp_path):
    path = tmp_path / "tendons.xml"
    path.write_text(TENDONS)
    check_mjcf_export_forces(path, tmp_path / "export.xml", n=6)
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "export.xml"))
    assert {m.tendon(k).name for k in range(m.ntendon)} == {"coupled", "driven_only", "rope", "to_free", "pulled"}


def test_wrapping_spatial_tendon_is_refused_with_file_line_and_geom(tmp_path, caplog):
    path = tmp_path / "wrapping.xml"
    path.write_text(WRAPPING)
    with caplog.at_level(logging.WARNING):
        model = compose(path).model
    text = caplog.text
    assert f"{path}: spatial tendons that wrap" in text and "'wrapped' (line 12: <geom drum> at line 13)" in text
    assert "pull (tendon transmission: the tendon is not supported)" in text
    assert model.actuator_names == ()
    np.testing.assert_array_equal(dynamics.passive_forces(model, model.neutral() + 0.3, np.ones(1)), [0.0])


def test_tendons_are_force_edges_of_the_system_graphs(tmp_path):
    path = tmp_path / "tendons.xml"
    path.write_text(TENDONS)
    analysis = compose(path).analysis
    for graph in (analysis.extended, analysis.reduced):
        forces = {e.subject for e in graph.elements if e.kind == "force"}
        # a fixed tendon acts on each joint it spans; a spatial one along each segment between two bodies
        assert forces == {"coupled:h1", "coupled:h2", "coupled:sl", "driven_only:h2", "driven_only:sl", "pulled[0]",
                          "rope[0]", "rope[1]", "rope[3]", "to_free[0]"}
