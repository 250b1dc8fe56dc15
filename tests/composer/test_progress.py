"""What a long run shows: progress bars (tqdm on the given stream, only on a terminal, never backwards,
gone when done), repeated warnings grouped, and the simulation plot of many coordinates."""

import io
import re
from pathlib import Path

from mbcompose.composer.progress import STEPS, ProgressBars


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_no_bar_when_the_stream_is_not_a_terminal_or_quiet():
    for stream, enabled in ((io.StringIO(), True), (Terminal(), False)):
        with ProgressBars(stream, enabled) as bars:
            bars("simulate", 0.5)
            bars("simulate", 1.0)
        assert stream.getvalue() == ""


def test_bar_only_moves_forward_and_is_cleared_at_the_end():
    stream = Terminal()
    bars = ProgressBars(stream, mininterval=0)
    shown = []
    for f in (0.1, 0.5, 0.3, 0.45, 0.8):     # an adaptive integrator's trial times go back
        bars("simulate", f)
        shown.append(bars._bars["simulate"].n)
    assert shown == sorted(shown) and shown[-1] == int(0.8 * STEPS)
    percentages = [int(p) for p in re.findall(r"(\d+)%", stream.getvalue())]
    assert percentages == sorted(percentages) and percentages[-1] == 80
    bars("simulate", 1.0)
    assert "simulate" not in bars._bars
    assert stream.getvalue().rstrip(" ").endswith("\r")   # leave=False: the line is cleared


def test_the_simulation_plot_of_a_large_robot_names_every_coordinate():
    import numpy as np

    from mbcompose.composer.report.plots import png_bytes, simulation_figure
    from mbcompose.dynamics.simulation import SimulationResult

    names = tuple(f"joint_{k}" for k in range(40))
    t = np.linspace(0, 1, 11)
    result = SimulationResult(t=t, q=np.outer(t, np.arange(40)), v=np.ones((11, 40)), energy=np.ones(11),
                              columns=names, velocity_columns=tuple(f"v:{n}" for n in names), status="ok")
    fig = simulation_figure(result, "big")
    q_axes, v_axes = fig.axes[:2]
    assert [x.get_text() for x in q_axes.get_legend().get_texts()] == list(names)
    assert len(v_axes.get_legend().get_texts()) == 40
    assert png_bytes(fig)[:4] == b"\x89PNG"


def test_repeated_warnings_are_grouped_into_one_line_with_a_count():
    import logging

    from mbcompose.composer.logs import GroupingHandler

    stream = io.StringIO()
    handler = GroupingHandler(stream)
    log = logging.getLogger("mbcompose.test_grouping")
    log.addHandler(handler)
    log.propagate = False
    try:
        for k in range(5):
            log.warning("MJCF export: MuJoCo cannot read mesh %s (skipped)", f"part{k}.dae")
        log.warning("loop L1 is over-constrained")
        log.warning("MJCF export: MuJoCo cannot read mesh %s (skipped)", "part3.dae")   # the same words again
        log.warning("loop L1 is over-constrained")
        log.warning("%s", "joint 'a': initial position 200 is outside its limits")   # templates of placeholders
        log.warning("%s", "the kernels are being compiled")                           # only: two warnings
    finally:
        log.removeHandler(handler)
        handler.close()
    assert stream.getvalue().splitlines() == [
        "warning: MJCF export: MuJoCo cannot read mesh part0.dae (skipped)",
        "warning: loop L1 is over-constrained",
        "warning: joint 'a': initial position 200 is outside its limits",
        "warning: the kernels are being compiled",
        'warning: 4 more like "MJCF export: MuJoCo cannot read mesh part0.dae (skipped)" (not shown)']


def test_verbose_shows_our_debugging_lines_and_not_other_libraries_unless_doubled(tmp_path):
    """``-v``: mbcompose's debug lines (stage timings), no matplotlib/trimesh debug; ``-vv``: theirs too."""
    import subprocess
    import sys

    fourbar = Path(__file__).resolve().parents[2] / "samples" / "fourbar" / "fourbar.yaml"
    args = [sys.executable, "-P", "-m", "mbcompose", "graph", str(fourbar), "-o", str(tmp_path / "g.png")]
    one = subprocess.run(args[:4] + ["-v"] + args[4:], capture_output=True, text=True, timeout=300)
    assert one.returncode == 0, one.stderr
    assert "debug:" in one.stderr
    assert "findfont" not in one.stderr and "matplotlib" not in one.stderr.lower()
    two = subprocess.run(args[:4] + ["-vv"] + args[4:], capture_output=True, text=True, timeout=300)
    assert two.returncode == 0, two.stderr
    assert len(two.stderr.splitlines()) > len(one.stderr.splitlines())


def test_verbose_run_shows_every_stage_timing(tmp_path):
    """``-v run``: one 'stage NAME done in' line per stage, none grouped away as a repeat."""
    import subprocess
    import sys

    fourbar = Path(__file__).resolve().parents[2] / "samples" / "fourbar" / "fourbar.yaml"
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(f"input: {fourbar}\noutputs:\n  directory: {tmp_path / 'out'}\n  model: true\n"
                        "  exports: [mjcf]\n  report: false\n  graphs: []\n")
    out = subprocess.run([sys.executable, "-P", "-m", "mbcompose", "-v", "run", str(pipeline)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    done = re.findall(r"info: stage (\w+) done in", out.stderr)
    assert done[:4] == ["read", "analyse", "model", "exports"], out.stderr
    assert "more like" not in out.stderr
