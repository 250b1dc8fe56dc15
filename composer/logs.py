"""How log messages reach the user: one style (``warning: message``) on stderr, repeats grouped.

A message logged many times with different arguments (one per mesh, one per
link) is shown the first time; when the handler closes (at the end of the
command), one line says how many more like it were left out.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter


class GroupingHandler(logging.StreamHandler):
    """A stream handler that writes each message template once and counts its repeats."""

    def __init__(self, stream=None):
        super().__init__(sys.stderr if stream is None else stream)
        self.setFormatter(logging.Formatter("%(message)s"))
        self.counts: Counter = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        key = (record.levelname.lower(), str(record.msg))
        self.counts[key] += 1
        if self.counts[key] == 1:
            self._write(f"{key[0]}: {self.format(record)}")

    def _write(self, line: str) -> None:
        try:
            self.stream.write(line + "\n")
            self.flush()
        except ValueError:      # the stream was closed (end of a test runner's capture)
            pass

    def summary(self) -> list[str]:
        """``level: N more like "template"`` for every repeated message."""
        return [f"{level}: {n - 1} more like \"{template}\" (not shown)"
                for (level, template), n in self.counts.items() if n > 1]

    def close(self) -> None:
        for line in self.summary():
            self._write(line)
        self.counts.clear()
        super().close()
