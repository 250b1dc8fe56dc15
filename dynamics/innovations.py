"""Innovations factorization, mass matrix inverse and determinant (seed 001 Lemma 11, Corollary 6.1).

* Eq. 49 (seed 002 Eq. 28): ``M = [I + H A K] D [I + H A K]*``;
* Eq. 50 (seed 002 Eq. 29): ``[I + H A K]^-1 = I - H psi K``;
* Eq. 51 (seed 002 Eq. 30): ``M^-1 = [I - H psi K]* D^-1 [I - H psi K]``;
* Eqs. 52-53: ``det [I + H A K] = 1`` and ``det M = prod_k det D(k)``.

With our node order (``parent[k] < k``) both factors are block *upper*
triangular with identity diagonal blocks (Jain's tips-first numbering makes them
lower triangular).  Their blocks are path products::

    [H A K](j, k)   = H(j) A(j, k) G(k)                      j a strict ancestor of k
    [H psi K](j, k) = H(j) psi(j, parent(k)) A(parent(k), k) G(k)

computed by carrying ``G(k)`` up the path to the root, O(N d) blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .batch import out, prepare
from .model import SKOModel
from .riccati import ArticulatedBody, articulated_body
from .sko import SKOWeights

__all__ = ["InnovationsFactors", "innovations_factors_sko", "mass_matrix_inverse_sko", "logdet_sko",
           "innovations_factors", "mass_matrix_inverse", "mass_matrix_det", "mass_matrix_logdet"]


@dataclass(eq=False)
class InnovationsFactors:
    """Dense innovations factors, all (B, N, N).

    L = I + H A K;  D = blockdiag D(k);  Dinv = D^-1;  Linv = I - H psi K.
    """

    L: np.ndarray
    D: np.ndarray
    Dinv: np.ndarray
    Linv: np.ndarray


def innovations_factors_sko(w: SKOWeights, ab: ArticulatedBody | None = None) -> InnovationsFactors:
    """Dense factors of seed 001 Lemma 11 for an SKO model."""
    t = w.tree
    if ab is None:
        ab = articulated_body(w)
    B, N = w.batch, t.nv
    L = np.broadcast_to(np.eye(N), (B, N, N)).copy()
    Linv = L.copy()
    D = np.zeros((B, N, N))
    Dinv = np.zeros((B, N, N))
    for k in range(t.n_nodes):
        if t.nv_node[k] == 0:
            continue
        sk = t.v_slices[k]
        D[:, sk, sk] = ab.D[k]
        Dinv[:, sk, sk] = ab.Dinv[k]
        F = ab.G[k]
        Fp = ab.G[k]
        j = k
        first = True
        while t.parent_list[j] >= 0:
            F = w.phi[j] @ F
            Fp = w.phi[j] @ Fp if first else ab.psi[j] @ Fp
            first = False
            j = t.parent_list[j]
            if t.nv_node[j]:
                sj = t.v_slices[j]
                L[:, sj, sk] = w.H[j] @ F
                Linv[:, sj, sk] = -(w.H[j] @ Fp)
    return InnovationsFactors(L, D, Dinv, Linv)


def mass_matrix_inverse_sko(w: SKOWeights, ab: ArticulatedBody | None = None):
    """``M^-1 = [I - H psi K]* D^-1 [I - H psi K]`` (seed 001 Eq. 51), (B, N, N)."""
    f = innovations_factors_sko(w, ab)
    return np.swapaxes(f.Linv, -1, -2) @ f.Dinv @ f.Linv


def logdet_sko(w: SKOWeights, ab: ArticulatedBody | None = None):
    """``log det M = sum_k log det D(k)`` (seed 001 Eq. 53), (B,)."""
    if ab is None:
        ab = articulated_body(w)
    total = np.zeros(w.batch)
    for k in range(w.tree.n_nodes):
        if w.tree.nv_node[k]:
            total = total + np.linalg.slogdet(ab.D[k])[1]
    return total


def innovations_factors(model: SKOModel, q) -> InnovationsFactors:
    """Innovations factors of M(q); arrays (nv, nv) for a single q, else (B, nv, nv)."""
    qb, _, single, w, *_ = prepare(model, q)
    f = innovations_factors_sko(w)
    if single:
        return InnovationsFactors(f.L[0], f.D[0], f.Dinv[0], f.Linv[0])
    return f


def mass_matrix_inverse(model: SKOModel, q):
    """``M(q)^-1`` by seed 001 Eq. 51: (nv, nv) or (B, nv, nv)."""
    qb, _, single, w, *_ = prepare(model, q)
    return out(mass_matrix_inverse_sko(w), single)


def mass_matrix_logdet(model: SKOModel, q):
    """``log det M(q) = sum log det D(k)``: scalar or (B,)."""
    qb, _, single, w, *_ = prepare(model, q)
    return out(logdet_sko(w), single)


def mass_matrix_det(model: SKOModel, q):
    """``det M(q) = prod det D(k)`` (seed 001 Corollary 6.1): scalar or (B,)."""
    return np.exp(mass_matrix_logdet(model, q))
