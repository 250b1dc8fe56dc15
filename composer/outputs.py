"""Atomic output files.

Every file mbcompose writes goes through :func:`atomic_write` or an
:class:`OutputSet`: the content is written to a temporary file in the target
folder and renamed over the target only when it is complete, so a failure
never leaves a half-written file.  Inputs are never overwritten.

An :class:`OutputSet` stages several files of one run and publishes them all
at the end (``commit``); if the run fails before, ``discard`` removes every
staged file, so an interrupted run leaves no partial output.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from mbcompose.parsers.errors import InputError


def _check_not_input(target: Path, inputs: Iterable[Path]) -> None:
    for p in inputs:
        try:
            if Path(p).resolve() == target.resolve():
                raise InputError(f"refusing to overwrite the input file {p}", file=str(target))
        except FileNotFoundError:
            continue


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temp_path(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    os.chmod(name, 0o666 & ~_umask())
    return Path(name)


def atomic_write(target, write: Callable[[Path], None], inputs: Iterable = ()) -> Path:
    """Write ``target`` atomically: ``write(tmp_path)`` fills a temporary file, then rename.

    ``inputs`` are paths that must not be overwritten.
    """
    target = Path(target)
    _check_not_input(target, [Path(p) for p in inputs])
    tmp = _temp_path(target)
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
    return target


def atomic_write_text(target, text: str, inputs: Iterable = ()) -> Path:
    """Write text atomically (UTF-8)."""
    return atomic_write(target, lambda p: p.write_text(text, encoding="utf-8"), inputs)


class OutputSet:
    """Files of one run, staged in temporary files and published together.

    Use as a context manager: on normal exit the staged files are renamed to
    their targets; on an exception they are deleted and no target is touched.
    """

    def __init__(self, inputs: Iterable = ()):
        self._inputs = [Path(p) for p in inputs]
        self._staged: list[tuple[Path, Path]] = []

    def add(self, target, write: Callable[[Path], None]) -> Path:
        """Stage ``target``: ``write(tmp_path)`` fills its temporary file now."""
        target = Path(target)
        _check_not_input(target, self._inputs)
        if any(t == target for t, _ in self._staged):
            raise ValueError(f"output {target} staged twice")
        tmp = _temp_path(target)
        self._staged.append((target, tmp))
        write(tmp)
        return target

    def add_text(self, target, text: str) -> Path:
        return self.add(target, lambda p: p.write_text(text, encoding="utf-8"))

    @property
    def targets(self) -> list[Path]:
        return [t for t, _ in self._staged]

    def commit(self) -> list[Path]:
        for target, tmp in self._staged:
            os.replace(tmp, target)
        done = self.targets
        self._staged = []
        return done

    def discard(self) -> None:
        for _, tmp in self._staged:
            if tmp.exists():
                tmp.unlink()
        self._staged = []

    def __enter__(self) -> "OutputSet":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            self.commit()
        else:
            self.discard()
        return False
