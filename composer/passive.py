"""Joint damping and joint limits of the input file, per coordinate of the tree model.

What the simulator models (docs/pipeline-format.md says the same):

* viscous damping ``tau = -d v`` on every velocity coordinate of a joint that gives
  ``d`` (URDF ``<dynamics damping>``, MJCF joint ``damping``, SDF
  ``<axis><dynamics><damping>``, the native format's ``damping``), by every integrator,
  trees and closed chains (tree joints; a loop-closing joint's damping is not applied
  and is reported once);
* position limits (``lower``/``upper`` of revolute and prismatic joints that give them)
  as hard inelastic stops on trees: a coordinate reaching a limit stops there (the
  impulse through ``M^-1`` that zeroes its velocity) and is held while the joint
  pushes into the stop.  MuJoCo's default limit is a soft constraint (time constant
  0.02 s, critically damped) that behaves the same within its small penetration.
  Closed chains do not enforce limits (reported once);
* Coulomb friction is not modelled (MJCF ``frictionloss``: one warning; URDF ``friction`` and
  SDF ``friction``: ignored).

Armature (rotor inertia) is part of the dynamics model itself, not of this module.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

#: joint types whose limits are enforced (one coordinate, its rate is its velocity)
LIMITED_TYPES = ("revolute", "prismatic")


@dataclass(frozen=True)
class JointProperties:
    """Passive joint properties in the velocity coordinates of a tree model.

    damping : (nv,) viscous damping, N m s/rad or N s/m.
    lower, upper : (nv,) position limits, rad or m; -inf / +inf where none.
    """

    damping: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def none(cls, nv: int) -> "JointProperties":
        return cls(np.zeros(nv), np.full(nv, -np.inf), np.full(nv, np.inf))

    @property
    def has_limits(self) -> bool:
        return bool(np.isfinite(self.lower).any() or np.isfinite(self.upper).any())

    @property
    def has_damping(self) -> bool:
        return bool(np.any(self.damping != 0.0))


def coordinate_limits(joint) -> tuple[float, float]:
    """(lower, upper) of a joint's coordinate, -inf / +inf where not given.  The tree keeps the
    coordinate's meaning when it traverses a joint backwards (:mod:`composer.tree`), so the
    file's limits apply as they are."""
    lo = -np.inf if joint.limits.lower is None else float(joint.limits.lower)
    hi = np.inf if joint.limits.upper is None else float(joint.limits.upper)
    return lo, hi


def joint_properties(composition) -> JointProperties:
    """Damping and limits of the tree joints of a composition (see the module docstring)."""
    tree = composition.model.tree_model
    props = JointProperties.none(tree.nv)
    for edge in composition.tree.edges:
        joint = edge.joint
        sl = tree.v_slice(joint.name)
        props.damping[sl] = joint.damping
        if joint.type in LIMITED_TYPES:
            props.lower[sl], props.upper[sl] = coordinate_limits(joint)
    closed = composition.model.kind != "tree"
    if closed and props.has_limits:
        log.warning("joint limits are not enforced in closed-chain simulations (joints: %s)",
                    ", ".join(n for n in tree.joint_names if _limited(props, tree, n)))
        unlimited = JointProperties.none(tree.nv)
        props = JointProperties(props.damping, unlimited.lower, unlimited.upper)
    damped_chords = [j.name for j in composition.tree.chords if j.damping]
    if damped_chords:
        log.warning("damping of loop-closing joints is not applied: %s", ", ".join(damped_chords))
    return props


def _limited(props: JointProperties, tree, name: str) -> bool:
    sl = tree.v_slice(name)
    return bool(np.isfinite(props.lower[sl]).any() or np.isfinite(props.upper[sl]).any())
