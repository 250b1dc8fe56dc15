"""Extended system graph (seed 004, Fig. 3): nodes, elements, canonical numbering."""

import numpy as np

from mbcompose.graph.system_graph import extended_graph
from mbcompose.parsers.assembly import GROUND

import graph_mechanisms as gm


def test_seeker_extended_graph_has_one_node_per_com_and_attachment_and_all_element_kinds():
    a = gm.seeker()
    sg = extended_graph(a)
    n_bodies, n_joints = len(a.bodies), len(a.joints)
    assert len(sg.nodes) == 1 + n_bodies + 2 * n_joints
    counts = sg.counts()
    assert counts == {"body": 9, "gravity": 9, "arm": 2 * n_joints, "joint": n_joints, "driver": 2}
    # body and gravity elements go from ground to each CoM; joint and driver elements between attachments
    for e in sg.elements:
        if e.kind in ("body", "gravity"):
            assert e.tail == GROUND and e.head == f"com:{e.subject}"
        if e.kind in ("joint", "driver"):
            j = a.joint(e.subject)
            assert (e.tail, e.head) == (f"att:{j.name}@{j.reference}", f"att:{j.name}@{j.secondary}")
    assert [e.name for e in sg.elements] == [f"e{i + 1}" for i in range(len(sg.elements))]


def test_element_numbering_does_not_depend_on_input_order():
    a = gm.seeker()
    b = gm.relabel(a, {}, {}, reverse=True)
    ea, eb = extended_graph(a), extended_graph(b)
    assert [(e.name, e.kind, e.tail, e.head) for e in ea.elements] == \
           [(e.name, e.kind, e.tail, e.head) for e in eb.elements]


def test_attachment_positions_are_joint_origins_and_com_positions_are_world_coms():
    a = gm.seeker()
    sg = extended_graph(a)
    for j in a.joints:
        assert np.allclose(sg.positions[f"att:{j.name}@{j.secondary}"], j.origin)
    for b in a.bodies:
        assert np.allclose(sg.positions[f"com:{b.name}"], b.pose.rotation @ b.mass.com + b.pose.translation)
