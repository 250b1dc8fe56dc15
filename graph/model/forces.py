"""The force elements of the input file that a tree model carries: joint springs and dampers and the
actuators that drive tree joints (seed 004, Fig. 1: two-terminal elements parallel to the joints;
:mod:`dynamics.forces` evaluates them).

Elements the tree cannot carry are reported, naming each, never dropped silently: the spring or
damper of a loop-closing joint, an actuator whose joint the reduction removed, lumped away or
made loop-closing, or that drives a joint of more than one coordinate.
"""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

from mbcompose.dynamics.force_elements import ActuatorSpec, ForceElements, JointSpring
from mbcompose.parsers.assembly import Actuator, Joint

log = logging.getLogger(__name__)


def actuator_spec(a: Actuator) -> ActuatorSpec:
    """The dynamics record of an :class:`parsers.assembly.Actuator` (fixed gain and no bias as affine
    coefficients that are zero beyond the constant; no range as an infinite one)."""
    gain = a.gain if a.gain_type == "affine" else (a.gain[0], 0.0, 0.0)
    bias = a.bias if a.bias_type == "affine" else (0.0, 0.0, 0.0)
    unbounded = (-np.inf, np.inf)
    return ActuatorSpec(a.name, a.joint, a.gear, tuple(gain), tuple(bias), a.ctrlrange or unbounded,
                        a.forcerange or unbounded)


def needs_inertia(tree_joints: Sequence[Joint]) -> bool:
    """True when a joint's spring and damper follow from its inertia (``springdamper``)."""
    return any(j.springdamper is not None for j in tree_joints)


def _spring(j: Joint, inertia: dict | None) -> JointSpring:
    if j.springdamper is None:
        return JointSpring(j.name, j.stiffness, j.damping, j.springref)
    if j.nv != 1:
        raise ValueError(f"joint {j.name!r}: springdamper is for one-coordinate joints")
    tc, dr = j.springdamper
    m = inertia[j.name]
    return JointSpring(j.name, m / (tc * tc * dr * dr), 2.0 * m / tc, j.springref)


def force_elements(tree_joints: Sequence[Joint], chords: Sequence[Joint], actuators: Sequence[Actuator],
                   inertia: dict | None = None) -> ForceElements:
    """The springs and dampers of ``tree_joints`` and the ``actuators`` that drive one of them
    (one coordinate); the others are reported (module docstring).

    inertia : joint name -> the joint's effective inertia ``m = 1 / (M^-1)_ii`` at the reference
        configuration (kg m^2 or kg; MuJoCo's ``1 / dof_invweight0``: the inertia the joint's coordinate
        feels with every other joint free), for the joints with a ``springdamper``; their stiffness and
        damping are MuJoCo's ``m / (timeconst dampratio)^2`` and ``2 m / timeconst`` (XML reference,
        ``joint/springdamper``: the time constant and damping ratio of the joint's own
        mass-spring-damper, as ``solref``)."""
    springs = tuple(_spring(j, inertia) for j in tree_joints if j.stiffness or j.damping or j.springdamper)
    sprung_chords = [j.name for j in chords if j.stiffness]
    if sprung_chords:
        log.warning("springs of loop-closing joints are not applied: %s", ", ".join(sprung_chords))
    by_name = {j.name: j for j in tree_joints}
    kept, skipped = [], []
    for a in actuators:
        joint = by_name.get(a.joint)
        if joint is None or joint.nv != 1 or joint.nq != 1:
            why = "not a joint of the model's tree" if joint is None else f"a {joint.type} joint"
            skipped.append(f"{a.name} (joint {a.joint!r}: {why})")
        else:
            kept.append(actuator_spec(a))
    if skipped:
        log.warning("actuators not applied (they drive one-coordinate tree joints only): %s", "; ".join(skipped))
    return ForceElements(springs, tuple(kept))
