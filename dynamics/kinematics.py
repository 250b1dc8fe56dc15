"""Configuration-space operations and forward kinematics.

* :func:`integrate` -- ``q (+) v dt`` with each joint's exponential map
  (:mod:`dynamics.joints`); quaternions stay unit.
* :func:`difference` -- its inverse, ``v`` with ``integrate(q0, v, 1) = q1``.
* :func:`body_poses` -- world pose of every body frame by the base-to-tips
  scatter ``T_0k = T_0,parent(k) T_parent(k),k`` (the pose counterpart of
  seed 001 Lemma 2).
* :func:`body_velocities` -- ``V = phi* H* v`` (seed 002 Eq. 10), body frames.
"""

from __future__ import annotations

import numpy as np

from . import joints as J
from .batch import out, prepare
from .batch import as_batch
from .model import SKOModel, relative_poses

__all__ = ["integrate", "difference", "normalize", "body_poses", "body_velocities", "random_configuration",
           "center_of_mass"]


def integrate(model: SKOModel, q, v, dt=1.0):
    """``q (+) v dt``: q (nq,)|(B, nq), v (nv,)|(B, nv), dt scalar -> same batch shape as inputs."""
    qb, s1 = as_batch(q, model.nq, "q")
    vb, s2 = as_batch(v, model.nv, "v")
    B = max(qb.shape[0], vb.shape[0])
    qb = np.broadcast_to(qb, (B, model.nq))
    vb = np.broadcast_to(vb, (B, model.nv)) * dt
    res = np.array(qb, dtype=float, copy=True)
    for t, (idx, qc, vc) in model.groups.items():
        if t == "fixed":
            continue
        res[:, qc] = J.integrate(t, qb[:, qc], vb[:, vc])
    return out(res, s1 and s2)


def difference(model: SKOModel, q0, q1):
    """Tangent vector ``v`` (nv,)|(B, nv) with ``integrate(model, q0, v, 1) == q1``."""
    a, s1 = as_batch(q0, model.nq, "q0")
    b, s2 = as_batch(q1, model.nq, "q1")
    B = max(a.shape[0], b.shape[0])
    a = np.broadcast_to(a, (B, model.nq))
    b = np.broadcast_to(b, (B, model.nq))
    res = np.zeros((B, model.nv))
    for t, (idx, qc, vc) in model.groups.items():
        if t == "fixed":
            continue
        res[:, vc] = J.difference(t, a[:, qc], b[:, qc])
    return out(res, s1 and s2)


def normalize(model: SKOModel, q):
    """Project q onto the configuration manifold (normalise quaternions)."""
    qb, s = as_batch(q, model.nq, "q")
    res = qb.copy()
    for t, (idx, qc, vc) in model.groups.items():
        res[:, qc] = J.normalize(t, qb[:, qc])
    return out(res, s)


def random_configuration(model: SKOModel, rng=None, scale=1.0, batch=None):
    """``integrate(neutral, scale * N(0, 1))``: (nq,) or (batch, nq)."""
    rng = np.random.default_rng(rng)
    v = rng.normal(size=(model.nv,) if batch is None else (batch, model.nv)) * scale
    return integrate(model, model.neutral(), v, 1.0)


def body_poses(model: SKOModel, q):
    """World pose of every body frame.

    Parameters
    ----------
    q : (nq,) or (B, nq)

    Returns
    -------
    R : (n, 3, 3) or (B, n, 3, 3) -- orientation of body k in the ground frame
    p : (n, 3) or (B, n, 3) -- origin of body k in the ground frame, m
    """
    qb, s = as_batch(q, model.nq, "q")
    Rr, pr = relative_poses(model, qb)
    R = np.empty_like(Rr)
    p = np.empty_like(pr)
    # base-to-tips scatter
    for k in range(model.n_bodies):
        j = model.parent[k]
        if j < 0:
            R[:, k] = Rr[:, k]
            p[:, k] = pr[:, k]
        else:
            R[:, k] = R[:, j] @ Rr[:, k]
            p[:, k] = p[:, j] + (R[:, j] @ pr[:, k, :, None])[..., 0]
    return (R[0], p[0]) if s else (R, p)


def body_velocities(model: SKOModel, q, v):
    """Spatial velocities ``V = phi* H* v`` (seed 002 Eq. 10) of all bodies, body frames, (B?, n, 6)."""
    qb, vb, single, w, V, *_ = prepare(model, q, v)
    return out(V, single)


def center_of_mass(model: SKOModel, q):
    """World position of the system's centre of mass, (3,) or (B, 3), m."""
    qb, s = as_batch(q, model.nq, "q")
    R, p = body_poses(model, qb)
    c = p + (R @ model.com[..., None])[..., 0]
    com = np.einsum("k,bkj->bj", model.mass, c) / model.mass.sum()
    return out(com, s)
