"""Python entry points of the compiled backend: argument checks, batching, Model/Data.

Every function takes an :class:`dynamics.model.SKOModel` and, like the numpy functions
it replaces, a single configuration (``q`` (nq,)) or a batch (``q`` (B, nq); arguments
without a batch axis are broadcast).  A single configuration runs the one-configuration
kernel on ``data`` (default: ``model.default_data``, see ``SKOModel.create_data``: Pinocchio's
``Data``, reused across calls, one call at a time); a batch runs the ``prange`` kernel of
:mod:`dynamics.compiled.entry_kernels`.  The packed arrays are ``model.flat_model``.

One configuration of RNEA, CRBA or ABA with float64 (n,) arrays is passed to its kernel
as given (the kernel checks the sizes; numba's dispatcher the types, see :func:`_seal`):
the public call costs a few tenths of a microsecond over the kernel.  Other arguments
(lists, other dtypes, strided or read-only arrays, batches) are converted first.
Importing this module loads the three one-configuration kernels from numba's cache (or
compiles them, the first time), see :func:`_seal`.
"""

from __future__ import annotations

import numba
import numpy as np

from . import entry_kernels as ek
from .jit import seal
from ..singular import SingularMassMatrix, singular_mass_matrix

__all__ = ["inverse_dynamics", "bias_forces", "gravity_forces", "mass_matrix", "forward_dynamics",
           "mass_matrix_inverse", "mass_matrix_logdet", "mass_matrix_det", "jacobian", "body_poses"]

_NO_FORCES = np.zeros((0, 6))
_NO_FORCES_BATCH = np.zeros((0, 0, 6))
#: looked up once (module globals are cheaper than attributes on the fast path)
_empty, _crba = np.empty, ek.crba

_MISFIT = "data is not a Data of this model (create it with model.create_data())"


def _array(x, width: int, name: str):
    """x as a C-contiguous writeable float64 array (one compiled type per kernel) of shape (width,)
    or (B, width)."""
    x = np.require(x, dtype=np.float64, requirements="CAW")
    if x.ndim not in (1, 2) or x.shape[-1] != width:
        raise ValueError(f"{name} must have shape ({width},) or (B, {width}), got {x.shape}")
    return x


def _rows(arrays, f_ext=None):
    """Broadcast (w,) / (B, w) arrays (and the batch of f_ext) to contiguous (B, w) arrays."""
    sizes = {x.shape[0] for x in arrays if x.ndim == 2}
    if f_ext is not None and np.ndim(f_ext) == 3:
        sizes.add(np.shape(f_ext)[0])
    B = max(sizes) if sizes else 1
    if not sizes <= {1, B}:
        raise ValueError(f"batch sizes {sorted(sizes)} do not match")
    out = [x if x.ndim == 2 and x.shape[0] == B else np.broadcast_to(x, (B, x.shape[-1])).copy()
           for x in arrays]
    return B, out


def _single(*arrays, f_ext=None) -> bool:
    return all(x.ndim == 1 for x in arrays) and (f_ext is None or np.ndim(f_ext) == 2)


def _forces(model, f_ext, batch):
    """f_ext None | (n, 6) | (B, n, 6) -> kernel argument ((0, 6) / (n, 6) / (B, n, 6))."""
    if f_ext is None:
        return _NO_FORCES if batch is None else _NO_FORCES_BATCH
    f = np.require(f_ext, dtype=np.float64, requirements="CAW")
    if f.shape[-2:] != (model.n_bodies, 6) or f.ndim not in (2, 3):
        raise ValueError(f"f_ext must have shape (n_bodies, 6) or (B, n_bodies, 6), got {f.shape}")
    if batch is None or f.shape == (batch, model.n_bodies, 6):
        return f
    return np.broadcast_to(f, (batch, model.n_bodies, 6)).copy()   # a writeable array: the type the kernels take


def _work(model, data):
    return (model.default_data if data is None else data).work


def _state_algorithm(kernel, which: int, x_name: str, doc: str):
    """The public function ``f(model, q, v, x, f_ext=None, data=None)`` of one state kernel (RNEA:
    x = theta_ddot; ABA: x = tau).  One configuration of C-contiguous float64 arrays without external
    forces takes the fast path (no Python checks: see :func:`_seal`); anything else goes through
    :func:`_state_kernel`.  A zero articulated inertia (ABA's division, in one call or in a row of a
    parallel batch) becomes :class:`dynamics.singular.SingularMassMatrix`."""
    def run(model, q, v, x, f_ext=None, data=None):
        try:
            flat = model.flat_model
            if f_ext is None and q.ndim == 1:   # a batch would cost numba's TypeError (0.13 ms, see _seal)
                out = _empty(flat.nv)
                if kernel(flat.ints, flat.floats, (model.default_data if data is None else data).work, q, v, x,
                          _NO_FORCES, out):
                    return out
        except (TypeError, AttributeError):  # not the compiled argument type (see _seal), a list
            pass
        except ZeroDivisionError:
            raise _singular(model, q) from None
        try:
            return _state_kernel(kernel, which, model, q, v, x, x_name, f_ext, data)
        except ZeroDivisionError:
            raise _singular(model, q) from None
        except SystemError as exc:  # numba's parallel batch wraps the ZeroDivisionError of a row
            if isinstance(exc.__cause__, ZeroDivisionError):
                raise _singular(model, q) from None
            raise
    run.__doc__ = doc
    return run


inverse_dynamics = _state_algorithm(ek.rnea, ek.RNEA, "a", """Joint forces ``tau = M(q) a + C(q, v)`` by the compiled RNEA (seed 001 Algorithm 3.1).

    ``inverse_dynamics(model, q, v, a, f_ext=None, data=None)``: q (nq,) | (B, nq); v, a (nv,) |
    (B, nv); f_ext None | (n, 6) | (B, n, 6) (body frames, about the body origin, moment first);
    data: a ``model.create_data()`` for one configuration (default ``model.default_data``).
    Returns (nv,) or (B, nv).
    """)
inverse_dynamics.__name__ = inverse_dynamics.__qualname__ = "inverse_dynamics"

forward_dynamics = _state_algorithm(ek.aba, ek.ABA, "tau", """Accelerations ``M^-1 (tau - C(q, v))`` by the compiled ABA (seed 001 Algorithm 6.1).

    ``forward_dynamics(model, q, v, tau, f_ext=None, data=None)``: shapes as
    :func:`inverse_dynamics`; returns (nv,) or (B, nv).
    """)
forward_dynamics.__name__ = forward_dynamics.__qualname__ = "forward_dynamics"


def bias_forces(model, q, v, f_ext=None, data=None):
    """``C(q, v)``: Coriolis, centrifugal and gravity forces (RNEA with a = 0)."""
    return inverse_dynamics(model, q, v, np.zeros(model.nv), f_ext, data)


def gravity_forces(model, q, data=None):
    """Generalized gravity forces ``g(q)`` (RNEA with v = a = 0)."""
    zero = np.zeros(model.nv)
    return inverse_dynamics(model, q, zero, zero, None, data)


def _singular(model, q) -> SingularMassMatrix:
    """The error for a mass matrix that is singular at q (one configuration, or the first singular one of a batch)."""
    Ms = mass_matrix(model, q)
    Ms = Ms.reshape(-1, model.nv, model.nv)
    worst = int(np.argmin([np.linalg.eigvalsh(0.5 * (M + M.T))[0] for M in Ms]))
    return singular_mass_matrix(model.joint_names, model.v_offset, Ms[worst])


def _seal():
    """Compile (or load from numba's cache) the one-configuration RNEA, CRBA and ABA kernels for
    the one argument type this module passes them (C-contiguous writeable float64 arrays), on a
    tree of one body without freedom, then forbid numba to compile others (:func:`jit.seal`): any
    other argument (a list, a strided or read-only array, another dtype or a batch) raises
    ``TypeError`` at the call, and the public functions then convert it (:func:`_array`).  The
    kernels check the sizes (``entry_kernels.fits``), so the fast path of one configuration checks
    nothing in Python.
    """
    from ..model import BodySpec, build_model

    eye, zero3 = np.eye(3), np.zeros(3)
    tree = build_model([BodySpec("body", -1, "fixed", "weld", eye, zero3, 1.0, zero3, eye)])
    flat, work, none = tree.flat_model, tree.create_data().work, np.zeros(0)
    ek.rnea(flat.ints, flat.floats, work, none, none, none, np.zeros((0, 6)), none)
    ek.aba(flat.ints, flat.floats, work, none, none, none, np.zeros((0, 6)), none)
    ek.crba(flat.ints, flat.floats, work, none, np.zeros((0, 0)))
    for kernel in (ek.rnea, ek.aba, ek.crba):
        seal(kernel)


_seal()


def _state_kernel(single, which: int, model, q, v, x, x_name: str, f_ext, data):
    """Run a kernel of (q, v, x, f_ext) -> (nv,) on one state or, compiled over rows, on a batch."""
    flat = model.flat_model
    q, v, x = _array(q, flat.nq, "q"), _array(v, flat.nv, "v"), _array(x, flat.nv, x_name)
    if _single(q, v, x, f_ext=f_ext):
        out = np.empty(flat.nv)
        if not single(flat.ints, flat.floats, _work(model, data), q, v, x, _forces(model, f_ext, None), out):
            raise ValueError(_MISFIT)
        return out
    B, (q, v, x) = _rows([q, v, x], f_ext)
    out = np.empty((B, flat.nv))
    ek.state_batch(which, flat.ints, flat.floats, q, v, x, _forces(model, f_ext, B), out, numba.get_num_threads())
    return out


def mass_matrix(model, q, data=None):
    """Mass matrix M(q) (nv, nv) or (B, nv, nv) by the compiled CRBA (seed 001 Algorithms 4.1-4.2)."""
    try:
        flat = model.flat_model
        if q.ndim == 1:   # a batch would cost numba's TypeError (0.13 ms, see _seal)
            M = _empty(flat.nv2)
            if _crba(flat.ints, flat.floats, (model.default_data if data is None else data).work, q, M):
                return M
    except (TypeError, AttributeError):  # not the compiled argument type (see _seal), a list
        pass
    flat = model.flat_model
    q = _array(q, flat.nq, "q")
    if q.ndim == 1:
        M = np.empty(flat.nv2)
        if not ek.crba(flat.ints, flat.floats, _work(model, data), q, M):
            raise ValueError(_MISFIT)
        return M
    M = np.empty((q.shape[0], flat.nv, flat.nv))
    ek.crba_batch(flat.ints, flat.floats, q, M, numba.get_num_threads())
    return M


def _each_row(q, one):
    return one(q) if q.ndim == 1 else np.stack([one(qi) for qi in q])


def mass_matrix_inverse(model, q, data=None):
    """``M(q)^-1`` by the innovations factorization (seed 001 Eq. 51): (nv, nv) or (B, nv, nv)."""
    flat, work = model.flat_model, _work(model, data)

    def one(qi):
        Minv, Linv, W = np.empty(flat.nv2), np.empty(flat.nv2), np.empty(flat.nv2)
        try:
            if not ek.mass_matrix_inverse(flat.ints, flat.floats, work, qi, Linv, W, Minv):
                raise ValueError(_MISFIT)
        except ZeroDivisionError:  # a zero articulated inertia D(k)
            raise _singular(model, qi) from None
        return Minv
    return _each_row(_array(q, flat.nq, "q"), one)


def mass_matrix_logdet(model, q, data=None):
    """``log det M(q) = sum_k log det D(k)`` (seed 001 Eq. 53): float or (B,)."""
    flat, work = model.flat_model, _work(model, data)

    def one(qi):
        out = np.empty(1)
        if not ek.logdet(flat.ints, flat.floats, work, qi, out):
            raise ValueError(_MISFIT)
        return out[0]
    return _each_row(_array(q, flat.nq, "q"), one)


def mass_matrix_det(model, q, data=None):
    """``det M(q) = prod_k det D(k)`` (seed 001 Corollary 6.1): float or (B,)."""
    return np.exp(mass_matrix_logdet(model, q, data))


def jacobian(model, q, body, point=None, frame: str = "local", data=None):
    """Jacobian (6, nv) or (B, 6, nv) of ``[omega; v]`` of a point on a body (seed 002 Eq. 13).

    body: name or index; point (3,) m in the body frame (default its origin);
    frame "local" (body axes) or "world" (ground axes).
    """
    if frame not in ("local", "world"):
        raise ValueError("frame must be 'local' or 'world'")
    flat, work = model.flat_model, _work(model, data)
    k = model.body_index(body)
    pt = np.zeros(3) if point is None else np.array(point, dtype=np.float64).reshape(3)

    def one(qi):
        J = np.empty((6, flat.nv))
        if not ek.jacobian(flat.ints, flat.floats, work, qi, k, pt, frame == "world", J):
            raise ValueError(f"body {body!r} is not a body of the model, or " + _MISFIT)
        return J
    return _each_row(_array(q, flat.nq, "q"), one)


def body_poses(model, q, data=None):
    """Ground-frame poses: R (n, 3, 3) or (B, n, 3, 3) and p (n, 3) or (B, n, 3) m."""
    flat = model.flat_model
    data = model.default_data if data is None else data

    def one(qi):
        if not ek.forward_kinematics(flat.ints, flat.floats, data.work, qi):
            raise ValueError(_MISFIT)
        return data.oR.copy(), data.op.copy()
    q = _array(q, flat.nq, "q")
    if q.ndim == 1:
        return one(q)
    poses = [one(qi) for qi in q]
    return np.stack([r for r, _ in poses]), np.stack([p for _, p in poses])
