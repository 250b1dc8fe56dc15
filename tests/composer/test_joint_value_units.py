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


def _eval_mass_matrix(path: Path, q: str) -> np.ndarray:
    r = CliRunner().invoke(main, ["eval", str(path), "mass-matrix", "--q", q, "--format", "json"])
    assert r.exit_code == 0, r.output
    return np.array(json.loads(r.output)["value"])


def test_cli_plain_numbers_are_in_the_files_units():
    """fourbar.yaml says ``angle: deg``: ``crank_pivot=30`` is 30 degrees, as ``30deg`` and ``0.5236rad``
    are, and all three give the mass matrix the Python API gives at pi/6 rad (the API is SI)."""
    import mbcompose
    from mbcompose import dynamics

    path = SAMPLES / "fourbar" / "fourbar.yaml"
    composition = mbcompose.compose(path)
    model = composition.model
    q = model.neutral()
    q[model.q_slice("crank_pivot")] = math.pi / 6
    q = dynamics.consistent_state(model, q, np.zeros(model.nv))[0]
    reference = dynamics.mass_matrix(model, q)
    for given in ("crank_pivot=30", "crank_pivot=30deg", f"crank_pivot={math.pi / 6!r}rad"):
        np.testing.assert_allclose(_eval_mass_matrix(path, given), reference, rtol=1e-12, atol=1e-15)
    r = CliRunner().invoke(main, ["eval", str(path), "mass-matrix", "--q", "crank_pivot=30dg"])
    assert r.exit_code == 2 and "number with a unit" in r.output


def test_millimetre_and_degree_file_values_per_coordinate():
    """slider_crank.yaml says ``length: mm, angle: deg``: a plain slide value is mm, a crank value degrees,
    velocities per second; numbers with a unit are exact; torques stay SI (no unit conversion)."""
    import mbcompose
    from mbcompose.composer.simulation import joint_vector

    composition = mbcompose.compose(SAMPLES / "slider_crank" / "slider_crank.yaml")
    model, units = composition.model, composition.assembly.value_units
    assert (units.length_name, units.angle_name) == ("mm", "deg")
    q = joint_vector(model, {"slide": 5, "crank_pivot": 90}, rate=False, units=units)
    assert q[model.q_slice("slide")][0] == pytest.approx(0.005, rel=1e-15)
    assert q[model.q_slice("crank_pivot")][0] == pytest.approx(math.pi / 2, rel=1e-15)
    v = joint_vector(model, {"slide": 20, "crank_pivot": "1rad/s"}, rate=True, units=units)
    assert v[model.v_slice("slide")][0] == pytest.approx(0.02, rel=1e-15)
    assert v[model.v_slice("crank_pivot")][0] == 1.0
    tau = joint_vector(model, {"crank_pivot": 2.0}, rate=True)
    assert tau[model.v_slice("crank_pivot")][0] == 2.0


def test_urdf_values_stay_si(tmp_path):
    """A URDF says nothing of units: its values are SI (rad and m), as its own numbers are."""
    import mbcompose
    from mbcompose.composer.simulation import joint_vector

    urdf = tmp_path / "arm.urdf"
    _write_arm(urdf)
    composition = mbcompose.compose(urdf)
    assert composition.assembly.value_units.si
    q = joint_vector(composition.model, {"j1": 0.25}, rate=False, units=composition.assembly.value_units)
    assert q[composition.model.q_slice("j1")][0] == 0.25


def _write_arm(urdf: Path) -> None:
    urdf.write_text('''<robot name="arm"><link name="base"/>
<link name="l1"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>''')


def test_outside_limits_message_speaks_the_files_units(caplog):
    """A deg file's initial position outside the limits is reported in degrees, without the SI hint."""
    import mbcompose
    from mbcompose.composer.simulation import announce_outside_limits, joint_vector

    composition = mbcompose.compose(SAMPLES / "seeker_bearings" / "seeker_bearings.yaml")
    model, units = composition.model, composition.assembly.value_units
    props = composition.joint_properties
    limited = [n for n in model.tree_model.joint_names
               if np.isfinite(props.upper[model.v_slice(n).start]) and model.v_slice(n).stop - model.v_slice(n).start == 1]
    if not limited:
        pytest.skip("no limited one-coordinate joint in the sample")
    name = limited[0]
    upper_deg = math.degrees(props.upper[model.v_slice(name).start])
    q0 = joint_vector(model, {name: upper_deg + 10}, rate=False, units=units)
    (message,) = announce_outside_limits(model, q0, props, {name}, units)
    assert f"{upper_deg + 10:.6g} is outside" in message and "(deg)" in message and "did you mean" not in message


def test_si_value_that_fits_only_in_degrees_gets_a_hint(tmp_path, caplog):
    """In a file of SI values (a URDF), 20 for a joint limited to +-1 rad only fits as degrees: say so."""
    urdf = tmp_path / "arm.urdf"
    _write_arm(urdf)
    r = CliRunner().invoke(main, ["simulate", str(urdf), "--q0", "j1=20", "--duration", "0.01",
                                  "-o", str(tmp_path / "s.csv"), "--no-plot"])
    assert r.exit_code == 0, r.output
    assert "did you mean j1=20deg?" in caplog.text


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
