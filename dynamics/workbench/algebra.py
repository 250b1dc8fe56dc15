"""Products, sums and scalings of workbench operators with exact structured results (seed 002 section 3).

``A * B``, ``A + B`` and ``c * A`` of :class:`dynamics.workbench.core.SpatialMatrixOperator`
come here: a diagonal times a diagonal, an SKO times a diagonal and similar
cheap exact cases give structured operators (:mod:`dynamics.workbench.structured`);
everything else stays a lazy product or sum.
"""

from __future__ import annotations

from .core import IncompatibleOperands, ProductOperator, SpatialMatrixOperator, SumOperator, describe
from .structured import IdClass, SKOClass, SpatialDiagonalMatrixOperator

__all__ = ["product", "add", "scale"]


def _is_plain_sko(x) -> bool:
    return isinstance(x, SKOClass)


def product(a: SpatialMatrixOperator, b: SpatialMatrixOperator) -> SpatialMatrixOperator:
    """``a * b`` with structured results where exact (see the module table)."""
    if isinstance(a, IdClass) and b.row.kind != "pick":
        return b
    if isinstance(b, IdClass) and a.col.kind != "pick":
        return a
    if a.col != b.row:
        raise IncompatibleOperands(f"'*': {describe(a)} and {describe(b)}: columns of the first "
                                   f"({a.col!r}) are not the rows of the second ({b.row!r})")
    D = SpatialDiagonalMatrixOperator
    if isinstance(a, D) and isinstance(b, D):
        return D(a.row, b.col, [x @ y for x, y in zip(a.blocks, b.blocks)], f"{a.name} * {b.name}")
    if _is_plain_sko(a) and isinstance(b, D):
        w = [None if e is None else e @ d for e, d in zip(a.weights, b.blocks)]
        return SKOClass(a._g, w, a.row, b.col, f"{a.name} * {b.name}")
    if isinstance(a, D) and _is_plain_sko(b):
        par = b._g.tree.parent
        w = [None if e is None else a.blocks[par[j]] @ e for j, e in enumerate(b.weights)]
        return SKOClass(b._g, w, a.row, b.col, f"{a.name} * {b.name}")
    if isinstance(a, ProductOperator) and isinstance(a.factors[-1], D) and isinstance(b, D):
        return ProductOperator(list(a.factors[:-1]) + [product(a.factors[-1], b)])
    if isinstance(a, D) and isinstance(b, ProductOperator) and isinstance(b.factors[0], D):
        return ProductOperator([product(a, b.factors[0])] + list(b.factors[1:]))
    return ProductOperator([a, b])


def add(a: SpatialMatrixOperator, b: SpatialMatrixOperator, c: float) -> SpatialMatrixOperator:
    """``a + c b`` (c = +-1 for ``+``/``-``)."""
    if isinstance(a, IdClass) and b.row == b.col:
        a = a.on(b.row)
    if isinstance(b, IdClass) and a.row == a.col:
        b = b.on(a.row)
    if a.row != b.row or a.col != b.col:
        raise IncompatibleOperands(f"'{'+' if c > 0 else '-'}': {describe(a)} and {describe(b)} act on different spaces")
    op = "+" if c > 0 else "-"
    D = SpatialDiagonalMatrixOperator
    if isinstance(a, D) and isinstance(b, D):
        return D(a.row, a.col, [x + c * y for x, y in zip(a.blocks, b.blocks)], f"({a.name} {op} {b.name})")
    if _is_plain_sko(a) and _is_plain_sko(b):
        w = [None if x is None else x + c * y for x, y in zip(a.weights, b.weights)]
        return SKOClass(a._g, w, a.row, a.col, f"({a.name} {op} {b.name})")
    return SumOperator([(1.0, a), (c, b)])


def scale(a: SpatialMatrixOperator, c: float) -> SpatialMatrixOperator:
    """``c a``."""
    c = float(c)
    if isinstance(a, SpatialDiagonalMatrixOperator):
        return SpatialDiagonalMatrixOperator(a.row, a.col, [c * x for x in a.blocks], f"{c:g} {a.name}")
    if _is_plain_sko(a):
        return SKOClass(a._g, [None if x is None else c * x for x in a.weights], a.row, a.col, f"{c:g} {a.name}")
    if isinstance(a, SumOperator):
        return SumOperator([(c * k, t) for k, t in a.terms])
    return SumOperator([(c, a)])
