"""Joint damping and joint limits, per velocity coordinate of a tree model (the graph stage
reads them from the input file: :func:`graph.model.joint_properties`).

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

from dataclasses import dataclass

import numpy as np


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


def damped(torque, damping, nv: int):
    """``torque`` plus viscous joint damping ``-damping * v`` as f(t, q, v) (None when both are zero)."""
    damping = np.zeros(nv) if damping is None else np.asarray(damping, dtype=float)
    if not np.any(damping):
        return torque if torque is None or callable(torque) else (lambda t, q, v: torque)
    if torque is None:
        return lambda t, q, v: -damping * v
    if callable(torque):
        return lambda t, q, v: torque(t, q, v) - damping * v
    return lambda t, q, v: torque - damping * v
