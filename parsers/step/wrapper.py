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
    joints: []                       # declared joints (the YAML joint syntax), by part name

``mating`` lengths are in the STEP file's unit.  Declared joints replace the
joint the contacts of their pair would give.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..assembly import Assembly
from ..errors import InputError
from ..yaml.document import Node

CAD_KEYS = ("format", "name", "assembly", "units", "gravity", "base", "ground", "mating", "materials", "parts",
            "density", "joint_names", "actuated", "joints")
MATING_KEYS = ("contact_tol", "angle_tol", "max_clearance", "planar_contacts")
#: the STEP reader's option (InputError.key) -> the key of this file that gave it
OPTION_KEYS = {"mating": "mating", "names": "parts", "ground": "ground", "base": "base",
               "joint_names": "joint_names", "actuated": "actuated"}


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
    joint_nodes = root.get("joints").sequence("a list of joints") if root.get("joints") is not None else []
    options["joints"] = lambda parts: [joint_reader(n, units, set(parts)) for n in joint_nodes]
    gravity = np.array(root.get("gravity").vector(3)) * units.length if root.get("gravity") is not None \
        else np.array([0.0, 0.0, -9.81])
    name = root.get("name").string() if root.get("name") is not None else path.stem
    try:
        return read_step(step, name=name, gravity=gravity, **options)
    except InputError as e:       # an option of this file: point at its key here, not at the STEP file
        node = root.get(OPTION_KEYS.get(e.key, "")) if e.key else None
        if node is None:
            raise
        raise node.error(e.message) from None
