"""How log messages reach the user: one style (``warning: message``) on stderr, repeats grouped.

A warning or error logged many times with different arguments (one per mesh, one
per link) is shown the first time; when the handler closes (at the end of the
command), one line says how many more like it were left out.  The same message
again (word for word: two stages noticing one fact) is dropped without a count.
Info and debug lines (``-v``: stage timings, progress) are all shown.
"""

from __future__ import annotations

import logging
import re
import sys
from collections import Counter


class GroupingHandler(logging.StreamHandler):
    """A stream handler that writes each message template once and counts its repeats."""

    def __init__(self, stream=None):
        super().__init__(sys.stderr if stream is None else stream)
        self.setFormatter(logging.Formatter("%(message)s"))
        self.counts: Counter = Counter()
        self.first: dict = {}       # (level, template) -> the first message written
        self.seen: set = set()      # (level, message) of every message counted

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING:      # -v asked for every progress and debugging line
            self._write(f"{record.levelname.lower()}: {self.format(record)}")
            return
        message = self.format(record)
        key = (record.levelname.lower(), _template(record, message))
        if (key[0], message) in self.seen:
            return
        self.seen.add((key[0], message))
        self.counts[key] += 1
        if self.counts[key] == 1:
            self.first[key] = message
            self._write(f"{key[0]}: {self.first[key]}")

    def _write(self, line: str) -> None:
        try:
            self.stream.write(line + "\n")
            self.flush()
        except ValueError:      # the stream was closed (end of a test runner's capture)
            pass

    def summary(self) -> list[str]:
        """``level: N more like "first message"`` for every repeated message."""
        return [f"{key[0]}: {n - 1} more like \"{self.first[key]}\" (not shown)"
                for key, n in self.counts.items() if n > 1]

    def close(self) -> None:
        for line in self.summary():
            self._write(line)
        self.counts.clear()
        self.first.clear()
        self.seen.clear()
        super().close()


#: a %-format placeholder of a logging template
_PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[diouxXeEfFgGcrsa%]")


def _template(record: logging.LogRecord, message: str) -> str:
    """What repeats of ``record`` have in common: its template, or the message itself when the template is
    nothing but placeholders (``log.warning("%s", text)``: different texts are different warnings)."""
    template = str(record.msg)
    return template if _PLACEHOLDER.sub("", template).strip(" :;,.-") else message


def current_levels() -> tuple[int, int]:
    """(the root logger's level, mbcompose's), for :func:`log_like_the_parent` in worker processes."""
    return logging.getLogger().level, logging.getLogger("mbcompose").level


def log_like_the_parent(levels: tuple[int, int]) -> None:
    """A worker process's logging as the command's: the ``level: message`` style on stderr at the
    parent's levels (a spawned worker starts with none, and Python's last-resort handler would
    print bare messages)."""
    root = logging.getLogger()
    if not any(isinstance(h, GroupingHandler) for h in root.handlers):
        root.addHandler(GroupingHandler(sys.stderr))
    root.setLevel(levels[0])
    logging.getLogger("mbcompose").setLevel(levels[1])
