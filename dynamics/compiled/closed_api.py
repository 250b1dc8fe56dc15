"""Python entry of the compiled closed-chain forward dynamics (:mod:`dynamics.compiled.closed_kernels`).

The packed loop data of a :class:`dynamics.embedding.EmbeddedModel` is ``em.closed_flat``
(:class:`dynamics.compiled.closed_layout.ClosedFlat`, built once per model), its work arrays a
``em.create_data()`` (default ``em.default_data``).  :func:`forward_dynamics` is the ``embedded``
row of :data:`dynamics.dispatch.ALGORITHMS` with the contract of
:func:`dynamics.closed.embedding.forward_dynamics` (the numpy reference).
:func:`complete_configuration` and :func:`complete_velocity` are the compiled loop closure and
velocity completion (:mod:`dynamics.compiled.closure_kernels`) with the contract of
:mod:`dynamics.closed.embedding`.

States a kernel declines (a loop not closed, a dependent block near singular, Newton not
converging, see the kernel modules) and models with joint couplings go to the numpy reference
(linear couplings without loop-closing joints: the closed form of :mod:`dynamics.closed.linear`),
which raises :class:`dynamics.closed.closure.ClosureError` or switches dependent coordinates;
each decline is logged at DEBUG level on this module's logger (what ran instead, and why), or
raises :class:`dynamics.dispatch.CompiledDeclined` under ``dispatch.backend("compiled")``.  Under
``dispatch.backend("numpy")`` the closure functions run the reference directly.  Importing this
module compiles the forward-dynamics kernel (it has one signature) or loads it from numba's
cache; the dispatch table imports it on the first embedded forward-dynamics call, so
``import mbcompose`` compiles nothing.
"""

from __future__ import annotations

import logging

import numpy as np

from ..closed import embedding
from ..dispatch import current_backend, declined
from ..tolerances import CLOSURE_TOL, NEWTON_MAX_ITER, NEWTON_MAX_STEP
from . import closed_kernels as ck
from . import closure_kernels as cu

__all__ = ["forward_dynamics", "complete_configuration", "complete_velocity"]

log = logging.getLogger(__name__)

_FD = "closed-chain forward dynamics"
_FD_REFERENCE = "the numpy embedding (embedding.forward_dynamics)"
_COUPLINGS = "the model has joint couplings"


def forward_dynamics(em, q, v, tau, f_ext=None, data=None):
    """Accelerations of all tree joints of a closed chain (nv,), or (B, nv) for a batch.

    q (nq,) | (B, nq) closed configurations; v (nv,) | (B, nv) with ``G v = 0``; tau (nv,) | (B, nv)
    generalized forces at the tree joints; data: an ``em.create_data()`` (default
    ``em.default_data``).  Same results as :func:`dynamics.closed.embedding.forward_dynamics`
    (null-space projection, see :mod:`dynamics.compiled.closed_kernels`); ``f_ext`` is not supported
    on embedded models.
    """
    packed = (em.default_data if data is None else data).packed
    if packed is None and f_ext is None and em.linear_couplings is not None and np.shape(q) == (em.nq,):
        return em.linear_couplings.forward_dynamics(q, v, tau)
    if f_ext is None and packed is not None:
        out = np.empty(em.nv)
        try:
            status = ck.embedded_forward_dynamics(*packed, q, v, tau, out)
        except TypeError:                # not three writable float64 vectors: the general path below
            status = ck.BAD_SHAPE
        if status == ck.OK:
            return out
        if status != ck.BAD_SHAPE:
            declined(log, _FD, ck.DECLINED[status], _FD_REFERENCE)
            return embedding.forward_dynamics(em, q, v, tau)
    return _general(em, packed, q, v, tau, f_ext)


def complete_configuration(em, q_guess=None, tol: float = CLOSURE_TOL, max_iter: int = NEWTON_MAX_ITER, data=None):
    """Closed configuration (nq,) near ``q_guess`` (default ``em.neutral()``): the loops closed by
    Newton's method on their dependent coordinates, compiled (:func:`closure_kernels.close_loops`); as
    :func:`dynamics.closed.embedding.complete_configuration`, which runs (and raises
    :class:`dynamics.closed.closure.ClosureError`) where the kernel declines."""
    q = np.array(em.neutral() if q_guess is None else q_guess, dtype=np.float64)
    if current_backend() != "numpy":
        packed = (em.default_data if data is None else data).packed
        why = _COUPLINGS if packed is None else None
        if why is None and q.shape != (em.nq,):
            why = f"q has shape {q.shape}, not ({em.nq},)"
        if why is None:
            status = cu.close_configuration(*packed, q, float(tol), int(max_iter), NEWTON_MAX_STEP)
            if status == cu.OK:
                return q
            why = cu.DECLINED[status]
        declined(log, "loop closure", why, "the numpy Newton (embedding.complete_configuration)")
    return embedding.complete_configuration(em, q_guess, tol=tol, max_iter=max_iter)


def complete_velocity(em, q, v_ind, data=None):
    """Full joint velocities (nv,) ``X(q) v_ind`` at a closed q (nq,), v_ind (n_independent,) or
    (nv,) (its independent entries), compiled (:func:`closure_kernels.complete_velocity_at`); as
    :func:`dynamics.closed.embedding.complete_velocity`, which runs where the kernel declines."""
    if current_backend() != "numpy":
        packed = (em.default_data if data is None else data).packed
        v_i = np.array(v_ind, dtype=np.float64)
        if v_i.shape == (em.nv,):
            v_i = v_i[em.independent_v]
        qa = np.ascontiguousarray(q, dtype=np.float64)
        why = _COUPLINGS if packed is None else None
        if why is None and (v_i.shape != (em.n_independent,) or qa.shape != (em.nq,)):
            why = f"q, v_ind have shapes {qa.shape}, {v_i.shape}, not ({em.nq},), ({em.n_independent},)"
        if why is None:
            v = np.empty(em.nv)
            status = cu.velocity_completion(*packed, qa, v_i, v)
            if status == cu.OK:
                return v
            why = cu.DECLINED[status]
        declined(log, "velocity completion", why, "the numpy completion (embedding.complete_velocity)")
    return embedding.complete_velocity(em, q, v_ind)


def _one(em, packed, q, v, tau):
    out = np.empty(em.nv)
    status = ck.embedded_forward_dynamics(*packed, q, v, tau, out)
    if status != ck.OK:
        declined(log, _FD, ck.DECLINED[status], _FD_REFERENCE)
        return embedding.forward_dynamics(em, q, v, tau)
    return out


def _general(em, packed, q, v, tau, f_ext):
    """Checks, conversions and batches (one kernel call per row)."""
    if f_ext is not None:
        raise TypeError("external forces are not supported on embedded models yet")
    q, v, tau = (np.array(x, dtype=np.float64, order="C", ndmin=1) for x in (q, v, tau))
    if packed is None:
        declined(log, _FD, _COUPLINGS, _FD_REFERENCE)
        return _reference(em, q, v, tau)
    for x, width, name in ((q, em.nq, "q"), (v, em.nv, "v"), (tau, em.nv, "tau")):
        if x.ndim not in (1, 2) or x.shape[-1] != width:
            raise ValueError(f"{name} must have shape ({width},) or (B, {width}), got {x.shape}")
    if q.ndim == v.ndim == tau.ndim == 1:
        return _one(em, packed, q, v, tau)
    B = max(x.shape[0] for x in (q, v, tau) if x.ndim == 2)
    q, v, tau = (np.array(np.broadcast_to(x, (B, x.shape[-1])), order="C") for x in (q, v, tau))
    return np.stack([_one(em, packed, q[b], v[b], tau[b]) for b in range(B)])


def _reference(em, q, v, tau):
    if q.ndim == v.ndim == tau.ndim == 1:
        return embedding.forward_dynamics(em, q, v, tau)
    B = max(x.shape[0] for x in (q, v, tau) if x.ndim == 2)
    rows = [np.broadcast_to(x, (B, x.shape[-1])) for x in (q, v, tau)]
    return np.stack([embedding.forward_dynamics(em, *r) for r in zip(*rows)])
