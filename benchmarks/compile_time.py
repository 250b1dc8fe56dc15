"""Benchmark: compile time of the compiled dynamics (first call after install) and cached load time.

Run ``python benchmarks/compile_time.py``.  Two child processes share an empty
numba cache directory (``NUMBA_CACHE_DIR``; the kernels keep theirs in its subfolder
``mbcompose-<hash of their source>``): the first compiles every kernel on its first call and
writes the cache (what the first use after an install or an edit of a kernel module costs), the
second loads the machine code from that cache (what every later process costs).  Each child
times ``import mbcompose.dynamics`` and the first call of each public function on a
7-body tree (one configuration, then a batch).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

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


def run_child(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    res = subprocess.run([sys.executable, "-P", "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    with tempfile.TemporaryDirectory() as cache_dir:
        first = run_child(cache_dir)
        cached = run_child(cache_dir)
    cpu = first.pop("cpu"), cached.pop("cpu")
    print(f"{'seconds':28s} {'first call (compile)':>21s} {'cached load':>12s}")
    for name in first:
        print(f"{name:28s} {first[name]:21.2f} {cached[name]:12.3f}")
    keys = [k for k in first if k != "import mbcompose.dynamics"]
    print(f"{'total of the first calls':28s} {sum(first[k] for k in keys):21.2f} {sum(cached[k] for k in keys):12.3f}")
    print(f"{'CPU time of the first calls':28s} {cpu[0]:21.2f} {cpu[1]:12.3f}")


if __name__ == "__main__":
    main()
