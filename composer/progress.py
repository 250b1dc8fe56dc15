"""Progress bars for long tasks: tqdm, on stderr, only when stderr is a terminal.

:class:`ProgressBars` is the ``progress(task, fraction)`` callback the pipeline
and the simulation accept (:func:`mesh_bars` installs one for the mesh work of
readers, :mod:`parsers.mesh_progress`).  Each task gets one bar that only moves forward (an
adaptive integrator evaluates trial times before and after the last accepted
one, so the raw fraction is not monotone) and disappears when the task is done,
so no stale bar stands in front of the result line.
"""

from __future__ import annotations

import contextlib
import sys

#: resolution of a bar: fractions are shown in steps of 1/STEPS
STEPS = 1000


class ProgressBars:
    """``progress(task, fraction)``: one tqdm bar per task name.

    Parameters
    ----------
    stream : file object, default ``sys.stderr``; nothing is drawn unless
        ``stream.isatty()`` and ``enabled``.
    enabled : False for ``--quiet``.
    mininterval : seconds between redraws (tqdm's throttle).
    """

    def __init__(self, stream=None, enabled: bool = True, mininterval: float = 0.1):
        self.mininterval = mininterval
        self.stream = sys.stderr if stream is None else stream
        self.active = bool(enabled) and bool(getattr(self.stream, "isatty", lambda: False)())
        self._bars: dict = {}

    def __call__(self, task: str, fraction: float) -> None:
        if not self.active:
            return
        bar = self._bars.get(task)
        if bar is None:
            from tqdm import tqdm

            bar = tqdm(total=STEPS, desc=task, file=self.stream, leave=False, unit="", mininterval=self.mininterval,
                       bar_format="{desc:>10} {percentage:3.0f}%|{bar}| {elapsed}<{remaining}")
            self._bars[task] = bar
        n = min(STEPS, int(STEPS * max(0.0, float(fraction))))
        if n > bar.n:
            bar.update(n - bar.n)
        if n >= STEPS:
            self.finish(task)

    def finish(self, task: str) -> None:
        """Remove the bar of ``task`` (if any) from the terminal."""
        bar = self._bars.pop(task, None)
        if bar is not None:
            bar.close()

    def close(self) -> None:
        """Remove every bar still shown (a task that stopped early)."""
        for task in list(self._bars):
            self.finish(task)

    def __enter__(self) -> "ProgressBars":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


@contextlib.contextmanager
def mesh_bars(enabled: bool = True, stream=None):
    """Bars over the mesh work of the readers called in the block, when it is long
    (:mod:`parsers.mesh_progress`; drawn only on a terminal, as :class:`ProgressBars`)."""
    from mbcompose.parsers.mesh_progress import reporting_progress

    with ProgressBars(stream, enabled) as bars, reporting_progress(bars):
        yield bars
