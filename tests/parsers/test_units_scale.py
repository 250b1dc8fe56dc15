"""Unit slips are named (issue 27, point 3): a model read in metres whose lengths were millimetres,
and gravity in m/s^2 in a millimetre file, each get one warning naming the likely unit; real robot
files at their real scale (gymnasium's and dm_control's MJCF, which MuJoCo simulates in SI) get none."""

import glob
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mbcompose import parsers
from mbcompose.parsers.units import scale_warnings

ROOT = Path(__file__).resolve().parents[2]
FOURBAR = (ROOT / "samples" / "fourbar" / "fourbar.yaml").read_text()


def in_millimetres(text: str, units: str) -> str:
    """The four-bar sample with every length in mm (its links are 90-300 mm) and ``units`` as given."""
    out = text.replace("units: {length: m, mass: kg, angle: deg}", units)
    for m in ("0.09", "0.25", "0.26", "0.3", "0.24", "0.2", "0.045", "0.125", "0.13", "0.01", "0.02"):
        out = out.replace(f"{m},", f"{float(m) * 1000:g},").replace(f"{m}]", f"{float(m) * 1000:g}]")
    return out


def test_lengths_in_millimetres_read_as_metres_are_named(tmp_path):
    path = tmp_path / "fourbar_mm.yaml"
    path.write_text(in_millimetres(FOURBAR, "units: {length: m, mass: kg, angle: deg}").replace(
        "[0, 0, -9.81]", "[0, 0, -9810]"))
    a = parsers.read_assembly(path)
    assert a.total_mass > 1e8                  # steel bars 90-300 m long: 1e9 times the real ones
    messages = scale_warnings(a)
    assert any("are its lengths in mm?" in m for m in messages)
    assert any("gravity is 9810 m/s^2" in m for m in messages)


def test_gravity_in_metres_in_a_millimetre_file_is_named_and_the_cli_says_it_once(tmp_path):
    path = tmp_path / "fourbar_mm.yaml"
    path.write_text(in_millimetres(FOURBAR, "units: {length: mm, mass: kg, angle: deg}"))
    a = parsers.read_assembly(path)
    assert a.total_mass == pytest.approx(parsers.read_assembly(ROOT / "samples/fourbar/fourbar.yaml").total_mass)
    assert [m.split(",")[0] for m in scale_warnings(a)] == ["gravity is 0.00981 m/s^2"]
    out = subprocess.run([sys.executable, "-P", "-m", "mbcompose", "inspect", str(path)], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and out.stderr.count("warning:") == 1 and "Earth's is 9810 in mm" in out.stderr


def _real_mjcf_files():
    gym = pytest.importorskip("gymnasium")
    dmc = pytest.importorskip("dm_control")
    return sorted(glob.glob(os.path.join(os.path.dirname(gym.__file__), "envs/mujoco/assets/*.xml"))
                  + glob.glob(os.path.join(os.path.dirname(dmc.__file__), "suite/*.xml")))


def test_real_robot_files_at_their_scale_get_no_unit_warning():
    logging.disable(logging.WARNING)
    try:
        read = []
        for f in _real_mjcf_files():
            try:
                a = parsers.read_assembly(f)
            except parsers.InputError:
                continue
            read.append(f)
            assert scale_warnings(a) == [], f
    finally:
        logging.disable(logging.NOTSET)
    assert len(read) >= 20
