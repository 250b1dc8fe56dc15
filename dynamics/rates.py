"""Configuration rates: ``q_dot = f(q, v)`` for every joint type.

The derivative of :func:`dynamics.kinematics.integrate` at dt = 0, written in
closed form so that ``y = [q, v]`` can be integrated by any ODE solver:

* revolute, continuous, prismatic, cylindrical, universal: ``q_dot = v``;
* spherical: ``quat_dot = 1/2 quat (x) [0, omega]`` (omega in the body frame);
* free: ``p_dot = R(quat) v_lin`` (v in the body frame, angular first) and the
  quaternion as for spherical;
* planar: ``(x, y)_dot = Rot(theta) (vx, vy)``, ``theta_dot = omega``.

``stabilise = k`` adds ``k (1 - |quat|^2) quat`` to each quaternion rate: zero on
the unit sphere, it pulls a drifting quaternion back to it (a standard
constraint stabilisation for Euler parameters).
"""

from __future__ import annotations

import numpy as np

from .batch import out
from .batch import as_batch
from .model import SKOModel
from .spatial import quat_multiply, quat_to_matrix_batch


#: the simulators' ``stabilise`` gain (1/s): quaternions drift back to the unit sphere in ~0.1 s
QUATERNION_GAIN = 10.0


def _quaternion_rate(quat, omega, stabilise: float):
    pure = np.concatenate([np.zeros(omega.shape[:-1] + (1,)), omega], axis=-1)
    rate = 0.5 * quat_multiply(quat, pure)
    if stabilise:
        rate = rate + stabilise * (1.0 - np.sum(quat * quat, axis=-1, keepdims=True)) * quat
    return rate


def configuration_rate(model: SKOModel, q, v, stabilise: float = 0.0):
    """``q_dot`` for configuration q (nq,) or (B, nq) and velocity v (nv,) or (B, nv)."""
    qb, single = as_batch(q, model.nq, "q")
    vb, _ = as_batch(v, model.nv, "v")
    qd = np.zeros(np.broadcast_shapes(qb.shape[:1], vb.shape[:1]) + (model.nq,))
    for t, (_, qc, vc) in model.groups.items():
        qg, vg = qb[:, qc], vb[:, vc]
        if t == "spherical":
            qd[:, qc] = _quaternion_rate(qg, vg, stabilise)
        elif t == "free":
            R = quat_to_matrix_batch(qg[..., 3:7])
            pos = (R @ vg[..., 3:6, None])[..., 0]
            qd[:, qc] = np.concatenate([pos, _quaternion_rate(qg[..., 3:7], vg[..., :3], stabilise)], axis=-1)
        elif t == "planar":
            c, s = np.cos(qg[..., 2]), np.sin(qg[..., 2])
            vx, vy = vg[..., 0], vg[..., 1]
            qd[:, qc] = np.stack([c * vx - s * vy, s * vx + c * vy, vg[..., 2]], axis=-1)
        elif qc.size:
            qd[:, qc] = vg
    return out(qd, single)
