"""The ``codegen`` backend: the public dynamics functions evaluated by a model's generated C.

:func:`library` gives the loaded library of a model (generated, compiled and cached on first use,
:mod:`dynamics.codegen.build`; kept with the model afterwards).  The entries below have the signatures
of the public functions (one configuration or a batch ``(B, .)``); :mod:`dynamics.dispatch` puts them
in force with ``backend("codegen")``.  What the generated code does not evaluate (external forces;
an embedded state where the fixed partition's ``G_d`` is singular) runs the default implementation,
said at DEBUG level on this module's logger.
"""

from __future__ import annotations

import logging
import weakref

import numpy as np

from ..batch import as_batch, broadcast, out
from .build import CompiledModel, compile_model

log = logging.getLogger(__name__)

__all__ = ["library", "mass_matrix", "inverse_dynamics", "forward_dynamics", "embedded_forward_dynamics",
           "CODEGEN"]

_libraries: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def library(model) -> CompiledModel:
    """The generated library of ``model`` (:class:`dynamics.codegen.build.CompiledModel`), kept with it."""
    try:
        return _libraries[model]
    except KeyError:
        lib = _libraries[model] = compile_model(model)
        return lib


def _default(kind: str, name: str):
    from .. import dispatch

    return dispatch.ALGORITHMS[kind][name]


def mass_matrix(model, q, f_ext=None, data=None):
    """``M(q)`` (nv, nv) or (B, nv, nv) by the generated CRBA (seed 001 Algorithm 4.1-4.2)."""
    cm = library(model)
    qb, single = as_batch(q, model.nq, "q")
    qb = np.ascontiguousarray(qb)
    M = np.empty((qb.shape[0], model.nv, model.nv))
    cm.function("crba_batch")(cm.p_buf, qb.shape[0], cm.buf(qb), cm.buf(M))
    return out(M, single)


def _tree_call(model, name: str, q, v, x, f_ext, data):
    if f_ext is not None:
        log.debug("generated %s declined (external forces): the default implementation runs", name)
        return None
    cm = library(model)
    if np.ndim(q) == 1 and np.ndim(v) == 1 and np.ndim(x) == 1:      # one configuration: the short path
        q1, v1, x1 = (np.ascontiguousarray(a, dtype=float) for a in (q, v, x))
        if q1.shape[0] != model.nq or v1.shape[0] != model.nv or x1.shape[0] != model.nv:
            raise ValueError(f"q, v and the third vector must have {model.nq}, {model.nv} and {model.nv} entries, got "
                             f"{q1.shape[0]}, {v1.shape[0]}, {x1.shape[0]}")
        res = np.empty(model.nv)
        cm.function(name)(cm.p_buf, cm.buf(q1), cm.buf(v1), cm.buf(x1), cm.buf(res))
        return res
    qb, s1 = as_batch(q, model.nq, "q")
    vb, s2 = as_batch(v, model.nv, "v")
    xb, s3 = as_batch(x, model.nv, "x")
    qb, vb, xb = (np.ascontiguousarray(a) for a in broadcast(qb, vb, xb))
    res = np.empty((qb.shape[0], model.nv))
    cm.function(f"{name}_batch")(cm.p_buf, qb.shape[0], cm.buf(qb), cm.buf(vb), cm.buf(xb), cm.buf(res))
    return out(res, s1 and s2 and s3)


def inverse_dynamics(model, q, v, a, f_ext=None, data=None):
    """``T = M a + C`` by the generated RNEA (seed 001 Algorithm 3.1)."""
    res = _tree_call(model, "rnea", q, v, a, f_ext, data)
    return _default("tree", "inverse_dynamics")(model, q, v, a, f_ext=f_ext) if res is None else res


def forward_dynamics(model, q, v, tau, f_ext=None, data=None):
    """``theta_ddot`` by the generated articulated-body algorithm (seed 001 Eq. 58)."""
    res = _tree_call(model, "aba", q, v, tau, f_ext, data)
    return _default("tree", "forward_dynamics")(model, q, v, tau, f_ext=f_ext) if res is None else res


def embedded_forward_dynamics(em, q, v, tau, f_ext=None, data=None):
    """Accelerations of all tree joints of an embedded closed chain at a closed q, consistent v
    (:func:`dynamics.closed.embedding.forward_dynamics`), by the generated reduced equations; where
    the generated fixed partition is singular the default implementation runs."""
    if f_ext is not None:
        raise TypeError("external forces are not supported on embedded models yet")
    cm = library(em)
    qb, s1 = as_batch(q, em.nq, "q")
    vb, s2 = as_batch(v, em.nv, "v")
    tb, s3 = as_batch(tau, em.nv, "tau")
    qb, vb, tb = (np.ascontiguousarray(a) for a in broadcast(qb, vb, tb))
    res = np.empty((qb.shape[0], em.nv))
    fd = cm.function("embedded_fd")
    for i in range(qb.shape[0]):
        if fd(cm.p_buf, cm.buf(qb[i]), cm.buf(vb[i]), cm.buf(tb[i]), cm.buf(res[i])):
            log.debug("generated embedded forward dynamics declined (singular dependent block of the fixed "
                      "partition): the default implementation runs")
            res[i] = _default("embedded", "forward_dynamics")(em, qb[i], vb[i], tb[i])
    return out(res, s1 and s2 and s3)


#: kind -> public function name -> codegen implementation (:mod:`dynamics.dispatch`)
CODEGEN = {
    "tree": {"mass_matrix": mass_matrix, "inverse_dynamics": inverse_dynamics, "forward_dynamics": forward_dynamics},
    "embedded": {"forward_dynamics": embedded_forward_dynamics},
}
