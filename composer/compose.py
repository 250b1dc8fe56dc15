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
from functools import cached_property

from mbcompose import graph
from mbcompose.parsers import read_assembly
from mbcompose.parsers.assembly import GROUND, Assembly, Joint, Limits, Source, of_frozen
from mbcompose.parsers.errors import InputError, did_you_mean
from mbcompose.parsers.gc_pause import paused_gc
from mbcompose.parsers.massprops import transform_mass_properties

from .config import LOOP_POLICIES, REDUNDANT_POLICIES, StageOptions
from .lumped import lumped_assembly
from .tree import RigidBody, TreeModel, build_tree_model


@dataclass(frozen=True)
class Composition:
    """The artefacts of composing one input file (see module docstring)."""

    assembly: Assembly
    analysis: object
    tree: TreeModel
    model: object
    options: StageOptions = field(default_factory=StageOptions)

    @cached_property
    def lumped(self) -> Assembly:
        """The Assembly of the composites (what the exporters write), built on first use."""
        bodies, joints = tree_inputs(self.assembly, self.analysis, self.options.lumping,
                                     self.options.redundant_joints)
        return lumped_assembly(self.assembly, bodies, joints)

    @property
    def extended_graph(self):
        return self.analysis.extended

    @property
    def reduced_graph(self):
        return self.analysis.reduced


def _joint_or_none(assembly: Assembly, name: str) -> Joint | None:
    try:
        return assembly.joint(name)
    except KeyError:
        return None


def _summed_armature(rj, original: Joint | None, assembly: Assembly, redundant_of) -> float:
    """Rotor inertia of a reduced joint: its joints' and that of the redundant joints removed in
    its favour (``redundant_of``: kept joint -> names; co-linear joints turn together, so each
    rotor turns with the kept freedom); ``original``: the joint of ``rj.joints[0]``."""
    first = original.armature if original is not None else 0
    if len(rj.joints) < 2 and rj.name not in redundant_of:
        return float(first)
    names = rj.joints[1:] + tuple(redundant_of.get(rj.name, ()))
    return float(sum((j.armature for j in (_joint_or_none(assembly, n) for n in names) if j is not None), first))


def _unchanged(rj, original: Joint) -> bool:
    """True when ``original`` (the joint of ``rj.joints[0]``) is what :func:`_reduced_joint_as_joint`
    would build for ``rj`` (armature aside): same name, type, bodies and attachments, no secondary axis,
    no motor, a bool ``loop``, not implicit."""
    return (rj.name == original.name and rj.reference == original.reference and rj.secondary == original.secondary
            and rj.type == original.type and rj.actuated is original.actuated and rj.origin is original.origin
            and rj.axis is original.axis and rj.axis2 is original.axis2
            and rj.secondary_origin is original.secondary_origin and original.secondary_axis is None
            and original.motor is None and type(original.loop) is bool and original.implicit is False
            and type(original.armature) is float)


def _reduced_joint_as_joint(rj, assembly: Assembly, redundant_of) -> Joint:
    """The :class:`parsers.assembly.Joint` of a reduced joint, its limits, damping, ``ref`` and source
    those of its first original joint (that joint itself when the reduction left it as it is).  Built
    with ``of_frozen`` (the first original joint's fields as the common ones): the type and the read-only
    arrays come from the assembly's joints, so ``Joint.__post_init__`` would keep them as they are."""
    original = _joint_or_none(assembly, rj.joints[0]) if rj.joints else None
    if original is None:
        return of_frozen(Joint, name=rj.name, type=rj.type, reference=rj.reference, secondary=rj.secondary,
                         origin=rj.origin, axis=rj.axis, axis2=rj.axis2, secondary_origin=rj.secondary_origin,
                         secondary_axis=None, limits=Limits(), actuated=rj.actuated, motor=None, damping=0.0,
                         armature=_summed_armature(rj, None, assembly, redundant_of), ref=0.0, loop=False,
                         implicit=False, source=Source())
    if _unchanged(rj, original) and not (len(rj.joints) > 1 or rj.name in redundant_of):
        return original
    return of_frozen(Joint, original.__dict__, name=rj.name, type=rj.type, reference=rj.reference,
                     secondary=rj.secondary, origin=rj.origin, axis=rj.axis, axis2=rj.axis2,
                     secondary_origin=rj.secondary_origin, secondary_axis=None, actuated=rj.actuated, motor=None,
                     armature=_summed_armature(rj, original, assembly, redundant_of), loop=bool(original.loop),
                     implicit=False)  # limits, damping, ref and source: the original's


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
    bodies = [of_frozen(RigidBody, name=c.name, mass=c.mass, members=tuple(c.members)) for c in analysis.composites]
    reduced = analysis.reduced_joints if redundant_joints == "remove" else analysis.joints_before
    redundant_of: dict[str, list[str]] = {}
    if redundant_joints == "remove":
        for r in analysis.removed_joints:
            if r.kind == "redundant":
                redundant_of.setdefault(r.kept, []).append(r.name)
    return bodies, [_reduced_joint_as_joint(rj, assembly, redundant_of) for rj in reduced]


def _raise_analysis_errors(analysis, assembly: Assembly) -> None:
    for issue in analysis.errors:
        file, line = subject_location(issue.subjects, assembly)
        raise InputError(issue.message, file=file, line=line)


def subject_location(subjects, assembly: Assembly) -> tuple[str | None, int | None]:
    """File and line (or None) of the first body or joint among ``subjects`` that knows where it was read."""
    bodies, joints = set(assembly.body_names), set(assembly.joint_names)
    for name in subjects:
        item = assembly.body(name) if name in bodies else assembly.joint(name) if name in joints else None
        sources = [getattr(item, "source", None), *getattr(item, "sources", {}).values()]
        for source in sources:
            if source is not None and source.line is not None:
                return source.file or assembly.source_file, source.line
    return assembly.source_file, None


def _check_composite_names(names, assembly: Assembly) -> None:
    """Keys of ``composite_names`` must be bodies; names unique, non-empty and not ground."""
    for key, value in names.items():
        if key not in assembly.body_names:
            raise InputError(f"'{key}' is not a body{did_you_mean(key, assembly.body_names)}",
                             key="options.composite_names")
        if not isinstance(value, str) or not value or value == GROUND:
            raise InputError(f"'{key}': composite name must be a non-empty string other than "
                             f"'{GROUND}', got {value!r}", key="options.composite_names")
    if len(set(names.values())) != len(names):
        raise InputError("composite names are not unique", key="options.composite_names")


def read_stage(path, options: StageOptions, **reader_options) -> Assembly:
    """Stage 1: read the input file into an Assembly."""
    if options.base != "fixed":
        reader_options = {"base": options.base, **reader_options}
    if options.mating and str(path).lower().endswith((".step", ".stp")):
        reader_options = {**options.mating, **reader_options}
    if options.sdf:
        from mbcompose.parsers.sdf import is_sdformat

        if not is_sdformat(path):
            raise InputError("options.sdf applies to SDFormat inputs only", file=str(path))
        reader_options = {**options.sdf, **reader_options}
    return read_assembly(path, **reader_options)


def _located(stage):
    """Decorator: an InputError of ``stage(assembly, ...)`` without a file names the assembly's file."""
    import functools

    @functools.wraps(stage)
    def run(assembly, *args, **kwargs):
        try:
            return stage(assembly, *args, **kwargs)
        except InputError as exc:
            if exc.file is None and not (exc.key or "").startswith("options."):
                exc.file = assembly.source_file
            raise
    return run


@_located
def analyse_stage(assembly: Assembly, options: StageOptions):
    """Stage 2: the graph stage (extended graph, composites, reduction, loops).

    Errors of the mechanism (a body not connected to ground, a loop that cannot
    close) are raised as InputError; warnings stay in the analysis.
    """
    _check_composite_names(options.composite_names, assembly)
    analysis = graph.analyse(assembly, composite_names=dict(options.composite_names) or None,
                             rtol=options.tolerances.rank)
    _raise_analysis_errors(analysis, assembly)
    return analysis


@_located
def model_stage(assembly: Assembly, analysis, options: StageOptions) -> Composition:
    """Stage 3: the SKO tree model, with closed loops handled as ``options.loops`` says."""
    bodies, joints = tree_inputs(assembly, analysis, options.lumping, options.redundant_joints)
    tree = build_tree_model(bodies, joints, assembly.gravity)
    model = tree.model
    if tree.chords and options.loops == "error":
        names = ", ".join(j.name for j in tree.chords)
        raise InputError(f"the mechanism has closed loops (closed by {names}) and loops: error was asked",
                         file=assembly.source_file)
    if tree.chords or assembly.couplings:
        from mbcompose.dynamics.closure import ClosureError

        from .closed import closed_chain_model
        try:
            model = closed_chain_model(tree, options, assembly.couplings)
        except ClosureError as exc:
            file, line = subject_location(exc.joints, assembly)
            raise InputError(str(exc), file=file, line=line) from None
    return of_frozen(Composition, assembly=assembly, analysis=analysis, tree=tree, model=model, options=options)


def compose(path, **options) -> Composition:
    """Read ``path`` and build its dynamics model.

    Parameters
    ----------
    path : input file (YAML, URDF, SDF, MJCF; chosen by suffix).
    options : the fields of :class:`composer.config.StageOptions` (``lumping``,
        ``composite_names``, ``redundant_joints`` 'remove'|'keep', ``loops``
        'embed'|'lagrange'|'error', ``base`` 'fixed'|'floating', ``tolerances``);
        any other keyword goes to the reader (e.g. ``package_dirs`` for URDF).
    """
    names = set(StageOptions.__dataclass_fields__)
    stage_options = StageOptions(**{k: v for k, v in options.items() if k in names})
    _validate(stage_options)
    reader_options = {k: v for k, v in options.items() if k not in names}
    with paused_gc():
        assembly = read_stage(path, stage_options, **reader_options)
        analysis = analyse_stage(assembly, stage_options)
        return model_stage(assembly, analysis, stage_options)


def _validate(options: StageOptions) -> None:
    if options.loops not in LOOP_POLICIES:
        raise ValueError(f"loops must be one of {LOOP_POLICIES}, got {options.loops!r}")
    if options.redundant_joints not in REDUNDANT_POLICIES:
        raise ValueError(f"redundant_joints must be one of {REDUNDANT_POLICIES}, got {options.redundant_joints!r}")
