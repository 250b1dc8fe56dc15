"""Fixman potential ``U_f = log det M`` and its gradient (seed 002 Eqs. 47-48).

With ``det M = prod det D(k)`` (seed 001 Eq. 53), ``d log det M = sum tr(D^-1 dD)
= sum_j tr(H*(j) D^-1(j) H(j) lambda(j))``, and since ``lambda`` solves a forward
Lyapunov equation in ``E_psi`` whose only source sits at ``parent(k)`` while
Upsilon (:func:`dynamics.opspace.upsilon`) solves the dual backward one,
the sum collapses to the single node ``parent(k)``::

    d log det M / d theta_i = 2 tr( Upsilon(p) dphi P+(k) phi*(p, k) ),
    dphi = phi(p, k) H~*(i),  p = parent(k).

For a single-dof revolute joint (``H(k) H~*(i) = 0``) this equals seed 002
Eq. 48, ``2 Tr{P(k) Upsilon(k) H~*(k)}`` (checked in the tests); the form above
also holds for multi-dof joints.  Root joints give 0 (M does not depend on
them in body frames).  O(N) for the whole gradient.
"""

from __future__ import annotations

import numpy as np

from ._batch import out, prepare
from .innovations import logdet_sko
from .model import SKOModel
from .opspace import upsilon
from .riccati import articulated_body
from .sensitivity import _require_constant_H, direction_blocks

__all__ = ["fixman_potential", "fixman_gradient", "fixman_gradient_eq48"]


def fixman_potential(model: SKOModel, q):
    """``U_f = log det M(q)`` (seed 002 Eq. 47): scalar or (B,)."""
    qb, _, single, w, *_ = prepare(model, q)
    return out(logdet_sko(w), single)


def fixman_gradient(model: SKOModel, q):
    """``d log det M / d theta`` (seed 002 Eq. 48, general form): (nv,) or (B, nv)."""
    _require_constant_H(model)
    qb, _, single, w, *_ = prepare(model, q)
    ab = articulated_body(w)
    Y = upsilon(w, ab)
    g = np.zeros((w.batch, model.nv))
    for i in range(model.nv):
        k, dphi, _ = direction_blocks(model, w, qb, i)
        if dphi is None:
            continue
        p = model.parent[k]
        X = Y[p] @ dphi @ ab.P_plus[k] @ np.swapaxes(w.phi[k], -1, -2)
        g[:, i] = 2.0 * np.trace(X, axis1=-2, axis2=-1)
    return out(g, single)


def fixman_gradient_eq48(model: SKOModel, q):
    """Seed 002 Eq. 48 literally, ``2 Tr{P(k) Upsilon(k) H~*(k)}``; valid for single-dof revolute joints."""
    from .spatial import crf

    qb, _, single, w, *_ = prepare(model, q)
    ab = articulated_body(w)
    Y = upsilon(w, ab)
    g = np.zeros((w.batch, model.nv))
    for i in range(model.nv):
        k = int(np.searchsorted(model.v_offset, i, side="right") - 1)
        j = i - int(model.v_offset[k])
        Ht = crf(w.H[k][:, j, :])
        g[:, i] = 2.0 * np.trace(ab.P[k] @ Y[k] @ Ht, axis1=-2, axis2=-1)
    return out(g, single)
