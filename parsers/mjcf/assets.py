"""MJCF ``<asset>`` meshes: mesh files (MuJoCo's binary ``.msh`` included) and inline meshes; and
``<material>`` colours (:func:`read_material_assets`).

As MuJoCo's compiler reads them (XML reference, ``asset/mesh``; ``src/user/user_mesh.cc``):

* ``file``: a mesh file below ``meshdir`` (or ``assetdir``); STL, OBJ, PLY ...
  through :func:`parsers.massprops.load_mesh`, and MuJoCo's legacy binary ``.msh``
  (four int32 counts ``nvertex, nnormal, ntexcoord, nface``, then float32
  vertices (nvertex, 3), normals, texture coordinates (ntexcoord, 2) and int32
  faces (nface, 3)) by :func:`read_msh`;
* inline meshes: ``vertex`` (3 numbers per vertex) with optional ``face`` (3
  vertex indices per triangle); without ``face`` MuJoCo takes the convex hull of
  the vertices (qhull; trimesh calls qhull too).  ``normal``, ``texcoord`` and
  ``userdata`` do not change the mass and are ignored;
* ``scale`` (3 numbers) and ``inertia`` (legacy, exact, convex, shell); a mesh's
  name defaults to its file name without extension;
* ``refpos`` (3) and ``refquat`` (4, normalised): the frame in which the file's vertices are
  given; MuJoCo compiles ``v' = scale * R(refquat)^T (v - refpos)`` (checked against MuJoCo 4:
  the reference frame first, then the scale).

A mesh is recorded as ``{"file", "mesh", "scale", "ref", "inertia", "el"}``: ``file`` is the
path (None for an inline mesh), ``mesh`` the unscaled trimesh once loaded, ``ref`` None or
``(refpos (3,), R (3, 3))``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh
from mbcompose.dynamics.spatial import quat_to_matrix

from .. import limits
from ..errors import InputError
from ..massprops import load_mesh
from ..xml import error, parse_floats
from .compiler import floats_attr
from .mesh import MESH_INERTIA_MODES


def read_msh(path: Path) -> trimesh.Trimesh:
    """MuJoCo's binary ``.msh`` mesh (module docstring), unscaled; InputError naming the file if malformed."""
    size = limits.check_input_file(path, "mesh file")
    data = path.read_bytes()
    if size < 16:
        raise InputError("binary .msh file is shorter than its 16-byte header", file=str(path))
    nv, nn, nt, nf = (int(x) for x in np.frombuffer(data[:16], dtype="<i4"))
    if min(nv, nn, nt, nf) < 0 or nv < 4 or size != 16 + 4 * (3 * nv + 3 * nn + 2 * nt + 3 * nf):
        raise InputError(f"binary .msh header (nvertex {nv}, nnormal {nn}, ntexcoord {nt}, nface {nf}) does not "
                         f"match the file size {size}", file=str(path))
    if nf > limits.active().mesh_faces:
        raise InputError(limits.exceeded("mesh triangles", nf, "mesh_faces"), file=str(path))
    vertices = np.frombuffer(data, dtype="<f4", count=3 * nv, offset=16).reshape(nv, 3).astype(float)
    start = 16 + 4 * (3 * nv + 3 * nn + 2 * nt)
    faces = np.frombuffer(data, dtype="<i4", count=3 * nf, offset=start).reshape(nf, 3).astype(int)
    if nf == 0:
        return convex_hull_mesh(vertices, str(path))
    if faces.min() < 0 or faces.max() >= nv:
        raise InputError(f"binary .msh face index out of range 0..{nv - 1}", file=str(path))
    return trimesh.Trimesh(vertices, faces, process=True)


def convex_hull_mesh(vertices: np.ndarray, name: str) -> trimesh.Trimesh:
    """The convex hull of (n, 3) vertices, as MuJoCo builds a mesh given without faces."""
    try:
        return trimesh.convex.convex_hull(np.asarray(vertices, dtype=float))
    except Exception as exc:  # qhull raises its own error types for flat or degenerate point sets
        raise InputError(f"mesh {name}: no convex hull of its vertices ({type(exc).__name__})") from None


def inline_mesh(el, attrs) -> trimesh.Trimesh:
    """The mesh of ``vertex`` / ``face`` attributes (module docstring), unscaled."""
    v = parse_floats(attrs["vertex"], el, "mesh@vertex", None)
    if len(v) % 3 or len(v) < 12:
        raise error(el, f"mesh@vertex: expected at least 4 vertices of 3 numbers, got {len(v)} numbers")
    vertices = v.reshape(-1, 3)
    if "face" not in attrs:
        try:
            return convex_hull_mesh(vertices, repr(attrs.get("name", "")))
        except InputError as exc:
            raise error(el, exc.message) from None
    f = parse_floats(attrs["face"], el, "mesh@face", None)
    if len(f) % 3 or not len(f) or not np.all(f == np.round(f)) or f.min() < 0 or f.max() >= len(vertices):
        raise error(el, f"mesh@face: expected triangles of 3 vertex indices in 0..{len(vertices) - 1}")
    return trimesh.Trimesh(vertices, f.reshape(-1, 3).astype(int), process=True)


def mesh_file(reader, el, fname: str) -> Path:
    """The path of a mesh file: below ``meshdir`` (or ``assetdir``) unless absolute."""
    meshdir = reader.comp.meshdir or reader.comp.assetdir
    p = Path(fname)
    if not p.is_absolute():
        p = (reader.dir / meshdir / p) if meshdir else (reader.dir / p)
    if not p.is_file():
        raise error(el, f"mesh file not found: {str(p)!r}")
    return p.resolve()


def read_mesh_assets(reader, root) -> dict[str, dict]:
    """Every ``<asset><mesh>`` of the document by name (module docstring)."""
    meshes = {}
    for asset in root.findall("asset"):
        for m in asset.findall("mesh"):
            a = reader.attrs(m, "main")
            fname = a.get("file")
            if fname is None and "vertex" not in a:
                raise error(m, "<mesh> needs attribute 'file' or 'vertex'")
            name = a.get("name") or (Path(fname).stem if fname else None)
            if not name:
                raise error(m, "an inline <mesh> needs attribute 'name'")
            if name in meshes:
                raise error(m, f"mesh {name!r} defined twice")
            scale = floats_attr(m, a, "scale", 3)
            ref = mesh_reference_frame(m, a)
            mode = a.get("inertia", "legacy")
            if mode not in MESH_INERTIA_MODES:
                raise error(m, f"mesh@inertia must be legacy, exact, convex or shell, got {mode!r}")
            meshes[name] = {"file": None if fname is None else str(mesh_file(reader, m, fname)),
                            "mesh": inline_mesh(m, a) if fname is None else None,
                            "scale": np.ones(3) if scale is None else scale, "ref": ref, "inertia": mode, "el": m}
    return meshes


def mesh_reference_frame(m, a) -> tuple[np.ndarray, np.ndarray] | None:
    """``(refpos (3,), R (3, 3))`` of a ``<mesh>``'s ``refpos`` / ``refquat`` (module docstring), or None when
    both are absent or the identity."""
    pos = floats_attr(m, a, "refpos", 3)
    quat = floats_attr(m, a, "refquat", 4)
    pos = np.zeros(3) if pos is None else np.asarray(pos, dtype=float)
    if quat is None:
        R = np.eye(3)
    else:
        norm = float(np.linalg.norm(quat))
        if not np.isfinite(norm) or norm == 0.0:
            raise error(m, "mesh@refquat must be a non-zero quaternion")
        R = quat_to_matrix(np.asarray(quat, dtype=float) / norm)
    return None if not pos.any() and np.array_equal(R, np.eye(3)) else (pos, R)


def mesh_data(rec: dict) -> trimesh.Trimesh:
    """The unscaled trimesh of a mesh asset record, read once."""
    if rec["mesh"] is None:
        path = Path(rec["file"])
        try:
            rec["mesh"] = read_msh(path) if path.suffix.lower() == ".msh" else load_mesh(path)
        except InputError as exc:
            raise error(rec["el"], exc.message) from None
    return rec["mesh"]


def read_material_assets(reader, root) -> dict[str, tuple[float, float, float, float]]:
    """Material name -> its ``rgba`` (MuJoCo's default ``1 1 1 1``; a default class's ``material``
    slot applies, as for every element); textures, reflectance and the rest are appearance MuJoCo
    draws but the exporters do not carry."""
    out = {}
    for asset in root.findall("asset"):
        for el in asset.findall("material"):
            a = reader.attrs(el, "main")
            name = a.get("name")
            if name is None:
                continue
            rgba = floats_attr(el, a, "rgba", 4)
            out[name] = (1.0, 1.0, 1.0, 1.0) if rgba is None else tuple(float(x) for x in rgba)
    return out
