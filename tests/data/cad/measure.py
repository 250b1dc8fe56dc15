"""Measure the installed mbcompose on the real-CAD corpus (not a test: the before-picture of issue 24).

For every assembly listed in ``expected.yaml`` this runs ``mbcompose inspect FILE --format json``
in a child process (timed, from a neutral working directory) and records whether the file reads
(the ``error:`` line if not), the number of bodies, the total mass in kg, the inferred dof and
the real dof from ``expected.yaml``; then the same through the wrapper ``<name>.yaml`` beside it (its
``assembly:`` redirected to the corpus): the number of declared lines and the dof.  With ``--profile`` a second child process runs the same
command under cProfile and reports the cumulative seconds of the reader's stages, so the
slowest step can be named.

The STEP files are not part of the repository (see README.md, "Where the files are"); give
their folder with ``--corpus DIR`` or ``$MBCOMPOSE_CAD_CORPUS``; the default is
``../shared/cad`` beside the repository.

Usage::

    python tests/data/cad/measure.py [--corpus DIR] [--only NAME ...] [--profile] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
#: reader stages whose cumulative time is reported (function name, module file suffix)
STAGES = (
    ("read_document", "parsers/step/brep.py"),
    ("leaf_parts", "parsers/step/brep.py"),
    ("_part_body", "parsers/step/reader.py"),
    ("infer_joints", "parsers/step/inference.py"),
    ("read_step", "parsers/step/reader.py"),
)


def corpus_dir(arg: str | None) -> Path:
    """The folder holding ``<name>/<file>`` for every corpus entry."""
    if arg:
        return Path(arg).resolve()
    env = os.environ.get("MBCOMPOSE_CAD_CORPUS")
    return Path(env).resolve() if env else (REPO.parent / "shared" / "cad").resolve()


def inspect(file: Path, timeout: float) -> dict:
    """Run ``mbcompose inspect --format json`` on ``file``; wall time, exit code, parsed JSON or error."""
    cmd = [sys.executable, "-m", "mbcompose", "inspect", str(file), "--format", "json"]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as cwd:
        try:
            run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"seconds": time.perf_counter() - t0, "code": None, "error": f"timeout after {timeout:.0f} s"}
    out = {"seconds": time.perf_counter() - t0, "code": run.returncode}
    errors = [line for line in run.stderr.splitlines() if line.startswith("error")]
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning")]
    out["warnings"] = warnings
    if run.returncode != 0:
        out["error"] = errors[0] if errors else (run.stderr.strip().splitlines() or ["(no message)"])[-1]
        return out
    out["json"] = json.loads(run.stdout)
    return out


def profile(file: Path, timeout: float) -> dict[str, float]:
    """Cumulative seconds of the reader's stages (``STAGES``) for one ``inspect`` run under cProfile."""
    with tempfile.TemporaryDirectory() as cwd:
        stats_file = Path(cwd) / "inspect.prof"
        cmd = [sys.executable, "-m", "cProfile", "-o", str(stats_file), "-m", "mbcompose",
               "inspect", str(file), "--format", "json"]
        try:
            subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {}
        if not stats_file.exists():
            return {}
        stats = pstats.Stats(str(stats_file))
    out: dict[str, float] = {}
    total = 0.0
    for (path, _, func), (_, _, _, cumulative, _) in stats.stats.items():
        total = max(total, cumulative)
        for name, suffix in STAGES:
            if func == name and path.replace(os.sep, "/").endswith(suffix):
                out[name] = out.get(name, 0.0) + cumulative
    out["total"] = total
    return out


def summary(name: str, entry: dict, result: dict) -> dict:
    """One table row: reads, parts, bodies, mass, dof against the expected entry."""
    row = {"name": name, "system": entry.get("cad_system", "?"), "seconds": round(result["seconds"], 1),
           "dof_real": entry.get("dof_real"), "mass_documented": entry.get("documented_mass_kg")}
    if "json" not in result:
        row.update(reads=False, error=result.get("error"))
        return row
    doc = result["json"]
    bodies = doc.get("bodies", [])
    row.update(reads=True, parts=len(bodies), composites=len(doc.get("composites", [])),
               mass=round(sum(b.get("mass", 0.0) for b in bodies), 6), dof=doc.get("dof"),
               warnings=len(result.get("warnings", [])))
    return row


def declared(name: str, root: Path, timeout: float) -> dict:
    """The wrapper ``<name>.yaml`` beside this script (its ``assembly:`` redirected to ``root``): lines, dof."""
    wrapper = HERE / f"{name}.yaml"
    if not wrapper.exists():
        return {}
    doc = yaml.safe_load(wrapper.read_text(encoding="utf-8"))
    lines = len(doc.get("joints") or []) + len(doc.get("rigid") or [])
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / wrapper.name
        copy.write_text(wrapper.read_text(encoding="utf-8").replace("../../../../shared/cad", str(root)),
                        encoding="utf-8")
        result = inspect(copy, timeout)
    if "json" not in result:
        return {"lines": lines, "dof_declared": f"error: {result.get('error')}"}
    doc = result["json"]
    return {"lines": lines, "dof_declared": doc.get("dof"),
            "mass_declared": round(sum(b.get("mass", 0.0) for b in doc.get("bodies", [])), 6)}


def markdown(rows: list[dict]) -> str:
    """The rows as a Markdown table."""
    head = ("| assembly | CAD system | reads | parts | composites | mass (kg) | documented mass | dof, no declaration |"
            " lines declared | dof, declared | mass, declared (kg) | real dof | time (s) | slowest stage |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        reads = "yes" if r.get("reads") else f"no: {r.get('error', '')}"
        slow = r.get("slowest", "")
        lines.append(f"| {r['name']} | {r['system']} | {reads} | {r.get('parts', '')} | {r.get('composites', '')} | "
                     f"{r.get('mass', '')} | {r.get('mass_documented') or ''} | {r.get('dof', '')} | "
                     f"{r.get('lines', '')} | {r.get('dof_declared', '')} | {r.get('mass_declared', '')} | "
                     f"{r['dof_real']} | {r['seconds']} | {slow} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", help="folder with <name>/<file> (default $MBCOMPOSE_CAD_CORPUS or ../shared/cad)")
    ap.add_argument("--only", nargs="*", help="names from expected.yaml to run")
    ap.add_argument("--profile", action="store_true", help="also profile each run and name the slowest stage")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table instead of JSON lines")
    args = ap.parse_args(argv)
    expected = yaml.safe_load((HERE / "expected.yaml").read_text(encoding="utf-8"))["assemblies"]
    root = corpus_dir(args.corpus)
    rows = []
    for name, entry in expected.items():
        if args.only and name not in args.only:
            continue
        file = root / name / entry["file"]
        if not file.exists():
            rows.append({"name": name, "system": entry.get("cad_system", "?"), "seconds": 0.0,
                         "dof_real": entry.get("dof_real"), "reads": False, "error": f"missing: {file}"})
            continue
        row = summary(name, entry, inspect(file, args.timeout))
        row.update(declared(name, root, args.timeout))
        if args.profile:
            stages = profile(file, args.timeout)
            row["stages"] = {k: round(v, 2) for k, v in stages.items()}
            inner = {k: v for k, v in stages.items() if k not in ("read_step", "total")}
            if inner:
                slow = max(inner, key=inner.get)
                row["slowest"] = f"{slow} {inner[slow]:.1f} s of {stages.get('total', 0.0):.1f} s"
        rows.append(row)
        if not args.markdown:
            print(json.dumps(row), flush=True)
    if args.markdown:
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
