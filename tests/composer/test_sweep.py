"""Design sweeps on this machine: every variant equals composing it alone, stops lose
nothing and reruns compute nothing twice, bad variants are failed rows, bad configs are
clean errors (issue 16)."""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys

import numpy as np
import pytest
import yaml
from sweep_helpers import ROOT, edited_seeker, grid_3x3, reference_outputs, write_sweep

import mbcompose
from mbcompose.composer.config import load_pipeline
from mbcompose.composer.sweep.executors import InlineExecutor, LocalExecutor
from mbcompose.composer.sweep.run import run_sweep, table_path
from mbcompose.dynamics.simulation import simulate
from mbcompose.parsers.errors import InputError

CLI = [sys.executable, "-P", "-m", "mbcompose"]


def read_rows(path) -> dict[str, dict]:
    with open(path, newline="") as fh:
        return {row["key"]: row for row in csv.DictReader(fh)}


def test_five_random_variants_of_the_seeker_sample_equal_composing_each_alone(tmp_path):
    doc = yaml.safe_load((ROOT / "samples/seeker/sweep.yaml").read_text())
    doc["input"] = str(ROOT / "samples/seeker/seeker.yaml")
    doc["outputs"]["directory"] = str(tmp_path / "out")
    target = tmp_path / "sweep.yaml"
    target.write_text(yaml.safe_dump(doc))
    config = load_pipeline(target)
    result = run_sweep(config, LocalExecutor(2))
    rows = read_rows(result.table)
    assert len(rows) == 100 and len(result.computed) == 100 and not result.failed
    assert {r["status"] for r in rows.values()} == {"ok"}
    variants = dict(zip(result.keys, config.sweep.variants()))
    for key in random.Random(16).sample(result.keys, 5):
        mass, offset = variants[key]["bodies.camera.mass"], variants[key]["pitch_offset"]
        ref = reference_outputs(edited_seeker(tmp_path, mass, offset))
        row = rows[key]
        assert int(row["dof"]) == ref["dof"] == 2
        assert float(row["total_mass"]) == pytest.approx(ref["total_mass"], rel=1e-12)
        names = ref["names"]
        for i, a in enumerate(names):
            assert float(row[f"bias[{a}]"]) == pytest.approx(ref["bias"][i], rel=1e-9, abs=1e-15)
            assert float(row[f"eig_M[{i}]"]) == pytest.approx(ref["eig"][i], rel=1e-9)
            for j in range(i, len(names)):
                assert float(row[f"M[{a},{names[j]}]"]) == pytest.approx(ref["M"][i, j], rel=1e-9, abs=1e-15)
    # the sweep varies what it says: the camera's mass shows in the total, the offset in M
    masses = {round(float(r["total_mass"]) - float(r["bodies.camera.mass"]), 12) for r in rows.values()}
    assert len(masses) == 1
    pitch = {float(r["M[pitch_a,pitch_a]"]) for r in rows.values() if float(r["bodies.camera.mass"]) == 0.05}
    assert len(pitch) == 10


def test_a_stopped_sweep_keeps_its_rows_and_the_rerun_computes_no_variant_twice(tmp_path):
    config = load_pipeline(write_sweep(tmp_path, grid_3x3()))
    seen = []

    def stop_after_four(row):
        seen.append(row["key"])
        if len(seen) == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(config, LocalExecutor(2), on_row=stop_after_four)
    first = read_rows(table_path(config))
    assert sorted(first) == sorted(seen)
    # a crash in the middle of writing a row leaves a cut line: it is dropped and recomputed
    with open(table_path(config), "a") as fh:
        fh.write("deadbeef,ok,,0.1,0.3")
    again = run_sweep(config, InlineExecutor())
    assert set(again.computed).isdisjoint(first) and set(again.skipped) == set(first)
    assert sorted(again.computed + again.skipped) == sorted(again.keys) and len(again.keys) == 9
    final = read_rows(table_path(config))
    assert sorted(final) == sorted(again.keys)
    assert all(final[k] == first[k] for k in first)
    third = run_sweep(config, InlineExecutor())
    assert third.computed == [] and len(third.skipped) == 9


def test_a_changed_input_or_setting_is_computed_again(tmp_path):
    config = load_pipeline(write_sweep(tmp_path, grid_3x3()[:1]))
    first = run_sweep(config, InlineExecutor())
    doc = yaml.safe_load(config.source.read_text())
    doc["options"] = {"redundant_joints": "keep"}
    config.source.write_text(yaml.safe_dump(doc))
    second = run_sweep(load_pipeline(config.source), InlineExecutor())
    assert len(second.computed) == 3 and set(second.keys).isdisjoint(first.keys)


def test_a_negative_mass_is_a_failed_row_with_the_clean_error_and_the_others_complete(tmp_path):
    params = [{"path": "bodies.camera.mass", "values": [0.2, -0.1, 0.3]},
              {"path": "joints.pitch_a.limits.lower", "values": [-20, 30]}]
    target = write_sweep(tmp_path, params)
    config = load_pipeline(target)
    result = run_sweep(config, InlineExecutor())
    rows = read_rows(result.table)
    assert len(rows) == 6
    failed = {k: r for k, r in rows.items() if r["status"] == "failed"}
    assert sorted(failed) == sorted(result.failed)
    by_value = {(r["bodies.camera.mass"], r["joints.pitch_a.limits.lower"]): r for r in rows.values()}
    line = next(i for i, t in enumerate(target.read_text().splitlines(), 1) if "bodies.camera.mass" in t)
    assert by_value[("-0.1", "-20.0")]["error"] == (
        f"error: {target}:{line}: bodies.camera.mass: must be > 0, got -0.1")
    # a swept YAML value the reader refuses: its check, located at the sweep line
    assert by_value[("0.2", "30.0")]["error"].startswith(f"error: {target}:")
    assert "joints[2].limits: lower limit 0.523599 is above upper limit 0.436332" in by_value[("0.2", "30.0")]["error"]
    assert by_value[("0.2", "-20.0")]["status"] == "ok" and by_value[("0.3", "-20.0")]["status"] == "ok"
    assert all("Traceback" not in r["error"] and "\n" not in r["error"] for r in rows.values())


@pytest.mark.parametrize("path, expected", [
    ("bodies.camra.mass", "did you mean 'camera'?"),
    ("joints.pitch_a.orgin[2]", "did you mean 'origin'?"),
    ("joints.pitch_a.origin[5]", "index 5 is out of range"),
    ("options.redundant_joint", "did you mean 'redundant_joints'?"),
    ("materials.aluminum_x.density", "did you mean 'aluminum'?"),
    ("bodie.camera.mass", "did you mean 'bodies'?"),
    ("joints.pitch_a..origin", "malformed parameter path"),
    ("joints.pitch_b.motr.max_effort", "did you mean 'motor'?"),
    ("joints.pitch_b.motor.max_efort", "did you mean 'max_effort'?"),
])
def test_a_mistyped_parameter_path_is_an_input_error_with_a_suggestion(tmp_path, path, expected):
    target = write_sweep(tmp_path, [{"path": path, "values": [1.0]}])
    with pytest.raises(InputError) as info:
        load_pipeline(target)
    assert expected in str(info.value)
    assert info.value.file == str(target) and info.value.line is not None


def test_zip_random_and_linspace_values(tmp_path):
    params = [{"path": "materials.aluminium.density",
               "random": {"distribution": "uniform", "low": 2600, "high": 2800, "count": 4, "seed": 7}},
              {"path": "options.redundant_joints", "values": ["remove", "keep", "remove", "keep"]}]
    config = load_pipeline(write_sweep(tmp_path, params, combine="zip"))
    variants = config.sweep.variants()
    assert len(variants) == 4 and [v["options.redundant_joints"] for v in variants][:2] == ["remove", "keep"]
    draws = [v["materials.aluminium.density"] for v in variants]
    assert draws == list(np.random.default_rng(7).uniform(2600, 2800, 4))
    assert load_pipeline(config.source).sweep.variants() == variants
    result = run_sweep(config, InlineExecutor())
    rows = read_rows(result.table)
    assert {r["status"] for r in rows.values()} == {"ok"}
    # keeping the redundant bearings closes loops: dof stays 2, the mass scales with the density
    for r in rows.values():
        assert int(r["dof"]) == 2
    lin = load_pipeline(write_sweep(tmp_path, [{"path": "gravity[2]", "linspace": [-1000, -9810, 3]}], "lin"))
    assert [v["gravity[2]"] for v in lin.sweep.variants()] == [-1000.0, -5405.0, -9810.0]


def test_the_sweep_page_has_the_table_and_a_figure_per_output(tmp_path):
    params = [{"path": "bodies.camera.mass", "values": [0.1, 0.2, -1.0]}]
    config = load_pipeline(write_sweep(tmp_path, params, record=["dof", "total_mass", "mass_matrix_eigenvalues"],
                                       report=True))
    result = run_sweep(config, InlineExecutor())
    page = table_path(config).with_suffix(".html")
    assert page in result.outputs
    text = page.read_text()
    assert text.count("<img") == 4  # dof, total_mass, eig_M[0], eig_M[1] against the camera mass
    assert text.count("<tr>") >= 3 + 1 + 1  # table rows, failed-variants row
    assert "must be &gt; 0, got -1" in text


def test_the_cli_runs_a_sweep_and_reports_bad_configs_in_one_line(tmp_path):
    target = write_sweep(tmp_path, [{"path": "bodies.camera.mass", "values": [0.1, -0.1]}],
                         executor={"kind": "local", "workers": 1})
    proc = subprocess.run([*CLI, "run", str(target)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr                  # the documented code of failed variants
    assert "ok: 2 variants (2 computed, 0 already done, 1 failed)" in proc.stdout
    assert "warning: 1 variant failed" in proc.stderr
    assert "Traceback" not in proc.stderr
    bad = write_sweep(tmp_path, [{"path": "bodies.camera.mas", "values": [0.1]}], "bad")
    proc = subprocess.run([*CLI, "run", str(bad)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith(f"error: {bad}:") and len(proc.stderr.strip().splitlines()) == 1
    assert "did you mean 'mass'?" in proc.stderr


def test_parquet_table_when_pyarrow_is_installed(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    config = load_pipeline(write_sweep(tmp_path, grid_3x3()[:1]))
    result = run_sweep(config, InlineExecutor())
    table = pq.read_table(table_path(config).with_suffix(".parquet")).to_pydict()
    rows = read_rows(result.table)
    assert table["key"] == result.keys
    assert [float(rows[k]["total_mass"]) for k in result.keys] == table["total_mass"]


def test_the_local_executor_replaces_a_killed_worker_and_completes_every_row(tmp_path):
    simulation = {"duration": 1.0, "samples": 11, "rtol": 1e-10, "atol": 1e-10,
                  "initial": {"q": {"pitch_a": "0.2rad"}}, "torques": {"pitch_a": 0.002}}
    config = load_pipeline(write_sweep(tmp_path, grid_3x3(), simulation=simulation))
    executor, killed = LocalExecutor(2), []

    def kill_a_worker(row):
        if not killed:
            pid = next(iter(executor._pool._processes))
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)

    with executor:
        result = run_sweep(config, executor, on_row=kill_a_worker)
    rows = read_rows(result.table)
    assert killed and sorted(rows) == sorted(result.keys)
    assert {r["status"] for r in rows.values()} == {"ok"}
    assert {float(r["peak_torque"]) for r in rows.values()} == {0.002}
    # the simulation metrics of one variant against simulating the edited file on its own
    row = next(r for r in rows.values() if (r["bodies.camera.mass"], r["pitch_offset"]) == ("0.3", "-6.0"))
    composition = mbcompose.compose(edited_seeker(tmp_path, 0.3, -6.0))
    model = composition.model
    q0, tau = model.neutral(), np.zeros(model.nv)
    q0[model.q_slice("pitch_a")], tau[model.v_slice("pitch_a")] = 0.2, 0.002
    sim = simulate(model, q0, np.zeros(model.nv), 1.0, 11, torque=lambda t, q, v: tau, rtol=1e-10, atol=1e-10,
                   joints=composition.joint_properties)    # the seeker's joint limits (+-25 deg) apply
    for i, name in enumerate(sim.columns):
        assert float(row[f"final_q[{name}]"]) == pytest.approx(sim.q[-1, i], abs=1e-8)
        assert float(row[f"final_v[{name}]"]) == pytest.approx(sim.v[-1, i], abs=1e-8)


def test_a_batch_over_inputs_runs_its_inputs_as_tasks_on_the_given_executor(tmp_path):
    from mbcompose.composer.pipeline import run_pipeline

    class Counting(InlineExecutor):
        tasks: list = []

        def map_unordered(self, fn, tasks):
            tasks = list(tasks)
            Counting.tasks.extend(t.input for t in tasks)
            return super().map_unordered(fn, tasks)

    inputs = [str(ROOT / "samples/double_pendulum/double_pendulum.yaml"), str(ROOT / "samples/fourbar/fourbar.yaml")]
    target = tmp_path / "batch.yaml"
    target.write_text(yaml.safe_dump({"inputs": inputs, "outputs": {"directory": str(tmp_path / "out"),
                                                                     "graphs": [], "report": False}}))
    results = run_pipeline(load_pipeline(target), executor=Counting())
    assert [str(p) for p in Counting.tasks] == inputs
    assert [str(r.input) for r in results] == inputs and all(r.ok for r in results)


def test_numpy_numbers_are_written_as_numbers_a_csv_reader_reads_back_exactly():
    """numpy 2's ``repr(np.float64(x))`` is ``np.float64(x)``: the table writes the Python number."""
    import csv
    import io

    import numpy as np

    from mbcompose.composer.sweep.table import cell_text

    values = [np.float64(2.21e-10), np.float32(0.1), np.int64(7), np.bool_(True), [np.float64(1 / 3), np.int32(2)]]
    buf = io.StringIO()
    csv.writer(buf).writerow([cell_text(v) for v in values])
    row = next(csv.reader(io.StringIO(buf.getvalue())))
    assert float(row[0]) == 2.21e-10 and float(row[1]) == float(np.float32(0.1)) and int(row[2]) == 7
    assert row[3] == "true" and json.loads(row[4]) == [1 / 3, 2]
