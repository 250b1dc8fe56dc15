"""Kill test (issue 14): an interrupted ``mbcompose run`` never leaves a partial output set.

``mbcompose run`` is killed with SIGKILL at 10 moments spread over a run
(import, reading, model, exports, pictures, simulation, report, commit).
After each kill the output folder holds exactly the previous complete set
(every file as a complete run writes it), or no output at all when there was
none before; hidden ``.part`` files of the killed run may remain, and the next
run removes them.  SIGTERM and SIGINT clean up at once.
"""

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PIPELINE = """\
input: double_pendulum.yaml
outputs:
  directory: out
  exports: [urdf, mjcf, sdf]
  graphs: [extended, reduced]
  report: true
  simulation: {duration: 0.5, samples: 51, initial: {q: {shoulder: 0.5}}}
"""


def _command():
    return [sys.executable, "-P", "-m", "mbcompose", "-q", "run", "pipeline.yaml"]


def _outputs(folder: Path) -> dict[str, str]:
    if not folder.exists():
        return {}
    return {p.name: hashlib.sha1(p.read_bytes()).hexdigest() for p in folder.iterdir() if not p.name.endswith(".part")}


def _parts(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part")) if folder.exists() else []


def _run(cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(_command(), cwd=cwd, check=True, capture_output=True, timeout=300)
    return time.perf_counter() - t0


def _interrupted(cwd: Path, after: float, sig: int) -> int:
    proc = subprocess.Popen(_command(), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(after)
    proc.send_signal(sig)
    proc.communicate(timeout=120)
    return proc.returncode


def _case(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "double_pendulum.yaml").write_text(
        (ROOT / "samples/double_pendulum/double_pendulum.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "pipeline.yaml").write_text(PIPELINE, encoding="utf-8")
    return folder


@pytest.fixture()
def case(tmp_path):
    return _case(tmp_path)


@pytest.fixture(scope="module")
def complete(tmp_path_factory):
    """A folder after one complete run, and the run's wall time in seconds."""
    folder = _case(tmp_path_factory.mktemp("complete"))
    return folder, _run(folder)


def _unchanging(outputs: dict[str, str]) -> dict[str, str]:
    """The outputs whose content does not depend on the run (the report records stage times)."""
    return {k: v for k, v in outputs.items() if ".report." not in k}


@pytest.mark.slow
def test_sigkill_at_ten_moments_leaves_the_previous_set_or_none(case, complete):
    folder, seconds = complete
    out = folder / "out"
    previous = _outputs(out)
    assert len(previous) >= 10 and not _parts(out)
    for i in range(4):  # no output before: a killed run leaves none (or all, if it finished first)
        _interrupted(case, seconds * (0.1 + 0.25 * i), signal.SIGKILL)
        left = _outputs(case / "out")
        assert left == {} or left.keys() == previous.keys(), f"kill {i} left partial outputs: {sorted(left)}"
        if left:
            shutil.rmtree(case / "out")
    for i in range(6):  # a complete set before: a killed run leaves it complete
        _interrupted(folder, seconds * (0.3 + 0.15 * i), signal.SIGKILL)
        now = _outputs(out)
        assert now.keys() == previous.keys(), f"kill {4 + i}: {sorted(now)}"
        assert _unchanging(now) == _unchanging(previous)
    _run(folder)
    assert not _parts(out), "the next run left .part files"
    assert _outputs(out).keys() == previous.keys()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_clean_up_at_once(case, complete, sig):
    out = case / "out"
    status = _interrupted(case, 0.7 * complete[1], sig)
    left = _outputs(out)
    if status == 0 or left:  # the run committed before the signal came: the whole set, nothing partial
        assert left.keys() == _outputs(complete[0] / "out").keys()
        assert not _parts(out)
        return
    assert not out.exists(), sorted(os.listdir(out))
