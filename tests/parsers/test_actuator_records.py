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
