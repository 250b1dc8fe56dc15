"""System graphs of mechanisms: extended graph, composites, reduction, loops (seed 004).

Entry point: :func:`analyse` (``graph.analyse(assembly) -> Analysis``).

Modules, one per algorithm family:

* :mod:`graph.system_graph` - extended / reduced system graph (Figs. 3-4);
* :mod:`graph.matrices` - incidence, cut-set and circuit matrices (Eqs. 1-4);
* :mod:`graph.composites` - composite bodies by depth-first search (Table 2);
* :mod:`graph.subspaces` - joint motion subspaces, numerical rank;
* :mod:`graph.reduce` - reduction and redundant joints (Table 3);
* :mod:`graph.loops` - fundamental loops, closure Jacobian ranks, dof;
* :mod:`graph.analysis` - the whole stage; :mod:`graph.issues` - errors and warnings;
* :mod:`graph.draw.systems` - pictures of the graphs;
* :mod:`graph.aggregation`, :mod:`graph.aggregation.segments` - aggregation of loops (seed 000).
"""

from .analysis import Analysis, analyse, reduced_graph
from .composites import Composite, find_composites
from .issues import Issue
from .loops import Loop
from .matrices import TopologyMatrices, incidence_matrix, minimum_spanning_tree, topology_matrices
from .reduce import ReducedJoint, RemovedJoint
from .system_graph import Element, SystemGraph, build_system_graph, extended_graph

__all__ = ["Analysis", "Composite", "Element", "Issue", "Loop", "ReducedJoint", "RemovedJoint", "SystemGraph",
           "TopologyMatrices", "analyse", "build_system_graph", "extended_graph", "find_composites",
           "incidence_matrix", "reduced_graph", "minimum_spanning_tree", "topology_matrices"]
