"""Fixed-step and adaptive integrators with the joint damping and limits of the input file.

References: closed forms (a damped slider, a damped pendulum at small angles, the
amplitude a pendulum keeps after an inelastic stop), the hand-written Lagrangian
double pendulum of test_simulation, the 1e-10 adaptive integration of the four-bar,
and MuJoCo's own limited hinge.
"""

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose import composer
from mbcompose.composer.cli.commands import main
from mbcompose.dynamics.simulation import simulate

from test_simulation import lagrange_double_pendulum

ROOT = Path(__file__).resolve().parents[2]

SLIDER_URDF = """<robot name="slider">
  <link name="base"/>
  <link name="block"><inertial><mass value="2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="block"/><axis xyz="1 0 0"/>
    <limit lower="-10" upper="10" effort="1" velocity="1"/><dynamics damping="3"/></joint>
</robot>
"""

PENDULUM_MJCF = """<mujoco model="pendulum">
  <compiler angle="radian"/>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="link">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="{damping}" {limits}/>
      <inertial pos="0 0 -0.5" mass="1" diaginertia="0.02 0.02 0.001"/>
    </body>
  </worldbody>
</mujoco>
"""


def pendulum(tmp_path, damping=0.0, limits=""):
    path = tmp_path / "pendulum.xml"
    path.write_text(PENDULUM_MJCF.format(damping=damping, limits=limits))
    return path, composer.compose(path)


@pytest.mark.parametrize("method, tol", [("adaptive", 1e-9), ("rk4", 1e-9), ("euler", 2e-3)])
def test_urdf_damping_slows_a_slider_as_the_analytic_exponential(tmp_path, method, tol):
    (tmp_path / "slider.urdf").write_text(SLIDER_URDF)
    c = composer.compose(tmp_path / "slider.urdf")
    joints = c.joint_properties
    assert joints.damping.tolist() == [3.0]
    r = simulate(c.model, np.zeros(1), np.ones(1), 1.0, 11, method=method, dt=1e-3, joints=joints)
    m, d = 2.0, 3.0
    np.testing.assert_allclose(r.q[:, 0], m / d * (1 - np.exp(-d * r.t / m)), atol=tol)
    np.testing.assert_allclose(r.v[:, 0], np.exp(-d * r.t / m), atol=tol * 3)


@pytest.mark.parametrize("method", ["adaptive", "rk4"])
def test_mjcf_damping_gives_the_analytic_damped_pendulum_at_small_angles(tmp_path, method):
    _, c = pendulum(tmp_path, damping=0.2)
    theta0 = 1e-3
    r = simulate(c.model, np.array([theta0]), np.zeros(1), 2.0, 41, method=method, dt=1e-3,
                 joints=c.joint_properties)
    inertia, k, d = 0.02 + 1.0 * 0.5 ** 2, 1.0 * 9.81 * 0.5, 0.2
    zeta_w, wd = d / (2 * inertia), np.sqrt(k / inertia - (d / (2 * inertia)) ** 2)
    exact = theta0 * np.exp(-zeta_w * r.t) * (np.cos(wd * r.t) + zeta_w / wd * np.sin(wd * r.t))
    np.testing.assert_allclose(r.q[:, 0], exact, atol=theta0 * 1e-5)      # sin(x) = x to 2e-7 here


def test_fixed_step_integrators_converge_at_their_order_to_the_lagrangian_double_pendulum():
    c = composer.compose(ROOT / "samples/double_pendulum/double_pendulum.yaml")
    q0, v0 = np.array([1.0, 0.5]), np.array([0.3, -0.7])
    reference = lagrange_double_pendulum(np.linspace(0, 1.0, 11), q0, v0)
    for method, order, dts in (("rk4", 4, (4e-3, 2e-3)), ("euler", 1, (2e-3, 1e-3))):
        errors = [np.abs(simulate(c.model, q0, v0, 1.0, 11, method=method, dt=dt).q - reference).max()
                  for dt in dts]
        assert np.log2(errors[0] / errors[1]) == pytest.approx(order, abs=0.25), (method, errors)
    assert errors[1] < 2e-2 and min(errors) > 0


def test_fourbar_fixed_step_keeps_the_loop_closed_and_follows_the_adaptive_reference():
    c = composer.compose(ROOT / "samples/fourbar/fourbar.yaml")
    em = c.model
    v0 = np.zeros(em.nv)
    v0[em.independent_v] = 2.0
    reference = simulate(em, em.neutral(), v0, 0.2, 5, rtol=1e-12, atol=1e-12)
    for method, tol in (("rk4", 1e-8), ("euler", 5e-2)):
        r = simulate(em, em.neutral(), v0, 0.2, 5, method=method, dt=2e-3)
        assert r.closure.max() < 1e-9
        assert np.abs(r.q - reference.q).max() < tol, method


def test_a_pendulum_stopped_inelastically_swings_back_to_the_stops_mirror_angle(tmp_path):
    """Released at 0.6 rad with a stop at -0.3: it reaches the stop, stops there (inelastic), and
    from rest at -0.3 swings between -0.3 and +0.3, touching the stop at zero speed."""
    path, c = pendulum(tmp_path, limits='limited="true" range="-0.3 2"')
    joints = c.joint_properties
    assert (joints.lower[0], joints.upper[0]) == (-0.3, 2.0)
    for method, tol in (("adaptive", 1e-7), ("rk4", 1e-6), ("euler", 2e-3)):
        r = simulate(c.model, np.array([0.6]), np.zeros(1), 2.0, 2001, method=method, dt=1e-3, joints=joints)
        after = r.t > 0.8
        assert r.q[:, 0].min() >= -0.3 and r.limit_contacts >= 1, method
        assert r.q[after, 0].max() == pytest.approx(0.3, abs=tol), method
    mujoco = pytest.importorskip("mujoco")
    mj = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mj)
    mj.opt.timestep = 1e-4
    data.qpos[0] = 0.6
    angles = []
    for _ in range(20000):
        mujoco.mj_step(mj, data)
        angles.append(data.qpos[0])
    angles = np.array(angles)
    # MuJoCo's soft limit (its defaults) penetrates 0.016 rad and is nearly inelastic: back to 0.32
    assert angles.min() > -0.32 and angles[8000:].max() == pytest.approx(0.3, abs=0.025)


def test_simulate_cli_takes_the_integrator_and_step_and_suggests_a_mistyped_integrator(tmp_path):
    sample = str(ROOT / "samples/double_pendulum/double_pendulum.yaml")
    out = tmp_path / "run.csv"
    res = CliRunner().invoke(main, ["simulate", sample, "--integrator", "rk4", "--dt", "0.002", "--duration", "0.5",
                                    "--samples", "6", "--q0", "shoulder=0.5", "-o", str(out), "--no-plot"])
    assert res.exit_code == 0, res.output
    rows = np.loadtxt(out, delimiter=",", skiprows=1)
    reference = lagrange_double_pendulum(np.linspace(0, 0.5, 6), [0.5, 0.0], [0.0, 0.0])
    np.testing.assert_allclose(rows[:, 1:3], reference, atol=1e-8)
    res = CliRunner().invoke(main, ["simulate", sample, "--integrator", "rk5", "-o", str(out)])
    assert res.exit_code == 2 and "did you mean 'rk4'" in res.output and "Traceback" not in res.output


def test_pipeline_integrator_and_dt_are_validated_at_their_lines(tmp_path):
    from mbcompose.composer.config import load_pipeline
    from mbcompose.parsers.errors import InputError

    base = ("input: {input}\noutputs:\n  directory: out\n  simulation:\n    duration: 1.0\n"
            "    integrator: {integrator}\n    dt: {dt}\n")
    sample = ROOT / "samples/double_pendulum/double_pendulum.yaml"
    path = tmp_path / "p.yaml"
    path.write_text(base.format(input=sample, integrator="rk4", dt=0.004))
    sim = load_pipeline(path).outputs.simulation
    assert (sim.integrator, sim.dt) == ("rk4", 0.004)
    path.write_text(base.format(input=sample, integrator="eulr", dt=0.004))
    with pytest.raises(InputError, match="did you mean 'euler'") as err:
        load_pipeline(path)
    assert err.value.line == 6
    path.write_text(base.format(input=sample, integrator="rk4", dt=1e-12))
    with pytest.raises(InputError, match="steps") as err:
        load_pipeline(path)
    assert err.value.line == 7


def test_mjcf_joint_frictionloss_is_a_regularised_joint_friction(tmp_path, caplog):
    path, _ = pendulum(tmp_path)
    path.write_text(path.read_text().replace('damping="0.0"', 'damping="0" frictionloss="0.1"'))
    with caplog.at_level("WARNING"):
        composition = composer.compose(path)
    assert not [r for r in caplog.records if "friction" in r.getMessage()]
    (element,) = composition.assembly.forces
    assert (element.friction, element.friction_velocity, element.source.note) == (0.1, 0.01, "frictionloss")


REVERSED_PENDULUM = """format: mbcompose-assembly/1
name: reversed
units: {length: m, mass: kg, angle: rad}
gravity: [0, 0, -9.81]
bodies:
  - name: link
    pose: {xyz: [0, 0, 0]}
    inertial: {mass: 1.0, com: [0, 0, -0.5], inertia: {ixx: 0.02, iyy: 0.02, izz: 0.001, ixy: 0, ixz: 0, iyz: 0}}
joints:
  - name: hinge
    type: revolute
    reference: link          # declared from the link to ground: the tree traverses it backwards
    secondary: ground
    origin: [0, 0, 0]
    axis: [0, 1, 0]
    limits: {lower: -0.3, upper: 2.0}
"""


def test_limits_of_a_joint_the_tree_traverses_backwards_bound_the_same_coordinate(tmp_path):
    (tmp_path / "reversed.yaml").write_text(REVERSED_PENDULUM)
    c = composer.compose(tmp_path / "reversed.yaml")
    assert c.tree.edges[0].reversed
    joints = c.joint_properties
    assert (joints.lower[0], joints.upper[0]) == (-0.3, 2.0)
    r = simulate(c.model, np.array([0.6]), np.zeros(1), 1.0, 1001, method="rk4", dt=1e-3, joints=joints)
    assert r.q[:, 0].min() == -0.3 and r.limit_contacts == 1


def test_adaptive_stop_events_and_the_compiled_stops_agree_on_a_double_pendulum_with_an_elbow_stop():
    """Two independent resolutions of the same stops (events with a held set vs impulses after
    each fixed step) converge to one trajectory: the elbow hits its stops, is held, released."""
    from mbcompose.dynamics.simulation import JointProperties

    c = composer.compose(ROOT / "samples/double_pendulum/double_pendulum.yaml")
    joints = JointProperties(np.zeros(2), np.array([-np.inf, -0.2]), np.array([np.inf, 0.2]))
    q0, v0 = np.array([1.0, 0.0]), np.zeros(2)
    events = simulate(c.model, q0, v0, 1.5, 16, joints=joints)
    stepped = [simulate(c.model, q0, v0, 1.5, 16, method="rk4", dt=dt, joints=joints) for dt in (1e-3, 2.5e-4)]
    assert events.limit_contacts >= 2 and np.ptp(events.q[:, 1]) == pytest.approx(0.4)
    errors = [np.abs(s.q - events.q).max() for s in stepped]
    assert errors[1] < 2e-3 and errors[1] < errors[0] / 2, errors
