"""Mesh mass properties as MuJoCo's compiler computes them, for each mesh ``inertia`` mode.

An MJCF means what MuJoCo compiles it to, and MuJoCo's default mesh inertia
(``inertia="legacy"``) is not the exact solid's for a non-convex or open mesh.
This module reproduces the rules of MuJoCo's mesh compiler
(``src/user/user_mesh.cc``: ``mjCMesh::Process``, ``ComputeFaceCentroid``,
``ComputeVolume``, ``ComputeSurfaceArea``, ``ComputeInertia``):

1. vertices are read in single precision, put in the mesh's reference frame and scaled in
   double precision (``scale * R^T (float64(float32(v)) - refpos)``, ``R`` of ``refquat``;
   checked against MuJoCo 4);
2. ``facecen``: the area-weighted centroid of all faces;
3. centre of mass: each face is the base of a pyramid with apex ``facecen``;
   its signed volume ``((c - facecen) . n) A / 3`` (``c`` face centroid, ``n``
   unit normal, ``A`` area) weights the pyramid centroid ``3/4 c + 1/4 facecen``.
   ``legacy`` takes the absolute value of every pyramid's volume;
   ``convex`` uses the faces of the convex hull; ``shell`` weights
   ``3/4 c + 1/4 facecen`` by the face areas instead;
4. inertia about that centre: the tetrahedron from the centre to each face
   (again absolute for ``legacy``; the triangle itself, by area, for ``shell``)
   contributes the second moments ``vol / C (2 sum_v v v^T + sum_{v != w} v w^T)``
   with ``C = 20`` for a tetrahedron and ``C = 12`` for a triangle; the
   volume (area for ``shell``) is summed again in this pass and is the one used.

For a closed, consistently oriented mesh ``exact`` and ``convex`` agree with the
exact solid (trimesh; see :func:`parsers.massprops.mesh_mass_properties`), and so
does ``legacy`` when the mesh is convex.  Results are at unit density (unit
surface density for ``shell``) in the mesh frame.
"""

from __future__ import annotations

import numpy as np
import trimesh

MESH_INERTIA_MODES = ("legacy", "exact", "convex", "shell")

#: MuJoCo's mjMINVAL: volumes and areas below it are refused.
MJ_MINVAL = 1e-15


def in_reference_frame(vertices, ref) -> np.ndarray:
    """Vertices (n, 3) in a mesh's reference frame ``ref = (refpos (3,), R (3, 3))``: ``R^T (v - refpos)``
    (unchanged when ``ref`` is None)."""
    if ref is None:
        return np.asarray(vertices, dtype=float)
    pos, R = ref
    return (np.asarray(vertices, dtype=float) - pos) @ R


def mujoco_vertices(vertices, scale, ref=None) -> np.ndarray:
    """Vertices as MuJoCo compiles them: read in single precision, put in the reference frame ``ref``
    (:func:`in_reference_frame`), then scaled, (n, 3) float64."""
    v32 = np.asarray(vertices, dtype=np.float32).astype(np.float64)
    return in_reference_frame(v32, ref) * np.broadcast_to(np.asarray(scale, dtype=float), (3,))


def _triangles(vertices, faces):
    """Areas (m,), unit normals (m, 3) and centroids (m, 3) of the faces (MuJoCo's ``triangle``)."""
    tri = vertices[faces]
    cross = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    norm = np.linalg.norm(cross, axis=1)
    normal = np.divide(cross, norm[:, None], out=np.zeros_like(cross), where=norm[:, None] > 0)
    return 0.5 * norm, normal, tri.mean(axis=1)


def face_centroid(vertices, faces) -> tuple[np.ndarray, float]:
    """Area-weighted centroid of all faces and the total area (``ComputeFaceCentroid``)."""
    area, _, centre = _triangles(vertices, faces)
    total = float(area.sum())
    return (area @ centre / total if total >= MJ_MINVAL else np.zeros(3)), total


def _centre_of_mass(vertices, faces, facecen, mode) -> tuple[np.ndarray, float]:
    """``ComputeVolume`` (or ``ComputeSurfaceArea`` for shell): centre and volume (area)."""
    area, normal, centre = _triangles(vertices, faces)
    if mode == "shell":
        weight = area
    else:
        weight = np.einsum("ij,ij->i", centre - facecen, normal) * area / 3.0
        if mode == "legacy":
            weight = np.abs(weight)
    total = float(weight.sum())
    com = weight @ (0.75 * centre + 0.25 * facecen)
    return (com / total if total >= MJ_MINVAL else com), total


def _second_moments(vertices, faces, com, mode) -> tuple[np.ndarray, float]:
    """``ComputeInertia``: inertia about ``com`` (3, 3) and the volume (area) summed again."""
    shifted = vertices - com
    area, normal, centre = _triangles(shifted, faces)
    if mode == "shell":
        weight, c = area, 12.0
    else:
        weight, c = np.einsum("ij,ij->i", centre, normal) * area / 3.0, 20.0
        if mode == "legacy":
            weight = np.abs(weight)
    tri = shifted[faces]                                     # (m, 3 vertices, 3 coordinates)
    s = tri.sum(axis=1)
    # 2 sum_v v v^T + sum_{v != w} v w^T = sum_v v v^T + s s^T
    products = np.einsum("mvi,mvj->mij", tri, tri) + np.einsum("mi,mj->mij", s, s)
    P = np.einsum("m,mij->ij", weight / c, products)
    inertia = np.trace(P) * np.eye(3) - P
    return inertia, float(weight.sum())


def mujoco_mesh_properties(vertices, faces, mode: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Volume (area for ``shell``), centre of mass (3,) and central inertia (3, 3) at unit density.

    Parameters
    ----------
    vertices : (n, 3) as MuJoCo stores them (:func:`mujoco_vertices`), mesh frame, m.
    faces : (m, 3) int, vertex indices.
    mode : 'legacy', 'exact', 'convex' or 'shell' (MJCF ``<mesh inertia>``).

    Raises ValueError with MuJoCo's reason when the mesh is refused (volume or
    area too small, negative volume).
    """
    if mode not in MESH_INERTIA_MODES:
        raise ValueError(f"mesh inertia must be one of {', '.join(MESH_INERTIA_MODES)}, got {mode!r}")
    vertices = np.asarray(vertices, dtype=float)
    faces = np.asarray(faces, dtype=int)
    facecen, area = face_centroid(vertices, faces)
    if area < MJ_MINVAL:
        raise ValueError("mesh surface area is too small")
    used = faces
    if mode == "convex":                     # MuJoCo's qhull graph; trimesh calls qhull too
        hull = trimesh.convex.convex_hull(vertices)
        vertices, used = np.asarray(hull.vertices, dtype=float), np.asarray(hull.faces, dtype=int)
    com, size = _centre_of_mass(vertices, used, facecen, mode)
    if size < MJ_MINVAL:
        if mode == "shell":
            raise ValueError("mesh surface area is too small")
        if size < 0:
            raise ValueError("mesh volume is negative (misoriented triangles)")
        raise ValueError("mesh volume is too small (MuJoCo suggests inertia='shell')")
    inertia, size = _second_moments(vertices, used, com, mode)
    return size, com, 0.5 * (inertia + inertia.T)


def _exact_solid(mesh):
    """The exact solid's (volume, com, inertia) at unit density through trimesh, or None if it has none."""
    if not mesh.is_watertight or not mesh.volume > 0:
        return None
    mp = mesh.mass_properties
    return float(mesh.volume), np.array(mp["center_mass"]), np.array(mp["inertia"])


def _relative_difference(a, b) -> float:
    """Largest relative difference of two (volume, com, inertia) triples (com relative to the inertia radius)."""
    vol_a, com_a, J_a = a
    vol_b, com_b, J_b = b
    radius = np.sqrt(np.trace(J_b) / max(vol_b, MJ_MINVAL))
    return max(abs(vol_a - vol_b) / vol_b, np.abs(com_a - com_b).max() / radius,
               np.abs(J_a / vol_a - J_b / vol_b).max() / (np.abs(J_b).max() / vol_b))


def mesh_unit_properties(mesh, scale, mode: str, name: str, exact: bool = False, ref=None):
    """Volume (area for shell), centre (3,) and central inertia (3, 3) at unit density of an MJCF mesh.

    mesh : the trimesh of the file, unscaled.
    mode : the mesh's ``inertia`` attribute (MuJoCo's rule, see module docstring).
    exact : take the exact solid (trimesh) instead of MuJoCo's rule (not for 'shell').
    ref : None or ``(refpos (3,), R (3, 3))``, the mesh's reference frame (:func:`in_reference_frame`).

    Returns ``(properties, note)``: ``note`` says why the exact solid differs from
    MuJoCo's rule by more than 1% (or why there is none), else None.
    Raises ValueError when MuJoCo refuses the mesh.
    """
    V = mujoco_vertices(mesh.vertices, scale, ref)
    faces = np.asarray(mesh.faces, dtype=int)
    rule = mujoco_mesh_properties(V, faces, mode)
    if mode == "shell":
        return rule, None
    # the exact solid of the file's own (double precision) vertices
    scaled = trimesh.Trimesh(in_reference_frame(mesh.vertices, ref) * np.broadcast_to(scale, (3,)), faces,
                             process=False)
    solid = _exact_solid(scaled.convex_hull if mode == "convex" else scaled)
    if solid is None:
        if exact:
            raise ValueError("mesh is not watertight: it has no exact solid (MuJoCo's rule needs no exact option)")
        return rule, f"mesh is not a closed solid; MuJoCo's '{mode}' rule is used as MuJoCo does"
    diff = _relative_difference(rule, solid)
    note = None
    if diff > 0.01:
        used = "the exact solid" if exact else "MuJoCo's rule"
        note = f"MuJoCo's '{mode}' mesh inertia differs from the exact solid's by {100 * diff:.3g}% ({used} is used)"
    return (solid if exact else rule), note
