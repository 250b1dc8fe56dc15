"""A loop closed by a planar joint: simulate writes the planar chord's coordinates.

Mechanism (all axes along +y, motion in the x-z plane): ``shoulder`` (ground -> arm at
the origin), ``pivot`` (ground -> rocker at x = 1 m), ``table`` (rocker -> slider at
x = 0.5 m, revolute) and the loop-closing planar joint ``tip`` (arm -> slider at
x = 0.5 m).  Reference: the chord's coordinates by plane geometry from the tree
coordinates in the CSV (in-plane axes e1 = x, e2 = n x e1 = -z of the arm's joint frame).
"""

import numpy as np
from click.testing import CliRunner

from mbcompose.composer.cli.commands import main

INERTIA = "{ixx: 0.001, iyy: 0.02, izz: 0.02, ixy: 0, ixz: 0, iyz: 0}"
MECHANISM = f"""
name: planar_chord
units: {{length: m, mass: kg, angle: rad}}
gravity: [0, 0, -9.81]
bodies:
  - {{name: arm, pose: {{xyz: [0, 0, 0]}}, inertial: {{mass: 1.0, com: [0.25, 0, 0], inertia: {INERTIA}}}}}
  - {{name: rocker, pose: {{xyz: [1, 0, 0]}}, inertial: {{mass: 1.0, com: [-0.25, 0, 0], inertia: {INERTIA}}}}}
  - {{name: slider, pose: {{xyz: [0.5, 0, 0]}}, inertial: {{mass: 0.5, com: [0, 0, 0], inertia: {INERTIA}}}}}
joints:
  - {{name: shoulder, type: revolute, reference: ground, secondary: arm, origin: [0, 0, 0], axis: [0, 1, 0]}}
  - {{name: pivot, type: revolute, reference: ground, secondary: rocker, origin: [1, 0, 0], axis: [0, 1, 0]}}
  - {{name: tip, type: planar, reference: arm, secondary: slider, origin: [0.5, 0, 0], axis: [0, 1, 0]}}
  - {{name: table, type: revolute, reference: rocker, secondary: slider, origin: [0.5, 0, 0], axis: [0, 1, 0]}}
"""


def rot_y(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def test_simulating_a_loop_closed_by_a_planar_joint_writes_its_coordinates(tmp_path):
    path = tmp_path / "planar_chord.yaml"
    path.write_text(MECHANISM)
    out = tmp_path / "sim.csv"
    r = CliRunner().invoke(main, ["simulate", str(path), "--duration", "0.3", "--samples", "31", "-o", str(out),
                                  "--q0", "shoulder=0.3", "--v0", "pivot=-1.0", "--no-plot"])
    assert r.exit_code == 0, r.output
    data = np.genfromtxt(out, delimiter=",", names=True)
    assert {"tip0", "tip1", "tip2"} <= set(data.dtype.names)
    e1, e2 = np.array([1.0, 0, 0]), np.array([0, 0, -1.0])
    for row in data:
        s, p, t = row["shoulder"], row["pivot"], row["table"]
        slider = np.array([1.0, 0, 0]) + rot_y(p) @ np.array([-0.5, 0, 0])
        rel = rot_y(s).T @ slider - np.array([0.5, 0, 0])
        np.testing.assert_allclose([row["tip0"], row["tip1"]], [e1 @ rel, e2 @ rel], atol=1e-12)
        np.testing.assert_allclose(np.angle(np.exp(1j * (row["tip2"] - (p + t - s)))), 0, atol=1e-12)
    assert np.ptp(data["tip1"]) > 0.01      # the chord really moved
