"""Command-line behaviour a user sees: one-line errors, exit codes, help."""

from pathlib import Path

from click.testing import CliRunner

from mbcompose.composer.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
SEEKER = str(ROOT / "samples/seeker/seeker.yaml")


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_help_lists_every_command():
    r = run("--help")
    assert r.exit_code == 0
    for command in ("run", "convert", "inspect", "graph", "simulate", "eval"):
        assert command in r.output
        assert run(command, "--help").exit_code == 0


def test_usage_errors_are_one_line_with_exit_code_2():
    for args in (["inspect"], ["frobnicate"], ["simulate", SEEKER, "-o", "x.csv", "--q0", "nonsense=1"],
                 ["eval", SEEKER, "jacobian", "--body", "nobody"], ["graph", SEEKER, "-o", "x.gif"],
                 ["simulate", SEEKER, "-o", "x.txt"]):
        r = run(*args)
        assert r.exit_code == 2, (args, r.output)
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, r.output)


def test_eval_mass_matrix_of_the_double_pendulum_equals_the_readme_formula():
    r = run("eval", str(ROOT / "samples/double_pendulum/double_pendulum.yaml"), "mass-matrix",
            "--q", "elbow=1.0", "--format", "json")
    assert r.exit_code == 0, r.output
    import json

    import numpy as np

    M = np.array(json.loads(r.output)["value"])
    c = np.cos(1.0)
    expected = np.array([[0.3265 + 0.16 * c, 0.043 + 0.08 * c], [0.043 + 0.08 * c, 0.043]])
    np.testing.assert_allclose(M, expected, rtol=1e-12)


def test_convert_refuses_a_closed_chain_to_urdf_and_writes_nothing(tmp_path):
    out = tmp_path / "fourbar.urdf"
    r = run("convert", str(ROOT / "samples/fourbar/fourbar.yaml"), "-o", str(out))
    assert r.exit_code == 2
    assert "--cut-loops" in r.output and "coupler_rocker" in r.output
    assert list(tmp_path.iterdir()) == []
    r = run("convert", str(ROOT / "samples/fourbar/fourbar.yaml"), "-o", str(out), "--cut-loops")
    assert r.exit_code == 0 and out.exists()


def test_eval_jacobian_of_a_closed_chain_is_with_respect_to_the_independent_coordinate():
    import json

    import numpy as np

    from mbcompose.dynamics import embedding as E
    from mbcompose import composer
    r = run("eval", str(ROOT / "samples/fourbar/fourbar.yaml"), "jacobian", "--body", "rocker",
            "--q", "crank_pivot=0.3rad", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["coordinates"] == ["crank_pivot"]
    J = np.array(doc["value"])
    # independent reference: the rocker's angular rate per unit crank rate by central
    # differences of the closed configuration
    em = composer.compose(ROOT / "samples/fourbar/fourbar.yaml").model
    h = 1e-6
    rocker = [E.complete_configuration(em, q_ind=[0.3 + s * h])[em.q_slice("rocker_pivot")][0] for s in (1, -1)]
    np.testing.assert_allclose(J[1, 0], (rocker[0] - rocker[1]) / (2 * h), rtol=1e-7)
    assert np.allclose(J[[0, 2, 3, 4, 5], 0], 0.0, atol=1e-12)


def test_a_value_for_a_joint_removed_as_redundant_names_the_joint_kept():
    """The seeker's pitch_b is removed as redundant (seed 004 Table 3 keeps pitch_a): say so, exit 2."""
    import subprocess
    import sys

    seeker = Path(__file__).resolve().parents[2] / "samples" / "seeker" / "seeker.yaml"
    out = subprocess.run([sys.executable, "-P", "-m", "mbcompose", "eval", str(seeker), "mass-matrix", "--q",
                          "pitch_b=0.1"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert "joint 'pitch_b' is not a coordinate of the model: it was removed as redundant" in out.stderr
    assert "give its value to 'pitch_a'" in out.stderr and len(out.stderr.strip().splitlines()) == 1
