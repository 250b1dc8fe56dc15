"""A singular mass matrix is one clean error, not a ZeroDivisionError (pybullet's random_urdfs).

Reference: a single free body whose inertia has a zero principal moment about z has, analytically,
a mass matrix with a zero eigenvalue along the body's z rotation; a second body welded nowhere
(a pendulum with mass) is regular, and its accelerations exist.
"""

import subprocess
import sys

import numpy as np
import pytest

import mbcompose
from mbcompose import dynamics as dyn

URDF = """<?xml version="1.0"?>
<robot name="flat">
  <link name="plate">
    <inertial><mass value="0.1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="0"/></inertial>
  </link>
</robot>
"""


@pytest.fixture
def plate(tmp_path):
    path = tmp_path / "plate.urdf"
    path.write_text(URDF)
    return path


def _model(path):
    return mbcompose.compose(str(path), base="floating").model


def test_mass_matrix_is_the_analytic_singular_one(plate):
    m = _model(plate)
    M = dyn.mass_matrix(m, m.neutral())
    assert np.allclose(np.sort(np.linalg.eigvalsh(M)), [0.0, 0.1, 0.1, 0.1, 1.0, 1.0], atol=1e-12)


def test_forward_dynamics_names_the_joint(plate):
    m = _model(plate)
    with pytest.raises(dyn.SingularMassMatrix, match="root_joint"):
        dyn.forward_dynamics(m, m.neutral(), np.zeros(m.nv), np.zeros(m.nv))


def test_batch_and_inverse_raise_the_same_error(plate):
    m = _model(plate)
    q = np.tile(m.neutral(), (3, 1))
    with pytest.raises(dyn.SingularMassMatrix):
        dyn.forward_dynamics(m, q, np.zeros((3, m.nv)), np.zeros((3, m.nv)))
    with pytest.raises(dyn.SingularMassMatrix):
        dyn.mass_matrix_inverse(m, m.neutral())


def test_cli_simulate_exits_2_with_one_line(plate, tmp_path):
    out = tmp_path / "sim.csv"
    r = subprocess.run([sys.executable, "-m", "mbcompose", "simulate", str(plate), "--base", "floating",
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "singular" in errors[0] and "Traceback" not in r.stderr
    assert not out.exists()


def test_fixed_step_simulation_raises_the_same_error(plate, tmp_path):
    from mbcompose.dynamics.compiled.simulate_api import simulate_fixed_step

    m = _model(plate)
    with pytest.raises(dyn.SingularMassMatrix, match="root_joint"):
        simulate_fixed_step(m, m.neutral(), np.zeros(m.nv), 1e-3, 10, "rk4")
    r = subprocess.run([sys.executable, "-m", "mbcompose", "simulate", str(plate), "--base", "floating",
                        "--integrator", "rk4", "-o", str(tmp_path / "sim.csv")], capture_output=True, text=True)
    assert r.returncode == 2 and "singular" in r.stderr and "Traceback" not in r.stderr
