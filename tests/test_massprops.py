"""Mass properties of shapes and meshes (parsers.massprops) against independent references.

References: textbook closed forms for primitives (written out below, not taken
from the code under test); for tessellated solids, the exact values of the
inscribed and circumscribed solids of revolution, which bound the tessellation;
the parallel-axis and rotation formulas; trimesh's own integration of a merged
mesh for ``combine``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from mbcompose.parsers import Geometry, InputError, MassProperties, Pose, read_assembly
from mbcompose.parsers.massprops import (combine, combine_groups, inertia_problem, mesh_mass_properties,
                                         shape_mass_properties, transform_mass_arrays)

RTOL = 1e-9
DENSITY = 2700.0


def rot(axis, angle):
    """Rodrigues' rotation matrix about ``axis`` by ``angle`` (rad)."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def parallel_axis(inertia_c, mass, d):
    """Inertia about a point at offset ``-d`` from the com: J_c + m (|d|^2 1 - d d^T)."""
    d = np.asarray(d, dtype=float)
    return inertia_c + mass * (d @ d * np.eye(3) - np.outer(d, d))


def write_mesh(mesh: trimesh.Trimesh, path: Path) -> str:
    """Write an OBJ with all 17 digits (STL and PLY store float32, 1e-7 relative)."""
    mesh.export(path, digits=17)
    return str(path)


def assert_mass_props(mp: MassProperties, mass, com, inertia, rtol=RTOL):
    assert mp.mass == pytest.approx(mass, rel=rtol)
    scale = max(np.linalg.norm(com), 1.0)
    np.testing.assert_allclose(mp.com, com, rtol=0, atol=rtol * scale)
    np.testing.assert_allclose(mp.inertia, inertia, rtol=0, atol=rtol * np.abs(inertia).max())


# ---------------------------------------------------------------- primitives, closed forms

def test_box_primitive_matches_closed_form():
    a, b, c = 0.3, 0.05, 0.12
    m = DENSITY * a * b * c
    expected = m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    mp = shape_mass_properties(Geometry("box", {"size": np.array([a, b, c])}), DENSITY)
    assert_mass_props(mp, m, np.zeros(3), expected)


def test_cylinder_primitive_matches_closed_form():
    r, h = 0.04, 0.25
    m = DENSITY * np.pi * r * r * h
    expected = np.diag([m * (3 * r * r + h * h) / 12.0, m * (3 * r * r + h * h) / 12.0, m * r * r / 2.0])
    mp = shape_mass_properties(Geometry("cylinder", {"radius": r, "length": h}), DENSITY)
    assert_mass_props(mp, m, np.zeros(3), expected)


def test_sphere_primitive_matches_closed_form():
    r = 0.07
    m = DENSITY * 4.0 / 3.0 * np.pi * r ** 3
    mp = shape_mass_properties(Geometry("sphere", {"radius": r}), DENSITY)
    assert_mass_props(mp, m, np.zeros(3), 0.4 * m * r * r * np.eye(3))


def test_capsule_primitive_matches_cylinder_plus_two_hemispheres():
    r, h = 0.03, 0.2
    m_cyl = DENSITY * np.pi * r * r * h
    m_sph = DENSITY * 4.0 / 3.0 * np.pi * r ** 3          # both caps together
    # each cap: inertia about its flat-face centre is half the sphere's 2/5 m r^2;
    # moving it from the flat face (centroid 3r/8 above) to the capsule centre
    # (flat face h/2 away) adds m (h^2/4 + 3 r h / 8)
    axial = m_cyl * r * r / 2.0 + 0.4 * m_sph * r * r
    transverse = m_cyl * (3 * r * r + h * h) / 12.0 + m_sph * (0.4 * r * r + h * h / 4.0 + 3.0 * r * h / 8.0)
    mp = shape_mass_properties(Geometry("capsule", {"radius": r, "length": h}), DENSITY)
    assert_mass_props(mp, m_cyl + m_sph, np.zeros(3), np.diag([transverse, transverse, axial]))


def test_capsule_of_zero_length_is_a_sphere():
    r = 0.05
    m = DENSITY * 4.0 / 3.0 * np.pi * r ** 3
    mp = shape_mass_properties(Geometry("capsule", {"radius": r, "length": 0.0}), DENSITY)
    assert_mass_props(mp, m, np.zeros(3), 0.4 * m * r * r * np.eye(3))


def test_primitive_mass_scales_linearly_with_density():
    g = Geometry("box", {"size": np.array([0.1, 0.2, 0.3])})
    lo, hi = shape_mass_properties(g, 1000.0), shape_mass_properties(g, 8000.0)
    assert hi.mass == pytest.approx(8.0 * lo.mass, rel=RTOL)
    np.testing.assert_allclose(hi.inertia, 8.0 * lo.inertia, rtol=RTOL)


# ---------------------------------------------------------------- tessellated solids

@pytest.mark.parametrize("sections", [16, 64, 256])
def test_tessellated_cylinder_lies_between_inscribed_and_circumscribed_cylinders(tmp_path, sections):
    """A regular n-gon prism contains the cylinder of radius r cos(pi/n) and lies in the one of
    radius r; volume and every moment about the (common) centroid are monotone in the set."""
    r, h = 0.05, 0.2
    path = write_mesh(trimesh.creation.cylinder(radius=r, height=h, sections=sections), tmp_path / "cyl.obj")
    mp = shape_mass_properties(Geometry("mesh", {}, file=path), DENSITY)

    def cyl(radius):
        m = DENSITY * np.pi * radius ** 2 * h
        return m, np.array([m * (3 * radius ** 2 + h * h) / 12.0] * 2 + [m * radius ** 2 / 2.0])

    r_in = r * np.cos(np.pi / sections)
    (m_in, I_in), (m_out, I_out) = cyl(r_in), cyl(r)
    assert m_in <= mp.mass < m_out
    # the prism's exact area is (n/2) r^2 sin(2 pi/n): its volume is exact, not just bounded
    assert mp.mass == pytest.approx(DENSITY * h * sections / 2.0 * r * r * np.sin(2 * np.pi / sections), rel=1e-9)
    diag = np.diag(mp.inertia)
    assert np.all(I_in <= diag + 1e-15) and np.all(diag < I_out)
    np.testing.assert_allclose(mp.com, 0.0, atol=1e-12)
    np.testing.assert_allclose(mp.inertia - np.diag(diag), 0.0, atol=1e-12 * diag.max())
    # the relative error of the polar moment is at most 1 - cos^4(pi/n)
    assert (I_out[2] - diag[2]) / I_out[2] <= 1.0 - np.cos(np.pi / sections) ** 4


def test_tessellated_cone_lies_between_inscribed_and_circumscribed_cones(tmp_path):
    """A pyramid over a regular n-gon: its centroid is h/4 above the base like any cone's, and it
    lies between the cones of base radius r cos(pi/n) and r, so its moments about that centroid do."""
    r, h, n = 0.06, 0.15, 96
    path = write_mesh(trimesh.creation.cone(radius=r, height=h, sections=n), tmp_path / "cone.obj")
    mp = shape_mass_properties(Geometry("mesh", {}, file=path), DENSITY)

    def cone(radius):
        m = DENSITY * np.pi * radius ** 2 * h / 3.0
        t = m * (3.0 * radius ** 2 / 20.0 + 3.0 * h * h / 80.0)
        return m, np.array([t, t, 0.3 * m * radius ** 2])

    (m_in, I_in), (m_out, I_out) = cone(r * np.cos(np.pi / n)), cone(r)
    assert m_in <= mp.mass < m_out
    np.testing.assert_allclose(mp.com, [0.0, 0.0, h / 4.0], atol=1e-12)
    diag = np.diag(mp.inertia)
    assert np.all(I_in <= diag + 1e-15) and np.all(diag < I_out)
    bound = 1.0 - np.cos(np.pi / n) ** 4
    np.testing.assert_allclose(diag, I_out, rtol=bound)


def test_tessellated_solid_of_revolution_from_revolve_bounds(tmp_path):
    """A stepped shaft revolved by trimesh.creation.revolve: between the exact solids of
    radius r cos(pi/n) and r (two coaxial cylinders stacked)."""
    n = 128
    # profile (radius, z): r1 = 0.03 for z in [0, 0.1], r2 = 0.015 for z in [0.1, 0.16]
    profile = np.array([[0.0, 0.0], [0.03, 0.0], [0.03, 0.1], [0.015, 0.1], [0.015, 0.16], [0.0, 0.16]])
    mesh = trimesh.creation.revolve(profile, sections=n)
    assert mesh.is_watertight
    path = write_mesh(mesh, tmp_path / "shaft.obj")
    mp = shape_mass_properties(Geometry("mesh", {}, file=path), DENSITY)

    def stepped(scale):
        parts = []
        for radius, z0, z1 in ((0.03 * scale, 0.0, 0.1), (0.015 * scale, 0.1, 0.16)):
            L = z1 - z0
            m = DENSITY * np.pi * radius ** 2 * L
            parts.append((m, (z0 + z1) / 2.0, m * (3 * radius ** 2 + L * L) / 12.0, m * radius ** 2 / 2.0))
        m = sum(p[0] for p in parts)
        zc = sum(p[0] * p[1] for p in parts) / m
        t = sum(p[2] + p[0] * (p[1] - zc) ** 2 for p in parts)
        return m, zc, np.array([t, t, sum(p[3] for p in parts)])

    m_in, zc_in, I_in = stepped(np.cos(np.pi / n))
    m_out, zc_out, I_out = stepped(1.0)
    assert m_in <= mp.mass < m_out
    # both steps shrink by the same factor, so the centroid height is the same for every scale
    assert zc_in == pytest.approx(zc_out, rel=1e-12)
    np.testing.assert_allclose(mp.com, [0.0, 0.0, zc_out], atol=1e-12)
    diag = np.diag(mp.inertia)
    assert np.all(I_in <= diag + 1e-15) and np.all(diag < I_out)


# ---------------------------------------------------------------- poses: parallel axis and rotation

def _asymmetric_mesh():
    """A box 0.1 x 0.2 x 0.3 sheared so that its inertia has products, with its com off the origin."""
    mesh = trimesh.creation.box(extents=[0.1, 0.2, 0.3])
    shear = np.eye(4)
    shear[0, 1], shear[1, 2] = 0.3, -0.2
    mesh.apply_transform(shear)
    mesh.apply_translation([0.05, -0.02, 0.11])
    return mesh


def test_mesh_pose_moves_com_and_rotates_inertia(tmp_path):
    path = write_mesh(_asymmetric_mesh(), tmp_path / "part.obj")
    local = shape_mass_properties(Geometry("mesh", {}, file=path), DENSITY)
    R, t = rot([1.0, -2.0, 0.5], 0.7), np.array([0.3, -0.1, 0.25])
    placed = shape_mass_properties(Geometry("mesh", {}, Pose(R, t), file=path), DENSITY)
    assert placed.mass == pytest.approx(local.mass, rel=RTOL)
    np.testing.assert_allclose(placed.com, R @ local.com + t, atol=1e-12)
    np.testing.assert_allclose(placed.inertia, R @ local.inertia @ R.T, atol=1e-12 * np.abs(local.inertia).max())


def test_mesh_pose_agrees_with_trimesh_on_the_transformed_mesh(tmp_path):
    mesh = _asymmetric_mesh()
    path = write_mesh(mesh, tmp_path / "part.obj")
    R, t = rot([0.2, 1.0, -0.7], -1.1), np.array([-0.2, 0.4, 0.05])
    placed = shape_mass_properties(Geometry("mesh", {}, Pose(R, t), file=path), DENSITY)
    moved = mesh.copy()
    moved.apply_transform(Pose(R, t).matrix())
    moved.density = DENSITY
    ref = moved.mass_properties
    assert_mass_props(placed, ref["mass"], ref["center_mass"], ref["inertia"], rtol=1e-9)


def test_inertia_about_body_origin_follows_parallel_axis_theorem(tmp_path):
    path = write_mesh(_asymmetric_mesh(), tmp_path / "part.obj")
    R, t = rot([0.0, 0.0, 1.0], 0.4), np.array([0.5, 0.2, -0.3])
    mp = shape_mass_properties(Geometry("mesh", {}, Pose(R, t), file=path), DENSITY)
    c = mp.com
    expected = mp.inertia + mp.mass * np.array([
        [c[1] ** 2 + c[2] ** 2, -c[0] * c[1], -c[0] * c[2]],
        [-c[0] * c[1], c[0] ** 2 + c[2] ** 2, -c[1] * c[2]],
        [-c[0] * c[2], -c[1] * c[2], c[0] ** 2 + c[1] ** 2]])
    np.testing.assert_allclose(mp.inertia_about_origin(), expected, rtol=1e-12)
    # and trimesh's inertia of the moved mesh about the origin agrees
    moved = trimesh.load(path, force="mesh")
    moved.apply_transform(Pose(R, t).matrix())
    moved.density = DENSITY
    about_origin = moved.moment_inertia_frame(np.eye(4))
    np.testing.assert_allclose(mp.inertia_about_origin(), about_origin, atol=1e-9 * np.abs(about_origin).max())


def test_offset_rotated_box_primitive_matches_parallel_axis_formula():
    a, b, c = 0.2, 0.1, 0.04
    m = DENSITY * a * b * c
    J_local = m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    R, t = rot([1.0, 1.0, 0.0], np.pi / 3), np.array([0.1, 0.0, -0.2])
    mp = shape_mass_properties(Geometry("box", {"size": np.array([a, b, c])}, Pose(R, t)), DENSITY)
    assert_mass_props(mp, m, t, R @ J_local @ R.T)
    np.testing.assert_allclose(mp.inertia_about_origin(), parallel_axis(R @ J_local @ R.T, m, t), rtol=1e-12)


# ---------------------------------------------------------------- combine

def test_combine_equals_trimesh_mass_properties_of_the_concatenated_mesh():
    box = trimesh.creation.box(extents=[0.1, 0.2, 0.05])
    box.apply_transform(trimesh.transformations.rotation_matrix(0.3, [0, 0, 1]))
    cyl = trimesh.creation.cylinder(radius=0.03, height=0.2, sections=32)
    cyl.apply_transform(trimesh.transformations.rotation_matrix(1.0, [1, 0, 0]))
    cyl.apply_translation([0.4, 0.1, 0.0])
    cone = trimesh.creation.cone(radius=0.05, height=0.1, sections=24)
    cone.apply_translation([-0.3, 0.2, 0.3])
    parts = [mesh_mass_properties(m, DENSITY, name) for m, name in ((box, "box"), (cyl, "cyl"), (cone, "cone"))]
    merged = combine(parts)
    whole = trimesh.util.concatenate([box, cyl, cone])
    whole.density = DENSITY
    ref = whole.mass_properties
    assert_mass_props(merged, ref["mass"], ref["center_mass"], ref["inertia"], rtol=1e-9)


def test_combine_of_two_point_like_spheres_matches_dumbbell_formula():
    r, d = 0.01, 0.5
    m = DENSITY * 4.0 / 3.0 * np.pi * r ** 3
    spheres = [shape_mass_properties(Geometry("sphere", {"radius": r}, Pose(np.eye(3), [0.0, 0.0, s * d / 2])),
                                     DENSITY) for s in (1.0, -1.0)]
    merged = combine(spheres)
    transverse = 2 * (0.4 * m * r * r + m * (d / 2) ** 2)
    assert_mass_props(merged, 2 * m, np.zeros(3), np.diag([transverse, transverse, 2 * 0.4 * m * r * r]))


def test_combine_ignores_massless_parts():
    part = MassProperties(2.0, [0.1, 0.0, 0.0], np.diag([0.1, 0.2, 0.25]))
    merged = combine([part, MassProperties.zero()])
    assert_mass_props(merged, 2.0, part.com, part.inertia)


def test_combine_groups_merges_each_group_as_the_hand_computed_formulas():
    """Four groups at once: two point masses (parallel-axis by hand), one part alone, two massless
    rotors (their inertias add, the centre is the mean of theirs) and a part with nothing."""
    J = np.diag([0.1, 0.2, 0.3])
    mass = np.array([1.0, 3.0, 2.0, 0.0, 0.0, 0.0])
    com = np.array([[0.0, 0.0, 0.0], [0.4, 0.0, 0.0], [1.0, 2.0, 3.0], [0.0, 1.0, 0.0], [0.0, 3.0, 0.0], [5.0, 5.0, 5.0]])
    inertia = np.array([np.zeros((3, 3)), np.zeros((3, 3)), J, J, 2 * J, np.zeros((3, 3))])
    pair, alone, rotors, nothing = combine_groups(mass, com, inertia, [[0, 1], [2], [3, 4], [5]])
    # masses 1 and 3 at x = 0 and 0.4: centre 0.3; about it 1 * 0.3^2 + 3 * 0.1^2 = 0.12 off the x axis
    assert_mass_props(pair, 4.0, [0.3, 0.0, 0.0], np.diag([0.0, 0.12, 0.12]))
    assert_mass_props(alone, 2.0, [1.0, 2.0, 3.0], J)
    assert_mass_props(rotors, 0.0, [0.0, 2.0, 0.0], 3 * J)
    assert_mass_props(nothing, 0.0, np.zeros(3), np.zeros((3, 3)))


def test_transform_mass_arrays_rotates_a_stack_as_R_c_plus_t_and_R_J_RT():
    R = np.array([rot([0.0, 0.0, 1.0], np.pi / 2), np.eye(3)])          # a quarter turn about z; none
    c, t = np.array([[1.0, 0.0, 0.0], [1.0, 2.0, 3.0]]), np.array([[0.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    J = np.array([np.diag([1.0, 2.0, 3.0])] * 2)
    com, inertia = transform_mass_arrays(c, J, R, t)
    np.testing.assert_allclose(com, [[0.0, 1.0, 1.0], [2.0, 3.0, 4.0]], atol=1e-15)
    np.testing.assert_allclose(inertia, [np.diag([2.0, 1.0, 3.0]), np.diag([1.0, 2.0, 3.0])], atol=1e-15)


# ---------------------------------------------------------------- physical-inertia checks

@pytest.mark.parametrize("inertia", [
    np.diag([1.0, 2.0, 2.5]),
    np.diag([1.0, 1.0, 2.0]),                                      # thin disc: triangle equality
    rot([1.0, 2.0, 3.0], 0.9) @ np.diag([0.3, 0.4, 0.5]) @ rot([1.0, 2.0, 3.0], 0.9).T,
])
def test_inertia_problem_accepts_physical_tensors(inertia):
    assert inertia_problem(inertia) is None


@pytest.mark.parametrize("inertia, word", [
    (np.diag([1.0, 1.0, 0.0]), "positive definite"),
    (np.diag([1.0, 2.0, -0.5]), "positive definite"),
    (np.array([[1.0, 0.2, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.5]]), "symmetric"),
    (np.diag([1.0, 1.0, 3.0]), "triangle"),
    (rot([0.0, 1.0, 1.0], 0.5) @ np.diag([0.1, 0.2, 0.5]) @ rot([0.0, 1.0, 1.0], 0.5).T, "triangle"),
    (np.full((3, 3), np.nan), "finite"),
])
def test_inertia_problem_rejects_unphysical_tensors(inertia, word):
    problem = inertia_problem(inertia)
    assert problem is not None and word in problem



def _eigen_verdict(J) -> bool:
    """Physical by the principal moments themselves (numpy's eigvalsh), with inertia_problem's tolerances."""
    from mbcompose.dynamics.tolerances import INERTIA_RTOL
    eig = np.linalg.eigvalsh(J)
    return bool(eig[0] > INERTIA_RTOL * np.abs(J).max() and eig[0] + eig[1] >= eig[2] * (1.0 - INERTIA_RTOL))


def test_inertia_problem_as_rows_agrees_with_the_principal_moments_near_the_bounds():
    """The fast test on the rows (Sylvester's criterion) never passes what the eigenvalues refuse:
    random tensors, and tensors a relative 1e-9 from the positive-definite and triangle bounds."""
    rng = np.random.default_rng(7)
    for k in range(3000):
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        moments = rng.uniform(0.01, 1.0, 3)
        if k % 3 == 1:
            moments[2] = moments[0] + moments[1] + rng.normal() * 1e-9 * moments.max()
        elif k % 3 == 2:
            moments[0] = rng.normal() * 1e-9 * moments.max()
        J = Q @ np.diag(moments * 10.0 ** rng.uniform(-6, 3)) @ Q.T
        J = 0.5 * (J + J.T)
        assert (inertia_problem(J.tolist()) is None) == _eigen_verdict(J), J.tolist()

# ---------------------------------------------------------------- open meshes

def _open_box(tmp_path) -> str:
    box = trimesh.creation.box(extents=[0.1, 0.2, 0.3])
    box.update_faces(np.arange(len(box.faces)) != 0)   # drop one triangle
    assert not box.is_watertight
    return write_mesh(box, tmp_path / "open_box.obj")


def test_open_mesh_raises_input_error_naming_the_file(tmp_path):
    path = _open_box(tmp_path)
    with pytest.raises(InputError) as info:
        shape_mass_properties(Geometry("mesh", {}, file=path), DENSITY)
    assert "open_box.obj" in str(info.value)
    assert "watertight" in str(info.value)


def test_open_mesh_with_convex_hull_gets_the_hull_volume(tmp_path):
    path = _open_box(tmp_path)
    mp = shape_mass_properties(Geometry("mesh", {"convex_hull": True}, file=path), DENSITY)
    a, b, c = 0.1, 0.2, 0.3
    m = DENSITY * a * b * c
    assert_mass_props(mp, m, np.zeros(3), m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b]))


def test_yaml_body_with_open_mesh_names_body_and_file_and_convex_hull_is_reported(tmp_path):
    _open_box(tmp_path)
    text = """
bodies:
  - name: lid
    density: 1000
    geometry:
      - mesh: open_box.obj{extra}
"""
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.format(extra=""))
    with pytest.raises(InputError) as info:
        read_assembly(bad)
    assert "lid" in str(info.value) and "open_box.obj" in str(info.value)
    good = tmp_path / "good.yaml"
    good.write_text(text.format(extra="\n        convex_hull: true"))
    body = read_assembly(good).body("lid")
    assert body.mass.mass == pytest.approx(1000.0 * 0.1 * 0.2 * 0.3, rel=1e-9)
    assert "convex hull" in str(body.sources["mass"])


@pytest.mark.parametrize("kind, params", [("box", {"size": [0.0, 1.0, 1.0]}), ("sphere", {"radius": -1.0}),
                                          ("cylinder", {"radius": 1.0, "length": 0.0}),
                                          ("ellipsoid", {"radii": [1.0, 0.0, 1.0]})])
def test_a_primitive_without_volume_is_an_input_error(kind, params):
    # every reader's shapes meet here: a zero side with a density gave zero mass or NaN inertia
    from mbcompose.parsers.errors import InputError
    from mbcompose.parsers.massprops import primitive_unit_density

    with pytest.raises(InputError, match="must be positive"):
        primitive_unit_density(kind, params)
