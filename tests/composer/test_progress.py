"""Progress bars: tqdm on the given stream, only on a terminal, never backwards, gone when done."""

import io
import re

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
