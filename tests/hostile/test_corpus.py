"""The hostile-input corpus (issue 14): every bad input gives one clean error.

:mod:`corpus` generates 230+ cases over every reader (YAML, URDF, MJCF,
SDFormat, meshes) and every command (inspect, graph, simulate, eval, convert,
run); :mod:`run_corpus` runs them in-process in one subprocess.  Each case
must exit with status 2 and print exactly one line ``error: FILE[:LINE]: ...``
(no traceback) naming the expected file and, where the input has one, the
line; nothing may be created, changed or deleted in its folder or in the
folder outside it; each case must finish within 10 s, and the process must
stay under 1 GiB of resident memory.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from corpus import OUTSIDE, write_corpus
from models import mjcf_model, sdf_model, urdf_model, yaml_model

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    cases = write_corpus(root)
    proc = subprocess.run([sys.executable, "-P", str(HERE / "run_corpus.py"), str(root)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = {r["name"]: r for r in map(json.loads, proc.stdout.splitlines())}
    return [(c, got[c.name]) for c in cases]


def problems(case, r) -> list[str]:
    """What is wrong with one case's result (empty when it passed)."""
    out = []
    err = r["stderr"]
    lines = err.strip("\n").split("\n")
    if r["status"] != 2:
        out.append(f"exit status {r['status']}")
    if len(lines) != 1 or not lines[0].startswith("error: "):
        out.append(f"not one 'error:' line: {err[:300]!r}")
    if "Traceback" in err:
        out.append("traceback")
    if case.names is not None:
        pattern = re.escape(case.names) + (r":\d+:" if case.line else r"(:\d+)?:")
        if not re.search(pattern, lines[0]):
            out.append(f"does not name {case.names}{':LINE' if case.line else ''}")
    for s in case.expect:
        if s not in err:
            out.append(f"does not say {s!r}")
    for s in case.forbid:
        if s in err:
            out.append(f"prints {s!r}")
    for name, text in OUTSIDE.items():
        if any(line.strip() in err for line in text.splitlines() if line.strip()):
            out.append(f"prints a line of outside/{name}")
    if r["changed"]:
        out.append(f"wrote or changed {r['changed']}")
    if r["seconds"] > 10:
        out.append(f"took {r['seconds']:.1f} s")
    return out


def test_corpus_has_at_least_150_cases_over_every_command(results):
    assert len(results) >= 150
    commands = {c.argv[[a.startswith("-") for a in c.argv].index(False) if c.argv[0] == "--limit" else 0]
                for c, _ in results}
    assert {"inspect", "graph", "simulate", "eval", "convert", "run"} <= {a for c, _ in results for a in c.argv}
    assert commands


def test_every_bad_input_gives_one_clean_error_and_writes_nothing(results):
    failed = {c.name: (problems(c, r), r["stderr"][:300]) for c, r in results if problems(c, r)}
    assert not failed, f"{len(failed)} of {len(results)} cases failed:\n" + "\n".join(
        f"{k}: {v}" for k, v in failed.items())


def test_memory_stays_under_one_gib(results):
    assert max(r["rss_mib"] for _, r in results) < 1024


@pytest.mark.parametrize("name, make", [("arm.yaml", yaml_model), ("arm.urdf", urdf_model),
                                        ("arm.xml", mjcf_model), ("arm.sdf", sdf_model)])
def test_the_models_the_cases_break_compose_as_written(tmp_path, name, make):
    """Each bad case differs from a model that composes: its error comes from the one edit."""
    from mbcompose.composer import compose

    path = tmp_path / name
    path.write_text(make(), encoding="utf-8")
    assert compose(path).model.nv >= 1
