"""Compiled fixed-step simulation of a rigid-body tree: the whole loop in one kernel (numba).

State ``(q, v)``; the acceleration is the compiled ABA (the entry :func:`entry_kernels.aba`) with
joint forces ``tau - damping * v`` (viscous joint damping, per velocity coordinate;
rotor armature is part of the model).  Configurations move on each joint's group by
the exponential map of :func:`dynamics.joints.integrate` (``q (+) dt v``: SO(3) for
spherical, SE(2) for planar, SE(3) for free joints), so quaternions stay unit.

Integrators (``method``):

* 0 -- semi-implicit (symplectic) Euler: ``v+ = v + dt a(q, v)``, ``q+ = q (+) dt v+``;
* 1 -- RK4, as Runge-Kutta-Munthe-Kaas on the joint groups: ``q_i = q (+) theta_i``
  with ``theta`` the RK4 combination of ``k_i = dt dexp^-1_{-theta_i}(v_i)``, where
  ``dexp^-1_{-theta}(xi) = xi + [theta, xi] / 2 + [theta, [theta, xi]] / 12`` (the
  brackets of so(3), se(2), se(3); zero for the other joints), so that it is fourth
  order on the groups as well (Munthe-Kaas, BIT 38, 1998).

Joint limits are hard stops applied after every step (:func:`enforce_limits`): a
coordinate past its limit is put back on it and a perfectly inelastic impulse through
``M^-1`` stops its outward velocity.  An impact inside a step costs that step its
order (the error of an impact is O(dt), as for every time-stepping scheme).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..tolerances import SMALL_ANGLE
from . import entry_kernels as ek
from .fields import model_fields
from .jit import kernel
from .spatial_kernels import FREE, PLANAR, SPHERICAL

SEMI_IMPLICIT_EULER, RK4 = 0, 1

#: scratch of :func:`step`: forces, theta (nv,); a, vs, ks (4, nv): the stages' accelerations,
#: velocities and group increments; qs (nq,) a stage's configuration; x, y, z (6,) Lie brackets
StepScratch = namedtuple("StepScratch", ["forces", "theta", "a", "vs", "ks", "qs", "x", "y", "z"])
#: scratch of :func:`enforce_limits` (nv,) each: zero velocities, a unit force, aba(q, 0, 0), a column of M^-1
LimitScratch = namedtuple("LimitScratch", ["zero", "unit", "a0", "col"])


@kernel
def quaternion_times_exp(q, o, w0, w1, w2, out):
    """``out[o:o+4] = q[o:o+4] (x) exp(w)``, normalised; w the rotation vector (3,) in the body frame."""
    th = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    c = np.cos(0.5 * th)
    s = 0.5 - th * th / 48.0 if th < SMALL_ANGLE else np.sin(0.5 * th) / th
    b0, b1, b2, b3 = c, s * w0, s * w1, s * w2
    a0, a1, a2, a3 = q[o], q[o + 1], q[o + 2], q[o + 3]
    r0 = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
    r1 = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
    r2 = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
    r3 = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0
    n = 1.0 / np.sqrt(r0 * r0 + r1 * r1 + r2 * r2 + r3 * r3)
    out[o], out[o + 1], out[o + 2], out[o + 3] = r0 * n, r1 * n, r2 * n, r3 * n


@kernel
def integrate_free(q, o, v, ov, dt, out):
    """Free joint ``q = [p; quat]``, ``v = [omega; v]`` (body frame): SE(3) exponential of dt v."""
    w0, w1, w2 = dt * v[ov], dt * v[ov + 1], dt * v[ov + 2]
    u0, u1, u2 = dt * v[ov + 3], dt * v[ov + 4], dt * v[ov + 5]
    t2 = w0 * w0 + w1 * w1 + w2 * w2
    t = np.sqrt(t2)
    if t < 1e-5:
        a, b = 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    else:
        a, b = (1.0 - np.cos(t)) / t2, (t - np.sin(t)) / (t2 * t)
    x0, x1, x2 = w1 * u2 - w2 * u1, w2 * u0 - w0 * u2, w0 * u1 - w1 * u0
    y0, y1, y2 = w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0
    d0, d1, d2 = u0 + a * x0 + b * y0, u1 + a * x1 + b * y1, u2 + a * x2 + b * y2
    qw, qx, qy, qz = q[o + 3], q[o + 4], q[o + 5], q[o + 6]
    s = 1.0 / (qw * qw + qx * qx + qy * qy + qz * qz)
    r00, r01, r02 = 1 - 2 * s * (qy * qy + qz * qz), 2 * s * (qx * qy - qw * qz), 2 * s * (qx * qz + qw * qy)
    r10, r11, r12 = 2 * s * (qx * qy + qw * qz), 1 - 2 * s * (qx * qx + qz * qz), 2 * s * (qy * qz - qw * qx)
    r20, r21, r22 = 2 * s * (qx * qz - qw * qy), 2 * s * (qy * qz + qw * qx), 1 - 2 * s * (qx * qx + qy * qy)
    out[o] = q[o] + r00 * d0 + r01 * d1 + r02 * d2
    out[o + 1] = q[o + 1] + r10 * d0 + r11 * d1 + r12 * d2
    out[o + 2] = q[o + 2] + r20 * d0 + r21 * d1 + r22 * d2
    quaternion_times_exp(q, o + 3, w0, w1, w2, out)


@kernel
def integrate_planar(q, o, v, ov, dt, out):
    """Planar joint (x, y, theta): SE(2) exponential of dt (vx, vy, omega) (body-frame in-plane velocity)."""
    vx, vy, w = dt * v[ov], dt * v[ov + 1], dt * v[ov + 2]
    if abs(w) < SMALL_ANGLE:
        a, b = 1.0 - w * w / 6.0, w / 2.0
    else:
        a, b = np.sin(w) / w, (1.0 - np.cos(w)) / w
    dx, dy = a * vx - b * vy, b * vx + a * vy
    c, s = np.cos(q[o + 2]), np.sin(q[o + 2])
    out[o] = q[o] + c * dx - s * dy
    out[o + 1] = q[o + 1] + s * dx + c * dy
    out[o + 2] = q[o + 2] + w


@kernel
def integrate(kind, q_off, v_off, q, v, dt, out):
    """``out = q (+) dt v`` joint by joint (see :func:`dynamics.joints.integrate`)."""
    for k in range(kind.shape[0]):
        o, ov, kd = q_off[k], v_off[k], kind[k]
        if kd == SPHERICAL:
            quaternion_times_exp(q, o, dt * v[ov], dt * v[ov + 1], dt * v[ov + 2], out)
        elif kd == FREE:
            integrate_free(q, o, v, ov, dt, out)
        elif kd == PLANAR:
            integrate_planar(q, o, v, ov, dt, out)
        else:
            for i in range(q_off[k + 1] - o):
                out[o + i] = q[o + i] + dt * v[ov + i]


@kernel
def add_bracket(kind, o, x, y, scale, out):
    """``out[o:] += scale [x, y]`` for the joint's Lie algebra (x, y (6,) locals of its velocity)."""
    if kind == SPHERICAL or kind == FREE:
        out[o] += scale * (x[1] * y[2] - x[2] * y[1])
        out[o + 1] += scale * (x[2] * y[0] - x[0] * y[2])
        out[o + 2] += scale * (x[0] * y[1] - x[1] * y[0])
    if kind == FREE:
        out[o + 3] += scale * (x[1] * y[5] - x[2] * y[4] - y[1] * x[5] + y[2] * x[4])
        out[o + 4] += scale * (x[2] * y[3] - x[0] * y[5] - y[2] * x[3] + y[0] * x[5])
        out[o + 5] += scale * (x[0] * y[4] - x[1] * y[3] - y[0] * x[4] + y[1] * x[3])
    if kind == PLANAR:
        out[o] += scale * (-x[2] * y[1] + y[2] * x[1])
        out[o + 1] += scale * (x[2] * y[0] - y[2] * x[0])


@kernel
def set_dexp_inverse(kind, v_off, theta, xi, scale, out, x, y, z):
    """``out = scale (xi + [theta, xi] / 2 + [theta, [theta, xi]] / 12)`` joint by joint; x, y, z (6,) scratch."""
    for k in range(kind.shape[0]):
        o, n, kd = v_off[k], v_off[k + 1] - v_off[k], kind[k]
        for i in range(n):
            out[o + i] = scale * xi[o + i]
        if kd != SPHERICAL and kd != FREE and kd != PLANAR:
            continue
        for i in range(n):
            x[i], y[i], z[i] = theta[o + i], xi[o + i], 0.0
        add_bracket(kd, 0, x, y, 1.0, z)
        add_bracket(kd, o, x, z, scale / 12.0, out)
        for i in range(n):
            out[o + i] += 0.5 * scale * z[i]


@kernel
def acceleration(P, q, v, tau, damping, forces, f_ext, out):
    """``out = aba(q, v, tau - damping * v)``; P: the packed arrays ``(ints, floats, work)``;
    ``forces`` (nv,) scratch."""
    ints, floats, work = P
    for i in range(v.shape[0]):
        forces[i] = tau[i] - damping[i] * v[i]
    ek.aba(ints, floats, work, q, v, forces, f_ext, out)


@kernel
def inverse_inertia_column(P, q, j, zero, unit, a0, none, out):
    """``out = M(q)^-1 e_j`` as ``aba(q, 0, e_j) - aba(q, 0, 0)`` (gravity cancels); a0 = aba(q, 0, 0);
    none: an empty (0, 6) array of external forces."""
    ints, floats, work = P
    unit[:] = 0.0
    unit[j] = 1.0
    ek.aba(ints, floats, work, q, zero, unit, none, out)
    for i in range(out.shape[0]):
        out[i] -= a0[i]


@kernel
def enforce_limits(P, q, v, limit_q, limit_v, lower, upper, at_limit, scratch, none):
    """Hard joint stops after a step: returns the number of new contacts with a limit.

    A coordinate beyond its limit is put back on it; if its velocity points out of the
    range, a perfectly inelastic impulse ``dv = M^-1 e_j p`` with ``p = -v_j / (M^-1)_jj``
    stops it (the least kinetic energy change that zeroes v_j; Moreau's time stepping).
    Several coordinates on their limits are resolved by projected Gauss-Seidel sweeps
    (each impulse pushes only into the range).  scratch: a :data:`LimitScratch`; none: empty (0, 6)
    external forces.
    """
    ints, floats, work = P
    zero, unit, a0, col = scratch.zero, scratch.unit, scratch.a0, scratch.col
    zero[:] = 0.0
    events, have_a0 = 0, False
    for sweep in range(20):
        moved = False
        for l in range(limit_q.shape[0]):
            i, j = limit_q[l], limit_v[l]
            below, above = q[i] < lower[l], q[i] > upper[l]
            if not (below or above or at_limit[l]):
                continue
            if below or above:
                q[i] = lower[l] if below else upper[l]
                if not at_limit[l]:
                    events += 1
                at_limit[l] = True
                have_a0 = False
            on_lower = q[i] <= lower[l]
            if not ((on_lower and v[j] < 0.0) or (not on_lower and q[i] >= upper[l] and v[j] > 0.0)):
                continue
            if not have_a0:
                ek.aba(ints, floats, work, q, zero, zero, none, a0)
                have_a0 = True
            inverse_inertia_column(P, q, j, zero, unit, a0, none, col)
            p = -v[j] / col[j]
            for k in range(v.shape[0]):
                v[k] += p * col[k]
            v[j] = 0.0
            moved = True
        if not moved:
            break
    for l in range(limit_q.shape[0]):
        if lower[l] < q[limit_q[l]] < upper[l]:
            at_limit[l] = False
    return events


@kernel
def step(P, joints, q, v, tau, damping, dt, method, qn, vn, scratch, none):
    """One step ``(q, v) -> (qn, vn)`` of the integrator ``method``; P: the packed arrays ``(ints, floats,
    work)``, joints: ``(kind, q_offset, v_offset)``; scratch: a :data:`StepScratch`; none: empty (0, 6)
    external forces."""
    kind, q_off, v_off = joints
    nv = v.shape[0]
    forces, theta, a, vs, ks, qs = scratch.forces, scratch.theta, scratch.a, scratch.vs, scratch.ks, scratch.qs
    if method == SEMI_IMPLICIT_EULER:
        acceleration(P, q, v, tau, damping, forces, none, a[0])
        for i in range(nv):
            vn[i] = v[i] + dt * a[0, i]
        integrate(kind, q_off, v_off, q, vn, dt, qn)
        return
    acceleration(P, q, v, tau, damping, forces, none, a[0])
    for i in range(nv):
        ks[0, i] = dt * v[i]
    for stage in range(1, 4):
        c = 1.0 if stage == 3 else 0.5
        for i in range(nv):
            vs[stage, i] = v[i] + c * dt * a[stage - 1, i]
            theta[i] = c * ks[stage - 1, i]
        integrate(kind, q_off, v_off, q, theta, 1.0, qs)
        acceleration(P, qs, vs[stage], tau, damping, forces, none, a[stage])
        set_dexp_inverse(kind, v_off, theta, vs[stage], dt, ks[stage], scratch.x, scratch.y, scratch.z)
    for i in range(nv):
        theta[i] = (ks[0, i] + 2.0 * ks[1, i] + 2.0 * ks[2, i] + ks[3, i]) / 6.0
        vn[i] = v[i] + dt * (a[0, i] + 2.0 * a[1, i] + 2.0 * a[2, i] + a[3, i]) / 6.0
    integrate(kind, q_off, v_off, q, theta, 1.0, qn)


@kernel
def simulate(ints, floats, work, q0, v0, tau, damping, limit_q, limit_v, lower, upper, dt, steps, stride, method,
             Q, V):
    """Fixed-step trajectory from (q0, v0) of the tree of the packed ``ints``, ``floats`` (work: a Data's
    work array); returns the number of limit contacts.

    tau, damping (nv,); limits (L,): q and v index of each limited coordinate and its
    range (see :func:`enforce_limits`).  Every ``stride``-th state is written to
    Q (steps // stride + 1, nq) and V (steps // stride + 1, nv).
    """
    m = model_fields(ints, floats)
    P, joints = (ints, floats, work), (m.kind, m.q_offset, m.v_offset)
    nq, nv = q0.shape[0], v0.shape[0]
    scratch = StepScratch(forces=np.empty(nv), theta=np.empty(nv), a=np.empty((4, nv)), vs=np.empty((4, nv)),
                          ks=np.empty((4, nv)), qs=np.empty(nq), x=np.zeros(6), y=np.zeros(6), z=np.zeros(6))
    limit_scratch = LimitScratch(zero=np.empty(nv), unit=np.empty(nv), a0=np.empty(nv), col=np.empty(nv))
    none = np.zeros((0, 6))
    at_limit = np.zeros(limit_q.shape[0], dtype=np.bool_)
    q, v, qn, vn = q0.copy(), v0.copy(), np.empty(nq), np.empty(nv)
    events = enforce_limits(P, q, v, limit_q, limit_v, lower, upper, at_limit, limit_scratch, none)
    Q[0], V[0] = q, v
    for s in range(steps):
        step(P, joints, q, v, tau, damping, dt, method, qn, vn, scratch, none)
        q, qn, v, vn = qn, q, vn, v
        if limit_q.shape[0] > 0:
            events += enforce_limits(P, q, v, limit_q, limit_v, lower, upper, at_limit, limit_scratch, none)
        if (s + 1) % stride == 0:
            Q[(s + 1) // stride], V[(s + 1) // stride] = q, v
    return events
