"""One dispatch from model kind to algorithm.

Every dynamics model says what it is by its class attribute ``kind``:

==============  ==========================================  =====================================
kind            model                                       coordinates of the results
==============  ==========================================  =====================================
``tree``        :class:`dynamics.SKOModel`                  the tree's (nv)
``embedded``    :class:`dynamics.embedding.EmbeddedModel`   all tree joints; mass matrix and
                                                            Jacobians in the independent ones
``lagrange``    :class:`dynamics.closed.lagrange.LagrangeModel`    all tree joints (accelerations only)
``aggregated``  :class:`dynamics.closed.aggregated.AggregatedModel`  the tree's, original order
==============  ==========================================  =====================================

:data:`ALGORITHMS` maps ``kind -> {public function name -> implementation}``;
the public functions of :mod:`dynamics` (``mass_matrix``, ``inverse_dynamics``,
``forward_dynamics``, ``bias_forces``, ``jacobian``, ``operational_space_inertia``,
``consistent_state``), the CLI and the simulator look their implementation up with :func:`algorithm` and never
probe a model's type.  Every entry has the signature of the public function
(arguments in the same order, ``f_ext`` by keyword) and accepts one
configuration or a batch; the tree functions and the embedded forward dynamics also take
``data=`` (the compiled backend's work arrays, ``model.create_data()``; the numpy entries
allocate their own and ignore it).  The tree row is the compiled backend
(:mod:`dynamics.compiled`; the numpy modules ``crba``, ``rnea``, ``aba``,
``innovations``, ``jacobians`` stay the reference, in :data:`REFERENCE`), and so is the embedded
forward dynamics (:mod:`dynamics.compiled.closed_api`; the numpy reference is
:func:`dynamics.closed.embedding.forward_dynamics`).  A backend plugs in by
replacing entries of a row; a new model kind adds a row.  A pair missing from
the table raises ``TypeError`` with the reason in :data:`NOT_DEFINED` when
there is one.

Backends: :func:`backend` is the one switch that forces an implementation inside a ``with``
block -- ``"numpy"``: the numpy reference of every function (:data:`REFERENCE` over
:data:`ALGORITHMS`; the closed-chain loop closure and fixed-step loop take their numpy steps);
``"compiled"``: the compiled kernels, and where one declines (a state it cannot evaluate, a
model with joint couplings, a step) :class:`CompiledDeclined` is raised instead of running the
reference; ``"auto"`` (the default): the compiled kernels, and where one declines the numpy
reference runs and says so on the logger of the declining module at DEBUG level
(``mbcompose.dynamics.compiled...``: what ran instead, and why); ``"codegen"``: the model's generated
C (:mod:`dynamics.codegen.backend`: mass matrix, inverse and forward dynamics of trees, forward
dynamics of embedded closed chains; compiled with the system C compiler on first use and cached, a
:class:`dynamics.codegen.CodegenUnavailable` naming the reason when it cannot be), the default
elsewhere.  Functions without a compiled implementation run the reference under every backend.

The process's backend (outside every block, and inside ``backend("auto")``) comes from the
environment variable :data:`BACKEND_ENV` (the CLI's ``--backend`` sets it; Dask worker processes
inherit it), read once, at the first dynamics call:

* unset: ``auto``; where numba's cache lacks a kernel, the call compiles it in this process (about
  a minute of CPU on first use after an install) after a one-line warning;
* ``auto``: first use in seconds -- while the cache is not ready (:func:`compiled.cache_is_ready`)
  the whole process runs the numpy reference, one detached process compiles the kernels
  (:func:`compiled.compile_in_background`: one at a time, a lock file, the ready marker written
  last), and a warning says so whatever stderr is; the next process finds the kernels ready;
* ``compiled``: as unset (compile here and wait; a kernel that declines still falls back);
* ``numpy``: the numpy reference, as ``backend("numpy")`` for the whole process;
* ``codegen``: the generated C, as ``backend("codegen")`` for the whole process.
"""

from __future__ import annotations

import logging
import os
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable

from . import aba, compiled, crba, innovations, jacobians, opspace, rnea
from .batch import each_configuration
from .closed import aggregated, embedding, lagrange
from .compiled import cache_is_cold

log = logging.getLogger(__name__)

__all__ = ["TREE", "EMBEDDED", "LAGRANGE", "AGGREGATED", "ALGORITHMS", "REFERENCE", "NOT_DEFINED", "algorithm",
           "backend", "current_backend", "declined", "CompiledDeclined", "BACKENDS", "BACKEND_ENV",
           "process_backend", "forget_process_backend"]

#: the values of :func:`backend`
BACKENDS = ("auto", "numpy", "compiled", "codegen")
_backend: ContextVar[str] = ContextVar("mbcompose_dynamics_backend", default="auto")
#: number of :func:`backend` blocks open in any thread: the lookups read the context variable only then
_forcing = 0
#: the environment variable of the process's backend (see the module docstring)
BACKEND_ENV = "MBCOMPOSE_BACKEND"
#: the process's backend ("auto" or "numpy"), decided by :func:`process_backend` at the first dynamics call
_process: str | None = None
#: the first-use warning of a process that runs the numpy path while the kernels compile elsewhere
FIRST_USE = "compiling the dynamics kernels in the background (first use); this run uses the numpy path"
_forcing_lock = threading.Lock()


class CompiledDeclined(RuntimeError):
    """A compiled kernel declined a call under ``backend("compiled")`` (the message says which and why)."""


@contextmanager
def backend(name: str):
    """Force the implementation of the dynamics functions inside the ``with`` block (this thread or
    context only; blocks nest).

    ``"numpy"``: the numpy reference everywhere; ``"compiled"``: the compiled kernels wherever one
    exists, a decline raising :class:`CompiledDeclined`; ``"auto"``: the default (compiled, and the
    reference where a kernel declines, logged at DEBUG).  See the module docstring.

    >>> with backend("numpy"):
    ...     current_backend()
    'numpy'
    """
    global _forcing
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    token = _backend.set(name)
    with _forcing_lock:
        _forcing += 1
    try:
        yield
    finally:
        with _forcing_lock:
            _forcing -= 1
        _backend.reset(token)


def current_backend() -> str:
    """The backend in force here: the process's (:func:`process_backend`) outside every :func:`backend`
    block and inside ``backend("auto")``."""
    name = _backend.get() if _forcing else "auto"
    if name != "auto":
        return name
    return _process if _process is not None else process_backend()


def forget_process_backend() -> None:
    """Read :data:`BACKEND_ENV` again at the next dynamics call (after a change of it in this process)."""
    global _process
    _process = None


def process_backend() -> str:
    """The process's backend, ``"auto"``, ``"numpy"`` or ``"codegen"``, from :data:`BACKEND_ENV` (see the module
    docstring); decided on the first call, which under ``auto`` with a cache that is not ready starts
    the background compilation and logs :data:`FIRST_USE` (a WARNING of this module's logger)."""
    global _process
    if _process is not None:
        return _process
    setting = os.environ.get(BACKEND_ENV, "").strip().lower()
    if setting and setting not in BACKENDS:
        log.warning("%s=%r is not one of %s: using the default", BACKEND_ENV, setting, ", ".join(BACKENDS))
    if setting in ("numpy", "codegen"):
        _process = setting
    elif setting == "auto" and not compiled.cache_is_ready():
        _process = "numpy"
        if compiled.compile_in_background():
            log.warning("%s", FIRST_USE)
        elif compiled.compiling():
            log.warning("the dynamics kernels are being compiled in the background (first use); this run uses "
                        "the numpy path")
        else:
            log.warning("the dynamics kernels' cache %s cannot be filled: this run uses the numpy path "
                        "(--backend compiled compiles them in this process)", compiled.CACHE_DIR)
    else:
        _process = "auto"
    return _process


def declined(logger: logging.Logger, what: str, why: str, instead: str) -> None:
    """Where a compiled kernel declines ``what`` because ``why`` and ``instead`` runs: raise
    :class:`CompiledDeclined` under ``backend("compiled")``, else say so on ``logger`` at DEBUG level."""
    if _forcing and _backend.get() == "compiled":
        raise CompiledDeclined(f"the compiled {what} declined: {why} (backend 'compiled' forbids {instead})")
    logger.debug("compiled %s declined (%s): %s runs instead", what, why, instead)

TREE, EMBEDDED, LAGRANGE, AGGREGATED = "tree", "embedded", "lagrange", "aggregated"


def _without_external_forces(func, n_arrays: int, batched: bool = False) -> Callable:
    """``func(model, arrays..., params...)`` as a public-signature entry: refuses ``f_ext``
    and, unless ``batched``, evaluates (B, .) batches of its first ``n_arrays`` arrays row by row;
    ``data`` (the compiled backend's) is not used."""
    def entry(model, *args, f_ext=None, data=None):
        if f_ext is not None:
            raise TypeError(f"external forces are not supported on {model.kind} models yet")
        if batched:
            return func(model, *args)
        arrays, params = args[:n_arrays], args[n_arrays:]
        return each_configuration(lambda m, *row: func(m, *row, *params), model, *arrays)
    entry.__name__ = entry.__qualname__ = func.__name__
    entry.__doc__ = func.__doc__
    return entry


def _reference(func, external_forces: bool = False) -> Callable:
    """A numpy function ``func(model, ...)`` of the tree (or of any kind that takes one configuration or a
    batch itself) as an entry with the public signature: ``f_ext`` passed on when it takes external
    forces (else refused), ``data`` (the compiled backend's) not used."""
    def entry(model, *args, f_ext=None, data=None):
        if external_forces:
            return func(model, *args, f_ext=f_ext)
        if f_ext is not None:
            raise TypeError(f"external forces are not supported by {func.__name__} on {model.kind} models")
        return func(model, *args)
    entry.__name__ = entry.__qualname__ = func.__name__
    entry.__doc__ = func.__doc__
    return entry


def _compiled(name: str, kind: str = TREE) -> Callable:
    """Entry ``name`` of the compiled backend for ``kind`` (:mod:`dynamics.compiled.api` for trees,
    :mod:`dynamics.compiled.closed_api` for embedded closed chains).

    numba is imported on the first call, which also puts the compiled function itself
    into the table (later lookups pay no indirection).  The numpy implementation of
    the same name stays the reference the tests compare with.
    """
    def first_call(*args, **kwargs):
        _say_if_compiling("entry_kernels" if kind == TREE else "closed_kernels")
        if kind == TREE:
            from .compiled import api
        else:
            from .compiled import closed_api as api

        impl = getattr(api, name)
        ALGORITHMS[kind][name] = impl
        return impl(*args, **kwargs)
    first_call.__name__ = first_call.__qualname__ = name
    return first_call


def _say_if_compiling(module: str) -> None:
    """One warning before the first use after install compiles the kernels of ``module`` in this process
    (a minute of silence otherwise), whatever stderr is; nothing when the cache is warm."""
    if cache_is_cold() or cache_is_cold(module=module):
        log.warning("compiling the dynamics kernels: the first use after install takes about a minute; "
                    "later runs load them from numba's cache")


def _state_as_given(model, q, v):
    return q, v


def _closed_state(em, q, v):
    """The loops closed from q (independent coordinates kept) and v's independent entries completed."""
    qc = embedding.complete_configuration(em, q_guess=q)
    return qc, embedding.complete_velocity(em, qc, v)


#: kind -> public function name -> implementation (see the module docstring).
ALGORITHMS: dict[str, dict[str, Callable]] = {
    TREE: {
        "mass_matrix": _compiled("mass_matrix"),
        "inverse_dynamics": _compiled("inverse_dynamics"),
        "forward_dynamics": _compiled("forward_dynamics"),
        "bias_forces": _compiled("bias_forces"),
        "gravity_forces": _compiled("gravity_forces"),
        "mass_matrix_inverse": _compiled("mass_matrix_inverse"),
        "mass_matrix_logdet": _compiled("mass_matrix_logdet"),
        "mass_matrix_det": _compiled("mass_matrix_det"),
        "jacobian": _compiled("jacobian"),
        "operational_space_inertia": opspace.operational_space_inertia,
        "consistent_state": _state_as_given,
    },
    EMBEDDED: {
        "mass_matrix": _without_external_forces(embedding.mass_matrix, 1),
        "inverse_dynamics": _without_external_forces(embedding.inverse_dynamics, 3),
        "forward_dynamics": _compiled("forward_dynamics", EMBEDDED),
        "bias_forces": _without_external_forces(embedding.bias_forces, 2),
        "jacobian": _without_external_forces(embedding.jacobian, 1),
        "operational_space_inertia": _without_external_forces(embedding.operational_space_inertia, 1),
        "consistent_state": _closed_state,
    },
    LAGRANGE: {
        "forward_dynamics": _without_external_forces(lagrange.forward_dynamics, 3),
        "consistent_state": _state_as_given,
    },
    AGGREGATED: {
        "mass_matrix": _reference(aggregated.mass_matrix),
        "inverse_dynamics": _without_external_forces(aggregated.inverse_dynamics, 3, batched=True),
        "forward_dynamics": _without_external_forces(aggregated.forward_dynamics, 3, batched=True),
        "bias_forces": _without_external_forces(aggregated.bias_forces, 2, batched=True),
        "consistent_state": _state_as_given,
    },
}

#: kind -> public function name -> the numpy reference of the compiled entries of :data:`ALGORITHMS`
#: (what ``backend("numpy")`` runs; the other entries are numpy already).
REFERENCE: dict[str, dict[str, Callable]] = {
    TREE: {
        "mass_matrix": _reference(crba.mass_matrix),
        "inverse_dynamics": _reference(rnea.inverse_dynamics, external_forces=True),
        "forward_dynamics": _reference(aba.forward_dynamics, external_forces=True),
        "bias_forces": _reference(rnea.bias_forces, external_forces=True),
        "gravity_forces": _reference(rnea.gravity_forces),
        "mass_matrix_inverse": _reference(innovations.mass_matrix_inverse),
        "mass_matrix_logdet": _reference(innovations.mass_matrix_logdet),
        "mass_matrix_det": _reference(innovations.mass_matrix_det),
        "jacobian": _reference(jacobians.jacobian),
    },
    EMBEDDED: {
        "forward_dynamics": _without_external_forces(embedding.forward_dynamics, 3),
    },
}

#: (kind, function name) -> why the function is not defined for that kind.
NOT_DEFINED = {
    (LAGRANGE, "mass_matrix"): "a LagrangeModel has no minimal-coordinate mass matrix; use the tree's "
                               "(model.tree_model) or embed the loops",
    (LAGRANGE, "inverse_dynamics"): "inverse dynamics of a LagrangeModel is not unique; embed the loops",
    (LAGRANGE, "bias_forces"): "bias forces of a LagrangeModel are not unique; embed the loops",
}


_CODEGEN: list = []


def _codegen_table() -> dict:
    """:data:`dynamics.codegen.backend.CODEGEN`, imported on first use (cffi is optional)."""
    if not _CODEGEN:
        from .codegen.backend import CODEGEN

        _CODEGEN.append(CODEGEN)
    return _CODEGEN[0]


def algorithm(model, name: str) -> Callable:
    """The implementation of public function ``name`` for ``model`` (by ``model.kind``; the numpy
    reference inside ``backend("numpy")``, the generated C inside ``backend("codegen")``)."""
    if not _forcing and _process == "auto":          # the common case: no block open, the process's default
        row = ALGORITHMS.get(model.kind)
        if row is not None and name in row:
            return row[name]
    try:
        forced = _backend.get() if _forcing else "auto"
        if forced == "auto":
            forced = _process or process_backend()
        if forced == "numpy":
            row = REFERENCE.get(model.kind)
        elif forced == "codegen":
            row = (_CODEGEN[0] if _CODEGEN else _codegen_table()).get(model.kind)
        else:
            return ALGORITHMS[model.kind][name]
        return (row.get(name) if row else None) or ALGORITHMS[model.kind][name]
    except KeyError:
        if model.kind not in ALGORITHMS:
            raise
        reason = NOT_DEFINED.get((model.kind, name), f"{name} is not defined for {model.kind} models")
        raise TypeError(reason) from None
