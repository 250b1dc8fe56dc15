"""``compose(path, **options)``: from an input file to a dynamics model.

The Python entry point of the pipeline (DESIGN.md, public contract)::

    c = composer.compose("samples/seeker/seeker.yaml")
    c.assembly   # parsers.Assembly, as read
    c.analysis   # graph.Analysis: extended graph, composites, reduction, loops
    c.tree       # graph.model.tree.TreeModel: spanning tree + loop-closing chords
    c.model      # dynamics model: joint_names, nq, nv, q_slice, v_slice
    c.lumped     # Assembly of the composites (what the exporters write)

Stages: read (:func:`parsers.read_assembly`) -> analyse (:func:`graph.analyse`)
-> model (:func:`graph.model.build_model`: the SKO tree, closed loops and couplings
embedded into compound nodes by :mod:`dynamics.embedding` when there are any).
"""

from __future__ import annotations

from dataclasses import field
from functools import cached_property

from mbcompose import graph
from mbcompose.graph.model import (LOOP_POLICIES, REDUNDANT_POLICIES, TreeModel, build_model, joint_properties, lumped,
                                   subject_location)
from mbcompose.parsers import input_suffix, read_assembly
from mbcompose.dynamics.records import record
from mbcompose.parsers.assembly import GROUND, Assembly
from mbcompose.parsers.errors import InputError, did_you_mean
from mbcompose.parsers.gc_pause import paused_gc

from .config import StageOptions


@record(eq=True)
class Composition:
    """The artefacts of composing one input file (see module docstring); a frozen dataclass built as
    :func:`dynamics.records.record` builds."""

    assembly: Assembly
    analysis: object
    tree: TreeModel
    model: object
    options: StageOptions = field(default_factory=StageOptions)

    @cached_property
    def lumped(self) -> Assembly:
        """The Assembly of the composites (what the exporters write), built on first use."""
        return lumped(self.assembly, self.analysis, self.options.lumping, self.options.redundant_joints)

    @cached_property
    def joint_properties(self):
        """Damping and limits of the tree joints per velocity coordinate of the model
        (:class:`dynamics.simulation.JointProperties`), built on first use."""
        return joint_properties(self.tree, self.model)

    @property
    def extended_graph(self):
        return self.analysis.extended

    @property
    def reduced_graph(self):
        return self.analysis.reduced


def _raise_analysis_errors(analysis, assembly: Assembly) -> None:
    for issue in analysis.errors:
        file, line = subject_location(issue.subjects, assembly)
        raise InputError(issue.message, file=file, line=line)


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
        from mbcompose.parsers.sdf.reader import is_sdformat

        if not is_sdformat(path):
            raise InputError("options.sdf applies to SDFormat inputs only", file=str(path))
        reader_options = {**options.sdf, **reader_options}
    reader_options = {**_package_options(path, options.packages), **reader_options}
    return read_assembly(path, **reader_options)


#: input suffixes whose readers take ``package_dirs`` / ``xacro_args``
_PACKAGE_READERS = (".urdf", ".xacro", ".sdf", ".world")


def _package_options(path, packages) -> dict:
    """``options.packages``' entries that ``path``'s reader takes (``xacro_args``: .xacro only)."""
    suffix = input_suffix(path)
    if suffix not in _PACKAGE_READERS:
        return {}
    return {k: v for k, v in packages.items() if k != "xacro_args" or suffix == ".xacro"}


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
    """Stage 3: the SKO tree model, with closed loops handled as ``options.loops`` says
    (:func:`graph.model.build_model`)."""
    tree, model = build_model(assembly, analysis, options.lumping, options.redundant_joints, options.loops)
    return Composition(assembly=assembly, analysis=analysis, tree=tree, model=model, options=options)


#: the keywords of :func:`compose` that are :class:`StageOptions` fields (the others go to the reader)
_STAGE_FIELDS = frozenset(StageOptions.__dataclass_fields__)


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
    stage_options = StageOptions(**{k: v for k, v in options.items() if k in _STAGE_FIELDS})
    _validate(stage_options)
    reader_options = {k: v for k, v in options.items() if k not in _STAGE_FIELDS}
    with paused_gc():
        assembly = read_stage(path, stage_options, **reader_options)
        analysis = analyse_stage(assembly, stage_options)
        return model_stage(assembly, analysis, stage_options)


def _validate(options: StageOptions) -> None:
    if options.loops not in LOOP_POLICIES:
        raise ValueError(f"loops must be one of {LOOP_POLICIES}, got {options.loops!r}")
    if options.redundant_joints not in REDUNDANT_POLICIES:
        raise ValueError(f"redundant_joints must be one of {REDUNDANT_POLICIES}, got {options.redundant_joints!r}")
