"""Pictures of the block sparsity of ``E_A``, ``A`` and the mass matrix (seed 000, section 7).

Seed 000 (Jain, *Multibody graph transformations and analysis, Part I*), Figs. 6-7
and Eqs. 43-45: split a tree into its serial-chain segments
(:func:`graph.aggregation.segments.serial_chain_segments`), stack the nodes segment by
segment (each segment's members consecutive, children before parents -- the
seed's canonical numbering), and the SKO operator ``E_A`` is block lower
triangular with dense-ish bands inside segments and single connector blocks
between *adjacent* segments (Eqs. 43-44), the SPO ``A`` has non-zero blocks only
for *related* segments (Eq. 45), and the mass matrix ``H A M A* H*`` mirrors ``A``
and its transpose (Fig. 7).

:func:`sparsity_patterns` computes the node-level patterns
(:mod:`graph.aggregation.blocks`) in that order; :func:`draw_sparsity` draws
them side by side, spy-like, with the segment boundaries, and writes a png or svg
(matplotlib's object API, no global pyplot state).

Input: a :class:`networkx.DiGraph` tree (parent -> child), or a dynamics model
(any kind: its ``tree_model`` is a :class:`dynamics.SKOModel` with a parent array).  A parent array with several roots gets a virtual ``ground``
root, which is not drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np

from mbcompose.graph.aggregation import canonical_order
from mbcompose.graph.aggregation.blocks import mass_matrix_pattern, sko_pattern, spo_pattern
from mbcompose.graph.aggregation.segments import segment_tree, serial_chain_segments

__all__ = ["SparsityPatterns", "as_tree", "sparsity_patterns", "sparsity_figure", "draw_sparsity"]

GROUND = "ground"


@dataclass(frozen=True)
class SparsityPatterns:
    """Node-level block patterns in segment order.

    order : nodes, segment by segment (members of a segment consecutive)
    segments : per segment, the slice of ``order`` it occupies, and its nodes (base first)
    E_A, A, M : (n, n) bool -- block patterns of the SKO, SPO and mass matrix
    labels : node labels for the axes
    """

    order: tuple
    segments: tuple
    E_A: np.ndarray
    A: np.ndarray
    M: np.ndarray
    labels: tuple


def as_tree(tree_or_model) -> tuple[nx.DiGraph, tuple]:
    """A networkx tree and its node labels from a tree or a model (see module docstring).

    Returns
    -------
    (tree, hidden) : the tree, and the nodes not to draw (the virtual ground)
    """
    if isinstance(tree_or_model, nx.DiGraph):
        return tree_or_model, ()
    m = tree_or_model.tree_model
    names = m.body_names
    t = nx.DiGraph()
    t.add_node(GROUND)
    for k, p in enumerate(np.asarray(m.parent, dtype=int)):
        t.add_edge(GROUND if p < 0 else names[p], names[k])
    return t, (GROUND,)


def sparsity_patterns(tree_or_model) -> SparsityPatterns:
    """Block patterns of ``E_A``, ``A`` and ``M`` in segment order (seed 000, Eqs. 43-45, Fig. 7)."""
    tree, hidden = as_tree(tree_or_model)
    agg = segment_tree(tree)
    seg_nodes = serial_chain_segments(tree)
    seg_order = canonical_order(agg.tree)
    order_all = agg.stack_order(seg_order)
    order = [n for n in order_all if n not in hidden]
    keep = [order_all.index(n) for n in order]
    pats = [p[np.ix_(keep, keep)] for p in (sko_pattern(tree, order_all), spo_pattern(tree, order_all),
                                            mass_matrix_pattern(tree, order_all))]
    pos = {n: i for i, n in enumerate(order)}
    segments = []
    for lab in seg_order:
        nodes = [n for n in seg_nodes[lab.index] if n not in hidden]
        if not nodes:
            continue
        idx = sorted(pos[n] for n in nodes)
        segments.append((slice(idx[0], idx[-1] + 1), tuple(nodes)))
    return SparsityPatterns(tuple(order), tuple(segments), *pats, labels=tuple(str(n) for n in order))


def sparsity_figure(tree_or_model, title: str | None = None):
    """The matplotlib Figure of :func:`draw_sparsity` (three spy-like panels), not saved."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    pat = sparsity_patterns(tree_or_model)
    n = len(pat.order)
    size = min(5.0, 2.0 + 0.18 * n)
    fig = Figure(figsize=(3 * size + 1.0, size + 0.9))
    FigureCanvasAgg(fig)
    cmap = ListedColormap(["white", "#1f4e79"])
    panels = (("E_A (SKO, Eq. 43)", pat.E_A), ("A = (I - E_A)^-1 (SPO, Eq. 45)", pat.A),
              ("mass matrix H A M A* H* (Fig. 7)", pat.M))
    for i, (name, P) in enumerate(panels):
        ax = fig.add_subplot(1, 3, i + 1)
        ax.imshow(P.astype(float), cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
        for sl, _ in pat.segments[1:]:
            ax.axhline(sl.start - 0.5, color="#c0504d", lw=0.8)
            ax.axvline(sl.start - 0.5, color="#c0504d", lw=0.8)
        ax.set_title(name, fontsize=9)
        if n <= 40:
            ax.set_xticks(range(n))
            ax.set_yticks(range(n))
            ax.set_xticklabels(pat.labels, rotation=90, fontsize=6)
            ax.set_yticklabels(pat.labels, fontsize=6)
        else:
            ax.set_xticks([])
            ax.set_yticks([])
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_ylim(n - 0.5, -0.5)
    fig.suptitle(title or f"block sparsity, {len(pat.segments)} serial-chain segments "
                          f"(red lines), {n} nodes", fontsize=10)
    fig.tight_layout()
    return fig


def draw_sparsity(tree_or_model, path=None, title: str | None = None, dpi: int = 120):
    """Draw the block sparsity of ``E_A``, ``A`` and ``M`` for a tree split into serial segments.

    Parameters
    ----------
    tree_or_model : networkx.DiGraph or a model (see the module docstring)
    path : str or Path, optional -- output file; the format follows the suffix (``.png``,
        ``.svg``, ``.pdf``).  Without a path the figure is returned unsaved.
    title : str, optional
    dpi : int -- for raster formats

    Returns
    -------
    Path -- the file written; or the matplotlib Figure when ``path`` is None
    """
    fig = sparsity_figure(tree_or_model, title)
    if path is None:
        return fig
    path = Path(path)
    fig.savefig(path, dpi=dpi)
    return path
