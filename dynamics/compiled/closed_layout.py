"""Packed arrays of a constraint-embedded closed chain for the compiled kernels (numpy only).

Three tables (:class:`dynamics.compiled.layout.Layout`, sizes written once): the loop data of an
:class:`dynamics.closed.embedding.EmbeddedModel` in :data:`CLOSED_INTS` and
:data:`CLOSED_FLOATS`, packed once per model by :class:`ClosedFlat` into ``cint`` (the descriptor
table of the three layouts first, then the integer fields) and ``cflt``; the scratch of the kernels
in :data:`CLOSED_WORK`, the ``work`` of a :class:`ClosedData` (with the tree's
:class:`dynamics.compiled.layout.Data`).  The kernels (:mod:`dynamics.compiled.closed_kernels`,
:mod:`dynamics.compiled.closure_kernels`) read them as named tuples
(:func:`closed_kernels.loop_fields`, :func:`closed_kernels.scratch_fields`).  The constraint rows
of one chord, and those of one loop, are consecutive; a loop's kept rows are rows
``loop_kept_start[l]:loop_kept_start[l + 1]`` of ``G``, ``X_d``, ``c_d`` and its constraint rows
``loop_row_start[l]:loop_row_start[l + 1]``.  Tables (rows: constraint rows, kept: kept rows, i:
independent coordinates):
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..tolerances import CLOSURE_CHECK_FACTOR, CLOSURE_TOL, RCOND_SWITCH
from .layout import DESCRIPTOR_WIDTH, Data, Layout

__all__ = ["CLOSED_INTS", "CLOSED_FLOATS", "CLOSED_WORK", "BUFFER_INTS", "BUFFER_FLOATS", "ClosedFlat", "ClosedData",
           "closed_dims", "LoopFields", "ScratchFields"]

CLOSED_INTS = Layout("ClosedInts", [
    ("n_independent", (), "number of independent coordinates"),
    ("n_kept", (), "number of kept constraint rows (= dependent coordinates)"),
    ("float_size", (), "size of cflt"),
    ("work_size", (), "size of the work array of a ClosedData"),
    ("row_kind", ("n_rows",), "0 position row, 1 orientation row, 2 joint coupling row"),
    ("row_chord", ("n_rows",), "chord of the row (the coupling of a coupling row)"),
    ("row_kept", ("n_rows",), "kept index of the row, -1 for a redundant row"),
    ("chord_body_a", ("n_chords",), "body a of the chord (-1: ground)"),
    ("chord_body_b", ("n_chords",), "body b of the chord (-1: ground)"),
    ("independent", ("n_i",), "independent v indices (sorted)"),
    ("dependent", ("n_k",), "dependent v indices, loop after loop, in the order of the columns of G_d"),
    ("loop_kept_start", ("n_loops1",), "first kept row of each loop (n_loops + 1)"),
    ("loop_of_independent", ("n_i",), "loop of each independent coordinate (-1: in none)"),
    ("loop_row_start", ("n_loops1",), "first constraint row of each loop (n_loops + 1)"),
    ("coupling_term_start", ("n_couplings1",), "first term of each joint coupling (n_couplings + 1)"),
    ("coupling_term_q", ("n_terms",), "q index of the coordinate of a coupling term"),
    ("coupling_term_v", ("n_terms",), "v index of the coordinate of a coupling term"),
    ("coupling_term_leader", ("n_terms",), "1 a term of the leader's side s_l, 0 of the follower's s_f"),
    ("coupling_poly_start", ("n_couplings1",), "first polynomial coefficient of each coupling (n_couplings + 1)"),
])

CLOSED_FLOATS = Layout("ClosedFloats", [
    ("row_n", ("n_rows", 3), "normal n of the row, in the frame J_a"),
    ("row_u", ("n_rows", 3), "orientation rows: the axis u in J_b (e = n . R_a^T R_b u)"),
    ("chord_R_a", ("n_chords", 3, 3), "orientation of the attachment frame J_a in body a"),
    ("chord_p_a", ("n_chords", 3), "origin of J_a in body a, m"),
    ("chord_R_b", ("n_chords", 3, 3), "orientation of J_b in body b"),
    ("chord_p_b", ("n_chords", 3), "origin of J_b in body b, m"),
    ("chord_signs", ("n_chords", "nv"), "+1 a velocity column moves b only, -1 a only, 0 both or neither"),
    ("row_slack", ("n_rows",), "closure error the row may keep, m or rad: 0 for a row that closes, the loop's slack "
                               "(ROUNDED_CLOSURE_TOL) for a nearly dependent row dropped from a rounded loop"),
    ("closure_check_tol", (), "largest closure error of a state the forward dynamics takes, m or rad"),
    ("rcond_switch", (), "the dependent block is declined above a condition estimate 1 / rcond_switch"),
    ("coupling_term_coef", ("n_terms",), "coefficient c of a coupling term (s = sum c q on its side)"),
    ("coupling_poly", ("n_poly",), "coefficients of each coupling's polynomial s_f = p(s_l), constant first"),
], first_row=CLOSED_INTS.end)

CLOSED_WORK = Layout("ClosedWork", [
    ("M", ("nv", "nv"), "tree mass matrix"),
    ("C", ("nv",), "tree bias forces C(q, v), then tau - C"),
    ("zero", ("nv",), "zeros (joint accelerations of the bias pass)"),
    ("no_forces", (0, 6), "no external forces (an empty array)"),
    ("MX", ("nv", "n_i"), "M X"),
    ("M_e", ("n_i", "n_i"), "X^* M X, then its Cholesky factor"),
    ("rhs", ("n_i",), "X^* (tau - C - M c), then the independent accelerations"),
    ("e", ("n_rows",), "closure error of every row"),
    ("G", ("n_k", "nv"), "closure Jacobian of the kept rows"),
    ("gamma", ("n_k",), "Gdot v of the kept rows"),
    ("G_d", ("r_max", "r_max"), "dependent block of one loop"),
    ("G_d_inv", ("r_max", "r_max"), "its inverse"),
    ("X_d", ("n_k", "n_i"), "-G_d^-1 G_i, loop by loop"),
    ("c_d", ("n_k",), "-G_d^-1 gamma, loop by loop"),
    ("world_R", ("n", 3, 3), "orientation of each body, ground frame"),
    ("world_p", ("n", 3), "origin of each body, ground frame, m"),
    ("world_w", ("n", 3), "angular velocity of each body, ground frame"),
    ("world_v", ("n", 3), "velocity of each body's origin, ground frame"),
    ("world_wd", ("n", 3), "angular bias acceleration (zero joint accelerations), ground frame"),
    ("world_ad", ("n", 3), "classical bias acceleration of the origin (no gravity), ground frame"),
    ("column_w", ("nv", 3), "angular part of velocity column j (the joint's axis), ground frame"),
    ("column_v", ("nv", 3), "linear part of velocity column j at the origin of its body"),
    ("column_p", ("nv", 3), "origin of the body velocity column j moves, ground frame"),
    ("frame_R_a", (3, 3), "ground-frame orientation of the chord frame J_a being evaluated"),
    ("frame_R_b", (3, 3), "ground-frame orientation of J_b"),
    ("dv", ("nv",), "Newton step on the dependent coordinates"),
    ("loop_newton", ("n_loops1", 3), "per loop: polishing steps taken, last closure error, 1.0 once closed"),
    ("G_all", ("n_rows", "nv"), "closure Jacobian of every constraint row (closure_rows)"),
    ("gamma_all", ("n_rows",), "Gdot v of every row (zero: closure_rows is at rest)"),
    ("q_closed", ("nq",), "a stage's configuration, loops closed"),
    ("v_full", ("nv",), "a stage's velocities, completed"),
    ("forces", ("nv",), "a stage's joint forces tau - damping v"),
    ("a_full", ("nv",), "a stage's accelerations"),
    ("y_next", ("ny",), "the next state [q, v_i]"),
    ("y_stage", ("ny",), "a stage's state"),
    ("K", (4, "ny"), "the stages' rates"),
], first_row=CLOSED_FLOATS.end)

#: rows of the descriptor table at the start of ``cint``
CLOSED_ROWS = CLOSED_WORK.end

#: the sections of the two buffers of a :class:`ClosedData` (``int_buffer``: the descriptor table of both
#: layouts, then these sections; ``float_buffer``), so that the one-configuration forward dynamics takes two
#: arrays instead of six (numba unboxes every array argument at every call, ~70 ns each;
#: :func:`dynamics.compiled.fields.buffer_sections`)
BUFFER_INTS = Layout("BufferInts", [
    ("ints", ("n_ints",), "the tree model's packed integers (a copy of FlatModel.ints)"),
    ("cint", ("n_cint",), "the loops' packed integers (a copy of ClosedFlat.cint, or of a split's)"),
])
BUFFER_FLOATS = Layout("BufferFloats", [
    ("floats", ("n_floats",), "the tree model's packed floats (a copy of FlatModel.floats)"),
    ("work", ("n_work",), "the tree's work array (the Data's)"),
    ("cflt", ("n_cflt",), "the loops' packed floats (a copy of ClosedFlat.cflt, or of a split's or threshold's)"),
    ("cwork", ("n_cwork",), "the loops' scratch (CLOSED_WORK)"),
], first_row=BUFFER_INTS.end)
#: rows of the descriptor table at the start of a ClosedData's ``int_buffer``
BUFFER_ROWS = BUFFER_FLOATS.end

#: the named tuples the kernels receive (:func:`dynamics.compiled.fields.loop_fields`, ``scratch_fields``)
LoopFields = namedtuple("LoopFields", CLOSED_INTS.names + CLOSED_FLOATS.names)
ScratchFields = CLOSED_WORK.Fields

__doc__ += "\n".join(["", f"``cint`` ({CLOSED_INTS.name})", "", CLOSED_INTS.doc(), "",
                      f"``cflt`` ({CLOSED_FLOATS.name})", "", CLOSED_FLOATS.doc(), "",
                      f"``ClosedData.work`` ({CLOSED_WORK.name})", "", CLOSED_WORK.doc()])


def closed_dims(em) -> dict:
    """The dimensions of the three tables for the embedded model ``em``."""
    n_rows = sum(len(lp.all_rows) for lp in em.loops)
    n_k = sum(len(lp.rows) for lp in em.loops)
    r_max = max((len(lp.rows) for lp in em.loops), default=0)
    return {"n": em.tree_model.n_bodies, "nq": em.nq, "nv": em.nv, "n_rows": n_rows, "n_chords": len(em.chords),
            "n_i": em.n_independent, "n_k": n_k, "n_loops1": len(em.loops) + 1, "r_max": r_max,
            "ny": em.nq + em.n_independent, "n_couplings1": len(em.couplings) + 1,
            "n_terms": sum(len(c.follower) + len(c.leader) for c in em.couplings),
            "n_poly": sum(len(c.coefficients) for c in em.couplings)}


def _describe(dims):
    table = np.zeros((CLOSED_ROWS, DESCRIPTOR_WIDTH), dtype=np.int64)
    work_size = CLOSED_WORK.describe(dims, table)
    float_size = CLOSED_FLOATS.describe(dims, table)
    int_size = CLOSED_INTS.describe(dims, table, CLOSED_ROWS * DESCRIPTOR_WIDTH)
    return table, int_size, float_size, work_size


class ClosedFlat:
    """Packed loop data of an embedded model, joint couplings included (``cint``, ``cflt``: module
    tables), built once per model (``EmbeddedModel.closed_flat``); ``nv``: the tree's velocity count;
    ``fields``: the :data:`LoopFields` of both (numpy views)."""

    def __init__(self, em):
        self.nv, self.dims = em.nv, closed_dims(em)
        table, int_size, float_size, self.work_size = _describe(self.dims)
        self.cint = np.zeros(int_size, dtype=np.int64)
        self.cint[:table.size] = table.ravel()
        self.cflt = np.zeros(float_size)
        table = self.cint[:table.size].reshape(table.shape)
        self._table = table
        i, f = CLOSED_INTS.views(self.cint, table), CLOSED_FLOATS.views(self.cflt, table)
        i.n_independent[()], i.n_kept[()] = self.dims["n_i"], self.dims["n_k"]
        i.float_size[()], i.work_size[()] = float_size, self.work_size
        self._rows(em, i, f, {lp.node: (lp.rows, lp.dep) for lp in em.loops})
        self._couplings(em, i, f)
        for c, ch in enumerate(em.chords):
            i.chord_body_a[c], i.chord_body_b[c] = ch.body_a, ch.body_b
            f.chord_R_a[c], f.chord_p_a[c], f.chord_R_b[c], f.chord_p_b[c] = ch.R_a, ch.p_a, ch.R_b, ch.p_b
            f.chord_signs[c] = em.chord_set.signs[c]
        f.closure_check_tol[()], f.rcond_switch[()] = CLOSURE_CHECK_FACTOR * CLOSURE_TOL, RCOND_SWITCH
        self.fields = LoopFields(*i, *f)

    def floats_with_rcond_switch(self, rcond_switch: float) -> np.ndarray:
        """A copy of ``cflt`` whose decline threshold ``rcond_switch`` is ``rcond_switch`` or the model's,
        whichever is stricter (for a caller that needs the kernels to hand over earlier, e.g. the
        fixed-step loop, :mod:`dynamics.simulation.fixed_step`); the model's own tables are not changed."""
        cflt = self.cflt.copy()
        f = CLOSED_FLOATS.views(cflt, self._table)
        f.rcond_switch[()] = max(float(f.rcond_switch[()]), float(rcond_switch))
        return cflt

    def with_split(self, em, splits, cflt=None) -> tuple[np.ndarray, np.ndarray]:
        """Copies ``(cint, cflt)`` of the packed arrays for another split of the loops into dependent and
        independent coordinates (generalized coordinate partitioning,
        :func:`dynamics.closed.embedding.partition_at`): ``splits`` a dict loop node -> ``(rows, dep, ...)``
        (kept rows, indices into ``lp.all_rows``; dependent coordinates, positions in ``lp.v_idx``), as
        many of each as the default split has (the rank of the loop's closure); ``cflt`` the floats to
        start from (e.g. :meth:`floats_with_rcond_switch`'s; default the model's).  The kernels then run
        on that split: ``independent`` (sorted), ``dependent``, ``row_kept`` and ``loop_of_independent``
        are those of ``splits``, and so is ``row_slack`` (a rounded loop's slack on the rows this split
        drops, zero on the rows it keeps: a row the default split drops must close when this one keeps
        it, and the other way round).  The model's own tables are not changed."""
        cint = self.cint.copy()
        cflt = (self.cflt if cflt is None else cflt).copy()
        i, f = CLOSED_INTS.views(cint, self._table), CLOSED_FLOATS.views(cflt, self._table)
        for lp in em.loops:
            rows, dep = splits[lp.node][0], splits[lp.node][1]
            if len(rows) != len(lp.rows) or len(dep) != len(lp.dep):
                raise ValueError(f"loop {lp.name}: a split of {len(rows)} rows and {len(dep)} dependent "
                                 f"coordinates, not {len(lp.rows)} (the closure rank)")
        self._rows(em, i, f, splits)
        return cint, cflt

    @staticmethod
    def _couplings(em, i, f):
        """The joint couplings (:class:`dynamics.closed.coupling.JointCoupling`): their terms, follower's
        side then leader's, and their polynomials."""
        t = p = 0
        for k, c in enumerate(em.couplings):
            i.coupling_term_start[k], i.coupling_poly_start[k] = t, p
            for leader, side in ((0, c.follower), (1, c.leader)):
                for iq, iv, coef in side:
                    i.coupling_term_q[t], i.coupling_term_v[t], i.coupling_term_leader[t] = iq, iv, leader
                    f.coupling_term_coef[t] = coef
                    t += 1
            f.coupling_poly[p:p + len(c.coefficients)] = c.coefficients
            p += len(c.coefficients)
        i.coupling_term_start[len(em.couplings)], i.coupling_poly_start[len(em.couplings)] = t, p

    @staticmethod
    def _rows(em, i, f, splits):
        """The constraint rows loop by loop: kind, chord, kept index, axes; the loops' row ranges; the
        dependent and independent coordinates; ``splits`` a dict loop node -> (kept rows, dependent
        positions, ...) (see :meth:`with_split`)."""
        cs = em.chord_set
        p_pos = {int(r): k for k, r in enumerate(cs.p_rows)}
        r_pos = {int(r): k for k, r in enumerate(cs.r_rows)}
        loop_of_v = np.full(em.nv, -1)
        row, kept, dep = 0, 0, []
        for li, lp in enumerate(em.loops):
            loop_of_v[lp.v_idx] = li
            i.loop_kept_start[li], i.loop_row_start[li] = kept, row
            rows, dep_pos = splits[lp.node][0], splits[lp.node][1]
            kept_of = {int(r): kept + k for k, r in enumerate(rows)}
            for pos, global_row in enumerate(int(r) for r in lp.all_rows):
                if global_row >= cs.n_rows:
                    i.row_kind[row], i.row_chord[row] = 2, global_row - cs.n_rows
                elif global_row in p_pos:
                    k = p_pos[global_row]
                    i.row_kind[row], i.row_chord[row], f.row_n[row] = 0, cs.p_chord[k], cs.N_p[k]
                else:
                    k = r_pos[global_row]
                    i.row_kind[row], i.row_chord[row] = 1, cs.r_chord[k]
                    f.row_n[row], f.row_u[row] = cs.N_r[k], cs.U_r[k]
                i.row_kept[row] = kept_of.get(pos, -1)
                f.row_slack[row] = lp.slack if i.row_kept[row] < 0 else 0.0
                row += 1
            dep.extend(int(v) for v in lp.v_idx[np.asarray(dep_pos, dtype=int)])
            kept += len(rows)
        i.loop_kept_start[len(em.loops)], i.loop_row_start[len(em.loops)] = kept, row
        i.dependent[:] = dep
        independent = np.setdiff1d(np.arange(em.nv), np.asarray(dep, dtype=int))
        i.independent[:] = independent
        i.loop_of_independent[:] = loop_of_v[independent]


class ClosedData:
    """Work arrays of the compiled closed-chain kernels for one embedded model (Pinocchio's ``Data``):
    ``tree`` the tree's :class:`dynamics.compiled.layout.Data`, ``work`` the scratch of
    :data:`CLOSED_WORK` (``fields``: its named views).  Made by ``em.create_data()``; one call at a time.

    ``packed``: the kernels' first arguments ``(ints, floats, work, cint, cflt, cwork)``, the model's
    packed arrays and these.  All six are sections of two buffers held here, ``int_buffer`` (int64: the
    descriptor table of :data:`BUFFER_INTS` and :data:`BUFFER_FLOATS`, then ``ints``, ``cint``) and
    ``float_buffer`` (float64: ``floats``, ``work``, ``cflt``, ``cwork``), which the one-configuration
    forward dynamics takes instead of the six (:func:`dynamics.compiled.closed_kernels.buffered_forward_dynamics`).
    ``rcond_switch``: a stricter decline threshold for the kernels called with these arrays
    (:meth:`ClosedFlat.floats_with_rcond_switch`), None for the model's.  ``splits``: the kernels called
    with these arrays use that split of the loops (:meth:`ClosedFlat.with_split`; a simulator's
    current partition; its rounded loops' row slacks follow the split), None for the model's default one.
    ``nv``: the model's velocity count; ``linear_couplings``: the model's closed form of linear joint couplings
    (:attr:`dynamics.embedding.EmbeddedModel.linear_couplings`) or None."""

    def __init__(self, em, rcond_switch: float | None = None, splits: dict | None = None):
        cf, flat = em.closed_flat, em.tree_model.flat_model
        self.nv, self.linear_couplings = em.nv, em.linear_couplings
        cflt = cf.cflt if rcond_switch is None else cf.floats_with_rcond_switch(rcond_switch)
        cint, cflt = (cf.cint, cflt) if splits is None else cf.with_split(em, splits, cflt)
        sizes = {"n_ints": flat.ints.size, "n_cint": cint.size, "n_floats": flat.floats.size,
                 "n_work": flat.work_size, "n_cflt": cflt.size, "n_cwork": cf.work_size}
        table = np.zeros((BUFFER_ROWS, DESCRIPTOR_WIDTH), dtype=np.int64)
        self.int_buffer = np.empty(BUFFER_INTS.describe(sizes, table, table.size), dtype=np.int64)
        self.float_buffer = np.zeros(BUFFER_FLOATS.describe(sizes, table))
        self.int_buffer[:table.size] = table.ravel()
        ints, floats = BUFFER_INTS.views(self.int_buffer, table), BUFFER_FLOATS.views(self.float_buffer, table)
        ints.ints[:], ints.cint[:], floats.floats[:], floats.cflt[:] = flat.ints, cint, flat.floats, cflt
        self.tree = Data(em.tree_model.n_bodies, work=floats.work)
        self.work = floats.cwork
        self.fields = CLOSED_WORK.views(self.work, cf._table)
        self.packed = (ints.ints, floats.floats, floats.work, ints.cint, floats.cflt, floats.cwork)
        #: the v indices of the independent coordinates these arrays' kernels take (sorted)
        self.independent = em.independent_v if splits is None else CLOSED_INTS.views(cint, cf._table).independent.copy()
