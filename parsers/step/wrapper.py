"""The native YAML format with ``assembly: file.step``: bodies from a CAD assembly, with overrides.

Example (docs/assembly-format.md, "STEP assemblies")::

    format: mbcompose-assembly/1
    name: seeker
    assembly: seeker.step            # relative to this file
    units: {length: mm, angle: deg}  # of gravity and of the declared joints below
    gravity: [0, 0, -9810]
    base: fixed
    ground: [housing]                # default: the first part of the tree
    mating: {contact_tol: 0.01, angle_tol: 0.001, max_clearance: 0.5, planar_contacts: fixed}
    parts:                           # part name or glob pattern -> overrides
      "pitch_connector_*": {density: 2700}
      housing: {material: aluminium, name: frame}
    density: 1240                    # kg/m^3 of every other part (wins over the file's materials)
    joint_names: {pitch_a: [pitch_connector_a, gimbal_ring]}
    actuated: [pitch_a]              # joint names
    passive: ["*"]                   # joint names or patterns not actuated (servos used as encoders)
    joints:                          # declared joints, one line each (issue 24's syntax)
      - {between: ["Base*", "Shoulder*"], type: revolute}    # axis and origin from the contact
      - {between: [rod, cylinder], type: prismatic, name: stroke, axis: [0, 0, 1], origin: [0, 0, 10]}
    rigid: [["Servo1*", "Bracket1*"]]  # groups welded whatever the geometry
    ignore: ["*thread*", "Sketch*"]    # parts dropped before inference

``mating`` lengths are in the STEP file's unit.  Names and globs (fnmatch, case-sensitive) match a
part's name or its '/'-joined instance path.  ``between`` joins the rigid groups of the parts each
side matches; its axis and origin (in ``units``) come from the groups' cylindrical, spherical or
planar contact unless given; it replaces whatever inference found between the same groups.  A
``joints`` entry without ``between`` is a joint of the YAML format's own syntax (``reference``,
``secondary``, by part name).  A pattern that matches nothing, a ``between`` whose groups do not
touch (and no ``axis``/``origin``), or an ambiguous contact is an error at its line.
"""

from __future__ import annotations

import fnmatch
from dataclasses import replace
from pathlib import Path

import numpy as np

from mbcompose.dynamics.joints import JOINTS

from ..assembly import Assembly
from ..errors import InputError, did_you_mean
from ..yaml.document import Node
from .inference import Declared

CAD_KEYS = ("format", "name", "assembly", "units", "gravity", "base", "ground", "mating", "materials", "parts",
            "density", "joint_names", "actuated", "passive", "joints", "rigid", "ignore")
BETWEEN_KEYS = ("between", "type", "name", "axis", "origin", "actuated")
#: joint types a ``between`` line may declare (the others need more than an axis and a point)
BETWEEN_TYPES = tuple(t for t, facts in JOINTS.items() if not facts.has_axis2 and facts.nv < 6)
MATING_KEYS = ("contact_tol", "angle_tol", "max_clearance", "planar_contacts")
#: the STEP reader's option (InputError.key) -> the key of this file that gave it
OPTION_KEYS = {"mating": "mating", "names": "parts", "ground": "ground", "base": "base",
               "joint_names": "joint_names", "actuated": "actuated", "passive": "passive", "ignore": "ignore"}


def _parts(node: Node | None, materials: dict[str, float]) -> tuple[dict, dict]:
    """(densities by name or pattern, renames) from the ``parts`` mapping."""
    densities, names = {}, {}
    if node is None:
        return densities, names
    for key, part in node.mapping("a mapping part name or pattern -> overrides").items():
        part.check_keys(("density", "material", "name"))
        if part.get("density") is not None and part.get("material") is not None:
            raise part.error("give either 'density' or 'material', not both")
        if part.get("density") is not None:
            densities[key] = part.get("density").number(positive=True)
        if part.get("material") is not None:
            m = part.get("material")
            if m.string() not in materials:
                raise m.error(f"unknown material '{m.string()}' (known: {', '.join(sorted(materials))})")
            densities[key] = materials[m.string()]
        if part.get("name") is not None:
            names[key] = part.get("name").string()
    return densities, names


def read_cad_yaml(root: Node, path: Path, materials: dict[str, float], units, joint_reader) -> Assembly:
    """Read the YAML wrapper of a STEP assembly (see the module docstring).

    joint_reader : ``f(node, units, body_names) -> Joint``, the YAML format's joint parser.
    """
    from .reader import read_step
    root.check_keys(CAD_KEYS)
    step_node = root.require("assembly")
    step = (path.parent / step_node.string()).resolve()
    if not step.exists():
        raise step_node.error(f"STEP file not found: {step_node.string()}")
    if root.get("materials") is not None:
        for key, value in root.get("materials").mapping().items():
            materials[key] = value.number(positive=True)
    densities, names = _parts(root.get("parts"), materials)
    options: dict = {"densities": densities, "names": names}
    if root.get("density") is not None:        # kg/m^3 of every part that 'parts' does not name
        options["density"] = root.get("density").number(positive=True)
    mating = root.get("mating")
    if mating is not None:
        mating.check_keys(MATING_KEYS)
        for key in MATING_KEYS:
            if mating.get(key) is not None:
                options[key] = (mating.get(key).string() if key == "planar_contacts"
                                else mating.get(key).number(positive=True))
    if root.get("ground") is not None:
        g = root.get("ground")
        options["ground"] = [n.string() for n in g.sequence()] if isinstance(g.value, list) else g.string()
    if root.get("base") is not None:
        options["base"] = root.get("base").string()
    if root.get("joint_names") is not None:
        options["joint_names"] = {k: [p.string() for p in v.sequence("a pair of part names")]
                                  for k, v in root.get("joint_names").mapping().items()}
    if root.get("actuated") is not None:
        options["actuated"] = [n.string() for n in root.get("actuated").sequence("a list of joint names")]
    if root.get("passive") is not None:       # servos used as encoders: joint names or patterns, not actuated
        options["passive"] = [n.string() for n in root.get("passive").sequence("a list of joint names or patterns")]
    joint_nodes = root.get("joints").sequence("a list of joints") if root.get("joints") is not None else []
    between = [n for n in joint_nodes if n.is_mapping() and n.get("between") is not None]
    own = [n for n in joint_nodes if n not in between]
    options["joints"] = lambda parts: [joint_reader(n, units, set(parts)) for n in own]
    options.update(_declarations(root, between, units))
    gravity = np.array(root.get("gravity").vector(3)) * units.length if root.get("gravity") is not None \
        else np.array([0.0, 0.0, -9.81])
    name = root.get("name").string() if root.get("name") is not None else path.stem
    try:
        assembly = read_step(step, name=name, gravity=gravity, **options)
    except InputError as e:       # an option of this file: point at its key here, not at the STEP file
        node = root.get(OPTION_KEYS.get(e.key, "")) if e.key else None
        if node is None:
            raise
        raise node.error(e.message) from None
    return replace(assembly, value_units=units.values())    # joint values in this file's units:, as its joints


def matching(pattern: str, parts: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    """Names of the parts whose name, or '/'-joined instance path, is ``pattern`` or matches it as a glob."""
    exact = [n for n, _ in parts if n == pattern]
    if exact:
        return exact
    return [n for n, path in parts if fnmatch.fnmatchcase(n, pattern) or fnmatch.fnmatchcase("/".join(path), pattern)]


def _resolve(node: Node, parts) -> list[str]:
    """Parts a name or glob node matches; an error at the node (with did-you-mean) when none."""
    pattern = node.string()
    found = matching(pattern, parts)
    if not found:
        raise node.error(f"no part matches {pattern!r}{did_you_mean(pattern, sorted(n for n, _ in parts))}")
    return found


def _patterns(node: Node, what: str) -> list[Node]:
    """A name or glob, or a list of them."""
    return node.sequence(what) if isinstance(node.value, list) else [node]


def _declarations(root: Node, between: list[Node], units) -> dict:
    """read_step's ``ignore`` and ``declare`` options from the ``ignore``, ``rigid`` and ``between`` entries."""
    out: dict = {}
    ignore = root.get("ignore")
    if ignore is not None:
        patterns = ignore.sequence("a list of part names or glob patterns")
        out["ignore"] = lambda parts: {n for p in patterns for n in _resolve(p, parts)}
    rigid = root.get("rigid")
    groups = rigid.sequence("a list of groups (lists of part names or glob patterns)") if rigid is not None else []
    for n in between:
        n.check_keys(BETWEEN_KEYS)

    def declare(parts):
        welded = []
        for g in groups:
            names = list(dict.fromkeys(x for p in _patterns(g, "a list of part names or glob patterns")
                                       for x in _resolve(p, parts)))
            welded.append((names, f"declared rigid (line {g.line})"))
        return welded, [_between(n, parts, units) for n in between]
    out["declare"] = declare
    return out


def _between(node: Node, parts, units) -> Declared:
    """A ``between`` joint line: its two sides resolved, type checked, axis and origin (mm) if given."""
    sides = node.get("between").sequence("a pair [side, side] of part names or glob patterns")
    if len(sides) != 2:
        raise node.get("between").error(f"expected two sides, got {len(sides)}")
    a, b = ([x for p in _patterns(side, "part names or glob patterns") for x in _resolve(p, parts)] for side in sides)
    if set(a) & set(b):
        raise node.get("between").error(f"part {sorted(set(a) & set(b))[0]} is on both sides")
    type_node = node.require("type", "one of " + ", ".join(BETWEEN_TYPES))
    jtype = type_node.string()
    if jtype not in BETWEEN_TYPES:
        raise type_node.error(f"unknown joint type '{jtype}'{did_you_mean(jtype, BETWEEN_TYPES)} "
                              f"(expected one of: {', '.join(BETWEEN_TYPES)})")
    axis = None
    if node.get("axis") is not None:
        axis = np.array(node.get("axis").vector(3))
        if not np.linalg.norm(axis) > 0:
            raise node.get("axis").error("the axis must not be zero")
        axis = axis / np.linalg.norm(axis)
    origin = np.array(node.get("origin").vector(3)) * units.length * 1e3 if node.get("origin") is not None else None
    name = node.get("name").string() if node.get("name") is not None else None
    actuated = node.get("actuated").boolean() if node.get("actuated") is not None else False
    if jtype == "fixed" and actuated:
        raise node.error("a fixed joint cannot be actuated")
    return Declared(jtype, tuple(dict.fromkeys(a)), tuple(dict.fromkeys(b)), name, axis, origin, actuated,
                    error=node.error)
