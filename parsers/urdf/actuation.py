"""URDF joint couplings and drives: ``<mimic>`` as couplings, ``<transmission>`` as motors.

Split from :mod:`parsers.urdf.reader` (the reader's tree walk); see its module docstring for the
rules (a mimic of an unknown or non-one-coordinate joint is dropped with a warning; a
non-numeric ``mechanicalReduction`` is 1 with a warning, as Pinocchio ignores transmissions).
"""

from __future__ import annotations

import logging

from mbcompose.dynamics.joints import JOINTS

from ..assembly import Coupling, Motor, Source
from ..errors import InputError
from ..xml import attr_float, first_children, parse_float, required, where
from .joints import URDF_JOINT_TYPES

log = logging.getLogger("mbcompose.parsers.urdf.reader")


def mimic_couplings(t, file) -> list[Coupling]:
    """``<mimic>`` elements of the joints of ``t`` (the reader's link tree, walked in ``t.order``) as couplings (a mimic of an unknown joint, or between joints that are
    not both one-coordinate joints, is dropped with a warning)."""
    couplings = []
    for jname in (t.parent_of[n] for n in t.order[1:]):
        m_el = t.parts[jname].get("mimic")
        if m_el is None:
            continue
        leader = required(m_el, "joint")
        if leader not in t.joints:
            log.warning("%s: joint %r mimics unknown joint %r: coupling dropped (the joint stays "
                        "independent, as in Pinocchio's default parser)", where(m_el), jname, leader)
            continue
        fixed = [n for n in (jname, leader) if not JOINTS[URDF_JOINT_TYPES[t.joints[n].get("type")]].couplable]
        if fixed:
            log.warning("%s: mimic of joint %r: joint %r is %s, so the mimic has no effect (dropped)",
                        where(m_el), jname, fixed[0], t.joints[fixed[0]].get("type"))
            continue
        couplings.append(Coupling(jname, leader, attr_float(m_el, "multiplier", 1.0),
                                  attr_float(m_el, "offset", 0.0), source=Source(file, m_el.sourceline)))
        log.info("%s: joint %r mimics %r (kept as a coupling)", where(m_el), jname, leader)
    return couplings


def transmissions(t_els, joints) -> dict[str, Motor]:
    """The ``<transmission>`` elements ``t_els``: the moving joints they drive, each with its Motor
    (actuator name, mechanicalReduction; a reduction that is not a number is 1, with a warning)."""
    motors = {}
    for t_el in t_els:
        act = first_children(t_el).get("actuator")
        act_name = act.get("name") if act is not None else t_el.get("name", "motor")
        ratio = 1.0
        if act is not None:
            r_el = first_children(act).get("mechanicalReduction")
            if r_el is not None and r_el.text and r_el.text.strip():
                try:
                    ratio = parse_float(r_el.text, r_el, "<mechanicalReduction>")
                except InputError as exc:
                    log.warning("%s: %s: reduction 1 used (a transmission is not dynamics; Pinocchio "
                                "ignores it)", where(r_el), exc.message)
        for j in t_el.iterchildren("joint"):
            jn = j.get("name")
            if jn in joints and joints[jn].get("type") != "fixed":
                motors[jn] = Motor(act_name or jn, None, ratio if ratio != 0 else 1.0, 0.0)
    return motors
