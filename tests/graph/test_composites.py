"""Composite bodies (seed 004, Table 2) and exact lumping of mass properties.

Independent references: trimesh's mass properties of all box meshes merged into
one mesh at the reference configuration; a brute-force sum over point masses.
"""

import numpy as np
import pytest
import trimesh

from mbcompose.graph.composites import find_composites
from mbcompose.parsers.assembly import GROUND

import graph_mechanisms as gm


def merged_mesh(assembly, members):
    meshes = []
    for name in members:
        b = assembly.body(name)
        for g in b.geometry:
            m = trimesh.creation.box(extents=g.params["size"])
            m.apply_transform(b.pose.compose(g.pose).matrix())
            meshes.append(m)
    return trimesh.util.concatenate(meshes)


def spatial_inertia_about(mass, com, inertia, point):
    """6x6 spatial inertia [[J_o, m~c], [-m~c, m I]] about ``point`` (angular first)."""
    c = np.asarray(com) - point
    S = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    J = inertia - mass * S @ S
    return np.block([[J, mass * S], [-mass * S, mass * np.eye(3)]])


def test_seeker_composites_are_table_2():
    comps = find_composites(gm.seeker())
    assert sorted(map(set, (c.members for c in comps)), key=sorted) == sorted(gm.SEEKER_TABLE2, key=sorted)
    by_root = {c.root: c for c in comps}
    assert by_root["housing"].grounded and not by_root["gimbal_ring"].grounded


def test_seeker_composites_can_be_renamed_as_in_table_2():
    comps = find_composites(gm.seeker(), names={"shaft_b": "BODY_1", "housing": "BODY_2", "gimbal_ring": "BODY_3"})
    names = {c.name: set(c.members) for c in comps}
    assert names == {"BODY_1": gm.SEEKER_TABLE2[0], "BODY_2": gm.SEEKER_TABLE2[1], "BODY_3": gm.SEEKER_TABLE2[2]}


def test_default_composite_name_is_member_nearest_ground_and_members_start_there():
    comps = find_composites(gm.seeker())
    assert [c.name for c in comps] == ["housing", "gimbal_ring", "shaft_a"]
    assert all(c.members[0] == c.name for c in comps)


def test_renaming_rejects_unknown_keys_and_duplicate_names():
    with pytest.raises(ValueError):
        find_composites(gm.seeker(), names={"nothing": "X"})
    with pytest.raises(ValueError):
        find_composites(gm.seeker(), names={"housing": "X", "camera": "X"})
    with pytest.raises(ValueError):
        find_composites(gm.seeker(), names={"housing": GROUND})


def test_seeker_lumping_matches_trimesh_of_merged_meshes():
    a = gm.seeker()
    for c in find_composites(a):
        mesh = merged_mesh(a, c.members)
        mp = mesh.mass_properties
        assert c.mass.mass == pytest.approx(gm.DENSITY * mesh.volume, rel=1e-12)
        assert np.allclose(c.mass.com, mp["center_mass"], atol=1e-12)
        assert np.allclose(c.mass.inertia, gm.DENSITY * np.array(mp["inertia"]), rtol=1e-10, atol=1e-14)
    whole = merged_mesh(a, a.body_names)
    total = sum(c.mass.mass for c in find_composites(a))
    assert total == pytest.approx(gm.DENSITY * whole.volume, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_random_lumping_preserves_spatial_inertia_about_any_point(seed):
    """The spatial inertia of a composite about a random point equals the sum of the 6x6
    spatial inertias of all its boxes about that point, each from trimesh's box integral."""
    rng = np.random.default_rng(100 + seed)
    a = gm.random_assembly(rng, 10, 0)
    point = rng.normal(size=3)
    for c in find_composites(a):
        ref = np.zeros((6, 6))
        for name in c.members:
            for g in a.body(name).geometry:
                m = trimesh.creation.box(extents=g.params["size"])
                m.apply_transform(a.body(name).pose.compose(g.pose).matrix())
                mp = m.mass_properties
                ref += spatial_inertia_about(gm.DENSITY * m.volume, mp["center_mass"],
                                             gm.DENSITY * np.array(mp["inertia"]), point)
        got = spatial_inertia_about(c.mass.mass, c.mass.com, c.mass.inertia, point)
        assert np.allclose(got, ref, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(ref).max()))


def test_point_mass_cloud_reference_for_lumping():
    """Bodies that are point-mass clouds: body inertia from the cloud in the body frame,
    composite compared with the cloud summed in the assembly frame."""
    from mbcompose.parsers.assembly import Assembly, Body, Joint, MassProperties, Pose
    from mbcompose.dynamics.spatial import rot_x, rot_z
    rng = np.random.default_rng(7)
    clouds, bodies = {}, []
    for i in range(4):
        pts, ms = rng.normal(size=(20, 3)) * 0.1, rng.uniform(0.1, 1.0, 20)
        com = ms @ pts / ms.sum()
        d = pts - com
        J = sum(m * (x @ x * np.eye(3) - np.outer(x, x)) for m, x in zip(ms, d))
        pose = Pose(rot_z(rng.uniform(-3, 3)) @ rot_x(rng.uniform(-3, 3)), rng.normal(size=3))
        bodies.append(Body(f"p{i}", pose, MassProperties(ms.sum(), com, J)))
        clouds[f"p{i}"] = (pose.apply(pts), ms)
    joints = [Joint("weld0", "fixed", GROUND, "p0"), Joint("w1", "fixed", "p0", "p1"),
              Joint("w2", "fixed", "p1", "p2"), Joint("r3", "revolute", "p2", "p3")]
    a = Assembly("cloud", tuple(bodies), tuple(joints))
    comps = {c.name: c for c in find_composites(a)}
    assert set(comps["p0"].members) == {"p0", "p1", "p2"}
    pts = np.vstack([clouds[n][0] for n in ("p0", "p1", "p2")])
    ms = np.concatenate([clouds[n][1] for n in ("p0", "p1", "p2")])
    com = ms @ pts / ms.sum()
    d = pts - com
    J = sum(m * (x @ x * np.eye(3) - np.outer(x, x)) for m, x in zip(ms, d))
    c = comps["p0"].mass
    assert c.mass == pytest.approx(ms.sum()) and np.allclose(c.com, com) and np.allclose(c.inertia, J)
