"""Benchmark: first use with an empty compiled-code cache, and later (warm) use (issue 27 point 4).

Run ``python benchmarks/compile_time.py [--kernels]``.  Every child process gets a fresh temporary
numba cache directory (``NUMBA_CACHE_DIR``; the kernels keep theirs in its subfolder
``mbcompose-<hash of their source>``), never the user's cache:

1. cold: ``mbcompose eval samples/seeker/seeker.yaml mass-matrix`` and ``mbcompose simulate
   samples/seeker/seeker.yaml --duration 0.2 --integrator rk4 -o s.csv`` (the CLI's default
   ``--backend auto``: the numpy path while one background process compiles), and the first
   ``dynamics.mass_matrix`` of ``mbcompose.compose`` of the seeker, in a process with
   ``MBCOMPOSE_BACKEND=auto`` and without it (the library's default: numba compiles in the process);
2. the background compilation's own time (until its ready marker), then the same three warm.

Printed: wall time and the children's CPU time of each (the machine may be shared: CPU time is the
steadier figure), the load average at the start, the 10 s goal of the issue.  ``--kernels`` adds the
per-kernel table of the first call of every public function on a 7-body tree, compiled in the
process and then loaded from the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEEKER = ROOT / "samples" / "seeker" / "seeker.yaml"
COMMANDS = {
    "eval mass-matrix": ["eval", str(SEEKER), "mass-matrix"],
    "simulate 0.2 s rk4": ["simulate", str(SEEKER), "--duration", "0.2", "--integrator", "rk4", "-o", "s.csv",
                           "--no-plot"],
}
FIRST_MASS_MATRIX = f"""
import time
t0 = time.perf_counter()
import mbcompose
from mbcompose import dynamics
m = mbcompose.compose({str(SEEKER)!r}).model
t1 = time.perf_counter()
dynamics.mass_matrix(m, m.neutral())
print(time.perf_counter() - t1, t1 - t0)
"""


def _environment(cache: Path, backend: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "MBCOMPOSE_BACKEND"}
    env["NUMBA_CACHE_DIR"] = str(cache)
    if backend:
        env["MBCOMPOSE_BACKEND"] = backend
    return env


def timed(args, cache: Path, cwd: Path, backend: str | None = None) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, its stdout) of ``python -P ARGS`` with the kernels' cache under ``cache``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-P", *args], env=_environment(cache, backend), cwd=cwd,
                         capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode:
        raise RuntimeError(f"{args} failed: {res.stderr}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, res.stdout


def command(name: str, cache: Path, cwd: Path, backend: str | None = None):
    return timed(["-m", "mbcompose", *COMMANDS[name]], cache, cwd, backend)


def first_mass_matrix(cache: Path, cwd: Path, backend: str | None):
    """(wall s of the first mass_matrix call, CPU s of the whole child, wall s of import + compose)."""
    wall, cpu, out = timed(["-c", FIRST_MASS_MATRIX], cache, cwd, backend)
    call, setup = map(float, out.split())
    return call, cpu, setup


def wait_until_ready(folder: Path, timeout: float = 3600.0) -> float:
    """Seconds until the background compilation of ``folder`` ends (its lock removed)."""
    t0 = time.perf_counter()
    time.sleep(1.0)
    while (folder / "compile.lock").exists():
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError("the background compilation did not end")
        time.sleep(1.0)
    if not (folder / "ready").exists():
        raise RuntimeError(f"the background compilation failed: {(folder / 'compile.log').read_text()}")
    return time.perf_counter() - t0


def first_use_table() -> None:
    from mbcompose.dynamics.compiled import source_hash

    print(f"load average at the start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cache, cwd = tmp / "cache", tmp
        folder = cache / f"mbcompose-{source_hash()}"
        cold = {name: command(name, cache, cwd) for name in COMMANDS}          # the first starts the compilation
        cold["first mass_matrix (MBCOMPOSE_BACKEND=auto)"] = first_mass_matrix(cache, cwd, "auto")
        ready = wait_until_ready(folder)
        warm = {name: command(name, cache, cwd) for name in COMMANDS}
        warm["first mass_matrix (MBCOMPOSE_BACKEND=auto)"] = first_mass_matrix(cache, cwd, "auto")
        warm["first mass_matrix (library default)"] = first_mass_matrix(cache, cwd, None)
        cold["first mass_matrix (library default)"] = first_mass_matrix(tmp / "cache2", cwd, None)
        for name in warm:
            rows.append((name, cold[name], warm[name]))
    print(f"{'seconds (wall / CPU of the process)':46s} {'empty cache':>16s} {'warm cache':>16s}")
    for name, c, w in rows:
        print(f"{name:46s} {c[0]:7.2f} / {c[1]:6.2f} {w[0]:7.2f} / {w[1]:6.2f}")
    print(f"background compilation until ready (wall, started by the first command): {ready:.0f} s")
    worst = max(cold[name][0] for name in COMMANDS)
    print(f"slowest first command: {worst:.1f} s wall (goal: 10 s); the mass_matrix rows time the call alone")


CHILD = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
from mbcompose import dynamics as dyn
t_import = time.perf_counter() - t0
bodies = [dyn.BodySpec(f"b{k}", k - 1, "revolute" if k else "free", f"j{k}", np.eye(3), np.array([0, 0, 0.1]),
                       1.0, np.array([0, 0, 0.05]), np.eye(3) * 0.01, axis=(0, 1, 0)) for k in range(7)]
m = dyn.build_model(bodies)
q, v = m.neutral(), np.zeros(m.nv)
qb, vb = np.tile(q, (4, 1)), np.zeros((4, m.nv))
calls = {
    "inverse_dynamics": lambda: dyn.inverse_dynamics(m, q, v, v),
    "mass_matrix": lambda: dyn.mass_matrix(m, q),
    "forward_dynamics": lambda: dyn.forward_dynamics(m, q, v, v),
    "mass_matrix_inverse": lambda: dyn.mass_matrix_inverse(m, q),
    "mass_matrix_logdet": lambda: dyn.mass_matrix_logdet(m, q),
    "jacobian": lambda: dyn.jacobian(m, q, 6),
    "inverse_dynamics batch": lambda: dyn.inverse_dynamics(m, qb, vb, vb),
    "mass_matrix batch": lambda: dyn.mass_matrix(m, qb),
    "forward_dynamics batch": lambda: dyn.forward_dynamics(m, qb, vb, vb),
}
out = {"import mbcompose.dynamics": t_import}
c0 = time.process_time()
for name, f in calls.items():
    t0 = time.perf_counter()
    f()
    out[name] = time.perf_counter() - t0
out["cpu"] = time.process_time() - c0
print(json.dumps(out))
"""


def kernel_table() -> None:
    """The first call of each public function compiling in the process (library default), then loading."""
    with tempfile.TemporaryDirectory() as cache:
        first = json.loads(timed(["-c", CHILD], Path(cache), Path(cache), "compiled")[2].strip().splitlines()[-1])
        cached = json.loads(timed(["-c", CHILD], Path(cache), Path(cache), "compiled")[2].strip().splitlines()[-1])
    cpu = first.pop("cpu"), cached.pop("cpu")
    print(f"\n{'seconds':28s} {'first call (compile)':>21s} {'cached load':>12s}")
    for name in first:
        print(f"{name:28s} {first[name]:21.2f} {cached[name]:12.3f}")
    keys = [k for k in first if k != "import mbcompose.dynamics"]
    print(f"{'total of the first calls':28s} {sum(first[k] for k in keys):21.2f} {sum(cached[k] for k in keys):12.3f}")
    print(f"{'CPU time of the first calls':28s} {cpu[0]:21.2f} {cpu[1]:12.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", action="store_true", help="also the per-kernel compile and load table")
    args = parser.parse_args()
    first_use_table()
    if args.kernels:
        kernel_table()


if __name__ == "__main__":
    main()
