"""MJCF (MuJoCo XML) reader: the body tree, its joints, geoms and equality loops.

:func:`assemble` is over the 80-line function limit: it is the reader's one pass that ties the
compiler, mass, equality and mesh modules together in MuJoCo's order; splitting it further
would scatter that order.

Each joint is recorded as in seed 004, Table 1 (type, reference body,
secondary body, actuated).  Semantics follow MuJoCo's compiler (https://mujoco.readthedocs.io, XML
reference), checked in the tests against ``mujoco.MjModel`` (body masses,
inertias, positions at ``qpos0``):

* ``<compiler angle>`` (default **degree**) applies to ``euler``,
  ``axisangle`` and hinge/ball ``range``; ``eulerseq`` (default ``xyz``,
  lower case = rotating axes, upper case = fixed axes); ``coordinate="global"``
  (removed from MuJoCo) is refused; ``meshdir``/``assetdir``;
  ``inertiafromgeom`` (``auto``: geoms only where a body has no
  ``<inertial>``; ``true``: always geoms; ``false``: never);
  ``inertiagrouprange``; ``fusestatic`` (bodies without joints are merged into
  their parent, the world included, unless an ``<equality>`` names them);
  ``boundmass``, ``boundinertia``, ``balanceinertia``, ``settotalmass``
  (:mod:`parsers.mjcf.compiler`).
* Orientation: ``quat`` (w x y z), ``axisangle``, ``euler``, ``xyaxes``,
  ``zaxis``; at most one per element; an element's own orientation replaces
  the one of its default class.  ``<frame>`` elements place their children.
* ``<default>`` classes (nested, inherited), ``class`` and ``childclass``.
* Geoms sphere, capsule, cylinder, box, ellipsoid, mesh (``fromto`` included)
  contribute mass by ``mass`` or ``density`` (default 1000 kg/m^3) through
  :mod:`parsers.mjcf.mass` (closed forms of :mod:`parsers.massprops`); plane and hfield geoms are massless and allowed only in static
  bodies, as in MuJoCo.  A moving body without mass or inertia, counting the bodies
  welded to it, is an InputError (MuJoCo: "mass and inertia of moving bodies must be
  larger than mjMINVAL"); a massless body with joints that carries a welded massive
  child is accepted, as MuJoCo accepts it (:meth:`_Reader.check_moving_mass`).
  Mesh geoms follow MuJoCo's rule for each mesh ``inertia`` mode (``legacy``,
  the default, ``exact``, ``convex``, ``shell``), reproduced from MuJoCo's compiler in
  :mod:`parsers.mjcf.mesh`; open meshes are accepted as MuJoCo accepts them.
  ``read_mjcf(..., mesh_inertia='exact')`` takes the exact solid instead; a
  warning is logged wherever the two differ by more than 1%.  ``shellinertia``
  on primitive geoms spreads the mass over the surface (:mod:`parsers.mjcf.shell`).
* Joints: hinge -> revolute, slide -> prismatic, ball -> spherical,
  free -> free; a body without joints is welded to its parent by a ``fixed``
  joint named ``<body>_fixed``.  **A body with several joints becomes a chain**:
  ``parent -j1-> <body>__j1 -j2-> <body>__j2 ... -jn-> body``, the intermediate
  bodies massless and placed at the body's pose.  MuJoCo composes the joints of
  one body in document order, each axis moving with the previous joints, which
  is exactly this chain.  Unnamed joints are called ``<body>_joint<k>``, unnamed
  bodies ``body<id>`` with MuJoCo's body id.  Hinge and slide ``range`` are position limits;
  a ball's (a cone on its rotation angle, which nothing here enforces) is dropped with a warning.
* Reference configuration: MuJoCo's ``qpos0``.  A hinge/slide ``ref`` is carried
  in ``Joint.ref`` (our coordinates are MuJoCo's ``qpos``; the reference configuration
  ``model.neutral()`` is ``ref``), ``armature`` in ``Joint.armature`` (rotor inertia, in
  the dynamics; a free joint's translational armature acts on our body-frame velocity, MuJoCo's
  on the world-frame one: M agrees, the bias forces differ by ``armature omega x v``, warned).
* ``<equality>`` and fixed ``<tendon>`` (:mod:`parsers.mjcf.equality`): ``connect``
  and ``weld`` (by bodies or by sites) are loop-closing joints (``loop=True``);
  ``joint`` and ``tendon`` (over fixed tendons) are
  :class:`~parsers.assembly.Coupling` s.  Inactive constraints are skipped; flex
  equalities are refused.
* ``<tendon>`` s with a spring, a damper or an actuator (:mod:`parsers.mjcf.tendons`): fixed ones and
  spatial ones through sites as :class:`~parsers.assembly.Tendon` force elements (``Assembly.forces``);
  a spatial tendon wrapping around a geom is refused (warned with file and lines).
* ``<actuator>`` entries that name a joint (``joint`` or ``jointinparent``) mark it
  ``actuated`` with a :class:`~parsers.assembly.Motor` (the first actuator's gear, force
  range); all actuator kinds share one slot of a default class, as in MuJoCo.  ``motor``,
  ``position``, ``velocity`` and ``general`` actuators on joints become
  :class:`~parsers.assembly.Actuator` s (``Assembly.actuators``, file order); joint
  ``stiffness``/``springref``/``damping`` are the joint's spring and damper; what is not
  modelled warns, naming each element (:mod:`parsers.mjcf.actuators`).
* Errors and warnings about a file outside the model's folder (an ``<include>`` or an
  attached model climbing out of it) say where, never what (:func:`parsers.errors.quoting_only_inside`).
* ``<include file>`` is expanded in place, ``<attach>`` (:mod:`parsers.mjcf.attach`) and
  ``<replicate>`` (:mod:`parsers.mjcf.replicate`) written out as frames; mesh assets, inline
  and ``.msh`` ones included, by :mod:`parsers.mjcf.assets`; primitive geoms with a ``mesh``
  are fitted to it (:mod:`parsers.mjcf.fit`); ``<composite>`` and ``<flexcomp>`` are refused.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np

from mbcompose.dynamics.joints import JOINTS

from ..assembly import GROUND, Assembly, Body, Joint, JointForceElement, Limits, MassProperties, Pose, Source
from ..errors import FOREIGN_TEXT, InputError, did_you_mean, quoting_only_inside
from ..massprops import combine, transform_mass_properties
from ..xml import XML_BASE, error, file_of, mark_file, parse_float, parse_xml, where
from .actuators import ACTUATOR_TAGS, default_key, joint_spring, read_actuator_records, read_actuators
from .assets import read_material_assets, read_mesh_assets
from .attach import expand_attachments
from .compiler import ORIENT_ATTRS, Compiler, bool_attr, floats_attr, orientation
from .equality import (COUPLING_TYPES, LOOP_TYPES, check_coupling_joints, check_joint_references, coupling_equality,
                       coupling_in_qpos, fixed_tendons, loop_equality, loop_joint, site_pose)
from .mass import compile_masses, geom_record
from .mesh import MJ_MINVAL
from .replicate import expand_replicates
from .tendons import read_tendons

log = logging.getLogger(__name__)
log.addFilter(FOREIGN_TEXT)  # (warnings about a file outside the model folder say where, not what)

JOINT_MAP = {"hinge": "revolute", "slide": "prismatic", "ball": "spherical", "free": "free"}
UNSUPPORTED = ("composite", "flexcomp", "flex")


class _Reader:
    def __init__(self, path: Path, options):
        self.path = path
        self.file = str(path)
        self.dir = path.resolve().parent
        self.comp = Compiler()
        self.defaults: dict[str, dict[str, dict[str, str]]] = {}
        self.default_parent: dict[str, str | None] = {}
        #: class -> the actuator elements of its defaults, outermost class first: (tag, attributes)
        self.actuator_defaults: dict[str, list[tuple[str, dict]]] = {}
        self.meshes: dict[str, dict] = {}
        self.materials: dict[str, tuple] = {}
        self.bodies: list[dict] = []
        self.sites: dict[str, tuple[int, Pose]] = {}
        self.options = options

    # ---------------------------------------------------------------- input
    def expand_includes(self, el, depth=0):
        for i, c in enumerate(list(el)):
            if c.tag == "include":
                if depth > 20:
                    raise error(c, "<include> nested too deeply (a cycle?)")
                fname = c.get("file")
                if fname is None:
                    raise error(c, "<include> needs attribute 'file'")
                p = Path(fname)
                if not p.is_absolute():
                    p = self.dir / p
                if not p.is_file():
                    raise error(c, f"included file not found: {fname!r}")
                sub = parse_xml(p)
                if sub.tag != "mujoco":
                    raise error(sub, f"included file's root is <{sub.tag}>, expected <mujoco>")
                self.expand_includes(sub, depth + 1)
                el.remove(c)
                for k, s in enumerate(list(sub)):
                    el.insert(i + k, mark_file(s, file_of(s)))  # (lxml keeps its line; xml:base its file)
                return self.expand_includes(el, depth)
            if c.tag in UNSUPPORTED:
                raise error(c, f"<{c.tag}> is not supported by this reader")
            self.expand_includes(c, depth)

    def read_defaults(self, el, parent: str | None):
        name = el.get("class", "main" if parent is None else None)
        if name is None:
            raise error(el, "nested <default> needs attribute 'class'")
        if name in self.defaults:
            raise error(el, f"default class {name!r} defined twice")
        base = self.defaults[parent] if parent is not None else {}
        mine = {tag: dict(attrs) for tag, attrs in base.items()}
        self.default_parent[name] = parent
        for c in el:
            if c.tag == "default":
                continue
            mine.setdefault(default_key(c.tag), {}).update((k, v) for k, v in c.attrib.items() if k != XML_BASE)
        self.defaults[name] = mine
        self.actuator_defaults[name] = self.actuator_defaults.get(parent, []) + [
            (c.tag, {k: v for k, v in c.attrib.items() if k != XML_BASE}) for c in el if c.tag in ACTUATOR_TAGS]
        for c in el:
            if c.tag == "default":
                self.read_defaults(c, name)

    def attrs(self, el, childclass: str) -> dict[str, str]:
        cls = el.get("class", childclass)
        if cls not in self.defaults:
            if cls == "main":
                return dict(el.attrib)
            raise error(el, f"unknown default class {cls!r}{did_you_mean(cls, self.defaults)}")
        tag = default_key(el.tag)
        out = dict(self.defaults[cls].get(tag, {}))
        if el.tag == "freejoint":
            out = {}
        if any(k in el.attrib for k in ORIENT_ATTRS):       # the element's own orientation wins
            out = {k: v for k, v in out.items() if k not in ORIENT_ATTRS}
        out.update(el.attrib)
        out.pop("class", None)
        return out

    # ----------------------------------------------------------------- tree
    def walk(self, el, parent_idx, X_parent_frame: Pose, childclass, frame_pose: Pose, out_geoms, static_ok):
        """Visit the children of a body (or of a <frame>) element."""
        for c in el:
            if c.tag == "body":
                self.body(c, parent_idx, frame_pose, childclass)
            elif c.tag == "frame":
                a = dict(c.attrib)
                cc = a.get("childclass", childclass)
                if cc not in self.defaults and cc != "main":
                    raise error(c, f"unknown default class {cc!r}{did_you_mean(cc, self.defaults)}")
                fp = frame_pose.compose(Pose(orientation(c, a, self.comp), floats_attr(c, a, "pos", 3)
                                             if "pos" in a else np.zeros(3)))
                self.walk(c, parent_idx, X_parent_frame, cc, fp, out_geoms, static_ok)
            elif c.tag == "geom":
                out_geoms.append(geom_record(self, c, childclass, frame_pose))
            elif c.tag in ("joint", "freejoint"):
                self.bodies[parent_idx]["joints"].append((c, self.attrs(c, childclass), frame_pose))
            elif c.tag == "inertial":
                self.bodies[parent_idx]["inertial"] = (c, frame_pose)
            elif c.tag == "site":
                self.site(c, parent_idx, childclass, frame_pose)

    def site(self, el, parent_idx, childclass, frame_pose: Pose):
        """Record a named site: (body index, world pose at the reference configuration)."""
        a = self.attrs(el, childclass)
        name = a.get("name")
        if not name:
            return
        if name in self.sites:
            raise error(el, f"duplicate site name {name!r}")
        pos = floats_attr(el, a, "pos", 3)
        self.sites[name] = (parent_idx, site_pose(self.bodies[parent_idx]["pose"], frame_pose,
                                                  orientation(el, a, self.comp), np.zeros(3) if pos is None else pos))

    def body(self, el, parent_idx, frame_pose: Pose, childclass):
        a = el.attrib
        cc = a.get("childclass", childclass)
        if cc not in self.defaults and cc != "main":
            raise error(el, f"unknown default class {cc!r}{did_you_mean(cc, self.defaults)}")
        idx = len(self.bodies)
        pos = floats_attr(el, a, "pos", 3)
        local = frame_pose.compose(Pose(orientation(el, a, self.comp), np.zeros(3) if pos is None else pos))
        world = self.bodies[parent_idx]["pose"].compose(local)
        name = a.get("name") or f"body{idx}"
        rec = {"el": el, "name": name, "parent": parent_idx, "pose": world, "joints": [], "inertial": None,
               "geoms": [], "children": [], "mocap": bool_attr(el, "mocap", a.get("mocap", "false"))}
        self.bodies.append(rec)
        self.bodies[parent_idx]["children"].append(idx)
        self.walk(el, idx, world, cc, Pose(), rec["geoms"], False)

    # ----------------------------------------------------------------- run
    def prepare(self, root, loading=frozenset()):
        """The document's part before the tree: includes, compiler, defaults, assets, attachments, replicates."""
        if root.tag != "mujoco":
            raise error(root, f"root element is <{root.tag}>, expected <mujoco>")
        self.expand_includes(root)
        for c in root.findall("compiler"):
            self.comp.update(c)
        self.defaults["main"] = {}
        tops = root.findall("default")
        for d in tops:
            if d.get("class", "main") != "main":
                raise error(d, "the top-level <default> class must be 'main'")
            self.defaults.pop("main", None)
            self.read_defaults(d, None)
        self.meshes = read_mesh_assets(self, root)
        self.materials = read_material_assets(self, root)
        loading = loading | {self.path.resolve()}

        def make_reader(p):
            if p.resolve() in loading:
                raise error(root, f"model asset {str(p)!r} attaches itself (a cycle)")
            child = _Reader(p, self.options)
            child_root = parse_xml(p)
            child.prepare(child_root, loading)
            return child, child_root

        expand_attachments(self, root, make_reader)
        expand_replicates(root, root, self.comp)

    def read(self, root) -> Assembly:
        self.prepare(root)
        gravity = np.array([0.0, 0.0, -9.81])
        for o in root.findall("option"):
            g = floats_attr(o, o.attrib, "gravity", 3)
            if g is not None:
                gravity = g
        if any(f.get("gravity") == "disable" for o in root.findall("option") for f in o.findall("flag")):
            gravity = np.zeros(3)              # <option><flag gravity="disable"/>: MuJoCo applies none
        self.bodies.append({"el": root, "name": GROUND, "parent": None, "pose": Pose(), "joints": [],
                            "inertial": None, "geoms": [], "children": [], "mocap": False})
        worlds = root.findall("worldbody")
        for w in worlds:
            self.walk(w, 0, Pose(), "main", Pose(), self.bodies[0]["geoms"], True)
        if self.bodies[0]["joints"]:
            raise error(self.bodies[0]["joints"][0][0], "joints are not allowed in <worldbody>")
        names = {}
        for i, b in enumerate(self.bodies[1:], 1):
            if b["name"] == GROUND or b["name"] == "world":
                raise error(b["el"], f"body name {b['name']!r} is reserved")
            if b["name"] in names:
                raise error(b["el"], f"duplicate body name {b['name']!r} (first at line {names[b['name']]})")
            names[b["name"]] = b["el"].sourceline
        equalities = self.read_equalities(root, names)
        referenced = {n for e in equalities[0] for n in (e["body1"], e["body2"])}
        compile_masses(self)
        if self.comp.fusestatic:
            self.fuse(referenced)
        return self.assemble(root, gravity, equalities)

    def fuse(self, referenced):
        """MuJoCo's fusestatic: merge jointless bodies into their parents."""
        for i in range(len(self.bodies) - 1, 0, -1):
            b = self.bodies[i]
            if b["joints"] or b["name"] in referenced or b["mocap"] or b.get("fused"):
                continue
            p = self.bodies[b["parent"]]
            X = p["pose"].inverse().compose(b["pose"])
            if b["parent"] != 0:
                p["mass"] = combine([p["mass"], transform_mass_properties(b["mass"], X)])
            for gd in b["geoms"]:
                gd = dict(gd)
                gd["geom"] = replace(gd["geom"], pose=X.compose(gd["geom"].pose))
                p["geoms"].append(gd)
            p["children"].remove(i)
            for c in b["children"]:
                self.bodies[c]["parent"] = b["parent"]
                p["children"].append(c)
            b["fused"] = True

    def read_equalities(self, root, names):
        """(loop records, couplings, their elements): see :mod:`parsers.mjcf.equality`."""
        loops, couplings, elements = [], [], []
        tendons = fixed_tendons(root, lambda el: self.attrs(el, "main"))
        sites = {n: (self.bodies[i]["name"] if i else "world", p) for n, (i, p) in self.sites.items()}
        for eq in root.findall("equality"):
            for c in eq:
                a = self.attrs(c, "main")
                if not bool_attr(c, "active", a.get("active", "true")):
                    continue
                if c.tag in LOOP_TYPES:
                    loops.append(loop_equality(c, a, len(loops), names, sites))
                elif c.tag in COUPLING_TYPES:
                    couplings.append(coupling_equality(c, a, tendons, self.file))
                    elements.append(c)
                else:
                    raise error(c, f"equality <{c.tag}> is not supported (connect, weld, joint and tendon are)")
        return loops, couplings, elements

    def check_moving_mass(self, i) -> None:
        """MuJoCo's rule for a body with joints (``mjCModel``'s check "mass and inertia of moving bodies
        must be larger than mjMINVAL"): the mass of the body and of the bodies welded to it (its
        descendants reached without a joint) is at least mjMINVAL, and so is each component of the sum
        of their principal moments (each body's in decreasing order; MuJoCo's ``body_inertia``).  A
        massless body carrying a massive welded child moves (Menagerie's iit_softfoot scene: a slide
        joint above an ``<attach>`` ed body); one without, or with only point masses, is refused."""
        mass, moments, stack = 0.0, np.zeros(3), [i]
        while stack:
            b = self.bodies[stack.pop()]
            mass += b["mass"].mass
            moments += np.linalg.eigvalsh(b["mass"].inertia)[::-1]
            stack.extend(c for c in b["children"] if not self.bodies[c]["joints"])
        if mass < MJ_MINVAL or not (moments >= MJ_MINVAL).all():
            b = self.bodies[i]
            what = "no mass" if mass < MJ_MINVAL else f"mass {mass:g} kg but principal moments {moments.tolist()}"
            raise error(b["el"], f"body {b['name']!r} has joints but {what}, with the bodies welded to it (MuJoCo: "
                                 "mass and inertia of moving bodies must be larger than mjMINVAL)")

    def floating_roots(self, live) -> set:
        """The top-level bodies that ``base='floating'`` frees: those without joints, not mocap, with
        mass and no plane or height field (static scenery stays welded to the world)."""
        if self.options.get("base", "fixed") != "floating":
            return set()
        roots = {i for i in live if self.bodies[i]["parent"] == 0 and not self.bodies[i]["joints"]
                 and not self.bodies[i]["mocap"] and self.bodies[i]["mass"].mass > 0
                 and not any(gd["type"] in ("plane", "hfield") for gd in self.bodies[i]["geoms"])}
        if not roots:
            log.warning("%s: base='floating' changes nothing: no top-level body without joints has mass "
                        "(bodies with joints keep them; static scenery stays welded)", self.file)
        return {self.bodies[i]["name"] for i in roots}

    def weld_or_float(self, b, parent: str, floating: set) -> Joint:
        """The joint of body ``b`` that has no joint of its own: a weld to its parent (MuJoCo's rule),
        or a free joint ``<body>_root_joint`` for a body of ``floating`` (``base='floating'``)."""
        source = Source(self.file, b["el"].sourceline)
        if b["name"] in floating:
            return Joint(f"{b['name']}_root_joint", "free", parent, b["name"], origin=b["pose"].translation,
                         source=Source(source.file, source.line, "floating base"))
        return Joint(f"{b['name']}_fixed", "fixed", parent, b["name"], origin=b["pose"].translation, source=source)

    def assemble(self, root, gravity, equalities) -> Assembly:
        check_joint_references(root)
        motors = read_actuators(self, root)
        live = [i for i in range(1, len(self.bodies)) if not self.bodies[i].get("fused")]
        order = []
        stack = list(reversed(self.bodies[0]["children"]))
        while stack:
            i = stack.pop()
            order.append(i)
            stack.extend(reversed(self.bodies[i]["children"]))
        assert sorted(order) == sorted(live)
        bodies, joints, frictions = [], [], []
        jnames = {}
        taken = {self.bodies[i]["name"] for i in live}
        floating = self.floating_roots(live)

        def uniq(name, el):
            if name in jnames:
                raise error(el, f"duplicate joint name {name!r} (first at line {jnames[name]})")
            jnames[name] = el.sourceline

        for i in order:
            b = self.bodies[i]
            el = b["el"]
            parent = self.bodies[b["parent"]]["name"]
            pose = b["pose"]
            jl = b["joints"]
            moving = bool(jl) and not b["mocap"]
            if moving:
                self.check_moving_mass(i)
            for gd in b["geoms"]:
                if gd["type"] in ("plane", "hfield") and moving:
                    raise error(gd["el"], f"geom type {gd['type']!r} is only allowed in static bodies")
            if b["mocap"] and b["parent"] != 0:
                raise error(el, "mocap bodies must be children of <worldbody>")
            if not jl or b["mocap"]:
                joints.append(self.weld_or_float(b, parent, floating))
                uniq(joints[-1].name, el)
            prev = parent
            for k, (jel, a, fpose) in enumerate(jl):
                jt = "free" if jel.tag == "freejoint" else a.get("type", "hinge")
                if jt not in JOINT_MAP:
                    raise error(jel, f"unknown joint type {jt!r}{did_you_mean(jt, JOINT_MAP)} (expected hinge, slide, ball "
                                     "or free)")
                if jt == "free" and b["parent"] != 0:
                    raise error(jel, "free joints are only allowed in top-level bodies")
                if jt == "free" and len(jl) > 1:
                    raise error(jel, "a free joint must be the only joint of its body")
                name = a.get("name") or (f"{b['name']}_joint" if len(jl) == 1 else f"{b['name']}_joint{k}")
                uniq(name, jel)
                pos = floats_attr(jel, a, "pos", 3)
                pos = np.zeros(3) if pos is None else pos
                axis = floats_attr(jel, a, "axis", 3)
                axis = np.array([0.0, 0.0, 1.0]) if axis is None else axis
                if jt in ("hinge", "slide") and not np.linalg.norm(axis) > 0:
                    raise error(jel, "joint@axis must be non-zero")
                jp = pose.compose(fpose)
                origin = jp.apply(pos)
                waxis = jp.rotation @ (axis / np.linalg.norm(axis)) if jt in ("hinge", "slide") else np.array([0, 0, 1.0])
                if jt == "free":
                    origin = pose.translation
                limits = self.limits(jel, a, jt)
                damping, stiffness, springref, springdamper = joint_spring(jel, a, jt, self.comp)
                friction = parse_float(a.get("frictionloss", "0"), jel, "joint@frictionloss")
                if friction and jt in ("hinge", "slide"):
                    frictions.append(JointForceElement(f"{name}_friction", name, friction=friction,
                                                       source=Source(self.file, jel.sourceline, "frictionloss")))
                elif friction:
                    log.warning("%s: joint %r: frictionloss of a %s joint (dry friction on several freedoms) is not "
                                "modelled (ignored)", where(jel), name, jt)
                armature, ref = (parse_float(a.get(key, "0"), jel, f"joint@{key}")
                                 for key in ("armature", "ref"))
                if jt == "hinge":
                    ref = float(self.comp.angle(ref))
                if jt == "free" and armature:
                    log.warning("%s: armature of free joint %r: MuJoCo applies it to the world-frame translation, "
                                "ours to the body-frame velocity (bias forces differ by armature * omega x v)",
                                where(jel), a.get("name", ""))
                child = b["name"] if k == len(jl) - 1 else f"{b['name']}__{name}"
                if child != b["name"]:
                    if child in taken:
                        raise error(jel, f"intermediate body name {child!r} is already taken")
                    taken.add(child)
                    bodies.append(Body(child, pose, MassProperties.zero(), (),
                                       {"pose": Source(self.file, jel.sourceline, f"intermediate body of joint {name!r}"),
                                        "mass": Source(self.file, jel.sourceline, "massless intermediate body")}))
                motor = motors.get(name)
                joints.append(Joint(name, JOINT_MAP[jt], prev, child, origin=origin, axis=waxis, limits=limits,
                                    actuated=motor is not None, motor=motor, damping=damping, armature=armature,
                                    ref=ref if jt in ("hinge", "slide") else 0.0, stiffness=stiffness,
                                    springref=springref, springdamper=springdamper,
                                    source=Source(self.file, jel.sourceline)))
                prev = child
            geoms = tuple(gd["geom"] for gd in b["geoms"] if gd["geom"].kind != "mesh" or gd["geom"].file)
            bodies.append(Body(b["name"], pose, b["mass"], geoms,
                               {"pose": Source(self.file, el.sourceline), "mass": b["mass_src"]}))
        by_name = {self.bodies[i]["name"]: self.bodies[i] for i in live}
        loops, couplings, elements = equalities
        for e in loops:
            if any(b != "world" and b not in by_name for b in (e["body1"], e["body2"])):
                raise error(e["el"], "equality names a body that was fused away")
            uniq(e["name"], e["el"])
            joints.append(loop_joint(e, lambda n: Pose() if n == GROUND else by_name[n]["pose"], self.file))
        check_coupling_joints(couplings, {j.name: j for j in joints}, elements)
        couplings = [coupling_in_qpos(c, {j.name: j.ref for j in joints}) for c in couplings]
        tendons, actuators = self.forces(root, joints)
        model = root.get("model", Path(self.file).stem)
        return Assembly(model, tuple(bodies), tuple(joints), gravity=gravity, couplings=tuple(couplings),
                        source_file=self.file, forces=tendons + tuple(frictions), actuators=actuators)

    def forces(self, root, joints) -> tuple[tuple, tuple]:
        """(the tendons read as force elements, the actuators on joints and on those tendons)."""
        actuated = {c.get("tendon") for act in root.findall("actuator") for c in act if c.get("tendon")}
        tendons = read_tendons(self, root, joints, actuated)
        return tendons, read_actuator_records(self, root, joints, {t.name for t in tendons})

    def limits(self, jel, a, jt) -> Limits:
        rng = floats_attr(jel, a, "range", 2)
        limited = a.get("limited", "auto")
        if rng is None or jt == "free":
            return Limits()
        if limited == "false" or (limited == "auto" and not self.comp.autolimits):
            return Limits()
        if jt in ("hinge", "ball"):
            rng = self.comp.angle(rng)
        if not JOINTS[JOINT_MAP[jt]].takes_limits:
            log.warning("%s: joint %r: the range of a %s joint (a cone of %g rad in MuJoCo) is not enforced here: "
                        "dropped (position limits are those of hinge and slide joints)", where(jel),
                        a.get("name", ""), jt, float(max(abs(rng[0]), abs(rng[1]))))
            return Limits()
        if rng[0] > rng[1]:
            raise error(jel, f"joint@range: lower {rng[0]:g} > upper {rng[1]:g}")
        return Limits(float(rng[0]), float(rng[1]))


def read_mjcf(path, *, text: str | None = None, mesh_inertia: str = "mujoco", base: str = "fixed") -> Assembly:
    """Read an MJCF (MuJoCo XML) file into an :class:`Assembly`.

    Parameters
    ----------
    path : str or Path
        The ``.xml`` / ``.mjcf`` file (names the document when ``text`` is given;
        relative mesh and include paths start at its folder).
    text : str, optional
        The document itself.
    mesh_inertia : 'mujoco' or 'exact'
        Mesh geoms' mass properties by MuJoCo's rule for each mesh ``inertia``
        mode (the default: the file means what MuJoCo compiles it to), or the
        exact solid (trimesh; the mesh must be watertight).  Either way a
        warning is logged where the two differ by more than 1%.
    base : 'fixed' or 'floating'
        'fixed' (the default) keeps MuJoCo's rule: a body without joints is welded to its parent.
        'floating' gives each top-level body without joints (not mocap, with mass, no plane or
        height field) a free joint ``<body>_root_joint``, as ``--base floating`` does for a URDF root.

    Returns
    -------
    Assembly
        Bodies at MuJoCo's ``qpos0`` in the world frame; joints (equality
        constraints as ``loop=True`` joints) with origins and axes in the world frame.
    """
    if mesh_inertia not in ("mujoco", "exact"):
        raise InputError(f"mesh_inertia must be 'mujoco' or 'exact', got {mesh_inertia!r}", file=str(path))
    path = Path(path)
    with quoting_only_inside(path.resolve().parent):
        root = parse_xml(path, text)
        if base not in ("fixed", "floating"):
            raise InputError(f"base must be 'fixed' or 'floating', got {base!r}", file=str(path))
        return _Reader(path, {"mesh_inertia": mesh_inertia, "base": base}).read(root)
