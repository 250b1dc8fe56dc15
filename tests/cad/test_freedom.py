"""The intersection of motion subspaces and its names (parsers.step.freedom), on synthetic contacts.

References: the freedoms written by hand from the contact geometry (axes, centres).
"""

from __future__ import annotations

import numpy as np
import pytest

from mbcompose.parsers import InputError
from mbcompose.parsers.step.freedom import Freedom, classify, pair_freedom
from mbcompose.parsers.step.mating import Contact, MatingTolerances

Z = np.array([0.0, 0.0, 1.0])


def contact(kind, point, axis, radii=(4.0, 4.2)):
    return Contact(kind, "a", "b", (0, 0), radii, radii[1] - radii[0], np.asarray(point, float),
                   np.asarray(axis, float) / np.linalg.norm(axis))


def test_two_bearings_on_one_axis_leave_a_cylindrical_freedom_on_that_axis():
    f = pair_freedom([contact("bearing", [1, 2, 0], [1, 1, 0]), contact("bearing", [11, 12, 0], [1, 1, 0])],
                     1e-3, 0.01)
    assert f.type == "cylindrical"
    np.testing.assert_allclose(f.axis, np.array([1, 1, 0]) / np.sqrt(2), atol=1e-12)
    np.testing.assert_allclose(np.cross(f.origin - [1, 2, 0], f.axis), 0.0, atol=1e-9)


def test_a_bearing_and_its_shoulder_leave_a_revolute():
    f = pair_freedom([contact("bearing", [0, 0, 0], Z), contact("planar", [3, 4, 7], -Z)], 1e-3, 0.01)
    assert f.type == "revolute"
    np.testing.assert_allclose(f.axis, Z, atol=1e-12)
    np.testing.assert_allclose(f.origin[:2], 0.0, atol=1e-9)


def test_two_balls_leave_the_rotation_about_the_line_through_their_centres():
    f = pair_freedom([contact("ball", [0, 0, 0], Z), contact("ball", [0, 30, 40], Z)], 1e-3, 0.01)
    assert f.type == "revolute"
    np.testing.assert_allclose(f.axis, [0, 0.6, 0.8], atol=1e-12)


def test_a_floor_and_a_wall_leave_a_prismatic_along_their_corner():
    f = pair_freedom([contact("planar", [0, 0, 0], Z), contact("planar", [0, 5, 3], [0, -1, 0])], 1e-3, 0.01)
    assert f.type == "prismatic"
    np.testing.assert_allclose(f.axis, [1, 0, 0], atol=1e-12)


def test_a_bearing_and_an_oblique_plane_lock_the_pair():
    f = pair_freedom([contact("bearing", [0, 0, 0], Z), contact("planar", [0, 0, 0], [0, 1, 1])], 1e-3, 0.01)
    assert f.type == "fixed"


def test_a_ball_alone_is_spherical_about_its_centre():
    f = pair_freedom([contact("ball", [1, 2, 3], Z)], 1e-3, 0.01)
    assert f.type == "spherical"
    np.testing.assert_allclose(f.origin, [1, 2, 3], atol=1e-9)


def test_two_rotations_and_a_screw_have_no_joint_type():
    e = np.eye(6)
    universal = np.array([e[0], e[1]]).T                 # rotations about x and y through the origin
    assert classify(universal, np.zeros(3), 1.0, np.zeros(3), 1e-6).type is None
    screw = (e[2] + 0.1 * e[5])[:, None]                   # rotation about z with pitch 0.1
    assert classify(screw, np.zeros(3), 1.0, np.zeros(3), 1e-6).type is None


def test_an_unclassified_pair_is_an_error_naming_both_parts_with_a_hint(monkeypatch):
    from mbcompose.parsers.step import inference
    monkeypatch.setattr(inference, "pair_freedom", lambda *a: Freedom(None, np.zeros(3), Z, 2))
    with pytest.raises(InputError, match="parts a and b: .* declare the joint between them"):
        inference._inferred_link("x.step", "a", "b", [contact("bearing", [0, 0, 0], Z)], MatingTolerances(), "fixed")


def _square(x0, y0, size):
    p = np.array([[x0, y0, 0], [x0 + size, y0, 0], [x0 + size, y0 + size, 0], [x0, y0 + size, 0]], float)
    return np.array([p[[0, 1, 2]], p[[0, 2, 3]][::-1]])          # one triangle clockwise on purpose


def _disk(r, n=400):
    t = np.linspace(0, 2 * np.pi, n + 1)[:-1]
    ring = np.c_[r * np.cos(t), r * np.sin(t), np.zeros(n)]
    return np.array([[np.zeros(3), ring[k], ring[(k + 1) % n]] for k in range(n)])


def test_overlap_of_two_offset_squares_is_the_analytic_rectangle():
    from mbcompose.parsers.step.mating import overlap_area
    area, c = overlap_area(_square(0, 0, 1), _square(0.3, 0.4, 1), np.eye(3)[:2])
    assert area == pytest.approx(0.7 * 0.6, rel=1e-12)
    np.testing.assert_allclose(c, [0.65, 0.7], atol=1e-12)


def test_overlap_of_a_disk_and_a_square_corner_is_a_quarter_disk():
    from mbcompose.parsers.step.mating import overlap_area
    n = 400
    area, c = overlap_area(_disk(1.0, n), _square(0, 0, 2), np.eye(3)[:2])
    polygon = 0.5 * n * np.sin(2 * np.pi / n)                  # area of the inscribed 400-gon
    assert area == pytest.approx(polygon / 4, rel=1e-12)
    np.testing.assert_allclose(c, [4 / (3 * np.pi)] * 2, rtol=1e-4)
    assert overlap_area(_disk(1.0, n), _square(1.5, 1.5, 1), np.eye(3)[:2])[0] == 0.0
