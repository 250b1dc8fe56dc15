"""Linear joint couplings without loop-closing joints: the embedding in closed form.

When an embedded model's only constraints are joint couplings whose polynomials are of degree at most
one (URDF ``mimic``: ``q_f = offset + multiplier q_l``; MJCF ``equality/joint`` with a first-degree
``polycoef``; tendon equalities of that kind), the constraint is linear in the coupled coordinates,
``e(q) = G q_c - d`` with a constant Jacobian ``G`` (:mod:`dynamics.closed.coupling`).  The null-space
basis ``X = [I; -G_d^-1 G_i]`` of the embedding (seed 000 sections 5-6,
:mod:`dynamics.closed.embedding`) is then constant (:attr:`EmbeddedModel.constant_basis`), ``Xdot = 0``,
and what Newton's method and the per-state factorizations do in general has a closed form:

* positions: ``q_d = q0_d + X_di (q_i - q0_i)`` from any closed ``q0`` (the model's reference), exact
  because ``e(q) = e(q0) + G (q - q0)`` and ``G X = 0``;
* velocities: ``v = X v_i``;
* the mass matrix in independent coordinates ``M_r = X^T M X`` (``M`` the tree's, composite rigid
  body, seed 001 Algorithm 4.2), and the constrained inverse inertia ``X M_r^-1 X^T`` the joint stops
  use (:mod:`dynamics.simulation.stops`).

The default split (dependent coordinates chosen at the reference by QR with column pivoting) never
degrades: ``G`` is the same at every state, so generalized coordinate partitioning keeps it.

Public API
----------
``LinearCouplings`` (``EmbeddedModel.linear_couplings``, None for other models): ``complete_state(q, v)``,
``complete_configuration(q)``, ``complete_velocity(v)``, ``closure_error(q)``, ``mass_matrix(q)``,
``forward_dynamics(q, v, tau)``; ``reduced_solve(M_r, b)``.
"""

from __future__ import annotations

import importlib
import sys

import numpy as np
from scipy.linalg.lapack import dposv

from .coupling import coupling_residuals

__all__ = ["LinearCouplings", "linear_couplings", "reduced_solve"]


class LinearCouplings:
    """The closed-form embedding of linear joint couplings (see the module docstring).

    X : (nv, n_independent) the constant null-space basis (columns in ``em.independent`` order)
    q_ref : (nq,) the closed reference configuration
    dependent_q : (n_d,) q indices of the dependent coordinates;  source_q : (n_s,) q indices of the
        independent coordinates they follow;  X_ds : (n_d, n_s) the rows and columns of ``X`` between them
    independent_v : (n_independent,) v indices of the independent coordinates
    """

    def __init__(self, em, X, dependent_q, source_q, X_ds):
        self.tree_model = em.tree_model
        self.couplings = em.couplings
        self.nv = em.nv
        self.X = X
        self.XT = np.ascontiguousarray(X.T)
        self.q_ref = em.neutral()
        self.dependent_q, self.source_q, self.X_ds = dependent_q, source_q, X_ds
        self.offset = self.q_ref[dependent_q] - X_ds @ self.q_ref[source_q]      # q_d = offset + X_ds q_s
        self.independent_v = em.independent_v

    def complete_configuration(self, q) -> np.ndarray:
        """q (nq,) with its dependent coordinates set from its independent ones: closed exactly."""
        q = np.array(q, dtype=float)
        q[self.dependent_q] = self.offset + np.dot(self.X_ds, q[self.source_q])
        return q

    def complete_velocity(self, v) -> np.ndarray:
        """``X v_i`` (nv,) from the independent entries of v (nv,)."""
        return np.dot(self.X, np.asarray(v, dtype=float)[self.independent_v])

    def complete_state(self, q, v) -> tuple[np.ndarray, np.ndarray]:
        """(q (nq,), v (nv,)): :meth:`complete_configuration` and :meth:`complete_velocity`, the independent
        coordinates kept (as :func:`dynamics.closed.embedding.complete_state` with the default split)."""
        return self.complete_configuration(q), self.complete_velocity(v)

    def closure_error(self, q) -> np.ndarray:
        """The couplings' residuals ``e(q)`` (n_couplings,) (rad or m)."""
        return coupling_residuals(self.couplings, self.nv, q)[0]

    def mass_matrix(self, q) -> np.ndarray:
        """``M_r = X^T M(q) X`` (n_independent, n_independent), M the tree's (the dispatched backend,
        compiled by default), in ``em.independent`` order (kg m^2, kg)."""
        tree = self.tree_model
        return np.dot(np.dot(self.XT, _dispatch().algorithm(tree, "mass_matrix")(tree, q)), self.X)

    def forward_dynamics(self, q, v, tau) -> np.ndarray:
        """Accelerations (nv,) of all tree joints at a closed state q (nq,), v (nv,) (``v = X v_i``) under
        joint forces tau (nv,): ``a = X M_r^-1 X^T (tau - h)``, ``M`` (composite rigid body, seed 001
        Algorithm 4.2) and the bias ``h`` (Newton-Euler at zero acceleration, Algorithm 3.1) the tree's
        from the dispatched backend; the constraint's ``Xdot v`` is zero."""
        tree = self.tree_model
        h = _dispatch().algorithm(tree, "bias_forces")(tree, q, v)
        b = np.dot(self.XT, np.asarray(tau, dtype=float) - h)
        return np.dot(self.X, reduced_solve(self.mass_matrix(q), b))


def _dispatch():
    """:mod:`dynamics.dispatch`, imported on first use (it imports this package)."""
    return sys.modules[_DISPATCH] if _DISPATCH in sys.modules else importlib.import_module(_DISPATCH)


_DISPATCH = __name__.rsplit(".", 2)[0] + ".dispatch"


def reduced_solve(M_r, b) -> np.ndarray:
    """``M_r^-1 b`` for a symmetric positive definite M_r (n, n) and b (n,) or (n, k): LAPACK's Cholesky
    solve (``dposv``, a few microseconds where ``numpy.linalg.solve`` costs tens on small matrices);
    ``numpy.linalg.solve`` (LU) where M_r is not positive definite to rounding."""
    _, x, info = dposv(M_r, b)
    return x if info == 0 else np.linalg.solve(M_r, b)


def linear_couplings(em, X) -> LinearCouplings | None:
    """The :class:`LinearCouplings` of an embedded model whose null-space basis ``X`` (nv, n_independent)
    is constant, or None when a dependent coordinate follows a coordinate that is not a one-coordinate
    coupled joint (then only the general embedding applies)."""
    q_of_v = {iv: iq for c in em.couplings for iq, iv, _ in (*c.follower, *c.leader)}
    dep_v = [int(i) for i in em.dependent_v]
    cols = sorted({j for d in dep_v for j in np.flatnonzero(X[d]).tolist()})
    src_v = [int(em.independent_v[j]) for j in cols]
    if any(i not in q_of_v for i in dep_v + src_v):
        return None
    X_ds = X[np.ix_(dep_v, cols)] if cols else np.zeros((len(dep_v), 0))
    return LinearCouplings(em, X, np.array([q_of_v[i] for i in dep_v], dtype=int),
                           np.array([q_of_v[i] for i in src_v], dtype=int), X_ds)
