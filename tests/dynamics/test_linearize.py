"""Linearization of trees: a pendulum at its bottom against ``A = [[0, 1], [-m g l / I_o, 0]]``
(``I_o`` the inertia about the pivot); the velocity rows of A and B against central differences of the
numpy reference forward dynamics (step 1e-5, relative 1e-6) on a chain with hinge, slide, ball and
free joints, springs, dampers and servos at a moving state; the position rows against differences of
``integrate``/``difference`` along the trajectory (MuJoCo's tangent convention); names, selections,
errors; the activations of actuators with activation dynamics as states against central differences of the
forces and ``actuator_activation_rates``; and the CLI's ``linearize`` writing .npz and .json."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose import compose
from mbcompose.composer.cli.commands import main
from mbcompose.dynamics import (activation_names, actuator_activation_rates, actuator_forces, dispatch,
                                forward_dynamics, passive_forces)
from mbcompose.dynamics.kinematics import difference, integrate
from mbcompose.dynamics.linearize import linearize

MASS, LENGTH, RADIUS, G = 2.0, 0.7, 0.05, 9.81

PENDULUM = f"""<mujoco>
  <option gravity="0 0 -{G}"/>
  <worldbody>
    <body name="b">
      <joint name="h" type="hinge" axis="0 1 0"/>
      <geom type="sphere" size="{RADIUS}" pos="0 0 -{LENGTH}" mass="{MASS}"/>
    </body>
  </worldbody>
  <actuator><motor name="m" joint="h" gear="3"/></actuator>
</mujoco>"""

CHAIN = """<mujoco>
  <worldbody>
    <body name="a">
      <joint name="j1" type="hinge" axis="0 1 0" stiffness="3" springref="0.2" damping="0.4"/>
      <geom type="box" size="0.1 0.2 0.3" mass="2"/>
      <body name="b" pos="0 0 -0.5">
        <joint name="j2" type="slide" axis="1 0 0" damping="0.7" stiffness="5" springref="0.1"/>
        <geom type="sphere" size="0.1" mass="1"/>
        <body name="c" pos="0 0 -0.5">
          <joint name="j3" type="ball" damping="0.3" stiffness="2"/>
          <geom type="box" size="0.1 0.15 0.2" pos="0.1 0 -0.2" mass="1"/>
        </body>
      </body>
    </body>
    <body name="f" pos="1 0 1" euler="10 20 30">
      <freejoint name="free"/>
      <geom type="box" size="0.1 0.2 0.3" mass="2"/>
    </body>
  </worldbody>
  <actuator>
    <position name="p1" joint="j1" kp="30" kv="2"/>
    <motor name="m2" joint="j2" gear="2"/>
  </actuator>
</mujoco>"""

STEP = 1e-5


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (("pendulum", PENDULUM), ("chain", CHAIN)):
        paths[name] = tmp_path / f"{name}.xml"
        paths[name].write_text(text)
    return paths


def test_pendulum_at_its_bottom_has_the_analytic_linearization(files):
    model = compose(files["pendulum"]).model
    lin = linearize(model, model.neutral(), inputs=["ctrl", "tau"])
    inertia = MASS * LENGTH**2 + 0.4 * MASS * RADIUS**2
    np.testing.assert_allclose(lin.A, [[0, 1], [-MASS * G * LENGTH / inertia, 0]], rtol=0, atol=1e-8)
    np.testing.assert_allclose(lin.B, [[0, 0], [3 / inertia, 1 / inertia]], rtol=0, atol=1e-8)
    assert lin.states == ("q:h", "v:h") and lin.inputs == ("m", "tau:h")
    np.testing.assert_array_equal(lin.C, np.eye(2))
    assert lin.D.shape == (2, 2) and not lin.D.any()


def _accelerations(model, q, v, ctrl):
    with dispatch.backend("numpy"):
        return forward_dynamics(model, q, v, passive_forces(model, q, v) + actuator_forces(model, q, v, ctrl))


def test_velocity_rows_match_central_differences_of_the_forward_dynamics(files):
    model = compose(files["chain"]).model
    rng = np.random.default_rng(2)
    q = integrate(model, model.neutral(), rng.normal(size=model.nv) * 0.5)
    v, ctrl = rng.normal(size=model.nv), np.array([0.3, -0.7])
    lin = linearize(model, q, v, ctrl=ctrl)
    n = model.nv
    cols = []
    for j in range(2 * n):
        d = np.zeros(2 * n)
        d[j] = STEP
        plus = _accelerations(model, integrate(model, q, d[:n]), v + d[n:], ctrl)
        minus = _accelerations(model, integrate(model, q, -d[:n]), v - d[n:], ctrl)
        cols.append((plus - minus) / (2 * STEP))
    A_v = np.array(cols).T
    np.testing.assert_allclose(lin.A[n:], A_v, rtol=0, atol=1e-6 * max(1.0, np.abs(A_v).max()))
    B_v = np.array([(_accelerations(model, q, v, ctrl + STEP * e) - _accelerations(model, q, v, ctrl - STEP * e))
                    / (2 * STEP) for e in np.eye(2)]).T
    np.testing.assert_allclose(lin.B[n:], B_v, rtol=0, atol=1e-6 * max(1.0, np.abs(B_v).max()))
    assert lin.inputs == ("p1", "m2")


def test_position_rows_follow_the_trajectory_through_the_state(files):
    """d(dq)/dt for q(t) = q*(t) (+) dq(t): [difference(q*(h), q(h)) - difference(q*(-h), q(-h))] / 2h at
    q(0) = q* (+) dq, each moving with the velocity v* (+ dv), by central differences in dq and dv."""
    model = compose(files["chain"]).model
    rng = np.random.default_rng(3)
    q = integrate(model, model.neutral(), rng.normal(size=model.nv) * 0.5)
    v = rng.normal(size=model.nv)
    lin = linearize(model, q, v)
    n, h = model.nv, 1e-4

    def rate(dq, dv):
        path = lambda t: difference(model, integrate(model, q, v * t), integrate(model, integrate(model, q, dq),
                                                                                  (v + dv) * t))
        return (path(h) - path(-h)) / (2 * h)

    cols = []
    for j in range(2 * n):
        d = np.zeros(2 * n)
        d[j] = 1e-4
        cols.append((rate(d[:n], d[n:]) - rate(-d[:n], -d[n:])) / 2e-4)
    np.testing.assert_allclose(lin.A[:n], np.array(cols).T, rtol=0, atol=1e-6)


def test_inputs_and_outputs_are_picked_by_name_with_suggestions(files):
    model = compose(files["chain"]).model
    lin = linearize(model, model.neutral(), inputs=["m2", "tau:j1"], outputs=["j1", "v:j2", "v:free[3]"])
    assert lin.inputs == ("m2", "tau:j1") and lin.outputs == ("q:j1", "v:j2", "v:free[3]")
    assert lin.C.shape == (3, 2 * model.nv) and lin.B.shape == (2 * model.nv, 2)
    np.testing.assert_allclose(lin.C @ lin.A, lin.A[[lin.states.index(s) for s in lin.outputs]])
    with pytest.raises(ValueError, match="did you mean m2"):
        linearize(model, model.neutral(), inputs=["m3"])


def test_cli_writes_npz_and_json(files, tmp_path):
    runner = CliRunner()
    npz, js = tmp_path / "lin.npz", tmp_path / "lin.json"
    res = runner.invoke(main, ["linearize", str(files["pendulum"]), "--at", "h=0", "--inputs", "tau", "-o", str(npz)])
    assert res.exit_code == 0, res.output
    data = np.load(npz)
    inertia = MASS * LENGTH**2 + 0.4 * MASS * RADIUS**2
    np.testing.assert_allclose(data["A"], [[0, 1], [-MASS * G * LENGTH / inertia, 0]], atol=1e-8)
    assert list(data["inputs"]) == ["tau:h"]
    res = runner.invoke(main, ["linearize", str(files["pendulum"]), "--at", "h=3.14159", "-o", str(js)])
    assert res.exit_code == 0, res.output
    doc = json.loads(js.read_text())
    assert doc["states"] == ["q:h", "v:h"] and doc["inputs"] == ["m"]
    assert doc["A"][1][0] > 0       # upright: unstable
    res = runner.invoke(main, ["linearize", str(files["pendulum"]), "--inputs", "mm", "-o", str(js)])
    assert res.exit_code == 2 and "did you mean m" in res.output


ACTIVATED = CHAIN.replace("""    <position name="p1" joint="j1" kp="30" kv="2"/>
    <motor name="m2" joint="j2" gear="2"/>""", """    <position name="p1" joint="j1" kp="30" kv="2" timeconst="0.05"/>
    <intvelocity name="iv" joint="j2" kp="10" actrange="-1 1"/>
    <general name="f1" joint="j1" dyntype="filter" dynprm="0.1" gainprm="3" biastype="affine" biasprm="0 -2 -0.3"/>
    <motor name="m2" joint="j2" gear="2"/>""")


def test_activation_rows_match_central_differences_of_the_dynamics(tmp_path):
    """States [dq, v, act], inputs ctrl: every row but the analytic position rows against central
    differences (step 1e-6) of the numpy forward dynamics with the actuators at the activations and of
    ``actuator_activation_rates``."""
    path = tmp_path / "activated.xml"
    path.write_text(ACTIVATED)
    model = compose(path).model
    assert activation_names(model) == ("p1", "iv", "f1")
    rng = np.random.default_rng(4)
    q = integrate(model, model.neutral(), rng.normal(size=model.nv) * 0.5)
    v, ctrl, act = rng.normal(size=model.nv), rng.uniform(-0.5, 0.5, 4), rng.uniform(-0.5, 0.5, 3)
    lin = linearize(model, q, v, ctrl=ctrl, activations=act)
    n, h = model.nv, 1e-6
    assert lin.states[2 * n:] == ("act:p1", "act:iv", "act:f1") and lin.inputs == model.actuator_names

    def rates(x, u):
        qx, vx, ax = integrate(model, q, x[:n]), x[n:2 * n], x[2 * n:]
        with dispatch.backend("numpy"):
            a = forward_dynamics(model, qx, vx, passive_forces(model, qx, vx) + actuator_forces(model, qx, vx, u, ax))
        return np.concatenate([a, actuator_activation_rates(model, u, ax)])

    x0 = np.concatenate([np.zeros(n), v, act])
    A = np.array([(rates(x0 + h * e, ctrl) - rates(x0 - h * e, ctrl)) / (2 * h) for e in np.eye(len(x0))]).T
    B = np.array([(rates(x0, ctrl + h * e) - rates(x0, ctrl - h * e)) / (2 * h) for e in np.eye(4)]).T
    np.testing.assert_allclose(lin.A[n:], A, rtol=0, atol=1e-6 * max(1.0, np.abs(A).max()))
    np.testing.assert_allclose(lin.B[n:], B, rtol=0, atol=1e-6 * max(1.0, np.abs(B).max()))
    np.testing.assert_allclose(lin.A[2 * n:, 2 * n:], np.diag([-1 / 0.05, 0.0, -1 / 0.1]), rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(lin.activations, act)
    np.testing.assert_array_equal(lin.A[:n, 2 * n:], 0.0)
