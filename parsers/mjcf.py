"""MJCF (MuJoCo XML) reader: the body tree, its joints, geoms and equality loops.

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
  their parent, the world included, unless an ``<equality>`` names them).
* Orientation: ``quat`` (w x y z), ``axisangle``, ``euler``, ``xyaxes``,
  ``zaxis``; at most one per element.  ``<frame>`` elements place their children.
* ``<default>`` classes (nested, inherited), ``class`` and ``childclass``.
* Geoms sphere, capsule, cylinder, box, ellipsoid, mesh (``fromto`` included)
  contribute mass by ``mass`` or ``density`` (default 1000 kg/m^3) through
  :mod:`parsers.massprops` (closed forms; meshes through trimesh, which must be
  watertight); plane and hfield geoms are massless and allowed only in static
  bodies, as in MuJoCo.  A moving body without mass is an InputError (MuJoCo:
  "mass and inertia of moving bodies must be larger than mjMINVAL").
  Mesh geoms follow MuJoCo's rule for each mesh ``inertia`` mode (``legacy``,
  the default, ``exact``, ``convex``, ``shell``), reproduced from MuJoCo's compiler in
  :mod:`parsers.mjcf_mesh`; open meshes are accepted as MuJoCo accepts them.
  ``read_mjcf(..., mesh_inertia='exact')`` takes the exact solid instead; a
  warning is logged wherever the two differ by more than 1%.  ``shellinertia``
  on primitive geoms is refused.
* Joints: hinge -> revolute, slide -> prismatic, ball -> spherical,
  free -> free; a body without joints is welded to its parent by a ``fixed``
  joint named ``<body>_fixed``.  **A body with several joints becomes a chain**:
  ``parent -j1-> <body>__j1 -j2-> <body>__j2 ... -jn-> body``, the intermediate
  bodies massless and placed at the body's pose.  MuJoCo composes the joints of
  one body in document order, each axis moving with the previous joints, which
  is exactly this chain.  Unnamed joints are called ``<body>_joint<k>``, unnamed
  bodies ``body<id>`` with MuJoCo's body id.
* Reference configuration: MuJoCo's ``qpos0``.  A hinge/slide ``ref`` is carried
  in ``Joint.ref`` (our coordinate is ``qpos - ref``), ``armature`` in
  ``Joint.armature`` (not yet in the dynamics).
* ``<equality>`` and fixed ``<tendon>`` (:mod:`parsers.mjcf_equality`): ``connect``
  and ``weld`` (by bodies or by sites) are loop-closing joints (``loop=True``);
  ``joint`` and ``tendon`` (tendons of one joint) are
  :class:`~parsers.assembly.Coupling` s.  Inactive constraints are skipped; flex
  equalities and tendons of several joints are refused.
* ``<actuator>`` entries that name a joint mark it ``actuated`` with a
  :class:`~parsers.assembly.Motor` (gear, force range).
* ``<include file>`` is expanded in place; ``<replicate>``, ``<composite>``,
  ``<flexcomp>`` and ``<attach>`` are refused.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from mbcompose.dynamics.spatial import axis_angle_to_matrix, quat_to_matrix, rot_x, rot_y, rot_z

from .assembly import GROUND, Assembly, Body, Geometry, Joint, Limits, MassProperties, Motor, Pose, Source
from .errors import InputError, did_you_mean
from .massprops import combine, load_mesh, shapes_mass_properties, transform_mass_properties
from .mjcf_equality import (COUPLING_TYPES, LOOP_TYPES, check_coupling_joints, coupling_equality, fixed_tendons,
                            loop_equality, loop_joint, site_pose)
from .mjcf_mesh import MESH_INERTIA_MODES, mesh_unit_properties
from .xmlutil import error, parse_floats, parse_xml

log = logging.getLogger(__name__)

JOINT_MAP = {"hinge": "revolute", "slide": "prismatic", "ball": "spherical", "free": "free"}
GEOM_TYPES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf")
ORIENT_ATTRS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")
UNSUPPORTED = ("replicate", "composite", "flexcomp", "attach", "flex")


class _Compiler:
    def __init__(self):
        self.degree = True
        self.eulerseq = "xyz"
        self.meshdir = None
        self.assetdir = None
        self.inertiafromgeom = "auto"
        self.groups = (0, 5)
        self.fusestatic = False
        self.autolimits = True

    def update(self, el):
        a = el.attrib
        if "angle" in a:
            if a["angle"] not in ("degree", "radian"):
                raise error(el, f"compiler@angle must be 'degree' or 'radian', got {a['angle']!r}")
            self.degree = a["angle"] == "degree"
        if "coordinate" in a and a["coordinate"] != "local":
            raise error(el, f"compiler@coordinate={a['coordinate']!r} is not supported (MuJoCo removed "
                            "global coordinates; only 'local')")
        if "eulerseq" in a:
            seq = a["eulerseq"]
            if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq) or (seq.islower() == seq.isupper()):
                raise error(el, f"compiler@eulerseq must be 3 letters of xyz (all lower or all upper), got {seq!r}")
            self.eulerseq = seq
        self.meshdir = a.get("meshdir", self.meshdir)
        self.assetdir = a.get("assetdir", self.assetdir)
        if "inertiafromgeom" in a:
            v = a["inertiafromgeom"]
            if v not in ("auto", "true", "false"):
                raise error(el, f"compiler@inertiafromgeom must be auto, true or false, got {v!r}")
            self.inertiafromgeom = v
        if "inertiagrouprange" in a:
            g = _integers(el, a["inertiagrouprange"], "compiler@inertiagrouprange", 2)
            self.groups = (g[0], g[1])
        if "fusestatic" in a:
            self.fusestatic = _bool(el, "fusestatic", a["fusestatic"])
        if "autolimits" in a:
            self.autolimits = _bool(el, "autolimits", a["autolimits"])
        for k in ("boundmass", "boundinertia", "settotalmass"):
            if k in a and parse_floats(a[k], el, f"compiler@{k}", 1)[0] > 0:
                raise error(el, f"compiler@{k} is not supported")
        if _bool(el, "balanceinertia", a.get("balanceinertia", "false")):
            raise error(el, "compiler@balanceinertia is not supported")

    def angle(self, v):
        return np.deg2rad(v) if self.degree else np.asarray(v, dtype=float)


def _integers(el, text: str, what: str, n: int) -> list[int]:
    """``n`` whitespace-separated integers (MJCF group numbers); InputError otherwise."""
    values = parse_floats(text, el, what, n)
    if not all(float(v).is_integer() for v in values):
        raise error(el, f"{what}: expected {n} integer(s), got {text.strip()[:40]!r}")
    return [int(v) for v in values]


def _check_principal_moments(el, J: np.ndarray) -> None:
    """Positive semi-definite with A + B >= C for the principal moments, as MuJoCo's compiler demands."""
    scale = max(1.0, np.abs(J).max())
    eig = np.linalg.eigvalsh(0.5 * (J + J.T))
    if eig[0] < -1e-12 * scale:
        raise error(el, f"<inertial>: inertia is not positive semi-definite ({J.tolist()})")
    if eig[0] + eig[1] < eig[2] - 1e-12 * scale:
        raise error(el, "<inertial>: inertia breaks the triangle inequality: principal moments "
                        f"{eig[0]:.6g} + {eig[1]:.6g} < {eig[2]:.6g}")


def _bool(el, name, v):
    if v in ("true", "1"):
        return True
    if v in ("false", "0"):
        return False
    raise error(el, f"{el.tag}@{name}: expected true or false, got {v!r}")


def _floats(el, attrs, name, n=None):
    v = attrs.get(name)
    if v is None:
        return None
    return parse_floats(v, el, f"{el.tag}@{name}", n)


def orientation(el, attrs, comp: _Compiler) -> np.ndarray:
    """Rotation matrix from MJCF's orientation attributes of ``el`` (identity when none)."""
    given = [k for k in ORIENT_ATTRS if k in attrs]
    if len(given) > 1:
        raise error(el, f"<{el.tag}> has several orientations ({', '.join(given)}); give one")
    if not given:
        return np.eye(3)
    k = given[0]
    if k == "quat":
        q = _floats(el, attrs, k, 4)
        if not np.linalg.norm(q) > 0:
            raise error(el, f"<{el.tag}>@quat must be non-zero")
        return quat_to_matrix(q)
    if k == "axisangle":
        v = _floats(el, attrs, k, 4)
        if not np.linalg.norm(v[:3]) > 0:
            raise error(el, f"<{el.tag}>@axisangle: axis must be non-zero")
        return axis_angle_to_matrix(v[:3], float(comp.angle(v[3])))
    if k == "euler":
        v = comp.angle(_floats(el, attrs, k, 3))
        rot = {"x": rot_x, "y": rot_y, "z": rot_z}
        R = np.eye(3)
        seq = comp.eulerseq
        for ax, ang in zip(seq, v):
            Ri = rot[ax.lower()](ang)
            R = R @ Ri if ax.islower() else Ri @ R
        return R
    if k == "xyaxes":
        v = _floats(el, attrs, k, 6)
        x = v[:3]
        y = v[3:]
        if not np.linalg.norm(x) > 0:
            raise error(el, f"<{el.tag}>@xyaxes: x axis must be non-zero")
        x = x / np.linalg.norm(x)
        y = y - x * (x @ y)
        if not np.linalg.norm(y) > 1e-12:
            raise error(el, f"<{el.tag}>@xyaxes: y axis is parallel to x")
        y = y / np.linalg.norm(y)
        return np.column_stack([x, y, np.cross(x, y)])
    z = _floats(el, attrs, "zaxis", 3)
    return _zaxis(el, z)


def _zaxis(el, z) -> np.ndarray:
    """The smallest rotation taking +z to ``z`` (MuJoCo's ``zaxis`` / ``fromto`` rule)."""
    n = np.linalg.norm(z)
    if not n > 0:
        raise error(el, f"<{el.tag}>: z axis must be non-zero")
    z = z / n
    ez = np.array([0.0, 0.0, 1.0])
    c = float(ez @ z)
    axis = np.cross(ez, z)
    s = np.linalg.norm(axis)
    if s < 1e-14:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    return axis_angle_to_matrix(axis, np.arctan2(s, c))


class _Reader:
    def __init__(self, path: Path, options):
        self.path = path
        self.file = str(path)
        self.dir = path.resolve().parent
        self.comp = _Compiler()
        self.defaults: dict[str, dict[str, dict[str, str]]] = {}
        self.default_parent: dict[str, str | None] = {}
        self.meshes: dict[str, tuple[str, np.ndarray]] = {}
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
                    el.insert(i + k, s)
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
            mine.setdefault(c.tag, {}).update(c.attrib)
        self.defaults[name] = mine
        for c in el:
            if c.tag == "default":
                self.read_defaults(c, name)

    def attrs(self, el, childclass: str) -> dict[str, str]:
        cls = el.get("class", childclass)
        if cls not in self.defaults:
            if cls == "main":
                return dict(el.attrib)
            raise error(el, f"unknown default class {cls!r}{did_you_mean(cls, self.defaults)}")
        tag = "joint" if el.tag == "freejoint" else el.tag
        out = dict(self.defaults[cls].get(tag, {}))
        if el.tag == "freejoint":
            out = {}
        out.update(el.attrib)
        out.pop("class", None)
        return out

    def read_assets(self, root):
        meshdir = self.comp.meshdir or self.comp.assetdir
        for asset in root.findall("asset"):
            for m in asset.findall("mesh"):
                a = self.attrs(m, "main")
                fname = a.get("file")
                if fname is None:
                    name = a.get("name")
                    if name:
                        self.meshes[name] = (None, m, "legacy")
                        continue
                    raise error(m, "<mesh> needs attribute 'file'")
                name = a.get("name", Path(fname).stem)
                p = Path(fname)
                if not p.is_absolute():
                    p = (self.dir / meshdir / p) if meshdir else (self.dir / p)
                if not p.is_file():
                    raise error(m, f"mesh file not found: {str(p)!r}")
                scale = _floats(m, a, "scale", 3)
                if scale is None:
                    scale = np.ones(3)
                if name in self.meshes:
                    raise error(m, f"mesh {name!r} defined twice")
                mode = a.get("inertia", "legacy")
                if mode not in MESH_INERTIA_MODES:
                    raise error(m, f"mesh@inertia must be legacy, exact, convex or shell, got {mode!r}")
                self.meshes[name] = (str(p.resolve()), scale, mode)

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
                fp = frame_pose.compose(Pose(orientation(c, a, self.comp), _floats(c, a, "pos", 3)
                                             if "pos" in a else np.zeros(3)))
                self.walk(c, parent_idx, X_parent_frame, cc, fp, out_geoms, static_ok)
            elif c.tag == "geom":
                out_geoms.append(self.geom(c, childclass, frame_pose))
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
        pos = _floats(el, a, "pos", 3)
        self.sites[name] = (parent_idx, site_pose(self.bodies[parent_idx]["pose"], frame_pose,
                                                  orientation(el, a, self.comp), np.zeros(3) if pos is None else pos))

    def body(self, el, parent_idx, frame_pose: Pose, childclass):
        a = el.attrib
        cc = a.get("childclass", childclass)
        if cc not in self.defaults and cc != "main":
            raise error(el, f"unknown default class {cc!r}{did_you_mean(cc, self.defaults)}")
        idx = len(self.bodies)
        pos = _floats(el, a, "pos", 3)
        local = frame_pose.compose(Pose(orientation(el, a, self.comp), np.zeros(3) if pos is None else pos))
        world = self.bodies[parent_idx]["pose"].compose(local)
        name = a.get("name") or f"body{idx}"
        rec = {"el": el, "name": name, "parent": parent_idx, "pose": world, "joints": [], "inertial": None,
               "geoms": [], "children": [], "mocap": _bool(el, "mocap", a.get("mocap", "false"))}
        self.bodies.append(rec)
        self.bodies[parent_idx]["children"].append(idx)
        self.walk(el, idx, world, cc, Pose(), rec["geoms"], False)

    def geom(self, el, childclass, frame_pose: Pose):
        a = self.attrs(el, childclass)
        gtype = a.get("type", "sphere")
        if gtype not in GEOM_TYPES:
            raise error(el, f"unknown geom type {gtype!r}{did_you_mean(gtype, GEOM_TYPES)} (expected one of {', '.join(GEOM_TYPES)})")
        size = _floats(el, a, "size", (1, 2, 3))
        size = np.zeros(3) if size is None else np.concatenate([size, np.zeros(3 - len(size))])
        R = orientation(el, a, self.comp)
        pos = _floats(el, a, "pos", 3)
        pos = np.zeros(3) if pos is None else pos
        fromto = _floats(el, a, "fromto", 6)
        if fromto is not None:
            if gtype not in ("capsule", "cylinder", "box", "ellipsoid"):
                raise error(el, f"geom@fromto is not allowed for type {gtype!r}")
            p0, p1 = fromto[:3], fromto[3:]
            half = np.linalg.norm(p1 - p0) / 2
            if not half > 0:
                raise error(el, "geom@fromto: the two points coincide")
            pos = (p0 + p1) / 2
            R = _zaxis(el, p1 - p0)
            if gtype in ("capsule", "cylinder"):
                size[1] = half
            else:
                size[2] = half
                if gtype == "box" and size[1] == 0:
                    size[1] = size[0]
                if gtype == "ellipsoid" and size[1] == 0:
                    size[1] = size[0]
        pose = frame_pose.compose(Pose(R, pos))
        need = {"sphere": 1, "capsule": 2, "cylinder": 2, "box": 3, "ellipsoid": 3}.get(gtype, 0)
        if need and not np.all(size[:need] > 0):
            raise error(el, f"geom type {gtype!r} needs {need} positive size value(s), got {size[:need].tolist()}")
        if gtype == "sphere":
            g = Geometry("sphere", {"radius": size[0]}, pose, None, "collision")
        elif gtype in ("capsule", "cylinder"):
            g = Geometry(gtype, {"radius": size[0], "length": 2 * size[1]}, pose, None, "collision")
        elif gtype == "box":
            g = Geometry("box", {"size": 2 * size[:3]}, pose, None, "collision")
        elif gtype == "ellipsoid":
            g = Geometry("ellipsoid", {"radii": size[:3].copy()}, pose, None, "collision")
        elif gtype == "mesh":
            mname = a.get("mesh")
            if mname is None:
                raise error(el, "geom of type 'mesh' needs attribute 'mesh'")
            if mname not in self.meshes:
                raise error(el, f"unknown mesh {mname!r}{did_you_mean(mname, self.meshes)}")
            file, scale, mode = self.meshes[mname]
            if file is None:
                raise error(el, f"mesh {mname!r} has no file (inline vertex meshes are not supported)")
            params = {"scale": scale, "inertia": mode}
            if mode == "convex":
                params["convex_hull"] = True
            g = Geometry("mesh", params, pose, file, "collision")
        else:
            g = Geometry(gtype, {}, pose, None, "collision")
        mass = a.get("mass")
        density = a.get("density")
        m = None if mass is None else float(parse_floats(mass, el, "geom@mass", 1)[0])
        rho = 1000.0 if density is None else float(parse_floats(density, el, "geom@density", 1)[0])
        if m is not None and m < 0:
            raise error(el, f"geom@mass must be >= 0, got {m:g}")
        if rho < 0:
            raise error(el, f"geom@density must be >= 0, got {rho:g}")
        if _bool(el, "shellinertia", a.get("shellinertia", "false")):
            if gtype == "mesh":
                raise error(el, "geom@shellinertia: for mesh geoms, inertia should be specified in the mesh "
                                "asset (<mesh inertia='shell'>), as MuJoCo requires")
            raise error(el, "geom@shellinertia on primitive geoms is not supported (shells of meshes are)")
        group = _integers(el, a.get("group", "0"), "geom@group", 1)[0]
        return {"el": el, "geom": g, "mass": m, "density": rho, "group": group, "type": gtype}

    # ---------------------------------------------------------- mass props
    def geom_mass(self, gd) -> MassProperties:
        g = gd["geom"]
        if gd["type"] in ("plane", "hfield", "sdf"):
            return MassProperties.zero()
        lo, hi = self.comp.groups
        if not lo <= gd["group"] <= hi:
            return MassProperties.zero()
        try:
            if g.kind == "mesh":
                unit = self.mesh_unit_mass(gd)
            else:
                unit = shapes_mass_properties([g], 1.0)
        except InputError as exc:
            raise error(gd["el"], exc.message) from None
        volume = unit.mass
        if gd["mass"] is not None:
            rho = gd["mass"] / volume if volume > 0 else 0.0
        else:
            rho = gd["density"]
        if not (np.isfinite(rho) and np.all(np.isfinite(unit.inertia))):
            raise error(gd["el"], f"geom's volume ({volume:g} m^3) is too small for its mass")
        return MassProperties(rho * volume, unit.com, rho * unit.inertia)

    def mesh_unit_mass(self, gd) -> MassProperties:
        """A mesh geom's mass properties at unit density by MuJoCo's rule for its mode
        (:mod:`parsers.mjcf_mesh`), or the exact solid with ``mesh_inertia='exact'``."""
        g = gd["geom"]
        mesh = load_mesh(g.file)
        try:
            (vol, com, J), note = mesh_unit_properties(mesh, g.params["scale"], g.params["inertia"], g.file,
                                                       exact=self.options.get("mesh_inertia") == "exact")
        except ValueError as exc:
            raise error(gd["el"], f"mesh {g.file}: {exc}") from None
        if note:
            log.warning("%s:%s: mesh %s: %s", self.file, gd["el"].line, g.file, note)
        return transform_mass_properties(MassProperties(vol, com, J), g.pose)

    def inertial(self, el, frame_pose: Pose) -> MassProperties:
        a = el.attrib
        pos = _floats(el, a, "pos", 3)
        if pos is None:
            raise error(el, "<inertial> needs attribute 'pos'")
        if "mass" not in a:
            raise error(el, "<inertial> needs attribute 'mass'")
        mass = float(parse_floats(a["mass"], el, "inertial@mass", 1)[0])
        if mass < 0:
            raise error(el, f"inertial@mass must be >= 0, got {mass:g}")
        full = _floats(el, a, "fullinertia", 6)
        diag = _floats(el, a, "diaginertia", 3)
        if full is not None and diag is not None:
            raise error(el, "<inertial> has both diaginertia and fullinertia")
        if full is not None:
            if any(k in a for k in ORIENT_ATTRS):
                raise error(el, "<inertial>: fullinertia cannot be combined with an orientation")
            xx, yy, zz, xy, xz, yz = full
            J = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        elif diag is not None:
            R = orientation(el, a, self.comp)
            J = R @ np.diag(diag) @ R.T
        else:
            raise error(el, "<inertial> needs diaginertia or fullinertia")
        _check_principal_moments(el, J)
        return transform_mass_properties(MassProperties(mass, pos, J), frame_pose)

    # ----------------------------------------------------------------- run
    def read(self, root) -> Assembly:
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
        self.read_assets(root)
        gravity = np.array([0.0, 0.0, -9.81])
        for o in root.findall("option"):
            g = _floats(o, o.attrib, "gravity", 3)
            if g is not None:
                gravity = g
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
            names[b["name"]] = b["el"].line
        equalities = self.read_equalities(root, names)
        referenced = {n for e in equalities[0] for n in (e["body1"], e["body2"])}
        for i, b in enumerate(self.bodies[1:], 1):
            b["mass"], b["mass_src"] = self.body_mass(b)
        if self.comp.fusestatic:
            self.fuse(referenced)
        return self.assemble(root, gravity, equalities)

    def body_mass(self, b):
        use_geoms = self.comp.inertiafromgeom == "true" or (self.comp.inertiafromgeom == "auto"
                                                               and b["inertial"] is None)
        if b["inertial"] is not None and not use_geoms:
            el, fp = b["inertial"]
            return self.inertial(el, fp), Source(self.file, el.line)
        if use_geoms and b["geoms"]:
            mp = combine(self.geom_mass(gd) for gd in b["geoms"])
            return mp, Source(self.file, b["el"].line, "computed from geoms")
        return MassProperties.zero(), Source(self.file, b["el"].line, "massless")

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
                gd["geom"] = Geometry(gd["geom"].kind, gd["geom"].params, X.compose(gd["geom"].pose),
                                      gd["geom"].file, gd["geom"].role)
                p["geoms"].append(gd)
            p["children"].remove(i)
            for c in b["children"]:
                self.bodies[c]["parent"] = b["parent"]
                p["children"].append(c)
            b["fused"] = True

    def read_equalities(self, root, names):
        """(loop records, couplings, their elements): see :mod:`parsers.mjcf_equality`."""
        loops, couplings, elements = [], [], []
        tendons = fixed_tendons(root, lambda el: self.attrs(el, "main"))
        sites = {n: (self.bodies[i]["name"] if i else "world", p) for n, (i, p) in self.sites.items()}
        for eq in root.findall("equality"):
            for c in eq:
                a = self.attrs(c, "main")
                if not _bool(c, "active", a.get("active", "true")):
                    continue
                if c.tag in LOOP_TYPES:
                    loops.append(loop_equality(c, a, len(loops), names, sites))
                elif c.tag in COUPLING_TYPES:
                    couplings.append(coupling_equality(c, a, tendons, self.file))
                    elements.append(c)
                else:
                    raise error(c, f"equality <{c.tag}> is not supported (connect, weld, joint and tendon are)")
        return loops, couplings, elements

    def assemble(self, root, gravity, equalities) -> Assembly:
        motors = self.read_actuators(root)
        live = [i for i in range(1, len(self.bodies)) if not self.bodies[i].get("fused")]
        order = []
        stack = list(reversed(self.bodies[0]["children"]))
        while stack:
            i = stack.pop()
            order.append(i)
            stack.extend(reversed(self.bodies[i]["children"]))
        assert sorted(order) == sorted(live)
        bodies, joints = [], []
        jnames = {}
        taken = {self.bodies[i]["name"] for i in live}

        def uniq(name, el):
            if name in jnames:
                raise error(el, f"duplicate joint name {name!r} (first at line {jnames[name]})")
            jnames[name] = el.line

        for i in order:
            b = self.bodies[i]
            el = b["el"]
            parent = self.bodies[b["parent"]]["name"]
            pose = b["pose"]
            jl = b["joints"]
            moving = bool(jl) and not b["mocap"]
            if moving and b["mass"].mass <= 0:
                raise error(el, f"body {b['name']!r} has joints but no mass (MuJoCo: mass and inertia of "
                                "moving bodies must be larger than mjMINVAL)")
            for gd in b["geoms"]:
                if gd["type"] in ("plane", "hfield") and moving:
                    raise error(gd["el"], f"geom type {gd['type']!r} is only allowed in static bodies")
            if b["mocap"] and b["parent"] != 0:
                raise error(el, "mocap bodies must be children of <worldbody>")
            if not jl or b["mocap"]:
                jn = f"{b['name']}_fixed"
                uniq(jn, el)
                joints.append(Joint(jn, "fixed", parent, b["name"], origin=pose.translation,
                                    source=Source(self.file, el.line)))
            prev = parent
            for k, (jel, a, fpose) in enumerate(jl):
                jt = "free" if jel.tag == "freejoint" else a.get("type", "hinge")
                if jt not in JOINT_MAP:
                    raise error(jel, f"unknown joint type {jt!r}{did_you_mean(jt, JOINT_MAP)} (expected hinge, slide, ball or free)")
                if jt == "free" and b["parent"] != 0:
                    raise error(jel, "free joints are only allowed in top-level bodies")
                if jt == "free" and len(jl) > 1:
                    raise error(jel, "a free joint must be the only joint of its body")
                name = a.get("name") or (f"{b['name']}_joint" if len(jl) == 1 else f"{b['name']}_joint{k}")
                uniq(name, jel)
                pos = _floats(jel, a, "pos", 3)
                pos = np.zeros(3) if pos is None else pos
                axis = _floats(jel, a, "axis", 3)
                axis = np.array([0.0, 0.0, 1.0]) if axis is None else axis
                if jt in ("hinge", "slide") and not np.linalg.norm(axis) > 0:
                    raise error(jel, "joint@axis must be non-zero")
                jp = pose.compose(fpose)
                origin = jp.apply(pos)
                waxis = jp.rotation @ (axis / np.linalg.norm(axis)) if jt in ("hinge", "slide") else np.array([0, 0, 1.0])
                if jt == "free":
                    origin = pose.translation
                limits = self.limits(jel, a, jt)
                damping = float(parse_floats(a.get("damping", "0"), jel, "joint@damping", 1)[0])
                armature, ref = (float(parse_floats(a.get(key, "0"), jel, f"joint@{key}", 1)[0])
                                 for key in ("armature", "ref"))
                if jt == "hinge":
                    ref = float(self.comp.angle(ref))
                child = b["name"] if k == len(jl) - 1 else f"{b['name']}__{name}"
                if child != b["name"]:
                    if child in taken:
                        raise error(jel, f"intermediate body name {child!r} is already taken")
                    taken.add(child)
                    bodies.append(Body(child, pose, MassProperties.zero(), (),
                                       {"pose": Source(self.file, jel.line, f"intermediate body of joint {name!r}"),
                                        "mass": Source(self.file, jel.line, "massless intermediate body")}))
                motor = motors.get(name)
                joints.append(Joint(name, JOINT_MAP[jt], prev, child, origin=origin, axis=waxis, limits=limits,
                                    actuated=motor is not None, motor=motor, damping=damping, armature=armature,
                                    ref=ref if jt in ("hinge", "slide") else 0.0,
                                    source=Source(self.file, jel.line)))
                prev = child
            geoms = tuple(gd["geom"] for gd in b["geoms"])
            bodies.append(Body(b["name"], pose, b["mass"], geoms,
                               {"pose": Source(self.file, el.line), "mass": b["mass_src"]}))
        by_name = {self.bodies[i]["name"]: self.bodies[i] for i in live}
        loops, couplings, elements = equalities
        for e in loops:
            if any(b != "world" and b not in by_name for b in (e["body1"], e["body2"])):
                raise error(e["el"], "equality names a body that was fused away")
            uniq(e["name"], e["el"])
            joints.append(loop_joint(e, lambda n: Pose() if n == GROUND else by_name[n]["pose"], self.file))
        check_coupling_joints(couplings, {j.name: j for j in joints}, elements)
        model = root.get("model", Path(self.file).stem)
        return Assembly(model, tuple(bodies), tuple(joints), gravity=gravity, couplings=tuple(couplings),
                        source_file=self.file)

    def limits(self, jel, a, jt) -> Limits:
        rng = _floats(jel, a, "range", 2)
        limited = a.get("limited", "auto")
        if rng is None or jt == "free":
            return Limits()
        if limited == "false" or (limited == "auto" and not self.comp.autolimits):
            return Limits()
        if jt in ("hinge", "ball"):
            rng = self.comp.angle(rng)
        if jt == "ball":
            return Limits(None, float(max(abs(rng[0]), abs(rng[1]))))
        if rng[0] > rng[1]:
            raise error(jel, f"joint@range: lower {rng[0]:g} > upper {rng[1]:g}")
        return Limits(float(rng[0]), float(rng[1]))

    def read_actuators(self, root) -> dict[str, Motor]:
        motors = {}
        for act in root.findall("actuator"):
            for c in act:
                a = self.attrs(c, "main")
                j = a.get("joint")
                if j is None:
                    continue
                gear = _floats(c, a, "gear", None)
                g = 1.0 if gear is None else float(gear[0])
                fr = _floats(c, a, "forcerange", 2)
                eff = None if fr is None else float(max(abs(fr[0]), abs(fr[1])))
                motors[j] = Motor(a.get("name") or f"{c.tag}_{j}", eff, g if g != 0 else 1.0, 0.0)
        return motors


def read_mjcf(path, *, text: str | None = None, mesh_inertia: str = "mujoco") -> Assembly:
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

    Returns
    -------
    Assembly
        Bodies at MuJoCo's ``qpos0`` in the world frame; joints (equality
        constraints as ``loop=True`` joints) with origins and axes in the world frame.
    """
    if mesh_inertia not in ("mujoco", "exact"):
        raise InputError(f"mesh_inertia must be 'mujoco' or 'exact', got {mesh_inertia!r}", file=str(path))
    path = Path(path)
    root = parse_xml(path, text)
    return _Reader(path, {"mesh_inertia": mesh_inertia}).read(root)
