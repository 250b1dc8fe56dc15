"""Composite body inertia and the mass matrix (seed 001 Lemma 4, Algorithms 4.1-4.2).

``M = H A M A* H*`` (seed 001 Eq. 3, seed 002 Eq. 16).  The composite body
inertia ``R`` solves the forward Lyapunov equation ``M = R - E_A R E_A*``
(Eq. 18, seed 002 Eq. 21) and is computed by the tips-to-base gather of
Algorithm 4.1 (Eq. 20): ``R(k) = sum_{i in C(k)} A(k, i) R(i) A*(k, i) + M(k)``.
Then (Eq. 17) ``M(k, k) = H(k) R(k) H*(k)`` and, for j an ancestor of k,
``M(j, k) = H(j) A(j, k) R(k) H*(k)``, obtained by carrying ``R(k) H*(k)`` up the
path to the root (Algorithm 4.2).  O(N d) for depth d.  Rotor inertia ``J(k)``
(``SKOWeights.armature``) adds to the diagonal blocks: ``M = H A M A* H* + J``.
"""

from __future__ import annotations

import numpy as np

from .batch import out, prepare
from .lyapunov import forward_lyapunov
from .model import SKOModel
from .sko import SKOWeights

__all__ = ["composite_inertia", "mass_matrix_sko", "mass_matrix"]


def composite_inertia(w: SKOWeights) -> list:
    """Composite body inertias R(k) (seed 001 Algorithm 4.1), list of (B, m_k, m_k)."""
    return forward_lyapunov(w.tree, w.phi, w.M, w.phi, w.batch)


def mass_matrix_sko(w: SKOWeights, R: list | None = None):
    """Mass matrix ``H A M A* H* + J`` (seed 001 Algorithm 4.2; ``J`` the rotor inertia), (B, N, N)."""
    t = w.tree
    if R is None:
        R = composite_inertia(w)
    Mm = np.zeros((w.batch, t.nv, t.nv))
    for k in range(t.n_nodes):
        if t.nv_node[k] == 0:
            continue
        sk = t.v_slices[k]
        F = R[k] @ np.swapaxes(w.H[k], -1, -2)
        Mm[:, sk, sk] = w.H[k] @ F
        if w.armature is not None:
            Mm[:, sk, sk] += w.armature[k]
        j = k
        while t.parent_list[j] >= 0:
            F = w.phi[j] @ F
            j = t.parent_list[j]
            if t.nv_node[j]:
                sj = t.v_slices[j]
                blk = w.H[j] @ F
                Mm[:, sj, sk] = blk
                Mm[:, sk, sj] = np.swapaxes(blk, -1, -2)
    return Mm


def mass_matrix(model: SKOModel, q):
    """Joint-space mass matrix M(q).

    Parameters
    ----------
    q : (nq,) or (B, nq)

    Returns
    -------
    (nv, nv) or (B, nv, nv), symmetric positive definite
    """
    qb, _, single, w, *_ = prepare(model, q)
    return out(mass_matrix_sko(w), single)
