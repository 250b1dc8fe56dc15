"""Reduction and redundant joints (seed 004, Tables 2-3, Fig. 4) on the seeker and known mechanisms."""

from pathlib import Path

import numpy as np
import pytest
import trimesh

from mbcompose import graph
from mbcompose.parsers import read_assembly
from mbcompose.parsers.assembly import GROUND

import graph_mechanisms as gm

SEEKER = Path(__file__).resolve().parents[2] / "samples" / "seeker" / "seeker.yaml"
TABLE2_NAMES = {"shaft_b": "BODY_1", "housing": "BODY_2", "gimbal_ring": "BODY_3"}
# seed 004 Table 3 (reference, secondary, starred)
TABLE3 = sorted([("BODY_2", "BODY_3", False), ("BODY_2", "BODY_3", True),
                 ("BODY_3", "BODY_1", False), ("BODY_3", "BODY_1", True)])


def seekers():
    return [("file", read_assembly(SEEKER)), ("python", gm.seeker())]


@pytest.mark.parametrize("which,assembly", seekers(), ids=["file", "python"])
def test_seeker_composites_equal_table_2(which, assembly):
    an = graph.analyse(assembly, composite_names=TABLE2_NAMES)
    got = {c.name: set(c.members) for c in an.fixed_composites}
    assert got == {"BODY_1": gm.SEEKER_TABLE2[0], "BODY_2": gm.SEEKER_TABLE2[1], "BODY_3": gm.SEEKER_TABLE2[2]}
    assert {c.name: set(c.members) for c in an.composites} == got


@pytest.mark.parametrize("which,assembly", seekers(), ids=["file", "python"])
def test_seeker_reduced_description_before_removal_is_table_3(which, assembly):
    an = graph.analyse(assembly, composite_names=TABLE2_NAMES)
    between = [j for j in an.joints_before if GROUND not in (j.reference, j.secondary)]
    assert all(j.type == "revolute" for j in between)
    assert sorted((j.reference, j.secondary, j.actuated) for j in between) == TABLE3
    welds = [j for j in an.joints_before if GROUND in (j.reference, j.secondary)]
    assert [(j.type, j.reference, j.secondary) for j in welds] == [("fixed", GROUND, "BODY_2")]


@pytest.mark.parametrize("which,assembly", seekers(), ids=["file", "python"])
def test_seeker_keeps_only_starred_joints_and_has_two_dof(which, assembly):
    an = graph.analyse(assembly, composite_names=TABLE2_NAMES)
    moving = [j for j in an.reduced_joints if j.type != "fixed"]
    assert {j.name for j in moving} == {j.name for j in assembly.joints if j.actuated}
    assert all(j.actuated for j in moving)
    removed = {r.name: r for r in an.removed_joints}
    assert set(removed) == {j.name for j in assembly.joints if j.type == "revolute" and not j.actuated}
    for r in removed.values():
        assert r.kind == "redundant" and "co-axial revolutes" in r.reason
        assert assembly.joint(r.kept).actuated
    assert an.loops == () and an.dof == 2 and an.ok and not an.warnings


@pytest.mark.parametrize("which,assembly", seekers(), ids=["file", "python"])
def test_seeker_reduced_graph_is_fig_4(which, assembly):
    an = graph.analyse(assembly, composite_names=TABLE2_NAMES)
    sg = an.reduced
    assert sum(1 for n in sg.nodes if n.startswith("com:")) == 3
    counts = sg.counts()
    assert counts["body"] == 3 and counts["gravity"] == 3 and counts["driver"] == 2
    joints = sg.of_kind("joint")
    assert sorted(e.joint_type for e in joints) == ["fixed", "revolute", "revolute"]
    # arms start at the composite's centre of mass
    for e in sg.of_kind("arm"):
        if e.tail != GROUND:
            c = an.composite(e.subject)
            assert np.allclose(sg.positions[e.tail], c.mass.com)
    tm = an.reduced_matrices()
    assert not (tm.A_ordered() @ tm.B.T).count_nonzero()


@pytest.mark.parametrize("which,assembly", seekers(), ids=["file", "python"])
def test_seeker_reduced_graph_numbering_matches_the_text_of_fig_4(which, assembly):
    """Seed 004: drivers e9 and e13; gravity e1, e3, e5 on BODY_2, BODY_3, BODY_1."""
    sg = graph.analyse(assembly, composite_names=TABLE2_NAMES).reduced
    assert [e.name for e in sg.of_kind("driver")] == ["e9", "e13"]
    assert [(e.name, e.subject) for e in sg.of_kind("gravity")] == [("e1", "BODY_2"), ("e3", "BODY_3"),
                                                                    ("e5", "BODY_1")]


def test_seeker_sample_lumping_matches_trimesh_of_merged_part_meshes():
    a = read_assembly(SEEKER)
    an = graph.analyse(a)
    density = 2700.0
    for c in an.composites + (None,):
        members = a.body_names if c is None else c.members
        meshes = []
        for name in members:
            b = a.body(name)
            for g in b.geometry:
                m = trimesh.load(g.file, force="mesh")
                m.apply_scale(g.params["scale"][0])
                m.apply_transform(b.pose.compose(g.pose).matrix())
                meshes.append(m)
        whole = trimesh.util.concatenate(meshes)
        mp = whole.mass_properties
        mass = density * whole.volume
        if c is None:
            assert sum(k.mass.mass for k in an.composites) == pytest.approx(mass, rel=1e-9)
            continue
        assert c.mass.mass == pytest.approx(mass, rel=1e-9)
        assert np.allclose(c.mass.com, mp["center_mass"], atol=1e-9)
        assert np.allclose(c.mass.inertia, density * np.array(mp["inertia"]), rtol=1e-7, atol=1e-12)


def test_bearing_on_three_coaxial_revolutes_keeps_the_actuated_one():
    an = graph.analyse(gm.bearing())
    assert [j.name for j in an.reduced_joints] == ["bearing_2"]
    assert sorted(r.name for r in an.removed_joints) == ["bearing_1", "bearing_3"]
    assert all(r.kept == "bearing_2" and r.kind == "redundant" for r in an.removed_joints)
    assert an.dof == 1 and an.loops == ()


def test_bearing_without_actuator_keeps_first_by_name():
    a = gm.bearing()
    a = gm.relabel(a, {}, {}, reverse=True)
    from mbcompose.parsers.assembly import Assembly, Joint
    joints = tuple(Joint(j.name, j.type, j.reference, j.secondary, j.origin, j.axis) for j in a.joints)
    an = graph.analyse(Assembly("b", a.bodies, joints))
    assert [j.name for j in an.reduced_joints] == ["bearing_1"]


def test_crossed_revolutes_lock_the_pair_into_one_composite():
    a = gm.crossed_pair()
    an = graph.analyse(a)
    assert [set(c.members) for c in an.composites] == [{"arm", "plate"}]
    assert [c.members for c in an.fixed_composites] == [("arm",), ("plate",)]
    assert {r.name: r.kind for r in an.removed_joints} == {"plate_hinge_x": "locking", "plate_hinge_y": "locking"}
    assert [j.name for j in an.reduced_joints] == ["arm_pivot"]
    assert an.dof == 1
    assert [i.code for i in an.warnings] == ["locked-pair"]
    # merged mass properties equal the composite of both bodies (trimesh reference)
    c = an.composites[0]
    meshes = []
    for name in ("arm", "plate"):
        b = a.body(name)
        for g in b.geometry:
            m = trimesh.creation.box(extents=g.params["size"])
            m.apply_transform(b.pose.compose(g.pose).matrix())
            meshes.append(m)
    whole = trimesh.util.concatenate(meshes)
    assert c.mass.mass == pytest.approx(gm.DENSITY * whole.volume)
    assert np.allclose(c.mass.inertia, gm.DENSITY * whole.mass_properties["inertia"])


def test_two_revolutes_to_ground_on_crossing_axes_weld_the_body():
    from mbcompose.parsers.assembly import Assembly
    body = gm.body("lid", [0, 0, 0], [gm.box([0.1, 0.1, 0.01])])
    joints = (gm.joint("hinge_x", "revolute", GROUND, "lid", [0, 0, 0], [1, 0, 0]),
              gm.joint("hinge_y", "revolute", GROUND, "lid", [0, 0, 0], [0, 1, 0]))
    an = graph.analyse(Assembly("lid", (body,), joints))
    assert [(j.name, j.type) for j in an.reduced_joints] == [("hinge_x+hinge_y", "fixed")]
    assert an.composites[0].grounded and an.dof == 0 and an.ok


def test_revolute_inside_coaxial_cylindrical_is_kept_as_a_partial_pair_loop():
    from mbcompose.parsers.assembly import Assembly
    body = gm.body("sleeve", [0, 0, 0], [gm.box([0.1, 0.02, 0.02])])
    joints = (gm.joint("rev", "revolute", GROUND, "sleeve", [0, 0, 0], [1, 0, 0]),
              gm.joint("cyl", "cylindrical", GROUND, "sleeve", [0.05, 0, 0], [1, 0, 0]))
    an = graph.analyse(Assembly("sleeve", (body,), joints))
    assert an.removed_joints == ()
    assert [p.common_dim for p in an.pairs] == [1]
    (loop,) = an.loops
    assert (loop.n_freedoms, loop.rank, loop.mobility, loop.redundant_constraints) == (3, 2, 1, 4)
    assert an.dof == 1
    assert {"partial-pair", "redundant-constraints"} <= {i.code for i in an.warnings}


def test_parallel_prismatics_are_redundant_and_parallel_offset_revolutes_lock():
    from mbcompose.parsers.assembly import Assembly
    body = gm.body("carriage", [0, 0, 0], [gm.box([0.1, 0.1, 0.02])])
    rails = (gm.joint("rail_1", "prismatic", GROUND, "carriage", [0, 0.05, 0], [1, 0, 0]),
             gm.joint("rail_2", "prismatic", GROUND, "carriage", [0, -0.05, 0], [1, 0, 0], actuated=True))
    an = graph.analyse(Assembly("rails", (body,), rails))
    assert [j.name for j in an.reduced_joints] == ["rail_2"] and an.dof == 1
    assert "parallel prismatics" in an.removed_joints[0].reason
    hinges = (gm.joint("h1", "revolute", GROUND, "carriage", [0, 0.05, 0], [1, 0, 0]),
              gm.joint("h2", "revolute", GROUND, "carriage", [0, -0.05, 0], [1, 0, 0]))
    an = graph.analyse(Assembly("hinges", (body,), hinges))
    assert an.dof == 0 and {r.kind for r in an.removed_joints} == {"locking"}


@pytest.mark.parametrize("tilt,redundant", [(1e-9, True), (1e-3, False)])
def test_co_axial_detection_tolerance(tilt, redundant):
    """Axes agreeing to ~1e-9 rad (CAD round-off) are co-axial; 1e-3 rad apart they lock the pair."""
    from mbcompose.dynamics.spatial import rot_z
    from mbcompose.parsers.assembly import Assembly, Joint
    a = gm.bearing()
    j = a.joint("bearing_3")
    tilted = Joint(j.name, j.type, j.reference, j.secondary, j.origin, rot_z(tilt) @ j.axis)
    an = graph.analyse(Assembly("b", a.bodies, tuple(tilted if k.name == j.name else k for k in a.joints)))
    kinds = {r.name: r.kind for r in an.removed_joints}
    if redundant:
        assert kinds == {"bearing_1": "redundant", "bearing_3": "redundant"} and an.dof == 1
    else:
        assert kinds["bearing_1"] == "redundant" and kinds["bearing_3"] == "locking" and an.dof == 0
