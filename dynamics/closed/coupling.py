"""Joint couplings ``q_f = p(q_l)`` as holonomic constraints for the constraint embedding.

A coupling holds one one-coordinate joint (the *follower*) at a polynomial of
another (the *leader*) -- URDF ``mimic`` (``p(x) = offset + multiplier x``), MJCF
``equality/joint`` (``polycoef``) and ``equality/tendon`` over one-joint tendons --
or at a constant (no leader).  It is a constraint between joint coordinates::

    e(q) = q_f - p(q_l),        G = de/dq:  +1 at v_f,  -p'(q_l) at v_l,
    gamma = Gdot v = -p''(q_l) v_l^2,

and, for MJCF tendon equalities, the same between linear combinations
``s = sum c_k q_k`` of coordinates on each side,

which :mod:`dynamics.embedding` treats exactly like a loop closure: the bodies
carried by the two joints and the tree path between them (their aggregation set,
:func:`dynamics.topology.aggregation_set`, seed 000 Lemma 6.3) become one compound
node whose dependent coordinate (the follower, unless actuated) follows the
independent ones, so the dynamics come out in minimal coordinates
(``M_e = X^* M X``) and the coupling force is a multiplier of the constraint.
"""

from __future__ import annotations

import numpy as np

from ..records import record

__all__ = ["JointCoupling", "coupling_residuals", "coupling_pairs"]


@record
class JointCoupling:
    """``s_f = sum_k coefficients[k] s_l^k`` with ``s = sum c q`` over one-coordinate tree joints.

    name : the coupling's name.
    follower, leader : ``((q index, v index, coef), ...)`` of each side (``leader`` empty: a constant).
    bodies : tree bodies carried by the joints of both sides.
    coefficients : polynomial coefficients, constant first.
    """

    name: str
    follower: tuple
    leader: tuple
    bodies: tuple
    coefficients: tuple

    def polynomial(self, x: float) -> tuple[float, float, float]:
        """``(p(x), p'(x), p''(x))`` by Horner's scheme (``h = p''/2`` carried along)."""
        p = dp = h = 0.0
        for a in reversed(self.coefficients):
            h = h * x + dp
            dp = dp * x + p
            p = p * x + float(a)
        return p, dp, 2.0 * h


def coupling_pairs(couplings) -> list[tuple[int, ...]]:
    """The bodies each coupling constrains (one compound node holds them all)."""
    return [tuple(c.bodies) for c in couplings]


def coupling_residuals(couplings, nv: int, q, v=None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Residuals ``e`` (n,), Jacobian ``G`` (n, nv) and, with ``v``, ``gamma = Gdot v`` (n,).

    q (nq,), v (nv,): one configuration of the tree (see module docstring).
    """
    n = len(couplings)
    e, G = np.zeros(n), np.zeros((n, nv))
    gamma = None if v is None else np.zeros(n)
    for i, c in enumerate(couplings):
        x = sum(k * float(q[iq]) for iq, _, k in c.leader)
        p, dp, ddp = c.polynomial(x)
        e[i] = sum(k * float(q[iq]) for iq, _, k in c.follower) - p
        for _, iv, k in c.follower:
            G[i, iv] += k
        for _, iv, k in c.leader:
            G[i, iv] -= dp * k
        if gamma is not None and c.leader:
            gamma[i] = -ddp * sum(k * float(v[iv]) for _, iv, k in c.leader) ** 2
    return e, G, gamma
