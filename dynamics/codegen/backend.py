"""The ``codegen`` backend: the public dynamics functions evaluated by a model's generated C.

:func:`library` gives the loaded library of a model (generated, compiled and cached on first use,
:mod:`dynamics.codegen.build`; held by this backend's :class:`Libraries`, never stored on the model), whose
methods do the work (:meth:`CompiledModel.forward_dynamics`: one configuration checked and passed to C
by :mod:`dynamics.codegen.fastcall`).  The entries below have the signatures
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


class Libraries:
    """The generated library of each model (:class:`dynamics.codegen.build.CompiledModel`), held by this
    backend (weakly: a model that is dropped lets go of its entry), with the last model asked for in front
    (one weak reference compared, no hashing: the repeated calls of one model cost ~0.1 us)."""

    def __init__(self):
        self._by_model: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        self._last: tuple = (lambda: None, None)

    def __call__(self, model) -> CompiledModel:
        ref, cm = self._last
        if ref() is model:
            return cm
        try:
            cm = self._by_model[model]
        except KeyError:
            cm = self._by_model[model] = compile_model(model)
        self._last = (weakref.ref(model), cm)
        return cm


#: the libraries of this backend (``library(model)``)
library = Libraries()


def _default(kind: str, name: str):
    from .. import dispatch

    return dispatch.ALGORITHMS[kind][name]


def mass_matrix(model, q, f_ext=None, data=None):
    """``M(q)`` (nv, nv) or (B, nv, nv) by the generated CRBA (seed 001 Algorithm 4.1-4.2)."""
    return library(model).mass_matrix(q)


def inverse_dynamics(model, q, v, a, f_ext=None, data=None):
    """``T = M a + C`` by the generated RNEA (seed 001 Algorithm 3.1)."""
    if f_ext is None:
        return library(model).inverse_dynamics(q, v, a)
    log.debug("generated inverse_dynamics declined (external forces): the default implementation runs")
    return _default("tree", "inverse_dynamics")(model, q, v, a, f_ext=f_ext)


def forward_dynamics(model, q, v, tau, f_ext=None, data=None):
    """``theta_ddot`` by the generated articulated-body algorithm (seed 001 Eq. 58): one configuration of
    float64 C-contiguous arrays goes to C without a copy (:meth:`CompiledModel.forward_dynamics`)."""
    if f_ext is None:
        return library(model).forward_dynamics(q, v, tau)
    log.debug("generated forward_dynamics declined (external forces): the default implementation runs")
    return _default("tree", "forward_dynamics")(model, q, v, tau, f_ext=f_ext)


def embedded_forward_dynamics(em, q, v, tau, f_ext=None, data=None):
    """Accelerations of all tree joints of an embedded closed chain at a closed q, consistent v
    (:func:`dynamics.closed.embedding.forward_dynamics`), by the generated reduced equations; where
    the generated fixed partition is singular the default implementation runs."""
    if f_ext is not None:
        raise TypeError("external forces are not supported on embedded models yet")
    cm = library(em)
    try:
        return cm.forward_dynamics(q, v, tau)
    except FloatingPointError:
        pass
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
