"""The decorators of the compiled kernels: the one module that uses numba beyond its documented options.

Every kernel of :mod:`dynamics.compiled` is made by :func:`kernel` (a function of its own, cached on
disk) or :func:`inline` (inlined into its callers at numba IR level, ``inline="always"``, documented
in numba's "Notes on Inlining").  Three things here are not in numba's documentation, so they live
only here and ``tests/dynamics/test_compiled.py`` fails loudly when a numba release changes them
(``pyproject.toml`` bounds numba to the versions checked):

* ``_nrt=False``: compile without numba's reference counting (NRT).  The tree recursions neither
  allocate nor return arrays; their array views cost an atomic reference count update each
  otherwise (half of the time of ``crba``, ``perf record``).  Numba's maintainers keep the option
  private (numba issue 1204); a kernel made with ``refcount=False`` must not allocate an array.
* the cache directory: numba's cache locator reads ``numba.core.config.CACHE_DIR`` when a
  dispatcher with ``cache=True`` is created (``UserProvidedCacheLocator``).  numba fills that value
  from the environment variable ``NUMBA_CACHE_DIR`` when ``numba.core.config`` is imported (and again
  before a compilation when the environment changed), so setting the variable after numba was
  imported would not reach these kernels.  :func:`kernel` sets ``CACHE_DIR`` to
  :data:`dynamics.compiled.CACHE_DIR` while it creates the dispatcher and restores it: the kernels'
  machine code goes to the directory named after their source whether or not numba was imported
  first, and other numba code in the process keeps its own cache.
* :func:`seal`: ``Dispatcher.disable_compile()``, which makes a call with new argument types raise
  ``TypeError`` instead of compiling another specialization.
* :func:`field_view`: a C-contiguous view of one field of a flat array, read from its descriptor row,
  built in numba's documented ``numba.extending.intrinsic`` with its internal array helpers
  (``context.make_array``, ``numba.np.arrayobj.populate_array``), as ``numba.carray`` (documented,
  but not callable from a kernel compiled with ``_nrt=False``) does.  The named fields of the packed
  arrays are such views (:mod:`dynamics.compiled.fields`): numba's own ``reshape`` of a slice costs
  a call into its C helper and a size check that may raise, at every view whether the kernel uses
  it or not (1 us of panda's 1.7 us ``rnea`` with 50 fields); this view is a few loads and stores
  that LLVM drops when unused, carries no reference count, and costs no numba IR inlining.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager

from numba import njit, types
from numba.core import config
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from . import CACHE_DIR, writable

__all__ = ["kernel", "inline", "seal", "field_view", "CACHING"]

log = logging.getLogger(__name__)

#: False when :data:`dynamics.compiled.CACHE_DIR` cannot be written: the kernels are then compiled in
#: every process (never cached beside their source, where an edit of a module they call would not
#: invalidate them)
CACHING = writable(CACHE_DIR)
if not CACHING:
    log.warning("the numba cache %s cannot be written: every process compiles the dynamics kernels "
                "(about a minute of CPU)", CACHE_DIR)


#: (module, qualified name, first line) -> refcount of every function made a kernel (see :func:`kernel`)
_refcount: dict = {}


@contextmanager
def _cache_directory():
    """numba's cache directory set to :data:`CACHE_DIR` while a dispatcher is created (see the module docstring)."""
    saved = config.CACHE_DIR
    config.CACHE_DIR = str(CACHE_DIR)
    try:
        yield
    finally:
        config.CACHE_DIR = saved


def kernel(fn=None, *, signature=None, refcount: bool = True, parallel: bool = False, error_model: str = "python"):
    """``numba.njit`` with the on-disk cache in :data:`CACHE_DIR`.

    signature : compile this one signature now (numba then compiles no other); refcount False:
    ``_nrt=False`` (no allocation allowed, see the module docstring); parallel, error_model: numba's.
    Use as ``@kernel`` or ``@kernel(refcount=False)``.
    """
    options = dict(cache=CACHING, parallel=parallel, error_model=error_model)
    if not refcount:
        options["_nrt"] = False

    def decorate(f):
        key = (f.__module__, f.__qualname__, f.__code__.co_firstlineno)
        if _refcount.setdefault(key, refcount) != refcount:
            raise ValueError(f"{f.__qualname__} is already a kernel with refcount={not refcount}: numba's cache "
                             "would not tell the two apart")
        with _cache_directory():
            return njit(signature, **options)(f) if signature is not None else njit(**options)(f)
    return decorate if fn is None else decorate(fn)


def inline(fn=None, *, refcount: bool = False, error_model: str = "python"):
    """``numba.njit(inline="always")``: inlined at numba IR level into every caller (whose options and
    cache then hold it); ``refcount`` False as :func:`kernel` if it is ever compiled on its own."""
    options = dict(inline="always", error_model=error_model)
    if not refcount:
        options["_nrt"] = False

    def decorate(f):
        return njit(**options)(f)
    return decorate if fn is None else decorate(fn)


def seal(dispatcher) -> None:
    """Forbid ``dispatcher`` to compile new specializations (it must have compiled one): a call with
    other argument types raises ``TypeError``."""
    dispatcher.disable_compile()


def _view(context, builder, buf_type, buf, offset, extents, result):
    """LLVM: the C-contiguous array ``result`` (extents: LLVM intp values) at element ``offset`` of ``buf``."""
    intp = context.get_value_type(types.intp)
    data = builder.gep(context.make_array(buf_type)(context, builder, buf).data, [offset])
    itemsize = intp(context.get_abi_sizeof(context.get_data_type(buf_type.dtype)))
    strides, step = [], itemsize
    for e in reversed(extents):
        strides.insert(0, step)
        step = builder.mul(step, e)
    out = context.make_array(result)(context, builder)
    populate_array(out, data=data, shape=extents, strides=strides, itemsize=itemsize, meminfo=None)
    return out._getvalue()


def _flat(t) -> bool:
    return isinstance(t, types.Array) and t.ndim == 1 and t.layout == "C"


def field_view(ndim: int, width: int):
    """``view(buf, table, row)``, in compiled code only: the field of ``ndim`` dimensions of the packed
    1-D array ``buf`` that row ``row`` of the descriptor table describes (``table``: an int64 array
    whose first rows, ``width`` integers each, are ``(offset, extent0, extent1, extent2)``; see
    :class:`dynamics.compiled.layout.Layout`), as a C-contiguous array.  No bounds check (the entries
    check the sizes of the packed arrays, see ``entry_kernels.fits``) and no reference count: valid
    while ``buf`` is."""
    @intrinsic
    def view(typingctx, buf, table, row):
        if not (_flat(buf) and _flat(table) and isinstance(table.dtype, types.Integer)
                and isinstance(row, (types.Integer, types.IntEnumMember))):
            return None
        result = types.Array(buf.dtype, ndim, "C")

        def codegen(context, builder, signature, args):
            intp = context.get_value_type(types.intp)
            descriptors = context.make_array(signature.args[1])(context, builder, args[1]).data
            first = builder.mul(context.cast(builder, args[2], signature.args[2], types.intp), intp(width))
            entry = [builder.load(builder.gep(descriptors, [builder.add(first, intp(i))])) for i in range(ndim + 1)]
            return _view(context, builder, signature.args[0], args[0], entry[0], entry[1:], result)
        return result(buf, table, row), codegen
    return view
