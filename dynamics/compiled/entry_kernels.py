"""Compiled entry points: packed arrays in, one configuration or a parallel batch.

Each entry takes the packed arrays of a :class:`dynamics.compiled.layout.FlatModel` (``ints``,
``floats``) and of a :class:`dynamics.compiled.layout.Data` (``work``), takes their named fields
(:func:`fields.model_fields`, :func:`fields.work_fields`) and runs a kernel of
:mod:`dynamics.compiled.tree_kernels` or :mod:`dynamics.compiled.factor_kernels`, inlined.  The
entries neither allocate nor return arrays and are compiled without reference counting
(:mod:`dynamics.compiled.jit`): each array view would cost an atomic reference count update
otherwise.  Other kernels (the tree simulator, which allocates, and the closed chains) call these
entries rather than inlining the recursions: one compiled copy of each recursion, which runs
without reference counting wherever it is called from, and a call that passes three packed arrays
instead of some 50 views.
Each entry checks the sizes of its arguments against the model (:func:`fits`) and returns False,
computing nothing, when they do not fit.

The ``*_batch`` entries cut the batch into ``n_chunks`` contiguous chunks run in parallel threads
(``numba.prange``); each chunk allocates its work array once.  ``n_chunks`` is read in Python
(``numba.get_num_threads()``): calling that inside a kernel keeps numba from caching it.
``f_ext`` is (n, 6) / (B, n, 6), or an empty (0, 6) / (0, 0, 6) array for none.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from . import factor_kernels as fk
from . import tree_kernels as tk
from .fields import model_fields, n_bodies, sizes, work_fields
from .jit import inline, kernel


@inline
def packed(ints, floats, work):
    """True when ``floats`` and ``work`` have the sizes the descriptors of ``ints`` give them: the packed
    arrays of one model (every field the kernels view lies inside them)."""
    nq, nv, float_size, work_size = sizes(ints)
    return floats.shape[0] == float_size and work.shape[0] == work_size


@inline
def fits(ints, floats, work, nq, nv1, nv2):
    """True when the packed arrays are those of one model (:func:`packed`) and the sizes nq and nv1, nv2
    are its nq and nv: the size checks of the public fast path (numba's dispatcher checks the types)."""
    model_nq, model_nv, float_size, work_size = sizes(ints)
    return packed(ints, floats, work) and nq == model_nq and nv1 == model_nv and nv2 == model_nv


@inline
def forces_fit(ints, f_ext):
    """True when ``f_ext`` holds one force per body, or none (an empty (0, 6) array)."""
    return f_ext.shape[1] == 6 and (f_ext.shape[0] == 0 or f_ext.shape[0] == n_bodies(ints))


@kernel(refcount=False)
def rnea(ints, floats, work, q, v, theta_ddot, f_ext, tau):
    """tau (nv,) = inverse dynamics at (q, v, theta_ddot); False (nothing computed) when the sizes do not fit."""
    if not (fits(ints, floats, work, q.shape[0], v.shape[0], theta_ddot.shape[0]) and tau.shape[0] == v.shape[0]
            and forces_fit(ints, f_ext)):
        return False
    tk.rnea(model_fields(ints, floats), work_fields(ints, work), q, v, theta_ddot, f_ext, tau)
    return True


@kernel(refcount=False)
def aba(ints, floats, work, q, v, tau, f_ext, theta_ddot):
    """theta_ddot (nv,) = forward dynamics at (q, v, tau); False (nothing computed) when the sizes do not fit."""
    if not (fits(ints, floats, work, q.shape[0], v.shape[0], tau.shape[0]) and theta_ddot.shape[0] == v.shape[0]
            and forces_fit(ints, f_ext)):
        return False
    tk.aba(model_fields(ints, floats), work_fields(ints, work), q, v, tau, f_ext, theta_ddot)
    return True


@kernel(refcount=False)
def crba(ints, floats, work, q, M):
    """M (nv, nv) = mass matrix at q; False (nothing computed) when the sizes do not fit."""
    if not fits(ints, floats, work, q.shape[0], M.shape[0], M.shape[1]):
        return False
    tk.crba(model_fields(ints, floats), work_fields(ints, work), q, M)
    return True


@kernel(refcount=False)
def mass_matrix_inverse(ints, floats, work, q, Linv, W, Minv):
    """Minv (nv, nv) = M(q)^-1 (Linv, W: (nv, nv) scratch); False when the sizes do not fit."""
    if not fits(ints, floats, work, q.shape[0], Minv.shape[0], Minv.shape[1]) or Linv.shape != Minv.shape \
            or W.shape != Minv.shape:
        return False
    fk.mass_matrix_inverse(model_fields(ints, floats), work_fields(ints, work), q, Linv, W, Minv)
    return True


@kernel(refcount=False)
def logdet(ints, floats, work, q, out):
    """out[0] = log det M(q); False when the sizes do not fit."""
    model_nq, model_nv, float_size, work_size = sizes(ints)
    if not fits(ints, floats, work, q.shape[0], model_nv, model_nv) or out.shape[0] != 1:
        return False
    out[0] = fk.riccati(model_fields(ints, floats), work_fields(ints, work), q)
    return True


@kernel(refcount=False)
def jacobian(ints, floats, work, q, body, point, world, J):
    """J (6, nv) of a point (3,) on a body; False when the sizes do not fit."""
    m = model_fields(ints, floats)
    if not fits(ints, floats, work, q.shape[0], J.shape[1], J.shape[1]) or not 0 <= body < m.parent.shape[0]:
        return False
    fk.jacobian(m, work_fields(ints, work), q, body, point, world, J)
    return True


@kernel(refcount=False)
def forward_kinematics(ints, floats, work, q):
    """Ground-frame poses of all bodies into the work fields ``oR``, ``op``; False when the sizes do not fit."""
    model_nq, model_nv, float_size, work_size = sizes(ints)
    if not fits(ints, floats, work, q.shape[0], model_nv, model_nv):
        return False
    fk.forward_kinematics(model_fields(ints, floats), work_fields(ints, work), q)
    return True


@kernel(refcount=False)
def mass_matrix_and_bias(ints, floats, work, q, v, zero, no_forces, M, C):
    """M (nv, nv) = mass matrix and C (nv,) = bias forces at (q, v) (``zero``: (nv,) zeros, ``no_forces``:
    an empty (0, 6) array); the work then holds the Newton-Euler pass (poses, twists, accelerations).
    False when the sizes do not fit."""
    if not crba(ints, floats, work, q, M):
        return False
    return rnea(ints, floats, work, q, v, zero, no_forces, C)


@kernel
def chunk_bounds(B, n_chunks, c):
    """First and last+1 row of chunk c when B rows are cut into n_chunks."""
    return c * B // n_chunks, (c + 1) * B // n_chunks


#: ``state_batch`` kernels: RNEA (x accelerations, out forces) and ABA (x forces, out accelerations)
RNEA, ABA = 0, 1


@kernel(parallel=True)
def state_batch(which, ints, floats, q, v, x, f_ext, out, n_chunks):
    """``out[b] = rnea(q[b], v[b], x[b], f_ext[b])`` (``which`` = RNEA) or ``aba(...)`` (ABA) for every
    row b; out (B, nv).  Each row calls the one-configuration entry (:func:`rnea`, :func:`aba`: eight
    arrays passed, the recursion inlined there), so the batch adds no compiled copy of the recursions."""
    B = q.shape[0]
    n_chunks = max(1, min(B, n_chunks))
    none = np.zeros((0, 6))
    nq, nv, float_size, work_size = sizes(ints)
    for c in prange(n_chunks):
        work = np.zeros(work_size)
        lo, hi = chunk_bounds(B, n_chunks, c)
        for b in range(lo, hi):
            fb = f_ext[b] if f_ext.shape[0] > 0 else none
            if which == RNEA:
                rnea(ints, floats, work, q[b], v[b], x[b], fb, out[b])
            else:
                aba(ints, floats, work, q[b], v[b], x[b], fb, out[b])


@kernel(parallel=True)
def crba_batch(ints, floats, q, M, n_chunks):
    """``M[b] = crba(q[b])`` for every row b (the one-configuration entry :func:`crba`); M (B, nv, nv)."""
    B = q.shape[0]
    n_chunks = max(1, min(B, n_chunks))
    nq, nv, float_size, work_size = sizes(ints)
    for c in prange(n_chunks):
        work = np.zeros(work_size)
        lo, hi = chunk_bounds(B, n_chunks, c)
        for b in range(lo, hi):
            crba(ints, floats, work, q[b], M[b])
