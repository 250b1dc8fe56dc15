"""``compose(path, **options)``: from an input file to a dynamics model.

The Python entry point of the pipeline (DESIGN.md, public contract)::

    c = composer.compose("samples/seeker/seeker.yaml")
    c.assembly   # parsers.Assembly, as read
    c.analysis   # graph.Analysis: extended graph, composites, reduction, loops
    c.tree       # composer.tree.TreeModel: spanning tree + loop-closing chords
    c.model      # dynamics model: joint_names, nq, nv, q_slice, v_slice
    c.lumped     # Assembly of the composites (what the exporters write)

Stages: read (:func:`parsers.read_assembly`) -> analyse (:func:`graph.analyse`)
-> tree model (:func:`composer.tree.build_tree_model`) -> closed loops
embedded into compound nodes (:mod:`dynamics.embedding`) when there are any.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import graph
from parsers import read_assembly
from parsers.assembly import Assembly, Joint, Limits, Source
from parsers.errors import InputError
from parsers.massprops import transform_mass_properties

from .lumped import lumped_assembly
from .tree import RigidBody, TreeModel, build_tree_model

LOOP_POLICIES = ("embed", "lagrange", "error")


@dataclass(frozen=True)
class Composition:
    """The artefacts of composing one input file (see module docstring)."""

    assembly: Assembly
    analysis: object
    tree: TreeModel
    model: object
    lumped: Assembly
    options: Mapping[str, object] = field(default_factory=dict)

    @property
    def extended_graph(self):
        return self.analysis.extended

    @property
    def reduced_graph(self):
        return self.analysis.reduced

    @property
    def has_loops(self) -> bool:
        return bool(self.tree.chords)


def _reduced_joint_as_joint(rj, assembly: Assembly) -> Joint:
    original = assembly.joint(rj.joints[0]) if rj.joints and rj.joints[0] in assembly.joint_names else None
    return Joint(name=rj.name, type=rj.type, reference=rj.reference, secondary=rj.secondary,
                 origin=rj.origin, axis=rj.axis, axis2=rj.axis2, secondary_origin=rj.secondary_origin,
                 actuated=rj.actuated, loop=bool(original and original.loop),
                 limits=original.limits if original else Limits(),
                 damping=original.damping if original else 0.0,
                 source=original.source if original else Source())


def tree_inputs(assembly: Assembly, analysis, lumping: bool = True,
                redundant_joints: str = "remove") -> tuple[list[RigidBody], list[Joint]]:
    """Bodies and joints handed to the tree builder.

    lumping : composites as bodies (fixed joints internal) or the assembly's own bodies.
    redundant_joints : 'remove' (the reduced graph) or 'keep' (redundant joints
        stay and become loop constraints).
    """
    if not lumping:
        bodies = [RigidBody(b.name, transform_mass_properties(b.mass, b.pose), (b.name,)) for b in assembly.bodies]
        return bodies, list(assembly.joints)
    bodies = [RigidBody(c.name, c.mass, tuple(c.members)) for c in analysis.composites]
    reduced = analysis.reduced_joints if redundant_joints == "remove" else analysis.joints_before
    return bodies, [_reduced_joint_as_joint(rj, assembly) for rj in reduced]


def _raise_analysis_errors(analysis, assembly: Assembly) -> None:
    for issue in analysis.errors:
        raise InputError(issue.message, file=assembly.source_file)


def compose(path, *, lumping: bool = True, composite_names: Mapping[str, str] | None = None,
            redundant_joints: str = "remove", loops: str = "embed", **reader_options) -> Composition:
    """Read ``path`` and build its dynamics model.

    Parameters
    ----------
    path : input file (YAML, URDF, SDF, MJCF; chosen by suffix).
    lumping : merge rigidly connected bodies into composites (default True).
    composite_names : renaming of composites (see :func:`graph.analyse`).
    redundant_joints : 'remove' or 'keep' (kept joints become loop constraints).
    loops : 'embed' (constraint embedding), 'lagrange' (dense multipliers) or
        'error' (refuse closed chains).
    reader_options : passed to the reader (e.g. ``package_dirs`` for URDF).
    """
    if loops not in LOOP_POLICIES:
        raise ValueError(f"loops must be one of {LOOP_POLICIES}, got {loops!r}")
    assembly = read_assembly(path, **reader_options)
    analysis = graph.analyse(assembly, composite_names=composite_names)
    _raise_analysis_errors(analysis, assembly)
    bodies, joints = tree_inputs(assembly, analysis, lumping, redundant_joints)
    tree = build_tree_model(bodies, joints, assembly.gravity)
    model = tree.model
    if tree.chords:
        if loops == "error":
            names = ", ".join(j.name for j in tree.chords)
            raise InputError(f"the mechanism has closed loops (closed by {names}) and loops: error was asked",
                             file=assembly.source_file)
        from .closed import closed_chain_model
        model = closed_chain_model(tree, loops)
    options = dict(lumping=lumping, composite_names=dict(composite_names or {}),
                   redundant_joints=redundant_joints, loops=loops, **reader_options)
    return Composition(assembly=assembly, analysis=analysis, tree=tree, model=model,
                       lumped=lumped_assembly(assembly, bodies, joints), options=options)
