"""Mutation fuzz test: nothing but InputError escapes ``mbcompose.compose``.

Every sample and a few robot files of each format are edited at random
(:mod:`mutate`, seeded), 2,000 mutants in all, and composed in-process.  A
mutant may compose fine or raise :class:`InputError`; any other exception,
a result with non-finite numbers, a message quoting a whole line of the mutant, or a mutant
taking over 10 s fails the test.
"""

import random
import shutil
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from mbcompose.composer import compose
from mbcompose.parsers.errors import InputError

from mutate import mutant

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for p in (ROOT / "samples").glob("*/*.yaml") if p.name != "pipeline.yaml") + [
    ROOT / "tests/parsers/data" / name for name in
    ("arm.urdf", "planar_floating.urdf", "mimic_world.urdf", "fourbar.sdf", "sdf16_features.sdf",
     "fourbar_mjcf.xml", "mjcf_features.xml")] + [ROOT / "tests/data/sdf/couplings.sdf"]
MUTANTS = 2000


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _finite_model(c) -> bool:
    m = c.model
    q = np.asarray(m.neutral(), dtype=float)
    return bool(np.all(np.isfinite(q))) and all(
        np.isfinite(b.mass.mass) and np.all(np.isfinite(b.mass.inertia)) for b in c.lumped.bodies)


def _run(path: Path) -> str:
    try:
        c = compose(path)
    except InputError as exc:
        assert str(exc).startswith(str(path)), f"error does not name the file: {exc}"
        _assert_quotes_no_line(str(exc), path)
        return "error"
    assert _finite_model(c), "composed with non-finite numbers"
    return "ok"


#: lines shorter than this may appear in a message as a value does (``0``, ``]``)
_QUOTABLE = 16


def _assert_quotes_no_line(message: str, path: Path) -> None:
    """The message holds no line of the file it names (a value, at most 40 characters, may be quoted)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    quoted = [line.strip() for line in text.splitlines() if len(line.strip()) >= _QUOTABLE and line.strip() in message]
    assert not quoted, f"the message quotes a line of the file: {quoted[0]!r}"


@pytest.mark.slow
def test_no_mutant_raises_anything_but_input_error(tmp_path):
    rng = random.Random(20261122)
    work = []
    for src in SOURCES:
        folder = tmp_path / f"{src.parent.name}_{src.stem}"
        shutil.copytree(src.parent, folder, ignore=shutil.ignore_patterns("out", "*.md", "malformed"))
        work.append((folder / src.name, src.read_text(encoding="utf-8")))
    outcomes = {"ok": 0, "error": 0}
    failures = []
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for i in range(MUTANTS):
            target, text = work[i % len(work)]
            text_i = mutant(text, rng)
            target.write_text(text_i, encoding="utf-8", errors="surrogatepass")
            signal.alarm(10)
            t0 = time.perf_counter()
            try:
                outcomes[_run(target)] += 1
            except _Timeout:
                failures.append((i, target.name, "took over 10 s"))
            except Exception as exc:  # the point of the test: report what escaped
                failures.append((i, target.name, f"{type(exc).__name__}: {str(exc)[:200]}"))
            finally:
                signal.alarm(0)
            assert time.perf_counter() - t0 < 10
    finally:
        signal.signal(signal.SIGALRM, old)
    assert not failures, f"{len(failures)} of {MUTANTS} mutants escaped: {failures[:10]}"
    assert outcomes["ok"] > 50 and outcomes["error"] > 500, outcomes
