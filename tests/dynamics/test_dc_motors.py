"""DC motors (seed 004 sections 3 and 5): a motor driving a flywheel through a gear against the analytic
step response of ``L di/dt = V - R i - K_e N w``, ``J w' = eta N K_t i`` (J the flywheel's inertia plus
the reflected rotor ``N^2 J_r``), to 1e-9 on the angle, the speed and the current (adaptive, tolerances
1e-12; rk4 at dt 1e-4 likewise), and its linearization against the same equations' matrices; the seeker driven by its two motors
from voltages (samples/seeker/seeker_motors.yaml): the pitch and yaw move the way their voltages say,
the currents are states, the graphs show the electrical elements; bad motor entries are input errors."""

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose import compose
from mbcompose.composer.cli.commands import main
from mbcompose.dynamics.linearize import linearize
from mbcompose.dynamics.simulation import simulate
from mbcompose.parsers.assembly import GROUND

R, L_H, KT, KE, N, ETA, JR, JF, V = 1.5, 0.02, 0.05, 0.04, 12.0, 0.9, 2e-5, 0.03, 6.0
SEEKER = Path(__file__).resolve().parents[2] / "samples" / "seeker" / "seeker_motors.yaml"

FLYWHEEL = f"""format: mbcompose-assembly/1
gravity: [0, 0, -9.81]
bodies:
  - name: wheel
    inertial: {{mass: 3.0, com: [0, 0, 0], inertia: {{ixx: 0.02, iyy: 0.02, izz: {JF}}}}}
joints:
  - {{name: spin, type: revolute, reference: ground, secondary: wheel, axis: [0, 0, 1]}}
forces:
  - {{name: drive, type: dc_motor, joint: spin, resistance: {R}, inductance: {L_H}, torque_constant: {KT},
     back_emf_constant: {KE}, rotor_inertia: {JR}, gear_ratio: {N}, efficiency: {ETA}}}
"""


def step_response(t):
    """(angle, speed, current) from rest for a voltage step V (the roots of L J s^2 + R J s + eta N^2 Kt Ke)."""
    J = JF + N**2 * JR
    l1, l2 = np.roots([L_H * J, R * J, ETA * N**2 * KT * KE])
    w_ss = V / (KE * N)
    e1, e2 = np.exp(l1 * t), np.exp(l2 * t)
    w = w_ss * (1 - (l2 * e1 - l1 * e2) / (l2 - l1))
    angle = w_ss * (t - (l2 / l1 * (e1 - 1) - l1 / l2 * (e2 - 1)) / (l2 - l1))
    current = J * w_ss * l1 * l2 * (e2 - e1) / (l2 - l1) / (ETA * N * KT)
    return np.real(angle), np.real(w), np.real(current)


@pytest.fixture
def flywheel(tmp_path):
    path = tmp_path / "flywheel.yaml"
    path.write_text(FLYWHEEL)
    return compose(path).model


def test_motor_driving_a_flywheel_follows_the_analytic_step_response(flywheel):
    result = simulate(flywheel, np.zeros(1), np.zeros(1), 0.5, 51, rtol=1e-12, atol=1e-12, voltage=[V])
    angle, speed, current = step_response(result.t)
    np.testing.assert_allclose(result.q[:, 0], angle, rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.v[:, 0], speed, rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.currents[:, 0], current, rtol=0, atol=1e-9)
    assert result.current_columns == ("i:drive",)


def test_motor_linearization_is_its_state_equations(flywheel):
    lin = linearize(flywheel, np.zeros(1), np.array([2.0]), currents=[0.3], voltage=[V])
    J = JF + N**2 * JR
    A = [[0, 1, 0], [0, 0, ETA * N * KT / J], [0, -KE * N / L_H, -R / L_H]]
    np.testing.assert_allclose(lin.A, A, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(lin.B, [[0], [0], [1 / L_H]], rtol=1e-8, atol=1e-8)
    assert lin.states == ("q:spin", "v:spin", "i:drive") and lin.inputs == ("volt:drive",)


def test_fixed_step_integrators_follow_the_analytic_step_response(flywheel):
    result = simulate(flywheel, np.zeros(1), np.zeros(1), 0.2, 21, method="rk4", dt=1e-4, voltage=[V])
    angle, speed, current = step_response(result.t)
    np.testing.assert_allclose(result.q[:, 0], angle, rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.v[:, 0], speed, rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.currents[:, 0], current, rtol=0, atol=1e-9)
    assert result.status.startswith("rk4") and "1 DC motors" in result.status


def test_seeker_is_driven_by_its_two_motors_from_voltages():
    c = compose(SEEKER)
    model = c.model
    assert model.kind == "tree" and model.nv == 2
    result = simulate(model, model.neutral(), np.zeros(2), 0.05, 11, voltage=[1.0, -0.5], joints=c.joint_properties)
    pitch, yaw = model.v_slice("pitch_a").start, model.v_slice("yaw_a").start
    assert result.currents.shape == (11, 2)
    assert result.v[-1, pitch] > 0 and result.v[-1, yaw] < 0
    # the currents start as the voltages push them (i ~ V t / L while the rotors are slow)
    assert result.currents[1, 0] > 0 and result.currents[1, 1] < 0
    np.testing.assert_array_equal(result.currents[0], [0.0, 0.0])
    lin = linearize(model, model.neutral())
    assert lin.states[-2:] == ("i:pitch_motor", "i:yaw_motor")
    assert lin.inputs == ("volt:pitch_motor", "volt:yaw_motor")
    for sg in (c.analysis.extended, c.analysis.reduced):
        electric = {e.subject: (e.tail, e.head) for e in sg.elements if e.kind == "electric"}
        sources = {e.subject: (e.tail, e.head) for e in sg.elements if e.kind == "source"}
        assert electric == {"pitch_motor": ("el:pitch_motor", GROUND), "yaw_motor": ("el:yaw_motor", GROUND)}
        assert sources == {"pitch_motor": (GROUND, "el:pitch_motor"), "yaw_motor": (GROUND, "el:yaw_motor")}
    # the seed's numbering is kept: the drivers are still e9 and e13 of the reduced graph
    drivers = [e.name for e in c.analysis.reduced.elements if e.kind == "driver"]
    assert drivers == ["e9", "e13"]


def test_bad_motor_entries_are_input_errors(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(FLYWHEEL.replace(f"efficiency: {ETA}", "efficiency: 1.5"))
    res = CliRunner().invoke(main, ["inspect", str(path)])
    assert res.exit_code == 2 and "efficiency" in res.output and "bad.yaml" in res.output, res.output
    path.write_text(FLYWHEEL.replace(f"resistance: {R}, ", ""))
    res = CliRunner().invoke(main, ["inspect", str(path)])
    assert res.exit_code == 2 and "resistance" in res.output, res.output


def test_cli_voltage_and_current_columns_follow_the_analytic_step_response(tmp_path):
    """``simulate --voltage drive=6`` writes the current as column ``i:drive``; angle, speed and
    current follow the analytic step response; a misspelt motor is a usage error with did-you-mean."""
    path = tmp_path / "flywheel.yaml"
    path.write_text(FLYWHEEL)
    out = tmp_path / "run.csv"
    r = CliRunner().invoke(main, ["simulate", str(path), "--voltage", f"drive={V}", "--duration", "0.5",
                                  "--samples", "51", "--rtol", "1e-12", "--atol", "1e-12", "-o", str(out),
                                  "--no-plot"])
    assert r.exit_code == 0, r.output
    header = out.read_text().splitlines()[0].split(",")
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    angle, speed, current = step_response(data[:, 0])
    np.testing.assert_allclose(data[:, header.index("spin")], angle, rtol=0, atol=1e-9)
    np.testing.assert_allclose(data[:, header.index("v:spin")], speed, rtol=0, atol=1e-9)
    np.testing.assert_allclose(data[:, header.index("i:drive")], current, rtol=0, atol=1e-9)
    r = CliRunner().invoke(main, ["simulate", str(path), "--voltage", "drve=6", "-o", str(out)])
    assert r.exit_code == 2 and "did you mean 'drive'" in r.output


def test_pipeline_voltages(tmp_path):
    path = tmp_path / "flywheel.yaml"
    path.write_text(FLYWHEEL)
    (tmp_path / "p.yaml").write_text("input: flywheel.yaml\noutputs:\n  directory: out\n  report: false\n"
                                     "  graphs: []\n  simulation:\n    duration: 0.5\n    samples: 51\n"
                                     "    rtol: 1.0e-12\n    atol: 1.0e-12\n"
                                     f"    voltages: {{drive: {V}}}\n")
    r = CliRunner().invoke(main, ["run", str(tmp_path / "p.yaml")])
    assert r.exit_code == 0, r.output
    csv = next((tmp_path / "out").glob("*.simulation.csv"))
    header = csv.read_text().splitlines()[0].split(",")
    data = np.loadtxt(csv, delimiter=",", skiprows=1)
    np.testing.assert_allclose(data[:, header.index("i:drive")], step_response(data[:, 0])[2], rtol=0, atol=1e-9)
