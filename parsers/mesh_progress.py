"""Progress of a reader's mesh work (loading mesh files and computing their inertia).

Parsers draw no bars and import nothing from ``composer`` (layering ``composer ->
parsers``): a caller installs its ``progress(task, fraction)`` callback for a block with
:func:`reporting_progress` (``composer.progress.ProgressBars`` is one), and the code that
loads a robot's meshes wraps that work in :class:`MeshWork`, which reports one task,
``"meshes"``, whose fraction is the share of the files' bytes done.  It reports only
long work: more than :data:`MANY_MESHES` files or more than :data:`MANY_BYTES` bytes
(one big mesh: :func:`parsers.massprops.load_mesh` reports half of a file's share once
it is parsed, the rest when its inertia is done).  Without a callback nothing happens.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from typing import Callable, Iterable

#: more mesh files than this in one piece of work get a bar
MANY_MESHES = 20
#: so does work on more bytes of mesh files than this (one big mesh and its inertia)
MANY_BYTES = 16 * 2**20

_callback: contextvars.ContextVar[Callable[[str, float], None] | None] = \
    contextvars.ContextVar("mbcompose_progress", default=None)
_work: contextvars.ContextVar["MeshWork | None"] = contextvars.ContextVar("mbcompose_mesh_work", default=None)


@contextlib.contextmanager
def reporting_progress(progress: Callable[[str, float], None] | None):
    """Send the mesh work of the block to ``progress(task, fraction)`` (None: report nothing)."""
    token = _callback.set(progress)
    try:
        yield
    finally:
        _callback.reset(token)


def _size(path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:                   # the reader reports a missing file where it loads it
        return 0


class MeshWork:
    """The mesh files of one piece of work and how much of them is done.

    Parameters
    ----------
    files : the mesh files (paths; repeats count once) the work loads.
    task : the name of the bar.

    Use as a context manager around the work; call :meth:`finished` after each
    file's work (load and inertia).  The bar is removed when the block ends.
    """

    def __init__(self, files: Iterable, task: str = "meshes"):
        self.sizes = {str(f): _size(f) for f in files}
        self.total = sum(self.sizes.values())
        self.task = task
        long = len(self.sizes) > MANY_MESHES or self.total > MANY_BYTES
        self.report = _callback.get() if long and self.total > 0 else None
        self.done: dict[str, float] = {}
        self._token = None

    def __enter__(self) -> "MeshWork":
        self._token = _work.set(self)
        return self

    def __exit__(self, *exc) -> bool:
        _work.reset(self._token)
        if self.report is not None:
            self.report(self.task, 1.0)
        return False

    def finished(self, *files) -> None:
        """The work on ``files`` is complete."""
        for f in files:
            self.progressed(f, 1.0)

    def progressed(self, file, share: float) -> None:
        """``share`` (0..1) of the work on ``file`` is done (it only moves forward)."""
        key = str(file)
        if self.report is None or key not in self.sizes or self.done.get(key, 0.0) >= share:
            return
        self.done[key] = share
        bytes_done = sum(self.sizes[k] * s for k, s in self.done.items())
        self.report(self.task, min(bytes_done / self.total, 0.999))


def file_progressed(path, share: float) -> None:
    """Tell the current :class:`MeshWork`, if any, that ``share`` of ``path``'s work is done."""
    work = _work.get()
    if work is not None:
        work.progressed(path, share)
