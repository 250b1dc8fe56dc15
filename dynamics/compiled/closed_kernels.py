"""Compiled forward dynamics of a constraint-embedded closed chain (numba, one configuration).

The numpy reference is :func:`dynamics.closed.embedding.forward_dynamics` (the
articulated-body algorithm on the embedded tree, seed 000 sections 5-6, seed 001
Algorithm 6.1).  Here the same accelerations come from the null-space projection of
the tree equations of motion onto the loops' constraint manifold (seed 000 section 6:
``theta_dot_S = X theta_dot_i``, ``M_e = X^* M X``, ``C_e = X^* (C + M Xdot theta_dot_i)``,
``T_e = X^* T``), evaluated over flat arrays:

1. tree ``M`` (composite inertia, seed 001 Algorithm 4.2) and ``C`` (Newton-Euler, seed 001
   Algorithm 3.1) by the compiled tree kernels (``entry_kernels.mass_matrix_and_bias``); the
   Newton-Euler pass leaves the body poses, twists and bias accelerations in the work arrays;
2. world kinematics of every body and the closure terms of every chord row -- error ``e``,
   Jacobian ``G = de/dq`` and ``gamma = Gdot v`` -- with the formulas of :mod:`dynamics.closed.closure`
   (:mod:`dynamics.compiled.closure_terms`);
3. per loop the dependent block ``G_d`` inverted (Gauss-Jordan, partial pivoting):
   ``X_d = -G_d^-1 G_i`` and ``c_d = -G_d^-1 gamma`` (:mod:`dynamics.closed.embedding`);
4. ``M_e a_i = X^* (tau - C - M c)`` by Cholesky, and ``a = X a_i + c``.

Why the null-space projection rather than the compound-node sweep: with few coordinates per
loop (3-6) the dense projection costs less than the sweep's per-node bookkeeping (aggregated
weights, ``H_e = X^* H_a``), needs no second tree layout and is a direct solve.  Its cost
grows as ``nv^2 + nv n_i r + n_i^3`` (r constraints per loop) against O(N) for the sweep;
measured (``benchmarks/closed_chains.py``, README), it is about 2x Pinocchio's
``constraintDynamics`` on one loop and 0.23x on 32.

A state the kernel cannot evaluate as the reference would -- a loop not closed, or a
dependent block whose Frobenius-norm condition estimate exceeds ``1 / RCOND_SWITCH`` (the
reference then switches to other dependent coordinates or raises), or a reduced mass matrix
that is not positive definite -- returns a status instead of numbers; the caller
(:mod:`dynamics.compiled.closed_api`) then runs the numpy reference, which raises
:class:`dynamics.closed.closure.ClosureError` or switches coordinates.

The packed arrays of one embedded model (:mod:`dynamics.compiled.closed_layout`: ``cint``, ``cflt``
and the scratch ``cwork`` of a ``ClosedData``) come in as named tuples (:func:`loop_fields`,
:func:`scratch_fields`); every function that is not inlined takes the packed arrays, the tuple
``P = (ints, floats, work, cint, cflt, cwork)``, and takes the fields it reads inside (a view costs
nothing, a tuple of views passed to a call is copied).  The kernels neither allocate nor return
arrays (compiled without reference counting, :mod:`dynamics.compiled.jit`).
"""

from __future__ import annotations

import numpy as np

from . import entry_kernels as ek
from .closure_terms import chord_rows, world_columns, world_kinematics
from .fields import buffer_sections, buffers_fit, loop_fields, scratch_fields
from .jit import inline, kernel

OK, NOT_CLOSED, ILL_CONDITIONED, NOT_DEFINITE, BAD_SHAPE = 0, 1, 2, 3, 4
#: why a kernel declined, by status (the closure kernels add theirs)
DECLINED = {NOT_CLOSED: "a loop is not closed", ILL_CONDITIONED: "a dependent block is near singular",
            NOT_DEFINITE: "the reduced mass matrix is not positive definite",
            BAD_SHAPE: "the arguments' shapes or types do not fit"}

#: the entry's one signature (compiled when this module is imported, or loaded from numba's cache):
#: arguments of other types raise TypeError instead of compiling a new specialization
SIGNATURE = ("int64(int64[::1], float64[::1], float64[::1], int64[::1], float64[::1], float64[::1], "
             "float64[::1], float64[::1], float64[::1], float64[::1])")
#: the signature of :func:`buffered_forward_dynamics` (the two buffers of a ``ClosedData``, q, v, tau, theta_ddot)
BUFFERED_SIGNATURE = "int64(int64[::1], float64[::1], float64[::1], float64[::1], float64[::1], float64[::1])"

@inline
def fits(P):
    """True when the packed arrays ``P`` have the sizes their descriptors give (the tree's and the loops')."""
    ints, floats, work, cint, cflt, cwork = P
    L = loop_fields(cint, cflt)
    return (ek.packed(ints, floats, work) and cflt.shape[0] == L.float_size
            and cwork.shape[0] == L.work_size)


@kernel(refcount=False, error_model="numpy")
def invert_general(A, n, Ainv):
    """``Ainv = A^-1`` (n, n) by Gauss-Jordan elimination with partial pivoting; A is overwritten.
    Returns False when a pivot is exactly zero."""
    for i in range(n):
        for j in range(n):
            Ainv[i, j] = 1.0 if i == j else 0.0
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(A[r, c]) > abs(A[piv, c]):
                piv = r
        if A[piv, c] == 0.0:
            return False
        if piv != c:
            for j in range(n):
                A[c, j], A[piv, j] = A[piv, j], A[c, j]
                Ainv[c, j], Ainv[piv, j] = Ainv[piv, j], Ainv[c, j]
        s = 1.0 / A[c, c]
        for j in range(n):
            A[c, j] *= s
            Ainv[c, j] *= s
        for r in range(n):
            if r != c and A[r, c] != 0.0:
                f = A[r, c]
                for j in range(n):
                    A[r, j] -= f * A[c, j]
                    Ainv[r, j] -= f * Ainv[c, j]
    return True


@kernel(refcount=False, error_model="numpy")
def frobenius(A, n):
    s = 0.0
    for i in range(n):
        for j in range(n):
            s += A[i, j] * A[i, j]
    return np.sqrt(s)


@inline
def invert_dependent_block(L, s, r0, r):
    """``G_d_inv`` of the loop whose kept rows start at r0 (r of them); False when the block's
    condition estimate ``||G_d||_F ||G_d^-1||_F`` (>= its 2-norm condition number) exceeds
    ``1 / rcond_switch`` or a pivot is zero."""
    for a in range(r):
        for b in range(r):
            s.G_d[a, b] = s.G[r0 + a, L.dependent[r0 + b]]
    norm = frobenius(s.G_d, r)
    if not invert_general(s.G_d, r, s.G_d_inv):
        return False
    return frobenius(s.G_d_inv, r) * norm * L.rcond_switch < 1.0


@kernel(refcount=False, error_model="numpy")
def dependent_maps(P):
    """Per loop ``X_d = -G_d^-1 G_i`` (its kept rows of ``X_d``) and ``c_d = -G_d^-1 gamma``, from the
    closure terms in the scratch.  Returns False when a dependent block is declined
    (:func:`invert_dependent_block`)."""
    ints, floats, work, cint, cflt, cwork = P
    L, s = loop_fields(cint, cflt), scratch_fields(cint, cwork)
    lk, ind = L.loop_kept_start, L.independent
    for l in range(lk.shape[0] - 1):
        r0 = lk[l]
        r = lk[l + 1] - r0
        if not invert_dependent_block(L, s, r0, r):
            return False
        for a in range(r):
            for j in range(ind.shape[0]):
                t = 0.0
                for b in range(r):
                    t -= s.G_d_inv[a, b] * s.G[r0 + b, ind[j]]
                s.X_d[r0 + a, j] = t
            t = 0.0
            for b in range(r):
                t -= s.G_d_inv[a, b] * s.gamma[r0 + b]
            s.c_d[r0 + a] = t
    return True


@kernel(refcount=False, error_model="numpy")
def cholesky_solve(A, b, n):
    """Solve ``A x = b`` (A (n, n) symmetric positive definite, overwritten by its Cholesky factor;
    b overwritten by x).  Returns False when A is not positive definite."""
    for j in range(n):
        t = A[j, j]
        for k in range(j):
            t -= A[j, k] * A[j, k]
        if not t > 0.0:
            return False
        A[j, j] = np.sqrt(t)
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= A[i, k] * A[j, k]
            A[i, j] = t / A[j, j]
    for i in range(n):
        t = b[i]
        for k in range(i):
            t -= A[i, k] * b[k]
        b[i] = t / A[i, i]
    for i in range(n - 1, -1, -1):
        t = b[i]
        for k in range(i + 1, n):
            t -= A[k, i] * b[k]
        b[i] = t / A[i, i]
    return True


@kernel(refcount=False, error_model="numpy")
def projected_solve(P, a):
    """``a = X a_i + c`` with ``X^* M X a_i = X^* (f - M c)`` (``X`` identity on the independent
    coordinates, ``X_d`` on the dependent ones; ``c`` = ``c_d`` on the dependent ones); f = tau - C in
    the scratch's ``C``.  Column j of ``X_d`` is zero outside the kept rows of its loop
    ``loop_of_independent[j]`` (-1: none), so the products cost O(nv n_i r) rather than
    O(nv n_i n_kept).  Returns False when ``X^* M X`` is not positive definite."""
    ints, floats, work, cint, cflt, cwork = P
    L, s = loop_fields(cint, cflt), scratch_fields(cint, cwork)
    ind, dep, lk, loop_of, M, Xd, Y = L.independent, L.dependent, L.loop_kept_start, L.loop_of_independent, \
        s.M, s.X_d, s.MX
    nv, n_i, n_k = M.shape[0], ind.shape[0], dep.shape[0]
    for r in range(nv):
        for j in range(n_i):
            t = M[r, ind[j]]
            l = loop_of[j]
            if l >= 0:
                for d in range(lk[l], lk[l + 1]):
                    t += M[r, dep[d]] * Xd[d, j]
            Y[r, j] = t
        t = s.C[r]
        for d in range(n_k):
            t -= M[r, dep[d]] * s.c_d[d]
        a[r] = t
    for i in range(n_i):
        l = loop_of[i]
        d0, d1 = (lk[l], lk[l + 1]) if l >= 0 else (0, 0)
        for j in range(n_i):
            t = Y[ind[i], j]
            for d in range(d0, d1):
                t += Xd[d, i] * Y[dep[d], j]
            s.M_e[i, j] = t
        t = a[ind[i]]
        for d in range(d0, d1):
            t += Xd[d, i] * a[dep[d]]
        s.rhs[i] = t
    if not cholesky_solve(s.M_e, s.rhs, n_i):
        return False
    for i in range(n_i):
        a[ind[i]] = s.rhs[i]
    for d in range(n_k):
        a[dep[d]] = s.c_d[d]
    add_dependent(L, s, s.rhs, a)
    return True


@inline
def add_dependent(L, s, x_i, out):
    """``out[dependent] += X_d x_i``, loop by loop (``X_d`` of :func:`dependent_maps`)."""
    lk, dep = L.loop_kept_start, L.dependent
    for j in range(L.independent.shape[0]):
        l = L.loop_of_independent[j]
        if l >= 0:
            for d in range(lk[l], lk[l + 1]):
                out[dep[d]] += s.X_d[d, j] * x_i[j]


@kernel(refcount=False, error_model="numpy")
def forward_dynamics_at(P, q, v, tau, theta_ddot):
    """:func:`embedded_forward_dynamics` without the size checks."""
    ints, floats, work, cint, cflt, cwork = P
    L, s = loop_fields(cint, cflt), scratch_fields(cint, cwork)
    ek.mass_matrix_and_bias(ints, floats, work, q, v, s.zero, s.no_forces, s.M, s.C)
    world_kinematics(P, False)
    world_columns(P)
    chord_rows(P, q, v, 0, L.row_kind.shape[0], s.G, s.gamma, False)
    for i in range(s.e.shape[0]):
        if abs(s.e[i]) > max(L.closure_check_tol, L.row_slack[i]):
            return NOT_CLOSED
    if not dependent_maps(P):
        return ILL_CONDITIONED
    for i in range(s.C.shape[0]):
        s.C[i] = tau[i] - s.C[i]
    if not projected_solve(P, theta_ddot):
        return NOT_DEFINITE
    return OK


@kernel(signature=SIGNATURE, refcount=False, error_model="numpy")
def embedded_forward_dynamics(ints, floats, work, cint, cflt, cwork, q, v, tau, theta_ddot):
    """Accelerations theta_ddot (nv,) of all tree joints of a closed chain at a closed, consistent state
    (q (nq,), v (nv,) with ``G v = 0``, tau (nv,)); returns a status (``OK`` or why not, :data:`DECLINED`).
    ``work``: the tree's work array, ``cwork``: the scratch of :mod:`closed_layout`."""
    P = (ints, floats, work, cint, cflt, cwork)
    nq, nv, float_size, work_size = ek.sizes(ints)
    if not fits(P) or q.shape[0] != nq or v.shape[0] != nv or tau.shape[0] != nv or theta_ddot.shape[0] != nv:
        return BAD_SHAPE
    return forward_dynamics_at(P, q, v, tau, theta_ddot)


@kernel(signature=BUFFERED_SIGNATURE, refcount=False, error_model="numpy")
def buffered_forward_dynamics(int_buffer, float_buffer, q, v, tau, theta_ddot):
    """:func:`embedded_forward_dynamics` with the packed arrays as the sections of a ``ClosedData``'s
    ``int_buffer`` and ``float_buffer`` (:data:`closed_layout.BUFFER_INTS`, ``BUFFER_FLOATS``): six array
    arguments instead of ten, which numba's dispatcher unboxes at every call (the one-configuration entry,
    :func:`dynamics.compiled.closed_api.forward_dynamics`).  Returns a status (``OK``, :data:`DECLINED`)."""
    if not buffers_fit(int_buffer, float_buffer):
        return BAD_SHAPE
    P = buffer_sections(int_buffer, float_buffer)
    ints, floats, work, cint, cflt, cwork = P
    nq, nv, float_size, work_size = ek.sizes(ints)
    if not fits(P) or q.shape[0] != nq or v.shape[0] != nv or tau.shape[0] != nv or theta_ddot.shape[0] != nv:
        return BAD_SHAPE
    return forward_dynamics_at(P, q, v, tau, theta_ddot)
