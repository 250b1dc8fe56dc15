"""The README's Python examples run as written (issue 27, point 11: docs that fail verbatim).

Every ```python block of README.md, in order, in one namespace (later blocks use what earlier
ones defined), from the repository's root as the README's paths assume.  Their numbers are
checked by the tests of the functions they call; here: that a reader who pastes them gets no
error, and that the results have the shapes the comments promise.
"""

import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_every_python_block_of_the_readme_runs_as_written(monkeypatch):
    blocks = python_blocks(ROOT / "README.md")
    assert len(blocks) >= 2
    monkeypatch.chdir(ROOT)
    ns: dict = {}
    exec(compile("\n".join(blocks), "README.md", "exec"), ns)
    M = ns["M"]                                   # the seeker's mass matrix: symmetric positive definite
    assert M.shape == (2, 2) and np.allclose(M, M.T) and np.linalg.eigvalsh(M).min() > 0
    assert np.isfinite(ns["a"]).all()             # the four-bar's accelerations
