"""Where a value of an assembly came from (:class:`Source`)."""

from __future__ import annotations


class Source:
    """Where a value came from: ``file:line`` or a note (``computed from ...``).

    ``line`` may be given as a function of no argument that finds it (a reader's
    :func:`~parsers.xmltree.line_refs`): it is called the first time ``line`` is read,
    so that a file read without error never maps its lines.  Immutable; equal when file,
    line and note are; pickled and copied with the line found.
    """

    __slots__ = ("_file", "_line", "_note")

    def __init__(self, file: str | None = None, line=None, note: str = ""):
        self._file, self._line, self._note = file, line, note

    @property
    def file(self) -> str | None:
        return self._file

    @property
    def line(self) -> int | None:
        line = self._line
        if callable(line):
            line = self._line = line()
        return line

    @property
    def note(self) -> str:
        return self._note

    def __eq__(self, other):
        if not isinstance(other, Source):
            return NotImplemented
        return (self.file, self.line, self.note) == (other.file, other.line, other.note)

    def __hash__(self):
        return hash((self.file, self.line, self.note))

    def __reduce__(self):
        return Source, (self.file, self.line, self.note)

    def __repr__(self) -> str:
        return f"Source(file={self.file!r}, line={self.line!r}, note={self.note!r})"

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}" if self.line is not None else str(self.file)
        if self.note:
            return f"{self.note} ({where})" if where else self.note
        return where or "<unknown>"
