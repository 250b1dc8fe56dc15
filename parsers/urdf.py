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
  GROUND directly (Gazebo's convention).  Any other link named ``ground`` is
  renamed ``ground_link`` (logged; ``Body.sources['name']`` keeps the URDF name).
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
* **Meshes** ``package://PKG/rel`` are looked up in each of ``package_dirs``
  (``DIR/PKG/rel``), then next to the file and in every parent directory
  (``ANCESTOR/PKG/rel``, or ``ANCESTOR/rel`` when the ancestor itself is named
  PKG); ``file://`` URIs and plain paths are taken relative to the URDF file.
  A collision mesh that cannot be found is an InputError at the ``<mesh>``
  line; a visual mesh that cannot be found is skipped with a logged warning
  (Pinocchio's model parser ignores meshes altogether).  Meshes
  are only checked for existence while reading (mass properties come from
  ``<inertial>``); they are loaded, through :func:`parsers.massprops.load_mesh`,
  only when inertia from geometry is requested.
* ``<transmission>`` joints are marked ``actuated`` with a
  :class:`~parsers.assembly.Motor` (the actuator name, mechanicalReduction).
"""

from __future__ import annotations

import logging
import os
from collections import deque
from pathlib import Path

import numpy as np

from mbcompose.dynamics.spatial import rpy_to_matrix

from .assembly import GROUND, Assembly, Body, Coupling, Geometry, Joint, Limits, MassProperties, Motor, Pose, Source
from .errors import InputError, did_you_mean
from .massprops import inertia_problem, shapes_mass_properties
from .xmlutil import attr_float, attr_floats, error, parse_xml, required, text_float

log = logging.getLogger(__name__)

URDF_JOINT_TYPES = {"revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic",
                    "fixed": "fixed", "floating": "free", "planar": "planar"}

GROUND_ROOT_NAMES = ("world", "ground")


def origin_pose(el) -> Pose:
    """The ``<origin xyz rpy>`` child of ``el`` as a Pose (identity when absent)."""
    o = el.find("origin")
    if o is None:
        return Pose()
    xyz = attr_floats(o, "xyz", 3, (0.0, 0.0, 0.0))
    rpy = attr_floats(o, "rpy", 3, (0.0, 0.0, 0.0))
    return Pose(rpy_to_matrix(rpy), xyz)


def _package_roots(pkg: str, base_dir: str, package_dirs: tuple, ros_path: str):
    """Folders that may hold package ``pkg``'s files, most likely first (lazily)."""
    for d in package_dirs:
        yield os.path.join(str(d), pkg)
    for d in ros_path.split(os.pathsep):
        if d:
            yield os.path.join(d, pkg)
    anc = base_dir
    while True:
        yield os.path.join(anc, pkg)
        if os.path.basename(anc) == pkg:
            yield anc
        parent = os.path.dirname(anc)
        if parent == anc:
            return
        anc = parent


_ROOT_CACHE: dict[tuple, str] = {}


def resolve_uri(uri: str, base_dir: Path, package_dirs=()) -> Path | None:
    """The file a mesh ``filename`` names, or None when it cannot be found.

    ``package://PKG/rel``: ``DIR/PKG/rel`` for DIR in ``package_dirs`` and in
    ``$ROS_PACKAGE_PATH``, then the URDF's directory and its ancestors
    (``A/PKG/rel``, or ``A/rel`` if A is named PKG).  ``file://abs`` and plain
    paths: relative to ``base_dir``.  The package folder found first is
    remembered for the next look-ups.
    """
    base = os.path.abspath(str(base_dir))
    if uri.startswith("package://"):
        pkg, _, rel = uri[len("package://"):].partition("/")
        key = (pkg, base, tuple(map(str, package_dirs)), os.environ.get("ROS_PACKAGE_PATH", ""))
        hit = _ROOT_CACHE.get(key)
        if hit is not None and os.path.isfile(os.path.join(hit, rel)):
            return Path(os.path.normpath(os.path.join(hit, rel)))
        for root in _package_roots(*key):
            f = os.path.join(root, rel)
            if os.path.isfile(f):
                _ROOT_CACHE[key] = root
                return Path(os.path.normpath(f))
        return None
    if uri.startswith("file://"):
        uri = uri[len("file://"):]
    f = os.path.normpath(os.path.join(base, uri))
    return Path(f) if os.path.isfile(f) else None


def _geometry(shape_el, role: str, base_dir: Path, package_dirs, check_meshes: bool) -> Geometry | None:
    pose = origin_pose(shape_el)
    g = shape_el.find("geometry")
    if g is None or len(g) == 0:
        raise error(shape_el, f"<{role}> needs a <geometry> with one shape")
    s = g[0]
    if s.tag == "box":
        size = attr_floats(s, "size", 3)
        if size is None:
            raise error(s, "<box> needs attribute 'size'")
        return Geometry("box", {"size": size}, pose, None, role)
    if s.tag in ("cylinder", "capsule"):
        r = attr_float(s, "radius")
        ln = attr_float(s, "length")
        if r is None or ln is None:
            raise error(s, f"<{s.tag}> needs attributes 'radius' and 'length'")
        return Geometry(s.tag, {"radius": r, "length": ln}, pose, None, role)
    if s.tag == "sphere":
        r = attr_float(s, "radius")
        if r is None:
            raise error(s, "<sphere> needs attribute 'radius'")
        return Geometry("sphere", {"radius": r}, pose, None, role)
    if s.tag == "mesh":
        uri = required(s, "filename")
        scale = attr_floats(s, "scale", (1, 3), (1.0, 1.0, 1.0))
        scale = np.broadcast_to(scale, (3,)).copy()
        path = resolve_uri(uri, base_dir, package_dirs)
        if path is None:
            where = f"{s.file}:{s.line}"
            if check_meshes and role == "collision":
                raise error(s, f"mesh file not found: {uri!r} (package_dirs: {list(map(str, package_dirs))})")
            log.warning("%s: %s mesh not found: %r (shape skipped)", where, role, uri)
            return None
        return Geometry("mesh", {"scale": scale, "uri": uri}, pose, str(path), role)
    raise error(s, f"unknown geometry <{s.tag}> (expected box, cylinder, sphere, capsule or mesh)")


def _inertial(link_el, name: str) -> MassProperties | None:
    inl = link_el.find("inertial")
    if inl is None:
        return None
    pose = origin_pose(inl)
    m_el = inl.find("mass")
    if m_el is None:
        raise error(inl, f"link {name!r}: <inertial> needs <mass value=...>")
    mass = attr_float(m_el, "value")
    if mass is None:
        raise error(m_el, "<mass> needs attribute 'value'")
    if mass < 0:
        raise error(m_el, f"link {name!r}: mass must be >= 0, got {mass:g}")
    i_el = inl.find("inertia")
    if i_el is None:
        raise error(inl, f"link {name!r}: <inertial> needs <inertia ixx ixy ixz iyy iyz izz>")
    vals = {}
    for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
        v = attr_float(i_el, k)
        if v is None:
            raise error(i_el, f"<inertia> needs attribute {k!r}")
        vals[k] = v
    J = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]],
                  [vals["ixy"], vals["iyy"], vals["iyz"]],
                  [vals["ixz"], vals["iyz"], vals["izz"]]])
    if mass > 0:
        problem = inertia_problem(J)
        if problem and not np.allclose(J, 0.0):
            log.warning("%s:%s: link %r: %s (kept as written)", link_el.file, i_el.line, name, problem)
    R = pose.rotation
    return MassProperties(mass, pose.translation, R @ J @ R.T)


def read_urdf(path, *, package_dirs=(), base: str = "fixed", inertia_from_geometry_density=None,
              massless: str = "check", check_meshes: bool = True, text: str | None = None) -> Assembly:
    """Read a URDF file into an :class:`Assembly`.

    Parameters
    ----------
    path : str or Path
        The URDF file (used for messages and relative paths when ``text`` is given).
    package_dirs : sequence of str
        Directories that contain ROS packages, for ``package://PKG/...`` meshes.
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
    root_el = parse_xml(path, text)
    return urdf_from_element(root_el, Path(path), package_dirs=package_dirs, base=base,
                             inertia_from_geometry_density=inertia_from_geometry_density,
                             massless=massless, check_meshes=check_meshes)


def urdf_from_element(root_el, path: Path, *, package_dirs=(), base="fixed", inertia_from_geometry_density=None,
                      massless="check", check_meshes=True) -> Assembly:
    """Build the Assembly from a parsed ``<robot>`` element (see :func:`read_urdf`)."""
    file = str(path)
    base_dir = Path(path).resolve().parent
    if root_el.tag != "robot":
        raise error(root_el, f"root element is <{root_el.tag}>, expected <robot>")
    for el in root_el.iter():
        if el.tag.startswith("xacro:"):
            raise error(el, f"<{el.tag}>: this is an unexpanded xacro file; run xacro on it first")
    robot_name = root_el.get("name")
    if not robot_name:
        raise error(root_el, "<robot> has no name (attribute 'name' is required)")

    links: dict[str, object] = {}
    for l_el in root_el.findall("link"):
        name = required(l_el, "name")
        if name in links:
            raise error(l_el, f"duplicate link name {name!r} (first at line {links[name].line})")
        links[name] = l_el
    if not links:
        raise error(root_el, "the robot has no <link>")

    joints: dict[str, object] = {}
    parent_of: dict[str, str] = {}      # child link -> joint name
    children: dict[str, list[str]] = {n: [] for n in links}
    for j_el in root_el.findall("joint"):
        name = required(j_el, "name")
        if name in joints:
            raise error(j_el, f"duplicate joint name {name!r} (first at line {joints[name].line})")
        jtype = required(j_el, "type")
        if jtype not in URDF_JOINT_TYPES:
            raise error(j_el, f"joint {name!r}: unknown joint type {jtype!r}{did_you_mean(jtype, URDF_JOINT_TYPES)} (expected one of "
                              f"{', '.join(URDF_JOINT_TYPES)})")
        ends = {}
        for tag in ("parent", "child"):
            e = j_el.find(tag)
            if e is None:
                raise error(j_el, f"joint {name!r} needs <{tag} link=...>")
            link = required(e, "link")
            if link not in links:
                raise error(e, f"joint {name!r}: unknown {tag} link {link!r}{did_you_mean(link, links)}")
            ends[tag] = link
        if ends["parent"] == ends["child"]:
            raise error(j_el, f"joint {name!r} connects link {ends['parent']!r} to itself")
        if ends["child"] in parent_of:
            other = parent_of[ends["child"]]
            raise error(j_el, f"link {ends['child']!r} has two parent joints ({other!r} at line "
                              f"{joints[other].line} and {name!r}); URDF describes a tree")
        parent_of[ends["child"]] = name
        children[ends["parent"]].append(name)
        joints[name] = j_el

    def ends_of(jname):
        j_el = joints[jname]
        return j_el.find("parent").get("link"), j_el.find("child").get("link")

    roots = [n for n in links if n not in parent_of]
    if len(roots) > 1:
        second = links[roots[1]]
        raise error(second, f"the robot has {len(roots)} root links ({', '.join(roots)}); "
                            "URDF needs exactly one (connect them with joints)")
    if not roots:
        jname = next(iter(joints))
        cyc = _cycle_from(jname, ends_of, parent_of)
        raise error(joints[jname], f"the joints form a cycle ({' -> '.join(cyc)}); URDF describes a tree")
    root = roots[0]

    # poses down the tree (breadth first); links not reached lie on a cycle
    link_pose: dict[str, Pose] = {root: Pose()}
    order = [root]
    queue = deque([root])
    while queue:
        link = queue.popleft()
        for jname in children[link]:
            _, child = ends_of(jname)
            link_pose[child] = link_pose[link].compose(origin_pose(joints[jname]))
            order.append(child)
            queue.append(child)
    if len(order) != len(links):
        stray = next(n for n in links if n not in link_pose)
        cyc = _cycle_from(parent_of[stray], ends_of, parent_of)
        raise error(joints[parent_of[stray]],
                    f"the joints form a cycle ({' -> '.join(cyc)}); URDF describes a tree")

    # mass properties
    mass_props: dict[str, MassProperties | None] = {}
    geoms: dict[str, tuple[Geometry, ...]] = {}
    for name, l_el in links.items():
        mass_props[name] = _inertial(l_el, name)
        gl = []
        for role in ("visual", "collision"):
            for s_el in l_el.findall(role):
                g = _geometry(s_el, role, base_dir, package_dirs, check_meshes)
                if g is not None:
                    gl.append(g)
        geoms[name] = tuple(gl)

    root_is_ground = (root in GROUND_ROOT_NAMES and mass_props[root] is None)
    # a link named like the reserved ground body (other than a massless root) is renamed
    body_name = {n: n for n in links}
    if GROUND in links and not (root_is_ground and root == GROUND):
        new = GROUND + "_link"
        while new in links:
            new = "_" + new
        body_name[GROUND] = new
        log.warning("%s:%s: link %r renamed %r (the name is reserved for the fixed world)",
                    file, links[GROUND].line, GROUND, new)

    computed: dict[str, str] = {}
    if inertia_from_geometry_density is not None:
        rho = float(inertia_from_geometry_density)
        if not rho > 0:
            raise InputError(f"inertia_from_geometry_density must be > 0, got {rho}", file=file)
        for name in order:
            if mass_props[name] is not None or (name == root and root_is_ground):
                continue
            shapes = [g for g in geoms[name] if g.role == "collision"] or \
                     [g for g in geoms[name] if g.role == "visual"]
            if shapes:
                try:
                    mass_props[name] = shapes_mass_properties(shapes, rho)
                except InputError as exc:
                    raise error(links[name], f"link {name!r}: inertia from geometry: {exc.message}") from None
                computed[name] = f"computed from {len(shapes)} {shapes[0].role} shape(s) at density {rho:g} kg/m^3"

    if massless == "check":
        subtree_mass: dict[str, float] = {}
        for name in reversed(order):
            m = mass_props[name].mass if mass_props[name] is not None else 0.0
            for jname in children[name]:
                m += subtree_mass[ends_of(jname)[1]]
            subtree_mass[name] = m
        for name in order:
            if mass_props[name] is not None or name == root:
                continue
            jname = parent_of[name]
            if joints[jname].get("type") == "fixed" or subtree_mass[name] > 0.0:
                continue
            if not children[name]:
                log.warning("%s:%s: link %r has no <inertial>: a massless leaf moved by joint %r "
                            "(accepted as Pinocchio does; the mass matrix is singular along it)",
                            file, links[name].line, name, jname)
                continue
            raise error(links[name], f"link {name!r} has no <inertial> and joint {jname!r} moves no mass "
                                     "(the link and all links below it are massless); give it <inertial>, "
                                     "or pass inertia_from_geometry_density or massless='allow'")

    bodies = []
    for name in order:
        if name == root and root_is_ground:
            continue
        l_el = links[name]
        mp = mass_props[name]
        src = {"pose": Source(file, l_el.line)}
        if body_name[name] != name:
            src["name"] = Source(file, l_el.line, f"URDF link {name!r}")
        if mp is None:
            mp = MassProperties.zero()
            src["mass"] = Source(file, l_el.line, "massless: no <inertial>")
        elif name in computed:
            src["mass"] = Source(file, l_el.line, computed[name])
        else:
            src["mass"] = Source(file, l_el.find("inertial").line)
        bodies.append(Body(body_name[name], link_pose[name], mp, geoms[name], src))

    actuators = _transmissions(root_el, joints)

    out_joints = []
    ground_of = (lambda n: GROUND if (root_is_ground and n == root) else body_name[n])
    if not root_is_ground:
        jn = "root_joint"
        while jn in joints:
            jn = "_" + jn
        out_joints.append(Joint(jn, "fixed" if base == "fixed" else "free", GROUND, body_name[root],
                                origin=np.zeros(3), source=Source(file, root_el.line, f"{base} base")))
    for name in order[1:]:
        jname = parent_of[name]
        j_el = joints[jname]
        parent, child = ends_of(jname)
        jtype = URDF_JOINT_TYPES[j_el.get("type")]
        pose = link_pose[child]
        axis = np.array([1.0, 0.0, 0.0])
        a_el = j_el.find("axis")
        if a_el is not None:
            axis = attr_floats(a_el, "xyz", 3, (1.0, 0.0, 0.0))
        n = np.linalg.norm(axis)
        if jtype in ("revolute", "continuous", "prismatic", "planar"):
            if not n > 0:
                raise error(a_el if a_el is not None else j_el, f"joint {jname!r}: axis must be non-zero")
            axis = pose.rotation @ (axis / n)
        else:
            axis = np.array([0.0, 0.0, 1.0])
        limits = Limits()
        l_el = j_el.find("limit")
        if l_el is not None:
            lo = attr_float(l_el, "lower", None)
            hi = attr_float(l_el, "upper", None)
            if jtype == "continuous":
                lo = hi = None
            elif lo is not None and hi is not None:
                if lo > hi:
                    raise error(l_el, f"joint {jname!r}: limit lower {lo:g} > upper {hi:g}")
            limits = Limits(lo, hi, attr_float(l_el, "velocity", None), attr_float(l_el, "effort", None))
        damping = 0.0
        d_el = j_el.find("dynamics")
        if d_el is not None:
            damping = attr_float(d_el, "damping", 0.0)
        motor = actuators.get(jname)
        out_joints.append(Joint(jname, jtype, ground_of(parent), body_name[child], origin=pose.translation, axis=axis,
                                limits=limits, actuated=motor is not None, motor=motor, damping=damping,
                                source=Source(file, j_el.line)))

    couplings = []
    for jname in (parent_of[n] for n in order[1:]):
        m_el = joints[jname].find("mimic")
        if m_el is None:
            continue
        leader = required(m_el, "joint")
        if leader not in joints:
            log.warning("%s:%s: joint %r mimics unknown joint %r: coupling dropped (the joint stays "
                        "independent, as in Pinocchio's default parser)", file, m_el.line, jname, leader)
            continue
        couplings.append(Coupling(jname, leader, attr_float(m_el, "multiplier", 1.0),
                                  attr_float(m_el, "offset", 0.0), source=Source(file, m_el.line)))
        log.info("%s:%s: joint %r mimics %r (kept as a coupling)", file, m_el.line, jname, leader)

    return Assembly(robot_name, tuple(bodies), tuple(out_joints), couplings=tuple(couplings),
                    source_file=file)


def _cycle_from(jname, ends_of, parent_of):
    """Link names around the cycle reached by walking parents from joint ``jname``'s child."""
    seen = []
    link = ends_of(jname)[1]
    while link not in seen:
        seen.append(link)
        if link not in parent_of:
            return seen
        link = ends_of(parent_of[link])[0]
    cyc = seen[seen.index(link):]
    return list(reversed(cyc)) + [cyc[-1]]


def _transmissions(root_el, joints) -> dict[str, Motor]:
    motors = {}
    for t_el in root_el.findall("transmission"):
        act = t_el.find("actuator")
        act_name = act.get("name") if act is not None else t_el.get("name", "motor")
        ratio = 1.0
        if act is not None:
            r_el = act.find("mechanicalReduction")
            if r_el is not None and r_el.text and r_el.text.strip():
                ratio = text_float(r_el)
        for j in t_el.findall("joint"):
            jn = j.get("name")
            if jn in joints and joints[jn].get("type") != "fixed":
                motors[jn] = Motor(act_name or jn, None, ratio if ratio != 0 else 1.0, 0.0)
    return motors
