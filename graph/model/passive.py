"""Joint damping and position limits of the input file, per velocity coordinate of the tree model
(:class:`dynamics.simulation.JointProperties`; what the simulators do with them is said there).

Position limits are those of the joint types that take them (``JOINTS[type].takes_limits``:
revolute and prismatic; :mod:`dynamics.joints` says why); a moving joint of another type that
carries some (built in code: the readers drop them) is simulated without them, with a warning."""

from __future__ import annotations

import logging

import numpy as np

from mbcompose.dynamics.joints import JOINTS, joint_types
from mbcompose.dynamics.simulation.passive import JointProperties

from .tree import TreeModel

log = logging.getLogger(__name__)

def coordinate_limits(joint) -> tuple[float, float]:
    """(lower, upper) of a joint's coordinate, -inf / +inf where not given.  The tree keeps the
    coordinate's meaning when it traverses a joint backwards (:mod:`.tree`), so the
    file's limits apply as they are."""
    lo = -np.inf if joint.limits.lower is None else float(joint.limits.lower)
    hi = np.inf if joint.limits.upper is None else float(joint.limits.upper)
    return lo, hi


def joint_properties(tree: TreeModel, model) -> JointProperties:
    """Damping and limits of the tree joints of ``tree`` in the coordinates of ``model`` (its dynamics
    model: the tree itself, or a closed chain built on it)."""
    sko = model.tree_model
    props = JointProperties.none(sko.nv)
    ignored = []
    props.damping[:] = sko.forces.layout["damping"]     # the joints' (springdamper resolved: graph.model.forces)
    for edge in tree.edges:
        joint = edge.joint
        sl = sko.v_slice(joint.name)
        if JOINTS[joint.type].takes_limits:
            props.lower[sl], props.upper[sl] = coordinate_limits(joint)
        elif JOINTS[joint.type].nv and (joint.limits.lower is not None or joint.limits.upper is not None):
            ignored.append(f"{joint.name} ({joint.type})")
    if ignored:
        log.warning("position limits of %s are not enforced: only %s joints take position limits",
                    ", ".join(ignored), ", ".join(joint_types(takes_limits=True)))
    damped_chords = [j.name for j in tree.chords if j.damping]
    if damped_chords:
        log.warning("damping of loop-closing joints is not applied: %s", ", ".join(damped_chords))
    return props

