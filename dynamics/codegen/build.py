"""Compile generated C into a shared library and load it with cffi (ABI mode), cached on disk.

The library of a model lives in ``~/.cache/mbcompose/codegen/<key>/`` (``MBCOMPOSE_CACHE`` replaces
``~/.cache/mbcompose``), ``key`` a hash of the model's constants, the generator's own source and the
compiler command, so a changed model or generator compiles anew and an unchanged one loads in
milliseconds.  The compiler is ``$CC`` when set, else ``cc`` or ``gcc`` on the ``PATH``; without one,
or when it fails, :class:`CodegenUnavailable` says why (the other backends do not need it).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .generate import GeneratedC, generate_c

log = logging.getLogger(__name__)

__all__ = ["CodegenUnavailable", "CompiledModel", "compiler", "compile_model", "load", "cache_dir",
           "model_key", "CFLAGS"]

#: flags of every compilation (C99, position-independent shared library); the optimization level
#: follows the source size (:func:`optimization`)
CFLAGS = ("-std=c99", "-fPIC", "-shared")
#: (source size in bytes below which, level): the C compiler's time grows with the unrolled source
#: (measured: 4.5 MB of a 200-body tree take 14 s of CPU at -O0, 18 s at -O1, > 60 s at -O2)
OPTIMIZATION = ((1_500_000, "-O2"), (3_000_000, "-O1"), (float("inf"), "-O0"))


def optimization(source: str) -> str:
    """The ``-O`` level for a generated source of this size (:data:`OPTIMIZATION`)."""
    return next(level for size, level in OPTIMIZATION if len(source) < size)
_loaded: dict[str, "CompiledModel"] = {}
_lock = threading.Lock()


class CodegenUnavailable(RuntimeError):
    """Generated code cannot be compiled or loaded here; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(f"the codegen backend is unavailable: {reason}")
        self.reason = reason


def compiler() -> str:
    """The C compiler command: ``$CC`` if set (must exist), else ``cc`` or ``gcc``."""
    cc = os.environ.get("CC")
    if cc:
        exe = cc.split()[0]
        if shutil.which(exe) is None:
            raise CodegenUnavailable(f"the compiler CC={cc!r} was not found")
        return cc
    for name in ("cc", "gcc"):
        if shutil.which(name):
            return name
    raise CodegenUnavailable("no C compiler found (set CC, or install cc/gcc)")


def cache_dir() -> Path:
    root = os.environ.get("MBCOMPOSE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "mbcompose")
    return Path(root) / "codegen"


def _generator_digest() -> str:
    h = hashlib.sha256()
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()


def model_key(model, prefix: str, cc: str) -> str:
    """Hash of what the generated library depends on: the model's constants (tree arrays, force
    elements and DC motors, the closed chain's chords, couplings and partition), the generator's source and the
    compiler."""
    h = hashlib.sha256()
    tree = model.tree_model
    h.update(repr((model.kind, prefix, cc, CFLAGS, tree.joint_names, tree.body_names, tree.joint_types,
                   tree.forces.springs, tree.forces.actuators, tuple(tree.forces.elements))).encode())
    for a in (tree.parent, tree.placement_R, tree.placement_p, tree.mass, tree.com, tree.inertia_com, tree.axis,
              tree.axis2, tree.armature, tree.gravity, tree.q_ref):
        h.update(np.ascontiguousarray(a, dtype=float).tobytes())
    if model.kind == "embedded":
        h.update(np.asarray(model.neutral(), float).tobytes())
        for c in model.chords:
            h.update(repr((c.name, c.type, c.body_a, c.body_b)).encode())
            for a in (c.R_a, c.p_a, c.R_b, c.p_b, c.axis, c.axis2 if c.axis2 is not None else np.zeros(3)):
                h.update(np.asarray(a, float).tobytes())
        h.update(repr([(c.name, c.follower, c.leader, tuple(map(float, c.coefficients)))
                       for c in model.couplings]).encode())
        for lp in model.loops:
            h.update(repr((lp.v_idx.tolist(), lp.dep.tolist(), lp.rows.tolist(), lp.all_rows.tolist())).encode())
    h.update(_generator_digest().encode())
    return h.hexdigest()[:24]


def _declarations(header: str) -> str:
    """The function declarations of a generated header for ``cffi.FFI.cdef``, arrays as ``void *`` (the same
    C calling convention) so that a numpy array's untyped ``ffi.from_buffer`` passes (the cheapest
    conversion: :meth:`CompiledModel.buf`)."""
    keep = [ln for ln in header.splitlines() if ln and not ln.startswith(("#", "/*", "extern"))]
    return "\n".join(keep).replace("const double *", "const void *").replace("double *", "void *")


def compile_source(gen: GeneratedC, directory: Path, cc: str) -> Path:
    """Write ``PREFIX.c``/``.h`` to ``directory`` and compile ``libPREFIX.so`` there (atomic rename)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{gen.prefix}.c").write_text(gen.source)
    (directory / f"{gen.prefix}.h").write_text(gen.header)
    lib = directory / f"lib{gen.prefix}.so"
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=directory)
    os.close(fd)
    cmd = [*cc.split(), *CFLAGS, optimization(gen.source), "-o", tmp, str(directory / f"{gen.prefix}.c"), "-lm"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        os.unlink(tmp)
        raise CodegenUnavailable(f"running the compiler {cc!r} failed: {exc}") from None
    if res.returncode != 0:
        os.unlink(tmp)
        raise CodegenUnavailable(f"the compiler {cc!r} failed on {directory / gen.prefix}.c:\n{res.stderr[-2000:]}")
    os.replace(tmp, lib)
    return lib


#: the dtype of every array the generated functions take (a fast path checks it by identity)
F64 = np.dtype(np.float64)


@dataclass
class CompiledModel:
    """A loaded library of generated code: ``lib`` (cffi), ``ffi``, ``gen`` (the :class:`GeneratedC`),
    ``p`` the default parameter array (a numpy array the calls pass unless told otherwise), ``kind`` the
    model's (``"tree"`` or ``"embedded"``).

    :meth:`forward_dynamics`, :meth:`inverse_dynamics` and :meth:`mass_matrix` evaluate the library from
    Python with the least overhead (one cffi call; see their docstrings); the lower-level
    :meth:`function` and :meth:`buf` call any function of the header.

    >>> cm = compile_model(model)                                     # doctest: +SKIP
    >>> qdd = cm.forward_dynamics(q, v, tau)                          # doctest: +SKIP
    """

    gen: GeneratedC
    ffi: object
    lib: object
    path: Path
    p: np.ndarray
    kind: str = "tree"

    def __post_init__(self):
        from .fastcall import vector_caller

        self._shapes = ((self.gen.nq,), (self.gen.nv,))
        self._fd_name = "embedded_fd" if self.kind == "embedded" else "aba"
        self._fast_aba = vector_caller(self, self._fd_name, self.kind == "embedded")
        self._fast_rnea = vector_caller(self, "rnea", False) if self.kind == "tree" else None

    def ptr(self, a: np.ndarray):
        """A ``double *`` to a C-contiguous float64 array."""
        return self.ffi.cast("double *", a.ctypes.data)

    def buf(self, a: np.ndarray):
        """The memory of a C-contiguous float64 array for an array argument (cheaper than :meth:`ptr`;
        the caller gives float64 arrays: the declarations take ``void *``)."""
        return self.ffi.from_buffer(a)

    def function(self, name: str):
        """The C function ``PREFIX_name`` (looked up once)."""
        fns = self.__dict__.setdefault("_functions", {})
        try:
            return fns[name]
        except KeyError:
            fn = fns[name] = getattr(self.lib, f"{self.gen.prefix}_{name}")
            return fn

    @property
    def p_buf(self):
        """:attr:`p` as a ``double[]`` (made once; change ``p`` in place to tune the parameters)."""
        buf = self.__dict__.get("_p_buf")
        if buf is None:
            buf = self.__dict__["_p_buf"] = self.buf(self.p)
        return buf

    def forward_dynamics(self, q, v, tau, out=None):
        """Joint accelerations ``theta_ddot`` (nv,) for joint forces ``tau`` by the generated
        articulated-body algorithm (seed 001 Eq. 58), or (B, nv) for a batch; for an embedded closed chain
        the accelerations of all tree joints at a closed ``q`` and consistent ``v`` (the generated reduced
        equations, :func:`dynamics.closed.embedding.forward_dynamics`).

        q : (nq,) or (B, nq) tree coordinates (unit quaternions ``[w, x, y, z]``); v, tau : (nv,) or
        (B, nv) velocities (rad/s, m/s) and joint forces (N m, N); gravity and the parameters ``p`` are the
        library's.  Equivalent to ``dynamics.forward_dynamics(model, q, v, tau)`` under
        ``backend("codegen")`` without the dispatch: one configuration given as float64 C-contiguous
        ndarrays is checked and passed to C, and the result allocated, by a small CPython extension
        (:mod:`dynamics.codegen.fastcall`, no copy; through cffi where the extension cannot be built);
        anything else (lists, other dtypes, strides, batches) is converted once.  ``out``, when given, is a float64
        C-contiguous array of the result's shape that receives the result (and is returned).  Bad shapes
        raise ``ValueError``.  For an embedded chain at a state where the fixed partition's dependent
        block is singular, ``FloatingPointError`` (the public function switches partitions instead).
        """
        if out is None and self._fast_aba is not None:
            try:
                res = self._fast_aba(q, v, tau)        # all in C (dynamics.codegen.fastcall)
            except FloatingPointError:
                raise FloatingPointError(SINGULAR) from None
            if res is not NotImplemented:
                return res
        sq, sv = self._shapes
        try:
            fast = (q.shape == sq and v.shape == sv and tau.shape == sv and q.dtype is F64 and v.dtype is F64
                    and tau.dtype is F64 and q.strides == v.strides == tau.strides == (8,))
        except AttributeError:
            fast = False
        if not fast:
            return self._vector_call(self._fd_name, "tau", q, v, tau, out)
        fb = self.ffi.from_buffer
        res = np.empty(sv) if out is None else _result(out, sv)
        if self.function(self._fd_name)(self.p_buf, fb(q), fb(v), fb(tau), fb(res)):
            raise FloatingPointError(SINGULAR)
        return res

    def inverse_dynamics(self, q, v, a, out=None):
        """Joint forces ``tau = M a + C`` (nv,) or (B, nv) by the generated Newton-Euler recursion (seed 001
        Algorithm 3.1); arguments and conversions as :meth:`forward_dynamics` (``a`` (nv,) or (B, nv)
        accelerations).  Trees only."""
        self._tree_only("inverse_dynamics")
        if out is None and self._fast_rnea is not None:
            res = self._fast_rnea(q, v, a)
            if res is not NotImplemented:
                return res
        return self._vector_call("rnea", "a", q, v, a, out)

    def mass_matrix(self, q, out=None):
        """``M(q)`` (nv, nv) or (B, nv, nv) by the generated composite-inertia recursion (seed 001 Algorithm
        4.1-4.2); q (nq,) or (B, nq).  Trees only."""
        self._tree_only("mass_matrix")
        nq, nv = self.gen.nq, self.gen.nv
        qb = _rows(q, nq, "q")
        res = _result(out, (*np.shape(q)[:-1], nv, nv) if np.ndim(q) == 2 else (nv, nv))
        self.function("crba_batch")(self.p_buf, qb.shape[0], self.buf(qb), self.buf(res))
        return res

    def _tree_only(self, name: str) -> None:
        if self.kind != "tree":
            raise TypeError(f"the generated {name} is written for trees only, not {self.kind} models")

    def _vector_call(self, fn_name: str, name: str, q, v, x, out):
        """``PREFIX_fn_name(p, q, v, x, res)`` (``aba``, ``rnea`` or ``embedded_fd``) over one configuration or
        a batch, the inputs converted to float64 C-contiguous rows once (the slow path of
        :meth:`forward_dynamics`); a tree's batch runs in one call of the ``_batch`` function."""
        nq, nv = self._shapes[0][0], self._shapes[1][0]
        arrays = _rows(q, nq, "q"), _rows(v, nv, "v"), _rows(x, nv, name)
        B = max(a.shape[0] for a in arrays)
        for a, nm in zip(arrays, ("q", "v", name)):
            if a.shape[0] not in (1, B):
                raise ValueError(f"{nm} has {a.shape[0]} rows where the batch has {B}")
        qb, vb, xb = (a if a.shape[0] == B else np.ascontiguousarray(np.broadcast_to(a, (B, a.shape[1])))
                      for a in arrays)
        single = max(np.ndim(q), np.ndim(v), np.ndim(x)) == 1
        res = _result(out, (nv,) if single else (B, nv))
        fb = self.ffi.from_buffer
        if self.kind == "tree":
            self.function(fn_name + "_batch")(self.p_buf, B, fb(qb), fb(vb), fb(xb), fb(res))
            return res
        fn, rows = self.function(fn_name), res.reshape(B, nv)
        bad = [i for i in range(B) if fn(self.p_buf, fb(qb[i]), fb(vb[i]), fb(xb[i]), fb(rows[i]))]
        if bad:
            raise FloatingPointError(f"{SINGULAR} (configurations {bad[:10]})")
        return res


#: the error of an embedded forward dynamics at a state where the generated partition is singular
SINGULAR = ("the generated embedded forward dynamics declined: the fixed partition's dependent block is singular "
            "at this state (dynamics.forward_dynamics under backend('codegen') switches to the default then)")


def _rows(x, width: int, name: str) -> np.ndarray:
    """(width,) or (B, width) array-like -> float64 C-contiguous (B, width) (one conversion)."""
    a = np.ascontiguousarray(x, dtype=F64)
    if a.ndim not in (1, 2) or a.shape[-1] != width:
        raise ValueError(f"{name} must have shape ({width},) or (B, {width}), got {a.shape}")
    return a.reshape(-1, width)


def _result(out, shape: tuple) -> np.ndarray:
    """``out`` checked to be a float64 C-contiguous array of ``shape``, or a new one."""
    if out is None:
        return np.empty(shape)
    if (not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != F64 or not out.flags.c_contiguous
            or not out.flags.writeable):
        raise ValueError(f"out must be a writable float64 C-contiguous array of shape {shape}, got "
                         f"{getattr(out, 'dtype', type(out).__name__)} {np.shape(out)}")
    return out


def compile_model(model, prefix: str = "model") -> CompiledModel:
    """The generated library of ``model`` (generated, compiled and cached on first use; loaded once
    per process).  Raises :class:`CodegenUnavailable` without a working compiler or cffi."""
    cc = compiler()
    try:
        import cffi
    except ImportError:
        raise CodegenUnavailable("cffi is not installed (pip install 'mbcompose[codegen]')") from None
    key = model_key(model, prefix, cc)
    with _lock:
        if key in _loaded:
            return _loaded[key]
        directory = cache_dir() / key
        lib_path = directory / f"lib{prefix}.so"
        gen = generate_c(model, prefix)
        if not lib_path.exists():
            log.info("compiling the generated dynamics of %r into %s", model, directory)
            lib_path = compile_source(gen, directory, cc)
        ffi = cffi.FFI()
        ffi.cdef(_declarations(gen.header))
        try:
            lib = ffi.dlopen(str(lib_path))
        except OSError as exc:
            raise CodegenUnavailable(f"loading {lib_path} failed: {exc}") from None
        out = CompiledModel(gen, ffi, lib, lib_path, np.array(gen.param_defaults, dtype=float), model.kind)
        _loaded[key] = out
        return out


def load(model, prefix: str = "model") -> CompiledModel:
    """Alias of :func:`compile_model` (the cached library of ``model``)."""
    return compile_model(model, prefix)
