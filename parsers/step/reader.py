"""STEP assemblies (AP203, AP214, AP242) -> :class:`Assembly`, with joints from mating geometry.

Seed 004 (Diaz-Calderon, Paredis, Khosla) starts from a CAD assembly whose parts
and mating relations give the bodies and joints; this reader is that first step.

* Parts are the leaf solids of the XCAF tree (:func:`brep.leaf_parts`): the
  instance name unless it is a generated id (``NAUO12``, ``=>[0:1:1:4]``, empty),
  then the product name, STEP string escapes decoded; a repeated name becomes
  ``NAME_1``, ``NAME_2``, ... in file order; a part named like the world (``ground``,
  ``world``, ``base``) is an ordinary body of that name (the world's node is
  :data:`~parsers.assembly.GROUND`, a name no part can have).  Placed by the composed placements;
  body frame = the instance's placement.  A leaf without a closed solid is healed
  when sewing its faces closes it, else skipped (one warning for all of them);
  a file with no closed solid at all is an error.  A leaf without a closed solid that
  the servo rules name (:func:`.rules.connector_by_name`: a servo, horn or idler
  vendor model, often shipped as a surface model) is kept as a *connector*: a
  massless body (its shape is shown, adds no mass; one warning per product) whose
  faces take part in the mating rules only.
* Mass properties: BRepGProp volume properties of the exact B-rep times the
  density, which comes from ``densities`` (part name or glob pattern -> kg/m^3),
  else ``density``, else the file's material (in the density unit the file
  declares, :class:`brep.DensityUnits`), else :data:`DEFAULT_DENSITY` with one
  warning listing the parts that got it; densities outside
  :data:`PLAUSIBLE_DENSITY` are named in a warning.
* Each part is tessellated (BRepMesh) to an STL (metres, body frame) in
  ``mesh_dir`` (default: ``$XDG_CACHE_HOME`` or ``~/.cache``, then
  ``mbcompose/step-meshes/<file>-<content digest>``), which
  the body's Geometry references, so the exporters and pictures work; the
  part's colour from the file, if any, is the mesh's ``rgba`` parameter.
* Joints: the parts are put in rigid groups and joined by declared joints, servo
  joints and the joints their contacts give, with evidence and confidence
  (:mod:`.inference`, :mod:`.rules`, :mod:`.mating`, :mod:`.freedom`); a group that
  touches nothing and has no joint is an error naming it.  The ``ground`` parts
  (default: the first part of the tree) are welded to ground by implicit joints.

Tolerance options (``contact_tol``, ``max_clearance``) are in the file's length
unit; their defaults are 0.01 mm and 0.5 mm; ``angle_tol`` is 1e-3 rad.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mbcompose.dynamics.tolerances import DECLARED_GEOMETRY_ATOL

from ..assembly import (
    GROUND,
    Assembly,
    Body,
    Geometry,
    Joint,
    MassProperties,
    Pose,
    Source,
)
from ..errors import InputError, did_you_mean
from . import brep, rules
from .inference import RIGID_NOTE, infer_joints
from .mating import PLANAR_CONTACT_POLICIES, MatingTolerances, Surface

log = logging.getLogger(__name__)

#: density of parts with no material in the file and none given, kg/m^3 (aluminium)
DEFAULT_DENSITY = 2700.0

#: densities of solid engineering materials, kg/m^3 (foams and balsa below, osmium's 22,590 above)
PLAUSIBLE_DENSITY = (300.0, 22000.0)
#: cubic millimetres to cubic metres, and kg/m^3 x mm^5 (a B-rep inertia times density) to kg m^2:
#: OpenCascade measures the B-rep in the file's length unit, which the reader makes millimetres
MM3_TO_M3 = 1e-9
MM5_TO_M5 = 1e-15


@dataclass
class Part:
    """A part as the reader sees it (mm, assembly frame): name, leaf, density and its provenance."""

    name: str
    leaf: brep.LeafPart
    density: float = 0.0
    density_from: str = ""
    connector: str | None = None      # why a leaf without a closed solid is kept for mating only (massless)


def read_step(path, *, contact_tol: float | None = None, angle_tol: float = 1e-3,
              max_clearance: float | None = None, planar_contacts: str = "fixed", ground=None,
              density: float | None = None, densities=None, names=None, actuated=(), passive=(), joints=(),
              joint_names=None, mesh_dir=None, base: str = "fixed", name: str | None = None,
              gravity=(0.0, 0.0, -9.81), ignore=None, declare=None) -> Assembly:
    """Read a STEP assembly into an :class:`Assembly` (SI units), joints inferred from contacts.

    Parameters
    ----------
    path : the ``.step``/``.stp`` file.
    contact_tol, max_clearance : in the file's length unit (defaults 0.01 mm, 0.5 mm).
    angle_tol : rad.
    planar_contacts : 'fixed' (default) or 'planar': pairs touching only in one plane.
    ground : part name or list of names welded to ground (default: the first part).
    density : kg/m^3 for every part (wins over the file's materials).
    densities : mapping part name or glob pattern -> kg/m^3 (wins over ``density`` and the file).
    names : mapping part name -> new name.
    actuated : joint names, or (part, part) pairs, whose joints are actuated.
    passive : joint names or glob patterns whose joints are not actuated (servos used as encoders,
        moved by hand); ``actuated`` wins over it for a joint both name.
    joints : declared :class:`Joint` objects (part names after renaming), or a function of the
        part names returning them; they replace the inferred joint of their pair.
    joint_names : mapping joint name -> (part, part): names for inferred joints
        (default ``reference-secondary``).
    mesh_dir : folder for the tessellated STL files.
    base : 'fixed' (ground parts welded) or 'floating' (free joints).
    ignore : a function of the parts' ``(name, instance path)`` returning the names of the parts to
        drop before inference (the wrapper's ``ignore`` patterns).
    declare : a function of the kept parts' ``(name, instance path)`` returning ``(rigid, between)``:
        rigid groups ``(part names, evidence)`` and :class:`.inference.Declared` joints.
    """
    path = Path(path)
    parts, unit = _read_parts(path, density, densities, names, connectors=True)
    if ignore is not None:
        dropped = set(ignore([(p.name, p.leaf.path) for p in parts]))
        parts = [p for p in parts if p.name not in dropped]
        if not parts:
            raise InputError("every part is ignored", file=str(path), key="ignore")
        log.info("%s: %d part(s) ignored", path, len(dropped))
    rigid, between = declare([(p.name, p.leaf.path) for p in parts]) if declare is not None else ((), ())
    tol = _tolerances(path, unit, contact_tol, angle_tol, max_clearance)
    if planar_contacts not in PLANAR_CONTACT_POLICIES:
        raise InputError(f"planar_contacts must be one of {PLANAR_CONTACT_POLICIES}, got {planar_contacts!r}",
                         file=str(path), key="mating")
    mesh_dir = Path(mesh_dir) if mesh_dir is not None else _cache_dir(path)
    mesh_dir.mkdir(parents=True, exist_ok=True)
    bodies, surfaces, boxes, products, frames, held = [], {}, {}, _Products(), {}, []
    for part in _progress(parts, "parts"):
        placed = products.of(part.leaf.shape)
        body, surfs, box = _part_body(path, part, placed, mesh_dir)
        bodies.append(body)
        surfaces[part.name], boxes[part.name] = surfs, box
        frames[part.name] = (id(placed.product), placed.rotation, placed.translation)
        held.append(placed.product)        # alive until inference, so that no id is reused
    grounds = _grounds(path, parts, ground)
    declared = joints([p.name for p in parts]) if callable(joints) else list(joints)
    result = infer_joints(str(path), [p.name for p in parts], surfaces, boxes, tol, planar_contacts,
                          grounds, declared, _progress, between=between, rigid=rigid,
                          paths={p.name: p.leaf.path for p in parts},
                          connectors=frozenset(p.name for p in parts if p.connector),
                          products={p.name: p.leaf.product for p in parts}, frames=frames)
    bodies = [b for b in bodies if b.name in result.group_of]
    named = _named(path, list(result.joints), joint_names or {}, result.group_of)
    all_joints = _ground_joints(path, grounds, base, parts) + _with_actuation(path, _passive(path, named, passive), actuated)
    return Assembly(name=name or path.stem, bodies=tuple(bodies), joints=tuple(all_joints),
                    gravity=np.asarray(gravity, dtype=float), source_file=str(path),
                    contacts=tuple(c.scaled(1e-3) for c in result.contacts))


def read_parts(path, *, density: float | None = None, densities=None, names=None) -> list[Part]:
    """The parts of a STEP file as :func:`read_step` sees them, before meshing and joint inference.

    Each has its unique name, its leaf (closed solid, placement in mm, colour, file density) and
    the density that applies (kg/m^3) with where it comes from; the options are those of
    :func:`read_step`.  :func:`part_mass` gives a part's mass properties.
    """
    return _read_parts(Path(path), density, densities, names)[0]


def _read_parts(path: Path, density, densities, names, connectors: bool = False) -> tuple[list[Part], float]:
    """(parts with names and densities, the file's length unit in metres); with ``connectors``, the
    leaves without a closed solid that :func:`.rules.connector_by_name` names follow the solids."""
    doc, unit, density_units = brep.read_document(path)
    solids, kept = _solid_leaves(path, brep.leaf_parts(doc, density_units), connectors)
    parts = _parts(path, solids + [leaf for leaf, _ in kept], names or {})
    for part, (_, why) in zip(parts[len(solids):], kept):
        part.connector = why
    _assign_densities(path, [p for p in parts if p.connector is None], density, densities or {})
    return parts, unit


def part_mass(path, part: Part, properties=None) -> tuple[MassProperties, Pose, float]:
    """(mass properties in the body frame (kg, m, kg m^2), body pose (m), B-rep volume (mm^3)) of a part.

    Mass = density x the BRepGProp volume of the exact B-rep; the body frame is the instance's
    placement.  ``properties``: the part's (volume mm^3, centre (3,) mm, inertia (3, 3) mm^5) in the
    assembly frame when already known (:class:`_Products`), else they are computed here.  Raises
    InputError for a solid whose volume is not positive.
    """
    shape = part.leaf.shape
    placement = part.leaf.placement
    if part.connector is not None:
        return MassProperties.zero(), Pose(placement[:3, :3], placement[:3, 3] * 1e-3), 0.0
    problem = brep.solid_problem(shape)
    if problem:
        raise InputError(f"part {part.name}: {problem}", file=str(path))
    volume, com, inertia = properties if properties is not None else brep.volume_properties(shape)
    if not volume > 0.0:
        raise InputError(f"part {part.name}: the solid's volume is not positive ({volume:g})", file=str(path))
    pose = Pose(placement[:3, :3], placement[:3, 3] * 1e-3)
    r = pose.rotation
    mass = part.density * volume * MM3_TO_M3
    inertia_body = r.T @ (part.density * inertia * MM5_TO_M5) @ r
    mp = MassProperties(mass, r.T @ (com * 1e-3 - pose.translation), 0.5 * (inertia_body + inertia_body.T))
    return mp, pose, volume


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
    """``$XDG_CACHE_HOME`` (else ``~/.cache``) ``/mbcompose/step-meshes/<stem>-<content digest>``."""
    digest = hashlib.sha1(path.read_bytes()).hexdigest()[:16]
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "mbcompose" / "step-meshes" / f"{path.stem}-{digest}"


#: how many names the warning about skipped parts lists
SKIPPED_SHOWN = 5


def _solid_leaves(path, leaves: list[brep.LeafPart], connectors: bool = False):
    """(the leaves with a closed solid, healed by sewing where that closes them; the connectors).

    With ``connectors``, a leaf without a closed solid that :func:`.rules.connector_by_name` names is
    kept as a connector, ``(leaf, evidence)``, with one warning per product; one warning for the rest.
    A file whose leaves all lack a closed solid is an error.
    """
    kept, skipped, kept_shells = [], [], []
    for leaf in leaves:
        solid, problem = brep.closed_solid(leaf.shape)
        if solid is None:
            why = rules.connector_by_name(leaf.name, leaf.product) if connectors and _has_faces(leaf.shape) else None
            if why:
                kept_shells.append((leaf, f"{problem}; {why}"))
            else:
                skipped.append((leaf, problem))
            continue
        if problem:
            log.info("%s: part %s: %s", path, "/".join(leaf.path), problem)
            leaf.shape = solid
        kept.append(leaf)
    if (skipped or kept_shells) and not kept:
        first = (skipped or kept_shells)[0]
        more = f" (and {len(skipped) + len(kept_shells) - 1} more parts without one)" if len(
            skipped) + len(kept_shells) > 1 else ""
        raise InputError(f"no part has a closed solid: part {first[0].name}: {first[1]}{more}", file=str(path))
    if skipped:
        shown = ", ".join("/".join(leaf.path) for leaf, _ in skipped[:SKIPPED_SHOWN])
        more = f" and {len(skipped) - SKIPPED_SHOWN} more" if len(skipped) > SKIPPED_SHOWN else ""
        log.warning("%s: %d parts without a closed solid (open shells, surfaces or wires that sewing does not "
                    "close) were skipped: %s%s; run with --verbose to list them all", path, len(skipped), shown, more)
        for leaf, problem in skipped:
            log.info("%s: skipped part %s: %s", path, "/".join(leaf.path), problem)
    by_product: dict[str, list] = {}
    for leaf, why in kept_shells:
        by_product.setdefault(leaf.product or leaf.name, []).append((leaf, why))
    for product, shells in by_product.items():
        log.warning("%s: %d instance(s) of %s without a closed solid (%s) kept for mating only: massless, they "
                    "add no mass (give it to the part each is fixed to with 'parts:' if it matters)",
                    path, len(shells), product, shells[0][1])
    return kept, kept_shells


def _has_faces(shape) -> bool:
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopExp import TopExp_Explorer
    return TopExp_Explorer(shape, TopAbs_FACE).More()


def _parts(path, leaves, renames) -> list[Part]:
    """Parts with unique names (a repeated name becomes NAME_1, NAME_2, ... in file order), renamed as asked."""
    if not leaves:
        raise InputError("empty assembly: the STEP file holds no part", file=str(path))
    counts: dict[str, int] = {}
    for leaf in leaves:
        counts[leaf.name] = counts.get(leaf.name, 0) + 1
    taken = {name for name, c in counts.items() if c == 1}
    seen: dict[str, int] = {}
    names, parts = set(), []
    for leaf in leaves:
        n = leaf.name
        if counts[n] > 1:
            k = seen.get(n, 0) + 1
            while f"{leaf.name}_{k}" in taken:     # a part already named like NAME_2 keeps its name
                k += 1
            seen[n], n = k, f"{leaf.name}_{k}"
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
    return parts


def _assign_densities(path, parts: list[Part], density, densities) -> None:
    """Density of each part: ``densities`` (name or pattern), else ``density``, else the file's material, else default.

    The options win over the file's material, and the part's ``density_from`` says so.  Densities
    outside :data:`PLAUSIBLE_DENSITY` get one warning naming the parts.
    """
    for key, value in list(densities.items()) + ([("density", density)] if density is not None else []):
        if not (isinstance(value, (int, float)) and value > 0):
            raise InputError(f"density for {key!r} must be a positive number (kg/m^3), got {value!r}",
                             file=str(path))
    defaulted = []
    for p in parts:
        match = next((pat for pat in densities if pat == p.name or fnmatch.fnmatchcase(p.name, pat)), None)
        if p.leaf.density is not None and not p.leaf.density > 0:
            raise InputError(f"part {p.name}: the file's material density is not positive", file=str(path))
        over = "" if p.leaf.density is None else f" (over the file's material, {p.leaf.density:g} kg/m^3)"
        if match is not None:
            p.density, p.density_from = float(densities[match]), f"densities[{match!r}]{over}"
        elif density is not None:
            p.density, p.density_from = float(density), f"the density option{over}"
        elif p.leaf.density is not None:
            p.density, p.density_from = p.leaf.density, "the file's material"
        else:
            p.density, p.density_from = DEFAULT_DENSITY, "the default density"
            defaulted.append(p.name)
    if defaulted:
        log.warning("%s: no density for %s; the default %g kg/m^3 was used", path, ", ".join(defaulted),
                    DEFAULT_DENSITY)
    odd = [f"{p.name} ({p.density:g})" for p in parts if not PLAUSIBLE_DENSITY[0] <= p.density <= PLAUSIBLE_DENSITY[1]]
    if odd:
        log.warning("%s: density outside %g-%g kg/m^3 (check the material or its unit, or give densities): %s",
                    path, *PLAUSIBLE_DENSITY, ", ".join(odd))


@dataclass
class _Product:
    """What the reader computes once per product shape, in the product's own frame (mm).

    volume (mm^3), com (3,) mm, inertia (3, 3) mm^5 about the com at unit density; faces: per B-rep
    face (analytic surface dict of :func:`brep.face_surface` or None, vertices (n, 3), triangles (m, 3)).
    """

    volume: float
    com: np.ndarray
    inertia: np.ndarray
    faces: list
    stl: Path | None = None     # the STL of an instance whose body frame is the product's frame


@dataclass
class _Placed:
    """A product's geometry and the rigid motion (rotation (3, 3), translation (3,) mm) that places an instance."""

    product: _Product
    rotation: np.ndarray
    translation: np.ndarray

    def properties(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(volume mm^3, centre (3,) mm, inertia (3, 3) mm^5) in the assembly frame."""
        r, p = self.rotation, self.product
        return p.volume, r @ p.com + self.translation, r @ p.inertia @ r.T

    def faces(self) -> list:
        """Per face (surface dict or None, vertices (n, 3), triangles (m, 3)) in the assembly frame."""
        r, t = self.rotation, self.translation
        return [(_moved_surface(s, r, t), v @ r.T + t, tris) for s, v, tris in self.product.faces]


class _Products:
    """Mass properties, tessellation and analytic faces computed once per product, not per instance.

    A product placed n times (screws, servo cases) shares one B-rep (``TShape``); the instances
    differ by a rigid location, so the volume integrals are rotated (com: R c + t; inertia about
    the com: R I R^T) and the mesh vertices and surfaces moved instead of recomputed.  A location
    that is not a proper rotation (mirrored or scaled instance) is computed on the placed shape.
    """

    def __init__(self) -> None:
        self._seen: dict[int, list[tuple[object, _Product]]] = {}

    def of(self, shape) -> _Placed:
        base, m = brep.unlocated(shape)
        r = m[:3, :3]
        if not (np.allclose(r @ r.T, np.eye(3), atol=DECLARED_GEOMETRY_ATOL) and np.linalg.det(r) > 0.0):
            return _Placed(_product(shape), np.eye(3), np.zeros(3))
        bucket = self._seen.setdefault(hash(base), [])
        product = next((p for s, p in bucket if s.IsEqual(base)), None)
        if product is None:
            product = _product(base)
            bucket.append((base, product))
        return _Placed(product, r, m[:3, 3])


def _product(shape) -> _Product:
    volume, com, inertia = brep.volume_properties(shape)
    faces = [(brep.face_surface(face), v, t) for face, v, t in brep.tessellate_faces(shape, _deflection(shape))]
    return _Product(volume, com, inertia, faces)


def _mesh_file(file: Path, part: Part, placed: _Placed, faces, pose: Pose) -> Path:
    """The part's STL (metres, body frame): written, or copied from an earlier instance of its product.

    An instance whose placement is exactly its shape's location has the product's own frame as body
    frame, so its STL is the same as every such instance's: the first one is written, the others copied.
    """
    placement = part.leaf.placement
    own_frame = np.array_equal(placement[:3, :3], placed.rotation) and np.array_equal(placement[:3, 3],
                                                                                      placed.translation)
    if own_frame and placed.product.stl is not None and placed.product.stl.exists():
        tmp = file.with_name(f"{file.name}.{os.getpid()}.part")
        shutil.copyfile(placed.product.stl, tmp)
        tmp.replace(file)
        return file.resolve()
    stl = _write_stl(file, faces, pose)
    if own_frame:
        placed.product.stl = stl
    return stl


def _moved_surface(s: dict | None, r: np.ndarray, t: np.ndarray) -> dict | None:
    """An analytic surface dict of :func:`brep.face_surface` moved by (r, t); a sphere's direction stays +z."""
    if s is None:
        return None
    moved = dict(s, point=r @ s["point"] + t)
    if s["kind"] != "sphere":
        moved["direction"] = r @ s["direction"]
    return moved


def _part_body(path, part: Part, placed: _Placed, mesh_dir: Path) -> tuple[Body, list[Surface], np.ndarray]:
    """The Body (SI, body frame = instance placement), its surfaces and bounding box (mm)."""
    mp, pose, volume = part_mass(path, part, placed.properties())
    faces = placed.faces()
    surfaces = _surfaces(part.name, faces)
    stl = _mesh_file(mesh_dir / f"{_file_stem(part.name)}.stl", part, placed, faces, pose)
    note = f"B-rep volume {volume * MM3_TO_M3:.9g} m^3 at density {part.density:g} kg/m^3 from {part.density_from}"
    if part.connector is not None:
        note = f"massless: {part.connector}; kept for mating only"
    src = Source(file=str(path), note=f"part {part.name}: {note}")
    role = "inertial" if part.connector is None else "visual"
    body = Body(name=part.name, pose=pose, mass=mp,
                geometry=(Geometry("mesh", _mesh_params(part.leaf.color), Pose(), str(stl), role),),
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
    for k, (s, verts, tris) in enumerate(faces):
        if s is None:
            continue
        triangles = verts[tris] if s["kind"] == "plane" and len(tris) else np.zeros((0, 3, 3))
        box = np.array([verts.min(axis=0), verts.max(axis=0)]) if len(verts) else None
        out.append(Surface(part, k, s["kind"], s["point"], s["direction"], s["radius"], s["convex"],
                           tuple(s["extent"]), triangles, box, s.get("minor", 0.0)))
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


def _named(path, joints: list[Joint], joint_names, group_of: dict) -> list[Joint]:
    """Inferred joints renamed by ``joint_names`` (name -> pair of parts: the joint between their groups)."""
    from dataclasses import replace

    def group(part):
        return group_of.get(part, part)
    by_parts = {frozenset((j.reference, j.secondary)): k for k, j in enumerate(joints)}
    by_groups = {frozenset((group(j.reference), group(j.secondary))): k for k, j in enumerate(joints)
                 if not (j.source and j.source.note.startswith(RIGID_NOTE))}
    for new, pair in joint_names.items():
        k = by_parts.get(frozenset(pair), by_groups.get(frozenset(group(p) for p in pair)))
        if k is None or len(set(pair)) != 2:
            raise InputError(f"{new}: no joint between {list(pair)}", file=str(path), key="joint_names")
        joints[k] = replace(joints[k], name=str(new))
    if len({j.name for j in joints}) != len(joints):
        raise InputError("two joints would get the same name", file=str(path), key="joint_names")
    return joints


def _passive(path, joints: list[Joint], patterns) -> list[Joint]:
    """The joints whose names match one of ``patterns`` (fnmatch) made not actuated; a pattern matching none is an error."""
    from dataclasses import replace
    names = [j.name for j in joints]
    for pattern in patterns:
        if not any(n == pattern or fnmatch.fnmatchcase(n, pattern) for n in names):
            raise InputError(f"no joint {pattern!r}{did_you_mean(str(pattern), sorted(names))}", file=str(path),
                             key="passive")
    hit = {n for n in names if any(n == p or fnmatch.fnmatchcase(n, p) for p in patterns)}
    return [replace(j, actuated=False) if j.name in hit else j for j in joints]


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
