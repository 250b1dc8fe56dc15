"""The sample assemblies under samples/: they load, and they are what their READMEs say.

References: seed 004's Table 1 (the seeker's joints), the seeker's STL files
integrated by trimesh directly, the double pendulum's analytic mass matrix, and
the link lengths and velocity ratios stated in the samples' READMEs (derived by
hand from the geometry, not from the code).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from mbcompose.parsers import GROUND, read_assembly
from mbcompose.parsers.massprops import inertia_problem
from seed004_tables import TABLE_1, TABLE_2

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SAMPLE_FILES = sorted(p for p in SAMPLES.glob("*/*.yaml") if p.name not in ("pipeline.yaml", "sweep.yaml"))


def load(name: str):
    return read_assembly(SAMPLES / name / f"{name}.yaml")


def declared_joints(assembly):
    """The joints written in the file (without the reader's implicit base joint)."""
    return [j for j in assembly.joints if not getattr(j, "implicit", False)]


def twist(joint):
    """Unit twist [omega; v] (angular first) of a joint at the reference configuration, assembly frame."""
    a = np.asarray(joint.axis, dtype=float)
    if joint.type == "prismatic":
        return np.concatenate([np.zeros(3), a])
    return np.concatenate([a, np.cross(joint.origin, a)])


def rotation_about(axis, angle):
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def winding_number(mesh: trimesh.Trimesh, point) -> float:
    """Generalised winding number of a closed mesh about ``point`` (1 inside, 0 outside): the sum of
    the triangles' solid angles (Van Oosterom and Strackee) over 4 pi."""
    a, b, c = (mesh.triangles - np.asarray(point, dtype=float)).transpose(1, 0, 2)
    la, lb, lc = (np.linalg.norm(x, axis=1) for x in (a, b, c))
    num = np.einsum("ij,ij->i", a, np.cross(b, c))
    den = (la * lb * lc + np.einsum("ij,ij->i", a, b) * lc + np.einsum("ij,ij->i", b, c) * la
           + np.einsum("ij,ij->i", c, a) * lb)
    return float(2.0 * np.arctan2(num, den).sum() / (4.0 * np.pi))


def point_to_mesh_distance(mesh: trimesh.Trimesh, point) -> float:
    """Distance from ``point`` to the surface of ``mesh`` (0 if inside), by brute force over triangles."""
    point = np.asarray(point, dtype=float)
    closest = trimesh.triangles.closest_point(mesh.triangles, np.tile(point, (len(mesh.faces), 1)))
    d = float(np.linalg.norm(closest - point, axis=1).min())
    # the winding number is only reliable off the surface
    return 0.0 if d < 1e-9 or winding_number(mesh, point) > 0.5 else d


# ---------------------------------------------------------------- every sample

@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.parent.name)
def test_sample_loads_with_physical_mass_properties(path):
    assembly = read_assembly(path)
    assert assembly.bodies
    for body in assembly.bodies:
        assert body.mass.mass > 0.0
        assert inertia_problem(body.mass.inertia) is None
    names = set(assembly.body_names) | {GROUND}
    for joint in assembly.joints:
        assert joint.reference in names and joint.secondary in names
    np.testing.assert_allclose(assembly.gravity, [0.0, 0.0, -9.81], rtol=1e-12)


def test_every_sample_folder_has_a_readme_and_the_expected_samples_exist():
    folders = {p.parent.name for p in SAMPLE_FILES}
    assert {"seeker", "double_pendulum", "fourbar", "slider_crank"} <= folders
    for folder in folders:
        assert (SAMPLES / folder / "README.md").is_file()


# ---------------------------------------------------------------- seeker (seed 004)

SEEKER_PARTS = {"housing", "gimbal_ring", "camera", "pitch_connector_a", "pitch_connector_b",
                "yaw_connector_a", "yaw_connector_b", "shaft_a", "shaft_b"}
ALUMINIUM = 2700.0


def test_seeker_has_the_nine_parts_of_seed_004():
    seeker = load("seeker")
    assert len(seeker.bodies) == 9
    assert set(seeker.body_names) == SEEKER_PARTS


def test_seeker_joints_are_table_1_in_order():
    seeker = load("seeker")
    got = [(j.name, j.type, j.reference, j.secondary, j.actuated) for j in declared_joints(seeker)]
    assert got == TABLE_1


def test_seeker_housing_is_welded_to_ground_by_the_only_implicit_joint():
    seeker = load("seeker")
    extra = [j for j in seeker.joints if j not in declared_joints(seeker)]
    assert len(extra) == 1
    weld = extra[0]
    assert weld.type == "fixed" and {weld.reference, weld.secondary} == {GROUND, "housing"}
    assert not any(GROUND in (j.reference, j.secondary) for j in declared_joints(seeker))


def _line_distance(p1, a1, p2, a2) -> float:
    n = np.cross(a1, a2)
    if np.linalg.norm(n) < 1e-12:
        return float(np.linalg.norm(np.cross(p2 - p1, a1)))
    return float(abs((p2 - p1) @ n) / np.linalg.norm(n))


def test_seeker_pitch_revolutes_are_colinear_and_yaw_revolutes_are_colinear():
    seeker = load("seeker")
    for a, b in (("pitch_a", "pitch_b"), ("yaw_a", "yaw_b")):
        ja, jb = seeker.joint(a), seeker.joint(b)
        assert np.linalg.norm(np.cross(ja.axis, jb.axis)) < 1e-12
        assert np.linalg.norm(np.cross(jb.origin - ja.origin, ja.axis)) < 1e-12
        assert np.linalg.norm(jb.origin - ja.origin) > 0.05   # two distinct bearings


def test_seeker_pitch_and_yaw_axis_lines_meet_at_right_angles_at_the_gimbal_centre():
    seeker = load("seeker")
    pitch, yaw = seeker.joint("pitch_a"), seeker.joint("yaw_a")
    assert abs(pitch.axis @ yaw.axis) < 1e-12
    assert _line_distance(pitch.origin, pitch.axis, yaw.origin, yaw.axis) < 1e-12
    # the common point: the origin (gimbal centre)
    np.testing.assert_allclose(np.cross(pitch.origin, pitch.axis), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.cross(yaw.origin, yaw.axis), 0.0, atol=1e-12)


def test_seeker_revolute_twists_span_two_freedoms():
    """Four revolutes on two co-linear pairs: their twists have rank 2 (two redundant joints)."""
    seeker = load("seeker")
    T = np.column_stack([twist(seeker.joint(n)) for n in ("pitch_a", "pitch_b", "yaw_a", "yaw_b")])
    assert np.linalg.matrix_rank(T, tol=1e-9) == 2
    assert np.linalg.matrix_rank(T[:, :2], tol=1e-9) == 1
    assert np.linalg.matrix_rank(T[:, 2:], tol=1e-9) == 1


def _seeker_part_mesh_in_assembly(seeker, name) -> trimesh.Trimesh:
    mesh = trimesh.load(SAMPLES / "seeker" / "meshes" / f"{name}.stl", force="mesh")
    mesh.apply_scale(1e-3)
    mesh.apply_transform(seeker.body(name).pose.matrix())
    return mesh


def test_seeker_joint_origins_lie_on_both_parts_they_join():
    """Each attachment point is on (within 0.2 mm of the faceted surface of) both parts, so the
    two loops close at the reference configuration."""
    seeker = load("seeker")
    meshes = {name: _seeker_part_mesh_in_assembly(seeker, name) for name in SEEKER_PARTS}
    for joint in declared_joints(seeker):
        for body in (joint.reference, joint.secondary):
            d = point_to_mesh_distance(meshes[body], joint.origin)
            assert d < 2e-4, f"{joint.name}: origin {joint.origin} is {d * 1e3:.3f} mm from {body}"


def test_seeker_camera_clears_the_ring_and_the_ring_clears_the_housing_at_any_gimbal_angle():
    """Rotations about axes through the gimbal centre keep distances to it: the camera lies in the
    ball of radius 44 mm (the ring's bore) and the ring in the ball of radius 62 mm (the housing's)."""
    seeker = load("seeker")
    camera = _seeker_part_mesh_in_assembly(seeker, "camera")
    ring = _seeker_part_mesh_in_assembly(seeker, "gimbal_ring")
    assert np.linalg.norm(camera.vertices, axis=1).max() < 0.044
    assert np.linalg.norm(ring.vertices, axis=1).max() < 0.062


def test_seeker_mass_is_aluminium_density_times_the_stl_volumes():
    seeker = load("seeker")
    total = 0.0
    for name in SEEKER_PARTS:
        mesh = trimesh.load(SAMPLES / "seeker" / "meshes" / f"{name}.stl", force="mesh")
        assert mesh.is_watertight
        mass = ALUMINIUM * mesh.volume * 1e-9                    # mm^3 -> m^3
        body = seeker.body(name)
        assert body.mass.mass == pytest.approx(mass, rel=1e-9)
        np.testing.assert_allclose(body.mass.com, mesh.center_mass * 1e-3, atol=1e-12)
        total += mass
    assert seeker.total_mass == pytest.approx(total, rel=1e-9)
    assert 1.0 < seeker.total_mass < 1.3                         # README: 1.150703 kg
    assert seeker.total_mass == pytest.approx(1.150703, abs=1e-6)


def test_seeker_committed_meshes_are_those_make_meshes_generates():
    import importlib.util

    spec = importlib.util.spec_from_file_location("seeker_make_meshes", SAMPLES / "seeker" / "make_meshes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generated = module.part_meshes()
    assert set(generated) == SEEKER_PARTS
    for name, mesh in generated.items():
        stored = trimesh.load(SAMPLES / "seeker" / "meshes" / f"{name}.stl", force="mesh")
        assert stored.volume == pytest.approx(mesh.volume, rel=1e-6)        # STL stores float32
        np.testing.assert_allclose(stored.bounds, mesh.bounds, atol=1e-4)


def test_seeker_meshes_are_small_files():
    for f in (SAMPLES / "seeker" / "meshes").glob("*.stl"):
        assert f.stat().st_size < 64_000


def test_seeker_revolute_limits_are_25_degrees():
    seeker = load("seeker")
    for name in ("pitch_a", "pitch_b", "yaw_a", "yaw_b"):
        lim = seeker.joint(name).limits
        assert lim.lower == pytest.approx(-np.radians(25)) and lim.upper == pytest.approx(np.radians(25))


# ---------------------------------------------------------------- double pendulum

M1, C1, I1, L1 = 1.0, 0.25, 0.021, 0.5        # README: link1
M2, C2, I2 = 0.8, 0.2, 0.011                   # README: link2


def analytic_double_pendulum_mass_matrix(q2, m1=M1, c1=C1, i1=I1, l1=L1, m2=M2, c2=C2, i2=I2):
    """Planar two-link mass matrix, relative joint angles, links hanging along the same line at q = 0."""
    m11 = i1 + m1 * c1 ** 2 + i2 + m2 * (l1 ** 2 + c2 ** 2 + 2 * l1 * c2 * np.cos(q2))
    m12 = i2 + m2 * (c2 ** 2 + l1 * c2 * np.cos(q2))
    m22 = i2 + m2 * c2 ** 2
    return np.array([[m11, m12], [m12, m22]])


def serial_chain_mass_matrix(assembly, joint_names, q):
    """M = sum_i m_i Jv_i^T Jv_i + Jw_i^T I_i Jw_i for a serial chain of revolutes, computed from the
    Assembly's reference-configuration frames by products of exponentials (independent of dynamics/)."""
    joints = [assembly.joint(n) for n in joint_names]
    n = len(joints)
    M = np.zeros((n, n))
    R_acc, t_acc = np.eye(3), np.zeros(3)
    axes, points = [], []
    for k, joint in enumerate(joints):
        axes.append(R_acc @ joint.axis)
        points.append(R_acc @ joint.origin + t_acc)
        Rk = rotation_about(joint.axis, q[k])
        # compose with a rotation about the joint line through its reference origin
        t_acc = R_acc @ (joint.origin - Rk @ joint.origin) + t_acc
        R_acc = R_acc @ Rk
        body = assembly.body(joint.secondary)
        R_body = R_acc @ body.pose.rotation
        com = R_acc @ body.pose.apply(body.mass.com) + t_acc
        inertia = R_body @ body.mass.inertia @ R_body.T
        Jw = np.zeros((3, n))
        Jv = np.zeros((3, n))
        for j in range(k + 1):
            Jw[:, j] = axes[j]
            Jv[:, j] = np.cross(axes[j], com - points[j])
        M += body.mass.mass * Jv.T @ Jv + Jw.T @ inertia @ Jw
    return M


def test_double_pendulum_mass_properties_are_the_readme_numbers():
    dp = load("double_pendulum")
    link1, link2 = dp.body("link1"), dp.body("link2")
    assert link1.mass.mass == M1 and link2.mass.mass == M2
    np.testing.assert_allclose(link1.pose.apply(link1.mass.com), [0, 0, -C1])
    np.testing.assert_allclose(link2.pose.apply(link2.mass.com) - dp.joint("elbow").origin, [0, 0, -C2])
    np.testing.assert_allclose(np.linalg.norm(dp.joint("elbow").origin - dp.joint("shoulder").origin), L1)
    np.testing.assert_allclose(link1.mass.inertia, np.diag([0.021, 0.021, 0.0003]))
    np.testing.assert_allclose(link2.mass.inertia, np.diag([0.011, 0.011, 0.0002]))
    assert dp.total_mass == pytest.approx(1.8)


@pytest.mark.parametrize("q2, expected", [
    (0.0, [[0.4865, 0.123], [0.123, 0.043]]),
    (np.pi / 2, [[0.3265, 0.043], [0.043, 0.043]]),
    (np.pi, [[0.1665, -0.037], [-0.037, 0.043]]),
])
def test_double_pendulum_readme_table_matches_the_analytic_formula(q2, expected):
    np.testing.assert_allclose(analytic_double_pendulum_mass_matrix(q2), expected, atol=1e-12)


@pytest.mark.parametrize("q", [(0.0, 0.0), (0.3, -1.2), (-2.0, 2.5), (1.0, np.pi)])
def test_double_pendulum_mass_matrix_from_the_assembly_equals_the_analytic_formula(q):
    dp = load("double_pendulum")
    M = serial_chain_mass_matrix(dp, ["shoulder", "elbow"], np.array(q))
    np.testing.assert_allclose(M, analytic_double_pendulum_mass_matrix(q[1]), rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- closed chains: four-bar, slider-crank

def _point_in_box_shape(body, shape, point, tol=1e-9) -> bool:
    local = body.pose.compose(shape.pose).inverse().apply(point)
    return bool(np.all(np.abs(local) <= np.asarray(shape.params["size"]) / 2.0 + tol))


def _joint_origins_lie_on_their_bodies(assembly):
    for joint in assembly.joints:
        for name in (joint.reference, joint.secondary):
            if name == GROUND:
                continue
            body = assembly.body(name)
            assert any(_point_in_box_shape(body, s, joint.origin) for s in body.geometry if s.kind == "box"), \
                f"{joint.name}: origin not on {name}"


def _loop_rates(assembly, forward, backward):
    """Null space of the loop closure Jacobian [twists of forward joints, -twists of backward joints]."""
    J = np.column_stack([twist(assembly.joint(n)) for n in forward]
                        + [-twist(assembly.joint(n)) for n in backward])
    rank = np.linalg.matrix_rank(J, tol=1e-9)
    _, _, vt = np.linalg.svd(J)
    null = vt[-1]
    return rank, null / null[0]


def test_fourbar_link_lengths_and_grashof_crank_rocker():
    fb = load("fourbar")
    A, B, C, D = (fb.joint(n).origin for n in ("crank_pivot", "crank_coupler", "coupler_rocker", "rocker_pivot"))
    a, b, c, d = (np.linalg.norm(D - A), np.linalg.norm(B - A), np.linalg.norm(C - B), np.linalg.norm(C - D))
    np.testing.assert_allclose([a, b, c, d], [0.30, 0.09, 0.25, 0.26], rtol=1e-12)
    s, l = min(a, b, c, d), max(a, b, c, d)
    assert s + l <= a + b + c + d - s - l and s == b           # Grashof, shortest link is the crank
    for body, length in (("crank", b), ("coupler", c), ("rocker", d)):
        assert fb.body(body).mass.mass == pytest.approx(7850 * length * 0.01 * 0.02, rel=1e-12)


def test_fourbar_loop_closes_at_the_reference_configuration():
    _joint_origins_lie_on_their_bodies(load("fourbar"))


def test_fourbar_closure_jacobian_rank_and_readme_velocity_ratios():
    fb = load("fourbar")
    assert [j.name for j in fb.joints if j.actuated] == ["crank_pivot"]
    rank, rates = _loop_rates(fb, ["crank_pivot", "crank_coupler", "coupler_rocker"], ["rocker_pivot"])
    assert rank == 3                                            # 4 joints - rank 3 = 1 dof
    np.testing.assert_allclose(rates, [1, -8 / 7, 3 / 7, 2 / 7], atol=1e-12)


def test_fourbar_rocker_swing_stated_in_readme():
    fb = load("fourbar")
    A, D, C = fb.joint("crank_pivot").origin, fb.joint("rocker_pivot").origin, fb.joint("coupler_rocker").origin
    a, b, c, d = 0.30, 0.09, 0.25, 0.26
    angles = []
    for ac in (c + b, c - b):                                   # crank and coupler stretched / folded
        delta = np.degrees(np.arccos((a * a + d * d - ac * ac) / (2 * a * d)))
        angles.append(180.0 - delta)
    np.testing.assert_allclose(angles, [105.62, 147.80], atol=0.005)
    ref = np.degrees(np.arctan2((C - D)[2], (C - D)[0]))
    assert ref == pytest.approx(112.62, abs=0.005) and angles[0] < ref < angles[1]
    assert np.linalg.norm(D - A) == pytest.approx(a)


def test_slider_crank_geometry_and_loop_closure():
    sc = load("slider_crank")
    A, B, C = (sc.joint(n).origin for n in ("crank_pivot", "crank_rod", "rod_slider"))
    r, l = np.linalg.norm(B - A), np.linalg.norm(C - B)
    np.testing.assert_allclose([r, l], [0.060, 0.195], rtol=1e-12)
    np.testing.assert_allclose(sc.joint("slide").origin, C)
    theta = np.arctan2(B[2], B[0])
    # in-line slider-crank: x = r cos(theta) + sqrt(l^2 - r^2 sin^2(theta))
    assert C[0] == pytest.approx(r * np.cos(theta) + np.sqrt(l * l - (r * np.sin(theta)) ** 2), rel=1e-12)
    lim = sc.joint("slide").limits
    np.testing.assert_allclose([C[0] + lim.lower, C[0] + lim.upper], [l - r, l + r], atol=1e-12)
    _joint_origins_lie_on_their_bodies(sc)


def test_slider_crank_closure_jacobian_rank_and_readme_velocity_ratios():
    sc = load("slider_crank")
    assert [j.name for j in sc.joints if j.actuated] == ["crank_pivot"]
    rank, rates = _loop_rates(sc, ["crank_pivot", "crank_rod", "rod_slider"], ["slide"])
    assert rank == 3
    np.testing.assert_allclose(rates, [1, -25 / 21, 4 / 21, 0.4 / 7], atol=1e-12)
    masses = {b.name: b.mass.mass for b in sc.bodies}
    np.testing.assert_allclose([masses["crank"], masses["rod"], masses["slider"]],
                               [0.07065, 0.146952, 0.1256], rtol=1e-12)


def _double_pendulum_model(dp):
    """The sample as a dynamics model: body frames are the joint frames (both poses are pure
    translations to the joint origins), so each placement is the joint origin in the parent frame."""
    from mbcompose.dynamics import BodySpec, build_model

    specs = []
    for k, (joint_name, parent) in enumerate((("shoulder", None), ("elbow", "link1"))):
        joint = dp.joint(joint_name)
        body = dp.body(joint.secondary)
        np.testing.assert_allclose(body.pose.translation, joint.origin)
        np.testing.assert_allclose(body.pose.rotation, np.eye(3))
        origin_in_parent = joint.origin - (dp.body(parent).pose.translation if parent else 0.0)
        specs.append(BodySpec(name=body.name, parent=k - 1, joint_type="revolute", joint_name=joint_name,
                              placement_rotation=np.eye(3), placement_translation=origin_in_parent,
                              mass=body.mass.mass, com=body.mass.com, inertia=body.mass.inertia,
                              axis=tuple(joint.axis)))
    return build_model(specs, gravity=dp.gravity)


@pytest.mark.parametrize("q", [(0.0, 0.0), (0.3, -1.2), (-2.0, 2.5), (1.0, np.pi)])
def test_double_pendulum_dynamics_mass_matrix_and_gravity_equal_the_analytic_formulas(q):
    from mbcompose.dynamics import gravity_forces, mass_matrix

    model = _double_pendulum_model(load("double_pendulum"))
    q = np.array(q)
    np.testing.assert_allclose(mass_matrix(model, q), analytic_double_pendulum_mass_matrix(q[1]),
                               rtol=1e-12, atol=1e-14)
    g = 9.81 * np.array([(M1 * C1 + M2 * L1) * np.sin(q[0]) + M2 * C2 * np.sin(q[0] + q[1]),
                         M2 * C2 * np.sin(q[0] + q[1])])
    np.testing.assert_allclose(gravity_forces(model, q), g, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- the public CLI on the samples

@pytest.mark.parametrize("name, dof, loops", [
    ("seeker", 2, 0), ("double_pendulum", 2, 0), ("fourbar", 1, 1), ("slider_crank", 1, 1),
])
def test_inspect_reports_the_dof_and_loops_stated_in_the_readme(name, dof, loops):
    import json

    from click.testing import CliRunner

    from mbcompose.composer.cli.commands import main

    result = CliRunner().invoke(main, ["inspect", str(SAMPLES / name / f"{name}.yaml"), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["dof"] == dof
    assert len(report["loops"]) == loops
    if name == "seeker":                                    # seed 004, Tables 2 and 3
        assert sorted(map(sorted, report["composites"])) == sorted(map(sorted, TABLE_2))
        removed = {r["name"] if isinstance(r, dict) else r for r in report["removed_joints"]}
        assert removed == {"pitch_b", "yaw_b"}
