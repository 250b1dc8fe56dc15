"""Scale: compose is linear in the number of links (issue 12, issue 14 point 3).

A chain and a star of revolute links compose in a fresh process that reports
its own peak resident memory (``VmHWM`` of ``/proc/self/status``: unlike
``ru_maxrss``, which Linux carries over from the parent through ``vfork`` and
``exec``, it counts this process's memory only), so the numbers belong to
this input alone.  The dense seed-004 matrices alone would take
``(v-1) x e x 8`` bytes: 3.4 GB for 5,000 links, 54 GB for 20,000.  Time is
not asserted (benchmarks/scale.py measures it).
"""

import json
import subprocess
import sys

import numpy as np
import pytest

from mbcompose.graph.matrices import topology_matrices
from mbcompose.graph.system_graph import extended_graph
from mbcompose.parsers.urdf.reader import read_urdf

import scale_models

PEAK = """
def peak_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024
"""

CHILD = PEAK + """
import json, sys
import mbcompose
c = mbcompose.compose(sys.argv[1])
an = c.analysis
print(json.dumps({"nv": c.model.nv, "bodies": len(c.model.body_names), "dof": an.dof, "loops": len(an.loops),
                  "composites": len(an.composites), "peak_mb": peak_mb()}))
"""

INSPECT_CHILD = PEAK + """
import io, json, sys, contextlib
from mbcompose.composer.cli.commands import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    main(["inspect", sys.argv[1], "--format", "json"], standalone_mode=False)
doc = json.loads(out.getvalue())
print(json.dumps({"dof": doc["dof"], "bodies": len(doc["bodies"]), "reduced_joints": len(doc["reduced_joints"]),
                  "peak_mb": peak_mb()}))
"""


def run_child(script: str, path) -> dict:
    res = subprocess.run([sys.executable, "-P", "-c", script, str(path)], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


MAKERS = {"chain": scale_models.chain_urdf, "star": scale_models.star_urdf}


@pytest.mark.parametrize("shape", ["chain", "star"])
def test_5000_links_compose_in_bounded_memory(shape, tmp_path):
    n = 5000
    path = scale_models.write(tmp_path / f"{shape}.urdf", MAKERS[shape](n))
    got = run_child(CHILD, path)
    # n revolute joints below a base welded to ground: n freedoms, no loop, n + 1 bodies
    assert (got["nv"], got["dof"], got["loops"], got["bodies"], got["composites"]) == (n, n, 0, n + 1, n + 1)
    assert got["peak_mb"] < 700, got


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["chain", "star"])
def test_20000_links_inspect_within_1_5_gb(shape, tmp_path):
    n = 20000
    path = scale_models.write(tmp_path / f"{shape}.urdf", MAKERS[shape](n))
    got = run_child(INSPECT_CHILD, path)
    assert (got["dof"], got["bodies"], got["reduced_joints"]) == (n, n + 1, n + 1)
    assert got["peak_mb"] < 1536, got


def test_matrices_of_a_long_chain_have_linear_nonzeros_and_close_every_circuit(tmp_path):
    n = 3000
    sg = extended_graph(read_urdf(scale_models.write(tmp_path / "chain.urdf", scale_models.chain_urdf(n))))
    tm = topology_matrices(sg)
    v, e = len(sg.nodes), len(sg.elements)
    assert tm.A.nnz <= 2 * e
    # every chord's circuit has at most 4 tree branches (tree of body and arm elements, depth 2)
    assert np.all(np.diff(tm.B.indptr) <= 5)
    assert tm.cutset.nnz == (v - 1) + tm.B_T.nnz
    # orthogonality A B^T = 0 (Eq. 4) and the chord block of the cut-set matrix solves A_T X = A_C (Eq. 2)
    assert not (tm.A_ordered() @ tm.B.T).count_nonzero()
    X = tm.cutset[:, v - 1:]
    assert not (tm.A_T @ X - tm.A_C).count_nonzero()
