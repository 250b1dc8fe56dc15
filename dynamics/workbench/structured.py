"""Structured operators: diagonal, SKO, SPO and their transposes (seed 002 section 3).

* :class:`SpatialSquareMatrixOperator` -- rows and columns indexed by the same
  nodes (element blocks need not be square).
* :class:`SpatialDiagonalMatrixOperator` -- only diagonal blocks; ``inverse()``
  inverts block by block; ``op(k)`` returns the k-th diagonal block (Listing 23's
  ``P(3)``).
* :class:`SKOClass` -- an operator with the sparsity of the tree's adjacency
  matrix: blocks ``E(parent(k), k)`` only (seed 003 section 4, BWA matrices).
  ``E_phi``, ``E_psi`` and ``K = E_phi G`` (whose columns are joint blocks) are
  instances.  ``E x`` is the one-level product ``y(parent(k)) += E(parent(k), k) x(k)``.
  ``LyapunovRecursion(X)`` solves the forward Lyapunov equation
  ``X = Y - E_A Y E_B*`` by the tips-to-base gather of seed 001 Eq. 14 (seed 002 Eq. 21).
* :class:`SKOStarClass` -- its transpose; ``LyapunovRecursion(X)`` solves the
  backward equation ``X = Y - diagOf{E_A* Y E_B}`` by the base-to-tips scatter of
  seed 001 Eq. 24 (seed 002 Eqs. 36-37).
* :class:`SPOClass` / :class:`SPOStarClass` -- ``A = (I - E_A)^-1`` and ``A*``;
  ``A x`` by the tips-to-base gather of seed 001 Lemma 1 (Eq. 5), ``A* x`` by the
  base-to-tips scatter of Lemma 2 (Eq. 8), both O(N) and both from
  :mod:`dynamics.spo`.
* :class:`BlockSparseOperator` -- explicit blocks, e.g. the pick-off ``B*``.

The dispatch functions :func:`product`, :func:`add` and :func:`scale` return
structured results where they are exact and cheap:

=============================== ==========================================
operands                        result of ``*``
=============================== ==========================================
diagonal * diagonal             diagonal (block products)
SKO * diagonal, diagonal * SKO  SKO (``E(p,k) X(k)``, ``X(p) E(p,k)``)
Id * X, X * Id                  X
anything else                   lazy ProductOperator
=============================== ==========================================

``+``/``-``: diagonal +- diagonal is diagonal, SKO +- SKO is SKO, otherwise a
lazy SumOperator.  ``Id`` adapts its space (node or joint) to the operand it is
added to, so that both ``Id - tau`` and ``Id - H * psi * K`` read as in the paper.
"""

from __future__ import annotations

import numpy as np

from ..lyapunov import backward_lyapunov, forward_lyapunov
from ..spo import spo_mul, spo_star_mul
from ..tolerances import STRUCTURE_RTOL
from .core import IncompatibleOperands, Space, SpatialMatrixOperator, describe

__all__ = ["SpatialSquareMatrixOperator", "SpatialDiagonalMatrixOperator", "IdClass", "SKOClass", "SKOStarClass",
           "SPOClass", "SPOStarClass", "BlockSparseOperator", "as_diagonal"]


class SpatialSquareMatrixOperator(SpatialMatrixOperator):
    """Operator whose row and column blocks are the same nodes (blocks may be non-square)."""

    def __init__(self, row: Space, col: Space, name=None):
        if row.ids != col.ids:
            raise IncompatibleOperands(f"a square operator needs the same row and column nodes: {row!r}, {col!r}")
        super().__init__(row, col, name)


class SpatialDiagonalMatrixOperator(SpatialSquareMatrixOperator):
    """Block-diagonal operator ``diag{X(k)}`` (PyCraft ``SpatialDiagonalMatrixOperator``).

    Parameters
    ----------
    row, col : Space
        Same ids; block k is ``(row.dims[k], col.dims[k])``.
    blocks : sequence of 2-D arrays aligned with ``row.ids``
    """

    name = "diag"

    def __init__(self, row, col, blocks, name=None):
        super().__init__(row, col, name)
        blocks = [np.asarray(b, dtype=float) for b in blocks]
        if len(blocks) != len(row.ids):
            raise ValueError(f"{len(blocks)} blocks for {len(row.ids)} nodes")
        for i, b in enumerate(blocks):
            if b.shape != (row.dims[i], col.dims[i]):
                raise ValueError(f"block {row.ids[i]} has shape {b.shape}, expected {(row.dims[i], col.dims[i])}")
        self.blocks = blocks

    def _apply(self, X):
        out = np.empty((self.row.size,) + X.shape[1:])
        for i, b in enumerate(self.blocks):
            out[self.row.slice_at(i)] = b @ X[self.col.slice_at(i)]
        return out

    def _transpose(self):
        return SpatialDiagonalMatrixOperator(self.col, self.row, [b.T for b in self.blocks], _star(self.name))

    def asArray(self):
        out = np.zeros(self.shape)
        for i, b in enumerate(self.blocks):
            out[self.row.slice_at(i), self.col.slice_at(i)] = b
        return out

    def block(self, i, j):
        pi, pj = self.row.pos(i), self.col.pos(j)
        if pi == pj:
            return self.blocks[pi].copy()
        return np.zeros((self.row.dims[pi], self.col.dims[pj]))

    def __call__(self, k) -> np.ndarray:
        """The diagonal block of node ``k`` (seed 002 Listing 23's ``P(3)``)."""
        return self.blocks[self.row.pos(k)]

    def inverse(self):
        """``diag{X(k)^-1}``; every block must be square and invertible."""
        inv = []
        for i, b in enumerate(self.blocks):
            if b.shape[0] != b.shape[1]:
                raise TypeError(f"{describe(self)}: block {self.row.ids[i]} is {b.shape}, not square")
            inv.append(np.linalg.inv(b) if b.size else b.copy())
        return SpatialDiagonalMatrixOperator(self.col, self.row, inv, f"{self.name}^-1")


class IdClass(SpatialDiagonalMatrixOperator):
    """Identity operator of ``g`` (PyCraft ``IdClass``); node space unless ``space`` is given.

    In ``+``/``-`` and ``*`` it takes the space of the other operand, so
    ``Id(g) - tau`` (node space) and ``Id(g) - H * psi * K`` (joint space) both work.
    """

    name = "I"

    def __init__(self, g, space: Space | None = None):
        space = g.node_space if space is None else space
        super().__init__(space, space, [np.eye(d) for d in space.dims], "I")
        self._g = g

    def on(self, space: Space) -> "IdClass":
        return self if space == self.row else IdClass(self._g, space)

    def __mul__(self, other):
        from .core import SpatialVector

        if isinstance(other, SpatialVector) and other.space.g is self._g:
            return SpatialVector(other.space, other.data.copy())
        return super().__mul__(other)


class BlockSparseOperator(SpatialMatrixOperator):
    """Operator with explicitly stored non-zero blocks ``{(i, j): X}`` (others are zero)."""

    name = "blocks"

    def __init__(self, row, col, blocks: dict, name=None):
        super().__init__(row, col, name)
        self.blocks = {}
        for (i, j), b in blocks.items():
            b = np.asarray(b, dtype=float)
            if b.shape != (row.dims[row.pos(i)], col.dims[col.pos(j)]):
                raise ValueError(f"block ({i}, {j}) has shape {b.shape}")
            self.blocks[(i, j)] = b

    def _apply(self, X):
        out = np.zeros((self.row.size,) + X.shape[1:])
        for (i, j), b in self.blocks.items():
            out[self.row.slice(i)] += b @ X[self.col.slice(j)]
        return out

    def _transpose(self):
        return BlockSparseOperator(self.col, self.row, {(j, i): b.T for (i, j), b in self.blocks.items()},
                                   _star(self.name))

    def block(self, i, j):
        b = self.blocks.get((i, j))
        if b is None:
            return np.zeros((self.row.dims[self.row.pos(i)], self.col.dims[self.col.pos(j)]))
        return b.copy()


def _star(name: str) -> str:
    return name[:-1] if name.endswith("*") else name + "*"


def _node_list(space: Space, X):
    return [X[space.slice_at(i)][None] for i in range(len(space.ids))]


def _flat(ys):
    return np.concatenate([y[0] for y in ys], axis=0)


class SKOClass(SpatialSquareMatrixOperator):
    """Spatial kernel operator ``E_A`` (PyCraft ``SKOClass``; seed 003 Eq. 13).

    Parameters
    ----------
    g : Subgraph
    weights : list over the local nodes of ``g``
        ``weights[j] = E(parent(j), j)``, shape (row dim of the parent, col dim of
        j), None for the subgraph's root(s).
    row, col : Space, optional
        Default ``g.node_space``; ``K = E_phi G`` has ``col = g.joint_space``.
    """

    name = "E"

    def __init__(self, g, weights, row=None, col=None, name=None):
        row = g.node_space if row is None else row
        col = g.node_space if col is None else col
        super().__init__(row, col, name)
        par = g.tree.parent
        ws = []
        for j, w in enumerate(weights):
            p = par[j]
            if p < 0:
                ws.append(None)
                continue
            w = np.asarray(w, dtype=float)
            if w.shape != (row.dims[p], col.dims[j]):
                raise ValueError(f"SKO weight ({row.ids[p]}, {row.ids[j]}) has shape {w.shape}, "
                                 f"expected {(row.dims[p], col.dims[j])}")
            ws.append(w)
        self.weights = ws
        self._g = g

    @property
    def is_square_sko(self) -> bool:
        return self.row == self.col

    def _apply(self, X):
        out = np.zeros((self.row.size,) + X.shape[1:])
        par = self._g.tree.parent
        for j, w in enumerate(self.weights):
            if w is not None:
                out[self.row.slice_at(par[j])] += w @ X[self.col.slice_at(j)]
        return out

    def _transpose(self):
        return SKOStarClass(self)

    def asArray(self):
        out = np.zeros(self.shape)
        par = self._g.tree.parent
        for j, w in enumerate(self.weights):
            if w is not None:
                out[self.row.slice_at(par[j]), self.col.slice_at(j)] = w
        return out

    def block(self, i, j):
        pi, pj = self.row.pos(i), self.col.pos(j)
        if self._g.tree.parent[pj] == pi:
            return self.weights[pj].copy()
        return np.zeros((self.row.dims[pi], self.col.dims[pj]))

    def _stacked(self):
        return [None if w is None else w[None] for w in self.weights]

    def _require_square(self, what):
        if not self.is_square_sko:
            raise IncompatibleOperands(f"{what} needs an SKO operator on one node space, got {describe(self)}")

    def LyapunovRecursion(self, X, other: "SKOClass | None" = None) -> SpatialDiagonalMatrixOperator:
        """Block-diagonal ``Y`` with ``X = Y - E_A Y E_B*`` (forward Lyapunov equation).

        Seed 001 Lemma 3, Eq. 14 (tips-to-base gather)
        ``Y(k) = sum_{j in C(k)} A(k, j) Y(j) B*(k, j) + X(k)``; ``E_B = E_A`` unless
        ``other`` is given.  ``Y`` is the block diagonal of ``A X B*`` and
        ``A X B* = A Y + Y B* - Y`` (seed 002 Eq. 18).

        Parameters
        ----------
        X : SpatialDiagonalMatrixOperator on this operator's node space
        other : SKOClass, optional -- ``E_B``
        """
        self._require_square("LyapunovRecursion")
        other = self if other is None else other
        X = as_diagonal(X, self.row)
        Y = forward_lyapunov(self._g.tree, self._stacked(), [b[None] for b in X.blocks], other._stacked(), 1)
        return SpatialDiagonalMatrixOperator(self.row, self.row, [y[0] for y in Y], f"Lyap({self.name})")


class SKOStarClass(SpatialSquareMatrixOperator):
    """Transpose ``E_A*`` of an SKO operator (PyCraft ``SKOStarClass``)."""

    def __init__(self, sko: SKOClass):
        super().__init__(sko.col, sko.row, _star(sko.name))
        self.sko = sko

    def _apply(self, X):
        s = self.sko
        out = np.zeros((self.row.size,) + X.shape[1:])
        par = s._g.tree.parent
        for j, w in enumerate(s.weights):
            if w is not None:
                out[self.row.slice_at(j)] = w.T @ X[self.col.slice_at(par[j])]
        return out

    def _transpose(self):
        return self.sko

    def asArray(self):
        return self.sko.asArray().T.copy()

    def block(self, i, j):
        return self.sko.block(j, i).T.copy()

    def LyapunovRecursion(self, X, other: "SKOStarClass | None" = None) -> SpatialDiagonalMatrixOperator:
        """Block-diagonal ``Y`` with ``X = Y - diagOf{E_A* Y E_B}`` (backward Lyapunov equation).

        Seed 001 Lemma 5, Eq. 24 (base-to-tips scatter)
        ``Y(k) = A*(parent(k), k) Y(parent(k)) B(parent(k), k) + X(k)``; ``Y`` is the
        block diagonal of ``A* X B`` (seed 002 Eqs. 36-37 with ``A = B = psi``).
        """
        s = self.sko
        s._require_square("LyapunovRecursion")
        other = s if other is None else (other.sko if isinstance(other, SKOStarClass) else other)
        X = as_diagonal(X, s.row)
        Y = backward_lyapunov(s._g.tree, s._stacked(), [b[None] for b in X.blocks], other._stacked(), 1)
        return SpatialDiagonalMatrixOperator(s.row, s.row, [y[0] for y in Y], f"Lyap({self.name})")


class SPOClass(SpatialSquareMatrixOperator):
    """SPO operator ``A = (I - E_A)^-1`` of an SKO operator (PyCraft ``SPOClass``, seed 002 Eq. 9).

    ``A * x`` for a SpatialVector runs the tips-to-base gather of seed 001 Lemma 1:
    ``y(k) = sum_{i in C(k)} A(k, i) y(i) + x(k)`` -- O(N), ``A`` is never formed.
    ``A[i][j]`` is the path product ``A(i, k1) ... A(km, j)`` for i an ancestor of j
    (seed 003 Lemma 5) and zero otherwise.
    """

    def __init__(self, sko: SKOClass, name: str | None = None):
        if not isinstance(sko, SKOClass):
            raise TypeError(f"SPOClass needs an SKOClass instance, got {describe(sko)}")
        sko._require_square("SPOClass")
        super().__init__(sko.row, sko.col, name or _spo_name(sko.name))
        self.sko = sko

    def _apply(self, X):
        s = self.sko
        return _flat(spo_mul(s._g.tree, s._stacked(), _node_list(self.col, X)))

    def _transpose(self):
        return SPOStarClass(self.sko, _star(self.name))

    def inverse(self):
        """``I - E_A`` (exact)."""
        from .algebra import add

        return add(IdClass(self.sko._g, self.row), self.sko, -1.0)


class SPOStarClass(SpatialSquareMatrixOperator):
    """Transpose ``A*`` of an SPO operator (PyCraft ``SPOStarClass``).

    ``A* * x`` runs the base-to-tips scatter of seed 001 Lemma 2:
    ``y(k) = A*(parent(k), k) y(parent(k)) + x(k)``.
    """

    def __init__(self, sko: SKOClass, name: str | None = None):
        if not isinstance(sko, SKOClass):
            raise TypeError(f"SPOStarClass needs an SKOClass instance, got {describe(sko)}")
        sko._require_square("SPOStarClass")
        super().__init__(sko.row, sko.col, name or _spo_name(sko.name) + "*")
        self.sko = sko

    def _apply(self, X):
        s = self.sko
        return _flat(spo_star_mul(s._g.tree, s._stacked(), _node_list(self.col, X)))

    def _transpose(self):
        return SPOClass(self.sko, _star(self.name))

    def inverse(self):
        """``I - E_A*`` (exact)."""
        from .algebra import add

        return add(IdClass(self.sko._g, self.row), SKOStarClass(self.sko), -1.0)


def _spo_name(sko_name: str) -> str:
    return sko_name[2:] if sko_name.startswith("E_") else f"(I-{sko_name})^-1"


def as_diagonal(X, space: Space | None = None) -> SpatialDiagonalMatrixOperator:
    """``X`` as a :class:`SpatialDiagonalMatrixOperator`; lazy operators are evaluated
    and must have zero off-diagonal blocks (else TypeError)."""
    if not isinstance(X, SpatialMatrixOperator):
        raise IncompatibleOperands(f"expected a block-diagonal spatial operator, got {describe(X)}")
    if space is not None and (X.row != space or X.col != space):
        raise IncompatibleOperands(f"{describe(X)} is not on {space!r}")
    if isinstance(X, SpatialDiagonalMatrixOperator):
        return X
    A = X.asArray()
    blocks = []
    mask = np.ones(A.shape, dtype=bool)
    for i in range(len(X.row.ids)):
        rs, cs = X.row.slice_at(i), X.col.slice_at(i)
        blocks.append(A[rs, cs].copy())
        mask[rs, cs] = False
    off = np.max(np.abs(A[mask]), initial=0.0)
    if off > STRUCTURE_RTOL * max(1.0, np.max(np.abs(A), initial=0.0)):
        raise TypeError(f"{describe(X)} is not block-diagonal (off-diagonal entry {off:.3g})")
    return SpatialDiagonalMatrixOperator(X.row, X.col, blocks, X.name)
