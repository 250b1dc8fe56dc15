"""The named fields of the packed arrays inside the kernels (numba): the compiled twin of :class:`layout.Layout`.

Each accessor returns one field of a packed array ``buf`` as a view (:func:`jit.field_view`:
no copy, no reference count, no check), from the descriptor row
``row`` (``layout.X.row.name``) of the descriptor table ``table`` (the int64 array whose first
rows are the descriptors: a :class:`layout.FlatModel`'s ``ints``, a closed chain's ``cint``);
the accessor's name says the field's number of dimensions (a test holds them to the tables).
:func:`model_fields` and :func:`work_fields` give the kernels the tree's model and work arrays
as the named tuples :data:`layout.ModelFields` and :data:`layout.WorkFields`, so that every kernel
reads ``m.parent``, ``w.P``; :func:`loop_fields` and :func:`scratch_fields` those of a closed chain
(:mod:`dynamics.compiled.closed_layout`), and :func:`buffer_sections` the six packed arrays of a
``ClosedData``'s two buffers.  All are inlined into their callers (numba IR), where LLVM drops
the views a kernel does not use and keeps the rest in registers.
"""

from __future__ import annotations

from .jit import field_view, inline
from .closed_layout import (BUFFER_FLOATS, BUFFER_INTS, BUFFER_ROWS, CLOSED_FLOATS, CLOSED_INTS, CLOSED_WORK, LoopFields,
                            ScratchFields)
from .layout import DESCRIPTOR_WIDTH, MODEL_FLOATS, MODEL_INTS, WORK, ModelFields, WorkFields

__all__ = ["scalar", "array1", "array2", "array3", "model_fields", "work_fields", "sizes", "loop_fields",
           "scratch_fields", "buffers_fit", "buffer_sections"]

@inline
def scalar(buf, table, row):
    """The scalar field of descriptor ``row`` (its offset: the first entry of the row)."""
    return buf[table[DESCRIPTOR_WIDTH * row]]


array1, array2, array3 = (field_view(ndim, DESCRIPTOR_WIDTH) for ndim in (1, 2, 3))
array1.__doc__ = "``array1(buf, table, row)``: the 1-D field of descriptor ``row`` (see :func:`jit.field_view`)."
array2.__doc__ = "``array2(buf, table, row)``: the 2-D field of descriptor ``row`` (see :func:`jit.field_view`)."
array3.__doc__ = "``array3(buf, table, row)``: the 3-D field of descriptor ``row`` (see :func:`jit.field_view`)."


MI, MF, W = MODEL_INTS.row, MODEL_FLOATS.row, WORK.row


@inline
def model_fields(ints, floats):
    """The :data:`layout.ModelFields` of a :class:`layout.FlatModel`'s ``ints`` and ``floats``."""
    return ModelFields(
        nq=scalar(ints, ints, MI.nq), nv=scalar(ints, ints, MI.nv), float_size=scalar(ints, ints, MI.float_size),
        work_size=scalar(ints, ints, MI.work_size),
        parent=array1(ints, ints, MI.parent), kind=array1(ints, ints, MI.kind),
        q_offset=array1(ints, ints, MI.q_offset), v_offset=array1(ints, ints, MI.v_offset),
        placement_R=array3(floats, ints, MF.placement_R), placement_p=array2(floats, ints, MF.placement_p),
        axis=array2(floats, ints, MF.axis), axis2=array2(floats, ints, MF.axis2),
        e1=array2(floats, ints, MF.e1), e2=array2(floats, ints, MF.e2),
        S_const=array3(floats, ints, MF.S_const), M_body=array3(floats, ints, MF.M_body),
        gravity=array1(floats, ints, MF.gravity), armature=array1(floats, ints, MF.armature))


@inline
def n_bodies(ints):
    """Number of bodies of the model of ``ints``."""
    return array1(ints, ints, MI.parent).shape[0]


@inline
def sizes(ints):
    """``(nq, nv, float_size, work_size)`` of the model of ``ints`` (float_size: the size of its ``floats``,
    work_size: of a Data's work array)."""
    return (scalar(ints, ints, MI.nq), scalar(ints, ints, MI.nv), scalar(ints, ints, MI.float_size),
            scalar(ints, ints, MI.work_size))


@inline
def work_fields(ints, work):
    """The :data:`layout.WorkFields` of the work array ``work`` of the model of ``ints``."""
    return WorkFields(
        R=array3(work, ints, W.R), p=array2(work, ints, W.p), S=array3(work, ints, W.S),
        V=array2(work, ints, W.V), alpha=array2(work, ints, W.alpha), a=array2(work, ints, W.a),
        b=array2(work, ints, W.b), f=array2(work, ints, W.f), P=array3(work, ints, W.P),
        z=array2(work, ints, W.z), eps=array2(work, ints, W.eps), PH=array3(work, ints, W.PH),
        Dinv=array3(work, ints, W.Dinv), G=array3(work, ints, W.G),
        R_composite_I=array3(work, ints, W.R_composite_I), R_composite_h=array2(work, ints, W.R_composite_h),
        R_composite_m=array1(work, ints, W.R_composite_m), oS=array3(work, ints, W.oS),
        oR=array3(work, ints, W.oR), op=array2(work, ints, W.op),
        joint_motion=array2(work, ints, W.joint_motion), P_plus=array2(work, ints, W.P_plus),
        inertia_scratch=array2(work, ints, W.inertia_scratch), vJ=array2(work, ints, W.vJ),
        MV=array2(work, ints, W.MV), z_to_parent=array2(work, ints, W.z_to_parent),
        alpha_ground=array2(work, ints, W.alpha_ground), eps_alpha=array2(work, ints, W.eps_alpha),
        force_columns=array2(work, ints, W.force_columns), H_force_columns=array2(work, ints, W.H_force_columns))


CI, CF, CW = CLOSED_INTS.row, CLOSED_FLOATS.row, CLOSED_WORK.row


@inline
def loop_fields(cint, cflt):
    """The :data:`closed_layout.LoopFields` of a closed chain's packed ``cint``, ``cflt``."""
    return LoopFields(
        n_independent=scalar(cint, cint, CI.n_independent), n_kept=scalar(cint, cint, CI.n_kept),
        float_size=scalar(cint, cint, CI.float_size), work_size=scalar(cint, cint, CI.work_size),
        row_kind=array1(cint, cint, CI.row_kind), row_chord=array1(cint, cint, CI.row_chord),
        row_kept=array1(cint, cint, CI.row_kept), chord_body_a=array1(cint, cint, CI.chord_body_a),
        chord_body_b=array1(cint, cint, CI.chord_body_b), independent=array1(cint, cint, CI.independent),
        dependent=array1(cint, cint, CI.dependent), loop_kept_start=array1(cint, cint, CI.loop_kept_start),
        loop_of_independent=array1(cint, cint, CI.loop_of_independent),
        loop_row_start=array1(cint, cint, CI.loop_row_start),
        coupling_term_start=array1(cint, cint, CI.coupling_term_start),
        coupling_term_q=array1(cint, cint, CI.coupling_term_q), coupling_term_v=array1(cint, cint, CI.coupling_term_v),
        coupling_term_leader=array1(cint, cint, CI.coupling_term_leader),
        coupling_poly_start=array1(cint, cint, CI.coupling_poly_start),
        row_n=array2(cflt, cint, CF.row_n), row_u=array2(cflt, cint, CF.row_u),
        chord_R_a=array3(cflt, cint, CF.chord_R_a), chord_p_a=array2(cflt, cint, CF.chord_p_a),
        chord_R_b=array3(cflt, cint, CF.chord_R_b), chord_p_b=array2(cflt, cint, CF.chord_p_b),
        chord_signs=array2(cflt, cint, CF.chord_signs), row_slack=array1(cflt, cint, CF.row_slack),
        closure_check_tol=scalar(cflt, cint, CF.closure_check_tol), rcond_switch=scalar(cflt, cint, CF.rcond_switch),
        coupling_term_coef=array1(cflt, cint, CF.coupling_term_coef), coupling_poly=array1(cflt, cint, CF.coupling_poly))


@inline
def scratch_fields(cint, cwork):
    """The :data:`closed_layout.ScratchFields` of the scratch array ``cwork`` of the closed chain of ``cint``."""
    return ScratchFields(
        M=array2(cwork, cint, CW.M), C=array1(cwork, cint, CW.C), zero=array1(cwork, cint, CW.zero),
        no_forces=array2(cwork, cint, CW.no_forces),
        MX=array2(cwork, cint, CW.MX), M_e=array2(cwork, cint, CW.M_e), rhs=array1(cwork, cint, CW.rhs),
        e=array1(cwork, cint, CW.e), G=array2(cwork, cint, CW.G), gamma=array1(cwork, cint, CW.gamma),
        G_d=array2(cwork, cint, CW.G_d), G_d_inv=array2(cwork, cint, CW.G_d_inv), X_d=array2(cwork, cint, CW.X_d),
        c_d=array1(cwork, cint, CW.c_d), world_R=array3(cwork, cint, CW.world_R),
        world_p=array2(cwork, cint, CW.world_p), world_w=array2(cwork, cint, CW.world_w),
        world_v=array2(cwork, cint, CW.world_v), world_wd=array2(cwork, cint, CW.world_wd),
        world_ad=array2(cwork, cint, CW.world_ad), column_w=array2(cwork, cint, CW.column_w),
        column_v=array2(cwork, cint, CW.column_v), column_p=array2(cwork, cint, CW.column_p),
        frame_R_a=array2(cwork, cint, CW.frame_R_a), frame_R_b=array2(cwork, cint, CW.frame_R_b),
        dv=array1(cwork, cint, CW.dv),
        loop_newton=array2(cwork, cint, CW.loop_newton), G_all=array2(cwork, cint, CW.G_all),
        gamma_all=array1(cwork, cint, CW.gamma_all),
        q_closed=array1(cwork, cint, CW.q_closed), v_full=array1(cwork, cint, CW.v_full),
        forces=array1(cwork, cint, CW.forces), a_full=array1(cwork, cint, CW.a_full),
        y_next=array1(cwork, cint, CW.y_next), y_stage=array1(cwork, cint, CW.y_stage), K=array2(cwork, cint, CW.K))


BI, BF = BUFFER_INTS.row, BUFFER_FLOATS.row
#: the descriptor rows of the buffers' sections: the integer ones first, the float ones from FIRST_FLOAT_ROW
FIRST_SECTION_ROW, FIRST_FLOAT_ROW, END_SECTION_ROW = BUFFER_INTS.first_row, BUFFER_FLOATS.first_row, BUFFER_FLOATS.end


@inline
def buffers_fit(int_buffer, float_buffer):
    """True when the sections the descriptor table at the start of ``int_buffer`` gives
    (:data:`closed_layout.BUFFER_INTS`, ``BUFFER_FLOATS``) lie inside the two buffers."""
    header = BUFFER_ROWS * DESCRIPTOR_WIDTH
    if int_buffer.shape[0] < header:
        return False
    for row in range(FIRST_SECTION_ROW, END_SECTION_ROW):
        start, size = int_buffer[DESCRIPTOR_WIDTH * row], int_buffer[DESCRIPTOR_WIDTH * row + 1]
        end = int_buffer.shape[0] if row < FIRST_FLOAT_ROW else float_buffer.shape[0]
        if start < (header if row < FIRST_FLOAT_ROW else 0) or size < 0 or start + size > end:
            return False
    return True


@inline
def buffer_sections(int_buffer, float_buffer):
    """The packed arrays ``(ints, floats, work, cint, cflt, cwork)`` of a ``ClosedData``'s ``int_buffer`` and
    ``float_buffer`` (views; check :func:`buffers_fit` first)."""
    return (array1(int_buffer, int_buffer, BI.ints), array1(float_buffer, int_buffer, BF.floats),
            array1(float_buffer, int_buffer, BF.work), array1(int_buffer, int_buffer, BI.cint),
            array1(float_buffer, int_buffer, BF.cflt), array1(float_buffer, int_buffer, BF.cwork))
