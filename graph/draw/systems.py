"""Pictures of system graphs like seed 004's Figs. 3 (extended) and 4 (reduced).

Layout (schematic, not geometric: the two attachment nodes of a joint sit at
the same point in space and would overlap):

* ``ground`` at the centre; the centres of mass on a circle, in depth-first
  order of the body/joint graph from ground (neighbours sorted by name, those
  that close a cycle back to visited bodies last), so that most joints join
  neighbours on the circle.  Above :data:`LAYERED_ABOVE` bodies (large robots)
  the circle would overlap its labels: the centres of mass are placed in layers
  instead, ground at the top, each body one layer below the body it hangs from
  (:func:`layered_positions`);
* body elements are spokes from ground to each centre of mass, with the
  gravity element curved beside its body element;
* a joint between bodies u and v runs ``com:u -> att -> att -> com:v`` along the
  chord between them (arm, joint, arm), bowed outwards by an amount that
  differs for each joint between the same pair; the driver of an actuated
  joint is curved beside the joint element.

Styles per element kind (legend in the picture): body black solid, gravity
green dashed, arm grey solid, joint orange thick (dotted for fixed joints),
driver purple dash-dot.  Every element is labelled with its number ``eN``;
joint elements also carry the joint's name, centres of mass the body's.

matplotlib is used through its object API (``matplotlib.figure.Figure``), never
``pyplot``, so drawing has no global state and needs no display.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch

from mbcompose.dynamics.tolerances import DRAWING_ZERO
from mbcompose.parsers.assembly import GROUND

from ..system_graph import SystemGraph

STYLES = {
    "body": dict(color="black", lw=1.4, ls="-", rad=0.0),
    "gravity": dict(color="tab:green", lw=1.2, ls="--", rad=0.12),
    "arm": dict(color="0.45", lw=1.1, ls="-", rad=0.0),
    "joint": dict(color="tab:orange", lw=2.6, ls="-", rad=0.0),
    "driver": dict(color="tab:purple", lw=1.4, ls="-.", rad=0.45),
    "force": dict(color="tab:blue", lw=1.2, ls=(0, (4, 1, 1, 1)), rad=-0.45),
    "load": dict(color="tab:red", lw=1.2, ls="--", rad=0.2),
    "source": dict(color="tab:olive", lw=1.4, ls="-", rad=0.25),
    "electric": dict(color="tab:cyan", lw=1.4, ls="-", rad=0.25),
}


def _body_order(sg: SystemGraph) -> list[str]:
    g = _body_graph(sg)
    coms = [n for n in sg.nodes if n.startswith("com:")]
    order: list[str] = []
    seen = {GROUND}
    def dfs(n):
        # neighbours that close a cycle back to visited bodies go last, next to where it started
        def key(m):
            return (any(k in seen and k != n for k in g[m]), m)
        for m in sorted(g[n], key=key):
            if m not in seen:
                seen.add(m)
                order.append(m)
                dfs(m)
    dfs(GROUND)
    for n in sorted(coms):
        if n not in seen:
            seen.add(n)
            order.append(n)
            dfs(n)
    return order


#: above this many bodies the centres of mass are placed in layers (a tree from ground at the top)
LAYERED_ABOVE = 12


def _body_graph(sg: SystemGraph) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from([GROUND] + [n for n in sg.nodes if n.startswith("com:")])
    ends: dict[str, list[str]] = {}
    for e in sg.elements:
        if e.kind == "arm":
            ends.setdefault(e.joint, []).append(e.tail)
    g.add_edges_from(tuple(v) for v in ends.values() if len(v) == 2 and v[0] != v[1])
    return g


def layered_positions(sg: SystemGraph, dx: float = 0.9, dy: float = 0.8) -> dict[str, np.ndarray]:
    """Centres of mass in layers by their joint distance from ground (ground at the top), each
    parent above the middle of its children in a breadth-first tree; leaves ``dx`` apart."""
    g = _body_graph(sg)
    tree = nx.bfs_tree(g, GROUND)
    for n in sorted(g.nodes):                      # bodies not connected to ground hang from it
        if n not in tree:
            tree.add_edge(GROUND, n)
            tree.add_edges_from(nx.bfs_edges(g, n))
    depth = nx.shortest_path_length(tree, GROUND)
    pos: dict[str, np.ndarray] = {}
    next_x = [0.0]

    def place(n):
        kids = sorted(tree.successors(n))
        for k in kids:
            place(k)
        x = np.mean([pos[k][0] for k in kids]) if kids else next_x[0]
        if not kids:
            next_x[0] += dx
        pos[n] = np.array([x, -dy * depth[n]])
    place(GROUND)
    return pos


def _circle_positions(sg: SystemGraph) -> dict[str, np.ndarray]:
    order = _body_order(sg)
    n = max(len(order), 1)
    pos: dict[str, np.ndarray] = {GROUND: np.zeros(2)}
    for k, c in enumerate(order):
        t = np.pi / 2 - 2 * np.pi * k / n
        pos[c] = np.array([np.cos(t), np.sin(t)])
    return pos


def layout(sg: SystemGraph) -> dict[str, np.ndarray]:
    """Node -> (2,) position of the schematic layout (see module docstring)."""
    n_com = sum(1 for n in sg.nodes if n.startswith("com:"))
    pos = layered_positions(sg) if n_com > LAYERED_ABOVE else _circle_positions(sg)
    joints: dict[str, dict[str, str]] = {}
    for e in sg.elements:
        if e.kind == "joint":
            joints[e.subject] = {"tail": e.tail, "head": e.head}
    arm_from = {e.head: e.tail for e in sg.elements if e.kind == "arm"}
    pair_count: dict[tuple[str, str], int] = {}
    for name in sorted(joints):
        a_ref, a_sec = joints[name]["tail"], joints[name]["head"]
        u, v = arm_from[a_ref], arm_from[a_sec]
        key = tuple(sorted((u, v)))
        k = pair_count.get(key, 0)
        pair_count[key] = k + 1
        pu, pv = pos[u], pos[v]
        mid = 0.5 * (pu + pv)
        d = pv - pu
        normal = np.array([-d[1], d[0]])
        if np.linalg.norm(normal) < DRAWING_ZERO:
            normal = np.array([1.0, 0.0])
        normal /= np.linalg.norm(normal)
        if GROUND not in (u, v) and normal @ mid < 0:
            normal = -normal
        bow = (0.12 + 0.16 * k) * (1 if k % 2 == 0 else -1) * min(1.0, np.linalg.norm(d) + 0.3)
        if GROUND in (u, v):
            body = v if u == GROUND else u
            side = _free_side(pos, body, joints, arm_from)
            normal = side * np.array([-pos[body][1], pos[body][0]]) / max(np.linalg.norm(pos[body]), DRAWING_ZERO)
            normal *= 1 if u == GROUND else -1
            bow = 0.2 * (k // 2 + 1) * (1 if k % 2 == 0 else -1)
        f1, f2 = (1 / 3, 2 / 3) if GROUND not in (u, v) else (0.45, 0.75) if u == GROUND else (0.25, 0.55)
        pos[a_ref] = pu + f1 * d + bow * normal
        pos[a_sec] = pu + f2 * d + bow * normal
    _place_force_points(pos, arm_from)
    electric = [n for n in sg.nodes if n.startswith("el:")]
    low = min((p[1] for p in pos.values()), default=0.0)
    for k, n in enumerate(electric):
        pos[n] = np.array([0.7 * (k - (len(electric) - 1) / 2), low - 0.7])
    return pos


def _place_force_points(pos, arm_from) -> None:
    """Attachment points of force elements between body points and of loads (no joint places them):
    around their body's centre of mass, one eighth of a turn apart."""
    k = 0
    for att, com in arm_from.items():
        if att in pos:
            continue
        out = pos[com] / max(np.linalg.norm(pos[com]), DRAWING_ZERO) if com != GROUND else np.array([0.0, -1.0])
        angle = 0.8 + 0.785 * k
        c, s = np.cos(angle), np.sin(angle)
        pos[att] = pos[com] + 0.3 * np.array([c * out[0] - s * out[1], s * out[0] + c * out[1]])
        k += 1


def _free_side(pos, body, joints, arm_from) -> int:
    """+1 (counter-clockwise) or -1: the side of body's spoke with fewer joints to other bodies."""
    count = {1: 0, -1: 0}
    pb = pos[body]
    for j in joints.values():
        u, v = arm_from[j["tail"]], arm_from[j["head"]]
        if body in (u, v) and GROUND not in (u, v) and u != v:
            other = v if u == body else u
            d = pos[other] - pb
            count[1 if pb[0] * d[1] - pb[1] * d[0] > 0 else -1] += 1
    return 1 if count[1] <= count[-1] else -1


def _label_point(p1, p2, rad):
    d = p2 - p1
    return 0.5 * (p1 + p2) + 0.5 * rad * np.array([d[1], -d[0]])


def _draw_nodes(ax, sg: SystemGraph, pos, font: int) -> None:
    """Ground (black square), centres of mass (blue, named) and attachment points (white)."""
    for n in sg.nodes:
        p = pos[n]
        if n == GROUND:
            ax.scatter([p[0]], [p[1]], s=260, marker="s", color="black", zorder=4)
            ax.annotate("ground", p, xytext=(0, -16), textcoords="offset points", ha="center", va="top",
                        fontsize=font + 1, weight="bold", zorder=6)
        elif n.startswith("com:"):
            ax.scatter([p[0]], [p[1]], s=170, color="tab:blue", edgecolor="black", zorder=4)
            out = p / max(np.linalg.norm(p), DRAWING_ZERO)
            ax.annotate(n[4:], p, xytext=tuple(16 * out), textcoords="offset points",
                        ha="left" if out[0] > 0.2 else "right" if out[0] < -0.2 else "center",
                        va="bottom" if out[1] > 0.2 else "top" if out[1] < -0.2 else "center",
                        fontsize=font + 1, weight="bold", color="tab:blue", zorder=6)
        else:
            ax.scatter([p[0]], [p[1]], s=36, color="white", edgecolor="black", zorder=4)


def _draw_elements(ax, sg: SystemGraph, pos, font: int) -> None:
    """One arrow per element, styled by kind (:data:`STYLES`), labelled ``eN`` (joints: and their name)."""
    for e in sg.elements:
        st = STYLES[e.kind]
        p1, p2 = pos[e.tail], pos[e.head]
        ls = ":" if (e.kind == "joint" and e.joint_type == "fixed") else st["ls"]
        arrow = FancyArrowPatch(tuple(p1), tuple(p2), connectionstyle=f"arc3,rad={st['rad']}",
                                arrowstyle="-|>", mutation_scale=11, color=st["color"], lw=st["lw"],
                                linestyle=ls, shrinkA=7, shrinkB=7, zorder=2)
        ax.add_patch(arrow)
        lp = _label_point(p1, p2, st["rad"])
        if e.kind == "body":
            lp = p1 + 0.55 * (p2 - p1)
        if e.kind == "joint":
            d = p2 - p1
            nrm = np.array([-d[1], d[0]]) / max(np.linalg.norm(d), DRAWING_ZERO)
            if nrm @ lp < 0:
                nrm = -nrm
            lp = lp + 0.07 * nrm
        text = e.name
        if e.kind == "joint":
            text = f"{e.name} {e.subject}" + (" (fixed)" if e.joint_type == "fixed" else f" ({e.joint_type})")
        elif e.kind in ("force", "load", "source", "electric"):
            text = f"{e.name} {e.subject}"
        ax.text(lp[0], lp[1], text, fontsize=font, ha="center", va="center", color=st["color"], zorder=5,
                bbox=dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.85))


def _draw_legend(ax, font: int) -> None:
    handles = [Line2D([0], [0], color=s["color"], lw=s["lw"], ls=s["ls"], label=k) for k, s in STYLES.items()]
    handles.append(Line2D([0], [0], color=STYLES["joint"]["color"], lw=STYLES["joint"]["lw"], ls=":",
                          label="joint (fixed)"))
    handles += [Line2D([0], [0], marker="s", color="w", markerfacecolor="black", markersize=10, label="ground"),
                Line2D([0], [0], marker="o", color="w", markerfacecolor="tab:blue", markeredgecolor="black",
                       markersize=10, label="centre of mass"),
                Line2D([0], [0], marker="o", color="w", markerfacecolor="white", markeredgecolor="black",
                       markersize=7, label="attachment point")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, 1.0), fontsize=font + 1, frameon=True)


def draw_system_graph(sg_or_analysis, stage: str = "extended", path=None, title: str | None = None) -> Figure:
    """Draw a system graph and write it to ``path`` (.svg, .png or .pdf) when given.

    Parameters
    ----------
    sg_or_analysis : SystemGraph or graph.Analysis
        With an Analysis, ``stage`` picks ``analysis.extended`` or ``analysis.reduced``.
    stage : ``'extended'`` or ``'reduced'``.
    path : str or Path, optional
        Output file; the format follows the suffix.
    title : str, optional
        Picture title (default: the assembly name and the stage).

    Returns the matplotlib Figure.
    """
    if isinstance(sg_or_analysis, SystemGraph):
        sg, name = sg_or_analysis, ""
    else:
        if stage not in ("extended", "reduced"):
            raise ValueError(f"stage must be 'extended' or 'reduced', got {stage!r}")
        sg = sg_or_analysis.extended if stage == "extended" else sg_or_analysis.reduced
        name = sg_or_analysis.assembly.name
    pos = layout(sg)
    n_com = sum(1 for n in sg.nodes if n.startswith("com:"))
    xs = np.array([pos[n] for n in sg.nodes])
    if n_com > LAYERED_ABOVE:
        span = xs.max(axis=0) - xs.min(axis=0)
        fig = Figure(figsize=tuple(np.clip(2.2 * span + 2.0, 6.0, 60.0)))
    else:
        size = float(np.clip(4.0 + 1.1 * n_com, 7.0, 30.0))
        fig = Figure(figsize=(size, size))
    ax = fig.add_subplot(1, 1, 1)
    ax.set_aspect("equal")
    ax.axis("off")
    font = 9 if n_com < 15 else 7

    _draw_nodes(ax, sg, pos, font)
    _draw_elements(ax, sg, pos, font)
    _draw_legend(ax, font)
    counts = sg.counts()
    ax.set_title(title or f"{name}: {sg.stage} system graph\n{len(sg.nodes)} nodes, {len(sg.elements)} elements "
                 f"({', '.join(f'{v} {k}' for k, v in counts.items())})", fontsize=font + 3)
    pad = 0.45
    ax.set_xlim(xs[:, 0].min() - pad, xs[:, 0].max() + pad)
    ax.set_ylim(xs[:, 1].min() - pad, xs[:, 1].max() + pad + 0.25)
    fig.tight_layout()
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(str(path), dpi=110)
    return fig
