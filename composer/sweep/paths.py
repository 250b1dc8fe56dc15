"""Parameter paths of a sweep: where a swept value goes, checked and applied.

A path names a value in the native YAML assembly or in the pipeline's
``options`` (docs/pipeline-format.md, section *sweep*)::

    bodies.camera.mass               # the body's mass; its density scaled uniformly
    bodies.camera.pose.xyz[0]        # any key of a body, joint or frame entry
    joints.pitch_a.origin[2]         # list entries by index
    materials.aluminium.density      # a material's density (kg/m^3)
    gravity[2]
    options.redundant_joints         # a pipeline option (also options.tolerances.rank)

List entries of ``bodies``, ``joints`` and ``frames`` are chosen by their
``name`` (or by index, ``bodies[2]``).  Values in the assembly are in the
file's units, as if written there.  A path is checked against the input when
the sweep config is loaded: unknown names and keys are :class:`InputError` with
a "did you mean".  Applying a value copies only the nodes along its path; the
replaced node carries the sweep file's line, so an unacceptable value (a
negative mass) is reported where it was swept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from mbcompose.parsers.assembly import Assembly
from mbcompose.parsers.errors import InputError, did_you_mean
from mbcompose.parsers.yaml.document import Node
from mbcompose.parsers.yaml.format import BODY_KEYS, JOINT_KEYS, MASS_UNITS, MATERIALS

#: top-level assembly keys a sweep may address, and the keys of their entries.
ENTRY_KEYS = {"bodies": BODY_KEYS + ("mass",), "joints": JOINT_KEYS, "frames": ("name", "body", "pose")}
TOP_KEYS = ("bodies", "joints", "frames", "materials", "gravity", "base", "options")
#: keys of nested mappings, for "did you mean" when the key is not in the file yet.
NESTED_KEYS = {"pose": ("xyz", "rpy", "quat"), "inertial": ("mass", "com", "inertia"),
               "limits": ("lower", "upper", "velocity", "effort"),
               "motor": ("name", "max_effort", "gear_ratio", "rotor_inertia"),
               "inertia": ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
#: three-vectors created as [0, 0, 0] when a path indexes one the file leaves out.
ZERO_VECTORS = ("origin", "xyz", "rpy", "com", "secondary_origin")
OPTION_KEYS = ("lumping", "redundant_joints", "loops", "base", "tolerances.rank", "tolerances.closure")

_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]|(\.)")


@dataclass(frozen=True)
class ParamPath:
    """One checked path.

    text : as written.  tokens : keys (str) and list indices (int).
    target : 'assembly' (a YAML node), 'mass' (a body's total mass, derived),
        or 'options' (a pipeline option).
    file, line : where the path was written (errors about swept values point here).
    """

    text: str
    tokens: tuple
    target: str
    file: str | None = None
    line: int | None = None

    def error(self, message: str) -> InputError:
        return InputError(message, file=self.file, line=self.line, key=self.text)


def split_path(text: str) -> tuple:
    """``'joints.pitch_a.origin[2]'`` -> ``('joints', 'pitch_a', 'origin', 2)``; ValueError if malformed."""
    tokens, pos, expect_key = [], 0, True
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or (m.group(3) and expect_key) or (m.group(1) and not expect_key):
            raise ValueError(f"malformed parameter path '{text}' at character {pos + 1}")
        if m.group(1):
            tokens.append(m.group(1))
        elif m.group(2):
            tokens.append(int(m.group(2)))
        expect_key = bool(m.group(3))
        pos = m.end()
    if not tokens or expect_key or not isinstance(tokens[0], str):
        raise ValueError(f"malformed parameter path '{text}'")
    return tuple(tokens)


def parse_path(node: Node, document: Node | None) -> ParamPath:
    """Check the path written at ``node`` against the input's parsed YAML ``document``.

    ``document`` is None for inputs that are not native YAML: then only
    ``options.*`` paths are allowed.
    """
    text = node.string()
    try:
        tokens = split_path(text)
    except ValueError as exc:
        raise node.error(str(exc)) from None
    path = ParamPath(text, tokens, "assembly", node.file, node.line)
    if tokens[0] not in TOP_KEYS:
        hint = did_you_mean(tokens[0], TOP_KEYS, list_choices=True)
        raise path.error(f"unknown parameter path start '{tokens[0]}'{hint}")
    if tokens[0] == "options":
        option = ".".join(str(t) for t in tokens[1:])
        if option not in OPTION_KEYS:
            hint = did_you_mean(option, OPTION_KEYS, list_choices=True)
            raise path.error(f"unknown pipeline option '{option}'{hint}")
        return replace(path, target="options")
    if document is None:
        raise path.error("paths into the assembly need a native YAML input (.yaml); "
                         "other inputs take 'options.*' paths only")
    if tokens[0] == "materials":
        return _material_path(path, document)
    if tokens[0] in ENTRY_KEYS:
        _check_entry_path(path, document)
        if tokens[0] == "bodies" and tokens[2] == "mass":
            if len(tokens) != 3:
                raise path.error("'mass' of a body is a number; nothing goes below it")
            return replace(path, target="mass")
        return path
    if document.get(tokens[0]) is None and len(tokens) > 1:
        raise path.error(f"'{tokens[0]}' is not in the input, so it cannot be indexed; sweep '{tokens[0]}' whole")
    _check_nested(path, document.get(tokens[0]), 1)
    return path


def _material_path(path: ParamPath, document: Node) -> ParamPath:
    tokens = path.tokens
    known = dict(MATERIALS)
    if document.get("materials") is not None:
        known.update(document.get("materials").mapping())
    if len(tokens) < 2 or not isinstance(tokens[1], str):
        raise path.error("expected materials.NAME.density")
    if tokens[1] not in known:
        raise path.error(f"unknown material '{tokens[1]}'{did_you_mean(tokens[1], sorted(known), list_choices=True)}")
    if tokens[2:] not in ((), ("density",)):
        raise path.error(f"a material has only a density: write materials.{tokens[1]}.density")
    return replace(path, tokens=("materials", tokens[1]))


def _entry_index(path: ParamPath, entries: list[Node], token) -> int:
    names = [e.get("name").value if e.is_mapping() and e.get("name") is not None else None for e in entries]
    if isinstance(token, int):
        if token >= len(entries):
            raise path.error(f"index {token} is out of range: {path.tokens[0]} has {len(entries)} entries")
        return token
    if token not in names:
        raise path.error(f"no entry '{token}' in {path.tokens[0]}"
                         f"{did_you_mean(token, [n for n in names if n is not None], list_choices=True)}")
    return names.index(token)


def _check_entry_path(path: ParamPath, document: Node) -> None:
    kind = path.tokens[0]
    if document.get(kind) is None or len(path.tokens) < 3:
        raise path.error(f"expected {kind}.NAME.KEY" if document.get(kind) is not None
                         else f"the input has no '{kind}'")
    entries = document.get(kind).sequence()
    entry = entries[_entry_index(path, entries, path.tokens[1])]
    key = path.tokens[2]
    if not isinstance(key, str) or key not in ENTRY_KEYS[kind]:
        hint = did_you_mean(key, ENTRY_KEYS[kind], list_choices=True)
        raise path.error(f"unknown key '{key}' of an entry of {kind}{hint}")
    if key == "name":
        raise path.error("names cannot be swept (other entries refer to them)")
    if key != "mass":
        _check_nested(path, entry.get(key), 3)


def _check_nested(path: ParamPath, node: Node | None, i: int) -> None:
    """Walk tokens[i:] from ``node`` (the value at tokens[i - 1], None if the input leaves it out).

    A key must be in the input or be a known key of its mapping (then it is
    created); an index must be in range, or address a three-vector the input
    leaves out (created as zeros).
    """
    tokens = path.tokens
    for j in range(i, len(tokens)):
        token, parent = tokens[j], str(tokens[j - 1])
        if node is None:
            known = NESTED_KEYS.get(parent, ())
            creatable = (token in known if isinstance(token, str)
                         else parent in ZERO_VECTORS and token < 3 and j == len(tokens) - 1)
            if not creatable:
                hint = did_you_mean(token, known, list_choices=True) if isinstance(token, str) and known else ""
                raise path.error(f"'{parent}' is not in the input, so '{token}' below it cannot be set{hint}")
            continue
        if isinstance(token, int):
            items = node.sequence(f"a list to index with [{token}]")
            if token >= len(items):
                raise path.error(f"index {token} is out of range: the list has {len(items)} items")
            node = items[token]
            continue
        if not node.is_mapping():
            raise path.error(f"'{parent}' is not a mapping, so it has no key '{token}'")
        allowed = set(node.mapping()) | set(NESTED_KEYS.get(parent, ()))
        if token not in allowed:
            raise path.error(f"unknown key '{token}'{did_you_mean(token, sorted(allowed), list_choices=True)}")
        node = node.get(token)


# ---------------------------------------------------------------- applying values

def value_node(value, file, line, key: str) -> Node:
    """A plain value wrapped as a :class:`Node` located at the sweep file's line."""
    if isinstance(value, dict):
        return Node({k: value_node(v, file, line, f"{key}.{k}") for k, v in value.items()}, file, line, key)
    if isinstance(value, (list, tuple)):
        return Node([value_node(v, file, line, f"{key}[{i}]") for i, v in enumerate(value)], file, line, key)
    return Node(value, file, line, key)


def _with_value(node: Node | None, tokens: tuple, new: Node, key_path: str) -> Node:
    """A copy of ``node`` with the value at ``tokens`` replaced.

    Only the nodes on the path are copied; the copies are located at the
    sweep's line (a check that fails on them, e.g. lower limit above upper,
    is caused by the swept value) and keep their key path in the input.
    """
    if not tokens:
        return new
    token, rest = tokens[0], tokens[1:]
    path = node.path if node is not None else key_path
    if isinstance(token, int):
        items = list(node.value) if node is not None else [Node(0.0, new.file, new.line, f"{path}[{i}]")
                                                          for i in range(3)]
        items[token] = _with_value(items[token], rest, new, f"{path}[{token}]")
        return Node(items, new.file, new.line, path)
    mapping = dict(node.value) if node is not None else {}
    mapping[token] = _with_value(mapping.get(token), rest, new, f"{path}.{token}" if path else token)
    return Node(mapping, new.file, new.line, path)


def set_in_document(document: Node, path: ParamPath, value) -> Node:
    """The document with ``value`` at ``path`` (target 'assembly'); the input document is not changed."""
    tokens = path.tokens
    if tokens[0] in ENTRY_KEYS:
        entries = document.get(tokens[0]).value
        index = _entry_index(path, entries, tokens[1])
        tokens = (tokens[0], index) + tokens[2:]
    new = value_node(value, path.file, path.line, path.text)
    return _with_value(document, tokens, new, "")


def with_body_mass(assembly: Assembly, path: ParamPath, value, document: Node) -> Assembly:
    """The assembly with body ``path.tokens[1]``'s mass set to ``value`` (the file's mass unit).

    The density is scaled uniformly: the centre of mass stays, the inertia
    scales with the mass.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise path.error(f"must be > 0, got {value!r}")
    units = document.get("units")
    unit = units.get("mass").value if units is not None and units.get("mass") is not None else "kg"
    mass = float(value) * MASS_UNITS[unit]
    entry = document.get("bodies").value[_entry_index(path, document.get("bodies").value, path.tokens[1])]
    name = entry.get("name").value
    bodies = []
    for b in assembly.bodies:
        if b.name == name:
            scale = mass / b.mass.mass
            props = replace(b.mass, mass=mass, inertia=b.mass.inertia * scale)
            b = replace(b, mass=props)
        bodies.append(b)
    return replace(assembly, bodies=tuple(bodies))


def with_option(options, path: ParamPath, value):
    """``options`` (a :class:`~composer.config.StageOptions`) with ``path`` ('options.*') set to ``value``."""
    from mbcompose.graph.model import LOOP_POLICIES, REDUNDANT_POLICIES

    field = ".".join(str(t) for t in path.tokens[1:])
    choices = {"redundant_joints": REDUNDANT_POLICIES, "loops": LOOP_POLICIES, "base": ("fixed", "floating")}
    if field in choices:
        if value not in choices[field]:
            raise path.error(f"expected one of: {', '.join(choices[field])}; got {value!r}")
        return replace(options, **{field: value})
    if field == "lumping":
        if not isinstance(value, bool):
            raise path.error(f"expected true or false, got {value!r}")
        return replace(options, lumping=value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise path.error(f"must be > 0, got {value!r}")
    tol = replace(options.tolerances, **{path.tokens[2]: float(value)})
    return replace(options, tolerances=tol)
