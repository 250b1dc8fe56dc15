"""Adaptive integration over ``y = [q, v]`` with scipy's ``solve_ivp`` (DOP853 by default).

``q_dot`` comes from :func:`dynamics.rates.configuration_rate` (quaternion kinematics for
spherical and free joints, stabilised onto the unit sphere) and ``v_dot`` from the O(N)
articulated-body forward dynamics (seed 001 Algorithm 6.1); closed chains integrate
``[q, v_ind]`` (:mod:`.closed`).  Joint damping and limits enter as :mod:`.passive` says: trees and
closed chains stop at their limits by events (:mod:`.stops`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..kinematics import normalize
from ..tolerances import ADAPTIVE_ATOL, ADAPTIVE_RTOL, SIMULATION_CLOSURE_TOL
from .closed import closed_chain_result, integrate_partitioned, integrate_partitioned_with_stops
from .passive import JointProperties, coordinate_rates, damped
from .result import SimulationResult, coordinate_columns, energies
from .stops import simulate_tree_with_stops

#: the adaptive integrator's scipy method
ADAPTIVE_METHOD = "DOP853"


#: |h lambda| on the negative real axis where scipy's explicit adaptive methods stop being stable (their
#: stability regions; DOP853's observed on toddlerbot's friction: h lambda = 6.3)
EXPLICIT_REAL_LIMITS = {"DOP853": 6.0, "RK45": 3.3, "RK23": 2.5}
#: the number of stability-limited steps above which a run is announced as stiff
STIFF_STEPS = 100_000
#: the largest tree whose stiffness is estimated (one numpy CRBA and inverse at the start)
STIFF_CHECK_MAX_NV = 300


def stiffness_warning(model, joints: JointProperties, q0, duration: float, method: str) -> str | None:
    """The warning an explicit adaptive run gets when the damping or the regularised friction of its joints
    limits the step far below what accuracy needs (:func:`.passive.coordinate_rates`: each coordinate alone,
    an estimate): more than :data:`STIFF_STEPS` steps for ``duration``.  None otherwise, for implicit
    methods, for trees over :data:`STIFF_CHECK_MAX_NV` coordinates and when ``q0`` is not a tree
    configuration.  Friction read from a file is ``-f tanh(v / 0.01)``: its slope ``f / 0.01`` over a light
    joint's inertia is what makes such runs stiff (toddlerbot: 7.5e5 1/s, steps of 8e-6 s)."""
    tree = model.tree_model
    real = EXPLICIT_REAL_LIMITS.get(method)
    if real is None or tree.nv > STIFF_CHECK_MAX_NV or np.shape(q0) != (tree.nq,):
        return None
    rates, _ = coordinate_rates(model, joints, q0)
    steps = duration * rates.max(initial=0.0) / real
    if steps <= STIFF_STEPS:
        return None
    names = [c.split("[")[0] for c in coordinate_columns(tree, rate=True)]     # the joint of each velocity
    worst = np.argsort(-rates)[:3]
    shown = ", ".join(f"{names[i]} ({rates[i]:.2g}/s)" for i in worst if rates[i] * duration / real > STIFF_STEPS)
    return (f"the damping or friction of {shown} makes the motion stiff for {method}: steps near "
            f"{real / rates.max():.2g} s, about {steps:.2g} of them for {duration:g} s (a larger friction "
            f"velocity or less damping on those joints runs faster)")


def simulate_tree(model, q0, v0, duration: float, samples: int = 201, torque=None, method: str = "DOP853",
                  rtol: float = ADAPTIVE_RTOL, atol: float = ADAPTIVE_ATOL, progress=None, closure_tol=None,
                  joints: JointProperties | None = None) -> SimulationResult:
    """Integrate a rigid-body tree (``closure_tol`` is unused: a tree has no loops).

    Joint limits in ``joints`` are stops resolved by events (:mod:`.stops`).
    """
    from ..compiled.simulate_api import limited_coordinates   # numba is imported on first use

    nq, nv = model.nq, model.nv
    joints = joints or JointProperties.none(nv)
    torque = damped(torque, joints.damping, nv)
    t_eval = np.linspace(0.0, duration, samples)
    y0 = np.concatenate([q0, v0])
    limits = limited_coordinates(model, joints.lower, joints.upper)
    t, y, contacts = simulate_tree_with_stops(model, y0, t_eval, torque, method, rtol, atol, progress, limits)
    q = normalize(model, y[:, :nq])
    v = y[:, nq:]
    energy, kinetic = energies(model, q, v)
    status = f"{method}, rtol {rtol:g}, atol {atol:g}" + (f", {contacts} joint limit contacts" if contacts else "")
    return SimulationResult(t=t, q=q, v=v, energy=energy, columns=coordinate_columns(model),
                            velocity_columns=coordinate_columns(model, rate=True), status=status,
                            limit_contacts=contacts, kinetic=kinetic,
                            dissipative=bool(contacts))


def simulate_closed_chain(em, q0, v0, duration: float, samples: int = 201, torque=None, method: str = "DOP853",
                          rtol: float = ADAPTIVE_RTOL, atol: float = ADAPTIVE_ATOL, progress=None,
                          closure_tol: float = SIMULATION_CLOSURE_TOL,
                          joints: JointProperties | None = None) -> SimulationResult:
    """Integrate a constraint-embedded closed chain (see :func:`.closed.integrate_partitioned`).

    The state is the full ``[q, v]``, made consistent at every evaluation with the split of the current
    segment (generalized coordinate partitioning).  q0 is closed first (the independent coordinates of
    the split chosen there kept); v0's independent entries set the initial velocity.  joints : damping
    and limits of the tree joints (limits are stops through the constraints, :mod:`.stops`).
    """
    from ..compiled.simulate_api import limited_coordinates   # numba is imported on first use

    joints = joints or JointProperties.none(em.nv)
    torque = damped(torque, joints.damping, em.nv)
    t_eval = np.linspace(0.0, duration, samples)
    limits = limited_coordinates(em.tree_model, joints.lower, joints.upper)
    y0 = np.concatenate([np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)])
    status = f"{method}, rtol {rtol:g}, atol {atol:g}"
    if not len(limits[0]):
        close, run = integrate_partitioned(em, torque, duration, t_eval, method, rtol, atol, progress, closure_tol)
        Y, segments = run(close(y0))
        return closed_chain_result(em, t_eval, Y[:, :em.nq], Y[:, em.nq:], f"{status}, {segments} partition segments",
                                   closure_tol)
    close, run = integrate_partitioned_with_stops(em, torque, duration, t_eval, method, rtol, atol, progress,
                                                  closure_tol, limits)
    t, Y, segments, contacts = run(close(y0))
    result = closed_chain_result(em, t, Y[:, :em.nq], Y[:, em.nq:], f"{status}, {segments} segments"
                                 + (f", {contacts} joint limit contacts" if contacts else ""), closure_tol)
    return replace(result, limit_contacts=contacts, dissipative=bool(contacts))
