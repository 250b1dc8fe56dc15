"""Design sweeps: many variants of one input, one task per variant, on an executor.

``run_sweep(config)`` expands the config's ``sweep:`` section into variants
(:mod:`composer.sweep.config`), skips those the result table already holds
(same parameters, same input, same settings: :func:`variant_key`), sends the
others to the executor (:mod:`composer.sweep.executors`) as
:class:`~composer.sweep.task.VariantTask` s, and appends each row to the table
(:mod:`composer.sweep.table`) the moment it arrives.  A failed variant is a row
with its one-line error; the sweep goes on.  A progress bar (tqdm, on stderr,
only when stderr is a terminal) shows done and failed counts and the time
left.  At the end the table is also written as Parquet (when pyarrow is
installed) and, if ``outputs.report`` is on, as an HTML sweep page
(:mod:`composer.sweep.report`).

Output files, in ``outputs.directory``: ``STEM.sweep.csv``,
``STEM.sweep.parquet``, ``STEM.sweep.html`` (STEM: the pipeline file's stem).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .executors import make_executor
from .table import SweepTable
from .task import VariantTask, one_line, run_variant

log = logging.getLogger(__name__)


@dataclass
class SweepResult:
    """What a sweep run did.

    table : the CSV path.  keys : every variant's key, in variant order.
    computed : keys computed by this run.  skipped : keys already in the table.
    failed : keys of failed rows of this run.  outputs : files written.
    """

    table: Path
    keys: list[str]
    computed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    outputs: list[Path] = field(default_factory=list)


def _mesh_files(config) -> list[Path]:
    from .task import input_document

    path = config.inputs[0]
    if path.suffix.lower() not in (".yaml", ".yml"):
        return []
    bodies = input_document(path).plain().get("bodies") or []
    meshes = {shape["mesh"] for body in bodies if isinstance(body, dict)
              for shape in body.get("geometry") or [] if isinstance(shape, dict) and "mesh" in shape}
    return sorted(path.parent / m for m in meshes)


def input_hash(config) -> str:
    """sha256 of the input file and of the mesh files a YAML input names."""
    h = hashlib.sha256()
    for p in [config.inputs[0], *_mesh_files(config)]:
        h.update(str(Path(p).name).encode())
        h.update(Path(p).read_bytes() if Path(p).exists() else b"missing")
    return h.hexdigest()


def settings_hash(config) -> str:
    """sha256 of everything besides the input that a row depends on: options,
    the parameters' paths, the recorded outputs and the simulation settings."""
    sweep = config.sweep
    text = repr((config.options, [(p.name, [q.text for q in p.paths]) for p in sweep.parameters],
                 sweep.record, config.outputs.simulation))
    return hashlib.sha256(text.encode()).hexdigest()


def variant_key(values: dict, input_digest: str, settings_digest: str) -> str:
    """The key of a variant's row: its parameter values, the input's hash and the settings' hash."""
    doc = json.dumps({"values": {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()},
                      "input": input_digest, "settings": settings_digest}, sort_keys=True)
    return hashlib.sha256(doc.encode()).hexdigest()[:20]


def table_path(config) -> Path:
    return config.outputs.directory / f"{config.source.stem}.sweep.csv"


def progress_bar(total: int, initial: int, what: str = "variants"):
    """A tqdm bar on stderr, disabled unless stderr is a terminal."""
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit=what[:-1], desc=what, file=sys.stderr,
                disable=not sys.stderr.isatty(), dynamic_ncols=True)


def run_sweep(config, executor=None, on_row: Callable[[dict], None] | None = None) -> SweepResult:
    """Run the config's sweep (see module docstring).

    executor : an executor from :mod:`composer.sweep.executors`; None: the one the
        config's ``executor:`` section names.
    on_row : called with each new row after it is on disk.  An exception
        raised by it (or a KeyboardInterrupt) stops the sweep; finished rows stay.
    """
    sweep = config.sweep
    variants = sweep.variants()
    digest_in, digest_set = input_hash(config), settings_hash(config)
    keys = [variant_key(v, digest_in, digest_set) for v in variants]
    table = SweepTable(table_path(config), [p.name for p in sweep.parameters], (config.source, *config.inputs))
    result = SweepResult(table.path, keys)
    tasks, seen = [], set()
    for key, values in zip(keys, variants):
        if table.done(key) or key in seen:
            result.skipped.append(key)
        else:
            tasks.append(VariantTask(key, values, config))
        seen.add(key)
    log.info("sweep: %d variants, %d done before, %d to compute", len(keys), len(result.skipped), len(tasks))
    if tasks:
        with executor or make_executor(config.executor) as ex:
            _compute(tasks, ex, table, result, on_row)
    result.outputs = [table.path] + _finish(config, table, keys)
    return result


def _compute(tasks, executor, table: SweepTable, result: SweepResult, on_row) -> None:
    values = {t.key: t.values for t in tasks}
    bar = progress_bar(len(result.keys), len(result.skipped))
    try:
        for task, row, exc in executor.map_unordered(run_variant, tasks):
            if exc is not None:
                row = {"key": task.key, "status": "failed", "error": one_line(exc), "seconds": ""}
            table.append(_ordered(row, values[task.key]))
            result.computed.append(task.key)
            if row["status"] != "ok":
                result.failed.append(task.key)
                log.info("variant %s failed: %s", task.key, row["error"])
            bar.update(1)
            bar.set_postfix(done=bar.n, failed=len(result.failed), refresh=False)
            if on_row is not None:
                on_row(row)
    finally:
        bar.close()


def _ordered(row: dict, values: dict) -> dict:
    """The row with the parameter values after the base columns, outputs last."""
    base = {k: row[k] for k in ("key", "status", "error", "seconds")}
    return {**base, **values, **{k: v for k, v in row.items() if k not in base}}


def _finish(config, table: SweepTable, keys: list[str]) -> list[Path]:
    written = []
    parquet = table.path.with_suffix(".parquet")
    if table.write_parquet(parquet, keys):
        written.append(parquet)
    if config.outputs.report:
        from ..outputs import atomic_write_text
        from .report import render_sweep_html

        page = table.path.with_suffix(".html")
        atomic_write_text(page, render_sweep_html(config, table.records(keys)), table.inputs, create_dirs=True)
        written.append(page)
    return written
