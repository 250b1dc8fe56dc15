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
import sys
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
    elements, the closed chain's chords and partition), the generator's source and the compiler."""
    h = hashlib.sha256()
    tree = model.tree_model
    h.update(repr((model.kind, prefix, cc, CFLAGS, tree.joint_names, tree.body_names, tree.joint_types,
                   tree.forces.springs, tree.forces.actuators)).encode())
    for a in (tree.parent, tree.placement_R, tree.placement_p, tree.mass, tree.com, tree.inertia_com, tree.axis,
              tree.axis2, tree.armature, tree.gravity, tree.q_ref):
        h.update(np.ascontiguousarray(a, dtype=float).tobytes())
    if model.kind == "embedded":
        h.update(np.asarray(model.neutral(), float).tobytes())
        for c in model.chords:
            h.update(repr((c.name, c.type, c.body_a, c.body_b)).encode())
            for a in (c.R_a, c.p_a, c.R_b, c.p_b, c.axis, c.axis2 if c.axis2 is not None else np.zeros(3)):
                h.update(np.asarray(a, float).tobytes())
        for lp in model.loops:
            h.update(repr((lp.v_idx.tolist(), lp.dep.tolist(), lp.rows.tolist(), lp.all_rows.tolist())).encode())
    h.update(_generator_digest().encode())
    return h.hexdigest()[:24]


def _declarations(header: str) -> str:
    """The function and data declarations of a generated header, for ``cffi.FFI.cdef``."""
    keep = [ln for ln in header.splitlines() if ln and not ln.startswith(("#", "/*", "extern"))]
    return "\n".join(keep)


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


@dataclass
class CompiledModel:
    """A loaded library of generated code: ``lib`` (cffi), ``ffi``, ``gen`` (the :class:`GeneratedC`),
    ``p`` the default parameter array (a numpy array the calls pass unless told otherwise)."""

    gen: GeneratedC
    ffi: object
    lib: object
    path: Path
    p: np.ndarray

    def ptr(self, a: np.ndarray):
        """A ``double *`` to a C-contiguous float64 array."""
        return self.ffi.cast("double *", a.ctypes.data)

    def buf(self, a: np.ndarray):
        """The memory of a C-contiguous float64 array as a ``double[]`` (cheaper than :meth:`ptr`)."""
        return self.ffi.from_buffer("double[]", a)

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
        out = CompiledModel(gen, ffi, lib, lib_path, np.array(gen.param_defaults, dtype=float))
        _loaded[key] = out
        return out


def load(model, prefix: str = "model") -> CompiledModel:
    """Alias of :func:`compile_model` (the cached library of ``model``)."""
    return compile_model(model, prefix)
