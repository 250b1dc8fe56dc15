"""Throughput of seeker design sweeps on each executor, and the Dask overhead per variant.

A sweep of ``--variants`` seeker variants (camera mass x pitch bearing offset,
as in ``samples/seeker/sweep.yaml`` but finer; 1,000 by default) runs, in the
same process, on:

- ``inline``: one after the other in this process (the reference: no executor),
- ``local x1`` and ``local x2``: :class:`LocalExecutor` with 1 and 2 worker processes,
- ``dask x2``: :class:`DaskExecutor` on a 2-worker ``LocalCluster``.

Each executor is started, and warmed up with a 4-variant sweep, before its
clock starts (start-up and warm-up are printed apart); each run writes its own
fresh table, so nothing is skipped.  The executors are
interleaved within each repeat and the minimum over ``--repeat`` repeats is
kept.  Printed: variants/s, the ratio to inline, and the per-variant overhead
of Dask against local processes with the same number of workers
(``(t_dask2 - t_local2) / N`` and the same per worker).

Usage::

    python benchmarks/sweep.py [--variants 1000] [--repeat 1]

Measured 2026-11-22 on the 2-core development machine while seven other
agents ran their test suites (load average 13-14, so every number is a share
of a contended machine and the inline/local x1 pair is within the noise), one
repeat, 1,023 variants (31 x 33, before the grid was made exactly 1,000)::

    inline      303.36 s      3.4 variants/s  ratio to inline  1.00  (start-up + warm-up 0.93 s)
    local x1    182.72 s      5.6 variants/s  ratio to inline  1.66  (start-up + warm-up 4.73 s)
    local x2    143.16 s      7.1 variants/s  ratio to inline  2.12  (start-up + warm-up 1.45 s)
    dask x2     200.33 s      5.1 variants/s  ratio to inline  1.51  (start-up + warm-up 17.47 s)
    Dask overhead per variant vs local processes (2 workers): +55.89 ms wall, +111.78 ms of worker time

On an idle machine one variant (read YAML + 9 STL meshes through trimesh,
graph stage, tree model, M and bias) takes about 65 ms.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import tempfile
import time
from pathlib import Path

import yaml

from mbcompose.composer.config import load_pipeline
from mbcompose.composer.sweep.executors import DaskExecutor, InlineExecutor, LocalExecutor
from mbcompose.composer.sweep.run import run_sweep

ROOT = Path(__file__).resolve().parents[1]
SEEKER = ROOT / "samples" / "seeker" / "seeker.yaml"


def sweep_file(folder: Path, n: int) -> Path:
    """A pipeline file with ``n`` seeker variants (an a x b grid, a the largest divisor of n <= sqrt(n))."""
    a = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    b = n // a
    doc = {"input": str(SEEKER), "outputs": {"directory": str(folder / "out"), "report": False},
           "sweep": {"parameters": [
               {"path": "bodies.camera.mass", "linspace": {"start": 0.05, "stop": 0.5, "num": a}},
               {"name": "pitch_offset", "path": ["joints.pitch_a.origin[2]", "joints.pitch_b.origin[2]"],
                "linspace": {"start": 0.0, "stop": -9.0, "num": b}}]}}
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "sweep.yaml"
    target.write_text(yaml.safe_dump(doc))
    return target


def timed_run(executor, folder: Path, n: int) -> tuple[float, int]:
    config = load_pipeline(sweep_file(folder, n))
    t0 = time.perf_counter()
    result = run_sweep(config, executor)
    dt = time.perf_counter() - t0
    if result.failed or len(result.computed) != len(result.keys):
        raise SystemExit(f"benchmark sweep failed: {len(result.failed)} failed rows")
    return dt, len(result.keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variants", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("distributed").setLevel(logging.ERROR)
    executors = {"inline": InlineExecutor(), "local x1": LocalExecutor(1), "local x2": LocalExecutor(2),
                 "dask x2": DaskExecutor(workers=2)}
    startup = {}
    best: dict[str, float] = {name: math.inf for name in executors}
    n = 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, ex in executors.items():  # start workers and let each import mbcompose once
                t0 = time.perf_counter()
                ex.__enter__()
                timed_run(ex, Path(tmp) / f"warm-{name.replace(' ', '')}", 4)
                startup[name] = time.perf_counter() - t0
                logging.getLogger("distributed").setLevel(logging.ERROR)  # distributed resets it on start
            for rep in range(args.repeat):
                for name, ex in executors.items():
                    folder = Path(tmp) / f"{rep}-{name.replace(' ', '')}"
                    dt, n = timed_run(ex, folder, args.variants)
                    best[name] = min(best[name], dt)
                    print(f"  repeat {rep + 1}: {name:9s} {dt:8.2f} s", file=sys.stderr)
    finally:
        for ex in executors.values():
            ex.__exit__(None, None, None)
    print(f"seeker sweep, {n} variants, best of {args.repeat}:")
    for name in executors:
        rate = n / best[name]
        print(f"  {name:9s} {best[name]:8.2f} s  {rate:7.1f} variants/s  ratio to inline "
              f"{best['inline'] / best[name]:5.2f}  (start-up + warm-up {startup[name]:.2f} s)")
    overhead = (best["dask x2"] - best["local x2"]) / n
    print(f"  Dask overhead per variant vs local processes (2 workers): {1e3 * overhead:+.2f} ms wall, "
          f"{2e3 * overhead:+.2f} ms of worker time")


if __name__ == "__main__":
    main()
