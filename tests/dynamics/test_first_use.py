"""First use in seconds (issue 27 point 4): with numba's cache not ready, a command runs the numpy
reference, says so on stderr, and one detached process fills the cache (a lock against a second one,
the ready marker written last); the numpy twin of the compiled fixed-step simulator takes the same
steps; Dask worker processes load the kernels from the on-disk cache instead of compiling them.

References: the compiled kernels (the shared, warm cache of this test session) for the numbers of the
numpy path, and the compiled fixed-step simulator for its numpy twin (the numpy ABA is their common
reference, tests/dynamics/test_compiled.py).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mbcompose import compose
from mbcompose import dynamics as dyn
from mbcompose.dynamics import compiled, dispatch
from mbcompose.dynamics.compiled.simulate_api import simulate_fixed_step
from mbcompose.dynamics.simulation.fixed_step import numpy_fixed_step
from trees import random_model, random_q

SEEKER = Path(__file__).resolve().parents[2] / "samples" / "seeker" / "seeker.yaml"


def _cli(*args, cache: Path, backend: str | None = None, cwd=None) -> subprocess.CompletedProcess:
    """``mbcompose ARGS`` in a fresh process whose kernels' cache lives under ``cache``."""
    env = {k: v for k, v in os.environ.items() if k != dispatch.BACKEND_ENV}
    env["NUMBA_CACHE_DIR"] = str(cache)
    if backend:
        env[dispatch.BACKEND_ENV] = backend
    return subprocess.run([sys.executable, "-P", "-m", "mbcompose", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=900)


def _kernels_folder(cache: Path) -> Path:
    return cache / f"mbcompose-{compiled.CACHE_DIR.name}"


def _wait_for_background_compile(folder: Path, timeout: float = 1800.0) -> None:
    """Until the lock of ``folder`` is gone (the background compilation ended, however)."""
    deadline = time.monotonic() + timeout
    while (folder / compiled.LOCK).exists():
        assert time.monotonic() < deadline, "the background compilation did not end"
        time.sleep(2.0)


@pytest.mark.slow
def test_a_first_eval_runs_numpy_says_so_and_the_background_compile_fills_the_cache(tmp_path):
    model = compose(str(SEEKER)).model
    with dispatch.backend("compiled"):
        expected = dyn.mass_matrix(model, model.neutral())
    first = _cli("eval", str(SEEKER), "mass-matrix", "--format", "json", cache=tmp_path)
    assert first.returncode == 0, first.stderr
    assert dispatch.FIRST_USE in first.stderr                     # not a terminal: said all the same
    folder = _kernels_folder(tmp_path)
    assert (folder / compiled.LOCK).exists() or compiled.cache_is_ready(folder)
    M = np.array(json.loads(first.stdout)["value"])
    np.testing.assert_allclose(M, expected, rtol=1e-12, atol=0.0)
    again = _cli("eval", str(SEEKER), "mass-matrix", cache=tmp_path)   # while it compiles: no second one
    assert again.returncode == 0 and "being compiled in the background" in again.stderr
    _wait_for_background_compile(folder)
    assert compiled.cache_is_ready(folder), (folder / "compile.log").read_text()
    assert next(folder.rglob("simulate_kernels.simulate-*.nbi"), None) is not None
    warm = _cli("eval", str(SEEKER), "mass-matrix", "--format", "json", cache=tmp_path)
    assert warm.returncode == 0 and "numpy path" not in warm.stderr and "compiling" not in warm.stderr
    np.testing.assert_allclose(np.array(json.loads(warm.stdout)["value"]), expected, rtol=1e-12, atol=0.0)


def test_a_first_fixed_step_simulation_takes_the_numpy_twin(tmp_path):
    """Backend ``numpy`` for the process: no compilation, no background process, the same trajectory as
    the compiled simulator (in this process, warm cache)."""
    out = tmp_path / "s.csv"
    run = _cli("simulate", str(SEEKER), "--duration", "0.2", "--integrator", "rk4", "-o", str(out), "--no-plot",
               "--backend", "numpy", cache=tmp_path / "cache")
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "cache").exists()                       # nothing compiled, nothing started
    numpy_rows = np.genfromtxt(out, delimiter=",", names=True)
    compiled_out = tmp_path / "c.csv"
    from click.testing import CliRunner

    from mbcompose.composer.cli import main
    result = CliRunner().invoke(main, ["simulate", str(SEEKER), "--duration", "0.2", "--integrator", "rk4", "-o",
                                       str(compiled_out), "--no-plot", "--backend", "compiled"])
    assert result.exit_code == 0, result.output
    compiled_rows = np.genfromtxt(compiled_out, delimiter=",", names=True)
    assert numpy_rows.dtype.names == compiled_rows.dtype.names and len(numpy_rows) == 201
    for name in numpy_rows.dtype.names:
        np.testing.assert_allclose(numpy_rows[name], compiled_rows[name], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("types", [("revolute", "prismatic", "cylindrical", "universal"),
                                   ("free", "spherical", "revolute", "planar")])
@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_the_numpy_fixed_step_twin_takes_the_compiled_simulators_steps_and_stops(types, integrator):
    model, rng = random_model(4, n=6, types=types)
    q0, v0 = random_q(model, rng), rng.normal(size=model.nv) * 0.5
    damping, tau = rng.uniform(0, 0.3, size=model.nv), rng.normal(size=model.nv)
    lower, upper = np.full(model.nv, -np.inf), np.full(model.nv, np.inf)
    for k, jtype in enumerate(model.joint_types):
        if jtype in ("revolute", "prismatic"):        # a narrow range around the start: stops on the way
            j, i = int(model.v_offset[k]), int(model.q_offset[k])
            lower[j], upper[j] = q0[i] - 0.05, q0[i] + 0.05
    args = (model, q0, v0, 1e-3, 300, integrator, tau, damping, lower, upper)
    ours, theirs = numpy_fixed_step(*args, stride=10), simulate_fixed_step(*args, stride=10)
    assert ours.limit_contacts == theirs.limit_contacts > 0
    np.testing.assert_allclose(ours.t, theirs.t)
    np.testing.assert_allclose(ours.Q, theirs.Q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.V, theirs.V, rtol=0, atol=1e-11)
    with dispatch.backend("numpy"), pytest.raises(RuntimeError, match="numpy twin"):
        simulate_fixed_step(*args)


class _Spawned:
    pid = os.getpid()          # a live process


@pytest.fixture
def no_spawn(monkeypatch):
    """compile_in_background's Popen recorded instead of run."""
    calls = []

    def popen(*args, **kwargs):
        calls.append(args[0])
        return _Spawned()
    monkeypatch.setattr(compiled.subprocess, "Popen", popen)
    return calls


def test_one_background_compile_at_a_time_and_a_stale_lock_is_taken_over(tmp_path, no_spawn):
    folder = tmp_path / "kernels"
    assert compiled.compile_in_background(folder) and len(no_spawn) == 1
    assert (folder / compiled.LOCK).read_text() == str(os.getpid())
    assert compiled.compiling(folder)
    assert not compiled.compile_in_background(folder) and len(no_spawn) == 1     # its owner lives: not again
    (folder / compiled.LOCK).write_text(str(2 ** 22 + 1))     # no such process (above Linux's largest pid)
    assert not compiled.compiling(folder) and not (folder / compiled.LOCK).exists()
    assert compiled.compile_in_background(folder) and len(no_spawn) == 2
    (folder / compiled.LOCK).unlink()
    (folder / compiled.READY).write_text("")
    assert not compiled.compile_in_background(folder) and len(no_spawn) == 2     # ready: nothing to do


def test_of_two_processes_racing_for_the_lock_one_wins(tmp_path):
    folder = tmp_path / "kernels"
    race = ("import sys, time; from mbcompose.dynamics import compiled; from pathlib import Path; "
            "t = float(sys.argv[2]); time.sleep(max(0.0, t - time.time())); "
            "print(compiled._take_lock(Path(sys.argv[1])) is not None)")
    start = time.time() + 1.5
    procs = [subprocess.Popen([sys.executable, "-P", "-c", race, str(folder), str(start)], stdout=subprocess.PIPE,
                              text=True) for _ in range(4)]
    won = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert won.count("True") == 1, won


def test_the_process_backend_follows_the_environment_and_the_cache(monkeypatch, tmp_path, caplog, no_spawn):
    """(numba's own cache folder is not moved here: nothing is compiled)"""
    model = random_model(1, n=3)[0]
    monkeypatch.setattr(compiled, "CACHE_DIR", tmp_path / "kernels")
    cases = (("numpy", "numpy", 0, False), ("compiled", "auto", 0, False), ("", "auto", 0, False),
             ("auto", "numpy", 1, True))
    for setting, backend, spawned, notice in cases:
        monkeypatch.setenv(dispatch.BACKEND_ENV, setting)
        dispatch.forget_process_backend()
        caplog.clear()
        caplog.set_level(logging.WARNING, logger=dispatch.log.name)
        try:
            assert dispatch.current_backend() == backend
            with dispatch.backend("compiled"):
                assert dispatch.current_backend() == "compiled"
            reference = dispatch.REFERENCE["tree"]["mass_matrix"]
            assert (dispatch.algorithm(model, "mass_matrix") is reference) == (backend == "numpy")
        finally:
            dispatch.forget_process_backend()
        assert len(no_spawn) == spawned
        assert any(dispatch.FIRST_USE in r.getMessage() for r in caplog.records) == notice
    (tmp_path / "kernels" / compiled.LOCK).unlink(missing_ok=True)
    (tmp_path / "kernels" / compiled.READY).write_text("")
    monkeypatch.setenv(dispatch.BACKEND_ENV, "auto")
    try:
        assert dispatch.current_backend() == "auto"          # ready: the compiled kernels
    finally:
        dispatch.forget_process_backend()


WORKER = """
from mbcompose.dynamics.compiled import entry_kernels as ek, CACHE_DIR
from mbcompose import dynamics as dyn
import numpy as np
m = dyn.build_model([dyn.BodySpec("b", -1, "revolute", "j", np.eye(3), np.zeros(3), 1.0, np.zeros(3), np.eye(3))])
dyn.mass_matrix(m, m.neutral())
result = (str(CACHE_DIR), sum(ek.crba.stats.cache_hits.values()), sum(ek.crba.stats.cache_misses.values()))
"""


@pytest.mark.slow
def test_dask_worker_processes_load_the_kernels_from_the_shared_cache():
    """Each worker process of a LocalCluster finds the kernels in the on-disk cache this session filled
    (cache hits, no misses): no worker compiles them again."""
    distributed = pytest.importorskip("dask.distributed")
    model = random_model(1, n=2)[0]
    dyn.mass_matrix(model, model.neutral())                          # this process filled (or loaded) the cache

    def probe():
        scope: dict = {}
        exec(WORKER, scope)                                       # noqa: S102 -- the probe above, in the worker
        return scope["result"]

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cl, \
            distributed.Client(cl) as client:
        results = client.run(probe)
    assert len(results) == 2
    for folder, hits, misses in results.values():
        assert folder == str(compiled.CACHE_DIR) and hits >= 1 and misses == 0
