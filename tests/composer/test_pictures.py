"""The SKO tree picture: names inside their boxes, loop arcs inside the picture, counts in words."""

from pathlib import Path

from mbcompose import compose
from mbcompose.composer.report.pictures import sko_figure

ROOT = Path(__file__).resolve().parents[2]


def test_the_fivebar_sko_picture_shows_its_whole_loop_arc_and_boxed_names():
    c = compose(ROOT / "samples/fivebar/fivebar.yaml")
    fig = sko_figure(c)
    ax = fig.axes[0]
    fig.canvas.draw()
    inside = ax.get_window_extent()
    arcs = [t.arrow_patch for t in ax.texts if getattr(t, "arrow_patch", None) is not None]
    assert arcs
    for arc in arcs:                                   # the dashed chord arc is not clipped
        box = arc.get_window_extent(fig.canvas.get_renderer())
        assert box.y0 >= inside.y0 - 1 and box.x0 >= inside.x0 - 1 and box.x1 <= inside.x1 + 1
    renderer = fig.canvas.get_renderer()
    for text in ax.texts:                              # every node name within its own box
        patch = text.get_bbox_patch()
        if patch is not None:
            assert patch.get_window_extent(renderer).contains(*text.get_window_extent(renderer).get_points()[0])
    assert ax.get_title().endswith("4 nodes, 1 loop-closing joint")
