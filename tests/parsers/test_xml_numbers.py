"""Numbers read from XML attribute texts, several at once (``float_rows``)."""

import numpy as np
import pytest

from mbcompose.parsers import limits
from mbcompose.parsers.xml import float_rows


def test_float_rows_reads_each_text_as_one_row():
    rows = float_rows(["1 2 3", " -4.5e-3\t0 1e2 ", "7 8 9"], 3)
    np.testing.assert_array_equal(rows, [[1, 2, 3], [-4.5e-3, 0, 100], [7, 8, 9]])
    assert not rows.flags.writeable


@pytest.mark.parametrize("texts", [["1 2 3", "1 2"], ["1 2 3", "1 2 3 4"], ["1 2 a"], ["nan 0 0"],
                                   ["inf 0 0"], [None], ["1 2 3", ""]])
def test_float_rows_refuses_what_one_text_does_not_hold(texts):
    assert float_rows(texts, 3) is None


def test_float_rows_refuses_numbers_beyond_the_magnitude_limit():
    big = limits.active().magnitude
    assert float_rows([f"0 0 {big}"], 3) is not None
    assert float_rows([f"0 0 {big * 10}"], 3) is None
