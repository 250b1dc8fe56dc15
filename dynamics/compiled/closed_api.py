"""Python entry of the compiled closed-chain forward dynamics (:mod:`dynamics.compiled.closed_kernels`).

:class:`ClosedFlat` packs the loop data of a :class:`dynamics.embedding.EmbeddedModel` (chord
rows, attachment frames, the independent / dependent split of each loop) into two arrays once
per model; :func:`forward_dynamics` is the ``embedded`` row of :data:`dynamics.dispatch.ALGORITHMS`
with the contract of :func:`dynamics.embedded_dynamics.forward_dynamics` (the numpy reference).
States the kernel declines (a loop not closed, a dependent block near singular, see the kernel
module) and models with joint couplings go to the reference, which raises
:class:`dynamics.closure.ClosureError` or switches dependent coordinates.  Importing this module
compiles nothing.
"""

from __future__ import annotations

import numpy as np

from .. import embedded_dynamics
from ..tolerances import CLOSURE_CHECK_FACTOR, CLOSURE_TOL, RCOND_SWITCH
from . import closed_kernels as ck
from .api import _own_data
from .layout import flat_model

__all__ = ["ClosedFlat", "closed_flat", "forward_dynamics"]


class ClosedFlat:
    """Packed loop data of an embedded model (``cint``, ``cflt``) and the kernel's scratch arrays
    (``kin``, ``mats``), see :mod:`closed_kernels`; ``nv``, ``q_shape``, ``v_shape``: the tree's sizes."""

    def __init__(self, em):
        cs = em.chord_set
        self.nv = em.nv
        self.q_shape, self.v_shape = (em.nq,), (em.nv,)
        rows, kept_of, dep, lk, lr = [], [], [], [0], [0]
        for li, lp in enumerate(em.loops):
            kept = {int(r): lk[-1] + i for i, r in enumerate(lp.rows)}
            for pos, row in enumerate(lp.all_rows):
                rows.append((int(row), li))
                kept_of.append(kept.get(pos, -1))
            dep.extend(int(i) for i in lp.v_idx[lp.dep])
            lk.append(lk[-1] + len(lp.rows))
            lr.append(len(rows))
        n_rows, n_c, n_i, n_l = len(rows), len(em.chords), em.n_independent, len(em.loops)
        width = max(24, em.nv, n_rows, n_c, n_i, len(dep), n_l + 1, 5)
        self.cint = np.zeros((11, width), dtype=np.int64)
        self.cflt = np.zeros((n_rows + 2 * n_c + 1, width))
        p_pos = {int(r): i for i, r in enumerate(cs.p_rows)}
        r_pos = {int(r): i for i, r in enumerate(cs.r_rows)}
        for i, (row, li) in enumerate(rows):
            if row in p_pos:
                k = p_pos[row]
                self.cint[0:2, i] = 0, cs.p_chord[k]
                self.cflt[i, 0:3] = cs.N_p[k]
            else:
                k = r_pos[row]
                self.cint[0:2, i] = 1, cs.r_chord[k]
                self.cflt[i, 0:3], self.cflt[i, 3:6] = cs.N_r[k], cs.U_r[k]
            self.cint[2:4, i] = kept_of[i], li
        for c, ch in enumerate(em.chords):
            self.cint[4:6, c] = ch.body_a, ch.body_b
            self.cflt[n_rows + c, :24] = np.concatenate([ch.R_a.ravel(), ch.p_a, ch.R_b.ravel(), ch.p_b])
            self.cflt[n_rows + n_c + c, :em.nv] = cs.signs[c]
        self.cint[6, :n_i] = em.independent_v
        self.cint[7, :len(dep)] = dep
        self.cint[8, :n_l + 1] = lk
        self.cint[9, :n_l + 1] = lr
        r_max = max(np.diff(lk), default=0)
        self.cint[10, :6] = n_rows, n_c, n_i, len(dep), n_l, r_max
        self.cflt[-1, 0:2] = CLOSURE_CHECK_FACTOR * CLOSURE_TOL, RCOND_SWITCH
        self.kin = np.zeros((em.tree_model.n_bodies + em.nv + 1, 8, 3))
        self.mats = np.zeros((ck.scratch_rows(em.nv, n_i, len(dep), r_max), max(em.nv, n_rows, 6)))
        tm = em.tree_model
        flat = flat_model(tm)
        #: the kernel's arguments before the state (tree arrays, tree work, loop data, scratch)
        self.args = (flat.ints, flat.blocks, flat.extra, _own_data(tm).work, self.cint, self.cflt, self.kin,
                     self.mats)


def closed_flat(em) -> ClosedFlat | None:
    """The :class:`ClosedFlat` of ``em``, built on first use and kept on it (None: the model has
    joint couplings, which only the reference evaluates)."""
    if "_closed_flat" not in em.__dict__:
        em.__dict__["_closed_flat"] = None if em.couplings else ClosedFlat(em)
    return em.__dict__["_closed_flat"]


def _one(em, cf, q, v, tau):
    out = np.empty(cf.nv)
    if ck.embedded_forward_dynamics(*cf.args, q, v, tau, out) != ck.OK:
        return embedded_dynamics.forward_dynamics(em, q, v, tau)
    return out


def forward_dynamics(em, q, v, tau, f_ext=None):
    """Accelerations of all tree joints of a closed chain (nv,), or (B, nv) for a batch.

    q (nq,) | (B, nq) closed configurations; v (nv,) | (B, nv) with ``G v = 0``; tau (nv,) | (B, nv)
    generalized forces at the tree joints.  Same results as
    :func:`dynamics.embedded_dynamics.forward_dynamics` (null-space projection, see
    :mod:`dynamics.compiled.closed_kernels`); ``f_ext`` is not supported on embedded models.
    """
    cf = em.__dict__.get("_closed_flat") or closed_flat(em)
    q = np.ascontiguousarray(q, dtype=np.float64)
    v = np.ascontiguousarray(v, dtype=np.float64)
    tau = np.ascontiguousarray(tau, dtype=np.float64)
    if f_ext is None and cf is not None and q.shape == cf.q_shape and v.shape == tau.shape == cf.v_shape:
        out = np.empty(cf.nv)
        if ck.embedded_forward_dynamics(*cf.args, q, v, tau, out) == ck.OK:
            return out
        return embedded_dynamics.forward_dynamics(em, q, v, tau)
    if f_ext is not None:
        raise TypeError("external forces are not supported on embedded models yet")
    if cf is None:
        return _reference(em, q, v, tau)
    for x, width, name in ((q, em.nq, "q"), (v, em.nv, "v"), (tau, em.nv, "tau")):
        if x.ndim not in (1, 2) or x.shape[-1] != width:
            raise ValueError(f"{name} must have shape ({width},) or (B, {width}), got {x.shape}")
    B = max(x.shape[0] for x in (q, v, tau) if x.ndim == 2)
    q, v, tau = (np.ascontiguousarray(np.broadcast_to(x, (B, x.shape[-1]))) for x in (q, v, tau))
    return np.stack([_one(em, cf, q[b], v[b], tau[b]) for b in range(B)])


def _reference(em, q, v, tau):
    if q.ndim == v.ndim == tau.ndim == 1:
        return embedded_dynamics.forward_dynamics(em, q, v, tau)
    B = max(x.shape[0] for x in (q, v, tau) if x.ndim == 2)
    rows = [np.broadcast_to(x, (B, x.shape[-1])) for x in (q, v, tau)]
    return np.stack([embedded_dynamics.forward_dynamics(em, *r) for r in zip(*rows)])
