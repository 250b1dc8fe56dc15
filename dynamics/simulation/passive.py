"""Joint damping and joint limits, per velocity coordinate of a tree model (the graph stage
reads them from the input file: :func:`graph.model.joint_properties`).

What the simulator models (docs/pipeline-format.md says the same):

* viscous damping ``tau = -d v`` on every velocity coordinate of a joint that gives
  ``d`` (URDF ``<dynamics damping>``, MJCF joint ``damping``, SDF
  ``<axis><dynamics><damping>``, the native format's ``damping``), by every integrator,
  trees and closed chains (tree joints; a loop-closing joint's damping is not applied
  and is reported once);
* position limits (``lower``/``upper`` of revolute and prismatic joints that give them)
  as hard inelastic stops: a coordinate reaching a limit stops there (the
  impulse through ``M^-1`` that zeroes its velocity; on a closed chain through the
  constraints, :mod:`.stops`) and is held while the joint pushes into the stop.  MuJoCo's
  default limit is a soft constraint (time constant 0.02 s, critically damped) that behaves
  the same within its small penetration.  The fixed-step closed-chain simulator does not
  enforce limits (reported once);
* joint springs ``-stiffness (q - springref)`` and actuators at constant controls (MuJoCo's
  semantics, :mod:`dynamics.forces`) by every integrator: where they do not depend on the state
  (motors) as constant forces (the compiled fixed-step tree loop), springs and servos (forces of q and
  v) evaluated at every stage of every integrator (the tree's fixed-step ones step in Python with the
  compiled ABA per stage, :func:`.fixed_step.state_fixed_step`);
* the native format's force elements (``forces:``: joint spring-dampers with regularised Coulomb
  friction, spring-dampers between body points, constant point loads, :func:`dynamics.forces.element_forces`)
  by every integrator, as springs are;
* joint Coulomb friction read from files (URDF ``<dynamics friction>``, MJCF ``frictionloss`` of hinges
  and slides) is a ``joint_friction`` element too, regularised as ``-friction tanh(v / 0.01)`` (rad/s or
  m/s; MuJoCo holds ``frictionloss`` as a constraint of its solver instead: the two agree away from
  ``|v| <~ 0.01``); SDF ``friction`` is not read.

Armature (rotor inertia) is part of the dynamics model itself, not of this module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..forces import (actuator_forces, actuator_forces_are_constant, element_forces, has_elements, has_springs,
                      spring_forces)


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


class ConstantForcesOnly(ValueError):
    """A simulation the model's force elements do not allow: DC motors or actuators with activation dynamics
    on a closed chain (their states are carried on trees only).  The name is that of the first refusal it
    carried (state-dependent forces on the compiled fixed-step tree loop, which now steps them in Python)."""


def with_force_elements(torque, model, ctrl=None, actuators: bool = True):
    """``torque`` (None, an (nv,) array or f(t, q, v)) plus the model's joint springs and its actuators
    at the constant controls ``ctrl`` ((na,) in ``model.actuator_names`` order; zero when None, as in
    MuJoCo, where a position servo holds its joint at 0): a constant (nv,) array when none of these
    forces depends on the state, else f(t, q, v).  Joint damping is not included: it enters through
    :class:`JointProperties` (every integrator applies it).  ``actuators`` False leaves the actuators out
    (a model with activation states: :mod:`.motors` adds them at the activations).  Seed 004 Fig. 1: each element is a
    two-terminal edge parallel to its joint; its through variable is added to the joint's force.
    """
    tree = model.tree_model
    na = len(tree.actuator_names) if actuators else 0
    ctrl = np.zeros(na) if ctrl is None or not na else np.asarray(ctrl, dtype=float).reshape(na)
    state_forces = has_springs(tree) or has_elements(tree)
    if not na and not state_forces:
        return torque
    if not state_forces and actuator_forces_are_constant(tree):
        constant = actuator_forces(tree, tree.neutral(), np.zeros(tree.nv), ctrl)
        if torque is None or not callable(torque):
            return constant if torque is None else np.asarray(torque, dtype=float) + constant
        return lambda t, q, v: torque(t, q, v) + constant

    def elements(q, v):
        f = spring_forces(tree, q) + (actuator_forces(tree, q, v, ctrl) if na else 0.0)
        return f + element_forces(tree, q, v) if has_elements(tree) else f

    if torque is None:
        return lambda t, q, v: elements(q, v)
    if callable(torque):
        return lambda t, q, v: torque(t, q, v) + elements(q, v)
    constant = np.asarray(torque, dtype=float)
    return lambda t, q, v: constant + elements(q, v)


def coordinate_rates(model, joints: JointProperties, q) -> tuple[np.ndarray, np.ndarray]:
    """(decay rates (nv,) 1/s, angular frequencies (nv,) rad/s) of each velocity coordinate of a tree's
    joint-parallel forces at q (nq,), each coordinate alone (``M^-1`` by its diagonal entry): the largest
    slopes ``c`` of the damping, the native and file friction (``friction / friction_velocity`` at rest),
    the joint actuators' velocity terms and the stiffnesses ``k`` of the springs and the actuators' length
    terms, as ``c (M^-1)_jj`` and ``sqrt(k (M^-1)_jj)``.  An estimate of how stiff these forces make the
    motion for an explicit step (:func:`.fixed_step.stability_warning`), not a bound.  A closed chain's
    coordinates do not move alone: its rates are those of the independent coordinates
    (:func:`embedded_rates`), 0 at the dependent ones."""
    from ..crba import mass_matrix   # the numpy CRBA: one call per simulation

    tree = model.tree_model
    L = tree.forces.layout
    c, k = np.array(joints.damping, dtype=float), np.zeros(tree.nv)
    if len(L["q1"]):
        np.add.at(k, L["v1"], L["k1"])
    if len(L.get("jf_v", ())):
        np.add.at(c, L["jf_v"], L["jf_c"] + L["jf_f"] / L["jf_vf"])
        np.add.at(k, L["jf_v"], L["jf_k"])
    on_joint = L["act_t"] < 0 if len(L["act_q"]) else np.zeros(0, dtype=bool)
    if on_joint.any():
        g2 = L["gear"][on_joint] ** 2
        np.add.at(c, L["act_v"][on_joint], np.maximum(-L["bias"][on_joint, 2], 0.0) * g2)
        np.add.at(k, L["act_v"][on_joint], np.maximum(-L["bias"][on_joint, 1], 0.0) * g2)
    if not (c.any() or k.any()):
        return c, k
    if model.kind == "embedded":
        rates = embedded_rates(model, q, c, k)
        if rates is not None:
            return rates
    inverse = np.diag(np.linalg.inv(mass_matrix(tree, np.asarray(q, dtype=float))))
    return c * inverse, np.sqrt(k * inverse)


def embedded_rates(em, q, c, k) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`coordinate_rates` of a constraint-embedded closed chain at q (nq,) closed
    (:func:`dynamics.closed.embedding.complete_configuration`): with ``X`` (nv, n_i) the tree velocities per
    unit independent velocity there (:func:`dynamics.closed.embedding.null_space_basis`) and M the tree's mass
    matrix, the independent coordinates' mass matrix ``M_e = X^T M X`` and slopes ``C_e = X^T diag(c) X``,
    ``K_e = X^T diag(k) X`` (c, k (nv,) per tree coordinate), each independent coordinate alone:
    ``(C_e)_jj (M_e^-1)_jj`` and ``sqrt((K_e)_jj (M_e^-1)_jj)`` at its tree coordinate, 0 at the dependent
    ones (a light link inside a loop moves with the loop: toddlerbot's neck four-bar, 7.5e5 1/s on its links
    alone, 7.0e2 1/s as a loop).  None where q does not close."""
    from ..closed.closure import ClosureError
    from ..closed.embedding import complete_configuration, null_space_basis
    from ..crba import mass_matrix

    try:
        q = complete_configuration(em, q)
        X = null_space_basis(em, q)
    except ClosureError:
        return None
    inverse = np.diag(np.linalg.inv(X.T @ mass_matrix(em.tree_model, q) @ X))
    rates, omegas = np.zeros(em.nv), np.zeros(em.nv)
    rates[em.independent_v] = np.einsum("ij,i,ij->j", X, c, X) * inverse
    omegas[em.independent_v] = np.sqrt(np.einsum("ij,i,ij->j", X, k, X) * inverse)
    return rates, omegas
