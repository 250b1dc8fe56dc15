"""MJCF mass properties: geoms, ``<inertial>``, and the compiler's mass rules, as MuJoCo compiles them.

``reader`` is the MJCF reader (:class:`parsers.mjcf.reader._Reader`): its compiler
settings, default classes, mesh assets, file and options.  Rules: the
:mod:`parsers.mjcf.reader` module docstring; meshes by :mod:`parsers.mjcf.mesh`; the
compiler's bounds by :mod:`parsers.mjcf.compiler`.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np

from ..assembly import Geometry, MassProperties, Material, Pose, Source
from ..errors import FOREIGN_TEXT, InputError, did_you_mean
from ..massprops import combine, shapes_mass_properties, transform_mass_properties
from ..mesh_progress import MeshWork, file_progressed
from ..xml import error, parse_float, where
from .assets import mesh_data
from .compiler import (ORIENT_ATTRS, bool_attr, bounded_mass, check_principal_moments, floats_attr, integers_attr,
                       orientation, total_mass_scale, zaxis_rotation)
from .fit import FIT_TYPES, fitted_primitive
from .mesh import mesh_unit_properties
from .shell import shell_unit_properties

log = logging.getLogger(__name__)
log.addFilter(FOREIGN_TEXT)  # (warnings about a file outside the model folder say where, not what)

GEOM_TYPES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf")


def geom_record(reader, el, childclass, frame_pose: Pose):
    a = reader.attrs(el, childclass)
    gtype = a.get("type", "sphere")
    if gtype not in GEOM_TYPES:
        raise error(el, f"unknown geom type {gtype!r}{did_you_mean(gtype, GEOM_TYPES)} (expected one of "
                        f"{', '.join(GEOM_TYPES)})")
    size = floats_attr(el, a, "size", (1, 2, 3))
    size = np.zeros(3) if size is None else np.concatenate([size, np.zeros(3 - len(size))])
    R = orientation(el, a, reader.comp)
    pos = floats_attr(el, a, "pos", 3)
    pos = np.zeros(3) if pos is None else pos
    fromto = floats_attr(el, a, "fromto", 6)
    if fromto is not None:
        if gtype not in ("capsule", "cylinder", "box", "ellipsoid"):
            raise error(el, f"geom@fromto is not allowed for type {gtype!r}")
        p0, p1 = fromto[:3], fromto[3:]
        half = np.linalg.norm(p1 - p0) / 2
        if not half > 0:
            raise error(el, "geom@fromto: the two points coincide")
        pos = (p0 + p1) / 2
        R = zaxis_rotation(el, p1 - p0)
        if gtype in ("capsule", "cylinder"):
            size[1] = half
        else:
            size[2] = half
            if gtype == "box" and size[1] == 0:
                size[1] = size[0]
            if gtype == "ellipsoid" and size[1] == 0:
                size[1] = size[0]
    pose = frame_pose.compose(Pose(R, pos))
    if gtype in FIT_TYPES and a.get("mesh") is not None:
        size, pose = fit_to_mesh(reader, el, a, gtype, pose)
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
        rec = mesh_record(reader, el, mname)
        params = {"scale": rec["scale"], "inertia": rec["inertia"]}
        if rec["ref"] is not None:
            params["ref"] = rec["ref"]
        if rec["inertia"] == "convex":
            params["convex_hull"] = True
        g = Geometry("mesh", params, pose, rec["file"], "collision")
    else:
        g = Geometry(gtype, {}, pose, None, "collision")
    g = replace(g, role=_role(el, a), material=_material(reader, el, a))
    mass = a.get("mass")
    density = a.get("density")
    m = None if mass is None else parse_float(mass, el, "geom@mass")
    rho = 1000.0 if density is None else parse_float(density, el, "geom@density")
    if m is not None and m < 0:
        raise error(el, f"geom@mass must be >= 0, got {m:g}")
    if rho < 0:
        raise error(el, f"geom@density must be >= 0, got {rho:g}")
    shell = bool_attr(el, "shellinertia", a.get("shellinertia", "false"))
    if shell and gtype == "mesh":
        raise error(el, "geom@shellinertia: for mesh geoms, inertia should be specified in the mesh "
                        "asset (<mesh inertia='shell'>), as MuJoCo requires")
    group = integers_attr(el, a.get("group", "0"), "geom@group", 1)[0]
    return {"el": el, "geom": g, "mass": m, "density": rho, "group": group, "type": gtype, "shell": shell,
            "mesh": reader.meshes[a["mesh"]] if gtype == "mesh" else None}

def _role(el, a) -> str:
    """'visual' for a geom that collides with nothing (``contype`` and ``conaffinity`` both 0: MuJoCo's
    visual-only geoms), else 'collision'."""
    contype = integers_attr(el, a.get("contype", "1"), "geom@contype", 1)[0]
    conaffinity = integers_attr(el, a.get("conaffinity", "1"), "geom@conaffinity", 1)[0]
    return "visual" if contype == 0 and conaffinity == 0 else "collision"


#: MuJoCo's default geom colour (XML reference, ``geom@rgba``)
_DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)


def _material(reader, el, a) -> Material | None:
    """The geom's colour as MuJoCo draws it: its ``rgba`` when that differs from the default (it then
    wins over the material, XML reference ``geom@rgba``), else its ``material``'s, else None (an
    unknown material, which MuJoCo refuses, is warned about and left out)."""
    rgba = floats_attr(el, a, "rgba", 4)
    rgba = None if rgba is None else tuple(float(x) for x in rgba)
    name = a.get("material")
    if name is not None and name not in reader.materials:
        # (MuJoCo refuses the file; its mass properties do not depend on the colour, so it is read, warned)
        log.warning("%s: unknown material %r%s: the geom's colour is left out", where(el), name,
                    did_you_mean(name, reader.materials))
        name = None
    if rgba is not None and rgba != _DEFAULT_RGBA:
        return Material(None, tuple(min(max(x, 0.0), 1.0) for x in rgba))
    if name is not None:
        return Material(name, tuple(min(max(x, 0.0), 1.0) for x in reader.materials[name]))
    return None if rgba is None else Material(None, rgba)


def fit_to_mesh(reader, el, a, gtype, pose):
    """Half sizes (3,) and pose of a primitive geom fitted to its ``mesh`` (:mod:`parsers.mjcf.fit`)."""
    rec = mesh_record(reader, el, a["mesh"])
    fitscale = parse_float(a.get("fitscale", "1"), el, "geom@fitscale")
    try:
        size, frame = fitted_primitive(gtype, mesh_data(rec), rec["scale"], rec["inertia"], reader.comp.fitaabb,
                                       fitscale, rec["ref"])
    except ValueError as exc:
        raise error(el, f"geom fitted to mesh {a['mesh']!r}: {exc}") from None
    return size, pose.compose(frame)


def mesh_record(reader, el, name):
    """The mesh asset ``name`` (InputError with a suggestion when unknown)."""
    if name not in reader.meshes:
        raise error(el, f"unknown mesh {name!r}{did_you_mean(name, reader.meshes)}")
    return reader.meshes[name]


# ---------------------------------------------------------- mass props
def geom_mass(reader, gd) -> MassProperties:
    g = gd["geom"]
    if gd["type"] in ("plane", "hfield", "sdf"):
        return MassProperties.zero()
    lo, hi = reader.comp.groups
    if not lo <= gd["group"] <= hi:
        return MassProperties.zero()
    try:
        if g.kind == "mesh":
            unit = mesh_unit_mass(reader, gd)
        elif gd["shell"]:
            area, moments = shell_unit_properties(g.kind, g.params)
            unit = transform_mass_properties(MassProperties(area, np.zeros(3), np.diag(moments)), g.pose)
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


def mesh_unit_mass(reader, gd) -> MassProperties:
    """A mesh geom's mass properties at unit density by MuJoCo's rule for its mode
    (:mod:`parsers.mjcf.mesh`), or the exact solid with ``mesh_inertia='exact'``."""
    g = gd["geom"]
    name = g.file or f"{gd['el'].get('mesh')!r} (inline)"
    try:
        (vol, com, J), note = mesh_unit_properties(mesh_data(gd["mesh"]), g.params["scale"], g.params["inertia"],
                                                   name, exact=reader.options.get("mesh_inertia") == "exact",
                                                   ref=g.params.get("ref"))
    except ValueError as exc:
        raise error(gd["el"], f"mesh {name}: {exc}") from None
    if note:
        log.warning("%s: mesh %s: %s", where(gd["el"]), name, note)
    if g.file:
        file_progressed(g.file, 1.0)
    return transform_mass_properties(MassProperties(vol, com, J), g.pose)


def check_inertial_attributes(el) -> None:
    """MuJoCo's schema requires ``pos`` and ``mass`` on every ``<inertial>``, used or not."""
    for key in ("pos", "mass"):
        if key not in el.attrib:
            raise error(el, f"<inertial> needs attribute {key!r}")


def inertial_mass(reader, el, frame_pose: Pose) -> MassProperties:
    a = el.attrib
    check_inertial_attributes(el)
    pos = floats_attr(el, a, "pos", 3)
    mass = parse_float(a["mass"], el, "inertial@mass")
    if mass < 0:
        raise error(el, f"inertial@mass must be >= 0, got {mass:g}")
    full = floats_attr(el, a, "fullinertia", 6)
    diag = floats_attr(el, a, "diaginertia", 3)
    if full is not None and diag is not None:
        raise error(el, "<inertial> has both diaginertia and fullinertia")
    if full is not None:
        if any(k in a for k in ORIENT_ATTRS):
            raise error(el, "<inertial>: fullinertia cannot be combined with an orientation")
        xx, yy, zz, xy, xz, yz = full
        J = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    elif diag is not None:
        R = orientation(el, a, reader.comp)
        J = R @ np.diag(diag) @ R.T
    else:
        raise error(el, "<inertial> needs diaginertia or fullinertia")
    check_principal_moments(el, J, reader.comp.balanceinertia)
    return transform_mass_properties(MassProperties(mass, pos, J), frame_pose)


def body_mass(reader, b):
    use_geoms = reader.comp.inertiafromgeom == "true" or (reader.comp.inertiafromgeom == "auto"
                                                           and b["inertial"] is None)
    if b["inertial"] is not None and not use_geoms:
        el, fp = b["inertial"]
        return inertial_mass(reader, el, fp), Source(reader.file, el.sourceline)
    if b["inertial"] is not None:                    # ignored (inertiafromgeom), yet MuJoCo checks it
        check_inertial_attributes(b["inertial"][0])
    if use_geoms and b["geoms"]:
        mp = combine(geom_mass(reader, gd) for gd in b["geoms"])
        return mp, Source(reader.file, b["el"].sourceline, "computed from geoms")
    return MassProperties.zero(), Source(reader.file, b["el"].sourceline, "massless")


def compile_masses(reader):
    """Every body's mass properties, then the compiler's bounds and ``settotalmass``."""
    meshes = (gd["geom"].file for b in reader.bodies[1:] for gd in b["geoms"]
              if gd["geom"].kind == "mesh" and gd["geom"].file)       # inline meshes have no file
    with MeshWork(meshes):
        for b in reader.bodies[1:]:
            b["mass"], b["mass_src"] = body_mass(reader, b)
    for b in reader.bodies[1:]:
        mp = b["mass"]
        if mp.mass == 0.0 and reader.comp.boundmass > 0:   # MuJoCo puts the bounded mass at the body's pos
            local = reader.bodies[b["parent"]]["pose"].inverse().compose(b["pose"])
            mp = MassProperties(0.0, local.translation, mp.inertia)
        b["mass"] = bounded_mass(mp, reader.comp)
    scale = total_mass_scale([b["mass"].mass for b in reader.bodies[1:]], reader.comp)
    for b in reader.bodies[1:]:
        mp = b["mass"]
        b["mass"] = MassProperties(scale * mp.mass, mp.com, scale * mp.inertia)
