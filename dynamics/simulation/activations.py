"""Actuator activations as states (MuJoCo's ``act``; seed 004 section 5: the state of a component
joins the mechanical one, as the DC motors' currents do in :mod:`.motors`).

An actuator with activation dynamics (``dyntype`` integrator, filter, filterexact) has one state, its
activation, whose rate is MuJoCo's ``act_dot`` (:func:`dynamics.forces.actuator_activation_rates`) and
which the actuator's force takes in place of its control.  MuJoCo clamps the activation of an actuator
with ``actlimited`` to ``actrange`` after each step (``mj_advance``); in continuous time the same
limit holds the activation at a bound while its rate points out of the range (:func:`bounded_rates`).
"""

from __future__ import annotations

import numpy as np

from ..force_elements import DYN_TYPES
from ..forces import MJ_MINVAL, activation_names, actuator_activation_rates


def _ranges(model) -> np.ndarray:
    """(nact, 2) the activation ranges ((-inf, inf) where not limited)."""
    return model.tree_model.forces.layout["actrange"]


def initial_activations(model, act0=None) -> np.ndarray:
    """(nact,) the initial activations: ``act0`` (in :func:`dynamics.forces.activation_names` order), or
    zero (MuJoCo's), held in the activation ranges."""
    n = len(activation_names(model))
    act = np.zeros(n) if act0 is None else np.asarray(act0, dtype=float).reshape(n)
    R = _ranges(model)
    return np.clip(act, R[:, 0], R[:, 1])


def bounded_rates(model, ctrl, act) -> np.ndarray:
    """(nact,) activation rates at controls ``ctrl`` (na,) and activations ``act`` (nact,): MuJoCo's
    ``act_dot``, zero where the activation is at (or beyond) a bound of its range and the rate points
    further out."""
    rate = np.asarray(actuator_activation_rates(model, ctrl, act), dtype=float)
    R = _ranges(model)
    out = ((act >= R[:, 1]) & (rate > 0)) | ((act <= R[:, 0]) & (rate < 0))
    return np.where(out, 0.0, rate)


def activation_trajectory(model, ctrl, act0=None):
    """f(t) -> (nact,) the activations at time t (s) under the constant controls ``ctrl`` (na,), from ``act0``
    (:func:`initial_activations`): the activation dynamics solved in closed form.

    ``act_dot`` depends on ``ctrl`` and ``act`` only (:func:`dynamics.forces.actuator_activation_rates`),
    not on the mechanics, so at constant controls each activation is ``act0 + u t`` (integrator) or
    ``u + (act0 - u) exp(-t / timeconst)`` (filters), ``u`` the clamped control; both are monotone, so the
    range's hold (:func:`bounded_rates`: the rate zero at a bound it points out of) is the clip of that
    curve to the range.  The closed-chain simulators take the actuators' forces at these activations as
    joint forces f(t, q, v) (:func:`dynamics.simulation.simulate`)."""
    L = model.tree_model.forces.layout
    states = L["act_states"]
    u = np.clip(np.asarray(ctrl, dtype=float), L["ctrlrange"][:, 0], L["ctrlrange"][:, 1])[states]
    integrator = L["act_dyn"] == DYN_TYPES.index("integrator")
    tau = np.maximum(L["act_tau"], MJ_MINVAL)
    a0, R = initial_activations(model, act0), _ranges(model)

    def at(t):
        return np.clip(np.where(integrator, a0 + u * t, u + (a0 - u) * np.exp(-t / tau)), R[:, 0], R[:, 1])

    return at
