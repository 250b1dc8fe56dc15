"""Fixed-step simulation: RK4 or semi-implicit Euler at a step ``dt``.

Trees run compiled end to end (:func:`dynamics.compiled.simulate_api.simulate_fixed_step`:
RK4 on the joint groups, damping and joint stops inside the kernel); under the numpy backend (a
first use while the kernels compile elsewhere, ``dispatch.backend("numpy")``) its numpy twin
:func:`numpy_fixed_step` takes the same steps with the numpy ABA.  Closed chains step
the full state ``[q, v]`` of the constraint-embedded model and make it consistent (loops closed by
Newton's method, dependent velocities from the independent ones, the split re-chosen at each state,
:mod:`.closed`) after every step and at every stage, so the closure error stays at the Newton
tolerance; joint limits are inelastic stops through the constraints (:mod:`.stops`), met at the end
of the step that crosses them (:func:`closed_chain_stops`).
That loop runs compiled as well (:func:`dynamics.compiled.simulate_api.closed_chain_stepper`,
the whole trajectory in one kernel call) where it applies; :func:`closed_chain_step` is its
numpy reference and takes the steps the kernel declines, with the forward dynamics of
:mod:`dynamics.dispatch`.

The step is rounded down so that the output samples fall on steps:
``dt_used = (duration / (samples - 1)) / ceil(duration / (samples - 1) / dt)``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace

import numpy as np

from .. import forward_dynamics
from ..kinematics import normalize
from ..rates import QUATERNION_GAIN, configuration_rate
from ..aba import forward_dynamics as numpy_forward_dynamics
from ..dispatch import algorithm, current_backend
from ..forces import motor_names
from ..joints import JOINTS, has_quaternion
from ..kinematics import integrate as group_integrate
from ..closed.embedding import loop_closure, terms_at
from ..tolerances import PARTITION_RCOND_RATIO, SIMULATION_CLOSURE_TOL, STEP_GRID_RTOL
from .closed import closed_chain_result, closed_chain_rhs
from .activations import initial_activations
from .motors import component_rates, component_result, initial_components
from .passive import JointProperties, coordinate_rates, damped
from .stops import StopSet, constrained_acceleration
from .result import SimulationResult, coordinate_columns, energies

logger = logging.getLogger(__name__)

#: integrator names -> code of the fixed-step integrators
FIXED_STEP = {"rk4": "rk4", "euler": "semi-implicit-euler"}

#: step of the fixed-step integrators when none is given, s
DEFAULT_DT = 1e-3

#: most fixed steps of one simulation
MAX_STEPS = 10_000_000


def step_grid(duration: float, samples: int, dt: float | None) -> tuple[float, int, int]:
    """(dt_used, steps per sample, number of steps) for ``samples`` output samples over ``duration``."""
    interval = duration / (samples - 1)
    per_sample = max(1, math.ceil(interval / (dt or DEFAULT_DT) * (1.0 - STEP_GRID_RTOL)))
    return interval / per_sample, per_sample, per_sample * (samples - 1)


def too_many_steps(duration: float, samples: int, dt: float | None) -> str | None:
    """Why ``dt`` cannot be used (more than :data:`MAX_STEPS` steps), or None."""
    steps = step_grid(duration, samples, dt)[2]
    if steps > MAX_STEPS:
        return f"dt {dt:g} s takes {steps:,} steps over {duration:g} s; at most {MAX_STEPS:,} (use a larger dt)"
    return None


def constant_torque(torque, nv: int) -> np.ndarray:
    """The constant joint forces of ``torque`` (None, an (nv,) array, or f(t, q, v) that ignores its
    arguments, as the pipeline's constant torques are)."""
    if torque is None:
        return np.zeros(nv)
    if callable(torque):
        raise TypeError("the compiled fixed-step simulator takes constant joint forces (an (nv,) array)")
    return np.asarray(torque, dtype=float).reshape(nv)


#: |h lambda| on the negative real axis and |h omega| on the imaginary axis where each integrator stops
#: being stable: RK4's stability region (2.785, 2.828), semi-implicit Euler's (2, 2)
STABILITY_LIMITS = {"rk4": (2.785, 2.828), "euler": (2.0, 2.0)}


def stability_warning(model, joints: JointProperties, q0, dt: float, method: str) -> str | None:
    """The warning a fixed-step run of a tree with state-dependent forces gets when ``dt`` is beyond the
    stability of ``method`` for a coordinate's damping, friction or springs (:func:`.passive.coordinate_rates`,
    each coordinate alone), naming the coordinates and the largest stable step; None otherwise."""
    rates, omegas = coordinate_rates(model, joints, q0)
    real, imaginary = STABILITY_LIMITS["rk4" if method == "rk4" else "euler"]
    need = np.maximum(rates / real, omegas / imaginary)
    worst = np.flatnonzero(need * dt > 1.0)
    if not len(worst):
        return None
    tree = model.tree_model
    names = [c.split("[")[0] for c in coordinate_columns(tree, rate=True)]     # the joint of each velocity
    order = worst[np.argsort(-need[worst])]
    shown = ", ".join(names[i] for i in order[:5]) + (f" and {len(order) - 5} more" if len(order) > 5 else "")
    return (f"{method} at dt {dt:.3g} s is beyond its stability for the damping, friction or springs of {shown} "
            f"(rates up to {max(rates.max(), omegas.max()):.3g}/s): the motion there is wrong; use dt below "
            f"{1.0 / need.max():.2g} s or the adaptive integrator")


def simulate_tree_fixed_step(model, q0, v0, duration, samples, torque, method, dt, joints: JointProperties,
                             progress=None, closure_tol=None):
    """Fixed-step simulation of a tree; returns a SimulationResult (``closure_tol`` unused).

    Constant joint forces (None or (nv,)) run the compiled loop (:func:`numpy_fixed_step` under the numpy
    backend); forces f(t, q, v) (joint springs, friction, servos: :func:`.passive.with_force_elements`)
    run :func:`state_fixed_step`, which evaluates them at every stage with the forward dynamics of
    :mod:`dynamics.dispatch` (the compiled ABA, or the numpy one under the numpy backend)."""
    from ..compiled.simulate_api import limited_coordinates, simulate_fixed_step   # numba on first use

    dt_used, stride, steps = step_grid(duration, samples, dt)
    if callable(torque):
        forces = damped(torque, joints.damping, model.nv)
        forward = algorithm(model, "forward_dynamics")

        def rates(t, q, v, x):
            return forward(model, q, v, forces(t, q, v), f_ext=None, data=None), x

        warning = stability_warning(model, joints, q0, dt_used, method)
        if warning:
            logger.warning(warning)
        run, _ = state_fixed_step(model, q0, v0, np.zeros(0), dt_used, steps, method, rates,
                                  limited_coordinates(model, joints.lower, joints.upper), stride, progress=progress)
    else:
        fixed = numpy_fixed_step if current_backend() == "numpy" else simulate_fixed_step
        run = fixed(model, q0, v0, dt_used, steps, FIXED_STEP[method], constant_torque(torque, model.nv),
                    joints.damping, joints.lower, joints.upper, stride=stride)
    if progress is not None:
        progress(1.0)
    energy, kinetic = energies(model, run.Q, run.V)
    status = f"{method}, {steps} steps of {dt_used:.6g} s"
    if run.limit_contacts:
        status += f", {run.limit_contacts} joint limit contacts"
    return SimulationResult(t=np.linspace(0.0, duration, samples), q=run.Q, v=run.V, energy=energy,
                            columns=coordinate_columns(model), velocity_columns=coordinate_columns(model, rate=True),
                            status=status, limit_contacts=run.limit_contacts, kinetic=kinetic,
                            dissipative=bool(run.limit_contacts))


def simulate_tree_fixed_step_with_components(model, q0, v0, duration, samples, torque, method, dt,
                                             joints: JointProperties, progress=None, voltage=None, currents=None,
                                             ctrl=None, act0=None) -> SimulationResult:
    """Fixed-step simulation of a tree with DC motors or actuator activations: the state ``[q, v, i, act]``
    of :mod:`.motors` (:func:`.motors.component_rates`, the adaptive integrator's right-hand side) stepped by
    :func:`state_fixed_step`.  Activations with a range are clamped to it after each step and not within
    its stages, as MuJoCo's step does (``mj_RungeKutta``, ``mj_Euler`` -> ``mj_advance``; its forces and
    ``act_dot`` take the stage's activation unclamped), so that rk4 here is MuJoCo's RK4 on these states;
    joint limits are stops after each step.  Arguments as :func:`.motors.simulate_tree_with_motors`."""
    from ..compiled.simulate_api import limited_coordinates   # compiles nothing

    dt_used, stride, steps = step_grid(duration, samples, dt)
    nm = len(motor_names(model))
    rates = component_rates(model, torque, joints, voltage, ctrl, held=False)
    warning = stability_warning(model, joints, q0, dt_used, method)
    if warning:
        logger.warning(warning)

    def hold(x):
        return np.concatenate([x[:nm], initial_activations(model, x[nm:])])

    run, X = state_fixed_step(model, q0, v0, initial_components(model, currents, act0), dt_used, steps, method,
                              rates, limited_coordinates(model, joints.lower, joints.upper), stride, hold, progress)
    status = f"{method}, {steps} steps of {dt_used:.6g} s"
    if run.limit_contacts:
        status += f", {run.limit_contacts} joint limit contacts"
    return component_result(model, np.linspace(0.0, duration, samples), run.Q, run.V, X, status,
                            limit_contacts=run.limit_contacts)


def _bracket(jtype: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``[x, y]`` in the Lie algebra of a joint's group (x, y: its velocity coordinates, angular first
    for free joints, ``(vx, vy, w)`` for planar ones); zero for the joints whose group is abelian
    (the numpy twin of :func:`dynamics.compiled.simulate_kernels.add_bracket`)."""
    out = np.zeros_like(y)
    if has_quaternion(jtype):
        out[:3] = np.cross(x[:3], y[:3])
    if jtype == "free":
        out[3:6] = np.cross(x[:3], y[3:6]) - np.cross(y[:3], x[3:6])
    if jtype == "planar":
        out[0], out[1] = y[2] * x[1] - x[2] * y[1], x[2] * y[0] - y[2] * x[0]
    return out


def _dexp_inverse(model, theta, xi, scale):
    """``scale (xi + [theta, xi] / 2 + [theta, [theta, xi]] / 12)`` joint by joint (Munthe-Kaas, BIT 38,
    1998; :func:`dynamics.compiled.simulate_kernels.set_dexp_inverse`)."""
    out = scale * xi
    for k, jtype in enumerate(model.joint_types):
        if not JOINTS[jtype].euclidean:
            sl = slice(int(model.v_offset[k]), int(model.v_offset[k + 1]))
            inner = _bracket(jtype, theta[sl], xi[sl])
            out[sl] += scale * (0.5 * inner + _bracket(jtype, theta[sl], inner) / 12.0)
    return out


def _euclidean(model) -> bool:
    """True when every joint of the tree has ``q_dot = v`` (``q (+) dt v = q + dt v``, no brackets)."""
    return model.nq == model.nv and all(JOINTS[t].euclidean for t in model.joint_types)


def _rkmk_step(model, t, q, v, x, dt, method, rates, euclidean=False):
    """One step of the state ``(q, v, x)`` (``x`` Euclidean states beside the mechanics: motor currents,
    activations; (0,) when none): RK4 as Runge-Kutta-Munthe-Kaas on the joint groups, classic RK4 on ``v``
    and ``x``, or semi-implicit Euler (``v+ = v + dt a``, ``x+ = x + dt x_dot``, ``q+ = q (+) dt v+``); the
    steps of :func:`dynamics.compiled.simulate_kernels.step`.  ``rates(t, q, v, x) -> (a (nv,), x_dot)``;
    ``euclidean`` (:func:`_euclidean`): the group operations are sums (classic RK4 on ``q`` too)."""
    move = (lambda q0, w, h=1.0: q0 + h * w) if euclidean else (lambda q0, w, h=1.0: group_integrate(model, q0, w, h))
    if method != "rk4":
        a, xd = rates(t, q, v, x)
        vn = v + dt * a
        return move(q, vn, dt), vn, x + dt * xd
    a0, xd0 = rates(t, q, v, x)
    a, xd, k = [a0], [xd0], [dt * v]
    for stage in range(1, 4):
        c = 1.0 if stage == 3 else 0.5
        vs, theta = v + c * dt * a[-1], c * k[-1]
        a_s, xd_s = rates(t + c * dt, move(q, theta), vs, x + c * dt * xd[-1])
        a.append(a_s), xd.append(xd_s)
        k.append(dt * vs if euclidean else _dexp_inverse(model, theta, vs, dt))
    theta = (k[0] + 2.0 * k[1] + 2.0 * k[2] + k[3]) / 6.0
    return (move(q, theta), v + dt * (a[0] + 2.0 * a[1] + 2.0 * a[2] + a[3]) / 6.0,
            x + dt * (xd[0] + 2.0 * xd[1] + 2.0 * xd[2] + xd[3]) / 6.0)


def _numpy_step(model, q, v, tau, damping, dt, method):
    """One step of :func:`numpy_fixed_step` (:func:`_rkmk_step` with the numpy ABA and constant forces)."""
    def rates(t, qs, vs, x):
        return numpy_forward_dynamics(model, qs, vs, tau - damping * vs), x

    q, v, _ = _rkmk_step(model, 0.0, q, v, np.zeros(0), dt, method, rates)
    return q, v


def _numpy_stops(model, q, v, limits, at_limit) -> int:
    """Hard joint stops after a step, in place (the numpy twin of
    :func:`dynamics.compiled.simulate_kernels.enforce_limits`: a coordinate past its limit is put on it,
    a perfectly inelastic impulse along ``M^-1 e_j`` stops its outward velocity, projected Gauss-Seidel
    sweeps over the coordinates on a limit); returns the number of new contacts."""
    q_index, v_index, lower, upper = limits
    zero, a0, events = np.zeros(model.nv), None, 0
    for _ in range(20):
        moved = False
        for l, (i, j) in enumerate(zip(q_index, v_index)):
            below, above = q[i] < lower[l], q[i] > upper[l]
            if not (below or above or at_limit[l]):
                continue
            if below or above:
                q[i] = lower[l] if below else upper[l]
                events += not at_limit[l]
                at_limit[l], a0 = True, None
            on_lower = q[i] <= lower[l]
            if not ((on_lower and v[j] < 0.0) or (not on_lower and q[i] >= upper[l] and v[j] > 0.0)):
                continue
            if a0 is None:
                a0 = numpy_forward_dynamics(model, q, zero, zero)
            col = numpy_forward_dynamics(model, q, zero, np.eye(model.nv)[j]) - a0
            v += (-v[j] / col[j]) * col
            v[j], moved = 0.0, True
        if not moved:
            break
    at_limit &= ~((lower < q[q_index]) & (q[q_index] < upper))
    return events


def numpy_fixed_step(model, q0, v0, dt: float, steps: int, integrator: str = "rk4", tau=None, damping=None,
                     lower=None, upper=None, stride: int = 1):
    """The numpy twin of :func:`dynamics.compiled.simulate_api.simulate_fixed_step` (same arguments but
    ``data``, same steps, stops and result, a ``FixedStepTrajectory``), on the numpy ABA (seed 001
    Algorithm 6.1): what a fixed-step run of a tree takes under the numpy backend."""
    from ..compiled.simulate_api import FixedStepTrajectory, limited_coordinates   # compiles nothing

    tau = np.zeros(model.nv) if tau is None else np.asarray(tau, dtype=float).reshape(model.nv)
    damping = np.zeros(model.nv) if damping is None else np.asarray(damping, dtype=float).reshape(model.nv)
    limits = limited_coordinates(model, lower, upper)
    method = "rk4" if integrator == "rk4" else "euler"
    rows = int(steps) // int(stride) + 1
    Q, V = np.empty((rows, model.nq)), np.empty((rows, model.nv))
    q, v = np.array(q0, dtype=float), np.array(v0, dtype=float)
    at_limit = np.zeros(len(limits[0]), dtype=bool)
    events = _numpy_stops(model, q, v, limits, at_limit)
    Q[0], V[0] = q, v
    for s in range(int(steps)):
        q, v = _numpy_step(model, q, v, tau, damping, dt, method)
        if len(limits[0]):
            events += _numpy_stops(model, q, v, limits, at_limit)
        if (s + 1) % stride == 0:
            Q[(s + 1) // stride], V[(s + 1) // stride] = q, v
    return FixedStepTrajectory(dt * stride * np.arange(rows), Q, V, int(events))


def state_fixed_step(model, q0, v0, x0, dt: float, steps: int, method: str, rates, limits, stride: int = 1,
                     hold=None, progress=None):
    """Fixed-step trajectory of a tree under state-dependent forces: ``(FixedStepTrajectory, X)``.

    The state is ``(q, v, x)``, ``x`` (n,) Euclidean states beside the mechanics (motor currents,
    activations) from ``x0``; ``rates(t, q, v, x) -> (a (nv,), x_dot (n,))`` is evaluated at every stage
    (:func:`_rkmk_step`), so springs, dampers, friction and servos are forces of the stage's state, as in
    the adaptive integrator.  ``limits`` as :func:`dynamics.compiled.simulate_api.limited_coordinates`: hard
    stops after each step (:func:`_numpy_stops`, the compiled kernel's rule); ``hold(x) -> x`` after each
    step (activations clamped to their ranges, MuJoCo's ``actlimited``).  X (K, n) is sampled with Q, V."""
    from ..compiled.simulate_api import FixedStepTrajectory   # compiles nothing

    method = "rk4" if method == "rk4" else "euler"
    rows = int(steps) // int(stride) + 1
    Q, V, X = np.empty((rows, model.nq)), np.empty((rows, model.nv)), np.empty((rows, len(x0)))
    q, v, x = np.array(q0, dtype=float), np.array(v0, dtype=float), np.array(x0, dtype=float)
    at_limit = np.zeros(len(limits[0]), dtype=bool)
    events = _numpy_stops(model, q, v, limits, at_limit) if len(limits[0]) else 0
    Q[0], V[0], X[0] = q, v, x
    euclidean = _euclidean(model)
    for s in range(int(steps)):
        q, v, x = _rkmk_step(model, s * dt, q, v, x, dt, method, rates, euclidean)
        x = x if hold is None else hold(x)
        if len(limits[0]):
            events += _numpy_stops(model, q, v, limits, at_limit)
        if (s + 1) % stride == 0:
            Q[(s + 1) // stride], V[(s + 1) // stride], X[(s + 1) // stride] = q, v, x
            if progress is not None:
                progress((s + 1) / steps)
    return FixedStepTrajectory(dt * stride * np.arange(rows), Q, V, int(events)), X


def closed_chain_step(rhs, close, nq: int, method: str, t: float, y: np.ndarray, h: float, rate) -> np.ndarray:
    """One step of the full state ``y = [q, v]``, made consistent after it (``close(y, t)``: loops closed,
    the split re-chosen at that state, :mod:`.closed`).

    rk4: classic Runge-Kutta on ``y`` (``rhs`` makes every stage consistent);
    euler: ``v+ = v + h a``, then ``q+ = q + h q_dot(q, v+)`` (``rate(q, v+)`` completes v+ at q).
    """
    if method == "rk4":
        k1 = rhs(t, y)
        k2 = rhs(t + h / 2, y + h / 2 * k1)
        k3 = rhs(t + h / 2, y + h / 2 * k2)
        k4 = rhs(t + h, y + h * k3)
        out = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    else:
        out = y.copy()
        out[nq:] = y[nq:] + h * rhs(t, y)[nq:]
        out[:nq] = y[:nq] + h * rate(y[:nq], out[nq:])
    return close(out, t + h)


def _compiled_segment(em, compiled, y, s, steps, stride, Y):
    """Run the compiled loop on ``[q, v_ind]`` (the default split) from step s with the full state y;
    copy the samples it writes into Y as full states; return (y at the step reached, that step)."""
    from ..compiled import closed_api

    yc = np.concatenate([y[:em.nq], y[em.nq:][em.independent_v]])
    Yc = np.empty((Y.shape[0], yc.size))
    reached = compiled(yc, s, steps, stride, Yc)
    for k in range(s // stride + 1, reached // stride + 1):
        Y[k] = np.concatenate([Yc[k, :em.nq], closed_api.complete_velocity(em, Yc[k, :em.nq], Yc[k, em.nq:])])
    if reached == s:
        return y, s
    return np.concatenate([yc[:em.nq], closed_api.complete_velocity(em, yc[:em.nq], yc[em.nq:])]), reached


def stepper_rcond_switch(em) -> float:
    """The decline threshold the compiled fixed-step loop gets: :data:`PARTITION_RCOND_RATIO` times the
    smallest Frobenius reciprocal condition ``1 / (|G_d|_F |G_d^-1|_F)`` of the default dependent blocks
    at the reference, the estimate the kernels check.  Integrating ``[q, v_ind]`` of the default split
    loses accuracy fast as its block degrades; below this the numpy steps, which re-partition
    (:mod:`.closed`), take over.  The closure Jacobian at the reference comes from the compiled closure rows
    (:func:`dynamics.compiled.closed_api.loop_jacobians`), the numpy closure terms under the numpy backend."""
    q = em.neutral()
    if current_backend() == "numpy":
        terms = terms_at(em, q)
        blocks = {lp.node: loop_closure(terms, lp)[1] for lp in em.loops}
    else:
        from ..compiled.closed_api import loop_jacobians     # the closure terms compiled (numba on first use)

        jacobians = loop_jacobians(em, q)
        blocks = {lp.node: jacobians[lp.node][lp.rows] for lp in em.loops}
    worst = 1.0
    for lp in em.loops:
        if len(lp.dep):
            Gd = blocks[lp.node][:, lp.dep]
            worst = min(worst, 1.0 / (np.linalg.norm(Gd) * np.linalg.norm(np.linalg.inv(Gd))))
    return PARTITION_RCOND_RATIO * worst


def closed_chain_stops(em, torque, limits, tol):
    """``(stops, rhs, close, settle)`` of a fixed-step closed chain with joint stops (:mod:`.stops`):
    ``rhs(t, y)`` and ``close(y, t)`` of :func:`.closed.closed_chain_rhs` with the held coordinates' stop
    forces in the accelerations, and ``settle(y, t)``, the consistent state after a step (coordinates
    past a stop put on it and the loops closed again, the inelastic impulse ``X M_r^-1 X^T`` through the
    constraints that stops their outward velocities, the held set chosen by the sign of the stop forces).

    A stop is met at the end of the step that crosses it (no event inside the step, as the compiled tree
    kernel's stops): the impact's time and position are accurate to the step.  ``torque`` f(t, q, v) or
    None (damping included); ``limits`` as :func:`dynamics.compiled.simulate_api.limited_coordinates`.
    """
    nq, zero = em.nq, np.zeros(em.nv)
    stops = StopSet(*limits)

    def adjust(q, v, a):
        return constrained_acceleration(em, q, a, stops.held_columns()) if stops.held else a

    rhs, close = closed_chain_rhs(em, torque, 1.0, None, tol, adjust=adjust)

    def settle(y, t):
        def a_free(q, v):
            return forward_dynamics(em, q, v, zero if torque is None else torque(t, q, v))

        def close_qv(q, v):
            yc = close(np.concatenate([q, v]), t)
            return yc[:nq], yc[nq:]

        q, v = y[:nq].copy(), y[nq:].copy()
        stops.settle(em, q, v, a_free, close=close_qv)
        return np.concatenate([q, v])

    return stops, rhs, close, settle


def simulate_closed_chain_fixed_step(em, q0, v0, duration, samples, torque, method, dt, joints: JointProperties,
                                     progress=None, closure_tol=None):
    """Fixed-step simulation of a constraint-embedded closed chain; returns a SimulationResult.

    The steps run compiled (:func:`dynamics.compiled.simulate_api.closed_chain_stepper`, state
    ``[q, v_ind]`` of the default split) for constant joint forces on the chains it takes; the steps
    its kernels decline (a default dependent block near singular ...), and every step of the other
    chains (joint couplings, joints with ``q_dot != v``, forces f(t, q, v)), run
    :func:`closed_chain_step` on the full state with the split chosen at each state (the stepper logs
    each decline at DEBUG level).  Joint limits are inelastic stops through the constraints
    (:func:`closed_chain_stops`), met at the end of a step: with limits the compiled loop takes one step
    per call and the stops are settled after it; while a stop holds its coordinate (stop forces in the
    accelerations) the numpy steps run.
    """
    from ..compiled.simulate_api import closed_chain_stepper, limited_coordinates   # numba on first use

    tree = em.tree_model
    tol = SIMULATION_CLOSURE_TOL if closure_tol is None else closure_tol
    limits = limited_coordinates(tree, joints.lower, joints.upper)
    stops, rhs, close, settle = closed_chain_stops(em, damped(torque, joints.damping, tree.nv), limits, tol)

    def rate(q, v):
        return configuration_rate(tree, q, close(np.concatenate([q, v]))[em.nq:], stabilise=QUATERNION_GAIN)

    dt_used, stride, steps = step_grid(duration, samples, dt)
    forces = torque if callable(torque) else constant_torque(torque, tree.nv)   # the stepper declines f(t, q, v)
    compiled = closed_chain_stepper(em, dt_used, FIXED_STEP[method], forces, joints.damping, tol,
                                    stepper_rcond_switch(em))
    limited = len(limits[0]) > 0
    y = close(np.concatenate([np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)]))
    y = settle(y, 0.0) if limited else y
    Y = np.empty((samples, y.size))
    Y[0] = y
    s = 0
    while s < steps:
        if compiled is not None and not stops.held:
            # free motion compiled: to the end, or one step at a time when stops may be met
            target = s + 1 if limited else steps
            y, reached = _compiled_segment(em, compiled, y, s, target, stride, Y)
            if reached > s:
                s = reached
                if limited:
                    y = settle(y, s * dt_used)
                    if s % stride == 0:
                        Y[s // stride] = y
                if progress is not None:
                    progress(s / steps)
            if reached == target:
                continue
        y = closed_chain_step(rhs, close, em.nq, method, s * dt_used, y, dt_used, rate)
        y[:em.nq] = normalize(tree, y[:em.nq])
        s += 1
        y = settle(y, s * dt_used) if limited else y
        if s % stride == 0:
            Y[s // stride] = y
            if progress is not None:
                progress(s / steps)
    status = f"{method}, {steps} steps of {dt_used:.6g} s"
    if stops.contacts:
        status += f", {stops.contacts} joint limit contacts"
    result = closed_chain_result(em, np.linspace(0.0, duration, samples), Y[:, :em.nq], Y[:, em.nq:], status, tol)
    return replace(result, limit_contacts=stops.contacts, dissipative=bool(stops.contacts))
