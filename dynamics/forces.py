"""Joint springs, dampers and actuators: the force elements of a tree model, as generalized forces.

Seed 004 (Diaz-Calderon, Paredis, Khosla, section 3 and Fig. 1) models a spring, a damper or an
actuator as a two-terminal element: an edge between two attachment points of the system graph,
with a *through* variable (the force it transmits) and an *across* variable (the relative motion
of its terminals) tied by its terminal equation.  Elements parallel to a joint (attached where
the joint is) have the joint's coordinate as across variable, and their through variable is a
generalized force on the joint's freedoms.  This module evaluates those terminal equations with
MuJoCo's semantics (XML reference, ``joint`` and ``actuator``; ``mj_passive``, ``mj_fwdActuation``):

* joint spring: ``-stiffness (q - springref)`` on a hinge or slide; on a ball joint
  ``-stiffness log(Q)`` (the rotation vector of its quaternion from the reference configuration,
  angle in [0, pi], MuJoCo's ``mju_subQuat``, in the body frame); on a free joint the same
  torque and ``-stiffness R^T p`` on the body-frame translation (``p`` the displacement from the
  reference position, world frame; MuJoCo applies ``-stiffness p`` to its world-frame velocity);
* joint damper: ``-damping v`` on every velocity coordinate of the joint (isotropic, so the
  body-frame and world-frame velocities of a free joint give the same generalized force);
* actuator on a one-coordinate joint: ``length = gear q``, ``velocity = gear v``,
  ``force = gain ctrl + bias`` with ``gain = g0 + g1 length + g2 velocity`` and
  ``bias = b0 + b1 length + b2 velocity`` (MuJoCo's affine gain and bias; a fixed gain or no
  bias are the same with zero coefficients), ``ctrl`` clamped to ``ctrlrange`` and ``force`` to
  ``forcerange``; the joint receives ``gear force``;
* an actuator with activation dynamics (MuJoCo's ``dyntype`` ``integrator``, ``filter``,
  ``filterexact``; ``mj_fwdActuation``): its activation ``act`` is a state and takes the place of
  ``ctrl`` in ``force = gain act + bias``; its rate (MuJoCo's ``act_dot``, from the clamped ``ctrl``)
  is ``ctrl`` (integrator) or ``(ctrl - act) / max(timeconst, MJ_MINVAL)`` (both filters:
  ``filterexact`` differs from ``filter`` only in how MuJoCo's discrete step integrates it, exactly
  over a step instead of by Euler; in continuous time they are one ODE).  ``actrange`` (MuJoCo's
  ``actlimited``, which clamps ``act`` after each step) holds the activation in its range: the
  simulation sets a rate that would leave the range to zero at the bound
  (:func:`dynamics.simulation.activations.bounded_rates`, the limit of MuJoCo's clamp as its step goes
  to zero).  ``actearly`` (the force of MuJoCo's step takes the activation at the end of the step)
  has no continuous-time counterpart: its limit as the step goes to zero is ``act``, which is what
  is used;
* the native format's elements (:class:`dynamics.force_elements.JointForce`, ``PointSpring``,
  ``PointLoad``): parallel to a one-coordinate joint ``-stiffness (q - rest) - damping v
  - friction tanh(v / friction_velocity)`` (Coulomb friction regularised by ``tanh``: smooth, its
  slope at rest ``friction / friction_velocity``); between body points ``a`` and ``b`` (across
  variable the length ``L = |p_b - p_a|`` and its rate ``L_dot = u . (v_b - v_a)``, ``u`` the unit
  vector from a to b; through variable the tension ``T = stiffness (L - rest_length) + damping L_dot``)
  the generalized force ``J_a^T (T u) - J_b^T (T u)``; a constant force ``F`` and torque ``N`` (ground
  frame) at a body point ``J^T [N; F]`` (``J`` the point's world-frame Jacobian,
  :func:`dynamics.jacobians.jacobian`);
* a tendon (MuJoCo's ``fixed`` and ``spatial`` through sites; :func:`tendon_kinematics`): its length
  ``L`` (``sum coef_i q_i``, or the sum of the distances between consecutive sites) and Jacobian ``J``
  (``L_dot = J v``); its spring-damper's tension ``f = -stiffness (L - lower)`` below ``lower``,
  ``-stiffness (L - upper)`` above ``upper`` (a dead band between), less ``damping L_dot``, gives
  ``J^T f``; an actuator along it has ``length = gear L``, ``velocity = gear L_dot`` and gives
  ``gear J^T force`` (MuJoCo's ``mj_tendon``, ``mj_springdamper``, ``mj_transmission``);
* a DC motor (seed 004 sections 3 and 5: an electrical component, a two-port joined to the joint's
  attachment points by a driver edge): its current ``i`` a state, its voltage ``V`` an input,
  ``L di/dt = V - R i - K_e N v`` (``N v`` the rotor's speed, ``N`` the gear ratio) and the joint
  receives ``eta N K_t i`` (:func:`motor_rates`); its rotor inertia is part of the model's armature.

Shapes: ``q`` (nq,) or (B, nq), ``v`` (nv,) or (B, nv), ``ctrl`` (na,) or (B, na) in
``model.actuator_names`` order, ``act`` (nact,) or (B, nact) in :func:`activation_names` order; results
(nv,) or (B, nv), N m or N per velocity coordinate of the model (joint coordinates of
:mod:`dynamics.joints`).
"""

from __future__ import annotations

import numpy as np

from .batch import as_batch, broadcast, out
from .force_elements import DYN_TYPES, ActuatorSpec, ForceElements, JointSpring
from .jacobians import jacobian
from .kinematics import body_poses
from .spatial import quat_log, quat_to_matrix_batch

__all__ = ["JointSpring", "ActuatorSpec", "ForceElements", "passive_forces", "spring_forces", "damper_forces",
           "actuator_forces", "actuator_forces_are_constant", "has_springs", "element_forces", "has_elements",
           "motor_names", "motor_rates", "tendon_kinematics", "tendon_forces", "activation_names",
           "actuator_activation_rates", "MJ_MINVAL", "friction_forces"]

#: MuJoCo's ``mjMINVAL``: the least time constant of a filter (``max(mjMINVAL, dynprm[0])``), s
MJ_MINVAL = 1e-15


def _layout(model) -> dict:
    """The indexed force elements of a model of any kind (its tree's)."""
    return model.tree_model.forces.layout


def spring_forces(model, q) -> np.ndarray:
    """Generalized joint spring forces ``(nv,)`` or ``(B, nv)`` at ``q`` (module docstring)."""
    L = _layout(model)
    qb, single = as_batch(q, model.nq, "q")
    tau = np.zeros((qb.shape[0], model.nv))
    if len(L["q1"]):
        tau[:, L["v1"]] = -L["k1"] * (qb[:, L["q1"]] - L["ref1"])
    for q0, v0, k in L["balls"]:
        tau[:, v0:v0 + 3] = -k * quat_log(qb[:, q0:q0 + 4])
    for q0, v0, k in L["frees"]:
        R = quat_to_matrix_batch(qb[:, q0 + 3:q0 + 7])
        tau[:, v0:v0 + 3] = -k * quat_log(qb[:, q0 + 3:q0 + 7])
        tau[:, v0 + 3:v0 + 6] = -k * np.einsum("bji,bj->bi", R, qb[:, q0:q0 + 3])
    return out(tau, single)


def damper_forces(model, v) -> np.ndarray:
    """Generalized joint damper forces ``-damping v``, ``(nv,)`` or ``(B, nv)``."""
    vb, single = as_batch(v, model.nv, "v")
    return out(-_layout(model)["damping"] * vb, single)


def _point_jacobian(tree, qb, k: int, local):
    """(B, 6, nv) world-frame Jacobian of a body point, zero for ground (k = -1)."""
    if k < 0:
        return np.zeros((qb.shape[0], 6, tree.nv))
    return jacobian(tree, qb, k, point=local, frame="world").reshape(qb.shape[0], 6, tree.nv)


def _world_point(poses, k: int, local, batch: int) -> np.ndarray:
    if k < 0:
        return np.broadcast_to(local, (batch, 3))
    R, o = poses
    return R[:, k] @ local + o[:, k]


def element_forces(model, q, v) -> np.ndarray:
    """Generalized forces ``(nv,)`` or ``(B, nv)`` of the native format's force elements at (q, v): joint
    springs, dampers and regularised Coulomb friction, spring-dampers between body points, constant
    point loads (module docstring)."""
    L = _layout(model)
    tree = model.tree_model
    qb, s1 = as_batch(q, model.nq, "q")
    vb, s2 = as_batch(v, model.nv, "v")
    qb, vb = broadcast(qb, vb)
    tau = np.zeros((qb.shape[0], model.nv))
    if len(L.get("jf_v", ())):
        x, w = qb[:, L["jf_q"]], vb[:, L["jf_v"]]
        f = -L["jf_k"] * (x - L["jf_rest"]) - L["jf_c"] * w - L["jf_f"] * np.tanh(w / L["jf_vf"])
        np.add.at(tau, (slice(None), L["jf_v"]), f)
    springs, loads = L.get("point_springs", ()), L.get("loads", ())
    if springs:
        poses = body_poses(tree, qb)
        poses = (poses[0].reshape(qb.shape[0], -1, 3, 3), poses[1].reshape(qb.shape[0], -1, 3))
    for (ka, la), (kb, lb), k, c, rest in springs:
        Ja, Jb = _point_jacobian(tree, qb, ka, la)[:, 3:], _point_jacobian(tree, qb, kb, lb)[:, 3:]
        d = _world_point(poses, kb, lb, qb.shape[0]) - _world_point(poses, ka, la, qb.shape[0])
        length = np.linalg.norm(d, axis=1)
        u = d / length[:, None]
        rate = np.einsum("bi,bij,bj->b", u, Jb - Ja, vb)
        tension = k * (length - rest) + c * rate
        tau += np.einsum("bij,bi->bj", Ja - Jb, tension[:, None] * u)
    for (k, local), wrench in loads:
        tau += np.einsum("bij,i->bj", _point_jacobian(tree, qb, k, local), wrench)
    if L.get("tendons"):
        tau += tendon_forces(model, qb, vb)
    return out(tau, s1 and s2)


def tendon_kinematics(model, t, qb, vb) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(length L (B,), rate L_dot (B,), Jacobian J (B, nv) with ``L_dot = J v``) of the tendon ``t`` (a
    :class:`dynamics.force_elements.TendonLayout` of ``model``'s tree) at ``qb`` (B, nq), ``vb`` (B, nv).

    Fixed: ``L = sum coef_i q_i``, ``J = coef``.  Spatial, through points ``p_0 .. p_n`` (world frame):
    ``L = sum |p_k+1 - p_k|``, ``J = sum u_k^T (J_k+1 - J_k)`` with ``u_k`` the unit vector from ``p_k`` to
    ``p_k+1`` and ``J_k`` the linear rows of the point's world-frame Jacobian (MuJoCo's ``mj_tendon``)."""
    tree = model.tree_model if hasattr(model, "tree_model") else model
    B = qb.shape[0]
    if t.coef is not None:
        rows = np.flatnonzero(t.q_index >= 0)
        return qb[:, t.q_index[rows]] @ t.coef[rows], vb @ t.coef, np.broadcast_to(t.coef, (B, tree.nv))
    poses = body_poses(tree, qb)
    poses = (poses[0].reshape(B, -1, 3, 3), poses[1].reshape(B, -1, 3))
    points = [_world_point(poses, k, local, B) for k, local in t.sites]
    jacobians = [_point_jacobian(tree, qb, k, local)[:, 3:] for k, local in t.sites]
    length, J = np.zeros(B), np.zeros((B, tree.nv))
    for k in range(len(points) - 1):
        d = points[k + 1] - points[k]
        n = np.linalg.norm(d, axis=1)
        u = d / n[:, None]
        length += n
        J += np.einsum("bi,bij->bj", u, jacobians[k + 1] - jacobians[k])
    return length, np.einsum("bj,bj->b", J, vb), J


def tendon_forces(model, q, v) -> np.ndarray:
    """Generalized forces ``(nv,)`` or ``(B, nv)`` of the tendons' springs and dampers at (q, v): the
    tension ``f = -stiffness (L - lower)`` below ``lower``, ``-stiffness (L - upper)`` above ``upper``, 0
    between, less ``damping L_dot``, mapped by ``J^T f`` (MuJoCo's ``mj_springdamper``)."""
    qb, s1 = as_batch(q, model.nq, "q")
    vb, s2 = as_batch(v, model.nv, "v")
    qb, vb = broadcast(qb, vb)
    tau = np.zeros((qb.shape[0], model.nv))
    for t in _layout(model).get("tendons", ()):
        if not (t.stiffness or t.damping):
            continue
        L, rate, J = tendon_kinematics(model, t, qb, vb)
        f = t.stiffness * (np.minimum(L - t.lower, 0.0) + np.maximum(L - t.upper, 0.0))
        tau -= (f + t.damping * rate)[:, None] * J
    return out(tau, s1 and s2)


def motor_names(model) -> tuple[str, ...]:
    """The DC motors of the model's tree, in the order of their currents and voltages."""
    return model.tree_model.forces.motor_names


def motor_rates(model, v, currents, voltage) -> tuple[np.ndarray, np.ndarray]:
    """(generalized motor forces (nv,), current rates di/dt (nmotors,)) at joint velocities v (nv,), motor
    currents (nmotors,) A and voltages (nmotors,) V (module docstring; single state)."""
    L = _layout(model)
    tau = np.zeros(model.nv)
    if not len(L.get("motor_v", ())):
        return tau, np.zeros(0)
    i, V = np.asarray(currents, dtype=float), np.asarray(voltage, dtype=float)
    N = L["motor_N"]
    np.add.at(tau, L["motor_v"], L["motor_eta"] * N * L["motor_kt"] * i)
    di = (V - L["motor_R"] * i - L["motor_ke"] * N * np.asarray(v, dtype=float)[L["motor_v"]]) / L["motor_L"]
    return tau, di


def has_elements(model) -> bool:
    """True when the model's tree carries force elements of the native format (:func:`element_forces`)."""
    L = _layout(model)
    return bool(len(L.get("jf_v", ())) or L.get("point_springs") or L.get("loads")
                or any(t.stiffness or t.damping for t in L.get("tendons", ())))


def friction_forces(model, q, v) -> np.ndarray:
    """The regularised Coulomb joint friction ``-friction tanh(v / friction_velocity)`` of the model's
    :class:`dynamics.force_elements.JointForce` elements (the native format's ``joint_friction``, URDF
    ``<dynamics friction>``, MJCF ``frictionloss``), ``(nv,)`` or ``(B, nv)``: the part of
    :func:`passive_forces` that MuJoCo holds as a constraint of its solver (``frictionloss`` enters its
    ``qfrc_constraint``, not ``qfrc_passive``), so that ``passive_forces - friction_forces`` is MuJoCo's
    ``qfrc_spring + qfrc_damper``.  ``q`` (nq,) or (B, nq) is taken for the shape only."""
    L = _layout(model)
    qb, s1 = as_batch(q, model.nq, "q")
    vb, s2 = as_batch(v, model.nv, "v")
    qb, vb = broadcast(qb, vb)
    tau = np.zeros((qb.shape[0], model.nv))
    if len(L.get("jf_v", ())):
        f = -L["jf_f"] * np.tanh(vb[:, L["jf_v"]] / L["jf_vf"])
        np.add.at(tau, (slice(None), L["jf_v"]), f)
    return out(tau, s1 and s2)


def passive_forces(model, q, v) -> np.ndarray:
    """Joint spring plus damper forces at (q, v): MuJoCo's ``qfrc_spring + qfrc_damper``, plus the
    native format's force elements and the joints' Coulomb friction (:func:`element_forces`;
    :func:`friction_forces` is the friction's part, which MuJoCo does not count as passive).

    Parameters
    ----------
    model : a dynamics model of any kind (its tree's joints carry the elements).
    q : (nq,) or (B, nq); v : (nv,) or (B, nv).

    Returns
    -------
    (nv,) or (B, nv) generalized forces, N m or N.

    Examples
    --------
    A hinge with ``stiffness 10``, ``springref 0.5 deg`` and ``damping 2`` at q = 0, v = 1 rad/s
    gets ``-10 (0 - 0.00873) - 2 = -1.913`` N m.
    """
    qb, s1 = as_batch(q, model.nq, "q")
    vb, s2 = as_batch(v, model.nv, "v")
    qb, vb = broadcast(qb, vb)
    tau = spring_forces(model, qb) + damper_forces(model, vb)
    if has_elements(model):
        tau = tau + element_forces(model, qb, vb)
    return out(tau, s1 and s2)


def activation_names(model) -> tuple[str, ...]:
    """The actuators of the model's tree with an activation state, in the order of ``act`` (MuJoCo's)."""
    return model.tree_model.forces.activation_names


def _activations(L, act, batch: int | None) -> tuple[np.ndarray, bool]:
    """``act`` as (B, nact) (zeros when None, MuJoCo's initial activations) and whether it was one."""
    n = len(L["act_states"])
    if act is None:
        return np.zeros((batch or 1, n)), True
    return as_batch(act, n, "act")


def actuator_forces(model, q, v, ctrl, act=None) -> np.ndarray:
    """Generalized actuator forces: MuJoCo's ``qfrc_actuator`` for joint and tendon transmissions.

    Parameters
    ----------
    model : a dynamics model of any kind; its actuators are ``model.actuator_names``.
    q : (nq,) or (B, nq); v : (nv,) or (B, nv); ctrl : (na,) or (B, na) controls in
        ``model.actuator_names`` order (clamped to each ``ctrlrange``).
    act : (nact,) or (B, nact) activations of the actuators with activation dynamics, in
        :func:`activation_names` order (MuJoCo's ``act``); zero when None.

    Returns
    -------
    (nv,) or (B, nv): ``gear * clamp(gain u + bias, forcerange)`` on each actuated
    coordinate (``u`` the clamped ``ctrl``, or ``act`` for an actuator with activation dynamics),
    summed where several actuators drive one joint, N m or N.

    Examples
    --------
    A ``<general dyntype="filter" dynprm="0.1" gainprm="1000" biasprm="0 -1000" biastype="affine">``
    on a hinge at q = 0.2 rad with act = 0.5 gives ``1000 * 0.5 - 1000 * 0.2 = 300`` N m, whatever ctrl.
    """
    L = _layout(model)
    qb, s1 = as_batch(q, model.nq, "q")
    vb, s2 = as_batch(v, model.nv, "v")
    cb, s3 = as_batch(ctrl, len(L["act_q"]), "ctrl")
    ab, s4 = _activations(L, act, None)
    qb, vb, cb, ab = broadcast(qb, vb, cb, ab)
    single = s1 and s2 and s3 and s4
    tau = np.zeros((qb.shape[0], model.nv))
    if not len(L["act_q"]):
        return out(tau, single)
    gear, on_joint = L["gear"], L["act_t"] < 0
    length, velocity = np.zeros(cb.shape), np.zeros(cb.shape)
    length[:, on_joint], velocity[:, on_joint] = qb[:, L["act_q"][on_joint]], vb[:, L["act_v"][on_joint]]
    moments = {}
    for i in np.flatnonzero(~on_joint):
        t = int(L["act_t"][i])
        if t not in moments:
            moments[t] = tendon_kinematics(model, L["tendons"][t], qb, vb)
        length[:, i], velocity[:, i] = moments[t][0], moments[t][1]
    length, velocity = gear * length, gear * velocity
    u = np.clip(cb, L["ctrlrange"][:, 0], L["ctrlrange"][:, 1])
    u[:, L["act_states"]] = ab
    g, b = L["gain"], L["bias"]
    force = (g[:, 0] + g[:, 1] * length + g[:, 2] * velocity) * u + b[:, 0] + b[:, 1] * length + b[:, 2] * velocity
    force = np.clip(force, L["forcerange"][:, 0], L["forcerange"][:, 1])
    np.add.at(tau, (slice(None), L["act_v"][on_joint]), (gear * force)[:, on_joint])
    for i in np.flatnonzero(~on_joint):
        tau += (gear[i] * force[:, i])[:, None] * moments[int(L["act_t"][i])][2]
    return out(tau, single)


def actuator_activation_rates(model, ctrl, act) -> np.ndarray:
    """The activations' rates, MuJoCo's ``act_dot`` (``mj_fwdActuation``; module docstring).

    Parameters
    ----------
    model : a dynamics model of any kind.
    ctrl : (na,) or (B, na) controls in ``model.actuator_names`` order (clamped to each ``ctrlrange``).
    act : (nact,) or (B, nact) activations in :func:`activation_names` order.

    Returns
    -------
    (nact,) or (B, nact), per second: ``ctrl`` for an ``integrator``, ``(ctrl - act) / timeconst`` for a
    ``filter`` or ``filterexact`` (``timeconst`` at least :data:`MJ_MINVAL`).  ``actrange`` is not applied
    here (MuJoCo's ``act_dot`` ignores it; the simulation holds the activation in it).

    Examples
    --------
    A filter of time constant 0.1 s at ctrl = 1, act = 0.5 has ``act_dot = 5`` per second.
    """
    L = _layout(model)
    cb, s1 = as_batch(ctrl, len(L["act_q"]), "ctrl")
    ab, s2 = _activations(L, act, None)
    cb, ab = broadcast(cb, ab)
    states = L["act_states"]
    u = np.clip(cb, L["ctrlrange"][:, 0], L["ctrlrange"][:, 1])[:, states]
    integrator = L["act_dyn"] == DYN_TYPES.index("integrator")
    rate = np.where(integrator, u, (u - ab) / np.maximum(L["act_tau"], MJ_MINVAL))
    return out(rate, s1 and s2)


def actuator_forces_are_constant(model) -> bool:
    """True when the actuator forces do not depend on q and v (no length or velocity terms)."""
    L = _layout(model)
    spatial = any(L["tendons"][i].sites for i in L["act_t"] if i >= 0)    # moment arms that move with q
    return not len(L["act_q"]) or not (np.any(L["gain"][:, 1:]) or np.any(L["bias"][:, 1:]) or spatial)


def has_springs(model) -> bool:
    """True when some joint of the model's tree has a spring."""
    L = _layout(model)
    return bool(len(L["q1"]) or L["balls"] or L["frees"])
