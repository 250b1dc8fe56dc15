"""SPO operator / stacked-vector products by gather and scatter recursions.

Seed 001, Lemma 1 (Eq. 5): ``y = A x`` by the tips-to-base gather
``y(k) = sum_{i in C(k)} A(k, i) y(i) + x(k)``.

Seed 001, Lemma 2 (Eq. 8): ``y = A* x`` by the base-to-tips scatter
``y(k) = A*(parent(k), k) y(parent(k)) + x(k)``.

Seed 001, Corollary 3.1: ``A~ = A - I = A E_A``: ``y = A~ x`` by
``y(k) = sum_{j in C(k)} A(k, j) [y(j) + x(j)]`` and ``y = A~* x`` by
``y(k) = A*(parent(k), k) [y(parent(k)) + x(parent(k))]``.

All products are O(N).  ``weights`` is a list with ``weights[k] = A(parent(k), k)``
of shape (B|1, m_parent, m_k) (None for roots), e.g. ``SKOWeights.phi`` or the
``psi`` weights of :mod:`dynamics.riccati`; stacked vectors are node lists of
(B, m_k) or (B, m_k, C) arrays (see :mod:`dynamics.sko`).  Node order
``parent[k] < k``.
"""

from __future__ import annotations

from .sko import SKOTree, mul, mulT

__all__ = ["spo_mul", "spo_star_mul", "spo_tilde_mul", "spo_tilde_star_mul", "sko_mul", "sko_star_mul"]


def spo_mul(tree: SKOTree, weights: list, x: list) -> list:
    """``y = A x`` (seed 001 Lemma 1), tips-to-base gather."""
    y = [xk.copy() for xk in x]
    parent = tree.parent_list
    for k in range(tree.n_nodes - 1, -1, -1):
        p = parent[k]
        if p >= 0:
            y[p] = y[p] + mul(weights[k], y[k])
    return y


def spo_star_mul(tree: SKOTree, weights: list, x: list) -> list:
    """``y = A* x`` (seed 001 Lemma 2), base-to-tips scatter."""
    y = [None] * tree.n_nodes
    parent = tree.parent_list
    for k in range(tree.n_nodes):
        p = parent[k]
        y[k] = x[k] if p < 0 else mulT(weights[k], y[p]) + x[k]
    return y


def spo_tilde_mul(tree: SKOTree, weights: list, x: list) -> list:
    """``y = A~ x = (A - I) x`` (seed 001 Corollary 3.1), gather."""
    y = [xk * 0.0 for xk in x]
    parent = tree.parent_list
    for k in range(tree.n_nodes - 1, -1, -1):
        p = parent[k]
        if p >= 0:
            y[p] = y[p] + mul(weights[k], y[k] + x[k])
    return y


def spo_tilde_star_mul(tree: SKOTree, weights: list, x: list) -> list:
    """``y = A~* x = (A* - I) x`` (seed 001 Corollary 3.1), scatter."""
    y = [None] * tree.n_nodes
    parent = tree.parent_list
    for k in range(tree.n_nodes):
        p = parent[k]
        y[k] = x[k] * 0.0 if p < 0 else mulT(weights[k], y[p] + x[p])
    return y


def sko_mul(tree: SKOTree, weights: list, x: list) -> list:
    """``y = E_A x``: ``y(k) = sum_{i in C(k)} A(k, i) x(i)`` (one level, no recursion)."""
    y = [xk * 0.0 for xk in x]
    for k in range(tree.n_nodes):
        p = tree.parent_list[k]
        if p >= 0:
            y[p] = y[p] + mul(weights[k], x[k])
    return y


def sko_star_mul(tree: SKOTree, weights: list, x: list) -> list:
    """``y = E_A* x``: ``y(k) = A*(parent(k), k) x(parent(k))``."""
    return [x[k] * 0.0 if tree.parent_list[k] < 0 else mulT(weights[k], x[tree.parent_list[k]])
            for k in range(tree.n_nodes)]
