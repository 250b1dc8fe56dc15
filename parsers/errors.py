"""The one error type for bad input.

Every reader raises :class:`InputError` for input it cannot accept.  The error
carries the file, the line (1-based, when known) and the key path inside the
document, so that the CLI can print a single line::

    error: samples/seeker/seeker.yaml:42: bodies[3].inertial.mass: must be > 0, got -1
"""

from __future__ import annotations


class InputError(Exception):
    """Bad input: a file, a line and what was expected.

    Parameters
    ----------
    message : str
        What is wrong and what was expected.
    file : str or None
        The file the value came from.
    line : int or None
        1-based line number in ``file``.
    key : str or None
        Key path inside the document (``joints[2].axis``).
    """

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 key: str | None = None):
        super().__init__(message)
        self.message = message
        self.file = None if file is None else str(file)
        self.line = line
        self.key = key

    def location(self) -> str:
        """``file:line`` (or ``file``, or ``<input>``)."""
        where = self.file or "<input>"
        return f"{where}:{self.line}" if self.line is not None else where

    def __str__(self) -> str:
        key = f"{self.key}: " if self.key else ""
        return f"{self.location()}: {key}{self.message}"


def did_you_mean(name, choices, list_choices: bool = False) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices`` to ``name`` (difflib); when none is close,
    '' or, with ``list_choices``, `` (expected one of: a, b, c)``."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    if list_choices and choices:
        return f" (expected one of: {', '.join(str(c) for c in choices)})"
    return ""
