"""samples/fourbar_cad: the four-bar from its STEP file (links and pins) is the YAML four-bar's mechanism.

References: samples/fourbar/README.md (dof 1, one loop whose 6 x 4 closure
Jacobian has rank 3, velocity ratios 1, -8/7, 3/7, 2/7 at the reference
configuration) and the loop-closure error of the simulation (1e-9).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("OCP")

from mbcompose import compose  # noqa: E402
from mbcompose.composer.inspect import render_json  # noqa: E402
from mbcompose.dynamics.simulation import simulate  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "fourbar_cad"


@pytest.fixture(scope="module")
def fourbar():
    return compose(SAMPLE / "fourbar.yaml")


def test_one_loop_with_three_redundant_constraints_and_dof_1(fourbar):
    doc = render_json(fourbar.analysis)
    assert doc["dof"] == 1
    (loop,) = doc["loops"]
    assert loop["redundant_constraints"] == 3 and loop["rank"] == 3 and loop["closes"]
    revolutes = {j["name"] for j in doc["joints"] if j["type"] == "revolute"}
    assert revolutes == {"crank_pivot", "crank_coupler", "coupler_rocker", "rocker_pivot"}
    assert sorted(map(sorted, doc["composites"])) == sorted(map(sorted, [
        ["base", "pin_a", "pin_d"], ["crank", "pin_b"], ["coupler"], ["rocker", "pin_c"]]))
    for j in fourbar.assembly.joints:
        if j.type == "revolute":
            np.testing.assert_allclose(j.axis, [0, 1, 0], atol=1e-12)


def test_joint_axes_pass_through_the_pivots_of_the_yaml_fourbar(fourbar):
    pivots = {"crank_pivot": (0, 0), "crank_coupler": (0, 0.09), "coupler_rocker": (0.2, 0.24),
              "rocker_pivot": (0.3, 0)}
    for name, (x, z) in pivots.items():
        j = fourbar.assembly.joint(name)
        np.testing.assert_allclose(j.origin[[0, 2]], [x, z], atol=1e-12)


def test_simulation_keeps_the_loop_closed(fourbar):
    em = fourbar.model
    v0 = np.zeros(em.nv)
    v0[em.independent_v] = 3.0
    r = simulate(em, em.neutral(), v0, duration=0.5, samples=26, rtol=1e-10, atol=1e-10)
    assert r.closure is not None and r.closure.max() < 1e-9
    assert r.energy_drift() < 1e-6
