"""The dynamics model of an analysed assembly: bodies and joints for the tree, the tree, closed chains.

The graph stage (:func:`graph.analyse`) gives the composites (seed 004 Table 2) and the reduced
joints (Table 3); here they become the rigid bodies and joints of the spanning tree
(:func:`.tree.build_tree_model`: the SKO model of seed 001), and loops and couplings are embedded
(:mod:`.closed`: seed 000's aggregation) or kept as Lagrange multipliers.
"""

from __future__ import annotations

from mbcompose.dynamics.closed.closure import ClosureError
from mbcompose.parsers.assembly import Assembly, Joint, Limits, Source
from mbcompose.parsers.errors import InputError
from mbcompose.parsers.massprops import transform_mass_properties

from .closed import closed_chain_model
from .lumped import lumped_assembly
from .tree import RigidBody, TreeModel, build_tree_model

#: what to do with closed loops: constraint embedding, Lagrange multipliers, or refuse
LOOP_POLICIES = ("embed", "lagrange", "error")
#: what to do with redundant joints: remove them (the reduced graph) or keep them as loop constraints
REDUNDANT_POLICIES = ("remove", "keep")


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
    its motor (if any) kept, a bool ``loop``, not implicit."""
    return (rj.name == original.name and rj.reference == original.reference and rj.secondary == original.secondary
            and rj.type == original.type and rj.actuated is original.actuated and rj.origin is original.origin
            and rj.axis is original.axis and rj.axis2 is original.axis2
            and rj.secondary_origin is original.secondary_origin and original.secondary_axis is None
            and (original.motor is None or rj.actuated) and type(original.loop) is bool
            and original.implicit is False
            and type(original.armature) is float)


def _reduced_joint_as_joint(rj, assembly: Assembly, redundant_of) -> Joint | dict:
    """The :class:`parsers.assembly.Joint` of a reduced joint, its limits, damping, ``ref``, source and
    (when the reduced joint is actuated) motor those of its first original joint: that joint itself
    when the reduction left it as it is, else the keywords of a new one (the original's fields with the
    reduced joint's), which :func:`tree_inputs` builds with the others through :meth:`Joint.many` (the
    constructor's checks, in one pass)."""
    original = _joint_or_none(assembly, rj.joints[0]) if rj.joints else None
    if original is None:
        return {"name": rj.name, "type": rj.type, "reference": rj.reference, "secondary": rj.secondary,
                "origin": rj.origin, "axis": rj.axis, "axis2": rj.axis2, "secondary_origin": rj.secondary_origin,
                "secondary_axis": None, "limits": Limits(), "actuated": rj.actuated, "motor": None, "damping": 0.0,
                "armature": _summed_armature(rj, None, assembly, redundant_of), "ref": 0.0, "loop": False,
                "implicit": False, "source": Source()}
    if _unchanged(rj, original) and not (len(rj.joints) > 1 or rj.name in redundant_of):
        return original
    return {**original.__dict__,  # (a record's fields) limits, damping, ref and source: the original's
            "name": rj.name, "type": rj.type, "reference": rj.reference, "secondary": rj.secondary,
            "origin": rj.origin, "axis": rj.axis, "axis2": rj.axis2, "secondary_origin": rj.secondary_origin,
            "secondary_axis": None, "actuated": rj.actuated, "motor": original.motor if rj.actuated else None,
            "armature": _summed_armature(rj, original, assembly, redundant_of), "loop": bool(original.loop),
            "implicit": False}


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
    redundant_of: dict[str, list[str]] = {}
    if redundant_joints == "remove":
        for r in analysis.removed_joints:
            if r.kind == "redundant":
                redundant_of.setdefault(r.kept, []).append(r.name)
    joints = [_reduced_joint_as_joint(rj, assembly, redundant_of) for rj in reduced]
    rows = [j for j in joints if type(j) is dict]
    if rows:
        built = iter(Joint.many(rows))
        joints = [next(built) if type(j) is dict else j for j in joints]
    return bodies, joints


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


def build_model(assembly: Assembly, analysis, lumping: bool = True, redundant_joints: str = "remove",
                loops: str = "embed") -> tuple[TreeModel, object]:
    """``(tree, model)``: the SKO tree of the analysed assembly and its dynamics model.

    lumping, redundant_joints : as :func:`tree_inputs`.
    loops : 'embed' (closed loops and joint couplings embedded into compound nodes, seed 000),
        'lagrange' (a dense Lagrange-multiplier model on the spanning tree) or 'error' (closed loops
        are an InputError).  A tree without couplings is its own model.
    """
    bodies, joints = tree_inputs(assembly, analysis, lumping, redundant_joints)
    tree = build_tree_model(bodies, joints, assembly.gravity, assembly.actuators, assembly.springs + assembly.forces)
    if tree.chords and loops == "error":
        names = ", ".join(j.name for j in tree.chords)
        raise InputError(f"the mechanism has closed loops (closed by {names}) and loops: error was asked",
                         file=assembly.source_file)
    if not (tree.chords or assembly.couplings):
        return tree, tree.model
    try:
        return tree, closed_chain_model(tree, loops, assembly.couplings)
    except ClosureError as exc:
        file, line = subject_location(exc.joints, assembly)
        raise InputError(str(exc), file=file, line=line) from None


def lumped(assembly: Assembly, analysis, lumping: bool = True, redundant_joints: str = "remove") -> Assembly:
    """The Assembly of the composites (what the exporters write): :func:`.lumped.lumped_assembly` of the
    bodies and joints of :func:`tree_inputs`."""
    bodies, joints = tree_inputs(assembly, analysis, lumping, redundant_joints)
    return lumped_assembly(assembly, bodies, joints)
