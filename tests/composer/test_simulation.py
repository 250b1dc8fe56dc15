"""Simulation against independent references: energy conservation, a hand-written
Lagrangian double pendulum, and loop closure of a closed chain."""

from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from mbcompose import composer
from mbcompose.dynamics.simulation import simulate

ROOT = Path(__file__).resolve().parents[2]


def test_seeker_with_motors_off_and_no_damping_conserves_energy_over_two_seconds():
    c = composer.compose(ROOT / "samples/seeker/seeker.yaml")
    m = c.model
    q0 = m.neutral().copy()
    q0[m.q_slice("pitch_a")] = 0.4
    v0 = np.zeros(m.nv)
    v0[m.v_slice("yaw_a")] = 3.0
    v0[m.v_slice("pitch_a")] = -1.0
    r = simulate(m, q0, v0, duration=2.0, samples=201, rtol=1e-10, atol=1e-12)
    assert r.energy_drift() < 1e-6
    # the motion is not trivial: both joints move by a good fraction of a radian
    assert np.ptp(r.q[:, 0]) > 0.5 and np.ptp(r.q[:, 1]) > 0.5


def lagrange_double_pendulum(t_eval, q0, qd0):
    """The planar double pendulum of samples/double_pendulum/README.md, written from its
    Lagrangian (relative angles about +y, gravity -z): an independent integration."""
    m1, m2, l1, c1, c2, I1, I2, g = 1.0, 0.8, 0.5, 0.25, 0.2, 0.021, 0.011, 9.81

    def rhs(t, y):
        q1, q2, d1, d2 = y
        M = np.array([[I1 + m1 * c1**2 + I2 + m2 * (l1**2 + c2**2 + 2 * l1 * c2 * np.cos(q2)),
                       I2 + m2 * (c2**2 + l1 * c2 * np.cos(q2))],
                      [I2 + m2 * (c2**2 + l1 * c2 * np.cos(q2)), I2 + m2 * c2**2]])
        h = m2 * l1 * c2 * np.sin(q2)
        coriolis = np.array([-h * (2 * d1 * d2 + d2**2), h * d1**2])
        grav = g * np.array([(m1 * c1 + m2 * l1) * np.sin(q1) + m2 * c2 * np.sin(q1 + q2),
                             m2 * c2 * np.sin(q1 + q2)])
        dd = np.linalg.solve(M, -coriolis - grav)
        return [d1, d2, dd[0], dd[1]]

    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), [*q0, *qd0], t_eval=t_eval, method="DOP853",
                    rtol=1e-12, atol=1e-12)
    return sol.y[:2].T


def test_double_pendulum_matches_an_independent_lagrangian_integration():
    c = composer.compose(ROOT / "samples/double_pendulum/double_pendulum.yaml")
    m = c.model
    q0, v0 = np.array([1.0, 0.5]), np.array([0.3, -0.7])
    r = simulate(m, q0, v0, duration=2.0, samples=101, rtol=1e-12, atol=1e-12)
    reference = lagrange_double_pendulum(r.t, q0, v0)
    np.testing.assert_allclose(r.q, reference, atol=1e-8)


@pytest.mark.parametrize("sample", ["fourbar", "slider_crank"])
def test_closed_chain_simulation_keeps_the_loop_closed(sample):
    c = composer.compose(ROOT / f"samples/{sample}/{sample}.yaml")
    em = c.model
    v0 = np.zeros(em.nv)
    v0[em.independent_v] = 3.0
    r = simulate(em, em.neutral(), v0, duration=0.5, samples=26, rtol=1e-10, atol=1e-10)
    assert r.closure is not None and r.closure.max() < 1e-9
    assert r.energy_drift() < 1e-6
    # every tree joint is reported by name, dependent ones included
    assert set(r.columns) == set(em.joint_names)
    assert np.ptp(r.q, axis=0).min() > 1e-3


def read_csv(path):
    header = path.read_text().splitlines()[0].split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    return {name: data[:, i] for i, name in enumerate(header)}


def test_simulate_cli_reports_every_joint_of_the_mechanism(tmp_path):
    from click.testing import CliRunner

    from mbcompose.composer.cli.commands import main

    out = tmp_path / "seeker.csv"
    result = CliRunner().invoke(main, ["simulate", str(ROOT / "samples/seeker/seeker.yaml"), "--duration", "0.3",
                                       "-o", str(out), "--q0", "pitch_a=0.2", "--v0", "yaw_a=1.5"])
    assert result.exit_code == 0, result.output
    cols = read_csv(out)
    seeker = composer.compose(ROOT / "samples/seeker/seeker.yaml").assembly
    moving = {j.name for j in seeker.joints if j.nq > 0}
    assert moving <= set(cols)
    # the second bearings are co-axial with the first, in the same sense (seed 004): same angles
    assert np.allclose(seeker.joint("pitch_b").axis, seeker.joint("pitch_a").axis)
    np.testing.assert_allclose(cols["pitch_b"], cols["pitch_a"], atol=1e-15)
    np.testing.assert_allclose(cols["yaw_b"], cols["yaw_a"], atol=1e-15)
    assert (tmp_path / "seeker.png").exists()


def test_fourbar_columns_include_the_loop_joint_and_the_planar_loop_angles_sum_to_zero(tmp_path):
    from click.testing import CliRunner

    from mbcompose.composer.cli.commands import main

    out = tmp_path / "fourbar.csv"
    result = CliRunner().invoke(main, ["simulate", str(ROOT / "samples/fourbar/fourbar.yaml"), "--duration", "0.4",
                                       "-o", str(out), "--v0", "crank_pivot=2", "--samples", "41"])
    assert result.exit_code == 0, result.output
    c = read_csv(out)
    assert {"crank_pivot", "rocker_pivot", "crank_coupler", "coupler_rocker"} <= set(c)
    # all four revolutes turn about +y: walking the loop, the relative rotations add up to nothing
    loop = c["crank_pivot"] + c["crank_coupler"] + c["coupler_rocker"] - c["rocker_pivot"]
    np.testing.assert_allclose(loop, 0.0, atol=1e-9)
    assert np.ptp(c["coupler_rocker"]) > 0.1


PENDULUM = """format: mbcompose-assembly/1
name: pendulum
units: {length: m, mass: kg, angle: rad}
gravity: [0, 0, -9.81]
bodies:
  - name: bob
    pose: {xyz: [0, 0, 0]}
    inertial: {mass: 2.0, com: [0, 0, -0.5], inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01, ixy: 0, ixz: 0, iyz: 0}}
joints:
  - {name: pin, type: revolute, reference: ground, secondary: bob, origin: [0, 0, 0], axis: [0, 1, 0]}
"""

def test_a_pendulum_released_from_rest_at_zero_energy_reports_drift_against_the_energy_it_exchanges(tmp_path):
    """E(0) = 0 exactly (hung at the pivot's height: the bob starts horizontal, at rest): the drift is
    relative to the energy the fall exchanges, m g l (1 - cos 90 deg) = 2 * 9.81 * 0.5 = 9.81 J at the
    bottom (analytic), not to |E(0)|; the CLI line says so."""
    import subprocess
    import sys

    path = tmp_path / "pendulum.yaml"
    path.write_text(PENDULUM)
    m = composer.compose(path).model
    q0 = m.neutral().copy()
    q0[m.q_slice("pin")] = np.pi / 2          # com at the pivot's height: potential energy 0
    r = simulate(m, q0, np.zeros(m.nv), duration=2.0, samples=401, rtol=1e-10, atol=1e-12)
    assert abs(r.energy[0]) < 1e-12
    assert r.energy_scale() == pytest.approx(2 * 9.81 * 0.5, rel=1e-3)  # the samples near the bottom
    assert r.energy_drift() < 1e-7 and not r.dissipative
    out = subprocess.run([sys.executable, "-P", "-m", "mbcompose", "simulate", str(path), "-o",
                          str(tmp_path / "p.csv"), "--q0", "pin=1.5707963267948966", "--duration", "1"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "relative energy drift" in out.stdout and "of the energy scale 9.8" in out.stdout


def test_an_initial_position_outside_the_limits_is_announced_not_clamped_silently(tmp_path):
    """--q0 pin=40 on a joint limited to +-30 in a degree file: one warning naming the joint, its value and
    limits in the file's degrees; the simulation starts at the limit (0.5235987755982988 rad = 30 deg)."""
    import subprocess
    import sys

    path = tmp_path / "lim.yaml"
    path.write_text(PENDULUM.replace("units: {length: m, mass: kg, angle: rad}", "units: {length: m, mass: kg, angle: deg}")
                    .replace("axis: [0, 1, 0]}", "axis: [0, 1, 0], limits: {lower: -30, upper: 30}}"))
    out = subprocess.run([sys.executable, "-P", "-m", "mbcompose", "simulate", str(path), "-o", str(tmp_path / "l.csv"),
                          "--q0", "pin=40", "--duration", "0.01"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "joint 'pin': initial position 40 is outside its limits [-30, 30] (deg)" in out.stderr
    first = (tmp_path / "l.csv").read_text().splitlines()[1].split(",")
    assert float(first[1]) == pytest.approx(np.pi / 6, abs=1e-12)


def test_too_many_stop_events_end_in_one_clear_input_error_not_an_internal_one(monkeypatch):
    """More stop events than the adaptive integrator allows (a joint chattering at its limit) end in an
    InputError naming the integrator and the way out; here the seeker's pitch stop at 0.29 s is one event
    more than a limit of 1."""
    from mbcompose.composer.config import SimulationConfig
    from mbcompose.composer.simulation import run_simulation
    from mbcompose.dynamics.simulation import stops
    from mbcompose.parsers import InputError

    monkeypatch.setattr(stops, "MAX_SEGMENTS", 1)
    c = composer.compose(ROOT / "samples/seeker/seeker.yaml")
    with pytest.raises(InputError) as err:
        run_simulation(c, SimulationConfig(duration=0.5, samples=11))
    assert "more than 1 joint stop events" in str(err.value) and "rk4" in str(err.value)
    assert err.value.key == "simulation.integrator"


def test_ant_starting_outside_its_ankle_ranges_is_held_at_the_stops():
    """gymnasium's ant starts with its ankles outside their ranges (MuJoCo's soft limits take that): the
    stops put them at the nearest limit and hold them there (the stops carry no load in free fall: they
    chattered at t = 0 before stops without load stayed held), energy conserved."""
    gym = pytest.importorskip("gymnasium")
    import os

    from mbcompose.composer.config import SimulationConfig
    from mbcompose.composer.simulation import run_simulation

    ant = os.path.join(os.path.dirname(gym.__file__), "envs", "mujoco", "assets", "ant.xml")
    c = composer.compose(ant)
    result = run_simulation(c, SimulationConfig(duration=0.5, samples=11))
    props, tree = c.joint_properties, c.model.tree_model
    for name in tree.joint_names:
        qs, vs = tree.q_slice(name), tree.v_slice(name)
        if qs.stop - qs.start == 1:
            assert np.all(result.q[:, qs] >= props.lower[vs] - 1e-9) and np.all(result.q[:, qs] <= props.upper[vs] + 1e-9)
    assert result.limit_contacts >= 4
    assert abs(result.energy[-1] - result.energy[0]) < 1e-9 * result.energy_scale()
