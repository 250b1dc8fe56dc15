"""The one error type for bad input.

Every reader raises :class:`InputError` for input it cannot accept.  The error
carries the file, the line (1-based, when known) and the key path inside the
document, so that the CLI can print a single line::

    error: samples/seeker/seeker.yaml:42: bodies[3].inertial.mass: must be > 0, got -1
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import re


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


# ------------------------------------------------------------------ where, never what
#: the folders whose files a message may quote (:func:`quoting_only_inside`), or None
_model_folder: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("mbcompose_model_folder", default=None)
#: quoted text, element tags and the words of a syntax error: what a message may quote of a file
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|<[^<>]*>|(?<=XML syntax error: ).*")


def _outside(file) -> bool:
    folders = _model_folder.get()
    if folders is None or not file:
        return False
    return not os.path.realpath(str(file)).startswith(folders)


def redacted(message: str) -> str:
    """``message`` with everything it quotes of a file (quoted text, ``<tags>``, a syntax error's
    words) replaced by ``...``: what is left says where and which kind of problem, never what the
    file holds."""
    return _QUOTED.sub("...", message) + " (not quoted: the file is outside the model's folder)"


@contextlib.contextmanager
def quoting_only_inside(*folders):
    """Inside the block, errors and warnings about a file outside ``folders`` (the model's own and
    the search paths the user gave; an ``<include>`` climbing out of them, ``/etc/passwd``) say
    where, never what: an
    InputError located in such a file is raised again :func:`redacted`, and so is a warning
    logged by a logger with :data:`FOREIGN_TEXT` whose message starts with such a file's name."""
    token = _model_folder.set(tuple(os.path.join(os.path.realpath(str(f)), "") for f in folders))
    try:
        yield
    except InputError as exc:
        if not _outside(exc.file):
            raise
        raise InputError(redacted(exc.message), exc.file, exc.line, exc.key) from None
    finally:
        _model_folder.reset(token)


class _ForeignText(logging.Filter):
    """Redacts a record about a file outside the model's folder (:func:`quoting_only_inside`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _model_folder.get() is not None:
            message = record.getMessage()
            if _outside(message.split(":", 1)[0]):
                record.msg, record.args = redacted(message), ()
        return True


#: the filter the readers' loggers carry (``log.addFilter(FOREIGN_TEXT)``)
FOREIGN_TEXT = _ForeignText()
