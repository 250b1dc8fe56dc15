"""One call from Python into a generated function at the cost of a C call: a small CPython extension.

cffi's ABI mode converts each array argument with ``ffi.from_buffer`` (numpy's buffer protocol, about
0.3-0.7 us an array) and calls through libffi; for panda's forward dynamics (about 1.5 us of C) the
four arrays and the call cost more than the algorithm.  :func:`vector_caller` instead wraps the address
of a generated function ``f(p, q, v, x, out)`` (``PREFIX_aba``, ``_rnea``, ``_embedded_fd``; the
library loaded by :mod:`dynamics.codegen.build`) in a builtin function of the extension below: it
checks its three arguments with numpy's C API (exact ``ndarray``, float64, native byte order, aligned,
C-contiguous, one dimension of the right length), allocates the (nv,) result, calls ``f`` with the GIL
held and returns the result, all in C.  Any other argument (a list, a batch, another dtype or stride)
returns ``NotImplemented``, and the caller takes its converting path; wrong shapes are therefore
reported by that path's ``ValueError``.  An ``int`` function (``_embedded_fd``) returning nonzero
raises ``FloatingPointError``.

The extension is generic (the model is in the library, the extension only holds the address): it is
compiled once per Python, numpy and compiler into ``<cache>/fastcall-<key>/`` next to the models'
libraries (:func:`dynamics.codegen.build.cache_dir`).  Without Python's or numpy's headers, or when the
compiler fails, :func:`extension` returns None (said at DEBUG level) and the cffi path is used.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

__all__ = ["SOURCE", "extension", "vector_caller"]

MODULE = "mbcompose_fastcall"

SOURCE = r"""
/* mbcompose_fastcall: a builtin function per generated f(p, q, v, x, out), numpy arrays checked in C. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

typedef void (*void_fn)(const double *, const double *, const double *, const double *, double *);
typedef int (*int_fn)(const double *, const double *, const double *, const double *, double *);

typedef struct {
  void *fn;            /* the generated function */
  int returns_int;     /* 1: int f(...), nonzero = declined; 0: void f(...) */
  PyObject *p;         /* the parameter array (float64, C-contiguous), read at each call */
  npy_intp nq, nv;
  PyMethodDef def;     /* the builtin function's definition lives as long as it does */
} caller;

static const char *CAPSULE = "mbcompose_fastcall.caller";

static int vector_ok(PyObject *a, npy_intp n)
{
  PyArrayObject *x = (PyArrayObject *)a;
  return PyArray_CheckExact(a) && PyArray_TYPE(x) == NPY_DOUBLE && PyArray_NDIM(x) == 1
         && PyArray_DIM(x, 0) == n && PyArray_ISCARRAY_RO(x) && PyArray_ISNOTSWAPPED(x);
}

static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
  caller *c = (caller *)PyCapsule_GetPointer(self, CAPSULE);
  if (c == NULL) return NULL;
  if (nargs != 3 || !vector_ok(args[0], c->nq) || !vector_ok(args[1], c->nv) || !vector_ok(args[2], c->nv))
    Py_RETURN_NOTIMPLEMENTED;
  PyObject *out = PyArray_SimpleNew(1, &c->nv, NPY_DOUBLE);
  if (out == NULL) return NULL;
  const double *p = (const double *)PyArray_DATA((PyArrayObject *)c->p);
  const double *q = (const double *)PyArray_DATA((PyArrayObject *)args[0]);
  const double *v = (const double *)PyArray_DATA((PyArrayObject *)args[1]);
  const double *x = (const double *)PyArray_DATA((PyArrayObject *)args[2]);
  double *r = (double *)PyArray_DATA((PyArrayObject *)out);
  if (c->returns_int) {
    if (((int_fn)c->fn)(p, q, v, x, r) != 0) {
      Py_DECREF(out);
      PyErr_SetString(PyExc_FloatingPointError, "the generated function declined this state");
      return NULL;
    }
  } else {
    ((void_fn)c->fn)(p, q, v, x, r);
  }
  return out;
}

static void release(PyObject *capsule)
{
  caller *c = (caller *)PyCapsule_GetPointer(capsule, CAPSULE);
  if (c != NULL) {
    Py_XDECREF(c->p);
    PyMem_Free(c);
  }
}

static PyObject *make(PyObject *module, PyObject *args)
{
  unsigned long long address;
  int returns_int;
  PyObject *p;
  Py_ssize_t nq, nv;
  const char *name;
  (void)module;
  if (!PyArg_ParseTuple(args, "KpOnns", &address, &returns_int, &p, &nq, &nv, &name)) return NULL;
  if (!PyArray_CheckExact(p) || PyArray_TYPE((PyArrayObject *)p) != NPY_DOUBLE
      || !PyArray_ISCARRAY_RO((PyArrayObject *)p)) {
    PyErr_SetString(PyExc_TypeError, "p must be a float64 C-contiguous ndarray");
    return NULL;
  }
  caller *c = (caller *)PyMem_Calloc(1, sizeof(caller));
  if (c == NULL) return PyErr_NoMemory();
  c->fn = (void *)(uintptr_t)address;
  c->returns_int = returns_int;
  Py_INCREF(p);
  c->p = p;
  c->nq = nq;
  c->nv = nv;
  c->def.ml_name = "generated";
  c->def.ml_meth = (PyCFunction)(void (*)(void))call;
  c->def.ml_flags = METH_FASTCALL;
  c->def.ml_doc = NULL;
  PyObject *capsule = PyCapsule_New(c, CAPSULE, release);
  if (capsule == NULL) { Py_DECREF(p); PyMem_Free(c); return NULL; }
  PyObject *fn = PyCFunction_NewEx(&c->def, capsule, NULL);
  Py_DECREF(capsule);
  (void)name;
  return fn;
}

static PyMethodDef methods[] = {
  {"make", make, METH_VARARGS, "make(address, returns_int, p, nq, nv, name) -> f(q, v, x)"},
  {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "mbcompose_fastcall", NULL, -1, methods};

PyMODINIT_FUNC PyInit_mbcompose_fastcall(void)
{
  import_array();
  return PyModule_Create(&module_def);
}
"""

_extension: list = []
_lock = threading.Lock()


def _key(cc: str) -> str:
    h = hashlib.sha256()
    h.update(SOURCE.encode())
    h.update(repr((cc, sys.version, sysconfig.get_config_var("EXT_SUFFIX"), np.__version__)).encode())
    return h.hexdigest()[:16]


def _build(directory: Path, cc: str) -> Path:
    """Compile the extension into ``directory`` (atomic rename); raises OSError or RuntimeError."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    target = directory / f"{MODULE}{suffix}"
    if target.exists():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    fd, src = tempfile.mkstemp(suffix=".c", prefix=MODULE, dir=directory)     # processes may build at once
    with os.fdopen(fd, "w") as f:
        f.write(SOURCE)
    fd, tmp = tempfile.mkstemp(suffix=suffix, dir=directory)
    os.close(fd)
    flags = ["-undefined", "dynamic_lookup"] if sys.platform == "darwin" else []
    cmd = [*cc.split(), "-shared", "-fPIC", "-O2", f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}",
           *flags, "-o", tmp, src]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            os.unlink(tmp)
            raise RuntimeError(res.stderr[-1000:])
        os.replace(tmp, target)
    finally:
        os.unlink(src)
    return target


def extension():
    """The loaded extension module (built on first use), or None where it cannot be built (Windows, no
    headers, compiler errors: said at DEBUG level; the cffi path runs then)."""
    with _lock:
        if _extension:
            return _extension[0]
        from .build import cache_dir, compiler

        module = None
        try:
            if sys.platform == "win32":
                raise RuntimeError("not built on Windows")
            cc = compiler()
            path = _build(cache_dir() / f"fastcall-{_key(cc)}", cc)
            loader = importlib.machinery.ExtensionFileLoader(MODULE, str(path))
            spec = importlib.util.spec_from_file_location(MODULE, str(path), loader=loader)
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
        except Exception as exc:    # noqa: BLE001 -- any failure leaves the (slower) cffi path
            log.debug("the fast-call extension is unavailable (%s): generated functions are called through cffi",
                      exc)
            module = None
        _extension.append(module)
        return module


def vector_caller(cm, name: str, returns_int: bool):
    """``f(q, v, x) -> (nv,) array | NotImplemented`` calling ``PREFIX_name`` of the loaded library ``cm``
    (:class:`dynamics.codegen.build.CompiledModel`) with ``cm.p``; None without the extension.  ``cm``
    must outlive ``f`` (it holds the library)."""
    ext = extension()
    if ext is None:
        return None
    address = int(cm.ffi.cast("uintptr_t", cm.function(name)))
    return ext.make(address, returns_int, cm.p, cm.gen.nq, cm.gen.nv, name)
