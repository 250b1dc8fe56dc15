"""Sweeps on a Dask LocalCluster of 2 worker processes (one cluster for the module):
the same table as local processes, and a worker killed mid-sweep loses no row (issue 16)."""

from __future__ import annotations

import csv
import os
import signal

import pytest
from sweep_helpers import grid_3x3, write_sweep

from mbcompose.composer.config import load_pipeline
from mbcompose.composer.sweep.executors import DaskExecutor, InlineExecutor
from mbcompose.composer.sweep.run import run_sweep

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def dask_executor():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    client = distributed.Client(cluster)
    try:
        with DaskExecutor(client=client) as ex:
            yield ex
    finally:
        client.close()
        cluster.close()


def read_rows(path) -> dict[str, dict]:
    with open(path, newline="") as fh:
        return {row["key"]: {k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(fh)}


def test_a_two_worker_local_cluster_gives_the_same_table(tmp_path, dask_executor):
    on_dask = load_pipeline(write_sweep(tmp_path / "dask", grid_3x3()))
    here = load_pipeline(write_sweep(tmp_path / "inline", grid_3x3()))
    a = run_sweep(on_dask, dask_executor)
    b = run_sweep(here, InlineExecutor())
    assert a.keys == b.keys and len(a.computed) == 9
    assert read_rows(a.table) == read_rows(b.table)
    assert {r["status"] for r in read_rows(a.table).values()} == {"ok"}


def test_killing_a_worker_mid_sweep_still_completes_every_row(tmp_path, dask_executor):
    simulation = {"duration": 1.5, "samples": 11, "rtol": 1e-8, "atol": 1e-8,
                  "initial": {"q": {"pitch_a": 0.2}, "v": {"yaw_a": 1.0}}}
    config = load_pipeline(write_sweep(tmp_path, grid_3x3(), simulation=simulation))
    client = dask_executor.client
    killed = []

    def kill_one_worker(row):
        if not killed:
            pids = client.run(os.getpid)
            busy = client.processing()
            victim = next((w for w in pids if busy.get(w)), next(iter(pids)))
            killed.append((victim, len(busy.get(victim, ()))))
            os.kill(pids[victim], signal.SIGKILL)

    result = run_sweep(config, dask_executor, on_row=kill_one_worker)
    assert killed and killed[0][1] >= 1, "the killed worker had a task in hand"
    rows = read_rows(result.table)
    assert sorted(rows) == sorted(result.keys) and len(rows) == 9
    assert {r["status"] for r in rows.values()} == {"ok"}
    assert all(r["final_q[pitch_a]"] and r["energy_drift"] for r in rows.values())
    client.wait_for_workers(2, timeout=60)
