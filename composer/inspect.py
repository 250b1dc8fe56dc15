"""Rendering of ``mbcompose inspect``: text, JSON and markdown.

Every function takes an :class:`~parsers.assembly.Assembly` (analysed on the
spot with :func:`graph.analyse`) or an already computed
:class:`~graph.analysis.Analysis`.  The report follows seed 004:

1. bodies (mass, centre of mass, inertia) and the kinematic description in
   the layout of Table 1 (type, reference body, secondary body; actuated
   joints starred);
2. composite bodies (Table 2);
3. the kinematic description of the composites before redundant joints are
   removed (Table 3, actuated joints starred), then the removed joints with
   their reasons and the joints that remain;
4. loops with their classification, the degrees of freedom, errors and warnings;
5. optionally (``matrices=True``) the elements of the extended system graph and
   its incidence, cut-set and circuit matrices (seed 004, Eqs. 1-4).

Units: SI.  Centres of mass are given in the assembly frame; inertias about the
centre of mass along the assembly axes, as ``[ixx, iyy, izz, ixy, ixz, iyz]``.

JSON keys (the public contract of DESIGN.md, never removed): ``bodies``,
``joints``, ``composites`` (list of member-name lists), ``reduced_joints``,
``removed_joints``, ``loops``, ``dof``; and in addition ``assembly``,
``composite_bodies``, ``joints_before_removal``, ``dof_details``, ``errors``, ``warnings``,
``graph`` (element counts), ``matrices`` (when asked), ``contacts`` (CAD input: the
contacts found between parts and the joint each pair gives).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.graph import Analysis, analyse
from mbcompose.parsers.assembly import Assembly

from .formatting import format_number, plural

__all__ = ["analysis_of", "exit_code", "render_json", "render_markdown", "render_text", "sections",
           "summary_lines"]


def analysis_of(obj, composite_names: Mapping[str, str] | None = None) -> Analysis:
    """``obj`` if it is an Analysis, else ``graph.analyse(obj, composite_names)``."""
    if isinstance(obj, Analysis):
        return obj
    if isinstance(obj, Assembly):
        return analyse(obj, composite_names)
    raise TypeError(f"expected an Assembly or an Analysis, got {type(obj).__name__}")


def exit_code(obj) -> int:
    """2 when the analysis has errors (disconnected bodies, loops that cannot close), else 0."""
    return 0 if analysis_of(obj).ok else 2


def _g(x: float) -> str:
    return format_number(float(x))


def _vec(v) -> str:
    """Entries below 1e-12 of the largest, or of 1 (round-off of rotations), print as 0."""
    v = np.asarray(v, dtype=float)
    scale = np.abs(v).max(initial=0.0)
    return "[" + ", ".join(format_number(float(x), scale) for x in v) + "]"


def _inertia6(J) -> list[float]:
    J = np.asarray(J, dtype=float)
    return [float(J[0, 0]), float(J[1, 1]), float(J[2, 2]), float(J[0, 1]), float(J[0, 2]), float(J[1, 2])]


def _type(t: str, actuated: bool) -> str:
    return t.upper() + ("*" if actuated else "")


def _world_mass(body):
    R, p = body.pose.rotation, body.pose.translation
    return R @ body.mass.com + p, R @ body.mass.inertia @ R.T


# ---------------------------------------------------------------- rows (shared by all renderers)

def _body_rows(an: Analysis):
    rows = []
    for b in an.assembly.bodies:
        com, J = _world_mass(b)
        rows.append({"name": b.name, "mass": b.mass.mass, "com": com.tolist(), "inertia": _inertia6(J),
                     "com_body_frame": b.mass.com.tolist(), "inertia_body_frame": _inertia6(b.mass.inertia)})
    return rows


def _declared(an: Analysis):
    """Joints written in the input (Table 1); the reader's implicit base joint is listed apart."""
    return [j for j in an.assembly.joints if not j.implicit]


def _implicit(an: Analysis):
    return [j for j in an.assembly.joints if j.implicit]


def _implicit_names(an: Analysis) -> set[str]:
    return {j.name for j in _implicit(an)}


def _is_implicit(rj, implicit: set[str]) -> bool:
    return bool(rj.joints) and set(rj.joints) <= implicit


def _implicit_note(an: Analysis) -> str:
    return "; ".join(f"{j.secondary} is attached to {j.reference} by the implicit {j.type.upper()} joint "
                     f"{j.name} (from 'base' in the input)" for j in _implicit(an))


def _in_file_order(an: Analysis, reduced) -> list:
    """Reduced joints in the order the file wrote their first joint (a reduced joint with no joint
    of the file, none today, last)."""
    position = {j.name: k for k, j in enumerate(an.assembly.joints)}
    last = len(position)
    return sorted(reduced, key=lambda rj: min((position.get(n, last) for n in rj.joints), default=last))


def _actuated_note(*tables) -> str:
    """``* actuated`` when a row of ``tables`` (lists of joints) is starred."""
    return "* actuated" if any(j.actuated for rows in tables for j in rows) else ""


def _joint_rows(joints):
    return [{"name": j.name, "type": j.type, "reference": j.reference, "secondary": j.secondary,
             "actuated": bool(j.actuated), "origin": j.origin.tolist(),
             "axis": j.axis.tolist() if JOINTS[j.type].has_axis else None,
             "gear_ratio": j.motor.gear_ratio if j.motor is not None else None}
            for j in joints]


def _reduced_rows(joints, implicit: set[str] = frozenset()):
    return [{"name": j.name, "type": j.type, "reference": j.reference, "secondary": j.secondary,
             "actuated": bool(j.actuated), "joints": list(j.joints),
             "reference_body": j.reference_body, "secondary_body": j.secondary_body,
             "implicit": _is_implicit(j, implicit)} for j in joints]


def _composite_rows(an: Analysis):
    return [{"name": c.name, "members": list(c.members), "mass": c.mass.mass, "com": c.mass.com.tolist(),
             "inertia": _inertia6(c.mass.inertia), "grounded": c.grounded} for c in an.composites]


def _removed_rows(an: Analysis):
    return [{"name": r.name, "type": r.type, "reference": r.reference, "secondary": r.secondary,
             "actuated": r.actuated, "kind": r.kind, "kept": r.kept, "reason": r.reason}
            for r in an.removed_joints]


def _loop_rows(an: Analysis):
    return [{"name": l.name, "joints": list(l.joints), "signs": list(l.signs), "bodies": list(l.bodies),
             "equations": l.n_equations, "freedoms": l.n_freedoms, "rank": l.rank, "mobility": l.mobility,
             "redundant_constraints": l.redundant_constraints, "overconstrained": l.overconstrained,
             "classification": l.kind, "closes": l.closes, "gap": l.gap} for l in an.loops]


def _matrix_dict(an: Analysis):
    tm = an.matrices
    return {"elements": [{"name": e.name, "kind": e.kind, "tail": e.tail, "head": e.head, "subject": e.subject}
                         for e in an.extended.elements],
            "nodes": list(tm.nodes), "branches": list(tm.branches), "chords": list(tm.chords),
            "incidence": tm.A.toarray().tolist(), "cutset": tm.cutset.toarray().tolist(),
            "circuit": tm.B.toarray().tolist(),
            "columns": list(tm.columns)}


# ---------------------------------------------------------------- JSON

def _contact_rows(an: Analysis) -> list[dict]:
    """Contacts of a CAD assembly, each with the joint its part pair gives (SI units)."""
    a = an.assembly
    joint_of = {frozenset((j.reference, j.secondary)): j for j in a.joints}
    rows = []
    for c in getattr(a, "contacts", ()):
        j = joint_of.get(frozenset((c.part_a, c.part_b)))
        rows.append({"parts": [c.part_a, c.part_b], "kind": c.kind, "faces": list(c.faces),
                     "radii": list(c.radii), "clearance": c.clearance, "point": c.point.tolist(),
                     "axis": c.axis.tolist(), "area": c.area,
                     "joint": j.name if j else None, "joint_type": j.type if j else None})
    return rows


def render_json(obj, matrices: bool = False, composite_names: Mapping[str, str] | None = None) -> dict:
    """The report as a JSON-serialisable dict (keys in the module docstring)."""
    an = analysis_of(obj, composite_names)
    a = an.assembly
    out = {
        "assembly": {"name": a.name, "file": a.source_file, "total_mass": a.total_mass,
                     "gravity": a.gravity.tolist()},
        "bodies": _body_rows(an),
        "joints": _joint_rows(_declared(an)),
        "implicit_joints": _joint_rows(_implicit(an)),
        "composites": [list(c.members) for c in an.composites],
        "composite_bodies": _composite_rows(an),
        "joints_before_removal": _reduced_rows(an.joints_before, _implicit_names(an)),
        "reduced_joints": _reduced_rows(an.reduced_joints, _implicit_names(an)),
        "removed_joints": _removed_rows(an),
        "loops": _loop_rows(an),
        "dof": int(an.dof),
        "dof_details": {"joint_freedoms": int(an.freedoms), "closure_rank": int(an.closure_rank),
                        "couplings": len(an.assembly.couplings)},
        "errors": [{"code": i.code, "message": i.message, "subjects": list(i.subjects)} for i in an.errors],
        "warnings": [{"code": i.code, "message": i.message, "subjects": list(i.subjects)} for i in an.warnings],
        "graph": {"extended": an.extended.counts(), "reduced": an.reduced.counts()},
    }
    if getattr(an.assembly, "contacts", ()) or str(an.assembly.source_file or "").lower().endswith((".step", ".stp")):
        out["contacts"] = _contact_rows(an)
    if matrices:
        out["matrices"] = _matrix_dict(an)
    return out


# ---------------------------------------------------------------- tables

def sections(an: Analysis):
    """(title, header, rows, note) per table, shared by text and markdown."""
    secs = []
    secs.append(("Bodies", ["body", "mass [kg]", "com [m]", "inertia about com [kg m^2] (ixx iyy izz ixy ixz iyz)"],
                 [[r["name"], _g(r["mass"]), _vec(r["com"]), _vec(r["inertia"])] for r in _body_rows(an)],
                 "com in the assembly frame; inertia along the assembly axes"))
    if getattr(an.assembly, "contacts", ()):
        secs.append(("Contacts (CAD mating geometry)",
                     ["parts", "kind", "radii [m]", "clearance [m]", "axis / normal", "joint of the pair"],
                     [[" - ".join(r["parts"]), r["kind"], _vec(r["radii"]) if r["kind"] != "planar" else "",
                       _g(r["clearance"]), _vec(r["axis"]), f"{r['joint']} ({r['joint_type']})"]
                      for r in _contact_rows(an)],
                     "clearance: radial for fits, plane distance for planar contacts"))
    implicit = _implicit_names(an)
    before = [j for j in _in_file_order(an, an.joints_before) if not _is_implicit(j, implicit)]
    reduced = [j for j in _in_file_order(an, an.reduced_joints) if not _is_implicit(j, implicit)]
    note = "; ".join(x for x in (_actuated_note(_declared(an), before, reduced), _implicit_note(an)) if x)
    secs.append(("Table 1: kinematic description", ["joint", "type", "reference body", "secondary body"],
                 [[j.name, _type(j.type, j.actuated), j.reference, j.secondary] for j in _declared(an)],
                 note))
    secs.append(("Table 2: composite bodies", ["body", "components", "mass [kg]", "com [m]",
                                                "inertia about com [kg m^2]"],
                 [[c.name + (" (grounded)" if c.grounded else ""), ", ".join(c.members), _g(c.mass.mass),
                   _vec(c.mass.com), _vec(_inertia6(c.mass.inertia))] for c in an.fixed_composites],
                 "composites over fixed joints; mass properties in the assembly frame"))
    if [set(c.members) for c in an.composites] != [set(c.members) for c in an.fixed_composites]:
        secs.append(("Composite bodies after locked pairs merged", ["body", "components", "mass [kg]", "com [m]",
                                                                     "inertia about com [kg m^2]"],
                     [[c.name + (" (grounded)" if c.grounded else ""), ", ".join(c.members), _g(c.mass.mass),
                       _vec(c.mass.com), _vec(_inertia6(c.mass.inertia))] for c in an.composites], ""))
    secs.append(("Table 3: kinematic description for the composite bodies (before removing redundant joints)",
                 ["type", "reference body", "secondary body", "joint"],
                 [[_type(j.type, j.actuated), j.reference, j.secondary, j.name] for j in before], note))
    secs.append(("Removed joints", ["joint", "type", "between", "kind", "reason"],
                 [[r.name, _type(r.type, r.actuated), f"{r.reference} - {r.secondary}", r.kind, r.reason]
                  for r in an.removed_joints], "" if an.removed_joints else "none"))
    secs.append(("Reduced joints", ["type", "reference body", "secondary body", "joint"],
                 [[_type(j.type, j.actuated), j.reference, j.secondary, j.name] for j in reduced], note))
    secs.append(("Loops", ["loop", "joints", "equations", "rank", "mobility", "redundant", "classification",
                           "closes"],
                 [[l.name, " - ".join(l.joints), str(l.n_equations), str(l.rank), str(l.mobility),
                   str(l.redundant_constraints), l.kind, "yes" if l.closes else f"NO (gap {_g(l.gap)} m)"]
                  for l in an.loops], "" if an.loops else "none: the reduced joint graph is a tree"))
    return secs


def _text_table(header, rows) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header).rstrip(), fmt.format(*["-" * w for w in widths]).rstrip()]
    lines += [fmt.format(*map(str, r)).rstrip() for r in rows]
    return "\n".join(lines)


def _matrix_text(name: str, M, rows, cols) -> str:
    M = M.toarray()
    w = max([len(str(c)) for c in cols] + [2])
    rw = max([len(str(r)) for r in rows] + [1])
    lines = [f"{name} ({M.shape[0]} x {M.shape[1]})",
             " " * rw + "  " + " ".join(f"{c:>{w}}" for c in cols)]
    for r, row in zip(rows, M):
        lines.append(f"{r:<{rw}}  " + " ".join(f"{('.' if v == 0 else str(v)):>{w}}" for v in row))
    return "\n".join(lines)


def _matrices_text(an: Analysis) -> str:
    tm = an.matrices
    parts = ["Elements of the extended system graph",
             _text_table(["element", "kind", "tail", "head", "of"],
                         [[e.name, e.kind, e.tail, e.head, e.subject] for e in an.extended.elements]),
             "",
             f"Spanning tree (minimum cost): {len(tm.branches)} branches; chords: {', '.join(tm.chords)}",
             "",
             _matrix_text("Incidence matrix A = [A_T A_C] (Eq. 1)", tm.A_ordered(), tm.nodes, tm.columns),
             "",
             _matrix_text("Cut-set matrix [U_T A_T^-1 A_C] (Eq. 2)", tm.cutset, tm.branches, tm.columns),
             "",
             _matrix_text("Circuit matrix B = [B_T U_C], B_T = -A_C^T A_T^-T (Eqs. 3-4)", tm.B, tm.chords,
                          tm.columns)]
    return "\n".join(parts)


def summary_lines(an: Analysis) -> list[str]:
    a = an.assembly
    ext, red = an.extended.counts(), an.reduced.counts()
    return [f"Assembly {a.name}" + (f" ({a.source_file})" if a.source_file else ""),
            f"{plural(len(a.bodies), 'body')}, {plural(len(_declared(an)), 'joint')}"
            + (f" (+{len(_implicit(an))} implicit)" if _implicit(an) else "")
            + f", total mass {_g(a.total_mass)} kg",
            f"extended graph: {plural(len(an.extended.nodes), 'node')}, {plural(len(an.extended.elements), 'element')} "
            f"({', '.join(plural(v, k) for k, v in ext.items())})",
            f"reduced graph: {plural(len(an.reduced.nodes), 'node')}, {plural(len(an.reduced.elements), 'element')} "
            f"({', '.join(plural(v, k) for k, v in red.items())})"]


def render_text(obj, matrices: bool = False, composite_names: Mapping[str, str] | None = None) -> str:
    """The report as plain text (ends with a newline)."""
    an = analysis_of(obj, composite_names)
    out = summary_lines(an) + [""]
    for title, header, rows, note in sections(an):
        out.append(title)
        if rows:
            out.append(_text_table(header, rows))
        if note:
            out.append(f"({note})")
        out.append("")
    out.append(f"Degrees of freedom: {an.dof} ({an.freedoms} joint freedoms - closure rank {an.closure_rank}"
               f"{_couplings_term(an)})")
    for i in an.issues:
        out.append(str(i))
    if matrices:
        out += ["", _matrices_text(an)]
    return "\n".join(out) + "\n"


def _md_cell(x) -> str:
    return str(x).replace("|", "\\|").replace("*", "\\*")


def render_markdown(obj, matrices: bool = False, composite_names: Mapping[str, str] | None = None) -> str:
    """The report as markdown (ends with a newline)."""
    an = analysis_of(obj, composite_names)
    s = summary_lines(an)
    out = [f"# {s[0]}", "", *[f"- {x}" for x in s[1:]], ""]
    for title, header, rows, note in sections(an):
        out += [f"## {title}", ""]
        if rows:
            out.append("| " + " | ".join(header) + " |")
            out.append("|" + "---|" * len(header))
            out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
            out.append("")
        if note:
            out += [f"_{note}_".replace("* actuated", "\\* actuated"), ""]
    out += ["## Degrees of freedom", "",
            f"**{an.dof}** ({an.freedoms} joint freedoms - closure rank {an.closure_rank}{_couplings_term(an)})", ""]
    if an.issues:
        out += ["## Errors and warnings", ""] + [f"- **{i.severity}** ({i.code}): {i.message}" for i in an.issues]
        out.append("")
    if matrices:
        out += ["## Matrices", "", "```", _matrices_text(an), "```", ""]
    return "\n".join(out)


def _couplings_term(an) -> str:
    n = len(an.assembly.couplings)
    return f" - {n} joint coupling{'s' if n != 1 else ''}" if n else ""
