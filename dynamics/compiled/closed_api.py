"""Python entry of the compiled closed-chain forward dynamics (:mod:`dynamics.compiled.closed_kernels`).

:class:`ClosedFlat` packs the loop data of a :class:`dynamics.embedding.EmbeddedModel` (chord
rows, attachment frames, the independent / dependent split of each loop) into two arrays once
per model; :func:`forward_dynamics` is the ``embedded`` row of :data:`dynamics.dispatch.ALGORITHMS`
with the contract of :func:`dynamics.closed.embedding.forward_dynamics` (the numpy reference).
States the kernel declines (a loop not closed, a dependent block near singular, see the kernel
module) and models with joint couplings go to the reference, which raises
:class:`dynamics.closed.closure.ClosureError` or switches dependent coordinates.  Importing this module
compiles the kernel (it has one signature) or loads it from numba's cache; the dispatch table
imports it on the first embedded forward-dynamics call, so ``import mbcompose`` compiles nothing.
:func:`complete_configuration` and :func:`complete_velocity` are the compiled loop closure and
velocity completion (:mod:`dynamics.compiled.closure_kernels`, compiled on their first call), with
the numpy reference of :mod:`dynamics.closed.embedding` where the kernels decline.
"""

from __future__ import annotations

import numpy as np

from ..closed import embedding
from ..tolerances import CLOSURE_CHECK_FACTOR, CLOSURE_TOL, NEWTON_MAX_ITER, NEWTON_MAX_STEP, RCOND_SWITCH
from . import closed_kernels as ck
from . import closure_kernels as cu
from .api import _own_data
from .layout import flat_model

__all__ = ["ClosedFlat", "closed_flat", "forward_dynamics", "complete_configuration", "complete_velocity"]


class ClosedFlat:
    """Packed loop data and scratch of an embedded model (``cint``, ``cflt``, ``kin``: see
    :mod:`closed_kernels`); ``nv``: the tree's velocity count."""

    def __init__(self, em):
        cs = em.chord_set
        self.nv = em.nv
        rows, kept_of, dep, lk, first_row = [], [], [], [0], [0]
        loop_of_v = np.full(em.nv, -1)
        for li, lp in enumerate(em.loops):
            loop_of_v[lp.v_idx] = li
            kept = {int(r): lk[-1] + i for i, r in enumerate(lp.rows)}
            for pos, row in enumerate(lp.all_rows):
                rows.append(int(row))
                kept_of.append(kept.get(pos, -1))
            dep.extend(int(i) for i in lp.v_idx[lp.dep])
            lk.append(lk[-1] + len(lp.rows))
            first_row.append(len(rows))
        n_rows, n_c, n_i, n_l = len(rows), len(em.chords), em.n_independent, len(em.loops)
        width = max(24, em.nv, n_rows, n_c, n_i, len(dep), n_l + 1, 6)
        self.cint = np.zeros((11, width), dtype=np.int64)
        r_max = max(np.diff(lk), default=0)
        self.cflt = np.zeros((n_rows + 2 * n_c + 1 + ck.scratch_rows(em.nv, n_i, len(dep), r_max), width))
        p_pos = {int(r): i for i, r in enumerate(cs.p_rows)}
        r_pos = {int(r): i for i, r in enumerate(cs.r_rows)}
        for i, row in enumerate(rows):
            if row in p_pos:
                k = p_pos[row]
                self.cint[0:2, i] = 0, cs.p_chord[k]
                self.cflt[i, 0:3] = cs.N_p[k]
            else:
                k = r_pos[row]
                self.cint[0:2, i] = 1, cs.r_chord[k]
                self.cflt[i, 0:3], self.cflt[i, 3:6] = cs.N_r[k], cs.U_r[k]
            self.cint[2, i] = kept_of[i]
        for c, ch in enumerate(em.chords):
            self.cint[3:5, c] = ch.body_a, ch.body_b
            self.cflt[n_rows + c, :24] = np.concatenate([ch.R_a.ravel(), ch.p_a, ch.R_b.ravel(), ch.p_b])
            self.cflt[n_rows + n_c + c, :em.nv] = cs.signs[c]
        self.cint[5, :n_i] = em.independent_v
        self.cint[9, :n_i] = loop_of_v[em.independent_v]
        self.cint[6, :len(dep)] = dep
        self.cint[7, :n_l + 1] = lk
        self.cint[10, :n_l + 1] = first_row
        self.cint[8, :6] = n_rows, n_c, n_i, len(dep), n_l, r_max
        self.cflt[n_rows + 2 * n_c, 0:2] = CLOSURE_CHECK_FACTOR * CLOSURE_TOL, RCOND_SWITCH
        self.kin = np.zeros((em.tree_model.n_bodies + em.nv + 1, 8, 3))
        tm = em.tree_model
        flat = flat_model(tm)
        #: the kernel's arguments before the state (tree arrays, tree work, loop data, scratch)
        self.args = (flat.ints, flat.blocks, flat.extra, _own_data(tm).work, self.cint, self.cflt, self.kin)


def closed_flat(em) -> ClosedFlat | None:
    """The :class:`ClosedFlat` of ``em``, built on first use and kept on it (None: the model has
    joint couplings, which only the reference evaluates)."""
    if "_closed_flat" not in em.__dict__:
        em.__dict__["_closed_flat"] = None if em.couplings else ClosedFlat(em)
    return em.__dict__["_closed_flat"]


def forward_dynamics(em, q, v, tau, f_ext=None):
    """Accelerations of all tree joints of a closed chain (nv,), or (B, nv) for a batch.

    q (nq,) | (B, nq) closed configurations; v (nv,) | (B, nv) with ``G v = 0``; tau (nv,) | (B, nv)
    generalized forces at the tree joints.  Same results as
    :func:`dynamics.closed.embedding.forward_dynamics` (null-space projection, see
    :mod:`dynamics.compiled.closed_kernels`); ``f_ext`` is not supported on embedded models.
    """
    cf = em.__dict__.get("_closed_flat") or closed_flat(em)
    if f_ext is None and cf is not None:
        out = np.empty(cf.nv)
        try:
            status = ck.embedded_forward_dynamics(*cf.args, q, v, tau, out)
        except TypeError:                # not three writable float64 vectors: the general path below
            status = ck.BAD_SHAPE
        if status == ck.OK:
            return out
        if status != ck.BAD_SHAPE:
            return embedding.forward_dynamics(em, q, v, tau)
    return _general(em, cf, q, v, tau, f_ext)


def complete_configuration(em, q_guess=None, tol: float = CLOSURE_TOL, max_iter: int = NEWTON_MAX_ITER):
    """Closed configuration (nq,) near ``q_guess`` (default ``em.neutral()``): the loops closed by
    Newton's method on their dependent coordinates, compiled
    (:func:`closure_kernels.close_loops`); as
    :func:`dynamics.closed.embedding.complete_configuration`, which runs (and raises
    :class:`dynamics.closed.closure.ClosureError`) where the kernel declines."""
    cf = closed_flat(em)
    q = np.array(em.neutral() if q_guess is None else q_guess, dtype=np.float64)
    if cf is not None and q.shape == (em.nq,):
        if cu.close_configuration(*cf.args, q, float(tol), int(max_iter), NEWTON_MAX_STEP) == cu.OK:
            return q
    return embedding.complete_configuration(em, q_guess, tol=tol, max_iter=max_iter)


def complete_velocity(em, q, v_ind):
    """Full joint velocities (nv,) ``X(q) v_ind`` at a closed q (nq,), v_ind (n_independent,) or
    (nv,) (its independent entries), compiled (:func:`closure_kernels.complete_velocity_at`); as
    :func:`dynamics.closed.embedding.complete_velocity`, which runs where the kernel declines."""
    cf = closed_flat(em)
    v_i = np.array(v_ind, dtype=np.float64)
    if v_i.shape == (em.nv,):
        v_i = v_i[em.independent_v]
    qa = np.ascontiguousarray(q, dtype=np.float64)
    if cf is not None and v_i.shape == (em.n_independent,) and qa.shape == (em.nq,):
        v = np.empty(em.nv)
        if cu.velocity_completion(*cf.args, qa, v_i, v) == cu.OK:
            return v
    return embedding.complete_velocity(em, q, v_ind)


def _one(em, cf, q, v, tau):
    out = np.empty(cf.nv)
    if ck.embedded_forward_dynamics(*cf.args, q, v, tau, out) != ck.OK:
        return embedding.forward_dynamics(em, q, v, tau)
    return out


def _general(em, cf, q, v, tau, f_ext):
    """Checks, conversions and batches (one kernel call per row)."""
    if f_ext is not None:
        raise TypeError("external forces are not supported on embedded models yet")
    q, v, tau = (np.array(x, dtype=np.float64, order="C", ndmin=1) for x in (q, v, tau))
    if cf is None:
        return _reference(em, q, v, tau)
    for x, width, name in ((q, em.nq, "q"), (v, em.nv, "v"), (tau, em.nv, "tau")):
        if x.ndim not in (1, 2) or x.shape[-1] != width:
            raise ValueError(f"{name} must have shape ({width},) or (B, {width}), got {x.shape}")
    if q.ndim == v.ndim == tau.ndim == 1:
        return _one(em, cf, q, v, tau)
    B = max(x.shape[0] for x in (q, v, tau) if x.ndim == 2)
    q, v, tau = (np.array(np.broadcast_to(x, (B, x.shape[-1])), order="C") for x in (q, v, tau))
    return np.stack([_one(em, cf, q[b], v[b], tau[b]) for b in range(B)])


def _reference(em, q, v, tau):
    if q.ndim == v.ndim == tau.ndim == 1:
        return embedding.forward_dynamics(em, q, v, tau)
    B = max(x.shape[0] for x in (q, v, tau) if x.ndim == 2)
    rows = [np.broadcast_to(x, (B, x.shape[-1])) for x in (q, v, tau)]
    return np.stack([embedding.forward_dynamics(em, *r) for r in zip(*rows)])
