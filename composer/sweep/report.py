"""The sweep page of the report: the result table and each output against each parameter.

One self-contained HTML file (pictures embedded as base64 PNG, the style of
:mod:`composer.report.html`): the sweep's settings, counts of variants done and
failed, the failed variants with their errors, one figure per recorded output
with a panel per parameter (a point per successful variant; parameters that
are not numbers are placed at evenly spaced ticks), and the full table.
"""

from __future__ import annotations

import base64

import numpy as np

from ..report.html import STYLE, _esc
from ..report.plots import png_bytes
from .table import BASE_COLUMNS

MAX_FIGURES = 60


def _numeric(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def output_columns(records, parameters) -> list[str]:
    """Recorded numeric output columns (not the base or parameter columns)."""
    if not records:
        return []
    skip = set(BASE_COLUMNS) | set(parameters)
    ok = [r for r in records if r["status"] == "ok"]
    return [c for c in records[0] if c not in skip and ok
            and _numeric([r[c] for r in ok if r[c] is not None])]


def output_figure(records, output: str, parameters: list[str]):
    """Figure: ``output`` against each parameter (one panel each), successful variants only."""
    import matplotlib.pyplot as plt

    ok = [r for r in records if r["status"] == "ok" and r.get(output) is not None]
    fig, axes = plt.subplots(1, len(parameters), figsize=(4.2 * len(parameters), 3.2), squeeze=False,
                             constrained_layout=True)
    y = np.array([r[output] for r in ok], dtype=float)
    for ax, p in zip(axes[0], parameters):
        xs = [r[p] for r in ok]
        if _numeric(xs):
            ax.plot(np.array(xs, dtype=float), y, "o", ms=3.5, color="#3b6ea5")
        else:
            labels = sorted({str(x) for x in xs})
            ax.plot([labels.index(str(x)) for x in xs], y, "o", ms=3.5, color="#3b6ea5")
            ax.set_xticks(range(len(labels)), labels)
        ax.set_xlabel(p)
        ax.set_ylabel(output)
        ax.grid(alpha=0.3)
    return fig


def _cell(value) -> str:
    if isinstance(value, float):
        return f'<td class="num">{value:.6g}</td>'
    return f"<td>{_esc('' if value is None else value)}</td>"


def _table(records, columns) -> str:
    head = "".join(f"<th>{_esc(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(r[c]) for c in columns) + "</tr>" for r in records)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figure_html(fig, caption: str) -> str:
    data = base64.b64encode(png_bytes(fig)).decode("ascii")
    return (f'<figure><img alt="{_esc(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_esc(caption)}</figcaption></figure>")


def _settings_rows(config, records) -> list[tuple[str, str]]:
    sweep = config.sweep
    failed = sum(r["status"] != "ok" for r in records)
    rows = [("input", str(config.inputs[0])), ("pipeline", str(config.source)),
            ("combination", sweep.combine), ("variants", str(len(records))),
            ("succeeded", str(len(records) - failed)), ("failed", str(failed)),
            ("recorded", ", ".join(sweep.record))]
    for p in sweep.parameters:
        paths = ", ".join(q.text for q in p.paths)
        shown = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in p.values[:12])
        more = f", ... ({len(p.values)} values)" if len(p.values) > 12 else ""
        rows.append((f"parameter {p.name}", f"{paths}: {shown}{more}"))
    return rows


def render_sweep_html(config, records: list[dict]) -> str:
    """The sweep page (see module docstring); ``records`` are typed rows in variant order."""
    import matplotlib.pyplot as plt

    parameters = [p.name for p in config.sweep.parameters]
    settings = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in _settings_rows(config, records))
    parts = [f"<h1>mbcompose sweep: {_esc(config.source.stem)}</h1>",
             f"<h2>Settings</h2><table><tbody>{settings}</tbody></table>"]
    failed = [r for r in records if r["status"] != "ok"]
    if failed:
        parts.append("<h2>Failed variants</h2>" + _table(failed, ["key", *parameters, "error"]))
    outputs = output_columns(records, parameters)
    if outputs:
        parts.append("<h2>Outputs against parameters</h2>")
        for name in outputs[:MAX_FIGURES]:
            fig = output_figure(records, name, parameters)
            parts.append(_figure_html(fig, f"{name} against {', '.join(parameters)}"))
            plt.close(fig)
        if len(outputs) > MAX_FIGURES:
            parts.append(f'<p class="note">{len(outputs) - MAX_FIGURES} more outputs are in the table only.</p>')
    columns = [c for c in (records[0] if records else []) if c not in ("key",)]
    parts.append("<h2>Table</h2>" + _table(records, columns))
    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>mbcompose sweep: {_esc(config.source.stem)}</title><style>{STYLE}</style></head>"
            f"<body>\n{body}\n</body></html>\n")
