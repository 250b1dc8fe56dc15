"""The STEP reader: XCAF tree, names, units, densities and B-rep mass properties.

References: the analytic mass properties of a box, a cylinder and a sphere;
BRepGProp called here directly on the shapes that were written; trimesh on the
reader's own fine tessellation (within the tessellation error); the same
assembly written in mm, m and inch.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

pytest.importorskip("OCP")

import cad_shapes as S  # noqa: E402
import trimesh  # noqa: E402

from mbcompose.parsers import read_assembly  # noqa: E402
from mbcompose.parsers.step.writer import Node, Product, write_step  # noqa: E402

RHO = 7850.0
A, B, C = 10.0, 20.0, 30.0          # box, mm
R, H = 6.0, 25.0                    # cylinder, mm
RS = 9.0                            # sphere, mm


def primitives_tree():
    box = Product("box", S.box((0, 0, 0), (A, B, C)), density=RHO)
    cyl = Product("cyl", S.cylinder(R, (0, 0, 0), (0, 0, H)), density=RHO)
    ball = Product("ball", S.sphere(RS), density=RHO)
    return Node("top", children=[
        Node("box", box, placement=S.rigid([0.2, 0.4, -0.3], [1, 2, 3])),
        Node("cyl", cyl, placement=S.rigid([-0.7, 0.1, 0.5], [10, 2, 3])),
        Node("ball", ball, placement=S.rigid([0.1, 0.1, 0.9], [20, -4, 3]))])


def analytic(name):
    """(mass kg, com m, inertia about com kg m^2) in the product frame."""
    mm = 1e-3
    if name == "box":
        m = RHO * A * B * C * mm ** 3
        a, b, c = A * mm, B * mm, C * mm
        return m, np.array([a, b, c]) / 2, m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    if name == "cyl":
        r, h = R * mm, H * mm
        m = RHO * np.pi * r * r * h
        return m, np.array([0, 0, h / 2]), np.diag([m * (3 * r * r + h * h) / 12] * 2 + [m * r * r / 2])
    r = RS * mm
    m = RHO * 4 / 3 * np.pi * r ** 3
    return m, np.zeros(3), np.eye(3) * 0.4 * m * r * r


@pytest.fixture(scope="module")
def primitives(tmp_path_factory):
    d = tmp_path_factory.mktemp("prim")
    write_step(d / "prim.step", primitives_tree())
    return read_assembly(d / "prim.step", mesh_dir=d / "meshes", ground=["box", "cyl", "ball"])


@pytest.mark.parametrize("name", ["box", "cyl", "ball"])
def test_primitives_equal_the_analytic_formulas(primitives, name):
    m, com, inertia = analytic(name)
    body = primitives.body(name)
    assert body.mass.mass == pytest.approx(m, rel=1e-9)
    np.testing.assert_allclose(body.mass.com, com, rtol=0, atol=1e-9 * 0.03)
    np.testing.assert_allclose(body.mass.inertia, inertia, rtol=0, atol=1e-9 * np.abs(inertia).max())


def test_the_file_material_density_is_read_and_cited(primitives):
    for body in primitives.bodies:
        assert "7850 kg/m^3 from the file's material" in str(body.sources["mass"])


def test_colours_of_the_file_reach_the_meshes(tmp_path):
    box = Product("box", S.box((0, 0, 0), (A, B, C)), color=(0.25, 0.5, 0.75), density=RHO)
    write_step(tmp_path / "c.step", Node("top", children=[Node("box", box)]))
    (geom,) = read_assembly(tmp_path / "c.step", mesh_dir=tmp_path / "m").body("box").geometry
    np.testing.assert_allclose(geom.params["rgba"], [0.25, 0.5, 0.75, 1.0], atol=1e-6)


def test_mass_properties_equal_brepgprop_on_the_written_shapes(tmp_path):
    """Seeker-like parts placed anywhere: mass, com and inertia (world frame) = BRepGProp x density."""
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps
    from OCP.TopLoc import TopLoc_Location

    from mbcompose.parsers.step.writer import trsf
    parts = S.pin_mechanism(5.2, shoulder=True) + [("ball", S.product("ball", S.fuse(
        S.sphere(4.0, (40, 0, 0)), S.cylinder(2, (40, 0, 0), (40, 0, 12)))), np.eye(4))]
    path = S.write_mechanism(tmp_path / "m.step", parts, nest=("pin",))
    a = read_assembly(path, mesh_dir=tmp_path / "meshes", ground=["plate", "ball"])
    for name, prod, local in parts:
        place = S.WORLD @ local
        moved = prod.shape.Moved(TopLoc_Location(trsf(place)))
        g = GProp_GProps()
        BRepGProp.VolumeProperties_s(moved, g)
        mass = 1000.0 * g.Mass() * 1e-9
        com = np.array(g.CentreOfMass().Coord()) * 1e-3
        mat = g.MatrixOfInertia()
        inertia = 1000.0 * 1e-15 * np.array([[mat.Value(i, j) for j in (1, 2, 3)] for i in (1, 2, 3)])
        b = a.body(name)
        Rb = b.pose.rotation
        assert b.mass.mass == pytest.approx(mass, rel=1e-9)
        np.testing.assert_allclose(b.pose.apply(b.mass.com), com, atol=1e-9 * np.abs(com).max())
        np.testing.assert_allclose(Rb @ b.mass.inertia @ Rb.T, inertia, atol=1e-9 * np.abs(inertia).max())


def _fine_mesh(shape) -> trimesh.Trimesh:
    """BRepMesh of ``shape`` with linear deflection 0.01 mm and angular deflection 0.05 rad (mm)."""
    from mbcompose.parsers.step.brep import tessellate_faces
    verts, tris, n = [], [], 0
    for _, v, t in tessellate_faces(shape, 0.01, 0.05):
        verts.append(v)
        tris.append(t + n)
        n += len(v)
    return trimesh.Trimesh(np.vstack(verts), np.vstack(tris))


def test_mass_properties_agree_with_trimesh_on_a_fine_tessellation(primitives):
    """Chords of 0.05 rad: the inscribed polygons lose (0.05)^2 / 6 ~ 4e-4 of the area; tolerance 1e-3
    relative on mass, com and inertia (product frame: the written shapes are in it)."""
    for prod in (n.product for n in primitives_tree().children):
        mesh = _fine_mesh(prod.shape)      # (the sphere's poles give degenerate triangles: not 'watertight')
        mesh.apply_scale(1e-3)
        mesh.density = RHO
        m, com, inertia = analytic(prod.name)
        body = primitives.body(prod.name)
        assert mesh.mass == pytest.approx(body.mass.mass, rel=1e-3)
        assert body.mass.mass == pytest.approx(m, rel=1e-9)
        np.testing.assert_allclose(mesh.center_mass, body.mass.com, atol=1e-3 * 0.03)
        np.testing.assert_allclose(mesh.moment_inertia, body.mass.inertia, atol=1e-3 * np.abs(inertia).max())


def test_the_meshes_written_for_pictures_and_exports_are_closed_and_close_to_the_brep(primitives):
    """The reader's coarser tessellation (angular deflection 0.3 rad: ~0.3^2/6 = 1.5 % of a circle's area)."""
    for body in primitives.bodies:
        (geom,) = body.geometry
        mesh = trimesh.load(geom.file)
        assert mesh.is_watertight
        mesh.density = RHO
        assert mesh.mass == pytest.approx(body.mass.mass, rel=2e-2)
        np.testing.assert_allclose(mesh.center_mass, body.mass.com, atol=2e-2 * 0.03)


@pytest.mark.parametrize("unit", ["M", "INCH"])
def test_the_file_unit_does_not_change_the_si_answer(tmp_path, unit):
    ref = S.write_mechanism(tmp_path / "mm.step", S.pin_mechanism(5.2, shoulder=True))
    other = S.write_mechanism(tmp_path / f"{unit}.step", S.pin_mechanism(5.2, shoulder=True), unit=unit)
    a = read_assembly(ref, mesh_dir=tmp_path / "a")
    b = read_assembly(other, mesh_dir=tmp_path / "b")
    for x, y in zip(a.bodies, b.bodies):
        assert y.mass.mass == pytest.approx(x.mass.mass, rel=1e-9)
        np.testing.assert_allclose(y.pose.translation, x.pose.translation, atol=1e-12)
    assert [(j.type, j.reference, j.secondary) for j in a.joints] == \
        [(j.type, j.reference, j.secondary) for j in b.joints]


def test_instances_of_one_product_are_distinct_parts_named_by_instance(tmp_path):
    pin = Product("pin", S.cylinder(5, (0, 0, -10), (0, 0, 0)), density=1000.0)
    plate = Product("plate", S.cut(S.box((-40, -20, -10), (40, 20, 0)), *[
        S.cylinder(5, (x, 0, -11), (x, 0, 1)) for x in (-30, -10, 10, 30)]), density=1000.0)
    sub = [Node(f"pin_{k}", pin, placement=S.rigid(translation=(x, 0, 0)))
           for k, x in enumerate((-30, -10, 10, 30))]
    write_step(tmp_path / "pins.step", Node("top", children=[Node("plate", plate), Node("pins", children=sub)]))
    a = read_assembly(tmp_path / "pins.step", mesh_dir=tmp_path / "m")
    assert a.body_names == ("plate", "pin_0", "pin_1", "pin_2", "pin_3")
    assert [(j.type, j.reference, j.secondary) for j in a.joints if not j.implicit] == \
        [("fixed", "plate", f"pin_{k}") for k in range(4)]
    xs = sorted(a.body(f"pin_{k}").pose.translation[0] for k in range(4))
    np.testing.assert_allclose(xs, [-0.03, -0.01, 0.01, 0.03], atol=1e-12)


def test_duplicate_instance_names_are_numbered_in_file_order(tmp_path):
    pin = Product("pin", S.cylinder(5, (0, 0, -10), (0, 0, 0)), density=1000.0)
    plate = Product("plate", S.cut(S.box((-40, -20, -10), (40, 20, 0)), *[
        S.cylinder(5, (x, 0, -11), (x, 0, 1)) for x in (-30, 30)]), density=1000.0)
    subs = [Node(f"side_{s}", children=[Node("pin", pin)], placement=S.rigid(translation=(x, 0, 0)))
            for s, x in (("l", -30), ("r", 30))]
    write_step(tmp_path / "dup.step", Node("top", children=[Node("plate", plate), *subs]))
    a = read_assembly(tmp_path / "dup.step", mesh_dir=tmp_path / "m")
    assert a.body_names == ("plate", "pin_1", "pin_2")


def test_density_overrides_and_the_default_warning(tmp_path, caplog):
    parts = [(n, Product(n, p.shape), T) for n, p, T in S.pin_mechanism(5.2, shoulder=True)]
    path = S.write_mechanism(tmp_path / "nodens.step", parts)
    with caplog.at_level(logging.WARNING):
        a = read_assembly(path, mesh_dir=tmp_path / "m")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "plate, pin" in warnings[0] and "2700" in warnings[0]
    b = read_assembly(path, mesh_dir=tmp_path / "m", densities={"p*n": 8000.0}, density=1000.0)
    assert b.body("pin").mass.mass == pytest.approx(a.body("pin").mass.mass * 8000 / 2700, rel=1e-12)
    assert b.body("plate").mass.mass == pytest.approx(a.body("plate").mass.mass * 1000 / 2700, rel=1e-12)
    assert "densities['p*n']" in str(b.body("pin").sources["mass"])


def test_json_of_a_cad_input_always_has_contacts(primitives):
    from mbcompose.composer.inspect import render_json
    assert render_json(primitives)["contacts"] == []          # three grounded parts, touching nothing
