"""The force elements of the input file that a tree model carries: joint springs and dampers, the
actuators that drive tree joints, and the native format's ``forces:`` elements (joint spring-dampers
and friction, spring-dampers between body points, point loads) with their bodies resolved to the
model's (a part lumped into a composite acts on the composite) (seed 004, Fig. 1: two-terminal
elements; :mod:`dynamics.forces` evaluates them).

Elements the tree cannot carry are reported, naming each, never dropped silently: the spring or
damper of a loop-closing joint, an actuator whose joint the reduction removed, lumped away or
made loop-closing, or that drives a joint of more than one coordinate.
"""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

from mbcompose.dynamics.force_elements import (ActuatorSpec, DCMotorSpec, ForceElements, JointForce, JointSpring,
                                               PointLoad, PointSpring, TendonSpec)
from mbcompose.parsers.assembly import GROUND, Actuator, DCMotor, Joint, JointForceElement, SpringDamper, Tendon
from mbcompose.parsers.assembly import PointLoad as PointLoadRecord

log = logging.getLogger(__name__)


def actuator_spec(a: Actuator) -> ActuatorSpec:
    """The dynamics record of an :class:`parsers.assembly.Actuator` (fixed gain and no bias as affine
    coefficients that are zero beyond the constant; no range as an infinite one; the activation
    dynamics as they are)."""
    gain = a.gain if a.gain_type == "affine" else (a.gain[0], 0.0, 0.0)
    bias = a.bias if a.bias_type == "affine" else (0.0, 0.0, 0.0)
    unbounded = (-np.inf, np.inf)
    return ActuatorSpec(a.name, a.joint, a.gear, tuple(gain), tuple(bias), a.ctrlrange or unbounded,
                        a.forcerange or unbounded, a.tendon, a.dyn_type, a.timeconst, a.actrange or unbounded,
                        a.actearly)


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


def element_specs(records, tree_joints: Sequence[Joint], owner: dict[str, str]) -> tuple:
    """The dynamics records of the Assembly's ``forces`` and ``springs`` records; ``owner`` maps each
    part to the model body it belongs to.  A joint element on a joint that is not a tree joint (loop
    closing, removed by the reduction) is reported, naming it, and left out."""
    tree = {j.name for j in tree_joints}
    out, skipped = [], []
    body = lambda name: None if name == GROUND else owner[name]
    for r in records:
        if isinstance(r, (JointForceElement, DCMotor)) and r.joint not in tree:
            skipped.append(f"{r.name} (joint {r.joint!r})")
        elif isinstance(r, JointForceElement):
            out.append(JointForce(r.name, r.joint, r.stiffness, r.damping, r.rest, r.friction, r.friction_velocity))
        elif isinstance(r, DCMotor):
            out.append(DCMotorSpec(r.name, r.joint, r.resistance, r.inductance, r.torque_constant,
                                   r.back_emf_constant, r.gear_ratio, r.efficiency))
        elif isinstance(r, SpringDamper):
            if body(r.body_a) == body(r.body_b):
                skipped.append(f"{r.name} (both ends on {body(r.body_a)!r})")
                continue
            out.append(PointSpring(r.name, body(r.body_a), tuple(r.point_a), body(r.body_b), tuple(r.point_b),
                                   r.stiffness, r.damping, r.rest_length or 0.0))
        elif isinstance(r, PointLoadRecord):
            out.append(PointLoad(r.name, body(r.body), tuple(r.point), tuple(r.force), tuple(r.torque)))
        elif isinstance(r, Tendon):
            outside = [j for j, _ in r.joints if j not in tree]
            if outside:
                skipped.append(f"{r.name} (joints {', '.join(map(repr, outside))})")
                continue
            springref = tuple((j.name, j.springref) for j in tree_joints if j.springref and j.nq == 1)
            out.append(TendonSpec(r.name, r.joints, tuple((body(b), tuple(p)) for b, p in r.sites), r.stiffness,
                                  r.damping, r.springlength, springref))
    if skipped:
        log.warning("force elements not applied (on a joint outside the spanning tree, or inside one rigid "
                    "composite): %s", "; ".join(skipped))
    return tuple(out)


def rotor_armature(records) -> dict[str, float]:
    """Joint name -> the reflected rotor inertia ``gear_ratio^2 rotor_inertia`` of its DC motors (kg m^2,
    or kg on a prismatic joint), added to the joint's armature."""
    out: dict[str, float] = {}
    for r in records:
        if isinstance(r, DCMotor) and r.rotor_inertia:
            out[r.joint] = out.get(r.joint, 0.0) + r.gear_ratio ** 2 * r.rotor_inertia
    return out


def force_elements(tree_joints: Sequence[Joint], chords: Sequence[Joint], actuators: Sequence[Actuator],
                   inertia: dict | None = None, elements: tuple = ()) -> ForceElements:
    """The springs and dampers of ``tree_joints`` and the ``actuators`` that drive one of them
    (one coordinate); the others are reported (module docstring).

    inertia : joint name -> the joint's effective inertia ``m = 1 / (M^-1)_ii`` at the reference
        configuration (kg m^2 or kg; MuJoCo's ``1 / dof_invweight0``: the inertia the joint's coordinate
        feels with every other joint free), for the joints with a ``springdamper``; their stiffness and
        damping are MuJoCo's ``m / (timeconst dampratio)^2`` and ``2 m / timeconst`` (XML reference,
        ``joint/springdamper``: the time constant and damping ratio of the joint's own
        mass-spring-damper, as ``solref``).
    elements : the dynamics records of the ``forces:`` elements (:func:`element_specs`)."""
    springs = tuple(_spring(j, inertia) for j in tree_joints if j.stiffness or j.damping or j.springdamper)
    sprung_chords = [j.name for j in chords if j.stiffness]
    if sprung_chords:
        log.warning("springs of loop-closing joints are not applied: %s", ", ".join(sprung_chords))
    by_name = {j.name: j for j in tree_joints}
    tendons = {e.name for e in elements if isinstance(e, TendonSpec)}
    kept, skipped = [], []
    for a in actuators:
        if a.tendon is not None:
            if a.tendon in tendons:
                kept.append(actuator_spec(a))
            else:
                skipped.append(f"{a.name} (tendon {a.tendon!r}: not applied)")
            continue
        joint = by_name.get(a.joint)
        if joint is None or joint.nv != 1 or joint.nq != 1:
            why = "not a joint of the model's tree" if joint is None else f"a {joint.type} joint"
            skipped.append(f"{a.name} (joint {a.joint!r}: {why})")
        else:
            kept.append(actuator_spec(a))
    if skipped:
        log.warning("actuators not applied (they drive one-coordinate tree joints and tendons only): %s",
                    "; ".join(skipped))
    return ForceElements(springs, tuple(kept), elements)
