"""``mbcompose eval``: bias forces of closed chains, operational space inertia at singular and
rank-deficient tasks, task directions, bodies named by their original parts.

References are independent of the code under test: the README's analytic double pendulum,
Pinocchio's Jacobian and CRBA for UR5, and tree dynamics with the closure Jacobian for the
closed chains.
"""

import json
import os
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mbcompose.composer.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
UR5 = os.path.join(SHARE, "example-robot-data", "robots", "ur_description", "urdf", "ur5_robot.urdf")
PENDULUM = str(ROOT / "samples/double_pendulum/double_pendulum.yaml")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def value_of(result):
    assert result.exit_code == 0, result.output
    return np.array(json.loads(result.output)["value"])


@pytest.mark.parametrize("sample", ["fourbar", "slider_crank", "fivebar", "rssr", "leg_fourbar_knee"])
def test_bias_of_a_closed_chain_equals_the_minimal_coordinate_equations(sample):
    from mbcompose import composer, dynamics
    from mbcompose.dynamics import embedding as E
    from mbcompose.dynamics.closed.closure import closure_bias, closure_jacobian
    from mbcompose.dynamics.joints import JOINTS

    path = ROOT / f"samples/{sample}/{sample}.yaml"
    composition = composer.compose(path)
    em, units = composition.model, composition.assembly.value_units
    q = E.complete_configuration(em, q_guess=em.neutral())
    rng = np.random.default_rng(3)
    v = E.complete_velocity(em, q, rng.normal(size=em.n_independent))
    # --v takes the file's units (deg/s, mm/s for these samples): each value with its unit, exact
    spec = json.dumps({n: [f"{float(x)!r}{'rad/s' if kind == 'a' else 'm/s'}" for x, kind in
                           zip(v[em.v_slice(n)], JOINTS[em.tree_model.joint_types[em.tree_model.joint_index(n)]].v_units)]
                       for n in em.joint_names if set(range(em.nv)[em.v_slice(n)]) & set(em.independent_v)})
    got = value_of(run("eval", path, "bias", "--v", spec, "--format", "json"))
    # reference: X* (M a_c + h) with the tree's M and h, a_c the accelerations the closure
    # forces at zero independent acceleration (G a_c + Gdot v = 0), X the null space basis
    tm = em.tree_model
    G = closure_jacobian(tm, em.chords, q)
    g = closure_bias(tm, em.chords, q, v)
    ind = np.asarray(em.independent_v)
    dep = np.setdiff1d(np.arange(em.nv), ind)
    X = np.zeros((em.nv, len(ind)))
    X[ind] = np.eye(len(ind))
    X[dep] = -np.linalg.lstsq(G[:, dep], G[:, ind], rcond=None)[0]
    a_c = np.zeros(em.nv)
    a_c[dep] = -np.linalg.lstsq(G[:, dep], g, rcond=None)[0]
    h = dynamics.mass_matrix(tm, q) @ a_c + dynamics.bias_forces(tm, q, v)
    expected = np.zeros(em.nv)
    expected[ind] = X.T @ h
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10 * max(1.0, np.abs(expected).max()))


def test_opspace_inertia_of_a_2_dof_pendulum_in_two_task_directions_is_the_analytic_one():
    q2, r = 1.0, np.array([0.0, 0.0, -0.2])     # a point 0.2 m down link2 from the elbow
    got = value_of(run("eval", PENDULUM, "opspace-inertia", "--directions", "x,z", "--q", f"elbow={q2}",
                       "--point", "0,0,-0.2", "--frame", "world", "--format", "json"))
    y = np.array([0.0, 1.0, 0.0])
    elbow = np.array([0.0, 0.0, -0.5])
    c = np.cos(q2)
    Ry = np.array([[c, 0, np.sin(q2)], [0, 1, 0], [-np.sin(q2), 0, c]])
    p = elbow + Ry @ r
    J = np.column_stack([np.cross(y, p), np.cross(y, p - elbow)])[[0, 2]]
    M = np.array([[0.3265 + 0.16 * c, 0.043 + 0.08 * c], [0.043 + 0.08 * c, 0.043]])
    np.testing.assert_allclose(got, np.linalg.inv(J @ np.linalg.solve(M, J.T)), rtol=1e-10)


def test_opspace_inertia_of_more_directions_than_freedoms_says_the_rank_and_exits_2():
    r = run("eval", PENDULUM, "opspace-inertia")
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "rank 2" in lines[0] and "--pinv" in lines[0]
    r = run("eval", PENDULUM, "opspace-inertia", "--directions", "x,wq")
    assert r.exit_code == 2 and "'wq'" in r.output


@pytest.mark.skipif(not os.path.exists(UR5), reason="example-robot-data not installed")
def test_opspace_inertia_of_ur5_at_its_singular_zero_configuration():
    pin = pytest.importorskip("pinocchio")
    r = run("eval", UR5, "opspace-inertia", "--body", "wrist_3_link", "--frame", "world")
    assert r.exit_code == 2 and "rank 5" in r.output and "1e+3" not in r.output
    model = pin.buildModelFromUrdf(UR5)
    data = model.createData()
    q = pin.neutral(model)
    pin.computeJointJacobians(model, data, q)
    J = pin.getJointJacobian(model, data, model.getJointId("wrist_3_joint"), pin.LOCAL_WORLD_ALIGNED)
    J = np.vstack([J[3:], J[:3]])        # Pinocchio's [v; omega] -> our [omega; v]
    C = J @ np.linalg.solve(pin.crba(model, data, q), J.T)
    C = 0.5 * (C + C.T)
    pinv = value_of(run("eval", UR5, "opspace-inertia", "--body", "wrist_3_link", "--frame", "world",
                        "--pinv", "--format", "json"))
    np.testing.assert_allclose(pinv, np.linalg.pinv(C, rcond=1e-9, hermitian=True), rtol=1e-6, atol=1e-8)
    linear = value_of(run("eval", UR5, "opspace-inertia", "--body", "wrist_3_link", "--frame", "world",
                          "--directions", "linear", "--format", "json"))
    np.testing.assert_allclose(linear, np.linalg.inv(C[3:, 3:]), rtol=1e-8, atol=1e-12 * np.abs(linear).max())


def test_eval_body_accepts_an_original_part_and_names_its_composite():
    from mbcompose import composer, dynamics

    seeker = ROOT / "samples/seeker/seeker.yaml"
    r = run("eval", seeker, "jacobian", "--body", "camera", "--frame", "world", "--format", "json")
    doc = json.loads(r.output)
    assert r.exit_code == 0 and "'camera'" in doc["note"]
    c = composer.compose(seeker)
    owner = next(k.name for k in c.analysis.composites if "camera" in k.members)
    assert f"composite body '{owner}'" in doc["note"]
    origin = next(e.joint.origin for e in c.tree.edges if e.child == owner)
    point = c.assembly.body("camera").pose.translation - np.asarray(origin)
    expected = dynamics.jacobian(c.model, c.model.neutral(), owner, point, "world")
    np.testing.assert_allclose(doc["value"], expected, atol=1e-14)
    r = run("eval", seeker, "jacobian", "--body", "camra")
    assert r.exit_code == 2 and "did you mean 'camera'" in r.output


def test_verbosity_and_base_are_accepted_after_the_subcommand(tmp_path):
    r = run("inspect", PENDULUM, "--quiet", "--base", "fixed")
    assert r.exit_code == 0 and "Degrees of freedom" in r.output
    r = run("convert", PENDULUM, "-o", tmp_path / "p.yaml", "-v")
    assert r.exit_code == 0 and "2 bodies, 2 joints" in r.output


def test_counts_agree_with_their_noun():
    from mbcompose.composer.formatting import format_number, plural

    assert plural(1, "body") == "1 body" and plural(2, "body") == "2 bodies" and plural(1, "joint") == "1 joint"
    assert format_number(-6.69531e-18) == "0" and format_number(0.5) == "0.5" and format_number(True) == "yes"


def test_jacobian_without_body_names_the_body_it_chose():
    import subprocess
    import sys
    from pathlib import Path

    seeker = Path(__file__).resolve().parents[2] / "samples" / "seeker" / "seeker.yaml"
    out = subprocess.run([sys.executable, "-P", "-m", "mbcompose", "eval", str(seeker), "jacobian"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "body: 'shaft_a' (the model's last body; choose another with --body)" in out.stdout
