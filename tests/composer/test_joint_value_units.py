"""Joint values with units (``--q pitch_a=20deg``, ``initial.q: {pitch_a: 10deg}``): converted to SI
exactly, a wrong unit is one error, and an SI value that only makes sense in degrees says so."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose.composer.cli import main
from mbcompose.composer.simulation import JointValueError, joint_values_array

SAMPLES = Path(__file__).parents[2] / "samples"


@pytest.mark.parametrize("text, si", [("30deg", math.pi / 6), ("30 deg", math.pi / 6), ("-0.5rad", -0.5),
                                      ("15mm", 0.015), ("2.5cm", 0.025), ("90deg/s", math.pi / 2),
                                      ("1e3mm/s", 1.0)])
def test_units_convert_to_si(text, si):
    assert joint_values_array("j", text)[0] == pytest.approx(si, rel=1e-15)


@pytest.mark.parametrize("text", ["30dg", "deg", "30 degrees", "1e999deg"])
def test_bad_units_are_one_error(text):
    with pytest.raises(JointValueError, match="joint 'j'"):
        joint_values_array("j", text)


def test_cli_degrees_equal_radians():
    runner = CliRunner()
    out = []
    for q in ("crank_pivot=30deg", f"crank_pivot={math.pi / 6!r}"):
        r = runner.invoke(main, ["eval", str(SAMPLES / "fourbar" / "fourbar.yaml"), "mass-matrix", "--q", q,
                                 "--format", "json"])
        assert r.exit_code == 0, r.output
        out.append(np.array(json.loads(r.output)["value"]))
    np.testing.assert_array_equal(out[0], out[1])
    r = runner.invoke(main, ["eval", str(SAMPLES / "fourbar" / "fourbar.yaml"), "mass-matrix", "--q", "crank_pivot=30dg"])
    assert r.exit_code == 2 and "number with a unit" in r.output


def test_si_value_that_fits_only_in_degrees_gets_a_hint(tmp_path, caplog):
    r = CliRunner().invoke(main, ["simulate", str(SAMPLES / "seeker" / "seeker.yaml"), "--q0", "pitch_a=20",
                                  "--duration", "0.01", "-o", str(tmp_path / "s.csv"), "--no-plot"])
    assert r.exit_code == 0, r.output
    assert "did you mean pitch_a=20deg?" in caplog.text


def test_pipeline_initial_values_with_units(tmp_path):
    shutil.copytree(SAMPLES / "seeker", tmp_path / "seeker")
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text("input: seeker/seeker.yaml\noutputs:\n  directory: out\n  report: false\n  graphs: []\n"
                        "  simulation:\n    duration: 0.01\n    samples: 2\n"
                        "    initial: {q: {pitch_a: 10deg}, v: {yaw_a: 5deg/s}}\n")
    r = CliRunner().invoke(main, ["run", str(pipeline)])
    assert r.exit_code == 0, r.output
    header, first = (tmp_path / "out" / "seeker.simulation.csv").read_text().splitlines()[:2]
    row = dict(zip(header.split(","), map(float, first.split(","))))
    assert row["pitch_a"] == pytest.approx(math.radians(10), rel=1e-15)
    assert row["v:yaw_a"] == pytest.approx(math.radians(5), rel=1e-15)
    pipeline.write_text(pipeline.read_text().replace("10deg", "10dgr"))
    r = CliRunner().invoke(main, ["run", str(pipeline)])
    assert r.exit_code == 2 and "p.yaml:9" in r.output
