"""Per-stage times of the STEP reader on the real-CAD corpus (issue 24: "a 160-part assembly reads
and infers in under 10 s; report the slowest step").

For each assembly of ``tests/data/cad/expected.yaml`` whose file is present under the corpus
folder (``--corpus DIR``, else ``$MBCOMPOSE_CAD_CORPUS``, else ``../shared/cad`` beside the
repository; absent files are skipped and named), this runs ``read_step`` once in this process and
prints the seconds spent in each stage: importing OpenCascade, OpenCascade's read and transfer
(``read_document``: the reference, what any STEP import costs), the leaf parts and their solids,
the B-rep mass properties, the tessellation, the analytic faces and the surfaces the contacts use
(once per product shape since issue 24's speed work), the STL files and the joint
inference (whose contacts are computed once per pair of products in one relative placement).  The stages are timed by wrapping the reader's own functions, so the total is the
time a user waits minus the interpreter's start-up.  The ratio printed is the whole read over
the reference measured in the same run.

    python3 benchmarks/step_read.py [--corpus DIR] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
EXPECTED = REPO / "tests" / "data" / "cad" / "expected.yaml"

#: (stage, module, function) wrapped with a timer; the module's attribute is replaced for the run
STAGES = (
    ("read_document (reference)", "brep", "read_document"),
    ("leaf_parts", "brep", "leaf_parts"),
    ("closed solids", "reader", "_solid_leaves"),
    ("mass properties", "brep", "volume_properties"),
    ("tessellation", "brep", "tessellate_faces"),
    ("analytic faces", "brep", "face_surface"),
    ("contact surfaces", "reader", "_surfaces"),
    ("STL files", "reader", "_write_stl"),
    ("joint inference", "reader", "infer_joints"),
)


def corpus_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg).resolve()
    env = os.environ.get("MBCOMPOSE_CAD_CORPUS")
    return Path(env).resolve() if env else (REPO.parent / "shared" / "cad").resolve()


def _timed(times: dict, stage: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            times[stage] += time.perf_counter() - t0
    return wrapper


def run(file: Path, mesh_dir: Path) -> tuple[dict, int | str, float]:
    """(seconds per stage, bodies (or why the read stopped), total seconds) of one ``read_step``, stages wrapped."""
    from mbcompose.parsers import InputError
    from mbcompose.parsers.step import brep, reader
    modules = {"brep": brep, "reader": reader}
    times: dict[str, float] = defaultdict(float)
    saved = [(modules[m], f, getattr(modules[m], f)) for _, m, f in STAGES]
    for stage, m, f in STAGES:
        setattr(modules[m], f, _timed(times, stage, getattr(modules[m], f)))
    t0 = time.perf_counter()
    try:
        bodies = len(reader.read_step(file, mesh_dir=mesh_dir).bodies)
    except InputError as e:         # a mechanism that needs declarations: timed up to the error
        bodies = f"stopped ({e.message.split(';')[0][:80]})"
    finally:
        for module, f, fn in saved:
            setattr(module, f, fn)
    return times, bodies, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus")
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    corpus = corpus_dir(args.corpus)
    entries = yaml.safe_load(EXPECTED.read_text())["assemblies"]
    t0 = time.perf_counter()
    import OCP  # noqa: F401
    from OCP.STEPCAFControl import STEPCAFControl_Reader  # noqa: F401
    print(f"import OpenCascade (OCP): {time.perf_counter() - t0:.2f} s (once per process, not in the totals)")
    import mbcompose.parsers.step.reader  # noqa: F401  (imports numpy etc. once, outside the totals)
    import trimesh  # noqa: F401  (the CLI imports it at start-up; the reader's STL stage would pay it otherwise)
    for name, entry in entries.items():
        if args.only and name not in args.only:
            continue
        file = corpus / name / entry["file"]
        if not file.exists():
            print(f"{name}: skipped, {file} is absent")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            times, bodies, total = run(file, Path(tmp))
        ref = times["read_document (reference)"]
        slowest = max(times, key=times.get)
        what = f"{bodies} bodies" if isinstance(bodies, int) else bodies
        print(f"\n{name}: {what}, {total:.2f} s in all = {total / ref:.2f} x the OpenCascade read "
              f"({ref:.2f} s); slowest stage: {slowest}")
        for stage, _, _ in STAGES:
            print(f"  {stage:28s} {times[stage]:7.2f} s")
        print(f"  {'(the rest)':28s} {total - sum(times.values()):7.2f} s")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
