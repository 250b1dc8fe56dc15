"""Helpers shared by the model-level (rigid-body) public functions: batching and state."""

from __future__ import annotations

import numpy as np

from .model import SKOModel, as_batch, gravity_acceleration, velocity_terms, weights


def prepare(model: SKOModel, q, v=None):
    """q (nq,)|(B, nq), v (nv,)|(B, nv) -> (qb, vb, single, w, V, a, b, a_gravity).

    ``a``, ``b``, ``V`` are (B, n, 6) arrays; None when v is None.
    """
    qb, single = as_batch(q, model.nq, "q")
    w = weights(model, qb)
    ag = gravity_acceleration(model, w)
    if v is None:
        return qb, None, single, w, None, None, None, ag
    vb, s2 = as_batch(v, model.nv, "v")
    qb, vb = broadcast(qb, vb)
    if qb.shape[0] != w.batch:
        w = weights(model, qb)
        ag = gravity_acceleration(model, w)
    V, a, b = velocity_terms(model, w, qb, vb)
    return qb, vb, single and s2, w, V, a, b, ag


def broadcast(*arrays):
    """Broadcast (B|1, .) arrays to a common batch size."""
    B = max(x.shape[0] for x in arrays)
    return tuple(np.broadcast_to(x, (B,) + x.shape[1:]) if x.shape[0] != B else x for x in arrays)


def external_forces(model: SKOModel, f_ext, batch: int):
    """f_ext None | (n, 6) | (B, n, 6) -> (B, n, 6) or None."""
    if f_ext is None:
        return None
    f = np.asarray(f_ext, dtype=float)
    if f.ndim == 2:
        f = f[None]
    if f.shape[1:] != (model.n_bodies, 6):
        raise ValueError(f"f_ext must have shape (n_bodies, 6) or (B, n_bodies, 6), got {f.shape}")
    return np.broadcast_to(f, (batch,) + f.shape[1:])


def out(x, single):
    return x[0] if single else x


def node_list(arr):
    """(B, n, m) array -> list of (B, m) views."""
    return [arr[:, k] for k in range(arr.shape[1])]
