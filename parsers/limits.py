"""Resource limits of the readers and of the simulation, in one place.

Every input is bounded before it can cost unbounded time or memory.  The
defaults (:class:`InputLimits`) suit every sample and robot shipped with the
tests; a pipeline overrides them under ``limits:`` and the CLI with
``mbcompose --limit NAME=VALUE`` (repeatable), e.g. ``--limit mesh_faces=6e6``.

========================  ==============  ==================================================
name                      default         bounds
========================  ==============  ==================================================
``input_bytes``           268435456       size of any file read (model, include, mesh), bytes
``nesting_depth``         200             nesting of YAML collections and XML elements
``yaml_nodes``            2000000         YAML values after alias expansion (alias bombs)
``mesh_faces``            2000000         triangles of one mesh file
``xml_elements``          2000000         elements of an MJCF model after ``<replicate>`` and
                                          ``<attach>`` are written out (replicate bombs)
``magnitude``             1e12            absolute value of any number read from a model
                                          (SI: m, kg, kg m^2, N, ...) or given as a
                                          joint value, so products and squares stay finite;
                                          a joint limit beyond it (``lower="-1e16"``,
                                          SDFormat's default, or ``inf``) is no limit
``samples``               100000          output samples of one simulation
``duration``              1000.0          simulated time of one simulation, s
========================  ==============  ==================================================

Every file is also checked to be a regular file before it is opened
(:func:`read_input_bytes`): a FIFO, ``/dev/zero`` or ``/dev/urandom`` is
refused instead of read forever.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import stat
from dataclasses import dataclass, fields, replace
from pathlib import Path

from .errors import InputError, did_you_mean


@dataclass(frozen=True)
class InputLimits:
    """The limits (see the module docstring for units and meaning)."""

    input_bytes: int = 256 * 1024 * 1024
    nesting_depth: int = 200
    yaml_nodes: int = 2_000_000
    mesh_faces: int = 2_000_000
    xml_elements: int = 2_000_000
    magnitude: float = 1e12
    samples: int = 100_000
    duration: float = 1000.0


LIMIT_NAMES = tuple(f.name for f in fields(InputLimits))
_read_files: contextvars.ContextVar[set | None] = contextvars.ContextVar("mbcompose_inputs", default=None)
_current: contextvars.ContextVar[InputLimits] = contextvars.ContextVar("mbcompose_limits", default=InputLimits())


#: ``active()``: the limits in force (the defaults unless :func:`using` changed them); the
#: context variable's own getter, one C call, as the readers ask for it per number read
active = _current.get


def checked_limits(values: dict, base: InputLimits | None = None) -> InputLimits:
    """``base`` with ``values`` (name -> number) replaced; ValueError names a bad name or value."""
    base = base or active()
    out = {}
    for name, value in values.items():
        if name not in LIMIT_NAMES:
            raise ValueError(f"unknown limit {name!r}{did_you_mean(name, LIMIT_NAMES)} "
                             f"(limits: {', '.join(LIMIT_NAMES)})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
                or value == float("inf"):
            raise ValueError(f"limit {name} must be a positive finite number, got {value!r}")
        kind = type(getattr(base, name))
        if kind is int and value != int(value):
            raise ValueError(f"limit {name} must be an integer, got {value!r}")
        out[name] = kind(value)
    return replace(base, **out)


@contextlib.contextmanager
def using(limits: InputLimits):
    """Make ``limits`` active inside the ``with`` block (this thread/context only)."""
    token = _current.set(limits)
    try:
        yield limits
    finally:
        _current.reset(token)


def set_default(limits: InputLimits) -> None:
    """Make ``limits`` active for the rest of this context (the CLI's ``--limit``)."""
    _current.set(limits)


def exceeded(what: str, value, name: str) -> str:
    """Message for a limit hit: what, the value, the limit and how to raise it."""
    return (f"{what} ({value:g}) exceeds the limit {name}={getattr(active(), name):g} "
            f"(raise it with --limit {name}=N or 'limits: {{{name}: N}}' in a pipeline)")


def check_magnitude(value: float, what: str) -> str | None:
    """None if ``|value|`` is within ``magnitude``; else the message for it."""
    if abs(value) <= active().magnitude:
        return None
    return exceeded(f"{what}: |{value:g}|", abs(value), "magnitude")


def joint_bound(text: str) -> float | None:
    """A joint limit (position, velocity or effort) as written: the float, or None (no bound) when
    it is infinite or beyond ``magnitude``, the usual way of saying "unbounded" (``-1e16`` is
    SDFormat's default lower limit; Pinocchio keeps such a number, which bounds nothing).

    Raises ValueError for a text that is not one number, or NaN.
    """
    value = float(text)
    if value != value:
        raise ValueError("NaN")
    return value if abs(value) <= active().magnitude else None


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_input_file(path, what: str = "file") -> int:
    """Size in bytes of ``path`` after checking it is a readable regular file within ``input_bytes``.

    Raises InputError (naming the file) for a missing file, a directory, a FIFO,
    a device such as ``/dev/zero`` or a file over the size limit.
    """
    files = _read_files.get()
    if files is not None:
        files.add(Path(path).resolve())
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{what} not found", file=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror}", file=str(path)) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} is {_file_kind(st.st_mode)}, expected a regular file", file=str(path))
    if st.st_size > active().input_bytes:
        raise InputError(exceeded(f"{what} size in bytes", st.st_size, "input_bytes"), file=str(path))
    return st.st_size


def read_input_bytes(path, what: str = "file") -> bytes:
    """The bytes of a regular input file, read only after :func:`check_input_file`."""
    check_input_file(path, what)
    limit = active().input_bytes
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):  # swapped after the check
                raise InputError(f"{what} is not a regular file", file=str(path))
            # a buffer of the file's size, not of the limit; more only if the file grew since
            data = _read_at_most(fd, min(st.st_size, limit) + 1)
            if st.st_size < len(data) <= limit:
                data += _read_at_most(fd, limit + 1 - len(data))
        finally:
            os.close(fd)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror}", file=str(path)) from None
    if len(data) > limit:
        raise InputError(exceeded(f"{what} size in bytes", len(data), "input_bytes"), file=str(path))
    return data


def _read_at_most(fd: int, n: int) -> bytes:
    """Up to ``n`` bytes of the open file ``fd``, fewer only where the file ends (``os.read`` directly:
    a file object for one read costs more than the read of a small file)."""
    parts = []
    while n > 0:
        chunk = os.read(fd, n)
        if not chunk:
            break
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def read_input_text(path, what: str = "file") -> str:
    """The UTF-8 text of a regular input file (see :func:`read_input_bytes`)."""
    data = read_input_bytes(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte {exc.start})", file=str(path), line=line) from None


@contextlib.contextmanager
def recording_inputs():
    """Collect the resolved path of every file checked by :func:`check_input_file` in the block.

    The output writers refuse to write over any of them (model, included files, meshes).
    """
    files: set[Path] = set()
    token = _read_files.set(files)
    try:
        yield files
    finally:
        _read_files.reset(token)
