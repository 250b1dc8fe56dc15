"""Where a value of an assembly came from (:class:`Source`)."""

from __future__ import annotations


class Source:
    """Where a value came from: ``file:line`` or a note (``computed from ...``).

    file : str or None; line : 1-based int or None; note : str.  Immutable; equal when
    file, line and note are; hashed, pickled and copied as those three.
    """

    __slots__ = ("_file", "_line", "_note")

    def __init__(self, file: str | None = None, line: int | None = None, note: str = ""):
        self._file, self._line, self._note = file, line, note

    @property
    def file(self) -> str | None:
        return self._file

    @property
    def line(self) -> int | None:
        return self._line

    @property
    def note(self) -> str:
        return self._note

    def __eq__(self, other):
        if not isinstance(other, Source):
            return NotImplemented
        return (self._file, self._line, self._note) == (other._file, other._line, other._note)

    def __hash__(self):
        return hash((self._file, self._line, self._note))

    def __reduce__(self):
        return Source, (self._file, self._line, self._note)

    def __repr__(self) -> str:
        return f"Source(file={self._file!r}, line={self._line!r}, note={self._note!r})"

    def __str__(self) -> str:
        where = ""
        if self._file:
            where = f"{self._file}:{self._line}" if self._line is not None else str(self._file)
        if self._note:
            return f"{self._note} ({where})" if where else self._note
        return where or "<unknown>"
