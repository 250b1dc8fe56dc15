"""Compiled entry points: packed arrays in, one configuration or a parallel batch.

Each entry unpacks the :class:`dynamics.compiled.layout.FlatModel` arrays (``ints``,
``blocks``, ``extra``) and a packed work array into views (:func:`layout.model_views`,
:func:`layout.work_views`) and runs a kernel of :mod:`dynamics.compiled.tree_kernels`
or :mod:`dynamics.compiled.factor_kernels`.  The ``*_batch`` entries cut the batch into
``n_chunks`` contiguous chunks run in parallel threads (``numba.prange``); each chunk
allocates its work array once.  ``n_chunks`` is read in Python
(``numba.get_num_threads()``): calling that inside a kernel keeps numba from caching it.
``f_ext`` is (n, 6) / (B, n, 6), or an empty (0, 6) / (0, 0, 6) array for none.  The
one-configuration entries of RNEA, CRBA and ABA are compiled without reference counting
(``_nrt=False``, see :mod:`dynamics.compiled.tree_kernels`): each array view costs an
atomic reference count update otherwise.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import factor_kernels as fk
from . import simulate_kernels as sim
from . import tree_kernels as tk
from .layout import model_views, work_size, work_views

unpack_model = njit(cache=True)(model_views)
unpack_work = njit(cache=True)(work_views)
packed_work_size = njit(cache=True)(work_size)
#: the same views for the entries compiled without reference counting (``_nrt=False``: they
#: neither allocate nor return arrays, and the views live only during the call).  Inlined into
#: the caller (numba IR), so that LLVM drops the views a kernel does not use (0.1 us of a
#: 1.5 us CRBA call when they were a call of their own); never cached on their own: numba's
#: cache index does not tell ``_nrt`` variants of one function apart.
borrow_model = njit(_nrt=False, inline="always")(model_views)
borrow_work = njit(_nrt=False, inline="always")(work_views)


@njit(cache=True, _nrt=False, inline="always")
def fits(ints, work, nq, nv1, nv2):
    """True when the sizes nq and nv1, nv2 are the model's nq and nv and ``work`` is a work array of
    this model: the size checks of the public fast path (numba's dispatcher checks the types)."""
    n = ints.shape[1] - 1
    return nq == ints[2, n] and nv1 == ints[3, n] and nv2 == ints[3, n] and work.shape[0] == 7 * n + 4


@njit(cache=True, _nrt=False)
def rnea(ints, blocks, extra, work, q, v, a, f_ext, tau):
    """tau (nv,) = inverse dynamics at (q, v, a); False (nothing computed) when the sizes do not fit."""
    if not fits(ints, work, q.shape[0], v.shape[0], a.shape[0]):
        return False
    tk.rnea(borrow_model(ints, blocks, extra), borrow_work(work, ints.shape[1] - 1), q, v, a, f_ext, tau)
    return True


@njit(cache=True, _nrt=False)
def aba(ints, blocks, extra, work, q, v, tau, f_ext, qdd):
    """qdd (nv,) = forward dynamics at (q, v, tau); False (nothing computed) when the sizes do not fit."""
    if not fits(ints, work, q.shape[0], v.shape[0], tau.shape[0]):
        return False
    tk.aba(borrow_model(ints, blocks, extra), borrow_work(work, ints.shape[1] - 1), q, v, tau, f_ext, qdd)
    return True


@njit(cache=True, _nrt=False)
def crba(ints, blocks, extra, work, q, M):
    """M (nv, nv) = mass matrix at q; False (nothing computed) when the sizes do not fit."""
    if not fits(ints, work, q.shape[0], M.shape[0], M.shape[1]):
        return False
    tk.crba(borrow_model(ints, blocks, extra), borrow_work(work, ints.shape[1] - 1), q, M)
    return True


@njit(cache=True)
def mass_matrix_and_bias(ints, blocks, extra, work, q, v, zero, M, C):
    """M (nv, nv) = mass matrix and C (nv,) = bias forces at (q, v) (``zero``: (nv,) zeros); returns the
    model and work views, the work holding the Newton-Euler pass (poses, twists, accelerations)."""
    m, w = unpack_model(ints, blocks, extra), unpack_work(work, ints.shape[1] - 1)
    tk.crba_call(m, w, q, M)
    tk.rnea_call(m, w, q, v, zero, np.zeros((0, 6)), C)
    return m, w


@njit(cache=True)
def mass_matrix_inverse(ints, blocks, extra, work, q, Minv):
    """Minv (nv, nv) = M(q)^-1."""
    fk.mass_matrix_inverse(unpack_model(ints, blocks, extra), unpack_work(work, ints.shape[1] - 1), q, Minv)


@njit(cache=True)
def logdet(ints, blocks, extra, work, q):
    """log det M(q)."""
    return fk.riccati(unpack_model(ints, blocks, extra), unpack_work(work, ints.shape[1] - 1), q)


@njit(cache=True)
def jacobian(ints, blocks, extra, work, q, body, point, world, J):
    """J (6, nv) of a point on a body."""
    fk.jacobian(unpack_model(ints, blocks, extra), unpack_work(work, ints.shape[1] - 1), q, body, point, world, J)


@njit(cache=True)
def forward_kinematics(ints, blocks, extra, work, q):
    """Ground-frame poses of all bodies into the work array (``oR``, ``op``)."""
    fk.forward_kinematics(unpack_model(ints, blocks, extra), unpack_work(work, ints.shape[1] - 1), q)


@njit(cache=True)
def simulate(ints, blocks, extra, work, q0, v0, tau, damping, limit_q, limit_v, lower, upper, dt, steps, stride,
             method, Q, V):
    """Fixed-step trajectory, every stride-th state into Q, V; returns the number of limit contacts."""
    return sim.simulate(unpack_model(ints, blocks, extra), unpack_work(work, ints.shape[1] - 1), q0, v0, tau,
                        damping, limit_q, limit_v, lower, upper, dt, steps, stride, method, Q, V)


@njit(cache=True)
def chunk_bounds(B, n_chunks, c):
    """First and last+1 row of chunk c when B rows are cut into n_chunks."""
    return c * B // n_chunks, (c + 1) * B // n_chunks


#: ``state_batch`` kernels: RNEA (x accelerations, out forces) and ABA (x forces, out accelerations)
RNEA, ABA = 0, 1


@njit(cache=True, parallel=True)
def state_batch(which, ints, blocks, extra, q, v, x, f_ext, out, n_chunks):
    """``out[b] = rnea(q[b], v[b], x[b], f_ext[b])`` (``which`` = RNEA) or ``aba(...)`` (ABA) for every
    row b; out (B, nv).  Each row calls the one-configuration entry (:func:`rnea`, :func:`aba`: nine
    arrays passed, the recursion inlined there), so the batch adds no compiled copy of the recursions."""
    B = q.shape[0]
    n_chunks = max(1, min(B, n_chunks))
    n = ints.shape[1] - 1
    none = np.zeros((0, 6))
    for c in prange(n_chunks):
        work = np.zeros((packed_work_size(n), 6, 6))
        lo, hi = chunk_bounds(B, n_chunks, c)
        for b in range(lo, hi):
            fb = f_ext[b] if f_ext.shape[0] > 0 else none
            if which == RNEA:
                rnea(ints, blocks, extra, work, q[b], v[b], x[b], fb, out[b])
            else:
                aba(ints, blocks, extra, work, q[b], v[b], x[b], fb, out[b])


@njit(cache=True, parallel=True)
def crba_batch(ints, blocks, extra, q, M, n_chunks):
    """``M[b] = crba(q[b])`` for every row b (the one-configuration entry :func:`crba`); M (B, nv, nv)."""
    B = q.shape[0]
    n_chunks = max(1, min(B, n_chunks))
    n = ints.shape[1] - 1
    for c in prange(n_chunks):
        work = np.zeros((packed_work_size(n), 6, 6))
        lo, hi = chunk_bounds(B, n_chunks, c)
        for b in range(lo, hi):
            crba(ints, blocks, extra, work, q[b], M[b])
