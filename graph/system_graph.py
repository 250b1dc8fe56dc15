"""The extended system graph of a mechanism (seed 004, section 4, Fig. 3).

A *system graph* is a linear graph: oriented two-terminal elements (edges)
between nodes.  Following Dynaflex (seed 004, section 4) the nodes are

* ``ground`` - the inertial frame;
* ``com:<body>`` - the centre of mass of each body;
* ``att:<joint>@<body>`` - the attachment point of a joint on one of its two
  bodies (on ``ground`` too when the joint touches ground),

and the elements, each with an orientation ``tail -> head``, are

======== ======================================= ====================================
kind     tail -> head                            meaning
======== ======================================= ====================================
gravity  ``ground -> com:B``                     weight of body B, applied at its CoM
body     ``ground -> com:B``                     position / motion of body B
arm      ``com:B -> att:J@B``                    position vector from B's CoM to joint J
driver   ``att:J@R -> att:J@S``                  motor acting along actuated joint J
joint    ``att:J@R -> att:J@S``                  joint J, reference body R, secondary S
force    ``att:J@R -> att:J@S``                  spring, damper, friction F parallel to joint J
force    ``att:F@A -> att:F@B``                  spring-damper F between points of bodies A and B
load     ``ground -> att:F@B``                   force and torque F applied at a point of body B
source   ``ground -> el:M``                      voltage source of DC motor M (its input)
electric ``el:M -> ground``                      electrical port of DC motor M (through: current)
======== ======================================= ====================================

A DC motor M on joint J is a two-port (seed 004 sections 3 and 5): its electrical port between the
node ``el:M`` and ground (the electrical reference), fed by its voltage source, and its mechanical port,
the ``driver`` element of J (added for M when J is not marked actuated).

Force elements (the native format's ``forces:``, seed 004 Fig. 1: two-terminal elements with a through
variable, the force, and an across variable, the relative motion of their terminals) come last, sorted
by name; those between body points and loads contribute their arms (``com:B -> att:F@B``) first.

Arms on the ground side start at the ``ground`` node.  Because every CoM is
joined to ground by its body element, the extended graph is always connected,
even when a body has no joint to ground (that is found on the joint graph,
:mod:`graph.loops`).

Element numbering (``e1``, ``e2``, ...) is canonical, independent of the order
of bodies and joints in the input:

* bodies first, sorted by distance to ground (fewest joints on a path to
  ground; unreachable last), then by name; each contributes ``gravity`` then
  ``body``;
* then joints, sorted by name except that fixed joints to ground come last;
  each contributes the reference-side ``arm``, the secondary-side ``arm``, the
  ``driver`` (actuated joints only) and the ``joint``.

With this order the reduced seeker graph is numbered as seed 004 describes
Fig. 4: gravity elements e1, e3, e5 on BODY_2, BODY_3, BODY_1 and the
motors' driver elements e9 and e13.

The same builder gives the *reduced* system graph (Fig. 4), with composite
bodies in place of bodies (:func:`build_system_graph`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

import networkx as nx
import numpy as np

from mbcompose.parsers.assembly import GROUND, Assembly

ELEMENT_KINDS = ("body", "arm", "joint", "gravity", "driver")

#: kinds of the force elements, counted only where a graph has them (:meth:`SystemGraph.counts`)
FORCE_KINDS = ("force", "load", "source", "electric")


def com_node(body: str) -> str:
    """Node name of a body's centre of mass (``ground`` for ground)."""
    return GROUND if body == GROUND else f"com:{body}"


def attachment_node(joint: str, body: str) -> str:
    """Node name of joint ``joint``'s attachment point on ``body``."""
    return f"att:{joint}@{body}"


@dataclass(frozen=True)
class Element:
    """One oriented element of a system graph.

    name : ``e1``, ``e2``, ... (canonical numbering, see module docstring).
    kind : one of :data:`ELEMENT_KINDS` or :data:`FORCE_KINDS`.
    tail, head : node names; the element points from tail to head.
    subject : the body (body, gravity, arm) or joint (arm, joint, driver) it models.
    joint_type : the joint type for joint and driver elements, else ``""``.
    """

    name: str
    kind: str
    tail: str
    head: str
    subject: str
    joint: str = ""
    joint_type: str = ""

    @property
    def index(self) -> int:
        """0-based column of this element in the incidence matrix."""
        return int(self.name[1:]) - 1


@dataclass(frozen=True)
class GraphBody:
    """A body as the graph builder sees it: name and CoM in the assembly frame (3,), m."""

    name: str
    com: np.ndarray


@dataclass(frozen=True)
class GraphJoint:
    """A joint as the graph builder sees it (a view of a Joint or a reduced joint)."""

    name: str
    type: str
    reference: str
    secondary: str
    origin: np.ndarray
    actuated: bool = False


@dataclass(frozen=True)
class GraphForce:
    """A force element as the graph builder sees it: along ``joint`` (its attachment nodes), or between
    points of ``bodies`` (two bodies; ground allowed), or a ``load`` on a point of one body.

    points : (3,) positions in the assembly frame of the element's terminals on ``bodies``, m.
    """

    name: str
    kind: str
    joint: str = ""
    bodies: tuple[str, ...] = ()
    points: tuple = ()


def graph_forces(assembly: Assembly, owner: Mapping[str, str] | None = None, joints=None) -> list[GraphForce]:
    """The :class:`GraphForce` of each of the assembly's ``springs`` and ``forces`` records, bodies renamed
    by ``owner`` (part -> composite) where given; joint elements on joints not in ``joints`` (names) left out."""
    from mbcompose.parsers.assembly import DCMotor, JointForceElement, PointLoad, SpringDamper, Tendon

    rename = (lambda b: b) if owner is None else (lambda b: owner.get(b, b))
    out = []
    for r in assembly.springs + assembly.forces:
        if isinstance(r, (JointForceElement, DCMotor)):
            if joints is None or r.joint in joints:
                out.append(GraphForce(r.name, "force" if isinstance(r, JointForceElement) else "motor", joint=r.joint))
        elif isinstance(r, SpringDamper):
            out.append(GraphForce(r.name, "force", bodies=(rename(r.body_a), rename(r.body_b)),
                                  points=(r.point_a, r.point_b)))
        elif isinstance(r, PointLoad):
            out.append(GraphForce(r.name, "load", bodies=(rename(r.body),), points=(r.point,)))
        elif isinstance(r, Tendon):        # an edge per joint it spans, or per segment between two sites
            out.extend(GraphForce(f"{r.name}:{j}", "force", joint=j) for j, _ in r.joints
                       if joints is None or j in joints)
            out.extend(GraphForce(f"{r.name}[{k}]", "force", bodies=(rename(a[0]), rename(b[0])), points=(a[1], b[1]))
                       for k, (a, b) in enumerate(zip(r.sites, r.sites[1:])) if rename(a[0]) != rename(b[0]))
    return out


@dataclass(frozen=True, eq=False)
class SystemGraph:
    """A linear graph of a mechanism (extended or reduced).

    stage : ``'extended'`` or ``'reduced'``.
    nodes : node names, ``ground`` first, then CoM nodes and attachment nodes
        in element order.
    elements : the elements ``e1..en`` in order.
    positions : node -> (3,) position in the assembly frame at the reference
        configuration, m (ground at the origin).
    """

    stage: str
    nodes: tuple[str, ...]
    elements: tuple[Element, ...]
    positions: Mapping[str, np.ndarray] = field(default_factory=dict)

    def element(self, name: str) -> Element:
        return self.elements[int(name[1:]) - 1]

    def of_kind(self, kind: str) -> tuple[Element, ...]:
        return tuple(e for e in self.elements if e.kind == kind)

    def graph(self) -> nx.MultiDiGraph:
        """The graph as a networkx MultiDiGraph; edge keys are element names,
        edge attributes ``kind``, ``subject``, ``joint_type``."""
        g = nx.MultiDiGraph(stage=self.stage)
        for n in self.nodes:
            g.add_node(n, pos=self.positions.get(n))
        for e in self.elements:
            g.add_edge(e.tail, e.head, key=e.name, kind=e.kind, subject=e.subject,
                       joint_type=e.joint_type)
        return g

    def counts(self) -> dict[str, int]:
        """Number of elements of each kind (the force kinds where there are some)."""
        counts = {k: sum(1 for e in self.elements if e.kind == k) for k in ELEMENT_KINDS + FORCE_KINDS}
        return {k: n for k, n in counts.items() if k in ELEMENT_KINDS or n}


def joint_graph(assembly: Assembly, joints=None) -> nx.MultiGraph:
    """Undirected multigraph: nodes ground and bodies, one edge per joint (key = joint name)."""
    g = nx.MultiGraph()
    g.add_node(GROUND)
    g.add_nodes_from(b.name for b in assembly.bodies)
    for j in (assembly.joints if joints is None else joints):
        g.add_edge(j.reference, j.secondary, key=j.name, type=j.type)
    return g


def distances_to_ground(assembly: Assembly) -> dict[str, float]:
    """Body -> number of joints on a shortest path to ground (inf when not connected)."""
    return _joint_graph_distances(assembly.bodies, assembly.joints)


def _joint_graph_distances(bodies, joints) -> dict[str, float]:
    """Body -> joints on a shortest path to ground (inf when none): breadth-first search
    over the undirected joint graph (plain dicts: this runs for every model composed)."""
    neighbours: dict[str, list[str]] = {}
    for j in joints:
        neighbours.setdefault(j.reference, []).append(j.secondary)
        neighbours.setdefault(j.secondary, []).append(j.reference)
    dist = {GROUND: 0.0}
    frontier = [GROUND]
    while frontier:
        step = []
        for n in frontier:
            for m in neighbours.get(n, ()):
                if m not in dist:
                    dist[m] = dist[n] + 1.0
                    step.append(m)
        frontier = step
    inf = float("inf")
    return {b.name: dist.get(b.name, inf) for b in bodies}


def build_system_graph(bodies: Iterable[GraphBody], joints: Iterable[GraphJoint],
                       stage: str = "extended", forces: Iterable[GraphForce] = ()) -> SystemGraph:
    """Build a system graph from bodies and joints (any order; numbering is canonical).

    Parameters
    ----------
    bodies : GraphBody
        Bodies (or composites) with their centres of mass in the assembly frame.
    joints : GraphJoint
        Joints between those bodies or ground; ``origin`` in the assembly frame.
    stage : str
        Label stored on the result (``'extended'`` or ``'reduced'``).
    forces : GraphForce
        Force elements (module docstring), after the joints' elements.
    """
    bodies, joints = list(bodies), list(joints)
    dist = _joint_graph_distances(bodies, joints)
    bodies.sort(key=lambda b: (dist[b.name], b.name))
    joints.sort(key=lambda j: (j.type == "fixed" and GROUND in (j.reference, j.secondary), j.name))
    nodes: list[str] = [GROUND]
    positions: dict[str, np.ndarray] = {GROUND: np.zeros(3)}
    raw: list[tuple[str, str, str, str, str, str]] = []

    for b in bodies:
        c = com_node(b.name)
        nodes.append(c)
        positions[c] = np.asarray(b.com, dtype=float)
        raw.append(("gravity", GROUND, c, b.name, "", ""))
        raw.append(("body", GROUND, c, b.name, "", ""))
    for j in joints:
        a_ref = attachment_node(j.name, j.reference)
        a_sec = attachment_node(j.name, j.secondary)
        for a in (a_ref, a_sec):
            nodes.append(a)
            positions[a] = np.asarray(j.origin, dtype=float)
        raw.append(("arm", com_node(j.reference), a_ref, j.reference, j.name, ""))
        raw.append(("arm", com_node(j.secondary), a_sec, j.secondary, j.name, ""))
        if j.actuated:
            raw.append(("driver", a_ref, a_sec, j.name, j.name, j.type))
        raw.append(("joint", a_ref, a_sec, j.name, j.name, j.type))
    by_joint = {j.name: j for j in joints}
    driven = {j.name for j in joints if j.actuated}
    for f in sorted(forces, key=lambda f: f.name):
        if f.kind == "motor":
            j = by_joint[f.joint]
            el = f"el:{f.name}"
            nodes.append(el)
            positions[el] = np.asarray(j.origin, dtype=float)
            raw.append(("source", GROUND, el, f.name, j.name, ""))
            raw.append(("electric", el, GROUND, f.name, j.name, ""))
            if j.name not in driven:
                raw.append(("driver", attachment_node(j.name, j.reference), attachment_node(j.name, j.secondary),
                            f.name, j.name, j.type))
                driven.add(j.name)
            continue
        if f.joint:
            j = by_joint[f.joint]
            raw.append(("force", attachment_node(j.name, j.reference), attachment_node(j.name, j.secondary),
                        f.name, j.name, j.type))
            continue
        ends = []
        for body, point in zip(f.bodies, f.points):
            a = attachment_node(f.name, body)
            nodes.append(a)
            positions[a] = np.asarray(point, dtype=float)
            raw.append(("arm", com_node(body), a, body, f.name, ""))
            ends.append(a)
        raw.append((f.kind, GROUND if f.kind == "load" else ends[0], ends[-1], f.name, "", ""))

    known = set(nodes)
    for kind, tail, head, subject, _, _ in raw:
        for n in (tail, head):
            if n not in known:
                raise ValueError(f"{kind} element of {subject!r} refers to unknown node {n!r}")
    elements = tuple(Element(f"e{i + 1}", kind, tail, head, subject, joint, jtype)
                     for i, (kind, tail, head, subject, joint, jtype) in enumerate(raw))
    return SystemGraph(stage, tuple(nodes), elements, positions)


def extended_graph(assembly: Assembly) -> SystemGraph:
    """The extended system graph of an assembly (seed 004, Fig. 3).

    Bodies' CoMs are placed in the assembly frame by their reference poses; a
    joint referring to a body that does not exist raises ValueError (readers
    validate this, so it only happens for hand-built assemblies).
    """
    bodies = [GraphBody(b.name, b.pose.apply(b.mass.com)) for b in assembly.bodies]
    joints = [GraphJoint(j.name, j.type, j.reference, j.secondary, j.origin, j.actuated)
              for j in assembly.joints]
    return build_system_graph(bodies, joints, "extended", graph_forces(assembly))

