"""URDF reader: a robot description (a tree of links and joints) into an Assembly.

URDF (ROS ``urdfdom`` specification, http://wiki.ros.org/urdf/XML) places each
joint frame in its parent link frame (``<origin xyz rpy>``, roll-pitch-yaw about
fixed axes, ``Rz(y) Ry(p) Rx(r)``), and a child link's frame *is* its joint's
frame at zero joint coordinates.  Composing the origins down the tree from the
root gives each link's pose in the assembly frame, and each joint's origin and
axis in the assembly frame, as the Assembly model asks (seed 004, Table 1:
type, reference body = parent link, secondary body = child link).

Choices made here (documented behaviour):

* **Root.**  The root link is attached to :data:`~parsers.assembly.GROUND` by a
  joint named ``root_joint``: ``fixed`` (``base='fixed'``, the default, as in
  Pinocchio's ``buildModelFromUrdf``) or ``free`` (``base='floating'``).  A root
  link named ``world`` (or ``ground``) without ``<inertial>`` *is* the ground:
  no body and no ``root_joint`` are made for it, and its child joints attach to
  GROUND directly (Gazebo's convention), also with ``base='floating'`` (logged:
  Pinocchio would put its free joint under that massless link).  Any other link
  named ``ground`` is an ordinary body of that name (the ground's node is
  :data:`~parsers.assembly.GROUND`, a name no link can have).  A joint whose parent is an undeclared link ``world`` is
  attached to the ground, as Drake and Gazebo read it (Drake's acrobot): the
  ``world`` link is declared implicitly, massless, so it is that ground root.
* **Joint types.**  revolute, continuous, prismatic, fixed, ``floating`` -> free,
  planar (axis = plane normal).  Anything else is an InputError.
* **mimic** becomes a :class:`~parsers.assembly.Coupling`
  ``q[joint] = multiplier * q[leader] + offset``.  A mimic that names a joint
  the file does not have is dropped with a logged warning (the joint stays
  independent, as Pinocchio's default parser treats every mimic joint).
* **Links without <inertial>** are massless frames where that is allowed:
  the link is welded (fixed joint) to its parent; or the joint that carries it
  also carries mass further down the tree; or it is a leaf (sensor and tool
  frames; a massless leaf on a moving joint is accepted, as Pinocchio does,
  with a logged warning: the mass matrix is singular along that joint).  A
  massless link with children, none of which carries mass, on a moving joint
  is an InputError, unless ``massless='allow'`` or
  ``inertia_from_geometry_density`` is given.  With
  ``inertia_from_geometry_density`` the mass properties of every link without
  ``<inertial>`` are computed from its collision shapes (visual shapes if it
  has none) at that density through :mod:`parsers.massprops` (trimesh; a mesh
  must be watertight).
* **Inertia values** are taken as written (Pinocchio accepts non-physical
  tensors); a negative mass or a non-finite value is an InputError, a tensor
  that is not positive semi-definite or breaks the triangle inequality is
  logged as a warning.
* **Meshes**: see :mod:`parsers.urdf.geometry`.  A collision mesh that cannot be
  found is an InputError at the ``<mesh>`` line only when the link has no
  ``<inertial>`` (its geometry may be needed for the mass); otherwise, and for
  visual meshes, the shape is skipped with a logged warning (Pinocchio's model
  parser ignores meshes altogether).  ``<plane>`` and ``<cdf>`` shapes are skipped
  with a warning; a mesh ``scale`` with a 4th number keeps the first three.
* ``limit lower > upper`` is kept as written with a warning (Pinocchio accepts it).
* ``<transmission>`` joints are marked ``actuated`` with a
  :class:`~parsers.assembly.Motor` (the actuator name, mechanicalReduction; a
  reduction that is not a number is replaced by 1 with a warning).
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from lxml import etree

from mbcompose.dynamics.joints import JOINTS

from .. import limits
from ..assembly import GROUND, Assembly, Body, Joint, JointForceElement, MassProperties, Pose, Source
from ..errors import InputError, did_you_mean
from ..gc_pause import paused_gc
from ..massprops import shapes_mass_properties
from ..mesh_progress import MeshWork
from ..xml import attr_float, error, first_children, new_element, parse_xml, required, where
from .actuation import mimic_couplings, transmissions
from .geometry import MeshFiles, link_inertials, origin_poses, shape_geometry
from .joints import URDF_JOINT_TYPES, joint_axes, joint_limits

log = logging.getLogger(__name__)

GROUND_ROOT_NAMES = ("world", "ground")
#: the link a joint may name as its parent without declaring it: the world (Drake, Gazebo)
IMPLICIT_WORLD = "world"

def read_urdf(path, *, package_dirs=(), base: str = "fixed", inertia_from_geometry_density=None,
              massless: str = "check", check_meshes: bool = True, text: str | None = None) -> Assembly:
    """Read a URDF file into an :class:`Assembly`.

    Parameters
    ----------
    path : str or Path
        The URDF file (used for messages and relative paths when ``text`` is given).
    package_dirs : sequence of str or (NAME, FOLDER) pairs
        For ``package://PKG/...`` meshes: folders that contain ROS packages (Pinocchio's
        ``package_dirs``) and ``(PKG, FOLDER)`` pairs naming a package's own folder
        (:func:`parsers.urdf.geometry.split_package_dirs`); then ``$ROS_PACKAGE_PATH``.
    base : 'fixed' or 'floating'
        How the root link is attached to ground (``root_joint``).
    inertia_from_geometry_density : float or None
        kg/m^3: compute mass properties of links without ``<inertial>`` from their
        collision (else visual) shapes at this density.
    massless : 'check' or 'allow'
        'check' refuses a massless non-leaf link whose moving joint moves no mass.
    check_meshes : bool
        Raise InputError for mesh files that cannot be found.
    text : str, optional
        The document itself (then ``path`` only names it).

    Returns
    -------
    Assembly
        Bodies with poses in the assembly (world) frame at zero joint
        coordinates; joints with origins and axes in the assembly frame.
    """
    if base not in ("fixed", "floating"):
        raise InputError(f"base must be 'fixed' or 'floating', got {base!r}", file=str(path))
    if massless not in ("check", "allow"):
        raise InputError(f"massless must be 'check' or 'allow', got {massless!r}", file=str(path))
    with paused_gc():  # the reader makes no reference cycles: the collector would only walk its objects
        if text is None:
            data = limits.read_input_bytes(path)
        else:
            data = text.encode("utf-8") if isinstance(text, str) else text
        root_el = parse_xml(path, data)
        return urdf_from_element(root_el, path, package_dirs=package_dirs, base=base,
                                 inertia_from_geometry_density=inertia_from_geometry_density,
                                 massless=massless, check_meshes=check_meshes, xacro=may_hold_xacro(data))


class _Link:
    """A ``<link>`` element and the children the reader reads (its first ``<inertial>``, its shapes)."""

    __slots__ = ("el", "inertial", "visuals", "collisions")

    def __init__(self, el, inertial=None, visuals=(), collisions=()):
        self.el, self.inertial, self.visuals, self.collisions = el, inertial, visuals, collisions


def _link(l_el) -> _Link:
    """The parts of a ``<link>``, from one pass over its children."""
    inertial, visuals, collisions = None, [], []
    for c in l_el:
        tag = c.tag
        if tag == "visual":
            visuals.append(c)
        elif tag == "collision":
            collisions.append(c)
        elif tag == "inertial" and inertial is None:
            inertial = c
    return _Link(l_el, inertial, visuals, collisions)


@dataclass
class _Tree:
    """The link/joint elements of a ``<robot>`` and its tree, as read (see :func:`_read_tree`)."""

    element: object        # the <robot> element
    links: dict            # link name -> _Link
    joints: dict           # joint name -> element
    parts: dict            # joint name -> its first child of each tag (parent, child, origin, axis, limit, ...)
    parent_of: dict        # child link -> joint name
    children: dict         # link -> joint names
    transmissions: list    # the <transmission> elements
    root: str = ""
    order: list = field(default_factory=list)       # links, breadth first from the root
    link_pose: dict = field(default_factory=dict)   # link -> Pose in the assembly frame
    end_links: dict = field(default_factory=dict)   # joint name -> (parent link, child link)
    memo: dict = field(default_factory=dict)        # origins and mesh scales read (urdf_geometry.origin_poses)


def _check_robot(root_el, xacro: bool) -> str:
    """The robot's name; InputError for another root, unexpanded xacro (looked for when ``xacro``:
    the document holds the text ``xacro:``) or no name."""
    if root_el.tag != "robot":
        raise error(root_el, f"root element is <{root_el.tag}>, expected <robot>")
    found = _XACRO_ELEMENT(root_el) if xacro else None
    if found:
        el = found[0]
        name = el.tag if el.prefix is None else f"{el.prefix}:{etree.QName(el).localname}"
        raise error(el, f"<{name}>: this is an unexpanded xacro file; run xacro on it first")
    robot_name = root_el.get("name")
    if not robot_name:
        raise error(root_el, "<robot> has no name (attribute 'name' is required)")
    return robot_name


#: the first element named ``xacro:...`` (a declared namespace prefix, or an undeclared one kept in the name)
_XACRO_ELEMENT = etree.XPath("(//*[starts-with(name(), 'xacro:')])[1]")


def may_hold_xacro(data: bytes) -> bool:
    """False when the document ``data`` can hold no element named ``xacro:...``: its bytes have no
    ``<xacro:`` outside comments (which the parsed tree drops; files made by xacro often quote its
    macros in comments), so that :data:`_XACRO_ELEMENT`, a walk over every element, is skipped.  A
    document with a CDATA section (where ``<!--`` is text) is always looked at.  Each ``<xacro:``
    is inside the comment that opens last before it, if any (in a well-formed document ``<!--``
    occurs only where a comment opens), so each is looked at once, not every comment."""
    at = data.find(b"<xacro:")
    if at >= 0 and b"<![CDATA[" in data:
        return True
    while at >= 0:
        opened = data.rfind(b"<!--", 0, at)
        closed = -1 if opened < 0 else data.find(b"-->", opened + 4)
        if closed < 0 or closed + 3 <= at:
            return True
        at = data.find(b"<xacro:", closed + 3)
    return False


def _read_links(root_el, link_els) -> dict:
    links = {}
    for l_el in link_els:
        name = l_el.get("name") or required(l_el, "name")  # (required only raises: skip its call)
        if name in links:
            raise error(l_el, f"duplicate link name {name!r} (first at line {links[name].el.sourceline})")
        links[name] = _link(l_el)
    if not links:
        raise error(root_el, "the robot has no <link>")
    return links


def _read_tree(root_el) -> _Tree:
    """Links and joints with their parent/child relations (duplicates and two parents refused)."""
    tops = {"link": [], "joint": [], "transmission": []}
    for el in root_el:
        found = tops.get(el.tag)
        if found is not None:
            found.append(el)
    links = _read_links(root_el, tops["link"])
    t = _Tree(root_el, links, {}, {}, {}, {n: [] for n in links}, tops["transmission"])
    for j_el in tops["joint"]:
        name = j_el.get("name") or required(j_el, "name")
        if name in t.joints:
            raise error(j_el, f"duplicate joint name {name!r} (first at line {t.joints[name].sourceline})")
        jtype = j_el.get("type") or required(j_el, "type")
        if jtype not in URDF_JOINT_TYPES:
            raise error(j_el, f"joint {name!r}: unknown joint type {jtype!r}{did_you_mean(jtype, URDF_JOINT_TYPES)} "
                              "(expected one of "
                              f"{', '.join(URDF_JOINT_TYPES)})")
        ends, parts = {}, first_children(j_el)
        for tag in ("parent", "child"):
            e = parts.get(tag)
            if e is None:
                raise error(j_el, f"joint {name!r} needs <{tag} link=...>")
            link = e.get("link") or required(e, "link")
            if link not in links:
                if tag != "parent" or link != IMPLICIT_WORLD:
                    raise error(e, f"joint {name!r}: unknown {tag} link {link!r}{did_you_mean(link, links)}")
                _declare_world(t, e)
            ends[tag] = link
        if ends["parent"] == ends["child"]:
            raise error(j_el, f"joint {name!r} connects link {ends['parent']!r} to itself")
        if ends["child"] in t.parent_of:
            other = t.parent_of[ends["child"]]
            raise error(j_el, f"link {ends['child']!r} has two parent joints ({other!r} at line "
                              f"{t.joints[other].sourceline} and {name!r}); URDF describes a tree")
        t.parent_of[ends["child"]] = name
        t.children[ends["parent"]].append(name)
        t.joints[name] = j_el
        t.parts[name] = parts
        t.end_links[name] = (ends["parent"], ends["child"])
    return t


def _declare_world(t: _Tree, parent_el) -> None:
    """Add the undeclared ``world`` link that ``parent_el`` (a joint's ``<parent>``) names: a massless
    link without shapes, so the root link that is the ground (Drake's and Gazebo's reading)."""
    log.info("%s: parent link %r is not declared: it is the world (the ground), as Drake and Gazebo read it",
             where(parent_el), IMPLICIT_WORLD)
    t.links[IMPLICIT_WORLD] = _Link(new_element("link", {"name": IMPLICIT_WORLD}, parent_el))
    t.children[IMPLICIT_WORLD] = []


def _order_links(t: _Tree) -> None:
    """The root link and the links in breadth-first order; InputError for several roots or a cycle."""
    roots = [n for n in t.links if n not in t.parent_of]
    if len(roots) > 1:
        raise error(t.links[roots[1]].el, f"the robot has {len(roots)} root links ({', '.join(roots)}); "
                                       "URDF needs exactly one (connect them with joints)")
    if not roots:
        jname = next(iter(t.joints))
        cyc = _cycle_from(jname, t.end_links, t.parent_of)
        raise error(t.joints[jname], f"the joints form a cycle ({' -> '.join(cyc)}); URDF describes a tree")
    t.root = roots[0]
    t.order = [t.root]
    queue = deque([t.root])
    while queue:
        for jname in t.children[queue.popleft()]:
            child = t.end_links[jname][1]
            t.order.append(child)
            queue.append(child)
    if len(t.order) != len(t.links):
        placed = set(t.order)
        stray = next(n for n in t.links if n not in placed)
        cyc = _cycle_from(t.parent_of[stray], t.end_links, t.parent_of)
        raise error(t.joints[t.parent_of[stray]],
                    f"the joints form a cycle ({' -> '.join(cyc)}); URDF describes a tree")


def _place_links(t: _Tree, origins: list) -> None:
    """Every link's pose, composed down the tree (``origins``: the Pose of each link's joint
    ``<origin>``, links in ``t.order`` after the root)."""
    t.link_pose = {t.root: Pose()}
    for child, origin in zip(t.order[1:], origins):
        t.link_pose[child] = t.link_pose[t.end_links[t.parent_of[child]][0]].compose(origin)


def _origins(t: _Tree, inertials: dict, shapes: list) -> tuple[list, list, list]:
    """The Poses of the ``<origin>`` of the joints (in ``t.order``, after the root), of the
    ``<inertial>`` elements ``inertials`` (name -> (element, its first children by tag)) and of the
    ``shapes`` (:func:`_shape_elements`), read in one :func:`origin_poses` (one conversion of a
    document's origins, not three); a bad one raises in that order."""
    joints = [t.parts[t.parent_of[child]].get("origin") for child in t.order[1:]]
    inertial = [parts.get("origin") for _, parts in inertials.values()]
    poses = origin_poses(joints + inertial + [s[4] for s in shapes], t.memo)
    a, b = len(joints), len(joints) + len(inertial)
    return poses[:a], poses[a:b], poses[b:]


def _shape_elements(links: dict, check_meshes: bool) -> list:
    """(link name, role, element, mesh needed, its ``<origin>``, its ``<geometry>``) of each visual and
    collision shape (a missing collision mesh is an error only when ``check_meshes`` and the link has
    no ``<inertial>``)."""
    shapes = []
    for name, link in links.items():
        needed = check_meshes and link.inertial is None
        for role, s_els in (("visual", link.visuals), ("collision", link.collisions)):
            for s_el in s_els:
                origin = geometry = None
                for c in s_el:
                    tag = c.tag
                    if tag == "origin" and origin is None:
                        origin = c
                    elif tag == "geometry" and geometry is None:
                        geometry = c
                shapes.append((name, role, s_el, needed, origin, geometry))
    return shapes


def _links_geometry(links: dict, shapes: list, poses: list, meshes: MeshFiles, memo) -> dict:
    """Link name -> its visual and collision shapes, from :func:`_shape_elements` and their origins' Poses."""
    out = {name: [] for name in links}
    for (name, role, s_el, needed, _, geometry), pose in zip(shapes, poses):
        g = shape_geometry(s_el, geometry, role, meshes, needed, pose, memo)
        if g is not None:
            out[name].append(g)
    return {name: tuple(gs) for name, gs in out.items()}


def _body_names(t: _Tree, root_is_ground: bool, file: str) -> dict:
    """Link -> body name: a link named like the reserved ground body (other than a massless root) is renamed."""
    body_name = {n: n for n in t.links}
    if GROUND in t.links and not (root_is_ground and t.root == GROUND):
        new = GROUND + "_link"
        while new in t.links:
            new = "_" + new
        body_name[GROUND] = new
        log.warning("%s: link %r renamed %r (the name is reserved for the fixed world)",
                    where(t.links[GROUND].el), GROUND, new)
    return body_name


def _inertia_from_geometry(t: _Tree, mass_props, geoms, rho, root_is_ground, file) -> dict:
    """Mass properties of links without ``<inertial>`` from their shapes at density ``rho``; notes."""
    rho = float(rho)
    if not rho > 0:
        raise InputError(f"inertia_from_geometry_density must be > 0, got {rho}", file=file)
    computed, todo = {}, {}
    for name in t.order:
        if mass_props[name] is not None or (name == t.root and root_is_ground):
            continue
        todo[name] = [g for g in geoms[name] if g.role == "collision"] or \
                     [g for g in geoms[name] if g.role == "visual"]
    with MeshWork(g.file for shapes in todo.values() for g in shapes if g.kind == "mesh"):
        for name, shapes in todo.items():
            if not shapes:
                continue
            try:
                mass_props[name] = shapes_mass_properties(shapes, rho)
            except InputError as exc:
                raise error(t.links[name].el, f"link {name!r}: inertia from geometry: {exc.message}") from None
            computed[name] = f"computed from {len(shapes)} {shapes[0].role} shape(s) at density {rho:g} kg/m^3"
    return computed


def _check_massless(t: _Tree, mass_props, file) -> None:
    """Refuse a massless link with children on a moving joint that moves no mass (module docstring)."""
    moved = [name for name in t.order[1:]
             if mass_props[name] is None and t.joints[t.parent_of[name]].get("type") != "fixed"]
    if not moved:
        return
    heavy = _moves_mass(t, mass_props)
    for name in moved:
        jname = t.parent_of[name]
        if heavy[name]:
            continue
        if not t.children[name]:
            log.warning("%s: link %r has no <inertial>: a massless leaf moved by joint %r "
                        "(accepted as Pinocchio does; the mass matrix is singular along it)",
                        where(t.links[name].el), name, jname)
            continue
        raise error(t.links[name].el, f"link {name!r} has no <inertial> and joint {jname!r} moves no mass "
                                   "(the link and all links below it are massless); give it <inertial>, "
                                   "or pass inertia_from_geometry_density or massless='allow'")


def _moves_mass(t: _Tree, mass_props) -> dict[str, bool]:
    """Link -> True when it or a link below it has mass."""
    heavy: dict[str, bool] = {}
    for name in reversed(t.order):
        mp = mass_props[name]
        heavy[name] = (mp is not None and mp.mass > 0.0) or any(heavy[t.end_links[j][1]] for j in t.children[name])
    return heavy


def _bodies(t: _Tree, mass_props, geoms, computed, body_name, root_is_ground, file) -> list[Body]:
    bodies = []
    for name in t.order:
        if name == t.root and root_is_ground:
            continue
        mp = mass_props[name]
        line = t.links[name].el.sourceline
        src = {"pose": Source(file, line)}
        if body_name[name] != name:
            src["name"] = Source(file, line, f"URDF link {name!r}")
        if mp is None:
            mp = MassProperties.zero()
            src["mass"] = Source(file, line, "massless: no <inertial>")
        elif name in computed:
            src["mass"] = Source(file, line, computed[name])
        else:
            src["mass"] = Source(file, t.links[name].inertial.sourceline)
        bodies.append(Body(body_name[name], t.link_pose[name], mp, geoms[name], src))
    return bodies


def _joints(t: _Tree, body_name, root_is_ground, base, actuators, file) -> tuple[list[Joint], list]:
    """(the joints, the :class:`~parsers.assembly.JointForceElement` of each one-coordinate joint's
    ``<dynamics friction>``: its Coulomb friction, regularised as the element says)."""
    out, frictions = [], []
    ground_of = (lambda n: GROUND if (root_is_ground and n == t.root) else body_name[n])
    if not root_is_ground:
        jn = "root_joint"
        while jn in t.joints:
            jn = "_" + jn
        out.append(Joint(jn, "fixed" if base == "fixed" else "free", GROUND, body_name[t.root],
                         origin=np.zeros(3), source=Source(file, t.element.sourceline, f"{base} base")))
    joints = []  # (its <axis>, element, name, type, pose of the child link)
    for name in t.order[1:]:
        jname = t.parent_of[name]
        j_el = t.joints[jname]
        joints.append((t.parts[jname].get("axis"), j_el, jname, URDF_JOINT_TYPES[j_el.get("type")], t.link_pose[name]))
    rows, frictional = [], []
    for (_, j_el, jname, jtype, pose), axis in zip(joints, joint_axes(joints)):
        parent, child = t.end_links[jname]
        parts = t.parts[jname]
        d_el = parts.get("dynamics")
        damping = attr_float(d_el, "damping", 0.0) if d_el is not None else 0.0
        friction = attr_float(d_el, "friction", 0.0) if d_el is not None else 0.0
        if friction and JOINTS[jtype].one_coordinate:
            frictions.append(JointForceElement(f"{jname}_friction", jname, friction=friction,
                                                source=Source(file, d_el.sourceline, "<dynamics friction>")))
        elif friction and jtype != "fixed":
            frictional.append(jname)
        motor = actuators.get(jname)
        rows.append({**_URDF_JOINT, "name": jname, "type": jtype, "reference": ground_of(parent),
                     "secondary": body_name[child], "origin": pose.translation, "axis": axis,
                     "limits": joint_limits(parts.get("limit"), jname, jtype, t.memo), "actuated": motor is not None,
                     "motor": motor, "damping": damping, "source": Source(file, j_el.sourceline)})
    if frictional:
        log.warning("%s: <dynamics friction> of joints of several freedoms is not modelled, ignored on joints: %s",
                    file, ", ".join(frictional))
    return out + Joint.many(rows), frictions


#: the fields of a Joint that a URDF joint leaves at these values (every field the reader does not set, so
#: that :meth:`Joint.many` finds each row complete and fills in no default)
_URDF_JOINT = {"axis2": None, "secondary_origin": None, "secondary_axis": None, "armature": 0.0, "ref": 0.0,
               "loop": False, "stiffness": 0.0, "springref": 0.0, "springdamper": None, "implicit": False}


def urdf_from_element(root_el, path, *, package_dirs=(), base="fixed", inertia_from_geometry_density=None,
                      massless="check", check_meshes=True, xacro: bool = True) -> Assembly:
    """Build the Assembly from a parsed ``<robot>`` element (see :func:`read_urdf`; ``xacro``: look for
    unexpanded xacro elements, which only a document holding the text ``xacro:`` can have)."""
    file = str(path)
    meshes = MeshFiles(package_dirs=package_dirs, document=file)
    robot_name = _check_robot(root_el, xacro)
    t = _read_tree(root_el)
    _order_links(t)
    inertials = {name: (link.inertial, first_children(link.inertial)) for name, link in t.links.items()
                 if link.inertial is not None}
    shapes = _shape_elements(t.links, check_meshes)
    joint_origins, inertial_origins, shape_origins = _origins(t, inertials, shapes)
    _place_links(t, joint_origins)
    mass_props = link_inertials(t.links, inertials, inertial_origins, t.memo)
    geoms = _links_geometry(t.links, shapes, shape_origins, meshes, t.memo)
    root_is_ground = (t.root in GROUND_ROOT_NAMES and mass_props[t.root] is None)
    if root_is_ground and base == "floating":
        log.warning("%s: the root link %r is the fixed world: base='floating' leaves the robot fixed "
                    "(Pinocchio would float the massless %r link)", where(t.links[t.root].el), t.root, t.root)
    body_name = _body_names(t, root_is_ground, file)
    computed = {}
    if inertia_from_geometry_density is not None:
        computed = _inertia_from_geometry(t, mass_props, geoms, inertia_from_geometry_density, root_is_ground, file)
    if massless == "check":
        _check_massless(t, mass_props, file)
    bodies = _bodies(t, mass_props, geoms, computed, body_name, root_is_ground, file)
    joints, frictions = _joints(t, body_name, root_is_ground, base, transmissions(t.transmissions, t.joints), file)
    return Assembly(robot_name, tuple(bodies), tuple(joints), couplings=tuple(mimic_couplings(t, file)),
                    source_file=file, forces=tuple(frictions))


def _cycle_from(jname, end_links: dict, parent_of):
    """Link names around the cycle reached by walking parents from joint ``jname``'s child."""
    seen = []
    link = end_links[jname][1]
    while link not in seen:
        seen.append(link)
        if link not in parent_of:
            return seen
        link = end_links[parent_of[link]][0]
    cyc = seen[seen.index(link):]
    return list(reversed(cyc)) + [cyc[-1]]
