"""The moving scene of a mechanism: shapes per body, joint axes and body poses over time.

One home for what the report's 3-D view (:mod:`composer.report.viewer`) and the glTF
export (:mod:`composer.report.gltf`) show.  Shapes are the parts' meshes and primitives
(:func:`shape_mesh`), expressed in the frame of the body of the
dynamics model that carries them (a composite body when parts are lumped; parts
welded to ground stay static), coloured by that body.  Poses come from
:func:`dynamics.body_poses` at each sampled configuration of the simulation (or
at the reference configuration only).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.tolerances import SINGULAR_FLOOR

log = logging.getLogger(__name__)

#: Colours of the bodies (matplotlib's tab10), cycled.
PALETTE = np.array([[0.122, 0.467, 0.706], [1.0, 0.498, 0.055], [0.173, 0.627, 0.173], [0.839, 0.153, 0.157],
                    [0.580, 0.404, 0.741], [0.549, 0.337, 0.294], [0.890, 0.467, 0.761], [0.498, 0.498, 0.498],
                    [0.737, 0.741, 0.133], [0.090, 0.745, 0.812]])
GROUND_COLOR = np.array([0.62, 0.64, 0.68])


@dataclass(frozen=True)
class SceneShape:
    """Triangles of one part, flat-shaded, in the frame of body ``body`` (-1: ground).

    positions, normals : (3 F, 3) float32, m (one face normal repeated per vertex).
    """

    name: str
    body: int
    color: np.ndarray
    positions: np.ndarray
    normals: np.ndarray


@dataclass(frozen=True)
class SceneAxis:
    """A joint axis drawn as a segment from ``a`` to ``b`` (m) in the frame of body ``body``."""

    name: str
    body: int
    a: np.ndarray
    b: np.ndarray


@dataclass(frozen=True)
class Scene:
    """body_names (n,); shapes; axes; times (T,) s; R (T, n, 3, 3), p (T, n, 3): body poses in
    the ground frame; center (3,), radius: a sphere around the shapes over the whole motion."""

    body_names: tuple
    shapes: tuple
    axes: tuple
    times: np.ndarray
    R: np.ndarray
    p: np.ndarray
    center: np.ndarray
    radius: float

    @property
    def n_faces(self) -> int:
        return sum(len(s.positions) // 3 for s in self.shapes)


def _owner_index(composition, names: list[str]) -> dict[str, int]:
    """Part name -> index of the model body that carries it (-1 for ground)."""
    index = {n: k for k, n in enumerate(names)}
    owner = {m: index.get(c.name, -1) for c in composition.analysis.composites for m in c.members}
    for b in composition.assembly.bodies:
        owner.setdefault(b.name, index.get(b.name, -1))
    return owner


def shape_mesh(shape):
    """The mesh of one shape (file or primitive) placed in its body frame."""
    from mbcompose.parsers.massprops import load_mesh, primitive_mesh

    if shape.kind == "mesh":
        mesh = load_mesh(shape.file, shape.params.get("scale", 1.0)).copy()
    else:
        mesh = primitive_mesh(shape.kind, shape.params)
    mesh.apply_transform(shape.pose.matrix())
    return mesh


def _part_meshes(assembly, max_faces: int):
    """(part name, trimesh in the assembly frame at the reference configuration) for every shape.

    Above ``max_faces`` in total the largest meshes are replaced by their convex hulls (logged).
    """
    from mbcompose.parsers.mesh_progress import MeshWork

    out = []
    with MeshWork((g.file for b in assembly.bodies for g in b.geometry if g.kind == "mesh"), "3-D view") as work:
        for body in assembly.bodies:
            for g in body.geometry:
                try:
                    mesh = shape_mesh(g)
                except Exception as exc:  # a shape the reader accepted but we cannot draw: skip, say so
                    log.info("3-D view: shape of %s not drawn (%s)", body.name, exc)
                    continue
                finally:
                    work.finished(g.file)
                mesh.apply_transform(body.pose.matrix())
                out.append((body.name, mesh))
    total = sum(len(m.faces) for _, m in out)
    if total > max_faces:
        order = sorted(range(len(out)), key=lambda i: -len(out[i][1].faces))
        for i in order:
            if total <= max_faces:
                break
            hull = out[i][1].convex_hull
            total -= len(out[i][1].faces) - len(hull.faces)
            out[i] = (out[i][0], hull)
        log.info("3-D view: large meshes drawn as convex hulls (%d faces in all)", total)
    return out


def _motion_bounds(shapes, R, p) -> tuple[np.ndarray, np.ndarray]:
    """Corners (3,) of the box around every shape at every frame (R (T, n, 3, 3), p (T, n, 3)): the
    camera frames the whole motion, not only its first pose (a falling robot stays in view).  Each
    shape counts by the 8 corners of its own box, moved with its body."""
    corners = []
    for s in shapes:
        pts = s.positions.reshape(-1, 3)
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        box = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        corners.append(box[None] if s.body < 0 else np.einsum("tij,kj->tki", R[:, s.body], box) + p[:, s.body, None])
    world = np.concatenate([c.reshape(-1, 3) for c in corners])
    return world.min(axis=0), world.max(axis=0)


def _flat(mesh, R_ref, p_ref):
    tri = (mesh.triangles - p_ref) @ R_ref          # (F, 3, 3) in the body frame
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), SINGULAR_FLOOR)
    return tri.reshape(-1, 3).astype(np.float32), np.repeat(n, 3, axis=0).astype(np.float32)


def _joint_axes(composition, names, R_ref, p_ref, length: float) -> tuple:
    index = {n: k for k, n in enumerate(names)}
    axes = []
    for j in composition.lumped.joints:
        if not JOINTS[j.type].has_axis:
            continue
        k = index.get(j.reference, -1)
        R, p = (np.eye(3), np.zeros(3)) if k < 0 else (R_ref[k], p_ref[k])
        o = (np.asarray(j.origin, float) - p) @ R
        u = np.asarray(j.axis, float) @ R
        axes.append(SceneAxis(j.name, k, o - 0.5 * length * u, o + 0.5 * length * u))
    return tuple(axes)


def build_scene(composition, simulation=None, max_faces: int = 60_000, max_frames: int = 240) -> Scene:
    """The scene of ``composition``, moving along ``simulation`` (a :class:`SimulationResult`) if given.

    At most ``max_frames`` evenly spaced samples of the simulation are kept.
    """
    from mbcompose import dynamics

    model = composition.model
    tree = model.tree_model
    names = list(tree.body_names)
    q_ref = np.asarray(model.neutral(), float)
    R_ref, p_ref = dynamics.body_poses(tree, q_ref)
    if simulation is None:
        times, qs = np.zeros(1), q_ref[None]
    else:
        keep = np.unique(np.linspace(0, len(simulation.t) - 1, min(max_frames, len(simulation.t))).astype(int))
        times, qs = np.asarray(simulation.t)[keep], np.asarray(simulation.q)[keep]
    R, p = dynamics.body_poses(tree, qs)
    owner = _owner_index(composition, names)
    grounded = {m for c in composition.analysis.composites if c.grounded for m in c.members}
    shapes = []
    for part, mesh in _part_meshes(composition.assembly, max_faces):
        k = owner.get(part, -1)
        color = GROUND_COLOR if k < 0 or part in grounded else PALETTE[k % len(PALETTE)]
        Rk, pk = (np.eye(3), np.zeros(3)) if k < 0 else (R_ref[k], p_ref[k])
        pos, nrm = _flat(mesh, Rk, pk)
        shapes.append(SceneShape(part, k, color, pos, nrm))
    lo, hi = _motion_bounds(shapes, R, p) if shapes else (p.min(axis=(0, 1)), p.max(axis=(0, 1)))
    radius = float(max(np.linalg.norm(hi - lo) / 2, 1e-3))
    axes = _joint_axes(composition, names, R_ref, p_ref, length=0.6 * radius)
    return Scene(tuple(names), tuple(shapes), axes, times, R, p, (lo + hi) / 2, radius)
