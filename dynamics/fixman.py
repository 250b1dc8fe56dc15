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
also holds for multi-dof joints.  A q-dependent H (universal joint) adds
``2 tr(G(k) dH) + tr(Upsilon(p) phi dP+(k) phi*)`` with ``dP+`` as in
:func:`dynamics.sensitivity.articulated_body_derivative_sko`.  Root joints give 0 (M does not depend on
them in body frames).  O(N) for the whole gradient.
"""

from __future__ import annotations

import numpy as np

from .batch import out, prepare
from .innovations import logdet_sko
from .model import SKOModel, require_tree
from .opspace import upsilon
from .riccati import articulated_body
from .sensitivity import direction_blocks

__all__ = ["fixman_potential", "fixman_gradient", "fixman_gradient_eq48"]


def fixman_potential(model: SKOModel, q):
    """``U_f = log det M(q)`` (seed 002 Eq. 47): scalar or (B,)."""
    require_tree(model, "fixman_potential")
    qb, _, single, w, *_ = prepare(model, q)
    return out(logdet_sko(w), single)


def fixman_gradient(model: SKOModel, q):
    """``d log det M / d theta`` (seed 002 Eq. 48, general form): (nv,) or (B, nv)."""
    require_tree(model, "fixman_gradient")
    qb, _, single, w, *_ = prepare(model, q)
    ab = articulated_body(w)
    Y = upsilon(w, ab)
    g = np.zeros((w.batch, model.nv))
    for i in range(model.nv):
        k, dphi, dH = direction_blocks(model, w, qb, i)
        p = model.parent[k]
        if dphi is not None:
            X = Y[p] @ dphi @ ab.P_plus[k] @ np.swapaxes(w.phi[k], -1, -2)
            g[:, i] += 2.0 * np.trace(X, axis1=-2, axis2=-1)
        if dH is not None:
            # q-dependent H (universal joint): d log det D(k) + the change of P+(k) seen from the parent
            g[:, i] += 2.0 * np.trace(ab.G[k] @ dH, axis1=-2, axis2=-1)
            if p >= 0:
                g[:, i] += _parent_trace(w, ab, Y, k, dH)
    return out(g, single)


def _parent_trace(w, ab, Y, k, dH):
    """``tr(Upsilon(p) phi dP+(k) phi*)`` for the dH-induced change of P+(k)."""
    Hk, Pk, Gk = w.H[k], ab.P[k], ab.G[k]
    S = Hk @ Pk @ np.swapaxes(dH, -1, -2)
    dDk = S + np.swapaxes(S, -1, -2)
    S2 = Gk @ dH @ Pk
    dPp = -(S2 + np.swapaxes(S2, -1, -2)) + Gk @ dDk @ np.swapaxes(Gk, -1, -2)
    p = w.tree.parent_list[k]
    return np.trace(Y[p] @ w.phi[k] @ dPp @ np.swapaxes(w.phi[k], -1, -2), axis1=-2, axis2=-1)


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
