"""SDFormat reader (version 1.6 and later) as gz-sim and Drake read it: models, nested models, includes.

Frame semantics (http://sdformat.org/tutorials?tut=pose_frame_semantics), see
:mod:`parsers.sdf.frames`:

* SDFormat 1.7 and later: every ``<pose>`` may name the frame it is given in
  with ``relative_to``.  Defaults: a link's or nested model's pose is relative to
  its model frame (``__model__``); a joint's pose to its **child** frame; a
  ``<frame>``'s pose to the frame it is ``attached_to`` (the model frame by
  default); a visual's, collision's or inertial's pose to its link.  A joint axis
  ``xyz`` is expressed in the joint frame unless ``expressed_in`` names another frame.
* SDFormat 1.6: link poses relative to the model frame, joint poses relative
  to the child link, ``xyz`` in the joint frame, or in the model frame when
  ``<use_parent_model_frame>`` is true.
* Poses are ``x y z roll pitch yaw`` (fixed axes, ``Rz Ry Rx``; ``degrees="true"``
  for degrees) or, with ``rotation_format="quat_xyzw"``, ``x y z qx qy qz qw``.
* Nested ``<model>`` s and ``<include>`` d models (:mod:`parsers.sdf.include`)
  scope their names: link ``l`` of model ``inner`` nested in the read model is
  body ``inner::l`` (joints and frames alike), as SDFormat 1.8 scopes them.  A
  joint's ``<parent>``/``<child>`` may name any frame of its scope (the link it
  is attached to is the body); ``placement_frame`` places a model by another frame.

The reference configuration is the one the poses describe (the joints are
listed as in seed 004, Table 1: type, reference body, secondary body).  Joints
keep the file's parent (reference body) and child (secondary body); a parent
named ``world`` is :data:`~parsers.assembly.GROUND`, unless the model has a link named
``world``: that is just a link, which the joint names (as pybullet reads its SDF worlds).  Joint types and the
couplings of ``screw``, ``gearbox`` and ``<mimic>``: :mod:`parsers.sdf.joints`.
**A joint graph with cycles is a mechanism with loops, not an error**: every
joint is kept, and the graph stage finds the loops.

Choices (documented behaviour):

* A ``<world>`` holding several models: ``model=NAME`` (CLI ``--model NAME``)
  reads that one (its names unscoped); without it, when more than one model has
  joints, an InputError lists the names; otherwise every model is read, named
  ``model::name`` when there are several.
* A set of links that no joint chain connects to the world floats freely, as
  in Gazebo: it gets a ``free`` joint ``<link>_free`` from ground to its first
  link (the model's canonical link when it belongs to the set).  The links of a
  ``<static>`` model (nested or not) are welded: a ``fixed`` joint ``<link>_static`` each.
* A link without ``<inertial>`` takes SDFormat's default inertial (mass 1 kg,
  unit inertia), with a logged warning (a link of a static model: massless, welded); ``<inertial auto="true">`` (SDFormat
  1.11) computes mass properties from the link's collisions at their
  ``<density>`` (default 1000 kg/m^3) through :mod:`parsers.massprops`.
* Mesh URIs: ``model://NAME/rel`` and ``package://NAME/rel`` are looked up in
  ``package_dirs``, the model search path, next to the file and in its parent
  folders; relative paths start at the file's folder; an absolute path that
  does not exist is looked up beside the file, with a warning (pybullet's
  reading of its kuka_with_gripper worlds); a collision mesh that cannot be
  found is an InputError.
* Errors and warnings about a file outside the model's folder, ``package_dirs`` and the
  model search path say where, never what (:func:`parsers.errors.quoting_only_inside`).
* Refused, naming the feature, the file and the line: several ``<world>`` s,
  ``<include merge="true">``, network URIs, ``revolute2`` with axes that are not
  orthogonal, ``<mimic>`` of a second axis, pose@frame (SDFormat 1.5), a
  top-level model placed relative to another frame than the world.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from mbcompose.dynamics.joints import JOINTS

from ..assembly import GROUND, Assembly, Body, Joint, Pose, Source
from ..errors import FOREIGN_TEXT, InputError, did_you_mean, quoting_only_inside
from ..xml import error, file_of, parse_xml, text_floats
from .frames import MODEL, FrameEntry, FrameGraph, model_frame, scoped
from .include import ModelSpec, include_spec, inline_spec, sdf_version, search_paths
from ..urdf.geometry import package_folders
from .joints import (JOINT_MAP, axis_spring, gearbox_coupling, gearbox_reference, joint_axes, mimic_coupling,
                     screw_parts, screw_pitch)
from .link import link_contents, pose_of

log = logging.getLogger(__name__)
log.addFilter(FOREIGN_TEXT)  # (warnings about a file outside the model folder say where, not what)


def read_sdf(path, *, package_dirs=(), model_paths=(), model: str | None = None, base: str = "fixed",
             text: str | None = None) -> Assembly:
    """Read an SDFormat file (1.6 or later) into an :class:`Assembly`.

    Parameters
    ----------
    path : str or Path
        The ``.sdf`` file (names the document when ``text`` is given).
    package_dirs : sequence of str or (NAME, FOLDER) pairs
        Folders searched for ``model://`` and ``package://`` mesh URIs, and packages' own folders
        (:func:`parsers.urdf.geometry.split_package_dirs`).
    model_paths : sequence of str
        Directories searched first for ``<include>`` d ``model://NAME`` models
        (then ``$GZ_SIM_RESOURCE_PATH`` and the others of :mod:`parsers.sdf.include`).
    model : str, optional
        The model of a ``<world>`` to read (module docstring).
    base : 'fixed'
        SDFormat says itself what floats; 'floating' is refused.
    text : str, optional
        The document itself.

    Returns
    -------
    Assembly
        Bodies at the poses of the file (in the world frame); joints with
        origins and axes in the world frame; loops kept as joints; couplings.
    """
    path = Path(path)
    if base != "fixed":
        raise InputError("--base floating applies to URDF and MJCF roots; an SDFormat model floats when no "
                         "joint ties it to the world", file=str(path))
    folders = (path.resolve().parent, *package_folders(package_dirs), *search_paths(model_paths))
    with quoting_only_inside(*folders):
        return _read_sdf(path, parse_xml(path, text), package_dirs, model_paths, model)


def _read_sdf(path: Path, root, package_dirs, model_paths, model) -> Assembly:
    """:func:`read_sdf` of the parsed document ``root``."""
    if root.tag != "sdf":
        raise error(root, f"root element is <{root.tag}>, expected <sdf>")
    version = sdf_version(root)
    if version < (1, 6):
        log.warning("%s: SDFormat %d.%d read with 1.6 semantics", path, *version)
    base_dir = path.resolve().parent
    holder, gravity = _world(root)
    specs = [inline_spec(el, version, base_dir) if el.tag == "model"
             else include_spec(el, base_dir, model_paths, in_world=holder is not root)
             for el in holder if el.tag in ("model", "include")]
    specs = [s for s in specs if s is not None]
    if not specs:
        raise error(root, "no <model> found")
    specs = _chosen(specs, model, holder)
    prefix = len(specs) > 1
    search = tuple(package_dirs) + tuple(search_paths(model_paths))
    bodies, joints, couplings = [], [], []
    for spec in specs:
        b, j, c = _read_model(spec, search, model_paths, (spec.name + "::") if prefix else "")
        bodies += b
        joints += j
        couplings += c
    seen = {}
    for j in joints:
        if j.name in seen:
            raise InputError(f"duplicate joint name {j.name!r}", file=j.source.file, line=j.source.line)
        seen[j.name] = j
    name = specs[0].name if len(specs) == 1 else (holder.get("name") or path.stem)
    return Assembly(name, tuple(bodies), tuple(joints), gravity=gravity, couplings=tuple(couplings),
                    source_file=str(path))


def is_sdformat(path) -> bool:
    """True for a file the SDFormat reader reads: ``.sdf``, ``.world``, or ``.xml`` with root ``<sdf>``."""
    from ..xml import xml_root_tag

    suffix = Path(path).suffix.lower()
    return suffix in (".sdf", ".world") or (suffix == ".xml" and xml_root_tag(path)[0] == "sdf")


def _world(root):
    """(the element holding the models: the ``<world>`` or ``<sdf>``, gravity (3,))."""
    gravity = np.array([0.0, 0.0, -9.81])
    worlds = root.findall("world")
    if not worlds:
        return root, gravity
    if len(worlds) > 1:
        raise error(worlds[1], "several <world> elements are not supported")
    w = worlds[0]
    g = w.find("gravity")
    if g is None and w.find("physics") is not None:
        g = w.find("physics").find("gravity")
    return w, (gravity if g is None else text_floats(g, 3))


def _articulated(spec: ModelSpec) -> bool:
    """Has joints (a nested include counts: it may bring some)."""
    return any(el.tag in ("joint", "include") for el in spec.el.iter())


def _chosen(specs: list[ModelSpec], model: str | None, holder) -> list[ModelSpec]:
    """The models to read (module docstring, Choices)."""
    names = [s.name for s in specs]
    for s in specs:
        if names.count(s.name) > 1:
            raise error(s.el, f"two models are named {s.name!r}")
    if model is not None:
        if model not in names:
            raise error(holder, f"no model {model!r} in this file (models: {', '.join(names)})"
                                f"{did_you_mean(model, names)}")
        return [specs[names.index(model)]]
    moving = [s.name for s in specs if _articulated(s)]
    if len(moving) > 1:
        where = "world" if holder.tag == "world" else "file"
        raise error(holder, f"the {where} holds several models with joints ({', '.join(moving)}): choose one "
                            "with --model NAME")
    return specs


class _Scope:
    """One model of the tree being read: its spec, scope prefix and elements (``frames``: the graph)."""

    def __init__(self, spec: ModelSpec, scope: str, frames: FrameGraph, static: bool):
        self.spec, self.scope, self.frames, self.static = spec, scope, frames, static
        self.v17 = spec.version >= (1, 7)
        self.links, self.joints = {}, {}

    def resolve(self, name, at=None) -> Pose:
        """Pose (in the top model frame) of the frame ``name`` as written in this scope."""
        return self.frames.pose(self.frames.check(name, self.scope, at), at)

    def model_pose(self) -> Pose:
        return self.frames.pose(model_frame(self.scope))

    def relative(self, pose_el_owner, default: str):
        """(relative_to scoped, pose, pose element) of an element's ``<pose>``."""
        pose, rel, pel = pose_of(pose_el_owner)
        if rel is not None and not self.v17:
            raise error(pel, "pose@relative_to needs SDFormat 1.7 or later")
        return (scoped(self.scope, rel) if rel else default), pose, pel


def _named(el, what, taken=(), reserved=("world", MODEL)) -> str:
    name = el.get("name")
    if not name:
        raise error(el, f"<{what}> needs attribute 'name'")
    return _checked_name(name, el, what, taken, reserved)


def _checked_name(name, el, what, taken=(), reserved=("world", MODEL)) -> str:
    if name in reserved or name in taken:
        raise error(el, f"{what} name {name!r} is reserved")
    if "::" in name:
        raise error(el, f"{what} name {name!r} contains '::', the scope delimiter of SDFormat 1.8")
    return name


def _collect(spec: ModelSpec, scope: str, frames: FrameGraph, model_paths, static: bool, out: list) -> str:
    """Put the frames of ``spec`` and of its nested models in ``frames``; returns its canonical link."""
    s = _Scope(spec, scope, frames, static or spec.static)
    out.append(s)
    here = model_frame(scope)
    for l_el in spec.el.findall("link"):
        name = _named(l_el, "link", (GROUND,), (MODEL,))
        rel, pose, pel = s.relative(l_el, here)
        frames.add(scope + name, FrameEntry(l_el, "link", rel, pose, pel, scope=scope))
        s.links[scope + name] = l_el
    nested = [inline_spec(el, spec.version, spec.base_dir) if el.tag == "model"
              else include_spec(el, spec.base_dir, model_paths, spec.stack)
              for el in spec.el if el.tag in ("model", "include")]
    canon = []
    for ns in nested:
        inner = scope + _checked_name(ns.name, ns.el, "model")
        rel, pose, pel = s.relative(ns.placed_by, here)
        placement = None if ns.placement is None else scoped(inner + "::", ns.placement)
        frames.add(inner, FrameEntry(ns.placed_by, "model", rel, pose, pel, placement=placement, scope=scope))
        frames.canonical[inner] = _collect(ns, inner + "::", frames, model_paths, s.static, out)
        canon.append(frames.canonical[inner])
        if placement is not None:
            frames.check(ns.placement, inner + "::", ns.placed_by)
    for j_el in spec.el.findall("joint"):
        name = _named(j_el, "joint")
        child = j_el.find("child")
        if child is None or not (child.text or "").strip():
            raise error(j_el, f"joint {name!r} needs <child>")
        rel, pose, pel = s.relative(j_el, scoped(scope, child.text.strip()))
        frames.add(scope + name, FrameEntry(j_el, "joint", rel, pose, pel, scoped(scope, child.text.strip()),
                                            scope=scope))
        s.joints[scope + name] = j_el
    for f_el in spec.el.findall("frame"):
        if not s.v17:
            raise error(f_el, "<frame> needs SDFormat 1.7 or later")
        name = _named(f_el, "frame")
        attached = scoped(scope, f_el.get("attached_to") or MODEL)
        rel, pose, pel = s.relative(f_el, attached)
        frames.add(scope + name, FrameEntry(f_el, "frame", rel, pose, pel, attached, scope=scope))
    return _canonical_link(spec, scope, s.links, canon, frames)


def _canonical_link(spec, scope, links, nested_canonical, frames) -> str:
    c = spec.el.get("canonical_link")
    if c:
        full = frames.check(c, scope, spec.el)
        if frames.entries[full].kind != "link":
            raise error(spec.el, f"canonical_link {c!r} is not a link")
        return full
    if links:
        return next(iter(links))
    if nested_canonical:
        return nested_canonical[0]
    raise error(spec.el, f"model {spec.name!r} has no <link>")


def _read_model(spec: ModelSpec, search, model_paths, prefix):
    """Bodies, joints and couplings of one top-level model, names prefixed by ``prefix``."""
    pose, rel, pel = pose_of(spec.placed_by)
    if rel not in (None, "world"):
        raise error(pel, f"a top-level model's pose must be relative to the world, not {rel!r}")
    frames, scopes = FrameGraph(), []
    frames.canonical[MODEL] = _collect(spec, "", frames, model_paths, False, scopes)
    for s in scopes:                      # joint ends first: a wrong <child> is named at its own line
        for name, j_el in s.joints.items():
            _joint_ends(j_el, name, s, prefix)
    frames.validate()
    if spec.placement is not None:
        pose = pose.compose(frames.pose(frames.check(spec.placement, "", spec.el)).inverse())
    bodies, joints, couplings, geared = [], [], [], []
    for s in scopes:
        for name, l_el in s.links.items():
            mp, src, geoms = link_contents(l_el, s, name[len(s.scope):], file_of(l_el), s.spec.base_dir, search)
            bodies.append(Body(prefix + name, pose.compose(frames.pose(name, l_el)), mp, geoms,
                               {"pose": Source(file_of(l_el), l_el.sourceline), "mass": src}))
    for s in scopes:
        for name, j_el in s.joints.items():
            j, extra, c = _joint(name, j_el, pose, s, prefix)
            if j_el.get("type") == "gearbox":
                geared.append((name, j_el, j, s))
                continue
            joints += j
            bodies += extra
            couplings += c
    for name, j_el, (axis, axis2, ends), s in geared:
        ref = gearbox_reference(j_el, name)
        ref_body = GROUND if ref == "world" else prefix + frames.attached_link(frames.check(ref, s.scope, j_el))
        couplings.append(gearbox_coupling(prefix + name, j_el, axis, axis2, ends, ref_body, joints))
    welded = [b for s in scopes if s.static for b in bodies if b.name[len(prefix):] in s.links]
    joints += [Joint(f"{b.name}_static", "fixed", GROUND, b.name, origin=b.pose.translation,
                     source=Source(b.sources["pose"].file, b.sources["pose"].line, "static model")) for b in welded]
    joints += _floating_links(bodies, joints, prefix + frames.canonical[MODEL])
    return bodies, joints, couplings


def _joint(name, j_el, mpose: Pose, s: _Scope, prefix):
    """(joints, extra bodies, couplings) of one ``<joint>``; a gearbox gives ``((axis, axis2, ends), (), ())``."""
    jtype = j_el.get("type")
    if jtype is None:
        raise error(j_el, f"joint {name!r} needs attribute 'type'")
    if jtype not in JOINT_MAP:
        raise error(j_el, f"joint {name!r}: joint type {jtype!r} is not supported (expected one of "
                          f"{', '.join(JOINT_MAP)})")
    ends = _joint_ends(j_el, name, s, prefix)
    X = mpose.compose(s.frames.pose(name, j_el))
    axis, axis2, lim, damping = joint_axes(j_el, X, _WorldView(s, mpose), name)
    if jtype == "gearbox":
        return (axis, axis2, ends), (), ()
    stiffness, springref = axis_spring(j_el, name) if JOINTS[JOINT_MAP[jtype]].nv == 1 else (0.0, 0.0)
    joint = Joint(prefix + name, JOINT_MAP[jtype], ends[0], ends[1], origin=X.translation, axis=axis, axis2=axis2,
                  limits=lim, damping=damping, stiffness=stiffness, springref=springref,
                  source=Source(file_of(j_el), j_el.sourceline))
    coupling = mimic_coupling(j_el, prefix + name, lambda leader, at: _leader(leader, at, s, prefix))
    couplings = [] if coupling is None else [coupling]
    if jtype == "screw":
        parts, carriage, c = screw_parts(joint, screw_pitch(j_el, name), j_el)
        return parts, [carriage], couplings + [c]
    return [joint], [], couplings


def _leader(written, at, s: _Scope, prefix) -> str:
    full = s.frames.check(written, s.scope, at)
    if s.frames.entries[full].kind != "joint":
        raise error(at, f"<mimic joint={written!r}> does not name a joint")
    return prefix + full


def _joint_ends(j_el, name, s: _Scope, prefix) -> tuple[str, str]:
    """(parent body, child body) of a joint: the links its ``<parent>``/``<child>`` frames are attached to."""
    ends = []
    for tag in ("parent", "child"):
        e = j_el.find(tag)
        if e is None or not (e.text or "").strip():
            raise error(j_el, f"joint {name!r} needs <{tag}>")
        written = e.text.strip()
        if written == "world" and s.scope + written not in s.links:
            if tag == "child":
                raise error(e, f"joint {name!r}: the child cannot be the world")
            ends.append(GROUND)
            continue
        ends.append(prefix + s.frames.attached_link(s.frames.check(written, s.scope, e, f"{tag} link"), e))
    if ends[0] == ends[1]:
        raise error(j_el, f"joint {name!r} connects link {ends[1]!r} to itself")
    return ends[0], ends[1]


class _WorldView:
    """A scope's frames in the world frame (``mpose``: the top model's pose), for joint axes."""

    def __init__(self, s: _Scope, mpose: Pose):
        self.s, self.mpose, self.v17 = s, mpose, s.v17

    def resolve(self, name, at=None) -> Pose:
        return self.mpose.compose(self.s.resolve(name, at))

    def model_pose(self) -> Pose:
        return self.mpose.compose(self.s.model_pose())


def _floating_links(bodies, joints, canonical) -> list[Joint]:
    """A free joint for each set of links no joint chain ties to the world (module docstring)."""
    adj = {b.name: set() for b in bodies}
    grounded = set()
    for j in joints:
        if j.reference == GROUND:
            grounded.add(j.secondary)
        elif j.secondary == GROUND:
            grounded.add(j.reference)
        else:
            adj[j.reference].add(j.secondary)
            adj[j.secondary].add(j.reference)
    seen = _reachable(adj, grounded)
    order = sorted(bodies, key=lambda b: b.name != canonical)
    out = []
    for b in order:
        if b.name in seen:
            continue
        seen |= _reachable(adj, {b.name})
        src = b.sources["pose"]
        out.append(Joint(f"{b.name}_free", "free", GROUND, b.name, origin=b.pose.translation,
                         source=Source(src.file, src.line, "floating link")))
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
