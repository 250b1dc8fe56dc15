"""MJCF ``<actuator>``: which joints are actuated, and through which gear.

As MuJoCo compiles them (XML reference, ``actuator``): an actuator whose transmission is a
joint (``joint`` or ``jointinparent``) marks that joint ``actuated`` with a
:class:`~parsers.assembly.Motor`: its name (``<kind>_<joint>`` when unnamed), its gear
(the first number of ``gear``, MuJoCo's transmission ratio: force on the joint per unit of
actuator force) and its force range.  With several actuators on one joint the first one's
gear is reported.  All actuator kinds (``general``, ``motor``, ``position`` ...) read the
same slot of a default class, as MuJoCo's ``<default>`` has one actuator per class.
"""

from __future__ import annotations

import logging

from ..assembly import Motor
from ..errors import FOREIGN_TEXT
from .compiler import floats_attr

log = logging.getLogger(__name__)
log.addFilter(FOREIGN_TEXT)  # (warnings about a file outside the model folder say where, not what)

#: actuator elements: one default slot for all of them
ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder", "muscle",
                 "adhesion", "dcmotor")


def default_key(tag: str) -> str:
    """The slot of a default class that an element of ``tag`` reads (joint for freejoint, one for actuators)."""
    if tag == "freejoint":
        return "joint"
    return "actuator" if tag in ACTUATOR_TAGS else tag


def read_actuators(reader, root) -> dict[str, Motor]:
    """The motor of each joint an actuator drives, by joint name (``reader.attrs`` resolves classes)."""
    motors = {}
    for act in root.findall("actuator"):
        for c in act:
            a = reader.attrs(c, "main")
            j = a.get("joint", a.get("jointinparent"))
            if j is None:
                continue
            if j in motors:
                log.info("%s:%s: joint %r has several actuators; the first one's gear is reported",
                         reader.file, c.sourceline, j)
                continue
            gear = floats_attr(c, a, "gear", None)
            g = 1.0 if gear is None else float(gear[0])
            fr = floats_attr(c, a, "forcerange", 2)
            eff = None if fr is None else float(max(abs(fr[0]), abs(fr[1])))
            motors[j] = Motor(a.get("name") or f"{c.tag}_{j}", eff, g if g != 0 else 1.0, 0.0)
    return motors
