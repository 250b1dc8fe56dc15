"""Python entry of the compiled closed-chain forward dynamics (:mod:`dynamics.compiled.closed_kernels`).

The packed loop data of a :class:`dynamics.embedding.EmbeddedModel` is ``em.closed_flat``
(:class:`dynamics.compiled.closed_layout.ClosedFlat`, built once per model), its work arrays a
``em.create_data()`` (default ``em.default_data``).  :func:`forward_dynamics` is the ``embedded``
row of :data:`dynamics.dispatch.ALGORITHMS` with the contract of
:func:`dynamics.closed.embedding.forward_dynamics` (the numpy reference).
:func:`complete_configuration`, :func:`complete_velocity` and :func:`complete_state` (a given split
of the loops, the adaptive simulator's right-hand side) are the compiled loop closure and velocity
completion (:mod:`dynamics.compiled.closure_kernels`) with the contract of
:mod:`dynamics.closed.embedding`; joint couplings are constraint rows of the kernels as of the
reference (linear couplings without loop-closing joints keep the closed form of
:mod:`dynamics.closed.linear` in the forward dynamics).

States a kernel declines (a loop not closed, a dependent block near singular, Newton not
converging, see the kernel modules) go to the numpy reference, which raises :class:`dynamics.closed.closure.ClosureError` or switches dependent coordinates;
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

__all__ = ["forward_dynamics", "complete_configuration", "complete_velocity", "complete_state", "loop_jacobians",
           "loop_closures", "world_kinematics"]

log = logging.getLogger(__name__)

#: looked up once: module globals are cheaper than attributes on the one-configuration path (a four-bar's
#: kernel call is about 1.7 us, numba's dispatch of its six arrays included)
_empty, _buffered_fd, _OK, _BAD_SHAPE = np.empty, ck.buffered_forward_dynamics, ck.OK, ck.BAD_SHAPE

_FD = "closed-chain forward dynamics"
_FD_REFERENCE = "the numpy embedding (embedding.forward_dynamics)"


def forward_dynamics(em, q, v, tau, f_ext=None, data=None):
    """Accelerations of all tree joints of a closed chain (nv,), or (B, nv) for a batch.

    q (nq,) | (B, nq) closed configurations; v (nv,) | (B, nv) with ``G v = 0``; tau (nv,) | (B, nv)
    generalized forces at the tree joints; data: an ``em.create_data()`` (default
    ``em.default_data``; with ``splits``, the kernels use that split of the loops).  Same results as
    :func:`dynamics.closed.embedding.forward_dynamics` (null-space projection, see
    :mod:`dynamics.compiled.closed_kernels`); ``f_ext`` is not supported on embedded models.  Linear
    joint couplings without loop-closing joints take their closed form (:mod:`dynamics.closed.linear`).
    """
    d = em.default_data if data is None else data
    if f_ext is None:
        if d.linear_couplings is not None and np.shape(q) == (em.nq,):
            return d.linear_couplings.forward_dynamics(q, v, tau)
        out = _empty(d.nv)
        try:                             # the fast path: the data's two buffers and three float64 vectors
            status = _buffered_fd(d.int_buffer, d.float_buffer, q, v, tau, out)
        except TypeError:                # not three writable float64 vectors: the general path below
            status = _BAD_SHAPE
        if status == _OK:
            return out
        if status != _BAD_SHAPE:
            declined(log, _FD, ck.DECLINED[status], _FD_REFERENCE)
            return embedding.forward_dynamics(em, q, v, tau)
    return _general(em, d.packed, q, v, tau, f_ext)


def complete_configuration(em, q_guess=None, tol: float = CLOSURE_TOL, max_iter: int = NEWTON_MAX_ITER, data=None):
    """Closed configuration (nq,) near ``q_guess`` (default ``em.neutral()``): the loops closed by
    Newton's method on their dependent coordinates, compiled (:func:`closure_kernels.close_loops`); as
    :func:`dynamics.closed.embedding.complete_configuration`, which runs (and raises
    :class:`dynamics.closed.closure.ClosureError`) where the kernel declines."""
    q = np.array(em.neutral() if q_guess is None else q_guess, dtype=np.float64)
    if current_backend() != "numpy":
        why = None if q.shape == (em.nq,) else f"q has shape {q.shape}, not ({em.nq},)"
        if why is None:
            packed = (em.default_data if data is None else data).packed
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
        why = None
        if v_i.shape != (em.n_independent,) or qa.shape != (em.nq,):
            why = f"q, v_ind have shapes {qa.shape}, {v_i.shape}, not ({em.nq},), ({em.n_independent},)"
        if why is None:
            v = np.empty(em.nv)
            status = cu.velocity_completion(*packed, qa, v_i, v)
            if status == cu.OK:
                return v
            why = cu.DECLINED[status]
        declined(log, "velocity completion", why, "the numpy completion (embedding.complete_velocity)")
    return embedding.complete_velocity(em, q, v_ind)


def complete_state(em, q, v, tol: float = CLOSURE_TOL, max_iter: int = NEWTON_MAX_ITER, splits=None, data=None):
    """(q (nq,) closed to ``tol``, v (nv,) with ``G(q) v = 0``) from a full state q (nq,), v (nv,) with the
    split ``splits`` (dict loop node -> (rows, dep, ind)) held: the loops closed by Newton's method on the
    split's dependent coordinates from q (its independent ones kept), then ``v = X v_i`` from v's
    independent entries, compiled (:func:`closure_kernels.close_configuration`, ``velocity_completion``);
    as :func:`dynamics.closed.embedding.complete_state` with ``splits``, which runs (and raises
    :class:`dynamics.closed.closure.ClosureError`) where a kernel declines.  ``data``: a
    ``em.create_data(splits=splits)`` (made here when None: pass one to reuse it)."""
    if current_backend() != "numpy":
        data = em.create_data(splits=splits) if data is None else data
        qc = np.array(q, dtype=np.float64)
        v_i = np.ascontiguousarray(np.asarray(v, dtype=np.float64)[data.independent])
        why = None
        if qc.shape != (em.nq,) or np.shape(v) != (em.nv,):
            why = f"q, v have shapes {qc.shape}, {np.shape(v)}, not ({em.nq},), ({em.nv},)"
        if why is None:
            out = np.empty(em.nv)
            status = cu.state_completion(*data.packed, qc, v_i, out, float(tol), int(max_iter), NEWTON_MAX_STEP)
            if status == cu.OK:
                return qc, out
            why = cu.DECLINED[status]
        declined(log, "state completion", why, "the numpy completion (embedding.complete_state)")
    return embedding.complete_state(em, q, v, tol=tol, max_iter=max_iter, splits=splits)


def loop_jacobians(em, q, data=None) -> dict:
    """The closure Jacobian of every constraint row of each loop at q (nq,), compiled
    (:func:`closure_kernels.closure_rows`): dict loop node -> (n_rows of the loop, n_S) ``G`` over the
    loop's rows ``lp.all_rows`` and coordinates ``lp.v_idx`` (as :func:`dynamics.closed.embedding.loop_closure`
    with every row); from the numpy closure terms where the kernel declines."""
    return loop_closures(em, q, data)[1]


def loop_closures(em, q, data=None) -> tuple[np.ndarray, dict]:
    """``(e, jacobians)`` at q (nq,): ``e`` (n_rows,) the closure error of every constraint row, m or rad, loop
    after loop (each loop's rows ``lp.all_rows`` in order), and ``jacobians`` as :func:`loop_jacobians`; one
    compiled call (:func:`closure_kernels.closure_rows`), or the numpy closure terms where the kernel declines."""
    cf = em.closed_flat
    n_rows = cf.dims["n_rows"]
    if current_backend() != "numpy":
        packed = (em.default_data if data is None else data).packed
        e, G = np.empty(n_rows), np.empty((n_rows, em.nv))
        status = cu.closure_rows(*packed, np.ascontiguousarray(q, dtype=np.float64), e, G)
        if status == cu.OK:
            start = cf.fields.loop_row_start
            return e, {lp.node: G[start[k]:start[k + 1]][:, lp.v_idx] for k, lp in enumerate(em.loops)}
        declined(log, "closure rows", cu.DECLINED[status], "the numpy closure terms (embedding.terms_at)")
    terms = embedding.terms_at(em, q)
    rows = [embedding.loop_closure(terms, lp, slice(None)) for lp in em.loops]
    return np.concatenate([r[0] for r in rows] + [np.zeros(0)]), {lp.node: r[1] for lp, r in zip(em.loops, rows)}


def world_kinematics(em, q, v, data=None):
    """The :class:`dynamics.world_kinematics.Kinematics` of the tree's bodies at q (nq,), v (nv,) (world poses,
    joint columns, twists and bias accelerations; new arrays), compiled
    (:func:`closure_kernels.world_motion`); from the numpy kinematics (:func:`dynamics.world_kinematics.kinematics`)
    where the kernel declines."""
    from ..world_kinematics import Kinematics, kinematics

    if current_backend() != "numpy":
        d = em.default_data if data is None else data
        qa, va = np.ascontiguousarray(q, dtype=np.float64), np.ascontiguousarray(v, dtype=np.float64)
        if qa.shape == (em.nq,) and va.shape == (em.nv,):
            status = cu.world_motion(*d.packed, qa, va)
            if status == cu.OK:
                f = d.fields
                return Kinematics(f.world_R.copy(), f.world_p.copy(), f.column_w.T.copy(), f.column_v.T.copy(),
                                  f.column_p.copy(), f.world_w.copy(), f.world_v.copy(), f.world_wd.copy(),
                                  f.world_ad.copy())
            why = cu.DECLINED[status]
        else:
            why = f"q, v have shapes {qa.shape}, {va.shape}, not ({em.nq},), ({em.nv},)"
        declined(log, "world kinematics", why, "the numpy kinematics (world_kinematics.kinematics)")
    from ..batch import prepare

    qb, vb, single, w, V, ac, bc, ag = prepare(em.tree_model, q, v)
    return kinematics(em.tree_model, w, V, ac)


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
    for x, width, name in ((q, em.nq, "q"), (v, em.nv, "v"), (tau, em.nv, "tau")):
        if x.ndim not in (1, 2) or x.shape[-1] != width:
            raise ValueError(f"{name} must have shape ({width},) or (B, {width}), got {x.shape}")
    if q.ndim == v.ndim == tau.ndim == 1:
        return _one(em, packed, q, v, tau)
    B = max(x.shape[0] for x in (q, v, tau) if x.ndim == 2)
    q, v, tau = (np.array(np.broadcast_to(x, (B, x.shape[-1])), order="C") for x in (q, v, tau))
    return np.stack([_one(em, packed, q[b], v[b], tau[b]) for b in range(B)])
