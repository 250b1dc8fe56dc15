"""Closed chains by Lagrange multipliers on the spanning tree (the dense alternative).

With the tree's mass matrix ``M(q)`` and bias forces ``h(q, v)`` (seed 001,
composite-body and Newton-Euler algorithms) and the loop closure
``e(q) = 0``, ``G(q) = de/dq``, ``gamma = Gdot v`` (:mod:`dynamics.closed.closure`), the
constrained dynamics is the saddle-point system::

    [ M   G^T ] [  a     ]   [ tau - h ]
    [ G    0  ] [ -lambda] = [ -gamma  ]

Redundant constraints (a planar loop with spatial joints, co-axial bearings)
make ``G`` rank deficient; the rows are first reduced to an orthonormal basis
of ``G``'s row space (SVD, relative tolerance
:data:`dynamics.tolerances.CLOSURE_RANK_RTOL`), which leaves
the accelerations unique.  This is
O(N^3) per call; :mod:`dynamics.embedding` is the O(N) route, and the two give
the same accelerations.
"""

from __future__ import annotations

import numpy as np

from ..crba import mass_matrix as tree_mass_matrix
from ..model import SKOModel, TreeCoordinates
from ..rnea import bias_forces
from ..tolerances import CLOSURE_RANK_RTOL, SINGULAR_FLOOR
from .closure import closure_bias, closure_jacobian

__all__ = ["LagrangeModel", "forward_dynamics", "row_space"]


class LagrangeModel(TreeCoordinates):
    """A spanning tree plus loop-closing chords, solved with multipliers.

    tree_model : the rigid-body tree; chords : :class:`dynamics.closed.closure.Chord` list.
    ``joint_names``, ``nq``, ``nv``, ``q_slice``, ``v_slice``, ``gravity`` and
    ``neutral()`` are those of the tree: every tree joint, dependent ones included.
    """

    kind = "lagrange"

    def __init__(self, tree_model: SKOModel, chords):
        super().__init__(tree_model)
        self.chords = tuple(chords)

    def __repr__(self) -> str:
        return f"LagrangeModel(nv={self.nv}, chords={[c.name for c in self.chords]})"


def row_space(G: np.ndarray, rtol: float = CLOSURE_RANK_RTOL) -> tuple[np.ndarray, np.ndarray]:
    """(W, T): orthonormal rows W = T G spanning the row space of G (rank r x nv), T (r x m)."""
    if G.shape[0] == 0:
        return G, np.zeros((0, 0))
    U, s, _ = np.linalg.svd(G, full_matrices=False)
    r = int(np.sum(s > rtol * max(s[0], SINGULAR_FLOOR)))
    T = (U[:, :r] / s[:r]).T
    return T @ G, T


def forward_dynamics(lm: LagrangeModel, q, v, tau) -> np.ndarray:
    """Accelerations (nv,) of every tree joint at a closed (q, v) (single configuration)."""
    m = lm.tree_model
    M = tree_mass_matrix(m, q)
    h = bias_forces(m, q, v)
    W, T = row_space(closure_jacobian(m, lm.chords, q))
    r = W.shape[0]
    K = np.block([[M, W.T], [W, np.zeros((r, r))]])
    rhs = np.concatenate([np.asarray(tau, float) - h, -(T @ closure_bias(m, lm.chords, q, v))])
    return np.linalg.solve(K, rhs)[:lm.nv]
