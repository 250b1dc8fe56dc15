"""Forward and backward Lyapunov recursions (seed 001 Lemmas 3 and 5, Algorithm 4.3).

Forward (Lemma 3): ``Z = A X B*`` has block diagonal ``Y`` solving
``X = Y - E_A Y E_B*`` (Eq. 12), computed by the tips-to-base gather of Eq. 14
``Y(k) = sum_{j in C(k)} A(k, j) Y(j) B*(k, j) + X(k)``; the off-diagonal blocks
follow Eq. 15: ``Z(i, j) = A(i, k) Z(k, j)`` for i an ancestor of j, k the child
of i on the path, ``Z(i, j) = Z(i, k) B*(j, k)`` for j an ancestor of i, and 0
for unrelated pairs.

Backward (Lemma 5): ``Z = A* X B`` has block diagonal ``Y`` solving
``X = Y - diagOf{E_A* Y E_B}`` (Eq. 22), computed by the base-to-tips scatter of
Eq. 24 ``Y(k) = A*(parent(k), k) Y(parent(k)) B(parent(k), k) + X(k)``; all blocks
follow Eq. 25: ``Z(i, j) = A*(c, i) Y(c) B(c, j)`` with c the nearest common
ancestor of i and j (Algorithm 4.3), and 0 when there is none.

Weights are lists ``A[k] = A(parent(k), k)`` (B|1, m_parent, m_k), see
:mod:`dynamics.sko`; ``X`` is a list of (B|1, m_k, m_k) blocks.
"""

from __future__ import annotations

import numpy as np

from .sko import SKOTree

__all__ = ["forward_lyapunov", "backward_lyapunov", "forward_lyapunov_product", "backward_lyapunov_product",
           "path_product"]


def forward_lyapunov(tree: SKOTree, A: list, X: list, Bw: list, batch: int = 1) -> list:
    """Block diagonal Y of ``A X B*`` (seed 001 Lemma 3, Eq. 14), tips-to-base gather."""
    n = tree.n_nodes
    Y = [np.broadcast_to(X[k], (batch,) + X[k].shape[1:]).copy() for k in range(n)]
    for k in range(n - 1, -1, -1):
        p = tree.parent_list[k]
        if p >= 0:
            Y[p] += A[k] @ Y[k] @ np.swapaxes(Bw[k], -1, -2)
    return Y


def backward_lyapunov(tree: SKOTree, A: list, X: list, Bw: list, batch: int = 1) -> list:
    """Block diagonal Y of ``A* X B`` (seed 001 Lemma 5, Eq. 24), base-to-tips scatter."""
    n = tree.n_nodes
    Y = [None] * n
    for k in range(n):
        p = tree.parent_list[k]
        Xk = np.broadcast_to(X[k], (batch,) + X[k].shape[1:])
        Y[k] = Xk.copy() if p < 0 else np.swapaxes(A[k], -1, -2) @ Y[p] @ Bw[k] + Xk
    return Y


def path_product(tree: SKOTree, A: list, i: int, j: int):
    """``A(i, j)`` for i an ancestor-or-self of j: product of weights along the path; None if i == j."""
    P = None
    k = j
    while k != i:
        P = A[k] if P is None else A[k] @ P
        k = tree.parent_list[k]
        if k < 0:
            raise ValueError(f"{i} is not an ancestor of {j}")
    return P


def _carry_up(tree, A, start, block):
    """Yield (node, A(node, start) @ block) for start and its ancestors."""
    k, Z = start, block
    yield k, Z
    while tree.parent_list[k] >= 0:
        Z = A[k] @ Z
        k = tree.parent_list[k]
        yield k, Z


def forward_lyapunov_product(tree: SKOTree, A: list, X: list, Bw: list, batch: int = 1):
    """Dense ``Z = A X B*`` (B, sum m, sum m) from Y by Eq. 15 (seed 001 Lemma 3)."""
    Y = forward_lyapunov(tree, A, X, Bw, batch)
    Z = np.zeros((batch, tree.nx, tree.nx))
    for j in range(tree.n_nodes):
        sj = tree.x_slice(j)
        # Z(i, j) = A(i, j) Y(j) for i ancestor-or-self of j
        for i, blk in _carry_up(tree, A, j, Y[j]):
            Z[:, tree.x_slice(i), sj] = blk
        # Z(j, i) = Y(j) B*(i, j) for i a strict ancestor of j
        for i, blk in _carry_up(tree, Bw, j, np.swapaxes(Y[j], -1, -2)):
            if i != j:
                Z[:, sj, tree.x_slice(i)] = np.swapaxes(blk, -1, -2)
    return Z


def backward_lyapunov_product(tree: SKOTree, A: list, X: list, Bw: list, batch: int = 1):
    """Dense ``Z = A* X B`` (B, sum m, sum m) by Algorithm 4.3 / Eq. 25 (seed 001 Lemma 5)."""
    Y = backward_lyapunov(tree, A, X, Bw, batch)
    n = tree.n_nodes
    Z = np.zeros((batch, tree.nx, tree.nx))
    # left[c][i] = A*(c, i) for i in subtree(c); computed on demand along paths
    for i in range(n):
        for j in range(n):
            c = tree.common_ancestor(i, j)
            if c < 0:
                continue
            L = path_product(tree, A, c, i)
            Rb = path_product(tree, Bw, c, j)
            blk = Y[c]
            if L is not None:
                blk = np.swapaxes(L, -1, -2) @ blk
            if Rb is not None:
                blk = blk @ Rb
            Z[:, tree.x_slice(i), tree.x_slice(j)] = blk
    return Z
