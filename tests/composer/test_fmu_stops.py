"""Joint stops of a closed chain's FMU (the limits of its independent coordinates as state events), checked
with FMPy against ``mbcompose simulate`` (the adaptive simulator resolving its stops by events, with the
constrained inverse inertia X M_r^-1 X^T): every joint coordinate to 1e-6 (the issue's number) in Model
Exchange (FMPy's CVode at rtol 1e-12, the importer locating the events) and Co-Simulation (the FMU's RK4
at 1 ms, events by bisection).
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose.composer.cli import main

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402
from test_fmu import AGREEMENT, SAMPLES, assert_matches, pytestmark, simulate_csv  # noqa: E402,F401

#: the four-bar's crank limited to +-25 deg (file units)
CRANK_LIMITS = "    limits: {lower: -25, upper: 25}"
LIMIT = np.radians(25.0)


def limited_fourbar(tmp_path, joint="crank_pivot"):
    """The four-bar sample with a +-25 deg limit on ``joint``, written to tmp_path."""
    text = (SAMPLES / "fourbar" / "fourbar.yaml").read_text()
    head = f"  - name: {joint}"
    start = text.index(head)
    end = text.index("    axis: [0, 1, 0]\n", start) + len("    axis: [0, 1, 0]\n")
    path = tmp_path / "fourbar_limited.yaml"
    path.write_text(text[:end] + CRANK_LIMITS + "\n" + text[end:])
    return path


def convert(tmp_path, path):
    out = tmp_path / "fourbar.fmu"
    result = CliRunner().invoke(main, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return str(out)


@pytest.mark.parametrize("torque", [None, 0.5])
def test_the_fourbar_fmu_stops_its_crank_at_its_limit_as_simulate(tmp_path, torque):
    """Free, gravity lays the crank on its lower stop; with +0.5 N m it is driven onto its upper stop;
    held there in both (the inelastic impulse, then the stop force)."""
    path = limited_fourbar(tmp_path)
    fmu = convert(tmp_path, path)
    assert validate_fmu(fmu) == []
    md = fmpy.read_model_description(fmu)
    assert md.numberOfEventIndicators == 2
    extra = ("--torque", f"crank_pivot={torque}") if torque else ()
    ref = simulate_csv(tmp_path, path, *extra)
    side = -LIMIT if torque is None else LIMIT
    assert np.abs(ref["crank_pivot"][-50:] - side).max() < 1e-9     # on the stop for the last quarter second
    signal = None
    if torque:
        inputs = [v.name for v in md.modelVariables if v.causality == "input"]
        signal = np.zeros(2, dtype=[("time", float), *((name, float) for name in inputs)])
        signal["time"], signal["tau:crank_pivot"] = (0.0, 1.0), torque
    for fmi_type in ("ModelExchange", "CoSimulation"):
        assert_matches(fmu, ref, fmi_type, input=signal)


def test_a_limit_on_a_dependent_coordinate_of_a_closed_chain_is_left_out_with_a_warning(tmp_path, caplog):
    path = limited_fourbar(tmp_path, joint="rocker_pivot")
    with caplog.at_level(logging.WARNING):
        fmu = convert(tmp_path, path)
    assert "limits of rocker_pivot (dependent coordinates) are left out" in caplog.text
    assert fmpy.read_model_description(fmu).numberOfEventIndicators == 0
