"""Force elements of the native format's ``forces:`` section are edges of the extended and reduced
system graphs (seed 004 Fig. 1: two-terminal elements): a joint spring between the joint's attachment
nodes, a spring-damper between attachment points of its two bodies (with their arms), a load from
ground to its point; on a part lumped into a composite, the reduced graph attaches it to the composite;
the seed's numbering of the elements before them is unchanged; incidence times circuits is zero."""

import numpy as np

from mbcompose import compose
from mbcompose.graph.system_graph import attachment_node
from mbcompose.parsers.assembly import GROUND

FORCES = """format: mbcompose-assembly/1
bodies:
  - name: a
    inertial: {mass: 1.0, com: [0, 0, -0.5], inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01}}
  - name: b
    pose: {xyz: [0, 0, -1]}
    inertial: {mass: 1.0, com: [0, 0, -1.5], inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01}}
  - name: c
    inertial: {mass: 0.2, com: [0, 0, -1.2], inertia: {ixx: 0.001, iyy: 0.001, izz: 0.001}}
joints:
  - {name: j1, type: revolute, reference: ground, secondary: a, axis: [0, 1, 0]}
  - {name: j2, type: revolute, reference: a, secondary: b, origin: [0, 0, -1], axis: [0, 1, 0]}
  - {name: weld, type: fixed, reference: b, secondary: c, origin: [0, 0, -1.2]}
forces:
  - {name: k1, type: joint_spring, joint: j1, stiffness: 3, damping: 0.1}
  - {name: f2, type: joint_friction, joint: j2, friction: 0.2}
  - {name: s, type: spring_damper, bodies: [ground, c], points: [[1, 0, 0], [0, 0, -1.2]], stiffness: 7}
  - {name: push, type: point_force, body: c, point: [0, 0, -1.2], force: [1, 0, 0]}
"""


def test_force_elements_are_edges_of_both_graphs(tmp_path):
    path = tmp_path / "forces.yaml"
    path.write_text(FORCES)
    c = compose(path)
    for sg, owner in ((c.analysis.extended, "c"), (c.analysis.reduced, "b")):
        forces = {e.subject: e for e in sg.elements if e.kind in ("force", "load")}
        assert sorted(forces) == ["f2", "k1", "push", "s"]
        assert (forces["k1"].tail, forces["k1"].head) == (attachment_node("j1", GROUND), attachment_node("j1", "a"))
        assert (forces["s"].tail, forces["s"].head) == (attachment_node("s", GROUND), attachment_node("s", owner))
        assert (forces["push"].kind, forces["push"].tail) == ("load", GROUND)
        arms = {(e.tail, e.head) for e in sg.elements if e.kind == "arm"}
        assert (f"com:{owner}", attachment_node("push", owner)) in arms
        # the force elements come after every body and joint element
        first = min(e.index for e in forces.values())
        assert all(e.index < first for e in sg.elements if e.kind in ("body", "joint", "gravity"))
        counts = sg.counts()
        assert counts["force"] == 3 and counts["load"] == 1
    mats = c.analysis.matrices
    cols = [int(n[1:]) - 1 for n in mats.branches + mats.chords]
    assert not np.any(mats.A.toarray()[:, cols] @ mats.B.toarray().T)
    assert {e.name for e in c.analysis.extended.elements if e.kind in ("force", "load")} <= set(mats.chords)


def test_graphs_without_forces_count_no_force_kinds(tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text(FORCES.split("forces:")[0])
    assert "force" not in compose(path).analysis.extended.counts()
