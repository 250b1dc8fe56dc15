"""The native format's ``forces:`` section against analytic solutions.

* a cart on a slide held by a spring-damper between a ground point and a point of the cart (along the
  slide, so the spring is linear in the slide coordinate) and pushed by a constant point force: the
  adaptive simulator (rtol = atol = 1e-12) follows ``x(t) = x_e + exp(-zeta w t) (A cos w_d t + B sin w_d t)``
  to 1e-9 m;
* a torsional pendulum (a disc on a revolute, no gravity) with a ``joint_spring`` (stiffness, damping,
  rest angle in degrees) likewise to 1e-9 rad;
* the regularised Coulomb friction ``-F tanh(v / v_s)`` and the point spring's generalized force off
  its axis (``J^T`` of the tension along the spring, written here from the geometry);
* bad input: file, line, did-you-mean and exit code 2.
"""

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose import compose, dynamics
from mbcompose.composer.cli.commands import main
from mbcompose.dynamics.simulation import simulate

MASS, K, C, L0, PUSH = 2.0, 50.0, 1.5, 0.4, 3.0
I_DISC, KT, CT, REST_DEG = 0.02, 0.8, 0.01, 10.0

HEAD = """format: mbcompose-assembly/1
units: {length: m, mass: kg, angle: deg}
gravity: [0, 0, 0]
"""

CART = HEAD + f"""bodies:
  - name: cart
    pose: {{xyz: [0, 0, 0]}}
    inertial: {{mass: {MASS}, com: [0, 0, 0], inertia: {{ixx: 0.01, iyy: 0.01, izz: 0.01}}}}
joints:
  - name: x
    type: prismatic
    reference: ground
    secondary: cart
    axis: [1, 0, 0]
forces:
  - name: spring
    type: spring_damper
    bodies: [ground, cart]
    points: [[-0.5, 0, 0], [0, 0, 0]]
    stiffness: {K}
    damping: {C}
    rest_length: {L0}
  - name: push
    type: point_force
    body: cart
    point: [0, 0, 0]
    force: [{PUSH}, 0, 0]
"""

DISC = HEAD + f"""bodies:
  - name: disc
    inertial: {{mass: 1.0, com: [0, 0, 0], inertia: {{ixx: 0.01, iyy: 0.01, izz: {I_DISC}}}}}
joints:
  - name: twist
    type: revolute
    reference: ground
    secondary: disc
    axis: [0, 0, 1]
forces:
  - name: torsion
    type: joint_spring
    joint: twist
    stiffness: {KT}
    damping: {CT}
    rest: {REST_DEG}
  - name: rub
    type: joint_friction
    joint: twist
    friction: 0.0
"""


def damped_oscillator(t, m, k, c, xe, x0, v0):
    w = np.sqrt(k / m)
    zeta = c / (2 * np.sqrt(k * m))
    wd = w * np.sqrt(1 - zeta**2)
    A = x0 - xe
    B = (v0 + zeta * w * A) / wd
    return xe + np.exp(-zeta * w * t) * (A * np.cos(wd * t) + B * np.sin(wd * t))


def _write(tmp_path, name, text):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_mass_spring_damper_with_a_point_force_follows_the_analytic_solution(tmp_path):
    model = compose(_write(tmp_path, "cart", CART)).model
    result = simulate(model, np.array([0.05]), np.array([0.2]), 3.0, 61, rtol=1e-12, atol=1e-12)
    # spring length 0.5 + x: equilibrium where K (0.5 + x - L0) = PUSH
    expected = damped_oscillator(result.t, MASS, K, C, L0 - 0.5 + PUSH / K, 0.05, 0.2)
    np.testing.assert_allclose(result.q[:, 0], expected, rtol=0, atol=1e-9)


def test_torsional_pendulum_with_a_damper_follows_the_analytic_solution(tmp_path):
    model = compose(_write(tmp_path, "disc", DISC)).model
    result = simulate(model, np.array([0.0]), np.array([1.0]), 4.0, 81, rtol=1e-12, atol=1e-12)
    expected = damped_oscillator(result.t, I_DISC, KT, CT, np.radians(REST_DEG), 0.0, 1.0)
    np.testing.assert_allclose(result.q[:, 0], expected, rtol=0, atol=1e-9)


def test_coulomb_friction_is_regularised_by_tanh(tmp_path):
    text = DISC.replace("friction: 0.0", "friction: 0.3\n    velocity: 2.0")
    model = compose(_write(tmp_path, "rub", text)).model
    for v in (-3.0, -0.01, 0.0, 0.5):
        tau = dynamics.passive_forces(model, np.array([0.2]), np.array([v]))
        vs = np.radians(2.0)
        expected = -KT * (0.2 - np.radians(REST_DEG)) - CT * v - 0.3 * np.tanh(v / vs)
        np.testing.assert_allclose(tau, [expected], rtol=0, atol=1e-12)


def test_a_spring_off_the_joint_axis_pulls_along_its_line(tmp_path):
    """A pendulum (revolute about y at the origin, bob at (0, 0, -1)) with a spring from (1, 0, 0) on ground
    to the bob: generalized force = r x (T u) . y at any angle, T = k (L - L0) + c L_dot."""
    text = HEAD + """bodies:
  - name: bob
    inertial: {mass: 1.0, com: [0, 0, -1], inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01}}
joints:
  - {name: swing, type: revolute, reference: ground, secondary: bob, axis: [0, 1, 0]}
forces:
  - {name: s, type: spring_damper, bodies: [ground, bob], points: [[1, 0, 0], [0, 0, -1]], stiffness: 7,
     damping: 0.3, rest_length: 0.9}
"""
    model = compose(_write(tmp_path, "off", text)).model
    for th, w in ((0.3, 0.0), (-0.7, 1.2), (1.1, -0.4)):
        bob = np.array([-np.sin(th), 0.0, -np.cos(th)])            # rotation by th about +y of (0, 0, -1)
        vel = w * np.cross([0.0, 1.0, 0.0], bob)
        d = bob - np.array([1.0, 0.0, 0.0])
        u = d / np.linalg.norm(d)
        tension = 7 * (np.linalg.norm(d) - 0.9) + 0.3 * (u @ vel)
        expected = np.cross(bob, -tension * u)[1]
        tau = dynamics.passive_forces(model, np.array([th]), np.array([w]))
        np.testing.assert_allclose(tau, [expected], rtol=0, atol=1e-12)


@pytest.mark.parametrize("edit, message", [
    (("type: joint_spring", "type: joint_sprin"), "did you mean 'joint_spring'"),
    (("joint: twist\n    stiffness", "joint: twst\n    stiffness"), "did you mean 'twist'"),
    (("stiffness: 0.8", "stifness: 0.8"), "did you mean 'stiffness'"),
    (("damping: 0.01", "damping: -1"), ">= 0"),
])
def test_bad_force_entries_are_input_errors_with_file_line_and_suggestions(tmp_path, edit, message):
    text = DISC.replace(*edit)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.strip() == edit[1].split("\n")[0])
    path = _write(tmp_path, "bad", text)
    res = CliRunner().invoke(main, ["inspect", str(path)])
    assert res.exit_code == 2, res.output
    assert f"bad.yaml:{line}" in res.output and message in res.output, res.output


def test_a_joint_force_on_a_ball_joint_is_refused(tmp_path):
    text = DISC.replace("type: revolute", "type: spherical").replace("    axis: [0, 0, 1]\n", "")
    res = CliRunner().invoke(main, ["inspect", str(_write(tmp_path, "ball", text))])
    assert res.exit_code == 2 and "one-coordinate" in res.output, res.output


def test_forces_survive_the_yaml_writer(tmp_path):
    """``write_yaml`` writes the ``forces:`` section: the re-read model's passive forces and motors are
    the original's (every element kind, at a moving state)."""
    from mbcompose.dynamics import passive_forces
    from mbcompose.dynamics.forces import motor_names
    from mbcompose.parsers import read_assembly
    from mbcompose.parsers.yaml import write_yaml

    src = Path(__file__).resolve().parents[2] / "samples" / "seeker" / "seeker_motors.yaml"
    text = src.read_text()
    extra = """  - {name: twist_spring, type: joint_spring, joint: yaw_a, stiffness: 0.3, damping: 0.02, rest: 5}
  - {name: twist_rub, type: joint_friction, joint: yaw_a, friction: 0.01, velocity: 0.5}
  - {name: push, type: point_force, body: camera, point: [0, 0, 10], force: [0.1, 0, 0], torque: [0, 0, 0.01]}
"""
    assert "\nforces:\n" in text
    text = text.replace("\nforces:\n", "\nforces:\n" + extra)
    import shutil

    shutil.copytree(src.parent, tmp_path / "seeker")
    original = tmp_path / "seeker" / "seeker_forces.yaml"
    original.write_text(text)
    assembly = read_assembly(original)
    written = tmp_path / "written.yaml"
    written.write_text(write_yaml(assembly, base_dir=tmp_path))
    assert "\nforces:" in written.read_text()
    a, b = compose(original).model, compose(written).model
    assert motor_names(a) == motor_names(b) and len(motor_names(a)) == 2
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v = rng.uniform(-0.3, 0.3, a.nq), rng.normal(size=a.nv)
        np.testing.assert_allclose(passive_forces(b, q, v), passive_forces(a, q, v), rtol=1e-12, atol=1e-12)
