"""Straight-line C from traced arithmetic: the generator's constant folding.

A value of the generator is a *symbol*: a Python ``float`` (a constant known at generation time)
or a ``str`` (a C expression of ``double`` type).  The operations below fold constants as they
trace (``0 * x`` vanishes, ``1 * x`` is ``x``, sums of constants are one constant), so the
structural zeros of joint axes, placements and spatial transforms never reach the C source;
:meth:`Code.let` names an intermediate result (``const double name = expr;``) unless it is a
constant, which stays inline.  Negated expressions start with ``-``; sums are parenthesized,
products are not, so every returned expression is safe as a factor or a term.

Vectors are Python lists of symbols, 3 x 3 matrices lists of rows; spatial vectors are
``[angular; linear]`` (seed 002 Eq. 4).
"""

from __future__ import annotations

import math

from ..tolerances import STRUCTURAL_ZERO

__all__ = ["Code", "fmt", "const", "mul", "add", "neg", "dot", "cross", "matvec", "matTvec", "matmul",
           "matmulT", "transpose", "skew", "sub", "recip"]


def const(x: float) -> float:
    """A generation-time constant with values below :data:`STRUCTURAL_ZERO` in magnitude set to an exact
    zero (the rounding residue of rotations, ``cos(pi/2)``), so that they fold away."""
    x = float(x)
    return 0.0 if abs(x) < STRUCTURAL_ZERO else x


def fmt(x) -> str:
    """C text of a symbol (floats round-trip: ``repr``)."""
    if isinstance(x, str):
        return x
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return repr(float(x))


def _factor(x) -> str:
    """C text of a symbol as an operand of ``*`` (sign removed by the caller)."""
    s = fmt(x)
    return f"({s})" if s.startswith("-") or " " in s and not s.startswith("(") else s


def _is_element(s: str) -> bool:
    """``name[i][j]`` (an array element: as cheap as a local)."""
    return s.endswith("]") and "[" in s and all(c.isalnum() or c in "_[]->" for c in s)


def neg(a):
    if isinstance(a, float):
        return -a
    if a.startswith("-"):
        return a[1:]
    return "-" + a


def mul(a, b):
    """``a * b`` folded."""
    if isinstance(a, float) and isinstance(b, float):
        return a * b
    if isinstance(b, float):
        a, b = b, a
    if isinstance(a, float):
        if a == 0.0:
            return 0.0
        if a == 1.0:
            return b
        if a == -1.0:
            return neg(b)
    sign = ""
    if isinstance(a, float) and a < 0:
        a, sign = -a, "-"
    elif isinstance(a, str) and a.startswith("-"):
        a, sign = a[1:], "-"
    if b.startswith("-"):
        b, sign = b[1:], ("" if sign else "-")
    return f"{sign}{_factor(a)}*{_factor(b)}"


def add(*terms):
    """The sum of ``terms`` folded: constants summed, zeros dropped; a sum of two or more
    expressions is parenthesized."""
    c, parts = 0.0, []
    for t in terms:
        if isinstance(t, float):
            c += t
        else:
            parts.append(t)
    if c != 0.0:
        parts.append(fmt(c) if c > 0 else "-" + fmt(-c))
    if not parts:
        return 0.0
    if len(parts) == 1:
        return parts[0]
    out = parts[0]
    for p in parts[1:]:
        out += f" - {p[1:]}" if p.startswith("-") else f" + {p}"
    return f"({out})"


def recip(a):
    """``1 / a``."""
    if isinstance(a, float):
        return 1.0 / a
    return f"1.0/{a}" if a.replace("_", "").isalnum() else f"1.0/({a})"


def sub(a, b):
    return add(a, neg(b))


def dot(a, b):
    return add(*(mul(x, y) for x, y in zip(a, b)))


def cross(a, b):
    return [sub(mul(a[1], b[2]), mul(a[2], b[1])), sub(mul(a[2], b[0]), mul(a[0], b[2])),
            sub(mul(a[0], b[1]), mul(a[1], b[0]))]


def matvec(R, x):
    return [dot(row, x) for row in R]


def transpose(R):
    return [list(col) for col in zip(*R)]


def matTvec(R, x):
    return matvec(transpose(R), x)


def matmul(A, B):
    Bt = transpose(B)
    return [[dot(row, col) for col in Bt] for row in A]


def matmulT(A, B):
    """``A B^T``."""
    return [[dot(row, col) for col in B] for row in A]


def skew(p):
    return [[0.0, neg(p[2]), p[1]], [p[2], 0.0, neg(p[0])], [neg(p[1]), p[0], 0.0]]


class Code:
    """Lines of a C function body and the names of its ``const double`` locals."""

    #: a line that marks where the function may be split (:meth:`split`)
    SPLIT = "\0split"

    def __init__(self, indent: str = "  "):
        self.lines: list[str] = []
        self.indent = indent
        #: work arrays (name, rows, width) of the function, reached as ``w->name`` (:meth:`spill`)
        self.work: list[tuple[str, int, int]] = []

    def declare_work(self, name: str, rows: int, width: int) -> None:
        if all(w[0] != name for w in self.work):
            self.work.append((name, max(rows, 1), max(width, 1)))

    def split(self) -> None:
        """Mark a point between two bodies' blocks: the writer cuts long functions there into
        separately compiled pieces that share the work arrays (keeps the C compiler linear)."""
        self.lines.append(self.SPLIT)

    def comment(self, text: str) -> None:
        self.lines.append(f"{self.indent}/* {text} */")

    def raw(self, line: str) -> None:
        self.lines.append(f"{self.indent}{line}")

    def let(self, name: str, expr):
        """``expr`` under the C name ``name``: a constant or a bare name stays as it is."""
        if isinstance(expr, float):
            return expr
        if expr.replace("_", "").isalnum() or _is_element(expr):
            return expr
        self.lines.append(f"{self.indent}const double {name} = {expr};")
        return name

    def lets(self, name: str, exprs, suffixes=None):
        """A vector of lets named ``name0, name1 ...`` (or ``name + suffix``)."""
        suffixes = suffixes or [str(i) for i in range(len(exprs))]
        return [self.let(f"{name}{s}", e) for s, e in zip(suffixes, exprs)]

    def lets3(self, name: str, M):
        return [[self.let(f"{name}{i}{j}", M[i][j]) for j in range(3)] for i in range(3)]

    def spill(self, array: str, k: int, exprs):
        """Store the non-constant entries of ``exprs`` into ``array[k][i]`` and return the symbols that
        read them back (constants stay inline): the values one body passes to another go through memory,
        which keeps the live ranges of a body's block short (the C compiler's register allocation is
        superlinear in them)."""
        out = []
        for i, e in enumerate(exprs):
            if isinstance(e, float):
                out.append(e)
            else:
                target = f"w->{array}[{k}][{i}]"
                self.lines.append(f"{self.indent}{target} = {e};")
                out.append(target)
        return out

    def store(self, target: str, expr) -> None:
        self.lines.append(f"{self.indent}{target} = {fmt(expr)};")

    def text(self) -> str:
        return "\n".join(ln for ln in self.lines if ln != self.SPLIT)

    def chunks(self, min_lines: int) -> list[list[str]]:
        """The lines cut at :meth:`split` marks into pieces of at least ``min_lines`` lines."""
        out, cur = [], []
        for ln in self.lines:
            if ln == self.SPLIT:
                if len(cur) >= min_lines:
                    out.append(cur)
                    cur = []
            else:
                cur.append(ln)
        if cur or not out:
            out.append(cur)
        return out
