"""Atomic output files.

Every file mbcompose writes goes through :func:`atomic_write` or an
:class:`OutputSet`: the content is written to a temporary file in the target
folder (``.NAME.mbcPID.XXXX.part``) and renamed over the target only when it
is complete, so a failure never leaves a half-written file.

Guarantees:

* Inputs are never overwritten: the model file, and every file a reader
  opened while the inputs were recorded (:func:`parsers.limits.recording_inputs`:
  included files, meshes).
* An :class:`OutputSet` stages several files of one run and publishes them
  all at the end (``commit``, with SIGINT/SIGTERM held back during the
  renames); if the run fails before, ``discard`` removes every staged file
  and every folder the set created, so a failed run leaves nothing behind.
* A run killed outright (SIGKILL) leaves its ``.part`` files; the next run
  into that folder removes those whose process is gone
  (:func:`remove_leftovers`).
* Folders are created only where the caller allows it (the pipeline's output
  folder); ``convert -o missing/dir/x.urdf`` is an input error.  Failures of
  the file system (read-only folder, a file where a folder should be) are
  input errors naming the output.
"""

from __future__ import annotations

import os
import re
import signal
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from mbcompose.parsers.errors import InputError

_PART = re.compile(r"^\..+\.mbc(\d+)\.[^.]+\.part$")


def _check_not_input(target: Path, inputs: Iterable[Path]) -> None:
    resolved = target.resolve()
    for p in inputs:
        if Path(p).resolve() == resolved:
            raise InputError(f"refusing to overwrite the input file {p}", file=str(target))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _os_error(target: Path, exc: OSError) -> InputError:
    return InputError(f"cannot write output: {exc.strerror or exc}", file=str(target))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers(directory: Path) -> list[Path]:
    """Delete the ``.part`` files a killed run left in ``directory``; the removed paths."""
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        m = _PART.match(name)
        if m and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            try:
                os.unlink(directory / name)
                removed.append(directory / name)
            except OSError:
                continue
    return removed


def prepare_directory(directory: Path, create: bool) -> list[Path]:
    """Make sure ``directory`` exists (creating it if ``create``); the folders created, outermost first.

    InputError when it is missing and may not be created, or cannot be created.
    """
    directory = Path(directory)
    probe = _nearest_existing(directory)
    missing = [directory, *directory.parents][:len(directory.parents) - len(probe.parents)]
    if probe.exists() and not probe.is_dir():
        raise InputError("cannot write output: a file is in the way of the output folder", file=str(probe))
    if missing and not create:
        raise InputError("the output folder does not exist", file=str(directory))
    created = []
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except OSError as exc:
            _remove_folders(created)
            raise _os_error(folder, exc) from None
        created.append(folder)
    remove_leftovers(directory)
    return created


def _nearest_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (the root when none does)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_writable(directory: Path) -> None:
    """Fail now, before any work, when files cannot be written into ``directory`` (it, or the
    nearest folder of it that exists, is a file, or refuses a new file): InputError naming it."""
    probe = _nearest_existing(Path(directory))
    if not probe.is_dir():
        raise InputError("cannot write output: a file is in the way of the output folder", file=str(probe))
    try:
        fd, name = tempfile.mkstemp(prefix=".mbcompose-probe-", dir=probe)
    except OSError as exc:
        raise InputError(f"cannot write output: the folder takes no new file ({exc.strerror or exc})",
                         file=str(probe)) from None
    os.close(fd)
    os.unlink(name)


def _remove_folders(created: list[Path]) -> None:
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:
            return


def _temp_path(target: Path) -> Path:
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.mbc{os.getpid()}.", suffix=".part", dir=target.parent)
        os.close(fd)
        os.chmod(name, 0o666 & ~_umask())
    except OSError as exc:
        raise _os_error(target, exc) from None
    return Path(name)


def _fill(target: Path, tmp: Path, write: Callable[[Path], None]) -> None:
    try:
        write(tmp)
    except OSError as exc:
        raise _os_error(target, exc) from None


def atomic_write(target, write: Callable[[Path], None], inputs: Iterable = (), create_dirs: bool = False) -> Path:
    """Write ``target`` atomically: ``write(tmp_path)`` fills a temporary file, then rename.

    ``inputs`` are paths that must not be overwritten; the target's folder must
    exist unless ``create_dirs`` (then the folders created are removed again on failure).
    """
    target = Path(target)
    _check_not_input(target, [Path(p) for p in inputs])
    created = prepare_directory(target.parent, create_dirs)
    tmp = None
    try:
        tmp = _temp_path(target)
        _fill(target, tmp, write)
        try:
            os.replace(tmp, target)
        except OSError as exc:
            raise _os_error(target, exc) from None
        created = []
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()
        _remove_folders(created)
    return target


def atomic_write_text(target, text: str, inputs: Iterable = (), create_dirs: bool = False) -> Path:
    """Write text atomically (UTF-8)."""
    return atomic_write(target, lambda p: p.write_text(text, encoding="utf-8"), inputs, create_dirs)


class OutputSet:
    """Files of one run, staged in temporary files and published together.

    Use as a context manager: on normal exit the staged files are renamed to
    their targets; on an exception (KeyboardInterrupt and SystemExit from
    SIGTERM included) they are deleted, with the folders the set created, and
    no target is touched.

    inputs : files that must never be written (the model, its includes and meshes); a
        ``set`` is kept by reference, so files recorded while the run reads count too.
    create_dirs : whether missing output folders may be created.
    """

    def __init__(self, inputs: Iterable = (), create_dirs: bool = False):
        self._inputs = inputs if isinstance(inputs, set) else [Path(p) for p in inputs]  # a set stays live
        self._create = create_dirs
        self._staged: list[tuple[Path, Path]] = []
        self._created: list[Path] = []
        self._ready: set[Path] = set()

    def add(self, target, write: Callable[[Path], None]) -> Path:
        """Stage ``target``: ``write(tmp_path)`` fills its temporary file now."""
        target = Path(target)
        _check_not_input(target, self._inputs)
        if any(t == target for t, _ in self._staged):
            raise ValueError(f"output {target} staged twice")
        if target.parent not in self._ready:
            self._created += prepare_directory(target.parent, self._create)
            self._ready.add(target.parent)
        tmp = _temp_path(target)
        self._staged.append((target, tmp))
        _fill(target, tmp, write)
        return target

    def add_text(self, target, text: str) -> Path:
        return self.add(target, lambda p: p.write_text(text, encoding="utf-8"))

    @property
    def targets(self) -> list[Path]:
        return [t for t, _ in self._staged]

    def commit(self) -> list[Path]:
        """Rename every staged file onto its target (SIGINT/SIGTERM wait until all are renamed)."""
        held = {signal.SIGINT, signal.SIGTERM}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            for target, tmp in self._staged:
                try:
                    os.replace(tmp, target)
                except OSError as exc:
                    raise _os_error(target, exc) from None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        done = self.targets
        self._staged = []
        self._created = []
        return done

    def discard(self) -> None:
        for _, tmp in self._staged:
            if tmp.exists():
                tmp.unlink()
        self._staged = []
        _remove_folders(self._created)
        self._created = []

    def __enter__(self) -> "OutputSet":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            try:
                self.commit()
            except BaseException:
                self.discard()
                raise
        else:
            self.discard()
        return False
