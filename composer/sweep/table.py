"""The result table of a sweep: one CSV row per variant, written as it completes.

Columns: ``key`` (the variant's hash, see :func:`composer.sweep.run.variant_key`),
``status`` (``ok`` or ``failed``), ``error`` (the one-line error of a failed
variant), ``seconds`` (its compute time), one column per parameter, then the
recorded outputs in the order they first appear.  Each row is appended and
flushed as soon as its variant completes, so a stopped sweep keeps every
finished row; when a row brings a column the header lacks (a variant with
more degrees of freedom), the file is rewritten atomically with the wider
header.  Opening an existing table keeps its complete rows (a line cut short
by a crash is dropped) so that a rerun can skip them.

With pyarrow installed, :meth:`SweepTable.write_parquet` writes the same table
as Parquet when the sweep ends (Parquet files cannot be appended row by row).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np

from ..outputs import atomic_write

BASE_COLUMNS = ("key", "status", "error", "seconds")
STATUSES = ("ok", "failed")


def plain(value):
    """``value`` with numpy scalars and arrays made Python numbers and lists (``repr`` of a
    numpy 2 float is ``np.float64(...)``, which no CSV reader takes for a number)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    return value


def cell_text(value) -> str:
    """A value as CSV text: numbers exactly (``repr`` of the Python float), lists and tuples as JSON."""
    value = plain(value)
    if isinstance(value, list):
        return json.dumps(value)
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value).lower()
    return repr(value) if isinstance(value, float) else str(value)


def typed(text: str):
    """CSV text back to a number where it is one (else the text; '' is None)."""
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


class SweepTable:
    """A sweep's CSV table (see module docstring).

    path : the CSV file (its folder is created if missing).  parameters :
    parameter column names, in order.  inputs : files that must never be
    overwritten (the sweep's input and pipeline file).
    """

    def __init__(self, path, parameters, inputs=()):
        self.path = Path(path)
        self.inputs = tuple(inputs)
        self.columns = list(BASE_COLUMNS) + [p for p in parameters if p not in BASE_COLUMNS]
        self.rows: dict[str, dict[str, str]] = {}
        if self.path.exists():
            self._load()
        self._rewrite()

    def _load(self) -> None:
        with open(self.path, encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header or tuple(header[:len(BASE_COLUMNS)]) != BASE_COLUMNS:
                return
            for record in reader:
                if len(record) != len(header) or record[1] not in STATUSES or not record[0]:
                    continue  # a line cut short by an interrupted write
                self.rows[record[0]] = dict(zip(header, record))
        self.columns += [c for c in header if c not in self.columns]

    def _rewrite(self) -> None:
        def write(tmp: Path) -> None:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                writer = csv.writer(fh)
                writer.writerow(self.columns)
                for row in self.rows.values():
                    writer.writerow([row.get(c, "") for c in self.columns])

        atomic_write(self.path, write, self.inputs, create_dirs=True)

    def done(self, key: str) -> bool:
        """Whether the variant ``key`` needs no new computation: it succeeded, or
        failed on bad input (which would fail the same way again).  Internal
        errors (a worker lost) are computed again."""
        row = self.rows.get(key)
        return row is not None and (row["status"] == "ok" or row["error"].startswith("error:"))

    def append(self, row: dict) -> None:
        """Add one variant's row (values of any type) and put it on disk now."""
        text = {k: cell_text(v) for k, v in row.items()}
        self.rows[text["key"]] = text
        new = [c for c in text if c not in self.columns]
        if new:
            self.columns += new
            self._rewrite()
            return
        with open(self.path, "a", encoding="utf-8", newline="") as fh:
            csv.writer(fh).writerow([text.get(c, "") for c in self.columns])
            fh.flush()

    def records(self, keys=None) -> list[dict]:
        """Rows as typed dicts (numbers as numbers), in ``keys`` order when given."""
        chosen = self.rows.values() if keys is None else [self.rows[k] for k in keys if k in self.rows]
        text = ("key", "status", "error")
        return [{c: row.get(c, "") if c in text else typed(row.get(c, "")) for c in self.columns}
                for row in chosen]

    def write_parquet(self, path, keys=None) -> bool:
        """Write the table as Parquet if pyarrow is installed; returns whether it did."""
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            return False
        records = self.records(keys)
        columns = {}
        for c in self.columns:
            values = [r[c] for r in records]
            numeric = all(v is None or isinstance(v, (int, float)) for v in values)
            columns[c] = ([math.nan if v is None else float(v) for v in values] if numeric and c != "key"
                          else [None if v is None else str(v) for v in values])
        atomic_write(path, lambda tmp: pq.write_table(pa.table(columns), tmp), self.inputs, create_dirs=True)
        return True
