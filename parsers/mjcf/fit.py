"""MJCF geoms fitted to a mesh: a primitive ``type`` with a ``mesh`` attribute.

MuJoCo's compiler replaces the mesh by the primitive fitted to it
(``src/user/user_mesh.cc``, ``mjCMesh::FitGeom``; XML reference, ``geom/mesh``,
``geom/fitscale`` and ``compiler/fitaabb``), checked against ``mujoco.MjModel``'s
``geom_size``/``geom_pos``/``geom_quat`` in ``tests/robots/test_mjcf_meshes.py``.
The mesh is first expressed in its principal frame: origin at its centre of mass,
axes along the principal axes of its inertia with the moments in decreasing order
(:mod:`parsers.mjcf.mesh` gives both, by the mesh's ``inertia`` mode).  Then, with
``b`` the half sizes of the box of equal inertia, ``b_i = sqrt(3 (tr J - 2 J_i) / (2 V))``
(``J_i`` principal moments at unit density, ``V`` the volume):

* sphere: radius ``(b_0 + b_1 + b_2) / 3``; capsule: radius ``r = (b_0 + b_1) / 2``,
  half length ``max(0, b_2 - r / 2)``; cylinder: ``r`` and ``b_2``; box and ellipsoid: ``b``.

With ``compiler fitaabb="true"`` the axis-aligned box of the vertices in the
principal frame, half sizes ``h``, is used instead, and the primitive is centred on
it: sphere: radius ``max h``; capsule: radius ``r = max(h_0, h_1)``, half length
``max(0, h_2 - r)``; cylinder: ``r`` and ``h_2``; box and ellipsoid: ``h`` (MuJoCo 4's
rule, measured against ``mujoco.MjModel``; older sources measured vertex distances).

Every size is finally multiplied by ``fitscale`` (default 1).  The primitive's mass
follows from its own volume, as for any primitive geom.

Precision: MuJoCo finds the principal axes with its own eigen solver and keeps the
mesh in single precision in that frame, so its axes (and, with ``fitaabb``, the box)
differ from these by about 1e-8 relative; the sizes of the equal-inertia box agree to
1e-15.  The fitted primitives' mass properties therefore agree with MuJoCo's to about
1e-7 relative, not 1e-9.
"""

from __future__ import annotations

import numpy as np

from ..assembly import Pose
from .mesh import mujoco_mesh_properties, mujoco_vertices

FIT_TYPES = ("sphere", "capsule", "cylinder", "box", "ellipsoid")


def principal_frame(vertices, faces, mode: str) -> tuple[float, Pose, np.ndarray]:
    """Volume, principal frame (Pose in the mesh frame) and moments (3,) decreasing, at unit density."""
    vol, com, J = mujoco_mesh_properties(vertices, faces, mode)
    moments, axes = np.linalg.eigh(J)
    moments, axes = moments[::-1], axes[:, ::-1].copy()
    if np.linalg.det(axes) < 0:
        axes[:, 2] *= -1.0
    return vol, Pose(axes, com), moments


def inertia_box_size(gtype: str, vol: float, moments) -> np.ndarray:
    """Half sizes (3,) of the primitive from the equal-inertia box (module docstring)."""
    b = np.sqrt(np.maximum(3.0 * (np.sum(moments) - 2.0 * np.asarray(moments)) / (2.0 * vol), 0.0))
    if gtype == "sphere":
        return np.array([b.sum() / 3.0, 0.0, 0.0])
    if gtype in ("capsule", "cylinder"):
        r = (b[0] + b[1]) / 2.0
        return np.array([r, max(0.0, b[2] - r / 2.0) if gtype == "capsule" else b[2], 0.0])
    return b


def aabb_size(gtype: str, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Half sizes (3,) and centre (3,) of the primitive fitted to the bounding box of ``points`` (n, 3)."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    cen, h = (lo + hi) / 2.0, (hi - lo) / 2.0
    if gtype == "sphere":
        return np.array([h.max(), 0.0, 0.0]), cen
    if gtype in ("capsule", "cylinder"):
        r = max(h[0], h[1])
        return np.array([r, max(0.0, h[2] - r) if gtype == "capsule" else h[2], 0.0]), cen
    return h, cen


def fitted_primitive(gtype: str, mesh, scale, mode: str, fitaabb: bool, fitscale: float,
                     ref=None) -> tuple[np.ndarray, Pose]:
    """MJCF half sizes (3,) and pose in the mesh frame of the primitive ``gtype`` fitted to ``mesh``.

    mesh : the unscaled trimesh; scale (3,) the mesh asset's scale; mode its ``inertia``; ref its reference
    frame (:func:`parsers.mjcf.mesh.in_reference_frame`).
    Raises ValueError with MuJoCo's reason when the mesh has no volume.
    """
    vertices = mujoco_vertices(mesh.vertices, scale, ref)
    vol, frame, moments = principal_frame(vertices, np.asarray(mesh.faces, dtype=int), mode)
    if fitaabb:
        size, cen = aabb_size(gtype, (vertices - frame.translation) @ frame.rotation)
        frame = frame.compose(Pose(np.eye(3), cen))
    else:
        size = inertia_box_size(gtype, vol, moments)
    return fitscale * size, frame
