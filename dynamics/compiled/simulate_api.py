"""Python entry of the compiled fixed-step simulator (:mod:`dynamics.compiled.simulate_kernels`).

One call runs the whole loop in machine code: the integrator's stages (compiled ABA),
viscous joint damping, the joint group updates and the joint stops.  Closed chains:
:func:`closed_chain_stepper` runs the loop of :mod:`dynamics.simulation.fixed_step` on the state
``[q, v_i]`` of a constraint-embedded model (:func:`closure_kernels.simulate_closed`).
Importing this module imports no numba and compiles nothing (nor does :func:`limited_coordinates`, which the numpy paths
use).  Under ``dispatch.backend("numpy")`` the closed-chain loop takes its numpy steps and the tree
simulator refuses to run (its numpy twin is :func:`dynamics.simulation.fixed_step.numpy_fixed_step`,
which :func:`dynamics.simulation.fixed_step.simulate_tree_fixed_step` calls then).
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np

from ..dispatch import current_backend, declined
from ..joints import joint_types
from ..singular import singular_mass_matrix
from ..tolerances import SIMULATION_CLOSURE_TOL

__all__ = ["INTEGRATORS", "FixedStepTrajectory", "simulate_fixed_step", "limited_coordinates",
           "closed_chain_stepper"]

log = logging.getLogger(__name__)

#: fixed-step integrators (codes of :mod:`simulate_kernels`); "euler" is the semi-implicit one
INTEGRATORS = {"semi-implicit-euler": 0, "euler": 0, "rk4": 1}

#: joints whose velocity coordinates are the rates of their position coordinates (q_dot = v), the
#: only ones the stop kernel can hold at a coordinate limit (which joints the readers give limits
#: is the table's ``takes_limits``)
LIMITABLE = joint_types(euclidean=True)

#: tree joints of a closed chain the compiled closed-chain loop takes (``q_dot = v``, see
#: :mod:`closure_kernels`)
CLOSED_CHAIN_JOINTS = joint_types(euclidean=True)


class FixedStepTrajectory(NamedTuple):
    """t (K,) s, Q (K, nq), V (K, nv) every ``stride`` steps; limit_contacts: number of times a
    coordinate reached one of its limits."""

    t: np.ndarray
    Q: np.ndarray
    V: np.ndarray
    limit_contacts: int


def _vector(x, n: int, name: str) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {x.shape}")
    return x


def limited_coordinates(model, lower, upper):
    """The coordinates with a finite limit: q indices (L,), v indices (L,), lower (L,), upper (L,).

    lower, upper : (nv,) per velocity coordinate, -inf / +inf where unlimited.  A finite
    limit on a coordinate of another joint type than :data:`LIMITABLE` is a ValueError.
    """
    lower = np.full(model.nv, -np.inf) if lower is None else np.asarray(lower, dtype=float).reshape(model.nv)
    upper = np.full(model.nv, np.inf) if upper is None else np.asarray(upper, dtype=float).reshape(model.nv)
    if np.any(lower > upper) or np.isnan(lower).any() or np.isnan(upper).any():
        raise ValueError("joint limits need lower <= upper")
    rows = []
    for k, jtype in enumerate(model.joint_types):
        for i in range(int(model.v_offset[k + 1] - model.v_offset[k])):
            j = int(model.v_offset[k]) + i
            if not (np.isfinite(lower[j]) or np.isfinite(upper[j])):
                continue
            if jtype not in LIMITABLE:
                raise ValueError(f"joint {model.joint_names[k]!r} ({jtype}) cannot take coordinate limits")
            rows.append((int(model.q_offset[k]) + i, j))
    q_index = np.array([r[0] for r in rows], dtype=np.int64)
    v_index = np.array([r[1] for r in rows], dtype=np.int64)
    return q_index, v_index, np.ascontiguousarray(lower[v_index]), np.ascontiguousarray(upper[v_index])


def simulate_fixed_step(model, q0, v0, dt: float, steps: int, integrator: str = "rk4", tau=None, damping=None,
                        lower=None, upper=None, stride: int = 1, data=None) -> FixedStepTrajectory:
    """Fixed-step simulation of a rigid-body tree compiled end to end.

    Parameters
    ----------
    q0 (nq,), v0 (nv,) : initial state
    dt : step, s;  steps : number of steps;  stride : record every stride-th state
    integrator : "rk4" (Runge-Kutta-Munthe-Kaas on the joint groups) or "euler" /
        "semi-implicit-euler" (symplectic Euler)
    tau : (nv,) constant joint forces (default 0)
    damping : (nv,) viscous damping per velocity coordinate, force ``-damping * v``,
        N m s/rad or N s/m (default 0)
    lower, upper : (nv,) coordinate limits, rad or m (+-inf: none): hard inelastic stops,
        see :func:`simulate_kernels.enforce_limits`

    data : a ``model.create_data()`` (default: a new one)

    Returns
    -------
    :class:`FixedStepTrajectory`
    """
    from . import simulate_kernels as sk     # numba is imported here, not with this module

    if current_backend() == "numpy":
        raise RuntimeError("the fixed-step tree simulator is compiled: under backend('numpy') its numpy twin is "
                           "dynamics.simulation.fixed_step.numpy_fixed_step")
    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {sorted(INTEGRATORS)}, got {integrator!r}")
    if not (np.isfinite(dt) and dt > 0) or int(steps) < 0 or int(stride) < 1:
        raise ValueError(f"need dt > 0, steps >= 0 and stride >= 1, got dt={dt}, steps={steps}, stride={stride}")
    flat = model.flat_model
    q0, v0 = _vector(q0, flat.nq, "q0"), _vector(v0, flat.nv, "v0")
    tau = np.zeros(flat.nv) if tau is None else _vector(tau, flat.nv, "tau")
    damping = np.zeros(flat.nv) if damping is None else _vector(damping, flat.nv, "damping")
    q_index, v_index, lo, hi = limited_coordinates(model, lower, upper)
    steps, stride = int(steps), int(stride)
    rows = steps // stride + 1
    Q, V = np.empty((rows, flat.nq)), np.empty((rows, flat.nv))
    try:
        work = (model.create_data() if data is None else data).work
        contacts = sk.simulate(flat.ints, flat.floats, work, q0, v0, tau, damping, q_index, v_index, lo, hi, float(dt),
                               steps, stride, INTEGRATORS[integrator], Q, V)
    except ZeroDivisionError:  # a zero articulated inertia D(k) at the start or on the way
        from .api import mass_matrix     # not at import: importing api compiles (or loads) its kernels

        raise singular_mass_matrix(model.joint_names, model.v_offset, mass_matrix(model, q0)) from None
    return FixedStepTrajectory(dt * stride * np.arange(rows), Q, V, int(contacts))


def closed_chain_stepper(em, dt: float, integrator: str, tau=None, damping=None,
                         tol: float = SIMULATION_CLOSURE_TOL, rcond_switch: float | None = None):
    """The compiled fixed-step loop of a constraint-embedded closed chain, or None where it does not
    apply (joint couplings, a tree joint outside :data:`CLOSED_CHAIN_JOINTS`, ``backend("numpy")``).

    Returns ``run(y, s0, steps, stride, Y) -> s``: advances ``y = [q, v_i]`` (nq + n_independent,),
    closed, in place from step s0 and writes every ``stride``-th state to ``Y[s // stride]``; s is
    ``steps``, or the step the kernel declined (a dependent block near singular, Newton not
    converging ...; see :mod:`closure_kernels`), which the caller then takes with the numpy
    reference.  tau, damping (nv,): constant joint forces and viscous damping (default 0; forces
    ``f(t, q, v)`` are declined: the loop takes constant ones); tol: closure tolerance of the Newton
    iteration, m or rad; rcond_switch: a stricter decline threshold on the dependent blocks' reciprocal
    condition estimate than the model's, for this loop only (the fixed-step simulator hands over to
    its re-partitioning numpy steps before the default split degrades).  Each decline is logged at
    DEBUG level (or raises ``dispatch.CompiledDeclined`` under ``backend("compiled")``).
    """
    from ..tolerances import NEWTON_MAX_ITER, NEWTON_MAX_STEP
    from . import closure_kernels as cu

    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {sorted(INTEGRATORS)}, got {integrator!r}")
    what, instead = "closed-chain fixed-step loop", "the numpy steps (simulation.fixed_step.closed_chain_step)"
    if current_backend() == "numpy":
        log.debug("backend 'numpy': the %s takes %s", what, instead)
        return None
    odd = [f"{n} ({t})" for n, t in zip(em.tree_model.joint_names, em.tree_model.joint_types)
           if t not in CLOSED_CHAIN_JOINTS]
    if em.couplings or odd or callable(tau):
        why = ("the model has joint couplings" if em.couplings else f"joints with q_dot != v: {', '.join(odd)}"
               if odd else "the joint forces are a function f(t, q, v), not constant")
        declined(log, what, why, instead)
        return None
    packed = em.create_data(rcond_switch=rcond_switch).packed
    tau = np.zeros(em.nv) if tau is None else _vector(tau, em.nv, "tau")
    damping = np.zeros(em.nv) if damping is None else _vector(damping, em.nv, "damping")
    settings = (tau, damping, float(tol), NEWTON_MAX_ITER, NEWTON_MAX_STEP, float(dt))
    method = INTEGRATORS[integrator]

    def run(y, s0, steps, stride, Y):
        s, status = cu.simulate_closed(*packed, y, *settings, int(s0), int(steps), int(stride), method, Y)
        if status != cu.OK:
            declined(log, what, f"step {s}: {cu.DECLINED[status]}", "the numpy step")
        return int(s)

    return run
