"""Stacked vectors and the spatial matrix operator base class (seed 002 section 3).

PyCraft (seed 002, section 3) evaluates spatial operator expressions typed as
in the papers, e.g. ``H * phi * M * phistar * Hst``.  This module holds the
classes every operator shares:

* :class:`Space` -- an ordered set of index blocks (the rows or the columns of
  an operator): the nodes of a subgraph ``g`` with their weight dimensions
  ``m_k`` ("node" space, stacked spatial vectors), the same nodes with their
  joint dimensions ``n_k`` ("joint" space, ``theta_dot``, ``T``), or the
  pick-off nodes of a ``B*`` operator ("pick" space).
* :class:`SpatialVector` -- a stacked vector on a space; ``V[k]`` is node k's
  block (seed 002 section 3, "SpatialVector").
* :class:`SpatialMatrixOperator` -- the base of all operators;
  ``op[i][j]`` (or ``op[i, j]``) is the ``(i, j)`` block.  Products ``A * B``
  with other operators build a lazy :class:`ProductOperator` unless a cheap
  exact structured result exists (diagonal times diagonal, SKO times diagonal,
  see :mod:`dynamics.workbench.structured`); a product with a
  :class:`SpatialVector` applies the factors right to left, each by its own
  O(N) recursion; ``asArray()`` applies the operator to the identity.

Operators refuse raw numpy arrays (``__array_ufunc__ = None`` so that numpy
does not broadcast ``ndarray * op`` either): the error names both operands.
Operators of different subgraphs do not mix (seed 002: "These operations are
only permitted among operators sharing the same subgraph"; seed 001 section
2.3, "Spatial operator compatibility").
"""

from __future__ import annotations

import numbers

import numpy as np

from ..tolerances import OPERATOR_TOL
from .space import Space

__all__ = ["TOL", "IncompatibleOperands", "Space", "SpatialVector", "SpatialMatrixOperator",
           "ProductOperator", "SumOperator"]

#: Default tolerance of ``isZero()`` / ``isIdentity()`` (:data:`dynamics.tolerances.OPERATOR_TOL`).
TOL = OPERATOR_TOL


class IncompatibleOperands(TypeError):
    """Operands that cannot be combined: raw arrays, other subgraphs, mismatched index spaces."""


def describe(x) -> str:
    """Short description of an operand for error messages."""
    if isinstance(x, SpatialMatrixOperator):
        return f"{type(x).__name__} {x.name!r} ({x.row.label} x {x.col.label}, shape {x.shape})"
    if isinstance(x, SpatialVector):
        return f"SpatialVector on {x.space.label} (size {x.space.size})"
    if isinstance(x, np.ndarray):
        return f"raw numpy.ndarray of shape {x.shape}"
    return f"{type(x).__name__} {x!r}"


def _is_scalar(x) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, bool)


def _refuse(op: str, a, b):
    hint = ""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or isinstance(a, (list, tuple)) \
            or isinstance(b, (list, tuple)):
        hint = (" -- wrap stacked vectors as SpatialVector(g.node_space or g.joint_space, array);"
                " an operator never broadcasts against a raw array")
    raise IncompatibleOperands(f"unsupported operands for {op!r}: {describe(a)} and {describe(b)}{hint}")


class SpatialVector:
    """A stacked vector on a :class:`Space` (seed 002 Eq. 5; PyCraft ``SpatialVector``).

    Parameters
    ----------
    space : Space
        e.g. ``g.node_space`` (stacked spatial velocities/forces) or
        ``g.joint_space`` (``theta_dot``, ``T``).
    data : None, (size,) or (size, C) array, dict {id: block} or sequence of blocks
        None gives zeros.  ``C`` columns make a multi-vector (``op * X`` applies
        the operator to each column).

    ``V[k]`` returns (a view of) node k's block; ``asArray()`` a copy of the flat data.
    """

    __array_ufunc__ = None

    def __init__(self, space: Space, data=None):
        if not isinstance(space, Space):
            raise IncompatibleOperands(f"SpatialVector needs a Space (g.node_space, g.joint_space), got {describe(space)}")
        self.space = space
        if data is None:
            arr = np.zeros(space.size)
        elif isinstance(data, dict):
            arr = np.zeros(space.size)
            for k, blk in data.items():
                arr[space.slice(k)] = np.asarray(blk, dtype=float)
        elif isinstance(data, (list, tuple)) and len(data) == len(space.ids) and all(np.ndim(b) == 1 for b in data):
            arr = np.concatenate([np.asarray(b, dtype=float) for b in data] or [np.zeros(0)])
        else:
            arr = np.array(data, dtype=float)
        if arr.ndim not in (1, 2) or arr.shape[0] != space.size:
            raise ValueError(f"SpatialVector data of shape {arr.shape} does not fit {space.label} of size {space.size}")
        self.data = arr

    @classmethod
    def zeros(cls, space: Space, cols: int | None = None) -> "SpatialVector":
        return cls(space, np.zeros((space.size,) if cols is None else (space.size, cols)))

    @property
    def shape(self):
        return self.data.shape

    def __getitem__(self, k):
        return self.data[self.space.slice(k)]

    def __setitem__(self, k, value):
        self.data[self.space.slice(k)] = value

    def __len__(self):
        return self.space.size

    def asArray(self) -> np.ndarray:
        """Copy of the flat data, (size,) or (size, C)."""
        return self.data.copy()

    def _check(self, other, op):
        if not isinstance(other, SpatialVector):
            _refuse(op, self, other)
        if other.space != self.space:
            raise IncompatibleOperands(f"{op!r}: SpatialVectors on different spaces ({self.space!r} and {other.space!r})")

    def __add__(self, other):
        self._check(other, "+")
        return SpatialVector(self.space, self.data + other.data)

    def __sub__(self, other):
        self._check(other, "-")
        return SpatialVector(self.space, self.data - other.data)

    def __neg__(self):
        return SpatialVector(self.space, -self.data)

    def __mul__(self, other):
        if _is_scalar(other):
            return SpatialVector(self.space, self.data * other)
        _refuse("*", self, other)

    def __rmul__(self, other):
        if _is_scalar(other):
            return SpatialVector(self.space, other * self.data)
        _refuse("*", other, self)

    def __truediv__(self, other):
        if _is_scalar(other):
            return SpatialVector(self.space, self.data / other)
        _refuse("/", self, other)

    __radd__ = lambda self, other: _refuse("+", other, self)  # noqa: E731
    __rsub__ = lambda self, other: _refuse("-", other, self)  # noqa: E731

    def __repr__(self):
        return f"SpatialVector({self.space.kind}, size={self.space.size}, cols={self.data.shape[1:] or 1})"


class _RowView:
    __slots__ = ("op", "i")

    def __init__(self, op, i):
        self.op, self.i = op, i

    def __getitem__(self, j):
        return self.op.block(self.i, j)


class SpatialMatrixOperator:
    """Base class of all spatial operators (PyCraft ``SpatialMatrixOperator``).

    An operator maps stacked vectors on ``col`` to stacked vectors on ``row``.
    Subclasses implement ``_apply`` (the product with a (col.size, C) array,
    by the operator's own recursion) and ``_transpose``.

    Products (``*``):

    ====================== =======================================================
    right operand          result
    ====================== =======================================================
    SpatialMatrixOperator  operator: structured when cheap and exact (see
                           :func:`dynamics.workbench.algebra.product`), else a
                           lazy :class:`ProductOperator` evaluated right to left
    SpatialVector          SpatialVector on ``row`` (O(N) recursions per factor)
    int / float            scaled operator
    anything else          :class:`IncompatibleOperands` (a TypeError)
    ====================== =======================================================

    ``+``/``-`` take operators on the same spaces (a lazy :class:`SumOperator`
    unless structured).  ``op[i][j]`` and ``op[i, j]`` give the (i, j) block
    (ids are global node indices); ``asArray()`` the dense matrix.
    """

    __array_ufunc__ = None
    name = "op"

    def __init__(self, row: Space, col: Space, name: str | None = None):
        self.row = row
        self.col = col
        if name is not None:
            self.name = name

    # ---- to be provided by subclasses ------------------------------------
    def _apply(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _transpose(self) -> "SpatialMatrixOperator":
        raise NotImplementedError

    # ---- queries -----------------------------------------------------------
    @property
    def g(self):
        return self.row.g

    @property
    def shape(self) -> tuple[int, int]:
        return (self.row.size, self.col.size)

    def asArray(self) -> np.ndarray:
        """The dense (row.size, col.size) matrix."""
        if self.row.size < self.col.size:
            return self._transpose()._apply(np.eye(self.row.size)).T.copy()
        return self._apply(np.eye(self.col.size))

    def getTranspose(self) -> "SpatialMatrixOperator":
        """The transpose ``op*`` (lazy where the operator is)."""
        return self._transpose()

    @property
    def T(self) -> "SpatialMatrixOperator":
        return self._transpose()

    def inverse(self) -> "SpatialMatrixOperator":
        raise TypeError(f"{describe(self)}: inverse() is defined for block-diagonal operators with square "
                        "blocks and for SPO operators")

    def block(self, i, j) -> np.ndarray:
        """The (i, j) block, (row dim of i, col dim of j)."""
        sj = self.col.slice(j)
        E = np.zeros((self.col.size, sj.stop - sj.start))
        E[sj, :] = np.eye(sj.stop - sj.start)
        return self._apply(E)[self.row.slice(i)]

    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 2:
            return self.block(*key)
        self.row.pos(key)
        return _RowView(self, key)

    def _scale(self) -> float:
        return float(np.max(np.abs(self.asArray()), initial=0.0))

    def isZero(self, tol: float = TOL) -> bool:
        """True when every entry is within ``tol * max(1, scale)`` of zero.

        ``scale`` is the largest entry of the terms of a difference (a
        :class:`SumOperator`), so that ``(A - B).isZero()`` is a relative test;
        1 for other operators.
        """
        A = self.asArray()
        scale = self._terms_scale() if isinstance(self, SumOperator) else 1.0
        return bool(np.max(np.abs(A), initial=0.0) <= tol * max(1.0, scale))

    def isIdentity(self, tol: float = TOL) -> bool:
        """True when row and column spaces agree and ``max |op - I| <= tol``."""
        if self.row != self.col:
            return False
        A = self.asArray()
        return bool(np.max(np.abs(A - np.eye(A.shape[0])), initial=0.0) <= tol)

    # ---- arithmetic --------------------------------------------------------
    def _check_same_g(self, other, op):
        if other.g is not self.g:
            raise IncompatibleOperands(f"{op!r}: operators of different subgraphs: {describe(self)} and {describe(other)}")

    def __mul__(self, other):
        from .algebra import product, scale

        if isinstance(other, SpatialMatrixOperator):
            self._check_same_g(other, "*")
            return product(self, other)
        if isinstance(other, SpatialVector):
            if other.space.g is not self.g:
                raise IncompatibleOperands(f"'*': {describe(self)} and a SpatialVector of another subgraph")
            if other.space != self.col:
                raise IncompatibleOperands(f"'*': {describe(self)} needs a vector on {self.col!r}, got {other.space!r}")
            X = other.data
            Y = self._apply(X[:, None] if X.ndim == 1 else X)
            return SpatialVector(self.row, Y[:, 0] if X.ndim == 1 else Y)
        if _is_scalar(other):
            return scale(self, other)
        _refuse("*", self, other)

    def __rmul__(self, other):
        from .algebra import scale

        if _is_scalar(other):
            return scale(self, other)
        _refuse("*", other, self)

    __matmul__ = __mul__

    def __rmatmul__(self, other):
        _refuse("@", other, self)

    def __add__(self, other):
        from .algebra import add

        if not isinstance(other, SpatialMatrixOperator):
            _refuse("+", self, other)
        self._check_same_g(other, "+")
        return add(self, other, 1.0)

    def __sub__(self, other):
        from .algebra import add

        if not isinstance(other, SpatialMatrixOperator):
            _refuse("-", self, other)
        self._check_same_g(other, "-")
        return add(self, other, -1.0)

    def __radd__(self, other):
        _refuse("+", other, self)

    def __rsub__(self, other):
        _refuse("-", other, self)

    def __neg__(self):
        from .algebra import scale

        return scale(self, -1.0)

    def __pos__(self):
        return self

    def __bool__(self):
        raise TypeError(f"the truth value of {describe(self)} is ambiguous; use isZero() or isIdentity()")

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}: {self.row.label} x {self.col.label}>"


class ProductOperator(SpatialMatrixOperator):
    """Lazy product ``F1 * F2 * ... * Fm``; ``_apply`` applies ``Fm`` first."""

    name = "product"

    def __init__(self, factors):
        flat = []
        for f in factors:
            flat.extend(f.factors if isinstance(f, ProductOperator) else [f])
        for a, b in zip(flat, flat[1:]):
            if a.col != b.row:
                raise IncompatibleOperands(f"'*': {describe(a)} and {describe(b)} have incompatible index spaces")
        super().__init__(flat[0].row, flat[-1].col, " * ".join(f.name for f in flat))
        self.factors = tuple(flat)

    def _apply(self, X):
        for f in reversed(self.factors):
            X = f._apply(X)
        return X

    def _transpose(self):
        return ProductOperator([f._transpose() for f in reversed(self.factors)])


class SumOperator(SpatialMatrixOperator):
    """Lazy linear combination ``sum c_i A_i`` of operators on the same spaces."""

    name = "sum"

    def __init__(self, terms):
        flat = []
        for c, t in terms:
            if isinstance(t, SumOperator):
                flat.extend((c * c2, t2) for c2, t2 in t.terms)
            else:
                flat.append((float(c), t))
        row, col = flat[0][1].row, flat[0][1].col
        for _, t in flat:
            if t.row != row or t.col != col:
                raise IncompatibleOperands(f"'+'/'-': {describe(flat[0][1])} and {describe(t)} act on different spaces")
        name = " ".join((("+ " if c > 0 else "- ") if i else ("" if c > 0 else "-"))
                        + (f"{abs(c):g} " if abs(c) != 1 else "") + t.name for i, (c, t) in enumerate(flat))
        super().__init__(row, col, f"({name})")
        self.terms = tuple(flat)

    def _apply(self, X):
        out = None
        for c, t in self.terms:
            Y = t._apply(X)
            out = c * Y if out is None else out + c * Y
        return out

    def _transpose(self):
        return SumOperator([(c, t._transpose()) for c, t in self.terms])

    def _terms_scale(self) -> float:
        return max(abs(c) * t._scale() for c, t in self.terms)
