"""graph.subspaces.twist_reference against its definition, computed in plain Python."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mbcompose.graph.subspaces import twist_reference
from mbcompose.parsers.assembly import Assembly

import graph_mechanisms as gm


def _definition(assembly: Assembly) -> tuple[list[float], float]:
    """The mean of the joint origins, and the largest distance of a joint or body frame origin
    from the centroid of them all (math.fsum, math.dist)."""
    origins = [[float(x) for x in j.origin] for j in assembly.joints]
    points = origins + [[float(x) for x in b.pose.translation] for b in assembly.bodies]
    centroid = [math.fsum(p[i] for p in points) / len(points) for i in range(3)]
    centre = [math.fsum(p[i] for p in origins) / len(origins) for i in range(3)]
    return centre, max(math.dist(p, centroid) for p in points)


@pytest.mark.parametrize("make", [gm.seeker, gm.fourbar, gm.rssr, gm.bearing,
                                  lambda: gm.random_assembly(np.random.default_rng(3), 12, 5)])
def test_twist_reference_is_the_joints_centroid_and_the_largest_frame_distance(make):
    assembly = make()
    centre, L = twist_reference(assembly)
    ref_centre, ref_L = _definition(assembly)
    np.testing.assert_allclose(centre, ref_centre, rtol=1e-12, atol=1e-15)
    assert L == pytest.approx(ref_L, rel=1e-12)


def test_twist_reference_without_joints_or_frames():
    one = gm.seeker().bodies[0]
    centre, L = twist_reference(Assembly("one", (one,), ()))
    np.testing.assert_array_equal(centre, np.zeros(3))  # no joint: twists about the origin
    assert L == 1.0  # a single frame: no spread, 1 m
    centre, L = twist_reference(Assembly("empty", (), ()))
    np.testing.assert_array_equal(centre, np.zeros(3))
    assert L == 1.0
