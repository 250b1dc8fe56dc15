"""STEP assemblies (AP203, AP214, AP242) -> :class:`Assembly`, with joints from mating geometry.

Seed 004 (Diaz-Calderon, Paredis, Khosla) starts from a CAD assembly whose parts
and mating relations give the bodies and joints; this reader is that first step.

* Parts are the leaf solids of the XCAF tree (:func:`brep.leaf_parts`): instance
  name, else product name, made unique by the path in the tree; placed by the
  composed placements; body frame = the instance's placement.
* Mass properties: BRepGProp volume properties of the exact B-rep times the
  density, which comes from the file's material, else ``densities`` (part name
  or glob pattern -> kg/m^3), else ``density``, else :data:`DEFAULT_DENSITY`
  with one warning listing the parts that got it.
* Each part is tessellated (BRepMesh) to an STL (metres, body frame) in
  ``mesh_dir`` (default: a cache folder named after the file's content), which
  the body's Geometry references, so the exporters and pictures work; the
  part's colour from the file, if any, is the mesh's ``rgba`` parameter.
* Joints: declared ``joints`` (by part name) first, then the joints the
  contacts give (:mod:`.mating`, :mod:`.freedom`); a part that touches nothing
  and has no declared joint is an error naming it.  The ``ground`` parts (default:
  the first part of the tree) are welded to ground by implicit joints.

Tolerance options (``contact_tol``, ``max_clearance``) are in the file's length
unit; their defaults are 0.01 mm and 0.5 mm; ``angle_tol`` is 1e-3 rad.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..assembly import GROUND, Assembly, Body, Geometry, Joint, MassProperties, Pose, Source
from ..errors import InputError, did_you_mean
from . import brep
from .inference import infer_joints
from .mating import PLANAR_CONTACT_POLICIES, MatingTolerances, Surface

log = logging.getLogger(__name__)

#: density of parts with no material in the file and none given, kg/m^3 (aluminium)
DEFAULT_DENSITY = 2700.0


@dataclass
class Part:
    """A part as the reader sees it (mm, assembly frame): name, leaf, density and its provenance."""

    name: str
    leaf: brep.LeafPart
    density: float = 0.0
    density_from: str = ""


def read_step(path, *, contact_tol: float | None = None, angle_tol: float = 1e-3,
              max_clearance: float | None = None, planar_contacts: str = "fixed", ground=None,
              density: float | None = None, densities=None, names=None, actuated=(), joints=(),
              joint_names=None, mesh_dir=None, base: str = "fixed", name: str | None = None,
              gravity=(0.0, 0.0, -9.81)) -> Assembly:
    """Read a STEP assembly into an :class:`Assembly` (SI units), joints inferred from contacts.

    Parameters
    ----------
    path : the ``.step``/``.stp`` file.
    contact_tol, max_clearance : in the file's length unit (defaults 0.01 mm, 0.5 mm).
    angle_tol : rad.
    planar_contacts : 'fixed' (default) or 'planar': pairs touching only in one plane.
    ground : part name or list of names welded to ground (default: the first part).
    density : kg/m^3 for parts without a material in the file.
    densities : mapping part name or glob pattern -> kg/m^3 (wins over ``density``).
    names : mapping part name -> new name.
    actuated : joint names, or (part, part) pairs, whose joints are actuated.
    joints : declared :class:`Joint` objects (part names after renaming), or a function of the
        part names returning them; they replace the inferred joint of their pair.
    joint_names : mapping joint name -> (part, part): names for inferred joints
        (default ``reference-secondary``).
    mesh_dir : folder for the tessellated STL files.
    base : 'fixed' (ground parts welded) or 'floating' (free joints).
    """
    path = Path(path)
    doc, unit = brep.read_document(path)
    parts = _parts(path, brep.leaf_parts(doc), names or {})
    _assign_densities(path, parts, density, densities or {})
    tol = _tolerances(path, unit, contact_tol, angle_tol, max_clearance)
    if planar_contacts not in PLANAR_CONTACT_POLICIES:
        raise InputError(f"planar_contacts must be one of {PLANAR_CONTACT_POLICIES}, got {planar_contacts!r}",
                         file=str(path), key="mating")
    mesh_dir = Path(mesh_dir) if mesh_dir is not None else _cache_dir(path)
    mesh_dir.mkdir(parents=True, exist_ok=True)
    bodies, surfaces, boxes = [], {}, {}
    for part in _progress(parts, "parts"):
        body, surfs, box = _part_body(path, part, tol, mesh_dir)
        bodies.append(body)
        surfaces[part.name], boxes[part.name] = surfs, box
    grounds = _grounds(path, parts, ground)
    declared = joints([p.name for p in parts]) if callable(joints) else list(joints)
    result = infer_joints(str(path), [p.name for p in parts], surfaces, boxes, tol, planar_contacts,
                          grounds, declared, _progress)
    named = _named(path, list(result.joints), joint_names or {})
    all_joints = _ground_joints(path, grounds, base, parts) + _with_actuation(path, named, actuated)
    return Assembly(name=name or path.stem, bodies=tuple(bodies), joints=tuple(all_joints),
                    gravity=np.asarray(gravity, dtype=float), source_file=str(path),
                    contacts=tuple(c.scaled(1e-3) for c in result.contacts))


def _progress(items, what: str):
    """tqdm on stderr when it is a terminal, else the items themselves."""
    if not sys.stderr.isatty():
        return items
    from tqdm import tqdm
    return tqdm(items, desc=what, file=sys.stderr, leave=False)


def _tolerances(path, unit: float, contact_tol, angle_tol, max_clearance) -> MatingTolerances:
    """The rules' tolerances in mm (options in the file's unit)."""
    to_mm = unit * 1e3
    tol = MatingTolerances(
        contact_tol=0.01 if contact_tol is None else float(contact_tol) * to_mm,
        angle_tol=float(angle_tol),
        max_clearance=0.5 if max_clearance is None else float(max_clearance) * to_mm)
    for key in ("contact_tol", "angle_tol", "max_clearance"):
        if not getattr(tol, key) > 0.0:
            raise InputError(f"{key} must be > 0, got {getattr(tol, key)}", file=str(path), key="mating")
    return tol


def _cache_dir(path: Path) -> Path:
    digest = hashlib.sha1(path.read_bytes()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / "mbcompose-step-meshes" / f"{path.stem}-{digest}"


def _parts(path, leaves, renames) -> list[Part]:
    """Parts with unique names (duplicates get their tree path), renamed as asked."""
    if not leaves:
        raise InputError("empty assembly: the STEP file holds no part", file=str(path))
    counts: dict[str, int] = {}
    for leaf in leaves:
        counts[leaf.name] = counts.get(leaf.name, 0) + 1
    names, parts = set(), []
    for leaf in leaves:
        n = leaf.name if counts[leaf.name] == 1 else "/".join(leaf.path)
        base, k = n, 2
        while n in names:
            n, k = f"{base}#{k}", k + 1
        names.add(n)
        parts.append(Part(n, leaf))
    unknown = sorted(set(renames) - names)
    if unknown:
        raise InputError(f"no part {unknown[0]!r}{did_you_mean(unknown[0], sorted(names))}", file=str(path),
                         key="names")
    for p in parts:
        p.name = str(renames.get(p.name, p.name))
    if len({p.name for p in parts}) != len(parts):
        raise InputError("two parts would get the same name", file=str(path), key="names")
    if GROUND in {p.name for p in parts}:
        raise InputError(f"part name {GROUND!r} is reserved for the fixed world", file=str(path), key="names")
    return parts


def _assign_densities(path, parts: list[Part], density, densities) -> None:
    """Density of each part: file material, else ``densities`` (name or pattern), else ``density``, else default."""
    for key, value in list(densities.items()) + ([("density", density)] if density is not None else []):
        if not (isinstance(value, (int, float)) and value > 0):
            raise InputError(f"density for {key!r} must be a positive number (kg/m^3), got {value!r}",
                             file=str(path))
    defaulted = []
    for p in parts:
        match = next((pat for pat in densities if pat == p.name or fnmatch.fnmatchcase(p.name, pat)), None)
        if p.leaf.density is not None:
            if not p.leaf.density > 0:
                raise InputError(f"part {p.name}: the file's material density is not positive", file=str(path))
            p.density, p.density_from = p.leaf.density, "the file's material"
        elif match is not None:
            p.density, p.density_from = float(densities[match]), f"densities[{match!r}]"
        elif density is not None:
            p.density, p.density_from = float(density), "the density option"
        else:
            p.density, p.density_from = DEFAULT_DENSITY, "the default density"
            defaulted.append(p.name)
    if defaulted:
        log.warning("%s: no density for %s; the default %g kg/m^3 was used", path, ", ".join(defaulted),
                    DEFAULT_DENSITY)


def _part_body(path, part: Part, tol: MatingTolerances, mesh_dir: Path) -> tuple[Body, list[Surface], np.ndarray]:
    """The Body (SI, body frame = instance placement), its surfaces and bounding box (mm)."""
    shape = part.leaf.shape
    problem = brep.solid_problem(shape)
    if problem:
        raise InputError(f"part {part.name}: {problem}", file=str(path))
    volume, com, inertia = brep.volume_properties(shape)
    if not volume > 0.0:
        raise InputError(f"part {part.name}: the solid's volume is not positive ({volume:g})", file=str(path))
    placement = part.leaf.placement
    pose = Pose(placement[:3, :3], placement[:3, 3] * 1e-3)
    r = pose.rotation
    mass = part.density * volume * 1e-9
    inertia_body = r.T @ (part.density * inertia * 1e-15) @ r
    mp = MassProperties(mass, r.T @ (com * 1e-3 - pose.translation), 0.5 * (inertia_body + inertia_body.T))
    faces = brep.tessellate_faces(shape, _deflection(shape))
    surfaces = _surfaces(part.name, faces)
    stl = _write_stl(mesh_dir / f"{_file_stem(part.name)}.stl", faces, pose)
    note = f"B-rep volume {volume * 1e-9:.9g} m^3 at density {part.density:g} kg/m^3 from {part.density_from}"
    src = Source(file=str(path), note=f"part {part.name}: {note}")
    body = Body(name=part.name, pose=pose, mass=mp,
                geometry=(Geometry("mesh", _mesh_params(part.leaf.color), Pose(), str(stl), "inertial"),),
                sources={"pose": Source(str(path), note=f"part {part.name}: placement in the assembly tree"),
                         "mass": src, "com": src, "inertia": src})
    verts = np.vstack([v for _, v, _ in faces if len(v)]) if any(len(v) for _, v, _ in faces) else np.zeros((1, 3))
    return body, surfaces, np.array([verts.min(axis=0), verts.max(axis=0)])


def _mesh_params(color) -> dict:
    """Mesh parameters: unit scale (the STL is in metres) and the part's colour as ``rgba`` when the file has one."""
    params: dict = {"scale": (1.0, 1.0, 1.0)}
    if color is not None:
        params["rgba"] = (*map(float, color), 1.0)
    return params


def _deflection(shape) -> float:
    """Linear deflection of the tessellation: 1e-3 of the part's size (mm)."""
    from OCP.Bnd import Bnd_Box
    from OCP.BRepBndLib import BRepBndLib
    box = Bnd_Box()
    BRepBndLib.Add_s(shape, box)
    return max(1e-3, 1e-3 * np.sqrt(box.SquareExtent()))


def _surfaces(part: str, faces) -> list[Surface]:
    out = []
    for k, (face, verts, tris) in enumerate(faces):
        s = brep.face_surface(face)
        if s is None:
            continue
        triangles = verts[tris] if s["kind"] == "plane" and len(tris) else np.zeros((0, 3, 3))
        box = np.array([verts.min(axis=0), verts.max(axis=0)]) if len(verts) else None
        out.append(Surface(part, k, s["kind"], s["point"], s["direction"], s["radius"], s["convex"],
                           tuple(s["extent"]), triangles, box))
    return out


def _file_stem(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def _write_stl(file: Path, faces, pose: Pose) -> Path:
    """Binary STL of the part's triangles, metres, in the body frame."""
    import trimesh
    verts, tris, offset = [], [], 0
    for _, v, t in faces:
        if len(t):
            verts.append(v)
            tris.append(t + offset)
            offset += len(v)
    mesh = trimesh.Trimesh(pose.inverse().apply(np.vstack(verts) * 1e-3), np.vstack(tris), process=True)
    mesh.update_faces(mesh.nondegenerate_faces())        # the collapsed triangles at a sphere's poles
    mesh.remove_unreferenced_vertices()
    tmp = file.with_name(f"{file.name}.{os.getpid()}.part")     # concurrent readers never share a half-written file
    mesh.export(tmp, file_type="stl")
    tmp.replace(file)
    return file.resolve()


def _grounds(path, parts: list[Part], ground) -> list[str]:
    names = [p.name for p in parts]
    if ground is None:
        return [names[0]]
    listed = [ground] if isinstance(ground, str) else list(ground)
    for g in listed:
        if g not in names:
            raise InputError(f"no part {g!r}{did_you_mean(g, sorted(names))}", file=str(path), key="ground")
    return listed


def _ground_joints(path, grounds: list[str], base: str, parts) -> list[Joint]:
    if base not in ("fixed", "floating"):
        raise InputError(f"must be 'fixed' or 'floating', got {base!r}", file=str(path), key="base")
    by_name = {p.name: p for p in parts}
    out = []
    for g in grounds:
        origin = by_name[g].leaf.placement[:3, 3] * 1e-3
        out.append(Joint(name=f"{g}_to_ground", type="fixed" if base == "fixed" else "free", reference=GROUND,
                         secondary=g, origin=origin, implicit=True,
                         source=Source(str(path), note=f"ground part ({base})")))
    return out


def _named(path, joints: list[Joint], joint_names) -> list[Joint]:
    """Inferred joints renamed by ``joint_names`` (name -> pair of parts)."""
    from dataclasses import replace
    by_pair = {frozenset((j.reference, j.secondary)): k for k, j in enumerate(joints)}
    for new, pair in joint_names.items():
        k = by_pair.get(frozenset(pair))
        if k is None or len(set(pair)) != 2:
            raise InputError(f"{new}: no joint between {list(pair)}", file=str(path), key="joint_names")
        joints[k] = replace(joints[k], name=str(new))
    if len({j.name for j in joints}) != len(joints):
        raise InputError("two joints would get the same name", file=str(path), key="joint_names")
    return joints


def _with_actuation(path, joints: list[Joint], actuated) -> list[Joint]:
    """Mark the joints named in ``actuated`` (joint names or part pairs)."""
    from dataclasses import replace
    wanted = set()
    for item in actuated:
        if isinstance(item, str):
            match = [j.name for j in joints if j.name == item]
        else:
            pair = set(item)
            match = [j.name for j in joints if {j.reference, j.secondary} == pair]
        if not match:
            names = [j.name for j in joints]
            raise InputError(f"no joint {item!r}{did_you_mean(str(item), sorted(names))}", file=str(path),
                             key="actuated")
        fixed = [n for n in match if next(j for j in joints if j.name == n).type == "fixed"]
        if fixed:
            raise InputError(f"joint {fixed[0]} is fixed and cannot be actuated", file=str(path), key="actuated")
        wanted.update(match)
    return [replace(j, actuated=True) if j.name in wanted else j for j in joints]
