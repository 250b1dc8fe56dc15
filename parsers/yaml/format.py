"""Reader of the native YAML assembly format (docs/assembly-format.md).

The reader and the writer of the native format stay side by side, so that every key is read
and written in one place (the round trip).

``read_yaml(path) -> Assembly``: converts units to SI, resolves mesh paths
relative to the file, computes mass properties from geometry through
:mod:`parsers.massprops` where no ``inertial`` is given, and records where
every value came from.  Any problem raises :class:`~parsers.errors.InputError`
with the file, the line and the key path.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from mbcompose.dynamics.joints import JOINTS, joint_types
from mbcompose.dynamics.spatial import quat_to_matrix, rpy_to_matrix
from mbcompose.dynamics.tolerances import DECLARED_GEOMETRY_ATOL, GEOMETRY_ATOL

from ..assembly import (AXIAL_JOINTS, GEOMETRY_ROLES, GROUND, GROUND_WORD, JOINT_TYPES, Assembly, Body, Coupling,
                        DCMotor, Frame, Geometry, Joint, JointForceElement, Limits, MassProperties, Material, Motor,
                        PointLoad, Pose, Source, SpringDamper, Tendon, ValueUnits)
from ..errors import InputError, did_you_mean
from ..exporters import warn_untaken_limits
from ..massprops import INERTIA_RTOL, inertia_problem, shapes_mass_properties
from ..mesh_progress import MeshWork
from .document import Node, load_yaml

LENGTH_UNITS = {"m": 1.0, "cm": 0.01, "mm": 0.001, "in": 0.0254}
MASS_UNITS = {"kg": 1.0, "g": 0.001}
ANGLE_UNITS = {"rad": 1.0, "deg": np.pi / 180.0}

#: built-in materials, density in kg/m^3.
MATERIALS = {
    "steel": 7850.0, "stainless_steel": 8000.0, "aluminium": 2700.0, "aluminum": 2700.0,
    "titanium": 4430.0, "brass": 8500.0, "copper": 8960.0, "abs": 1040.0, "pla": 1240.0,
    "nylon": 1150.0, "carbon_fiber": 1600.0, "glass": 2500.0, "wood": 700.0, "water": 1000.0,
}

TOP_KEYS = ("format", "name", "units", "gravity", "base", "materials", "bodies", "joints", "frames", "forces",
            "couplings")
COUPLING_KEYS = ("joint", "leader", "multiplier", "offset", "higher", "joint_terms", "leader_terms")
#: a shape's optional keys beside its kind and pose (its role and colour)
SHAPE_LOOK_KEYS = ("role", "color")
BODY_KEYS = ("name", "pose", "inertial", "geometry", "density", "material")
JOINT_KEYS = ("name", "type", "reference", "secondary", "origin", "axis", "axis2", "secondary_origin",
              "secondary_axis", "limits", "actuated", "motor", "damping", "armature", "ref")
SHAPE_KINDS = ("box", "cylinder", "sphere", "capsule", "mesh")
SHAPE_PARAMS = {"box": ("size",), "cylinder": ("radius", "length"), "sphere": ("radius",),
                "capsule": ("radius", "length")}
FORMAT_VERSION = "mbcompose-assembly/1"


class _Units:
    def __init__(self, node: Node | None):
        self.length, self.mass, self.angle = 1.0, 1.0, 1.0
        self.names = {"length": "m", "mass": "kg", "angle": "rad"}
        if node is None:
            return
        node.check_keys(("length", "mass", "angle"))
        for key, table in (("length", LENGTH_UNITS), ("mass", MASS_UNITS), ("angle", ANGLE_UNITS)):
            child = node.get(key)
            if child is None:
                continue
            name = child.string()
            if name not in table:
                raise child.error(f"unknown {key} unit '{name}'{did_you_mean(name, table)} (expected one of: {', '.join(table)})")
            setattr(self, key, table[name])
            self.names[key] = name

    def values(self) -> ValueUnits:
        """The units of the joint values a user gives for this file (plain numbers in its length and angle)."""
        return ValueUnits(self.length, self.angle, self.names["length"], self.names["angle"])


def _source(node: Node, note: str = "") -> Source:
    return Source(node.file, node.line, note)


def _pose(node: Node | None, units: _Units) -> Pose:
    if node is None:
        return Pose()
    node.check_keys(("xyz", "rpy", "quat"))
    xyz = np.array(node.require("xyz").vector(3)) * units.length if node.get("xyz") else np.zeros(3)
    if node.get("rpy") is not None and node.get("quat") is not None:
        raise node.error("give either 'rpy' or 'quat', not both")
    R = np.eye(3)
    if node.get("rpy") is not None:
        R = rpy_to_matrix(np.array(node.get("rpy").vector(3)) * units.angle)
    elif node.get("quat") is not None:
        q = np.array(node.get("quat").vector(4))
        if np.linalg.norm(q) < GEOMETRY_ATOL:
            raise node.get("quat").error("quaternion has zero length")
        R = quat_to_matrix(q)
    return Pose(R, xyz)


def _inertia_matrix(node: Node, scale: float) -> np.ndarray:
    if node.is_mapping():
        node.check_keys(("ixx", "iyy", "izz", "ixy", "ixz", "iyz"))
        v = {k: (node.get(k).number() if node.get(k) is not None else 0.0)
             for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
        for k in ("ixx", "iyy", "izz"):
            node.require(k)
        J = np.array([[v["ixx"], v["ixy"], v["ixz"]],
                      [v["ixy"], v["iyy"], v["iyz"]],
                      [v["ixz"], v["iyz"], v["izz"]]])
    else:
        rows = node.sequence("a mapping {ixx, iyy, izz, ixy, ixz, iyz} or a 3x3 list")
        if len(rows) != 3:
            raise node.error(f"expected a 3x3 list, got {len(rows)} rows")
        J = np.array([row.vector(3) for row in rows])
    return J * scale


def _explicit_inertial(node: Node, units: _Units) -> MassProperties:
    node.check_keys(("mass", "com", "inertia"))
    mass = node.require("mass").number(positive=True) * units.mass
    com = np.array(node.get("com").vector(3)) * units.length if node.get("com") is not None else np.zeros(3)
    inertia_node = node.require("inertia")
    J = _inertia_matrix(inertia_node, units.mass * units.length ** 2)
    problem = inertia_problem(J)
    if problem:
        raise inertia_node.error(problem)
    return MassProperties(mass, com, J)


def _shape(node: Node, base_dir: Path, units: _Units) -> Geometry:
    """A shape (:func:`_shape_of`) with its ``role`` (inertial, the default; visual; collision) and
    ``color: {name: NAME, rgba: [r, g, b, a]}`` (name optional)."""
    g = _shape_of(node, base_dir, units)
    role, color = node.get("role"), node.get("color")
    material = None
    if color is not None:
        color.check_keys(("name", "rgba"))
        rgba = color.require("rgba").vector(4)
        try:
            material = Material(color.get("name").string() if color.get("name") is not None else None, rgba)
        except ValueError as exc:
            raise color.error(str(exc)) from None
    if role is not None and role.string() not in GEOMETRY_ROLES:
        raise role.error(f"role must be one of {', '.join(GEOMETRY_ROLES)}, got '{role.string()}'")
    return replace(g, role=role.string() if role is not None else "inertial", material=material)


def _shape_of(node: Node, base_dir: Path, units: _Units) -> Geometry:
    mapping = node.mapping("a shape mapping such as {box: {size: [x, y, z]}}")
    kinds = [k for k in mapping if k in SHAPE_KINDS]
    if len(kinds) != 1:
        raise node.error(f"a shape needs exactly one of: {', '.join(SHAPE_KINDS)}")
    kind = kinds[0]
    pose = _pose(node.get("pose"), units)
    body = node.require(kind)
    if kind == "mesh":
        node.check_keys(("mesh", "pose", "scale", "convex_hull", *SHAPE_LOOK_KEYS))
        rel = body.string()
        path = (base_dir / rel).resolve()
        if not path.exists():
            raise body.error(f"mesh file not found: {rel} (looked in {base_dir})")
        scale_node = node.get("scale")
        if scale_node is None:
            scale = np.ones(3)
        elif isinstance(scale_node.value, list):
            scale = np.array(scale_node.vector(3))
            if np.any(scale <= 0):
                raise scale_node.error("scale factors must be > 0")
        else:
            scale = np.full(3, scale_node.number(positive=True))
        hull = node.get("convex_hull").boolean() if node.get("convex_hull") is not None else False
        return Geometry("mesh", {"scale": scale * units.length, "convex_hull": hull}, pose, str(path))
    node.check_keys((kind, "pose", *SHAPE_LOOK_KEYS))
    body.check_keys(SHAPE_PARAMS[kind])
    params = {}
    for key in SHAPE_PARAMS[kind]:
        value = body.require(key)
        if key == "size":
            size = np.array(value.vector(3))
            if np.any(size <= 0):
                raise value.error(f"box sizes must be > 0, got {size.tolist()}")
            params[key] = size * units.length
        else:
            params[key] = value.number(positive=True) * units.length
    return Geometry(kind, params, pose)


def _density(node: Node, materials: dict[str, float]) -> tuple[float, str]:
    d, m = node.get("density"), node.get("material")
    if d is not None and m is not None:
        raise node.error("give either 'density' or 'material', not both")
    if d is not None:
        rho = d.number(positive=True)
        return rho, f"density {rho:g} kg/m^3"
    if m is not None:
        name = m.string()
        if name not in materials:
            raise m.error(f"unknown material '{name}'{did_you_mean(name, materials)} (known: {', '.join(sorted(materials))})")
        return materials[name], f"{name} ({materials[name]:g} kg/m^3)"
    raise node.error("mass properties need 'inertial', or 'geometry' with 'density' or 'material'")


def _mesh_files(body_nodes, base_dir: Path) -> list[Path]:
    """The mesh files the bodies' shapes name, for the progress of their loading
    (:class:`parsers.mesh_progress.MeshWork`); what is malformed is left to :func:`_shape`."""
    files = []
    for n in body_nodes:
        shapes = n.value.get("geometry") if n.is_mapping() else None
        for s in (shapes.value if shapes is not None and isinstance(shapes.value, list) else ()):
            mesh = s.value.get("mesh") if s.is_mapping() else None
            if mesh is not None and isinstance(mesh.value, str):
                files.append((base_dir / mesh.value).resolve())
    return files


def _body(node: Node, base_dir: Path, units: _Units, materials: dict[str, float]) -> Body:
    node.check_keys(BODY_KEYS)
    name_node = node.require("name")
    name = name_node.string()
    if name in (GROUND, GROUND_WORD):
        raise name_node.error(f"'{name}' is reserved for the fixed world and cannot be declared")
    pose = _pose(node.get("pose"), units)
    shapes = tuple(_shape(s, base_dir, units) for s in node.get("geometry")) if node.get("geometry") else ()
    sources = {"pose": _source(node.get("pose") or name_node)}
    if node.get("inertial") is not None:
        if node.get("density") is not None or node.get("material") is not None:
            raise node.error("'density'/'material' conflict with explicit 'inertial'")
        mass = _explicit_inertial(node.get("inertial"), units)
        sources["mass"] = _source(node.get("inertial"))
    elif any(s.role == "inertial" for s in shapes):
        rho, how = _density(node, materials)
        geometry_node = node.get("geometry")
        try:
            mass = shapes_mass_properties([s for s in shapes if s.role == "inertial"], rho)
        except InputError as exc:
            raise geometry_node.error(f"body '{name}': {exc.message}") from None
        problem = inertia_problem(mass.inertia)
        if problem:
            raise geometry_node.error(f"body '{name}': computed {problem}")
        solids = [s for s in shapes if s.role == "inertial"]
        files = [Path(s.file).name for s in solids if s.kind == "mesh"]
        what = ", ".join(files + [s.kind for s in solids if s.kind != "mesh"])
        hull = " (convex hull)" if any(s.params.get("convex_hull") for s in solids) else ""
        sources["mass"] = _source(geometry_node, f"computed from {what}{hull} at {how}")
    else:
        raise node.error(f"body '{name}' needs 'inertial' or 'geometry' (shapes of role inertial) for its mass "
                         "properties")
    return Body(name, pose, mass, shapes, sources)


def _unit_axis(node: Node) -> np.ndarray:
    axis = np.array(node.vector(3))
    norm = np.linalg.norm(axis)
    if norm < GEOMETRY_ATOL:
        raise node.error("axis has zero length")
    return axis / norm


def _limits(node: Node | None, joint_type: str, units: _Units) -> Limits:
    if node is None:
        return Limits()
    node.check_keys(("lower", "upper", "velocity", "effort"))
    if not JOINTS[joint_type].takes_limits:
        for key in ("lower", "upper"):
            if node.get(key) is not None:
                raise node.get(key).error(f"a {joint_type} joint takes no position limits ('{key}'): only "
                                          f"{', '.join(joint_types(takes_limits=True))} joints do")
    pos_scale = units.length if joint_type == "prismatic" else units.angle
    vals = {}
    for key, scale in (("lower", pos_scale), ("upper", pos_scale), ("velocity", pos_scale), ("effort", 1.0)):
        child = node.get(key)
        vals[key] = None if child is None else child.number(nonnegative=key in ("velocity", "effort")) * scale
    if vals["lower"] is not None and vals["upper"] is not None and vals["lower"] > vals["upper"]:
        raise node.error(f"lower limit {vals['lower']:g} is above upper limit {vals['upper']:g}")
    return Limits(**vals)


def _motor(node: Node, joint_name: str) -> Motor:
    node.check_keys(("name", "max_effort", "gear_ratio", "rotor_inertia"))
    get = node.get
    return Motor(
        name=get("name").string() if get("name") is not None else f"{joint_name}_motor",
        max_effort=get("max_effort").number(positive=True) if get("max_effort") is not None else None,
        gear_ratio=get("gear_ratio").number(positive=True) if get("gear_ratio") is not None else 1.0,
        rotor_inertia=get("rotor_inertia").number(nonnegative=True) if get("rotor_inertia") is not None else 0.0,
    )


def _joint(node: Node, units: _Units, body_names: set[str]) -> Joint:
    node.check_keys(JOINT_KEYS)
    name = node.require("name").string()
    type_node = node.require("type")
    jtype = type_node.string()
    if jtype not in JOINT_TYPES:
        raise type_node.error(f"unknown joint type '{jtype}'{did_you_mean(jtype, JOINT_TYPES)} (expected one of: {', '.join(JOINT_TYPES)})")
    ends = {}
    for key in ("reference", "secondary"):
        end_node = node.require(key, "a body name or 'ground'")
        end = end_node.string()
        end = GROUND if end == GROUND_WORD else end
        if end != GROUND and end not in body_names:
            raise end_node.error(f"unknown body '{end}'{did_you_mean(end, body_names)} in joint '{name}'")
        ends[key] = end
    if ends["reference"] == ends["secondary"]:
        raise node.error(f"joint '{name}' connects body '{ends['reference']}' to itself")
    origin = np.array(node.get("origin").vector(3)) * units.length if node.get("origin") is not None else np.zeros(3)
    axis, axis2 = np.array([0.0, 0.0, 1.0]), None
    if jtype in AXIAL_JOINTS:
        axis = _unit_axis(node.require("axis", f"required for a {jtype} joint"))
    elif node.get("axis") is not None:
        raise node.get("axis").error(f"a {jtype} joint has no axis")
    if JOINTS[jtype].has_axis2:
        axis2_node = node.require("axis2", "the second axis of a universal joint")
        axis2 = _unit_axis(axis2_node)
        if abs(float(axis @ axis2)) > DECLARED_GEOMETRY_ATOL:
            raise axis2_node.error("the two axes of a universal joint must be orthogonal")
    elif node.get("axis2") is not None:
        raise node.get("axis2").error(f"only a universal joint has 'axis2', not a {jtype} joint")
    secondary_origin = (np.array(node.get("secondary_origin").vector(3)) * units.length
                        if node.get("secondary_origin") is not None else None)
    secondary_axis = _unit_axis(node.get("secondary_axis")) if node.get("secondary_axis") is not None else None
    motor = _motor(node.get("motor"), name) if node.get("motor") is not None else None
    actuated = node.get("actuated").boolean() if node.get("actuated") is not None else False
    if jtype == "fixed" and (actuated or motor is not None):
        raise node.error("a fixed joint cannot be actuated")
    damping = node.get("damping").number(nonnegative=True) if node.get("damping") is not None else 0.0
    armature = node.get("armature").number(nonnegative=True) if node.get("armature") is not None else 0.0
    return Joint(name=name, type=jtype, reference=ends["reference"], secondary=ends["secondary"],
                 origin=origin, axis=axis, axis2=axis2, secondary_origin=secondary_origin,
                 secondary_axis=secondary_axis, limits=_limits(node.get("limits"), jtype, units),
                 actuated=actuated or motor is not None, motor=motor, damping=damping, armature=armature,
                 ref=_ref(node.get("ref"), jtype, units), source=_source(node))


def _ref(node: Node | None, joint_type: str, units: _Units) -> float:
    """The joint coordinate at the reference configuration (angle or length unit); one-axis joints only."""
    if node is None:
        return 0.0
    if not JOINTS[joint_type].takes_ref:
        raise node.error(f"a {joint_type} joint has no 'ref' (only {', '.join(joint_types(takes_ref=True))} joints)")
    return node.number() * (units.length if joint_type == "prismatic" else units.angle)


def _unique(nodes: list[Node], what: str) -> None:
    seen: dict[str, int] = {}
    for n in nodes:
        name_node = n.require("name")
        name = name_node.string()
        if name in seen:
            raise name_node.error(f"duplicate {what} name '{name}' (first on line {seen[name]})")
        seen[name] = name_node.line


def _base_joint(root: Node, first: Body, kind: str, joint_names: set[str]) -> Joint:
    jtype = "fixed" if kind == "fixed" else "free"
    name = f"{first.name}_to_ground" if kind == "fixed" else f"{first.name}_free"
    if name in joint_names:
        raise root.error(f"implicit base joint name '{name}' clashes with a declared joint")
    return Joint(name=name, type=jtype, reference=GROUND, secondary=first.name,
                 origin=first.pose.translation, implicit=True, source=Source(root.file, root.line, f"implicit base: {kind}"))


def _frame(node: Node, units: _Units, body_names: set[str]) -> Frame:
    node.check_keys(("name", "body", "pose"))
    body_node = node.require("body")
    body = body_node.string()
    if body not in body_names:
        raise body_node.error(f"unknown body '{body}'{did_you_mean(body, body_names)} for frame '{node.require('name').string()}'")
    return Frame(node.require("name").string(), body, _pose(node.get("pose"), units), _source(node))


#: ``forces:`` entry type -> its keys besides ``name`` and ``type`` (docs/assembly-format.md, "Forces")
FORCE_KEYS = {"joint_spring": ("joint", "stiffness", "damping", "rest"),
              "joint_friction": ("joint", "friction", "velocity"),
              "spring_damper": ("bodies", "points", "stiffness", "damping", "rest_length"),
              "point_force": ("body", "point", "force", "torque"),
              "dc_motor": ("joint", "resistance", "inductance", "torque_constant", "back_emf_constant",
                           "rotor_inertia", "gear_ratio", "efficiency")}

#: regularising velocity of Coulomb friction when none is given, rad/s or m/s
FRICTION_VELOCITY = 0.01


def _optional(node: Node, key: str, default: float = 0.0, **sign) -> float:
    child = node.get(key)
    return default if child is None else child.number(**sign)


def _force_joint(node: Node, units: _Units, joints: dict[str, Joint]) -> tuple[str, float]:
    """(joint name, its coordinate's length or angle unit) of a joint force element's ``joint``."""
    joint_node = node.require("joint", "the one-coordinate joint it acts along")
    name = joint_node.string()
    if name not in joints:
        raise joint_node.error(f"unknown joint '{name}'{did_you_mean(name, joints)}")
    j = joints[name]
    if j.nq != 1 or j.nv != 1:
        raise joint_node.error(f"joint '{name}' is {j.type}: joint force elements act along one-coordinate "
                               f"joints ({', '.join(t for t, (nq, nv) in JOINT_TYPES.items() if nq == nv == 1)})")
    return name, units.length if j.type == "prismatic" else units.angle


def _force_body(node: Node, body_names, ground: bool) -> str:
    name = node.string()
    if name in (GROUND, GROUND_WORD) and ground:
        return GROUND
    if name not in body_names:
        raise node.error(f"unknown body '{name}'{did_you_mean(name, body_names)}")
    return name


def _force(node: Node, units: _Units, joints: dict[str, Joint], body_names) -> object:
    """One ``forces:`` entry as its Assembly record (SI units)."""
    node.mapping("a force element mapping with 'name' and 'type'")
    name = node.require("name").string()
    type_node = node.require("type", f"one of {', '.join(FORCE_KEYS)}")
    kind = type_node.string()
    if kind not in FORCE_KEYS:
        raise type_node.error(f"unknown force element type '{kind}'{did_you_mean(kind, FORCE_KEYS)} "
                              f"(expected one of: {', '.join(FORCE_KEYS)})")
    node.check_keys(("name", "type") + FORCE_KEYS[kind])
    src = _source(node)
    if kind == "joint_spring":
        joint, unit = _force_joint(node, units, joints)
        return JointForceElement(name, joint, stiffness=_optional(node, "stiffness", nonnegative=True),
                                 damping=_optional(node, "damping", nonnegative=True),
                                 rest=_optional(node, "rest") * unit, source=src)
    if kind == "joint_friction":
        joint, unit = _force_joint(node, units, joints)
        return JointForceElement(name, joint, friction=node.require("friction").number(nonnegative=True),
                                 friction_velocity=_optional(node, "velocity", FRICTION_VELOCITY / unit,
                                                             positive=True) * unit, source=src)
    if kind == "dc_motor":
        return _dc_motor(node, name, units, joints, src)
    if kind == "point_force":
        body = _force_body(node.require("body"), body_names, ground=False)
        vec = lambda key, scale: np.array(node.get(key).vector(3)) * scale if node.get(key) is not None else np.zeros(3)
        return PointLoad(name, body, vec("point", units.length), vec("force", 1.0), vec("torque", 1.0), source=src)
    ends = node.require("bodies", "[body_a, body_b] (either may be ground)").sequence("a list of two bodies")
    pts = node.require("points", "[[x, y, z], [x, y, z]] in the assembly frame").sequence("a list of two points")
    if len(ends) != 2 or len(pts) != 2:
        raise node.error("a spring_damper needs two 'bodies' and two 'points'")
    a, b = (_force_body(e, body_names, ground=True) for e in ends)
    if a == b:
        raise node.get("bodies").error(f"spring_damper '{name}' connects body '{a}' to itself")
    pa, pb = (np.array(p.vector(3)) * units.length for p in pts)
    rest = node.get("rest_length")
    length = float(np.linalg.norm(pb - pa)) if rest is None else rest.number(nonnegative=True) * units.length
    if np.linalg.norm(pb - pa) < GEOMETRY_ATOL:
        raise node.get("points").error(f"spring_damper '{name}': its two points coincide (no direction)")
    return SpringDamper(name, a, pa, b, pb, stiffness=_optional(node, "stiffness", nonnegative=True),
                        damping=_optional(node, "damping", nonnegative=True), rest_length=length, source=src)


def _dc_motor(node: Node, name: str, units: _Units, joints, src) -> DCMotor:
    """A ``dc_motor`` entry (SI constants; ``gear_ratio`` rotor turns per joint turn, or rad per length
    unit on a prismatic joint)."""
    joint, unit = _force_joint(node, units, joints)
    per_length = unit if joints[joint].type == "prismatic" else 1.0
    kt = node.require("torque_constant", "N m/A").number(positive=True)
    return DCMotor(name, joint, resistance=node.require("resistance", "ohm").number(positive=True),
                   inductance=node.require("inductance", "H").number(positive=True), torque_constant=kt,
                   back_emf_constant=_optional(node, "back_emf_constant", kt, positive=True),
                   rotor_inertia=_optional(node, "rotor_inertia", nonnegative=True),
                   gear_ratio=_optional(node, "gear_ratio", 1.0) / per_length,
                   efficiency=_optional(node, "efficiency", 1.0, positive=True), source=src)


def _forces(root: Node, units: _Units, joints, body_names) -> tuple[tuple, tuple]:
    """(spring-dampers between points, the other force records) of the ``forces:`` section."""
    nodes = root.get("forces").sequence("a list of force elements") if root.get("forces") is not None else []
    _unique(nodes, "force element")
    by_name = {j.name: j for j in joints}
    records = []
    for n in nodes:
        try:
            records.append(_force(n, units, by_name, body_names))
        except InputError:
            raise
        except ValueError as exc:          # a record's constructor (parsers.assembly) refused a value
            raise n.error(str(exc)) from None
    return (tuple(r for r in records if isinstance(r, SpringDamper)),
            tuple(r for r in records if not isinstance(r, SpringDamper)))


def _coupling(node: Node, joint_names: set[str]) -> Coupling:
    """A coupling ``{joint, leader, multiplier, offset, higher, joint_terms, leader_terms}``
    (:class:`parsers.assembly.Coupling`; terms as ``[[joint, coef], ...]``)."""
    node.check_keys(COUPLING_KEYS)

    def name(n: Node) -> str:
        v = n.string()
        if v not in joint_names:
            raise n.error(f"unknown joint '{v}'{did_you_mean(v, joint_names)}")
        return v

    def terms(key: str) -> tuple:
        n = node.get(key)
        if n is None:
            return ()
        out = []
        for t in n.sequence("a list of [joint, coefficient] pairs"):
            pair = t.sequence("a [joint, coefficient] pair")
            if len(pair) != 2:
                raise t.error("a term is [joint, coefficient]")
            out.append((name(pair[0]), pair[1].number()))
        return tuple(out)

    get = node.get
    return Coupling(joint=name(node.require("joint")), leader=name(get("leader")) if get("leader") is not None else None,
                    multiplier=get("multiplier").number() if get("multiplier") is not None else 1.0,
                    offset=get("offset").number() if get("offset") is not None else 0.0,
                    higher=tuple(x.number() for x in get("higher").sequence()) if get("higher") is not None else (),
                    source=_source(node), joint_terms=terms("joint_terms"), leader_terms=terms("leader_terms"))


def read_yaml(path, **options) -> Assembly:
    """Read a YAML assembly file into an :class:`Assembly` (SI units).

    Parameters
    ----------
    path : str or Path
        The ``.yaml`` file; mesh paths are relative to its folder.
    """
    if options:
        raise TypeError(f"read_yaml takes no options, got {sorted(options)}")
    path = Path(path)
    return assembly_from_node(load_yaml(path), path)


def assembly_from_node(root: Node, path) -> Assembly:
    """The :class:`Assembly` of an already parsed YAML document (see :func:`read_yaml`).

    ``path`` is the file the document stands for: mesh paths are relative to
    its folder.  Sweeps edit the parsed document and read it with this.
    """
    path = Path(path)
    root.mapping("a mapping with 'bodies' (and 'joints')")
    if root.get("assembly") is not None:   # bodies from a STEP file (parsers/step/wrapper.py)
        from ..step.wrapper import read_cad_yaml
        return read_cad_yaml(root, path, dict(MATERIALS), _Units(root.get("units")), _joint)
    root.check_keys(TOP_KEYS)
    if root.get("format") is not None and root.get("format").string() != FORMAT_VERSION:
        raise root.get("format").error(f"unsupported format (expected '{FORMAT_VERSION}')")
    units = _Units(root.get("units"))
    materials = dict(MATERIALS)
    if root.get("materials") is not None:
        for key, value in root.get("materials").mapping().items():
            materials[key] = value.number(positive=True)
    gravity = np.array([0.0, 0.0, -9.81])
    if root.get("gravity") is not None:
        gravity = np.array(root.get("gravity").vector(3)) * units.length
    base = "fixed"
    if root.get("base") is not None:
        base = root.get("base").string()
        if base not in ("fixed", "floating"):
            raise root.get("base").error(f"base must be 'fixed' or 'floating', got '{base}'")

    body_nodes = root.require("bodies", "a list of bodies").sequence("a list of bodies")
    if not body_nodes:
        raise root.get("bodies").error("at least one body is required")
    _unique(body_nodes, "body")
    with MeshWork(_mesh_files(body_nodes, path.parent)):
        bodies = tuple(_body(n, path.parent, units, materials) for n in body_nodes)
    joint_nodes = root.get("joints").sequence("a list of joints") if root.get("joints") is not None else []
    _unique(joint_nodes, "joint")
    body_names = {b.name for b in bodies}
    joints = [_joint(n, units, body_names) for n in joint_nodes]
    if not any(GROUND in (j.reference, j.secondary) for j in joints):
        joints.insert(0, _base_joint(root.get("base") or root, bodies[0], base, {j.name for j in joints}))
    frame_nodes = root.get("frames").sequence("a list of frames") if root.get("frames") is not None else []
    _unique(frame_nodes, "frame")
    frames = tuple(_frame(n, units, body_names) for n in frame_nodes)
    coupling_nodes = root.get("couplings").sequence("a list of couplings") if root.get("couplings") is not None else []
    couplings = tuple(_coupling(n, {j.name for j in joints}) for n in coupling_nodes)
    name = root.get("name").string() if root.get("name") is not None else path.stem
    springs, forces = _forces(root, units, joints, body_names)
    return Assembly(name=name, bodies=bodies, joints=tuple(joints), gravity=gravity, frames=frames,
                    source_file=str(path), springs=springs, forces=forces, couplings=couplings,
                    value_units=units.values())


__all__ = ["read_yaml", "assembly_from_node", "write_yaml", "MATERIALS", "LENGTH_UNITS", "MASS_UNITS", "ANGLE_UNITS", "INERTIA_RTOL"]


# ---------------------------------------------------------------------------
# writer: the native model file
# ---------------------------------------------------------------------------

def _num(x: float) -> float:
    return float(repr(float(x))) if x != 0 else 0.0


def _vec_out(v) -> list[float]:
    return [_num(x) for x in np.asarray(v, dtype=float)]


def _pose_out(pose: Pose) -> dict:
    from mbcompose.dynamics.spatial import matrix_to_quat
    return {"xyz": _vec_out(pose.translation), "quat": _vec_out(matrix_to_quat(pose.rotation))}


def _geometry_out(g: Geometry, base_dir: Path | None) -> dict:
    entry: dict = {}
    if g.kind == "mesh":
        path = Path(g.file)
        if base_dir is not None:
            try:
                path = Path(os.path.relpath(path, base_dir))
            except ValueError:
                pass
        entry["mesh"] = path.as_posix()
        entry["scale"] = _vec_out(g.params.get("scale", np.ones(3)))
        if g.params.get("convex_hull"):
            entry["convex_hull"] = True
    elif g.kind in SHAPE_PARAMS:
        entry[g.kind] = {k: (_vec_out(g.params[k]) if np.ndim(g.params[k]) else _num(g.params[k]))
                         for k in SHAPE_PARAMS[g.kind]}
    else:
        return {}
    entry["pose"] = _pose_out(g.pose)
    if g.role != "inertial":
        entry["role"] = g.role
    if g.material is not None:
        entry["color"] = {"rgba": _vec_out(g.material.rgba)}
        if g.material.name is not None:
            entry["color"] = {"name": g.material.name, **entry["color"]}
    elif g.params.get("rgba") is not None:
        entry["color"] = {"rgba": _vec_out(g.params["rgba"])}
    return entry


def _body_out(b: Body, base_dir: Path | None) -> dict:
    J = b.mass.inertia
    out = {"name": b.name, "pose": _pose_out(b.pose),
           "inertial": {"mass": _num(b.mass.mass), "com": _vec_out(b.mass.com),
                        "inertia": {"ixx": _num(J[0, 0]), "iyy": _num(J[1, 1]), "izz": _num(J[2, 2]),
                                    "ixy": _num(J[0, 1]), "ixz": _num(J[0, 2]), "iyz": _num(J[1, 2])}}}
    shapes = [e for e in (_geometry_out(g, base_dir) for g in b.geometry) if e]
    if shapes:
        out["geometry"] = shapes
    return out


def _joint_out(j: Joint) -> dict:
    """A joint as the format writes it, the world by the format's word for it (``ground``)."""
    def end(name: str) -> str:
        return GROUND_WORD if name == GROUND else name

    out: dict = {"name": j.name, "type": j.type, "reference": end(j.reference), "secondary": end(j.secondary),
                 "origin": _vec_out(j.origin)}
    if j.type in AXIAL_JOINTS:
        out["axis"] = _vec_out(j.axis)
    if j.axis2 is not None:
        out["axis2"] = _vec_out(j.axis2)
    if j.secondary_origin is not None:
        out["secondary_origin"] = _vec_out(j.secondary_origin)
    if j.secondary_axis is not None:
        out["secondary_axis"] = _vec_out(j.secondary_axis)
    keys = ("lower", "upper", "velocity", "effort") if JOINTS[j.type].takes_limits else ("velocity", "effort")
    limits = {k: _num(getattr(j.limits, k)) for k in keys if getattr(j.limits, k) is not None}
    if limits:
        out["limits"] = limits
    if j.actuated:
        out["actuated"] = True
    if j.motor is not None:
        m = j.motor
        out["motor"] = {"name": m.name, "gear_ratio": _num(m.gear_ratio), "rotor_inertia": _num(m.rotor_inertia)}
        if m.max_effort is not None:
            out["motor"]["max_effort"] = _num(m.max_effort)
    if j.damping:
        out["damping"] = _num(j.damping)
    if j.armature:
        out["armature"] = _num(j.armature)
    if j.ref:
        out["ref"] = _num(j.ref)
    return out


def _coupling_out(c: Coupling) -> dict:
    out: dict = {"joint": c.joint}
    if c.leader is not None:
        out["leader"] = c.leader
    out["multiplier"], out["offset"] = _num(c.multiplier), _num(c.offset)
    if c.higher:
        out["higher"] = [_num(x) for x in c.higher]
    for key in ("joint_terms", "leader_terms"):
        if getattr(c, key):
            out[key] = [[n, _num(w)] for n, w in getattr(c, key)]
    return out


def _warn_unwritten(a: Assembly) -> None:
    """One warning per kind of fact the native format does not hold: shapes it has no key for
    (ellipsoids), actuators (MJCF's; the joints' ``actuated`` and ``motor`` are written)."""
    from ..exporters import log as export_log

    shapes = sorted({g.kind for b in a.bodies for g in b.geometry if g.kind not in SHAPE_KINDS})
    if shapes:
        export_log.warning("YAML export of %s: the native format has no %s shape; left out", a.name,
                           " or ".join(shapes))
    tendons = [t.name for t in a.forces if isinstance(t, Tendon)]
    if tendons:
        export_log.warning("YAML export of %s: the native format has no tendons (MJCF's); left out: %s (convert "
                           "to MJCF to keep them)", a.name, ", ".join(tendons))
    if a.actuators:
        export_log.warning("YAML export of %s: the native format has no actuator records (gain, bias, ranges); "
                           "left out: %s (their joints stay actuated; convert to MJCF to keep them)", a.name,
                           ", ".join(x.name for x in a.actuators))



def _force_out(record) -> list[dict]:
    """The ``forces:`` entries of one force record (SI units, the writer's; a joint element with both a
    spring or damper and friction is two entries, the friction's named ``NAME_friction``)."""
    ground = lambda body: GROUND_WORD if body == GROUND else body
    if isinstance(record, Tendon):
        return []                       # warned (_warn_unwritten)
    if isinstance(record, SpringDamper):
        return [{"name": record.name, "type": "spring_damper", "bodies": [ground(record.body_a), ground(record.body_b)],
                 "points": [_vec_out(record.point_a), _vec_out(record.point_b)], "stiffness": record.stiffness,
                 "damping": record.damping, **({} if record.rest_length is None else
                                               {"rest_length": record.rest_length})}]
    if isinstance(record, PointLoad):
        return [{"name": record.name, "type": "point_force", "body": record.body, "point": _vec_out(record.point),
                 "force": _vec_out(record.force), "torque": _vec_out(record.torque)}]
    if isinstance(record, DCMotor):
        return [{"name": record.name, "type": "dc_motor", "joint": record.joint, "resistance": record.resistance,
                 "inductance": record.inductance, "torque_constant": record.torque_constant,
                 "back_emf_constant": record.back_emf_constant, "rotor_inertia": record.rotor_inertia,
                 "gear_ratio": record.gear_ratio, "efficiency": record.efficiency}]
    out = []
    if record.stiffness or record.damping or not record.friction:
        out.append({"name": record.name, "type": "joint_spring", "joint": record.joint,
                    "stiffness": record.stiffness, "damping": record.damping, "rest": record.rest})
    if record.friction:
        out.append({"name": record.name + ("_friction" if out else ""), "type": "joint_friction",
                    "joint": record.joint, "friction": record.friction, "velocity": record.friction_velocity})
    return out


def write_yaml(assembly: Assembly, base_dir=None) -> str:
    """The assembly as a native YAML file (SI units, quaternion poses, explicit inertials).

    Reading the text back with :func:`read_yaml` gives the same bodies (shapes with their roles and
    colours), joints, frames, couplings, force elements (``forces:``) and gravity.  Implicit base joints are written explicitly.  Mesh
    paths are made relative to ``base_dir`` (the folder the file will live in)
    when given.  Position limits are written for the joint types that take them
    (:mod:`dynamics.joints`); others' are left out, with a warning for moving joints.
    """
    import yaml

    warn_untaken_limits(assembly, "YAML")
    base = Path(base_dir).resolve() if base_dir is not None else None
    doc = {"format": FORMAT_VERSION, "name": assembly.name,
           "units": {"length": "m", "mass": "kg", "angle": "rad"},
           "gravity": _vec_out(assembly.gravity),
           "bodies": [_body_out(b, base) for b in assembly.bodies],
           "joints": [_joint_out(j) for j in assembly.joints]}
    if assembly.frames:
        doc["frames"] = [{"name": f.name, "body": f.body, "pose": _pose_out(f.pose)} for f in assembly.frames]
    if assembly.couplings:
        doc["couplings"] = [_coupling_out(c) for c in assembly.couplings]
    forces = [entry for record in (*assembly.springs, *assembly.forces) for entry in _force_out(record)]
    if forces:
        doc["forces"] = forces
    _warn_unwritten(assembly)
    header = f"# mbcompose model of '{assembly.name}' (SI units)\n"
    return header + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=110)
