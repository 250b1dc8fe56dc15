"""How numbers and counts are written for a person: one home for the report, the tables and the CLI.

A value that is zero to the tolerance prints as ``0`` (not ``-6.69531e-18``);
others with ``digits`` significant digits.  Counts agree with their noun
("1 body", "2 bodies").
"""

from __future__ import annotations

import numpy as np

from mbcompose.dynamics.tolerances import DISPLAY_ZERO_RTOL

#: absolute values below this (relative to the largest entry of a matrix) print as 0
ZERO_TOL = DISPLAY_ZERO_RTOL

_PLURALS = {"body": "bodies", "dof": "dof", "degree of freedom": "degrees of freedom", "gravity": "gravity"}


def plural(n: int, noun: str) -> str:
    """``"1 body"``, ``"3 bodies"``, ``"2 joints"``."""
    word = noun if n == 1 else _PLURALS.get(noun, noun + "s")
    return f"{n} {word}"


def format_number(x, scale: float = 1.0, digits: int = 6, tol: float = ZERO_TOL) -> str:
    """``x`` with ``digits`` significant digits; ``0`` when ``|x| <= tol * max(scale, 1)``.

    Non-numbers (text, booleans written as words) are returned as text.
    """
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if not isinstance(x, (int, float, np.integer, np.floating)):
        return str(x)
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if not np.isfinite(x):
        return str(x)
    if abs(x) <= tol * max(abs(scale), 1.0):
        return "0"
    return f"{x:.{digits}g}"


def format_matrix(value, digits: int = 6) -> str:
    """A vector or matrix as aligned columns, entries zero to the tolerance as ``0``."""
    A = np.atleast_2d(np.asarray(value, dtype=float))
    scale = float(np.max(np.abs(A))) if A.size else 1.0
    cells = [[format_number(x, scale, digits) for x in row] for row in A]
    width = max((len(c) for row in cells for c in row), default=1)
    return "\n".join("  ".join(c.rjust(width) for c in row) for row in cells)
