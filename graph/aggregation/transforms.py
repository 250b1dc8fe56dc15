"""Dense aggregation transforms of seed 000, Eq. 35: ``T_a``, its inverse and the aggregated SKO.

Block matrices in the stacking of :mod:`graph.aggregation.blocks` (``order``,
``dims``); the patterns there say which blocks these matrices fill.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from .blocks import _sizes, block_slices, selection_matrix

__all__ = ["aggregation_transform", "aggregation_transform_inverse", "aggregated_sko"]


def _check_square(X: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    N = int(sizes.sum())
    if X.shape != (N, N):
        raise ValueError(f"expected a ({N}, {N}) matrix for these blocks, got {X.shape}")
    return X


def aggregation_transform(E_A: np.ndarray, order: Sequence[Hashable], dims: int | Mapping,
                          S) -> np.ndarray:
    """``T_a`` of seed 000, Eq. 35, as ``I - Sigma_S E_A Sigma_S``.

    Parameters
    ----------
    E_A : (N, N) float
        The SKO operator of the tree, stacked in ``order``.
    order : sequence of Hashable
        Node order of the stacking.
    dims : int or Mapping
        ``m_k``.
    S : iterable of Hashable
        The aggregated subgraph's nodes (satisfying the aggregation condition).

    Returns
    -------
    (N, N) float
        ``T_a``, in the same stacking; ``A_a = T_a A`` and ``H_a = H T_a^-1``.
    """
    E_A = _check_square(E_A, _sizes(order, dims))
    Sig = selection_matrix(order, dims, S)
    return np.eye(E_A.shape[0]) - Sig @ E_A @ Sig


def aggregation_transform_inverse(E_A: np.ndarray, order: Sequence[Hashable], dims: int | Mapping,
                                  S) -> np.ndarray:
    """``T_a^-1 = (I - Sigma_S) + Sigma_S A Sigma_S`` with ``A_S = (I - E_A_S)^-1``.

    Same arguments as :func:`aggregation_transform`.
    """
    sizes = _sizes(order, dims)
    E_A = _check_square(E_A, sizes)
    sl = block_slices(order, dims)
    S = frozenset(S)
    rows = np.array([i for k in order if k in S for i in range(sl[k].start, sl[k].stop)], dtype=int)
    out = np.eye(E_A.shape[0])
    E_SS = E_A[np.ix_(rows, rows)]
    out[np.ix_(rows, rows)] = np.linalg.solve(np.eye(len(rows)) - E_SS, np.eye(len(rows)))
    return out


def aggregated_sko(E_A: np.ndarray, order: Sequence[Hashable], dims: int | Mapping, S) -> np.ndarray:
    """``E_A_a`` of seed 000, Eq. 31, in the original stacking ``order``.

    ``E_A`` with its ``(S, S)`` block set to zero and the columns of ``S`` in the rows
    outside ``S`` (the connector ``E_S``) replaced by ``E_S A_S``.  Equals
    ``I - (I - E_A) T_a^-1`` and ``(I - E_A_a)^-1 = T_a A`` (Lemma 8).

    Parameters
    ----------
    E_A : (N, N) float
        The SKO operator of the tree, stacked in ``order``.
    order, dims, S
        As for :func:`aggregation_transform`.

    Returns
    -------
    (N, N) float
    """
    Tinv = aggregation_transform_inverse(E_A, order, dims, S)
    sizes = _sizes(order, dims)
    sl = block_slices(order, dims)
    Sset = set(S)
    inS = np.zeros(int(sizes.sum()), dtype=bool)
    for k in Sset:
        inS[sl[k]] = True
    out = np.array(E_A, dtype=float)
    out[np.ix_(inS, inS)] = 0.0
    out[np.ix_(~inS, inS)] = E_A[np.ix_(~inS, inS)] @ Tinv[np.ix_(inS, inS)]
    return out
