"""The run report: one self-contained HTML file and its Markdown twin.

The HTML embeds its pictures as base64 PNG data, so the single file can be
mailed or archived; the Markdown twin links to the PNG files written next to
it.  Contents: the inputs and stage timings, seed 004's Tables 1-3 analogues
(bodies with mass properties, joints, composites, reduced joints, removed
joints with reasons, loops with their classification), the degrees of
freedom, errors and warnings, the pictures (extended and reduced system
graphs, SKO tree, block sparsity) and the simulation with its energy and
loop-closure drift.
"""

from __future__ import annotations

import base64
import html

import numpy as np

from mbcompose.parsers import input_stem

from ..formatting import format_number
from ..inspect import render_markdown, sections, summary_lines
from ..simulation import energy_summary

CAPTIONS = {
    "extended": "Extended system graph (seed 004, Fig. 3)",
    "reduced": "Reduced system graph (seed 004, Fig. 4)",
    "sko": "SKO tree used by the dynamics (loop-closing joints dashed)",
    "sparsity": "Block sparsity of E_A, A and M (seed 000, Figs. 6-7)",
    "simulation": "Simulation: joint coordinates, velocities and energy change relative to the energy scale",
}

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1100px;
color:#222;line-height:1.4;padding:0 1em}
h1{border-bottom:2px solid #3b6ea5;padding-bottom:.2em}h2{color:#3b6ea5;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#eef3f8}td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#666;font-size:.85em}.error{color:#b00020}.warning{color:#a65e00}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}
figcaption{color:#555;font-size:.9em}nav#toc ol{columns:2;font-size:.9em}
"""


def _esc(x) -> str:
    return html.escape(str(x))


def _table_html(header, rows, numeric: bool = False) -> str:
    """A table; with an empty header, a key/value table whose first column is bold.

    numeric : right-align the cells after the first (columns of numbers)."""
    cell = '<td class="num">' if numeric else "<td>"
    body = "".join("<tr>" + "".join((cell if i else "<td>") + f"{_esc(c)}</td>" for i, c in enumerate(r))
                   + "</tr>" for r in rows)
    if not any(header):
        body = "".join("<tr><th>" + _esc(r[0]) + "</th>" + "".join(f"<td>{_esc(c)}</td>" for c in r[1:])
                       + "</tr>" for r in rows)
        return f"<table><tbody>{body}</tbody></table>"
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _stage_rows(result):
    return [[s.name, f"{s.seconds:.3f}"] for s in result.stages]


def _simulation_rows(sim, cfg):
    rows = [["duration [s]", f"{cfg.duration:g}"], ["samples", str(cfg.samples)],
            ["integrator", sim.status],
            ["joint limit contacts", str(sim.limit_contacts)],
            ["initial q", ", ".join(f"{k}={v}" for k, v in cfg.initial_q.items()) or "reference configuration"],
            ["initial v", ", ".join(f"{k}={v}" for k, v in cfg.initial_v.items()) or "at rest"],
            ["joint forces", ", ".join(f"{k}={v}" for k, v in cfg.torques.items()) or "zero"],
            ["total energy at t=0 [J]", f"{sim.energy[0]:.10g}"],
            ["energy", energy_summary(sim)]]
    if sim.closure is not None:
        rows.append(["max loop closure error", f"{float(np.max(sim.closure)):.3e}"])
    return rows


def _figure(name: str, png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    cap = CAPTIONS.get(name, name)
    return (f'<figure id="fig-{_esc(name)}"><img alt="{_esc(cap)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_esc(cap)}</figcaption></figure>")


def _anchor(title: str) -> str:
    return "sec-" + "".join(c if c.isalnum() else "-" for c in title.lower()).strip("-")


def _dynamics_at_reference(composition) -> list[tuple[str, str]]:
    """(title, HTML) of the mass matrix and the bias forces at the reference configuration, at rest."""
    from mbcompose import dynamics

    from mbcompose.dynamics.simulation import coordinate_columns

    model = composition.model
    q, _ = dynamics.consistent_state(model, np.asarray(model.neutral(), float), np.zeros(model.nv))
    M = np.atleast_2d(dynamics.mass_matrix(model, q))
    h = np.asarray(dynamics.bias_forces(model, q, np.zeros(model.nv)))
    independent = list(model.independent) if model.kind == "embedded" else []
    names = independent or list(coordinate_columns(model, rate=True))
    scale = float(np.abs(M).max(initial=0.0))
    rows = [[n] + [format_number(x, scale) for x in row] for n, row in zip(names, M)]
    columns = independent and list(model.coordinate_names) or names
    hs = float(np.abs(h).max(initial=0.0))
    text = (_table_html([""] + names, rows, numeric=True)
            + '<p class="note">kg m^2, kg m or kg by coordinate kind; in the minimal (independent) coordinates '
              "for closed chains</p>"
            + _table_html(["coordinate", "bias force [N m or N]"],
                          [[n, format_number(x, hs)] for n, x in zip(columns, h)], numeric=True)
            + '<p class="note">C(q, 0) + g(q): the joint forces that hold the mechanism still against gravity; '
              "zero at dependent coordinates of closed loops</p>")
    return [("Mass matrix and bias forces at the reference configuration", text)]


def _files_html(files) -> str:
    items = "".join(f'<li><a href="{_esc(f)}">{_esc(f)}</a></li>' for f in files)
    return f"<ul>{items}</ul>"


def _report_sections(composition, result, config, pictures, simulation, scene, files) -> list[tuple[str, str]]:
    an = composition.analysis
    out = [("Inputs", _table_html(["", ""], [["input", result.input], ["pipeline", config.source],
                                             ["lumping", format_number(bool(config.options.lumping))],
                                             ["redundant joints", config.options.redundant_joints],
                                             ["loops", config.options.loops]])),
           ("Summary", "<ul>" + "".join(f"<li>{_esc(s)}</li>" for s in summary_lines(an)) + "</ul>")]
    if scene is not None:
        from .viewer import VIEW_STYLE, view_html

        out.append(("3-D view", f"<style>{VIEW_STYLE}</style>" + view_html(scene)))
    for title, header, rows, note in sections(an):
        text = (_table_html(header, rows) if rows else "") + (f'<p class="note">{_esc(note)}</p>' if note else "")
        out.append((title, text))
    out.append(("Degrees of freedom", f"<p><strong>{an.dof}</strong></p>"))
    if an.issues:
        out.append(("Errors and warnings", "<ul>" + "".join(
            f'<li class="{_esc(i.severity)}">{_esc(i.severity)} ({_esc(i.code)}): {_esc(i.message)}</li>'
            for i in an.issues) + "</ul>"))
    out += _dynamics_at_reference(composition)
    shown = [k for k in pictures if k != "simulation"]
    if shown:
        out.append(("Pictures", "".join(_figure(k, pictures[k]) for k in shown)))
    if simulation is not None:
        out.append(("Simulation", _table_html(["", ""], _simulation_rows(simulation, config.outputs.simulation))
                    + (_figure("simulation", pictures["simulation"]) if "simulation" in pictures else "")))
    out.append(("Stages", _table_html(["stage", "time [s]"], _stage_rows(result))))
    if files:
        out.append(("Files written", _files_html(files)))
    return out


def render_html(composition, result, config, pictures: dict[str, bytes], simulation, scene=None,
                files=()) -> str:
    """The HTML report: a table of contents, then one ``<h2>`` section per topic.

    scene : :class:`composer.report.scene.Scene` for the 3-D view (None: no view).
    files : names of the files the run wrote, relative to the report (linked).
    """
    a = composition.assembly
    secs = _report_sections(composition, result, config, pictures, simulation, scene, files)
    toc = '<nav id="toc"><h2>Contents</h2><ol>' + "".join(
        f'<li><a href="#{_anchor(t)}">{_esc(t)}</a></li>' for t, _ in secs) + "</ol></nav>"
    body = "\n".join([f"<h1>mbcompose report: {_esc(a.name)}</h1>", toc]
                     + [f'<h2 id="{_anchor(t)}">{_esc(t)}</h2>{text}' for t, text in secs])
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>mbcompose report: {_esc(a.name)}</title><style>{STYLE}</style></head>"
            f"<body>\n{body}\n</body></html>\n")


def render_md(composition, result, config, pictures: dict[str, bytes], simulation, stem: str) -> str:
    out = [render_markdown(composition.analysis).rstrip(), "",
           "## Run", "", f"- input: `{result.input}`", f"- pipeline: `{config.source}`", ""]
    out += ["| stage | time [s] |", "|---|---|"] + [f"| {n} | {t} |" for n, t in _stage_rows(result)] + [""]
    if pictures:
        out += ["## Pictures", ""]
        out += [f"![{CAPTIONS.get(k, k)}]({stem}.{k}.png)" for k in pictures if k != "simulation"] + [""]
    if simulation is not None:
        out += ["## Simulation", "", "| | |", "|---|---|"]
        out += [f"| {k} | {v} |" for k, v in _simulation_rows(simulation, config.outputs.simulation)]
        out += ["", f"![{CAPTIONS['simulation']}]({stem}.simulation.png)", ""]
    return "\n".join(out)


def render_report(composition, result, config, pictures, simulation, scene=None, files=()) -> tuple[str, str]:
    """(HTML, Markdown) of one run; see :func:`render_html` for ``scene`` and ``files``."""
    stem = input_stem(result.input)
    return (render_html(composition, result, config, pictures, simulation, scene, files),
            render_md(composition, result, config, pictures, simulation, stem))
