"""Batches of configurations: one home for how the public functions take one configuration ``(nq,)`` or a
batch ``(B, nq)`` (and the states the rigid-body functions share)."""

from __future__ import annotations

import numpy as np

from .model import SKOModel, gravity_acceleration, velocity_terms, weights


def as_batch(x, width: int, name: str = "array"):
    """(width,) or (B, width) -> ((B, width) float array, was_single)."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[None]
        single = True
    elif x.ndim == 2:
        single = False
    else:
        raise ValueError(f"{name} must have shape ({width},) or (B, {width}), got {x.shape}")
    if x.shape[1] != width:
        raise ValueError(f"{name} must have {width} columns, got {x.shape[1]}")
    return x, single


def each_configuration(func, model, *arrays):
    """Apply a single-configuration function to (nq,) inputs or row by row to (B, .) batches."""
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    if all(a.ndim == 1 for a in arrays):
        return func(model, *arrays)
    batch = max(a.shape[0] for a in arrays if a.ndim == 2)
    rows = [np.broadcast_to(a, (batch, a.shape[-1])) for a in arrays]
    return np.stack([func(model, *row) for row in zip(*rows)])


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
