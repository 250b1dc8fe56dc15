"""Riccati recursion: articulated body quantities (seed 001 Lemmas 7-8; seed 002 Eqs. 22-25).

``P`` solves the Riccati equation (seed 001 Eq. 31)
``M = P - E_A [P - P H* (H P H*)^-1 H P] E_A*``, computed by the tips-to-base
gather of Eq. 33::

    P(k)      = sum_{j in C(k)} A(k, j) P+(j) A*(k, j) + M(k)
    D(k)      = H(k) P(k) H*(k) + J(k)
    G(k)      = P(k) H*(k) D^-1(k)
    tau(k)    = G(k) H(k),   tau_bar(k) = I - tau(k)
    P+(k)     = tau_bar(k) P(k)

Lemma 8 (Eqs. 34-35): ``E_psi = E_A tau_bar`` is an SKO operator with weights
``psi(parent(k), k) = A(parent(k), k) tau_bar(k)`` and SPO ``psi = (I - E_psi)^-1``.
``K = E_A G`` (Eq. 37) has the blocks ``K(parent(k), k) = A(parent(k), k) G(k)``.

``J(k)`` is the joint's rotor inertia (``SKOWeights.armature``, zero when None): the
joint equation ``T(k) = H(k) f(k) + J(k) theta_ddot(k)`` adds it to ``D`` and nothing else
(as Pinocchio's ``Dinv`` with ``model.armature``).

Nodes with ``n_k = 0`` get ``G(k) = 0`` and ``tau_bar(k) = I``.
"""

from __future__ import annotations

import numpy as np

from .sko import SKOWeights

__all__ = ["ArticulatedBody", "articulated_body"]


class ArticulatedBody:
    """Riccati solution; every field is a list over nodes (batch-leading arrays).

    P, P_plus, tau_bar : (B, m_k, m_k);  D, Dinv : (B, n_k, n_k);  G : (B, m_k, n_k);
    psi : ``psi(parent(k), k)`` (B, m_parent, m_k) or None;  K : ``K(parent(k), k)``
    (B, m_parent, n_k) or None.  ``psi`` and ``K`` are formed on first access.
    """

    def __init__(self, P, D, Dinv, G, tau_bar, P_plus, phi):
        self.P, self.D, self.Dinv, self.G, self.tau_bar, self.P_plus = P, D, Dinv, G, tau_bar, P_plus
        self._phi = phi
        self._psi = None
        self._K = None

    @property
    def psi(self) -> list:
        if self._psi is None:
            self._psi = [None if A is None else A @ tb for A, tb in zip(self._phi, self.tau_bar)]
        return self._psi

    @property
    def K(self) -> list:
        if self._K is None:
            self._K = [None if A is None else A @ G for A, G in zip(self._phi, self.G)]
        return self._K


def articulated_body(w: SKOWeights) -> ArticulatedBody:
    """Solve the Riccati equation for an SKO model (seed 001 Eq. 33)."""
    t = w.tree
    n = t.n_nodes
    B = w.batch
    par = t.parent_list
    P = [np.broadcast_to(w.M[k], (B,) + w.M[k].shape[1:]).copy() for k in range(n)]
    D, Dinv, G, tb, Pp = ([None] * n for _ in range(5))
    eyes = {int(mk): np.eye(int(mk)) for mk in set(t.m.tolist())}
    for k in range(n - 1, -1, -1):
        Hk = w.H[k]
        mk, nk = int(t.m[k]), int(t.nv_node[k])
        if nk == 0:
            D[k] = np.zeros((B, 0, 0))
            Dinv[k] = np.zeros((B, 0, 0))
            G[k] = np.zeros((B, mk, 0))
            tb[k] = np.broadcast_to(np.eye(mk), (B, mk, mk))
            Pp[k] = P[k]
        else:
            PHt = P[k] @ np.swapaxes(Hk, -1, -2)
            D[k] = Hk @ PHt if w.armature is None else Hk @ PHt + w.armature[k]
            Dinv[k] = 1.0 / D[k] if nk == 1 else np.linalg.inv(D[k])
            G[k] = PHt @ Dinv[k]
            tb[k] = eyes[mk] - G[k] @ Hk
            Pp[k] = P[k] - G[k] @ np.swapaxes(PHt, -1, -2)
        p = par[k]
        if p >= 0:
            A = w.phi[k]
            P[p] += A @ Pp[k] @ np.swapaxes(A, -1, -2)
    return ArticulatedBody(P, D, Dinv, G, tb, Pp, w.phi)
