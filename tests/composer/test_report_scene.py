"""The report's 3-D scene (issue 27, point 10): the camera frames the whole motion, and parts fixed
to the ground are grey and out of the colour legend.  References: a prismatic drop whose travel is
the joint coordinate itself (analytic), and the file's own fixed joint."""

from pathlib import Path

import numpy as np

from mbcompose import composer
from mbcompose.composer.report.scene import GROUND_COLOR, build_scene
from mbcompose.composer.report.viewer import legend
from mbcompose.dynamics.simulation import SimulationResult

DROP = """format: mbcompose-assembly/1
name: drop
units: {length: m, mass: kg, angle: rad}
bodies:
  - name: post
    pose: {xyz: [0, 0, 0]}
    density: 1000
    geometry: [{box: {size: [0.2, 0.2, 0.2]}}]
  - name: crate
    pose: {xyz: [1, 0, 0]}
    density: 1000
    geometry: [{box: {size: [0.2, 0.2, 0.2]}}]
joints:
  - {name: weld, type: fixed, reference: ground, secondary: post, origin: [0, 0, 0]}
  - {name: slide, type: prismatic, reference: post, secondary: crate, origin: [1, 0, 0], axis: [0, 0, 1]}
"""


def test_the_camera_frames_the_whole_motion_and_grounded_parts_are_grey(tmp_path):
    path = tmp_path / "drop.yaml"
    path.write_text(DROP)
    c = composer.compose(path, lumping=False)
    m = c.model
    t = np.linspace(0.0, 1.0, 11)
    q = np.zeros((len(t), m.nq))
    q[:, m.q_slice("slide")] = -10.0 * t[:, None] ** 2            # the crate falls 10 m
    sim = SimulationResult(t=t, q=q, v=np.zeros((len(t), m.nv)), energy=np.zeros(len(t)),
                           columns=("slide",), velocity_columns=("slide",), status="given")
    scene = build_scene(c, sim)
    lowest = -10.0 - 0.1                                            # the crate's bottom face at the end
    assert scene.center[2] - scene.radius <= lowest + 1e-9
    assert scene.center[2] + scene.radius >= 0.1 - 1e-9             # and the post's top at rest
    colors = {s.name: s.color for s in scene.shapes}
    assert np.array_equal(colors["post"], GROUND_COLOR) and not np.array_equal(colors["crate"], GROUND_COLOR)
    assert [name for name, _ in legend(scene)] == ["crate"]
