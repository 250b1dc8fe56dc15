"""MJCF writer: an Assembly as a MuJoCo model, loops closed by equality constraints.

Layout (read back by :func:`parsers.mjcf.reader.read_mjcf` into the same bodies,
joint frames and mass properties):

* ``<compiler angle="radian" inertiafromgeom="false" autolimits="true">``;
  ``<option gravity>`` from the assembly;
* the spanning tree from ground (:func:`parsers.exporters.export_tree`)
  becomes the nested ``<body>`` tree, each body at its pose relative to its
  parent, with an ``<inertial pos mass fullinertia>`` (``diaginertia`` when the inertia
  is diagonal, which admits a point mass; left out when massless);
* tree joints: revolute, continuous -> ``hinge``; prismatic -> ``slide`` (with the joint's
  ``ref``, so MuJoCo's ``qpos`` is our coordinate, and ``armature``, on every joint written);
  spherical -> ``ball``; free -> ``freejoint`` (top-level bodies only); fixed ->
  no joint; universal -> two hinges ``NAME_1``, ``NAME_2`` (axis, then axis2);
  cylindrical -> ``NAME_slide`` + ``NAME_hinge``; planar -> two slides and a hinge.
  MuJoCo composes several joints of one body in order, which is these joints'
  definition.  A massless, shapeless body with one tree child and no loop
  joint (the reader's intermediate body of a multi-joint MJCF body) is folded
  back into its child as a leading joint;
* loop joints (the chords of the tree): spherical -> ``connect`` (anchor in the
  reference body); fixed -> ``weld``; revolute/continuous -> two ``connect`` on
  the axis, at the origin and ``revolute_span`` further along it (they remove
  the five freedoms a hinge removes).  Any other loop joint (prismatic, cylindrical,
  universal, planar: MuJoCo has no equality for them) is built exactly: a body
  ``NAME_loop`` carried by the reference body through the joint's own MJCF joints and
  welded to the secondary body (``<equality weld>``); MuJoCo refuses a massless moving
  body, so it gets ``LOOP_BODY_MASS`` kg (one warning names these joints);
* actuators: every :class:`~parsers.assembly.Actuator` (MJCF input) as it was read:
  ``<motor>``, ``<position kp kv>`` and ``<velocity kv>`` where its gain and bias are those
  shortcuts', else ``<general>`` with ``gaintype``/``gainprm``/``biastype``/``biasprm``; its
  ``gear``, ``ctrlrange`` and ``forcerange``.  Other actuated joints (URDF, YAML, CAD) get a
  ``<motor>`` (gear ratio, force range), names unique (a motor of a differential
  transmission that drives two joints gets two actuators);
* frames (``Assembly.frames``: the parts of a lumped composite, a tool point; and the
  ``frames`` option) become ``<site>`` elements;
* shapes: box, sphere, cylinder, capsule, ellipsoid, mesh (STL/OBJ only, judged by the
  file the export references, so a DAE converted to STL in ``assets/`` is used; others
  are skipped, logged).  Visual shapes get the default class ``visual`` (``group 2``,
  ``contype=conaffinity=0``: shown, never in contact); collision shapes of a body that has
  visual ones the class ``collision`` (``group 3``); other shapes stay in group 0 and collide.
  Colours: a named :class:`~parsers.assembly.Material` becomes an ``<asset><material>``
  referenced by ``material``, a bare colour the geom's ``rgba``.

MuJoCo refuses a moving body without mass; such bodies are written as they
are and MuJoCo's error will say so.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.spatial import matrix_to_quat

from ..assembly import GROUND, Assembly, JointForceElement, Pose, Tendon
from ..mjcf.equality import coupling_about_ref
from ..xml import fmt, write_xml
from . import ExportError, export_tree, frames_by_body, rgba_of, shown_and_colliding, warn_untaken_limits
from .assets import absolute_reference

log = logging.getLogger(__name__)

MUJOCO_MESHES = (".stl", ".obj")

#: mass (kg) and principal moments (kg m^2) of the body that closes a loop joint MuJoCo has no
#: equality for (module docstring): MuJoCo refuses a massless moving body
LOOP_BODY_MASS = 1e-9
LOOP_BODY_INERTIA = 1e-15


def _pose_attrs(el: ET.Element, pose: Pose):
    if np.any(pose.translation != 0):
        el.set("pos", fmt(pose.translation))
    q = matrix_to_quat(pose.rotation)
    if not np.allclose(q, [1, 0, 0, 0], atol=0):
        el.set("quat", fmt(q))


def _perp(n):
    u = np.cross(n, [1.0, 0, 0]) if abs(n[0]) < 0.9 else np.cross(n, [0, 1.0, 0])
    return u / np.linalg.norm(u)


def _children(parent, order) -> dict[str, list[str]]:
    """Body name -> its tree children (ground included), in tree order."""
    children: dict[str, list[str]] = {GROUND: []}
    for n in order:
        children.setdefault(n, [])
        children.setdefault(parent[n].joint.reference, []).append(n)
    return children


def _foldable(a: Assembly, parent, children, loop_bodies, name: str) -> bool:
    """A massless, inertia-free, shapeless body with one moving child, no loop joint, on a moving joint."""
    b = a.body(name)
    kids = children[name]
    return (b.mass.mass == 0 and not np.any(b.mass.inertia) and not b.geometry and len(kids) == 1
            and name not in loop_bodies
            and parent[name].joint.type != "fixed" and parent[kids[0]].joint.type != "fixed")


def _folded_bodies(a: Assembly, parent, order, chords) -> tuple[dict[str, list[str]], set]:
    """Intermediate bodies folded into their child: (child -> bodies above it, top first; all folded)."""
    children = _children(parent, order)
    loop_bodies = {e for j in chords for e in (j.reference, j.secondary)}
    loop_bodies |= {e for sd in a.springs for e in (sd.body_a, sd.body_b)}   # their sites stay on them
    loop_bodies |= {b for t in a.forces if isinstance(t, Tendon) for b, _ in t.sites}
    folded: dict[str, list[str]] = {}
    skip: set = set()
    for n in order:
        if n in skip:
            continue
        chain, cur = [], n
        while _foldable(a, parent, children, loop_bodies, cur):
            chain.append(cur)
            cur = children[cur][0]
        if chain:
            skip.update(chain)
            folded[cur] = chain
    return folded, skip


class _JointWriter:
    """Writes the MJCF joints of tree joints into bodies; every joint name once."""

    TYPES = {"revolute": "hinge", "continuous": "hinge", "prismatic": "slide", "spherical": "ball"}

    def __init__(self):
        self.used: set = set()

    def add(self, body_el, jname, jtype, X_world_body: Pose, origin, axis=None, armature=0.0, damping=0.0,
            stiffness=0.0):
        if jname in self.used:
            raise ExportError(f"joint name {jname!r} used twice in the MJCF export")
        self.used.add(jname)
        if jtype == "free" and not (armature or damping or stiffness):
            ET.SubElement(body_el, "freejoint", name=jname)
            return None
        el = ET.SubElement(body_el, "joint", name=jname, type=jtype)
        if armature:
            el.set("armature", fmt(armature))
        if damping:
            el.set("damping", fmt(damping))
        if jtype == "free":
            return el
        pos = X_world_body.inverse().apply(origin)
        if np.any(pos != 0):
            el.set("pos", fmt(pos))
        if axis is not None:
            el.set("axis", fmt(X_world_body.rotation.T @ axis))
        return el

    def write(self, el, j, X_world_body: Pose, top_level: bool) -> None:
        """The MJCF joint(s) of tree joint ``j`` carried by body element ``el``."""
        if j.type == "fixed":
            return
        arm, c = j.armature, j.damping
        if j.type == "free":
            if not top_level:
                raise ExportError(f"free joint {j.name!r}: MuJoCo allows free joints only in top-level bodies")
            jel = self.add(el, j.name, "free", X_world_body, j.origin, armature=arm, damping=c,
                           stiffness=j.stiffness or j.springdamper)
            if jel is not None:
                _spring_attrs(jel, j)
        elif j.type in self.TYPES:
            jel = self.add(el, j.name, self.TYPES[j.type], X_world_body, j.origin,
                           None if j.type == "spherical" else j.axis, arm, c)
            lim = j.limits
            if JOINTS[j.type].takes_limits and lim.lower is not None and lim.upper is not None:
                jel.set("range", fmt([lim.lower, lim.upper]))
            if j.ref:
                jel.set("ref", fmt(j.ref))
            _spring_attrs(jel, j)
        elif j.type == "universal":
            self.add(el, f"{j.name}_1", "hinge", X_world_body, j.origin, j.axis, arm, c)
            self.add(el, f"{j.name}_2", "hinge", X_world_body, j.origin,
                     j.axis2 if j.axis2 is not None else _perp(j.axis), arm, c)
        elif j.type == "cylindrical":
            self.add(el, f"{j.name}_slide", "slide", X_world_body, j.origin, j.axis, arm, c)
            self.add(el, f"{j.name}_hinge", "hinge", X_world_body, j.origin, j.axis, arm, c)
        elif j.type == "planar":
            u = _perp(j.axis)
            self.add(el, f"{j.name}_x", "slide", X_world_body, j.origin, u, arm, c)
            self.add(el, f"{j.name}_y", "slide", X_world_body, j.origin, np.cross(j.axis, u), arm, c)
            self.add(el, f"{j.name}_rz", "hinge", X_world_body, j.origin, j.axis, arm, c)
        else:
            raise ExportError(f"joint {j.name!r} of type {j.type!r} has no MJCF equivalent")


def _spring_attrs(jel, j) -> None:
    """A joint's spring as MuJoCo's ``stiffness`` and ``springref`` (absolute, like ``qpos``; a ball's or
    free joint's spring is relaxed at ``qpos0``, where MuJoCo ignores ``springref``) or ``springdamper``."""
    if j.springdamper is not None:
        jel.set("springdamper", fmt(j.springdamper))
        return
    if j.stiffness:
        jel.set("stiffness", fmt(j.stiffness))
    if j.springref and JOINTS[j.type].one_coordinate:
        jel.set("springref", fmt(j.springref))


def _inertial(el, body, moving: bool) -> None:
    mp = body.mass
    if mp.mass > 0:
        J = mp.inertia
        if np.count_nonzero(J - np.diag(np.diag(J))) == 0:
            # diagonal: MuJoCo accepts zero entries here (a point mass), not in fullinertia
            ET.SubElement(el, "inertial", pos=fmt(mp.com), mass=fmt(mp.mass), diaginertia=fmt(np.diag(J)))
        else:
            ET.SubElement(el, "inertial", pos=fmt(mp.com), mass=fmt(mp.mass),
                          fullinertia=fmt([J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]]))
    elif moving:
        log.warning("MJCF export: body %r moves but has no mass; MuJoCo will refuse it", body.name)


def _body_tree(a: Assembly, world, parent, order, chords, geometry: bool, asset, mesh_reference):
    """The nested ``<body>`` elements; returns (elements, frames, joint writer) by body name."""
    folded, skip = _folded_bodies(a, parent, order, chords)
    meshes: dict[tuple, str] = {}
    elements: dict[str, ET.Element] = {GROUND: world}
    frame: dict[str, Pose] = {GROUND: Pose()}
    joints = _JointWriter()
    for n in order:
        if n in skip:
            continue
        above = folded.get(n, [])
        pname = parent[above[0] if above else n].joint.reference
        if pname in skip:
            raise ExportError(f"internal: parent {pname!r} of {n!r} was folded")
        body = a.body(n)
        el = ET.SubElement(elements[pname], "body", name=n)
        _pose_attrs(el, frame[pname].inverse().compose(body.pose))
        elements[n], frame[n] = el, body.pose
        for k in above + [n]:
            joints.write(el, parent[k].joint, body.pose, pname == GROUND)
        _inertial(el, body, parent[n].joint.type != "fixed")
        if geometry:
            has_visual = any(g.role == "visual" for g in body.geometry)
            for g, _, colliding in shown_and_colliding(body):
                cls = "visual" if not colliding else "collision" if has_visual and g.role == "collision" else None
                _geom(el, g, asset, meshes, mesh_reference, cls)
    for n in skip:
        kid = n
        while kid in skip:
            kid = next(k for k, above in folded.items() if kid in above)
        elements[n], frame[n] = elements[kid], frame[kid]
    return elements, frame, joints


def _sites(elements, frame, frames) -> None:
    for body, named in frames.items():
        if body not in elements or body == GROUND:
            raise ExportError(f"frames: unknown body {body!r}")
        for fname, pose in named:
            _pose_attrs(ET.SubElement(elements[body], "site", name=fname), frame[body].inverse().compose(pose))


def _actuator_element(act, x) -> None:
    """Actuator record ``x`` as the MJCF element whose defaults give back its gain and bias (a ``general``
    with its ``dyntype``, ``dynprm``, ``actrange`` and ``actearly`` when it has activation dynamics)."""
    kp, kv = x.gain[0], -x.bias[2]
    if x.dyn_type != "none":
        el = ET.SubElement(act, "general", dyntype=x.dyn_type, dynprm=fmt(x.timeconst), gaintype=x.gain_type,
                           gainprm=fmt(x.gain), biastype=x.bias_type, biasprm=fmt(x.bias))
        if x.actrange is not None and all(np.isfinite(x.actrange)):
            el.set("actlimited", "true"), el.set("actrange", fmt(x.actrange))
        if x.actearly:
            el.set("actearly", "true")
    elif x.kind == "motor" and x.gain_type == "fixed" and x.gain == (1.0, 0.0, 0.0) and x.bias_type == "none":
        el = ET.SubElement(act, "motor")
    elif x.kind == "position" and x.gain_type == "fixed" and x.gain[1:] == (0.0, 0.0) and \
            x.bias_type == "affine" and x.bias[:2] == (0.0, -kp) and kv >= 0:
        el = ET.SubElement(act, "position", kp=fmt(kp))
        if kv:
            el.set("kv", fmt(kv))
    elif x.kind == "velocity" and x.gain_type == "fixed" and x.gain[1:] == (0.0, 0.0) and \
            x.bias_type == "affine" and x.bias == (0.0, 0.0, -kp):
        el = ET.SubElement(act, "velocity", kv=fmt(kp))
    else:
        el = ET.SubElement(act, "general", gaintype=x.gain_type, gainprm=fmt(x.gain), biastype=x.bias_type,
                           biasprm=fmt(x.bias))
    el.set("name", x.name)
    if x.tendon is not None:
        el.set("tendon", x.tendon)
    else:
        el.set("joint", x.joint)
    if x.gear != 1.0:
        el.set("gear", fmt(x.gear))
    for key in ("ctrlrange", "forcerange"):
        rng = getattr(x, key)
        if rng is not None and all(np.isfinite(rng)):
            el.set(key, fmt(rng))
        elif rng is not None:
            log.info("MJCF export: actuator %r: %s %s not written (MuJoCo takes finite ranges)", x.name, key, rng)


def _actuators(root, a: Assembly, written_joints) -> None:
    """The assembly's actuator records (:func:`_actuator_element`), then one ``<motor>`` per other
    actuated one-coordinate joint.  Actuator names are unique: a motor that drives several joints
    (a differential transmission) gets one actuator per joint, named ``MOTOR_JOINT`` after the first."""
    tendons = {t.get("name") for t in root.iter() if t.tag in ("fixed", "spatial")}
    kept = lambda x: x.tendon in tendons if x.tendon is not None else x.joint in written_joints
    records = [x for x in a.actuators if kept(x)]
    lost = [x.name for x in a.actuators if not kept(x)]
    if lost:
        log.warning("MJCF export of %s: actuators on joints not in the export left out: %s", a.name, ", ".join(lost))
    driven = {x.joint for x in a.actuators}
    motors = [j for j in a.joints if j.actuated and JOINTS[j.type].one_coordinate and j.name in written_joints
              and j.name not in driven]
    if not motors and not records:
        return
    act = ET.SubElement(root, "actuator")
    for x in records:
        _actuator_element(act, x)
    used: set = {x.name for x in records}
    for j in motors:
        name = j.motor.name if j.motor else f"{j.name}_motor"
        if name in used:
            name = f"{name}_{j.name}"
        k = 2
        while name in used:
            name, k = f"{name}_{k}", k + 1
        used.add(name)
        m = ET.SubElement(act, "motor", name=name, joint=j.name, gear=fmt(j.motor.gear_ratio if j.motor else 1.0))
        if j.motor and j.motor.max_effort:
            m.set("forcerange", fmt([-j.motor.max_effort, j.motor.max_effort]))


def mjcf_element(a: Assembly, *, geometry: bool = True, revolute_span: float = 0.1, frames=None,
                 mesh_reference=absolute_reference) -> ET.Element:
    """The ``<mujoco>`` element for ``a`` (see :func:`write_mjcf`)."""
    parent, order, chords = export_tree(a)
    warn_untaken_limits(a, "MJCF")
    if "world" in a.body_names:
        raise ExportError("body name 'world' is reserved in MJCF")
    root = ET.Element("mujoco", model=a.name)
    ET.SubElement(root, "compiler", angle="radian", inertiafromgeom="false", autolimits="true")
    ET.SubElement(root, "option", gravity=fmt(a.gravity))
    default = ET.SubElement(root, "default")
    ET.SubElement(ET.SubElement(default, "default", {"class": "visual"}), "geom", contype="0", conaffinity="0",
                  group="2")
    ET.SubElement(ET.SubElement(default, "default", {"class": "collision"}), "geom", group="3")
    asset = ET.SubElement(root, "asset")
    world = ET.SubElement(root, "worldbody")
    elements, frame, joints = _body_tree(a, world, parent, order, chords, geometry, asset, mesh_reference)
    _sites(elements, frame, frames_by_body(a, frames))
    _loops(root, a, chords, revolute_span, elements, joints)
    _couplings(root, a, joints.used)
    _force_tendons(root, a, elements, frame, joints.used)
    _actuators(root, a, joints.used)
    if len(asset) == 0:
        root.remove(asset)
    return root


def _geom(body_el, g, asset, meshes, mesh_reference=absolute_reference, cls=None):
    p = g.params
    attrs = {}
    if g.kind == "box":
        attrs = {"type": "box", "size": fmt(np.asarray(p["size"]) / 2)}
    elif g.kind == "sphere":
        attrs = {"type": "sphere", "size": fmt(p["radius"])}
    elif g.kind in ("cylinder", "capsule"):
        attrs = {"type": g.kind, "size": fmt([p["radius"], p["length"] / 2])}
    elif g.kind == "ellipsoid":
        attrs = {"type": "ellipsoid", "size": fmt(p["radii"])}
    elif g.kind == "mesh":
        f = Path(g.file)
        reference = mesh_reference(f)
        if Path(reference).suffix.lower() not in MUJOCO_MESHES:
            log.warning("MJCF export: MuJoCo cannot read mesh %s (skipped; convert writes it to STL in assets/)", f)
            return
        scale = tuple(np.broadcast_to(p.get("scale", 1.0), (3,)).tolist())
        key = (str(f.resolve()), scale)
        if key not in meshes:
            meshes[key] = f"mesh{len(meshes)}_{f.stem}"
            ET.SubElement(asset, "mesh", name=meshes[key], file=reference, scale=fmt(scale))
        attrs = {"type": "mesh", "mesh": meshes[key]}
    else:
        log.warning("MJCF export: shape %s skipped", g.kind)
        return
    el = ET.SubElement(body_el, "geom", **attrs)
    if cls is not None:
        el.set("class", cls)
    _pose_attrs(el, g.pose)
    _colour(el, g, asset)


def _colour(el, g, asset) -> None:
    """A named material as an ``<asset><material>`` (one per name and colour), a bare colour as ``rgba``."""
    rgba = rgba_of(g)
    if rgba is None:
        return
    name = g.material.name if g.material is not None else None
    if name is None:
        el.set("rgba", fmt(rgba))
        return
    taken = {m.get("name"): m.get("rgba") for m in asset.findall("material")}
    unique, k = name, 1
    while unique in taken and taken[unique] != fmt(rgba):
        unique, k = f"{name}_{k}", k + 1
    if unique not in taken:
        ET.SubElement(asset, "material", name=unique, rgba=fmt(rgba))
    el.set("material", unique)


def _loops(root, a: Assembly, chords, span: float, elements, joints) -> None:
    """The ``<equality>`` constraints of the loop joints ``chords`` (module docstring)."""
    if not chords:
        return
    eq = ET.SubElement(root, "equality")
    built = []
    for j in chords:
        ref, sec = j.reference, j.secondary
        if ref == GROUND:
            ref, sec = sec, ref
        b1 = a.body(ref)
        attrs = {"body1": ref}
        if sec != GROUND:
            attrs["body2"] = sec
        if j.type == "spherical":
            ET.SubElement(eq, "connect", name=j.name, anchor=fmt(b1.pose.inverse().apply(j.origin)), **attrs)
        elif j.type == "fixed":
            b2 = Pose() if sec == GROUND else a.body(sec).pose
            ET.SubElement(eq, "weld", name=j.name, anchor=fmt(b2.inverse().apply(j.origin)), **attrs)
        elif JOINTS[j.type].moves_as == "revolute":
            for k, point in enumerate((j.origin, j.origin + span * j.axis)):
                ET.SubElement(eq, "connect", name=f"{j.name}_{k + 1}",
                              anchor=fmt(b1.pose.inverse().apply(point)), **attrs)
        else:
            _loop_body(eq, a, j, elements, joints)
            built.append(f"{j.name} ({j.type})")
    if built:
        log.warning("MJCF export of %s: loop joints with no MuJoCo equality built as a %g kg body on the joint, "
                    "welded to its secondary body: %s", a.name, LOOP_BODY_MASS, ", ".join(built))


def _loop_body(eq, a: Assembly, j, elements, joints) -> None:
    """Loop joint ``j`` as body ``NAME_loop`` in its reference body, moved by the joint's own MJCF joints
    and welded to the secondary body (at the reference configuration it is where that body is)."""
    X_world_sec = Pose() if j.secondary == GROUND else a.body(j.secondary).pose
    X_world_ref = Pose() if j.reference == GROUND else a.body(j.reference).pose
    name = f"{j.name}_loop"
    el = ET.SubElement(elements[j.reference], "body", name=name)
    _pose_attrs(el, X_world_ref.inverse().compose(X_world_sec))
    joints.write(el, j, X_world_sec, False)
    ET.SubElement(el, "inertial", pos="0 0 0", mass=fmt(LOOP_BODY_MASS), diaginertia=fmt([LOOP_BODY_INERTIA] * 3))
    attrs = {"body1": name} if j.secondary == GROUND else {"body1": name, "body2": j.secondary}
    ET.SubElement(eq, "weld", name=j.name, anchor=fmt(X_world_sec.inverse().apply(j.origin)), **attrs)


def _couplings(root, a: Assembly, written) -> None:
    """Couplings as ``<equality><joint>`` (one joint each side) or ``<equality><tendon>`` over fixed
    tendons; MuJoCo's polynomial is about ``qpos0`` (the joints' ``ref``): :func:`coupling_about_ref`."""
    if not a.couplings:
        return
    eq = root.find("equality")
    eq = ET.SubElement(root, "equality") if eq is None else eq
    refs = {j.name: j.ref for j in a.joints}
    for k, c in enumerate(a.couplings):
        coef = list(coupling_about_ref(c, refs).coefficients)
        if len(coef) > 5:
            raise ExportError(f"coupling of joint {c.joint!r}: MJCF polycoef holds 5 coefficients, got {len(coef)}")
        names = [n for n, _ in c.follower_sum + c.leader_sum]
        missing = [n for n in names if n not in written]
        if missing:
            raise ExportError(f"coupling of joint {c.joint!r}: joint {missing[0]!r} is not in the MJCF export")
        polycoef = fmt(coef + [0.0] * (5 - len(coef)))
        if not c.joint_terms and not c.leader_terms:
            attrs = {"joint1": c.joint} if c.leader is None else {"joint1": c.joint, "joint2": c.leader}
            ET.SubElement(eq, "joint", name=f"coupling_{k}", polycoef=polycoef, **attrs)
            continue
        tendon = root.find("tendon")
        tendon = ET.SubElement(root, "tendon") if tendon is None else tendon
        attrs = {}
        for side, terms in (("1", c.follower_sum), ("2", c.leader_sum)):
            if terms:
                fixed = ET.SubElement(tendon, "fixed", name=f"coupling_{k}_{side}")
                for n, w in terms:
                    ET.SubElement(fixed, "joint", joint=n, coef=fmt(w))
                attrs[f"tendon{side}"] = f"coupling_{k}_{side}"
        ET.SubElement(eq, "tendon", name=f"coupling_{k}", polycoef=polycoef, **attrs)


def _tendon_section(root) -> ET.Element:
    tendon = root.find("tendon")
    return ET.SubElement(root, "tendon") if tendon is None else tendon


def _tendon_spring(el, stiffness: float, damping: float, length: float) -> None:
    """MuJoCo's tendon spring-damper ``-stiffness (L - springlength) - damping L_dot`` (one spring length:
    no dead band)."""
    if stiffness:
        el.set("stiffness", fmt(stiffness))
        el.set("springlength", fmt([length, length]))
    if damping:
        el.set("damping", fmt(damping))


def _tendon(root, t, elements, frame, written, taken: set, lost: list) -> None:
    """A :class:`~parsers.assembly.Tendon` (MJCF input) as it was read: ``<fixed>`` over its joints or
    ``<spatial>`` through sites ``NAME_0``, ``NAME_1``, ... at its points; ``springlength`` written only when
    the input gave it (else MuJoCo's default, the length at ``qpos_spring``, as read)."""
    missing = [j for j, _ in t.joints if j not in written] + [b for b, _ in t.sites if b not in elements]
    if missing:
        lost.append(f"{t.name} (Tendon on {', '.join(missing)}, not in the export)")
        return
    el = ET.SubElement(_tendon_section(root), t.kind, name=t.name)
    if t.stiffness:
        el.set("stiffness", fmt(t.stiffness))
    if t.damping:
        el.set("damping", fmt(t.damping))
    if t.springlength is not None:
        el.set("springlength", fmt(t.springlength))
    for j, coef in t.joints:
        ET.SubElement(el, "joint", joint=j, coef=fmt(coef))
    for k, (body, point) in enumerate(t.sites):
        name, n = f"{t.name}_{k}", 2
        while name in taken:
            name, n = f"{t.name}_{k}_{n}", n + 1
        taken.add(name)
        ET.SubElement(elements[body], "site", name=name, pos=fmt(frame[body].inverse().apply(point)))
        ET.SubElement(el, "site", site=name)


def _force_tendons(root, a: Assembly, elements, frame, written) -> None:
    """The force elements MJCF holds as tendons (module docstring): a joint element's spring and damper as
    a fixed tendon ``L = q`` on its joint, a spring-damper between two body points as a spatial tendon
    through two sites ``NAME_a``, ``NAME_b``; the rest is named in one warning."""
    lost = []
    taken = {s.get("name") for s in root.iter("site")} | {t.get("name") for t in root.iter("fixed")}
    for e in a.forces:
        if isinstance(e, Tendon):
            _tendon(root, e, elements, frame, written, taken, lost)
        elif not isinstance(e, JointForceElement):
            lost.append(f"{e.name} ({type(e).__name__})")
        elif e.joint not in written:
            lost.append(f"{e.name} (joint {e.joint!r} not in the export)")
        elif e.stiffness or e.damping:
            fixed = ET.SubElement(_tendon_section(root), "fixed", name=e.name)
            _tendon_spring(fixed, e.stiffness, e.damping, e.rest)
            ET.SubElement(fixed, "joint", joint=e.joint, coef="1")
    friction = [e.name for e in a.forces if isinstance(e, JointForceElement) and e.friction]
    if friction:
        lost.append(f"the friction of {', '.join(friction)} (MuJoCo's frictionloss is a constraint of its solver, "
                    "not the regularised -friction tanh(v / friction_velocity))")
    for sd in a.springs:
        names = []
        for end, body, point in (("a", sd.body_a, sd.point_a), ("b", sd.body_b, sd.point_b)):
            name, k = f"{sd.name}_{end}", 2
            while name in taken:
                name, k = f"{sd.name}_{end}{k}", k + 1
            taken.add(name)
            ET.SubElement(elements[body], "site", name=name, pos=fmt(frame[body].inverse().apply(point)))
            names.append(name)
        spatial = ET.SubElement(_tendon_section(root), "spatial", name=sd.name)
        _tendon_spring(spatial, sd.stiffness, sd.damping, sd.rest_length or 0.0)
        for name in names:
            ET.SubElement(spatial, "site", site=name)
    if lost:
        log.warning("MJCF export of %s: force elements left out (the export writes no constant applied load and "
                    "no DC motor, whose current is a state): %s", a.name, "; ".join(lost))


def write_mjcf(a: Assembly, path, *, geometry: bool = True, revolute_span: float = 0.1, frames=None,
               mesh_reference=absolute_reference) -> Path:
    """Write ``a`` as MJCF (MuJoCo XML) to ``path``.

    Parameters
    ----------
    a : Assembly
        Any mechanism; loops are closed by ``<equality>`` constraints.
    path : str or Path
        Output file.
    geometry : bool
        Write shapes as geoms (they carry no mass: ``inertiafromgeom="false"``).
    revolute_span : float
        Distance (m) between the two ``connect`` points that close a revolute loop joint.
    frames : mapping body name -> sequence of (frame name, Pose), optional
        Named frames carried by a body (poses in the assembly frame at the
        reference configuration), written as ``<site>`` elements beside ``a.frames``.
    mesh_reference : callable, mesh file -> text of the ``file`` attribute
        (default its absolute path; :meth:`parsers.exporters.assets.MeshAssets.reference`
        for a relative ``assets/`` name).

    Returns
    -------
    Path
        The written file.  Raises :class:`ExportError` for a free joint below the top level.
    """
    write_xml(mjcf_element(a, geometry=geometry, revolute_span=revolute_span, frames=frames,
                           mesh_reference=mesh_reference), path)
    return Path(path)
