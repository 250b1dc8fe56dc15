"""Pictures of a composition: system graphs, the SKO tree and the block sparsity.

``picture_png(composition, stage)`` for stage in ``extended``, ``reduced``
(seed 004 Figs. 3-4, drawn by :func:`graph.draw.systems.draw_system_graph`), ``sko``
(the tree the dynamics runs on: one node per body, one edge per tree joint,
loop-closing joints dashed) and ``sparsity`` (block sparsity of E_A, A and M,
seed 000 Figs. 6-7, :mod:`graph.draw.sparsity`).
"""

from __future__ import annotations

import networkx as nx

from mbcompose.parsers.assembly import GROUND

from ..formatting import plural
from .plots import plt, png_bytes

STAGES = ("extended", "reduced", "sko", "sparsity")


def sko_figure(composition):
    """The SKO tree: ground at the top, bodies below their parents, chords dashed."""
    tree = composition.tree
    g = nx.DiGraph()
    g.add_node(GROUND)
    for e in tree.edges:
        g.add_edge(e.parent, e.child, label=e.joint.name + ("*" if e.joint.actuated else ""))
    depth = nx.single_source_shortest_path_length(g, GROUND)
    levels: dict[int, list[str]] = {}
    for node in nx.topological_sort(g):
        levels.setdefault(depth[node], []).append(node)
    pos = {n: (i - (len(ns) - 1) / 2.0, -d) for d, ns in levels.items() for i, n in enumerate(ns)}
    width = max(len(ns) for ns in levels.values())
    fig, ax = plt.subplots(figsize=(max(5.0, 2.2 * width), max(3.0, 1.4 * len(levels) + 1)),
                           constrained_layout=True)
    for n, (x, y) in pos.items():        # a box around each name, so long names stay inside their node
        ax.text(x, y, "ground" if n == GROUND else n, ha="center", va="center", fontsize=8, zorder=3,
                bbox=dict(boxstyle="round,pad=0.5", fc="#bbbbbb" if n == GROUND else "#9ecae1", ec="k"))
    nx.draw_networkx_edges(g, pos, ax=ax, arrows=True, arrowsize=14, node_size=1800)
    nx.draw_networkx_edge_labels(g, pos, ax=ax, edge_labels=nx.get_edge_attributes(g, "label"), font_size=7)
    for chord in tree.chords:
        a, b = chord.reference, chord.secondary
        if a in pos and b in pos:
            ax.annotate("", xy=pos[b], xytext=pos[a],
                        arrowprops=dict(arrowstyle="-", linestyle="--", color="tab:red",
                                        connectionstyle="arc3,rad=0.3"))
            mid = ((pos[a][0] + pos[b][0]) / 2, (pos[a][1] + pos[b][1]) / 2)
            ax.text(*mid, chord.name + " (loop)", color="tab:red", fontsize=7, ha="center")
    ax.set_title(f"SKO tree of {composition.assembly.name}: {plural(len(tree.edges), 'node')}, "
                 f"{plural(len(tree.chords), 'loop-closing joint')}")
    xs = [p[0] for p in pos.values()]
    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(-len(levels) + 1 - (1.0 if tree.chords else 0.5), 0.5)   # room for the loop arcs below
    ax.axis("off")
    return fig


def sparsity_figure(composition):
    from mbcompose.graph.draw.sparsity import draw_sparsity

    return draw_sparsity(composition.tree.model)


def picture_figure(composition, stage: str):
    if stage in ("extended", "reduced"):
        from mbcompose.graph.draw.systems import draw_system_graph

        return draw_system_graph(composition.analysis, stage=stage)
    if stage == "sko":
        return sko_figure(composition)
    if stage == "sparsity":
        return sparsity_figure(composition)
    raise ValueError(f"unknown picture {stage!r} (expected one of {', '.join(STAGES)})")


def picture_png(composition, stage: str) -> bytes:
    """PNG bytes of one picture."""
    return png_bytes(picture_figure(composition, stage))


def save_picture(composition, stage: str, path, inputs=()) -> None:
    """Write one picture; the format (png, svg, pdf) follows the suffix of ``path``.

    ``inputs`` : files that must not be overwritten."""
    from pathlib import Path

    from ..outputs import atomic_write

    fig = picture_figure(composition, stage)
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    try:
        atomic_write(path, lambda p: fig.savefig(p, format=fmt, dpi=120), inputs=inputs)
    finally:
        plt.close(fig)
