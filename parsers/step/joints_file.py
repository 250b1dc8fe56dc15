"""The joints a STEP assembly was given, written back in the wrapper's one-line syntax (``inspect --write-joints``).

The file holds the ``assembly:`` line, the rigid groups (``rigid:``, one line per group of two or more
parts, the evidence of each part as a comment) and one ``between`` line per joint between groups with
its type, name, axis and origin (metres, the wrapper's default unit) and, as a comment, its evidence
and confidence.  Read back as a wrapper it gives the same model: the same groups and the same joints
(docs/assembly-format.md, "STEP assemblies"); editing a line changes that joint only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mbcompose.dynamics.joints import JOINTS

from ..assembly import GROUND, Assembly, Joint
from .inference import RIGID_NOTE


def _name(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _vector(v) -> str:
    return "[" + ", ".join(repr(float(x)) for x in v) + "]"


def _is_weld(j: Joint) -> bool:
    return j.type == "fixed" and j.source is not None and j.source.note.startswith(RIGID_NOTE)


def _groups(assembly: Assembly) -> list[tuple[str, list[tuple[str, str]]]]:
    """(first part, [(other part, evidence)]) of every rigid group: the parts joined by welding joints."""
    order = {b.name: k for k, b in enumerate(assembly.bodies)}
    parent = {n: n for n in order}

    def find(n):
        while parent[n] != n:
            n = parent[n]
        return n
    why: dict[str, str] = {}
    for j in assembly.joints:
        if _is_weld(j):
            ra, rb = sorted((find(j.reference), find(j.secondary)), key=order.__getitem__)
            parent[rb] = ra
            note = j.source.note.split(": ", 1)[1] if ": " in j.source.note else j.source.note
            why.setdefault(j.secondary, note.split("; ")[0])
    groups: dict[str, list[tuple[str, str]]] = {}
    for n in sorted(order, key=order.__getitem__):
        if find(n) != n:
            groups.setdefault(find(n), []).append((n, why.get(n, "")))
    return list(groups.items())


def joint_line(j: Joint) -> str:
    """One ``between`` line of a joint, its evidence as a comment."""
    fields = [f"between: [{_name(j.reference)}, {_name(j.secondary)}]", f"type: {j.type}", f"name: {_name(j.name)}"]
    if JOINTS[j.type].has_axis:
        fields.append(f"axis: {_vector(j.axis)}")
    fields.append(f"origin: {_vector(j.origin)}")
    if j.actuated:
        fields.append("actuated: true")
    note = (j.source.note if j.source is not None else "").replace("\n", " ")
    return "  - {" + ", ".join(fields) + "}" + (f"   # {note}" if note else "")


def joints_yaml(assembly: Assembly, step_file, out_file) -> str:
    """The wrapper text (see the module docstring); ``step_file`` relative to ``out_file``'s folder."""
    step, out = Path(step_file).resolve(), Path(out_file).resolve()
    try:
        where = os.path.relpath(step, out.parent)
    except ValueError:                       # another drive
        where = str(step)
    lines = [f"# joints of {step.name} as mbcompose inferred them; edit a line to change that joint",
             "# (docs/assembly-format.md, 'STEP assemblies'); lengths in metres, assembly frame",
             f"assembly: {_name(where)}"]
    groups = _groups(assembly)
    if groups:
        lines.append("rigid:")
        for first, members in groups:
            parts = ", ".join(_name(p) for p in [first] + [m for m, _ in members])
            why = "; ".join(f"{m}: {w}" for m, w in members)
            lines.append(f"  - [{parts}]   # {why}")
    joints = [j for j in assembly.joints if not j.implicit and not _is_weld(j)
              and GROUND not in (j.reference, j.secondary)]       # a joint to the world is no 'between'
    if len(joints) + sum(1 for j in assembly.joints if _is_weld(j) or j.implicit) < len(assembly.joints):
        lines.append("# joints to the world of the original wrapper are not written: copy them from it")
    lines.append("joints:" if joints else "joints: []")
    lines += [joint_line(j) for j in joints]
    return "\n".join(lines) + "\n"


def write_joints(assembly: Assembly, out_file) -> Path:
    """Write :func:`joints_yaml` of a STEP assembly (its ``source_file``) to ``out_file``."""
    out = Path(out_file)
    text = joints_yaml(assembly, assembly.source_file, out)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.part")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out
