"""analyse(): invariance under relabelling / reordering, and problems reported, never raised."""

import numpy as np
import pytest

from mbcompose import graph
from mbcompose.parsers.assembly import GROUND, Assembly, Joint

import graph_mechanisms as gm


def signature(an, body_map=None, joint_map=None):
    bm = body_map or {}
    jm = joint_map or {}
    comps = sorted(sorted(bm.get(m, m) for m in c.members) for c in an.composites)
    removed = sorted((jm.get(r.name, r.name), r.kind) for r in an.removed_joints)
    loops = sorted((l.n_equations, l.n_freedoms, l.rank, l.mobility, l.redundant_constraints, l.kind, l.closes)
                   for l in an.loops)
    return comps, removed, loops, an.dof, sorted(i.code for i in an.issues)


MECHANISMS = [gm.seeker, gm.bearing, gm.fourbar, gm.crossed_pair, gm.rssr,
              lambda: gm.random_assembly(np.random.default_rng(3), 7, 3),
              lambda: gm.random_assembly(np.random.default_rng(5), 7, 3)]


@pytest.mark.parametrize("make", MECHANISMS)
def test_reordering_the_input_changes_nothing(make):
    a = make()
    b = gm.relabel(a, {}, {}, reverse=True)
    sa, sb = signature(graph.analyse(a)), signature(graph.analyse(b))
    assert sa == sb
    assert [c.name for c in graph.analyse(a).composites] == [c.name for c in graph.analyse(b).composites]


@pytest.mark.parametrize("make", MECHANISMS)
def test_relabelling_bodies_and_joints_changes_nothing_but_names(make):
    a = make()
    rng = np.random.default_rng(11)
    new_b = [f"part{k:02d}" for k in rng.permutation(len(a.bodies))]
    body_map = {b.name: n for b, n in zip(a.bodies, new_b)}
    # actuated joints keep sorting first in each redundant class; names otherwise shuffled but
    # the order among joints of one pair is preserved so "first by name" picks the same joint
    joint_map = {j.name: f"J{k:02d}_{j.name}" for k, j in enumerate(a.joints)}
    back = {v: k for k, v in joint_map.items()}
    b = gm.relabel(a, body_map, joint_map, reverse=True)
    sa = signature(graph.analyse(a), body_map)
    sb = signature(graph.analyse(b), None, back)
    assert sa[0] == sb[0]                      # composites
    assert sa[2:] == sb[2:]                    # loop classification, dof, issue codes
    assert len(sa[1]) == len(sb[1]) and sorted(k for _, k in sa[1]) == sorted(k for _, k in sb[1])


def test_seeker_relabelled_removes_the_same_joints():
    a = gm.seeker()
    jm = {j.name: f"z_{j.name[::-1]}" for j in a.joints}
    b = gm.relabel(a, {n: n.upper() for n in a.body_names}, jm)
    ra = sorted(jm[r.name] for r in graph.analyse(a).removed_joints)
    rb = sorted(r.name for r in graph.analyse(b).removed_joints)
    assert ra == rb


def test_body_not_connected_to_ground_is_an_error_not_an_exception():
    a = gm.fourbar()
    loose = gm._cube("loose_a", [1, 1, 1]), gm._cube("loose_b", [1.1, 1, 1])
    j = gm.joint("loose_hinge", "revolute", "loose_a", "loose_b", [1.05, 1, 1])
    an = graph.analyse(Assembly("x", a.bodies + loose, a.joints + (j,)))
    (err,) = an.errors
    assert err.code == "disconnected" and set(err.subjects) == {"loose_a", "loose_b"}
    assert "loose_a" in err.message and not an.ok
    # the rest of the analysis is still complete
    assert len(an.loops) == 1 and an.loops[0].rank == 3


def test_loop_that_cannot_close_is_an_error():
    a = gm.fourbar()
    j3 = a.joint("j3_coupler_rocker")
    bad = Joint(j3.name, j3.type, j3.reference, j3.secondary, j3.origin, j3.axis,
                secondary_origin=j3.origin + [0.004, 0.003, 0.0])
    joints = tuple(bad if j.name == j3.name else j for j in a.joints)
    an = graph.analyse(Assembly("gap", a.bodies, joints))
    (loop,) = an.loops
    assert not loop.closes and loop.gap == pytest.approx(0.005)
    (err,) = an.errors
    assert err.code == "loop-not-closed" and "j3_coupler_rocker" in err.message and "0.005" in err.message


def test_loop_with_misaligned_axis_cannot_close_but_a_reversed_axis_can():
    a = gm.fourbar()
    j2 = a.joint("j2_crank_coupler")
    for sec_axis, closes in (([0.0, 0.1, 1.0], False), ([0.0, 0.0, -1.0], True)):
        bad = Joint(j2.name, j2.type, j2.reference, j2.secondary, j2.origin, j2.axis, secondary_axis=sec_axis)
        an = graph.analyse(Assembly("tilt", a.bodies, tuple(bad if j.name == j2.name else j for j in a.joints)))
        assert an.loops[0].closes is closes
        assert an.ok is closes


def test_gap_on_a_tree_joint_is_a_warning():
    a = gm.bearing()
    j = a.joint("bearing_2")
    moved = Joint(j.name, j.type, j.reference, j.secondary, j.origin, j.axis, actuated=True,
                  secondary_origin=j.origin + [0, 0, 0.01])
    an = graph.analyse(Assembly("b", a.bodies, tuple(moved if k.name == j.name else k for k in a.joints)))
    assert an.ok and [i.code for i in an.warnings] == ["joint-frame-gap"]


def test_over_constrained_loop_is_a_warning_with_rank_and_mobility():
    an = graph.analyse(gm.fourbar(tilt=0.2))
    assert an.ok
    (w,) = [i for i in an.warnings if i.code == "overconstrained-loop"]
    assert "closure rank 4" in w.message and "mobility 0" in w.message


def test_body_welded_twice_to_ground_keeps_one_weld():
    plate = gm.body("plate", [0, 0, 0], [gm.box([0.1, 0.1, 0.01])])
    joints = (gm.joint("weld_1", "fixed", GROUND, "plate"), gm.joint("weld_2", "fixed", "plate", GROUND))
    an = graph.analyse(Assembly("w", (plate,), joints))
    assert [j.name for j in an.reduced_joints] == ["weld_1"] and an.dof == 0 and an.ok


def test_massless_and_empty_assemblies_do_not_crash():
    from mbcompose.parsers.assembly import Body, MassProperties, Pose
    an = graph.analyse(Assembly("empty", (), ()))
    assert an.dof == 0 and an.composites == () and an.ok
    b = Body("frame", Pose(), MassProperties.zero())
    an = graph.analyse(Assembly("m", (b,), (gm.joint("j", "revolute", GROUND, "frame"),)))
    assert an.dof == 1 and an.composites[0].mass.mass == 0.0
