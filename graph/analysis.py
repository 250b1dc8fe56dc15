"""The whole graph stage in one call: :func:`analyse` (seed 004, section 4).

``analyse(assembly)`` lumps composites (Table 2), reduces the joints (Table 3,
redundant joints removed) and classifies the loops of the reduced joint graph;
the extended system graph (Fig. 3), its topology matrices (Eqs. 1-4) and the
reduced system graph (Fig. 4) are properties of the result, built when first
asked for (composing a model needs none of them).

It does not raise for problems of the mechanism; they are
:class:`~graph.issues.Issue` entries of the result (see :mod:`graph.issues`
for the codes):

* **errors** (the CLI should exit with code 2): bodies not connected to
  ground (``disconnected``), a loop that cannot close at the reference
  configuration (``loop-not-closed``);
* **warnings** (reported, the analysis is complete): over-constrained loops,
  loops with redundant constraints, locked pairs, partially coupled pairs,
  actuated joints removed as redundant, joint-frame gaps on tree joints.

Only misuse raises: a joint naming a body that does not exist (readers
reject this earlier) or an invalid ``composite_names`` mapping (ValueError).
"""

from __future__ import annotations

from functools import cached_property
from typing import Mapping

from mbcompose.dynamics.records import record
from mbcompose.parsers.assembly import Assembly

from .composites import Composite
from .issues import ERROR, WARNING, Issue
from .loops import Loop, analyse_loops
from .matrices import TopologyMatrices, topology_matrices
from .reduce import PairReport, ReducedJoint, RemovedJoint, reduce_assembly
from .subspaces import RANK_RTOL
from .system_graph import GraphBody, GraphJoint, SystemGraph, build_system_graph, extended_graph, graph_forces


@record
class Analysis:
    """Everything the graph stage finds about an assembly.

    assembly : the input.
    extended : extended system graph (seed 004 Fig. 3), a property built on first use.
    fixed_composites : composites over fixed joints (Table 2).
    composites : final composites (locked pairs merged); mass properties in
        the assembly frame at the reference configuration.
    joints_before : reduced joints before redundancy removal (Table 3).
    reduced_joints : joints of the reduced graph.
    removed_joints : joints removed, with reasons.
    pairs : pairs left with several partially coupled joints.
    reduced : reduced system graph (Fig. 4), a property built on first use.
    tree : spanning tree of the reduced joint graph (joint names).
    loops : fundamental loops with their classification.
    dof : degrees of freedom of the mechanism, ``freedoms - closure_rank - couplings``
        (each joint coupling of the assembly holds one coordinate).
    issues : errors and warnings (see module docstring).
    freedoms : sum of the joint freedoms of the reduced graph.
    closure_rank : rank of all loops' closure Jacobians stacked.
    """

    assembly: Assembly
    fixed_composites: tuple[Composite, ...]
    composites: tuple[Composite, ...]
    joints_before: tuple[ReducedJoint, ...]
    reduced_joints: tuple[ReducedJoint, ...]
    removed_joints: tuple[RemovedJoint, ...]
    pairs: tuple[PairReport, ...]
    tree: tuple[str, ...]
    loops: tuple[Loop, ...]
    dof: int
    issues: tuple[Issue, ...]
    freedoms: int = 0
    closure_rank: int = 0

    @property
    def errors(self) -> tuple[Issue, ...]:
        return tuple(i for i in self.issues if i.severity == ERROR)

    @property
    def warnings(self) -> tuple[Issue, ...]:
        return tuple(i for i in self.issues if i.severity == WARNING)

    @property
    def ok(self) -> bool:
        """True when there is no error."""
        return not self.errors

    def composite(self, name: str) -> Composite:
        for c in self.composites:
            if c.name == name:
                return c
        raise KeyError(name)

    @cached_property
    def extended(self) -> SystemGraph:
        """The extended system graph (Fig. 3), built on first use: composing a model does not need it."""
        return extended_graph(self.assembly)

    @cached_property
    def reduced(self) -> SystemGraph:
        """The reduced system graph (Fig. 4), built on first use: composing a model does not need it."""
        owner = {m: c.name for c in self.composites for m in c.members}
        names = {j.name for j in self.reduced_joints}
        return reduced_graph(self.composites, self.reduced_joints, graph_forces(self.assembly, owner, names))

    @cached_property
    def matrices(self) -> TopologyMatrices:
        """Incidence / cut-set / circuit matrices of ``extended`` (Eqs. 1-4, sparse),
        built on first use: composing a model does not need them."""
        return topology_matrices(self.extended)

    def reduced_matrices(self) -> TopologyMatrices:
        """Topology matrices of the reduced system graph."""
        return topology_matrices(self.reduced)


def reduced_graph(composites, joints, forces=()) -> SystemGraph:
    """Reduced system graph (Fig. 4): composites as bodies, arms re-anchored at their CoMs; ``forces``
    (:class:`GraphForce`, bodies renamed to their composites) after the joints."""
    return build_system_graph(
        [GraphBody(c.name, c.mass.com) for c in composites],
        [GraphJoint(j.name, j.type, j.reference, j.secondary, j.origin, j.actuated) for j in joints],
        "reduced", forces)


def analyse(assembly: Assembly, composite_names: Mapping[str, str] | None = None,
            rtol: float = RANK_RTOL) -> Analysis:
    """Run the graph stage on an assembly.

    Parameters
    ----------
    assembly : Assembly
        Bodies, joints (any order) in the assembly frame at the reference configuration.
    composite_names : mapping, optional
        Composite renaming, keyed by default composite name (its root body,
        the member nearest ground) or by any member body name.
    rtol : float
        Relative tolerance of numerical ranks (:data:`graph.subspaces.RANK_RTOL`).
    """
    red = reduce_assembly(assembly, composite_names, rtol)
    la = analyse_loops([c.name for c in red.composites], red.joints, lambda: red.length, rtol)
    issues = []
    for i in la.issues:
        if i.code == "disconnected":
            members = {c.name: c.members for c in red.composites}
            detail = "; ".join(f"{n} ({', '.join(members[n])})" if len(members[n]) > 1 else n
                               for n in la.disconnected)
            i = Issue(ERROR, i.code, f"not connected to ground by any chain of joints: {detail}",
                      tuple(b for n in la.disconnected for b in members[n]))
        issues.append(i)
    issues.extend(red.issues)
    issues.sort(key=lambda i: i.severity != ERROR)
    return Analysis(
        assembly=assembly, fixed_composites=red.fixed_composites, composites=red.composites,
        joints_before=red.joints_before, reduced_joints=red.joints, removed_joints=red.removed, pairs=red.pairs,
        tree=la.tree, loops=la.loops, dof=la.dof - len(assembly.couplings), issues=tuple(issues),
        freedoms=la.dof + la.total_rank, closure_rank=la.total_rank)
