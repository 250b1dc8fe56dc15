"""SDFormat reader (version 1.6 and later): models, links, joints and frames.

Frame semantics (http://sdformat.org/tutorials?tut=pose_frame_semantics):

* SDFormat 1.7 and later: every ``<pose>`` may name the frame it is given in
  with ``relative_to``.  Defaults: a link's pose is relative to the model frame
  (``__model__``); a joint's pose to its **child** link; a ``<frame>``'s pose to
  the frame it is ``attached_to`` (the model frame by default); a visual's or
  collision's pose and an inertial's pose to their link.  A joint axis ``xyz``
  is expressed in the joint frame unless ``expressed_in`` names another frame.
* SDFormat 1.6: link poses relative to the model frame, joint poses relative
  to the child link, ``xyz`` in the joint frame, or in the model frame when
  ``<use_parent_model_frame>`` is true.
* Poses are ``x y z roll pitch yaw`` (fixed axes, ``Rz Ry Rx``; ``degrees="true"``
  for degrees) or, with ``rotation_format="quat_xyzw"``, ``x y z qx qy qz qw``.

The reference configuration is the one the poses describe (the joints are
listed as in seed 004, Table 1: type, reference body, secondary body).  Joints keep the
file's parent (reference body) and child (secondary body); a parent named
``world`` is :data:`~parsers.assembly.GROUND`.  Joint types: revolute,
continuous, prismatic, fixed, ball -> spherical, universal (``axis`` fixed in
the parent, ``axis2`` in the child).  **A joint graph with cycles is a
mechanism with loops, not an error**: every joint is kept, and the graph stage
finds the loops.

Choices (documented behaviour):

* A set of links that no joint chain connects to the world floats freely, as
  in Gazebo: it gets a ``free`` joint ``<link>_free`` from ground to its first
  link (the model's ``canonical_link`` when it belongs to the set).  A
  ``<static>`` model is welded: one ``fixed`` joint ``<link>_static`` per link.
* A link without ``<inertial>`` takes SDFormat's default inertial (mass 1 kg,
  unit inertia), with a logged warning; ``<inertial auto="true">`` (SDFormat
  1.11) computes mass properties from the link's collisions at their
  ``<density>`` (default 1000 kg/m^3) through :mod:`parsers.massprops`.
* A ``<world>`` with several models names bodies and joints ``model::name``.
  Nested models, ``<include>`` and revolute2/screw/gearbox joints are refused.
* Mesh URIs: ``model://NAME/rel`` and ``package://NAME/rel`` are looked up in
  ``package_dirs``, next to the file and in its parent folders; relative paths
  start at the file's folder; a collision mesh that cannot be found is an
  InputError.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from .assembly import GROUND, Assembly, Body, Joint, Limits, Pose, Source
from .errors import InputError, did_you_mean
from .sdf_link import link_contents, pose_of
from .xmlutil import error, parse_xml, text_bool, text_float, text_floats

log = logging.getLogger(__name__)

JOINT_MAP = {"revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic", "fixed": "fixed",
             "ball": "spherical", "universal": "universal"}
MODEL = "__model__"


def _version(el) -> tuple[int, int]:
    v = el.get("version")
    if v is None:
        raise error(el, "<sdf> needs attribute 'version'")
    try:
        major, minor = (int(x) for x in v.strip().split(".")[:2])
    except ValueError:
        raise error(el, f"<sdf> version {v!r} is not MAJOR.MINOR") from None
    return major, minor


class _Model:
    """Frame graph of one model: name -> (pose element owner, relative_to, pose)."""

    def __init__(self, el, version, file):
        self.el = el
        self.v17 = version >= (1, 7)
        self.file = file
        self.frames: dict[str, tuple[object, str | None, Pose, object]] = {}
        self.world: dict[str, Pose] = {}

    def add(self, name, owner, rel, pose, pose_el=None):
        if name in self.frames:
            raise error(owner, f"frame name {name!r} is used twice in model {self.el.get('name')!r}")
        self.frames[name] = (owner, rel, pose, pose_el if pose_el is not None else owner)

    def resolve(self, name, at=None, stack=()) -> Pose:
        """Pose of frame ``name`` in the model frame."""
        if name == MODEL:
            return Pose()
        if name in self.world:
            return self.world[name]
        if name not in self.frames:
            raise error(at if at is not None else self.el, f"unknown frame {name!r}{did_you_mean(name, self.frames)}")
        if name in stack:
            raise error(self.frames[name][0], f"the poses form a cycle: {' -> '.join(stack + (name,))}")
        owner, rel, pose, pose_el = self.frames[name]
        out = self.resolve(rel, pose_el, stack + (name,)).compose(pose)
        self.world[name] = out
        return out


def read_sdf(path, *, package_dirs=(), text: str | None = None) -> Assembly:
    """Read an SDFormat file (1.6 or later) into an :class:`Assembly`.

    Parameters
    ----------
    path : str or Path
        The ``.sdf`` file (names the document when ``text`` is given).
    package_dirs : sequence of str
        Directories searched for ``model://`` and ``package://`` mesh URIs.
    text : str, optional
        The document itself.

    Returns
    -------
    Assembly
        Bodies at the poses of the file (in the world frame); joints with
        origins and axes in the world frame; loops kept as joints.
    """
    path = Path(path)
    file = str(path)
    root = parse_xml(path, text)
    if root.tag != "sdf":
        raise error(root, f"root element is <{root.tag}>, expected <sdf>")
    version = _version(root)
    if version < (1, 6):
        log.warning("%s: SDFormat %d.%d read with 1.6 semantics", file, *version)
    worlds = root.findall("world")
    models = root.findall("model")
    gravity = np.array([0.0, 0.0, -9.81])
    model_poses = []
    if worlds:
        if len(worlds) > 1:
            raise error(worlds[1], "several <world> elements are not supported")
        w = worlds[0]
        g = w.find("gravity")
        if g is None and w.find("physics") is not None:
            g = w.find("physics").find("gravity")
        if g is not None:
            gravity = text_floats(g, 3)
        for inc in w.findall("include"):
            raise error(inc, "<include> is not supported; inline the model")
        models = w.findall("model")
    for inc in root.findall("include"):
        raise error(inc, "<include> is not supported; inline the model")
    if not models:
        raise error(root, "no <model> found")
    names = [m.get("name") for m in models]
    for m in models:
        if not m.get("name"):
            raise error(m, "<model> needs attribute 'name'")
        pose, rel, pel = pose_of(m)
        if rel not in (None, "world"):
            raise error(pel, f"a top-level model's pose must be relative to the world, not {rel!r}")
        model_poses.append(pose)
    prefix = len(models) > 1
    bodies, joints = [], []
    for m, mpose in zip(models, model_poses):
        b, j = _read_model(m, mpose, version, file, Path(path).resolve().parent, package_dirs,
                           (m.get("name") + "::") if prefix else "")
        bodies += b
        joints += j
    seen = {}
    for j in joints:
        if j.name in seen:
            raise InputError(f"duplicate joint name {j.name!r}", file=file, line=j.source.line)
        seen[j.name] = j
    name = names[0] if len(models) == 1 else (worlds[0].get("name") or path.stem)
    return Assembly(name, tuple(bodies), tuple(joints), gravity=gravity, source_file=file)


def _model_links(m, fm: "_Model") -> dict:
    """The model's ``<link>`` elements by name, each added to the frame graph."""
    links = {}
    for l_el in m.findall("link"):
        name = l_el.get("name")
        if not name:
            raise error(l_el, "<link> needs attribute 'name'")
        if name in (GROUND, "world", MODEL):
            raise error(l_el, f"link name {name!r} is reserved")
        if name in links:
            raise error(l_el, f"duplicate link name {name!r} (first at line {links[name].line})")
        links[name] = l_el
        pose, rel, pel = pose_of(l_el)
        if rel is not None and not fm.v17:
            raise error(pel, "pose@relative_to needs SDFormat 1.7 or later")
        fm.add(name, l_el, rel or MODEL, pose, pel)
    if not links:
        raise error(m, f"model {m.get('name')!r} has no <link>")
    return links


def _joint_ends(j_el, name, links) -> dict:
    """``{'parent': link, 'child': link}`` of a joint (the parent may be ``world``)."""
    ends = {}
    for tag in ("parent", "child"):
        e = j_el.find(tag)
        if e is None or not (e.text or "").strip():
            raise error(j_el, f"joint {name!r} needs <{tag}>")
        ln = e.text.strip()
        if ln == "world" and tag == "parent":
            ends[tag] = ln
            continue
        if ln not in links:
            raise error(e, f"joint {name!r}: unknown {tag} link {ln!r}{did_you_mean(ln, links)}")
        ends[tag] = ln
    if ends["parent"] == ends["child"]:
        raise error(j_el, f"joint {name!r} connects link {ends['child']!r} to itself")
    return ends


def _model_joint_elements(m, fm: "_Model", links) -> dict:
    """The model's ``<joint>`` elements by name (types and ends checked), added to the frame graph."""
    j_els = {}
    for j_el in m.findall("joint"):
        name = j_el.get("name")
        if not name:
            raise error(j_el, "<joint> needs attribute 'name'")
        if name in j_els:
            raise error(j_el, f"duplicate joint name {name!r} (first at line {j_els[name].line})")
        j_els[name] = j_el
        jtype = j_el.get("type")
        if jtype is None:
            raise error(j_el, f"joint {name!r} needs attribute 'type'")
        if jtype not in JOINT_MAP:
            raise error(j_el, f"joint {name!r}: joint type {jtype!r} is not supported (expected one of "
                              f"{', '.join(JOINT_MAP)})")
        j_el.ends = _joint_ends(j_el, name, links)
        pose, rel, pel = pose_of(j_el)
        if rel is not None and not fm.v17:
            raise error(pel, "pose@relative_to needs SDFormat 1.7 or later")
        fm.add(name, j_el, rel or j_el.ends["child"], pose, pel)
    return j_els


def _model_frames(m, fm: "_Model") -> None:
    """``<frame>`` elements (SDFormat 1.7+) into the frame graph."""
    for f_el in m.findall("frame"):
        if not fm.v17:
            raise error(f_el, "<frame> needs SDFormat 1.7 or later")
        name = f_el.get("name")
        if not name:
            raise error(f_el, "<frame> needs attribute 'name'")
        pose, rel, pel = pose_of(f_el)
        fm.add(name, f_el, rel or f_el.get("attached_to") or MODEL, pose, pel)


def _model_joint(name, j_el, X: Pose, fm: "_Model", mpose: Pose, prefix, file) -> Joint:
    """One joint in the assembly frame (``X``: its frame in the world)."""
    ends = j_el.ends
    jtype = JOINT_MAP[j_el.get("type")]
    axis, lim, damping, axis2 = np.array([0.0, 0.0, 1.0]), Limits(), 0.0, None
    if jtype in ("revolute", "continuous", "prismatic", "universal"):
        a_el = j_el.find("axis")
        if a_el is None:
            raise error(j_el, f"joint {name!r} of type {j_el.get('type')!r} needs <axis>")
        axis, lim, damping = _axis(a_el, X, fm, mpose, name, jtype)
        if jtype == "universal":
            a2 = j_el.find("axis2")
            if a2 is None:
                raise error(j_el, f"universal joint {name!r} needs <axis2>")
            axis2, _, _ = _axis(a2, X, fm, mpose, name, jtype)
            if abs(axis @ axis2) > 1e-9:
                raise error(a2, f"universal joint {name!r}: axis and axis2 must be orthogonal")
    parent = GROUND if ends["parent"] == "world" else prefix + ends["parent"]
    return Joint(prefix + name, jtype, parent, prefix + ends["child"], origin=X.translation,
                 axis=axis, axis2=axis2, limits=lim, damping=damping, source=Source(file, j_el.line))


def _static_welds(bodies, static_el, file) -> list[Joint]:
    """A ``<static>`` model: one fixed joint from ground per link."""
    return [Joint(f"{b.name}_static", "fixed", GROUND, b.name, origin=b.pose.translation,
                  source=Source(file, static_el.line, "static model")) for b in bodies]


def _floating_links(m, links, bodies, joints, prefix, file) -> list[Joint]:
    """A free joint for each set of links no joint chain ties to the world (module docstring)."""
    adj = {prefix + n: set() for n in links}
    grounded = set()
    for j in joints:
        if j.reference == GROUND:
            grounded.add(j.secondary)
        else:
            adj[j.reference].add(j.secondary)
            adj[j.secondary].add(j.reference)
    seen = _reachable(adj, grounded)
    canonical = m.get("canonical_link")
    order = [prefix + n for n in links]
    if canonical:
        if canonical not in links:
            raise error(m, f"canonical_link {canonical!r} is not a link of the model")
        order.remove(prefix + canonical)
        order.insert(0, prefix + canonical)
    out = []
    for n in order:
        if n in seen:
            continue
        seen |= _reachable(adj, {n})
        b = next(b for b in bodies if b.name == n)
        out.append(Joint(f"{n}_free", "free", GROUND, n, origin=b.pose.translation,
                         source=Source(file, links[n[len(prefix):]].line, "floating link")))
    return out


def _reachable(adj, start) -> set:
    seen, stack = set(), list(start)
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(adj[n] - seen)
    return seen


def _read_model(m, mpose: Pose, version, file, base_dir, package_dirs, prefix):
    """Bodies and joints of one ``<model>`` placed at ``mpose``, names prefixed by ``prefix``."""
    fm = _Model(m, version, file)
    for nested in m.findall("model"):
        raise error(nested, "nested models are not supported")
    for inc in m.findall("include"):
        raise error(inc, "<include> is not supported; inline the model")
    links = _model_links(m, fm)
    j_els = _model_joint_elements(m, fm, links)
    _model_frames(m, fm)
    bodies = []
    for name, l_el in links.items():
        mp, src, geoms = link_contents(l_el, fm, name, file, base_dir, package_dirs)
        bodies.append(Body(prefix + name, mpose.compose(fm.resolve(name, l_el)), mp, geoms,
                           {"pose": Source(file, l_el.line), "mass": src}))
    joints = [_model_joint(name, j_el, mpose.compose(fm.resolve(name, j_el)), fm, mpose, prefix, file)
              for name, j_el in j_els.items()]
    static = m.find("static")
    if static is not None and text_bool(static):
        return bodies, joints + _static_welds(bodies, static, file)
    return bodies, joints + _floating_links(m, links, bodies, joints, prefix, file)


def _axis(a_el, X_joint: Pose, fm: _Model, mpose: Pose, jname, jtype):
    xyz_el = a_el.find("xyz")
    if xyz_el is None:
        raise error(a_el, f"joint {jname!r}: <{a_el.tag}> needs <xyz>")
    v = text_floats(xyz_el, 3)
    if not np.linalg.norm(v) > 0:
        raise error(xyz_el, f"joint {jname!r}: axis must be non-zero")
    v = v / np.linalg.norm(v)
    expressed = xyz_el.get("expressed_in")
    if expressed is not None:
        if not fm.v17:
            raise error(xyz_el, "xyz@expressed_in needs SDFormat 1.7 or later")
        R = mpose.compose(fm.resolve(expressed, xyz_el)).rotation
    else:
        upm = a_el.find("use_parent_model_frame")
        if upm is not None and text_bool(upm):
            if fm.v17:
                raise error(upm, "<use_parent_model_frame> was removed in SDFormat 1.7; use xyz@expressed_in")
            R = mpose.rotation
        else:
            R = X_joint.rotation
    axis = R @ v
    lim = Limits()
    l_el = a_el.find("limit")
    if l_el is not None:
        def val(tag):
            c = l_el.find(tag)
            if c is None:
                return None
            x = text_float(c)
            return None if abs(x) >= 1e16 else x
        lo, hi = val("lower"), val("upper")
        if jtype == "continuous":
            lo = hi = None
        if lo is not None and hi is not None and lo > hi:
            raise error(l_el, f"joint {jname!r}: limit lower {lo:g} > upper {hi:g}")
        eff, vel = val("effort"), val("velocity")
        lim = Limits(lo, hi, None if vel is not None and vel < 0 else vel,
                     None if eff is not None and eff < 0 else eff)
    damping = 0.0
    d_el = a_el.find("dynamics")
    if d_el is not None and d_el.find("damping") is not None:
        damping = text_float(d_el.find("damping"))
    return axis, lim, damping
