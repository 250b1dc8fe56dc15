"""Joint couplings ``q_f = p(q_l)`` as holonomic constraints for the constraint embedding.

A coupling holds one one-coordinate joint (the *follower*) at a polynomial of
another (the *leader*) -- URDF ``mimic`` (``p(x) = offset + multiplier x``), MJCF
``equality/joint`` (``polycoef``) and ``equality/tendon`` over one-joint tendons --
or at a constant (no leader).  It is a constraint between joint coordinates::

    e(q) = q_f - p(q_l),        G = de/dq:  +1 at v_f,  -p'(q_l) at v_l,
    gamma = Gdot v = -p''(q_l) v_l^2,

which :mod:`dynamics.embedding` treats exactly like a loop closure: the bodies
carried by the two joints and the tree path between them (their aggregation set,
:func:`dynamics.topology.aggregation_set`, seed 000 Lemma 6.3) become one compound
node whose dependent coordinate (the follower, unless actuated) follows the
independent ones, so the dynamics come out in minimal coordinates
(``M_e = X^* M X``) and the coupling force is a multiplier of the constraint.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["JointCoupling", "coupling_residuals", "coupling_pairs"]


@dataclass(frozen=True, eq=False)
class JointCoupling:
    """``q[q_f] = sum_k coefficients[k] q[q_l]^k`` between two one-coordinate tree joints.

    name : the coupling's name (the follower joint's, unless given).
    body_f, body_l : tree bodies carried by the follower and the leader joint (``body_l`` -1: no leader).
    q_f, v_f, q_l, v_l : coordinate and velocity indices in the tree (``q_l``, ``v_l`` -1: no leader).
    coefficients : polynomial coefficients, constant first.
    """

    name: str
    body_f: int
    body_l: int
    q_f: int
    v_f: int
    q_l: int
    v_l: int
    coefficients: tuple

    def polynomial(self, x: float) -> tuple[float, float, float]:
        """``(p(x), p'(x), p''(x))``."""
        c = np.polynomial.Polynomial(np.asarray(self.coefficients, dtype=float))
        return float(c(x)), float(c.deriv(1)(x)), float(c.deriv(2)(x))


def coupling_pairs(couplings) -> list[tuple[int, int]]:
    """The (follower body, leader body) pair of each coupling (a lone follower twice)."""
    return [(c.body_f, c.body_l if c.body_l >= 0 else c.body_f) for c in couplings]


def coupling_residuals(couplings, nv: int, q, v=None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Residuals ``e`` (n,), Jacobian ``G`` (n, nv) and, with ``v``, ``gamma = Gdot v`` (n,).

    q (nq,), v (nv,): one configuration of the tree (see module docstring).
    """
    n = len(couplings)
    e, G = np.zeros(n), np.zeros((n, nv))
    gamma = None if v is None else np.zeros(n)
    for i, c in enumerate(couplings):
        x = float(q[c.q_l]) if c.q_l >= 0 else 0.0
        p, dp, ddp = c.polynomial(x)
        e[i] = float(q[c.q_f]) - p
        G[i, c.v_f] = 1.0
        if c.v_l >= 0:
            G[i, c.v_l] -= dp
            if gamma is not None:
                gamma[i] = -ddp * float(v[c.v_l]) ** 2
    return e, G, gamma
