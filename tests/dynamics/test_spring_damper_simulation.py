"""A mass-spring-damper read from MJCF (a slide joint with ``stiffness``, ``springref``, ``damping``
and a ``motor`` at a constant control) simulated by the adaptive integrator against its analytic
solution, ``x(t) = x_e + exp(-zeta w t) (A cos(w_d t) + B sin(w_d t))``, to 1e-9 m at rtol = atol =
1e-12, and by the fixed-step integrators (rk4 at dt 1e-3 to 1e-9 m, semi-implicit Euler at 1e-4 to its first
order); and
``simulate --ctrl`` moves the equilibrium as the motor's force says."""

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose import compose
from mbcompose.composer.cli.commands import main
from mbcompose.dynamics.simulation import simulate

MASS, K, C, REF, GEAR = 2.0, 50.0, 1.5, 0.3, 2.0

MSD = f"""<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <body name="cart">
      <joint name="x" type="slide" axis="1 0 0" stiffness="{K}" springref="{REF}" damping="{C}"/>
      <geom type="sphere" size="0.1" mass="{MASS}"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="push" joint="x" gear="{GEAR}" ctrlrange="-1 1"/>
    <position name="servo" joint="x" kp="0"/>
  </actuator>
</mujoco>"""


def analytic(t, x0, v0, force):
    """Underdamped m x'' + c x' + k (x - REF) = force from (x0, v0)."""
    w = np.sqrt(K / MASS)
    zeta = C / (2 * np.sqrt(K * MASS))
    wd = w * np.sqrt(1 - zeta**2)
    xe = REF + force / K
    A = x0 - xe
    B = (v0 + zeta * w * A) / wd
    return xe + np.exp(-zeta * w * t) * (A * np.cos(wd * t) + B * np.sin(wd * t))


@pytest.fixture
def msd(tmp_path):
    path = tmp_path / "msd.xml"
    path.write_text(MSD)
    return path


def test_mass_spring_damper_with_a_motor_follows_the_analytic_solution(msd):
    composition = compose(msd)
    model = composition.model
    assert model.actuator_names == ("push", "servo")
    result = simulate(model, np.array([0.0]), np.array([0.4]), 3.0, 61, rtol=1e-12, atol=1e-12,
                      joints=composition.joint_properties, ctrl=np.array([0.75, 0.0]))
    expected = analytic(result.t, 0.0, 0.4, GEAR * 0.75)
    np.testing.assert_allclose(result.q[:, 0], expected, rtol=0, atol=1e-9)


def test_controls_are_clamped_to_the_control_range(msd):
    composition = compose(msd)
    result = simulate(composition.model, np.array([0.0]), np.array([0.0]), 2.0, 21, rtol=1e-12, atol=1e-12,
                      joints=composition.joint_properties, ctrl=np.array([5.0, 0.0]))
    np.testing.assert_allclose(result.q[:, 0], analytic(result.t, 0.0, 0.0, GEAR * 1.0), rtol=0, atol=1e-9)


@pytest.mark.parametrize("method, dt, tol", [("rk4", 1e-3, 1e-9), ("euler", 1e-4, 2e-3)])
def test_springs_and_motor_on_the_fixed_step_tree_simulator_follow_the_analytic_solution(msd, method, dt, tol):
    composition = compose(msd)
    result = simulate(composition.model, np.array([0.0]), np.array([0.4]), 3.0, 61, method=method, dt=dt,
                      joints=composition.joint_properties, ctrl=np.array([0.75, 0.0]))
    assert result.status.startswith(method)
    np.testing.assert_allclose(result.q[:, 0], analytic(result.t, 0.0, 0.4, GEAR * 0.75), rtol=0, atol=tol)


def test_cli_simulate_applies_constant_controls(msd, tmp_path):
    out = tmp_path / "run.csv"
    runner = CliRunner()
    res = runner.invoke(main, ["simulate", str(msd), "--duration", "2", "--samples", "21", "-o", str(out),
                               "--ctrl", "push=0.5", "--rtol", "1e-12", "--atol", "1e-12", "--no-plot"])
    assert res.exit_code == 0, res.output
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    np.testing.assert_allclose(data[:, 1], analytic(data[:, 0], 0.0, 0.0, GEAR * 0.5), rtol=0, atol=1e-9)
    bad = runner.invoke(main, ["simulate", str(msd), "-o", str(tmp_path / "b.csv"), "--ctrl", "pushh=1"])
    assert bad.exit_code != 0 and "did you mean" in bad.output.lower() and "push" in bad.output
