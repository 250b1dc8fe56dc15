"""The validating constructors of the force-element records: Actuator and the joint spring fields."""

import math

import pytest

from mbcompose.parsers.assembly import Actuator, Assembly, Joint


def test_actuator_checks_its_types_parameters_and_ranges():
    a = Actuator("servo", "j", "position", gear=2, gain_type="fixed", gain=(3, 0, 0), bias_type="affine",
                 bias=(0, -3, -1), ctrlrange=(-1, 1), forcerange=(-math.inf, 4))
    assert a.gear == 2.0 and a.gain == (3.0, 0.0, 0.0) and a.forcerange == (-math.inf, 4.0)
    with pytest.raises(ValueError, match="gain type"):
        Actuator("a", "j", gain_type="muscle")
    with pytest.raises(ValueError, match="ctrlrange"):
        Actuator("a", "j", ctrlrange=(1, -1))
    with pytest.raises(ValueError, match="shape"):
        Actuator("a", "j", gain=(1, 2))
    with pytest.raises(ValueError, match="finite"):
        Actuator("a", "j", gear=math.nan)
    with pytest.raises(TypeError, match="Actuator"):
        Assembly("x", (), (), actuators=("not an actuator",))


def test_joint_spring_fields_are_checked():
    j = Joint("j", "revolute", "ground", "b", stiffness=3, springref=0.5, springdamper=(0.1, 1))
    assert (j.stiffness, j.springref, j.springdamper) == (3.0, 0.5, (0.1, 1.0))
    with pytest.raises(ValueError, match="springdamper"):
        Joint("j", "revolute", "ground", "b", springdamper=(0.1, -1))
    with pytest.raises(ValueError, match="stiffness"):
        Joint("j", "revolute", "ground", "b", stiffness="soft")


def test_actuator_activation_fields_are_checked():
    a = Actuator("f", "j", dyn_type="filterexact", timeconst=0.1, actrange=(-1, 1), actearly=1)
    assert (a.dyn_type, a.timeconst, a.actrange, a.actearly) == ("filterexact", 0.1, (-1.0, 1.0), True)
    assert Actuator("m", "j").dyn_type == "none" and Actuator("m", "j").actrange is None
    with pytest.raises(ValueError, match="dyn type"):
        Actuator("a", "j", dyn_type="muscle")
    with pytest.raises(ValueError, match="actrange"):
        Actuator("a", "j", dyn_type="integrator", actrange=(1, 0))
    with pytest.raises(ValueError, match="timeconst"):
        Actuator("a", "j", dyn_type="filter", timeconst=math.inf)


SHORTCUTS = """<mujoco>
  <default>
    <default class="slow"><general dyntype="filter" dynprm="0.3"/></default>
  </default>
  <worldbody>
    <body name="b">
      <joint name="h" type="hinge" axis="0 1 0"/>
      <geom type="sphere" size="0.1" mass="1"/>
    </body>
  </worldbody>
  <actuator>
    <position name="servo" joint="h" kp="5" timeconst="0.02"/>
    <position name="instant" joint="h" kp="5" timeconst="0"/>
    <intvelocity name="iv" joint="h" kp="3" kv="0.5" actrange="-1 2"/>
    <cylinder name="cyl" joint="h" diameter="0.2" bias="1 2 3" timeconst="0.4"/>
    <damper name="d" joint="h" kv="2" ctrlrange="0 1"/>
    <general name="inherited" class="slow" joint="h"/>
    <motor name="m" class="slow" joint="h"/>
    <muscle name="biceps" joint="h"/>
    <general name="user_dyn" joint="h" dyntype="user"/>
  </actuator>
</mujoco>"""


def test_mjcf_shortcuts_read_mujocos_activation_dynamics_and_muscles_are_refused(tmp_path, caplog):
    import logging

    from mbcompose.parsers.mjcf.reader import read_mjcf

    path = tmp_path / "shortcuts.xml"
    path.write_text(SHORTCUTS)
    with caplog.at_level(logging.WARNING):
        acts = {a.name: a for a in read_mjcf(path).actuators}
    assert (acts["servo"].dyn_type, acts["servo"].timeconst, acts["servo"].bias) == ("filterexact", 0.02, (0, -5, 0))
    assert acts["instant"].dyn_type == "none"
    iv = acts["iv"]
    assert (iv.dyn_type, iv.actrange, iv.gain[0], iv.bias) == ("integrator", (-1.0, 2.0), 3.0, (0.0, -3.0, -0.5))
    cyl = acts["cyl"]
    assert (cyl.dyn_type, cyl.timeconst, cyl.bias_type, cyl.bias) == ("filter", 0.4, "affine", (1.0, 2.0, 3.0))
    assert cyl.gain[0] == pytest.approx(math.pi / 4 * 0.04, rel=1e-15)
    d = acts["d"]
    assert (d.dyn_type, d.gain_type, d.gain, d.bias_type, d.ctrlrange) == ("none", "affine", (0, 0, -2), "none", (0, 1))
    assert (acts["inherited"].dyn_type, acts["inherited"].timeconst) == ("filter", 0.3)
    assert acts["m"].dyn_type == "none"
    assert "biceps" not in acts and "user_dyn" not in acts
    assert f"{path}: actuators not modelled" in caplog.text
    assert "biceps (<muscle> (MuJoCo's muscle force needs the length range" in caplog.text
    assert "at line 19" in caplog.text and "user_dyn (dyntype user" in caplog.text
