"""Collision geometry of an export: as read, one convex hull per part, or none.

CAD exporters (onshape-to-robot, the SolidWorks URDF exporter) let their users replace
the parts' meshes by simpler collision shapes: a contact solver and a collision checker
(MuJoCo, hpp-fcl in Pinocchio) work on convex pieces, and a hull of a few hundred faces
is checked much faster than the tessellation of a CAD part.  :func:`simplify_collision`
rewrites the shapes of an :class:`~parsers.assembly.Assembly` so that the writers
(:func:`parsers.exporters.shown_and_colliding`) write

* ``mesh`` (:data:`DEFAULT_COLLISION`): every shape as read (no change);
* ``hull``: what was shown stays shown (a visual shape, a CAD or YAML shape, a collision
  shape of a body without a visual one), and each colliding mesh is replaced, for
  collision, by the convex hull of its vertices (``trimesh.Trimesh.convex_hull``, one per
  mesh shape: one per part, the parts of a lumped composite each their own).  Primitives
  (box, cylinder, sphere, capsule, ellipsoid) are convex already and stay as they are.  A
  body without a mesh keeps its primitives; a body without shapes gets none.  The hull is
  written once per mesh file, beside the export as the other meshes are
  (:func:`parsers.exporters.assets.plan_mesh_assets`: ``assets/STEM_hull.stl``), in the
  mesh file's own units with the shape's ``scale`` kept (a hull commutes with scaling);
* ``none``: no collision shape; what was shown stays shown (URDF ``<visual>`` only, MJCF
  class ``visual``, SDFormat ``<visual>`` only).

Mass properties are not touched: the writers write every body's inertia explicitly (MJCF
``inertiafromgeom="false"``), so the dynamics of the export are the same in all three modes.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from ..assembly import Assembly
from . import ExportError, shown_and_colliding

log = logging.getLogger(__name__)

#: the collision modes of :func:`simplify_collision`
COLLISION_MODES = ("mesh", "hull", "none")
#: what an export writes without being told: collision shapes as read
DEFAULT_COLLISION = "mesh"
#: the parameter of a hull shape that names the mesh file it is the hull of
HULL_OF = "hull_of"
#: the name a hull is planned under, beside its mesh file's stem (``housing`` -> ``housing_hull.stl``)
HULL_SUFFIX = "_hull.stl"


def hull_file(mesh_file) -> str:
    """The (virtual) file name of the hull of ``mesh_file``: ``STEM_hull.stl`` in its folder.  It is
    a key for :func:`parsers.exporters.assets.plan_mesh_assets`, which writes the hull under
    ``assets/``; nothing is written beside the source mesh."""
    p = Path(mesh_file).resolve()
    return str(p.with_name(p.stem + HULL_SUFFIX))


def convex_hull_mesh(mesh_file):
    """The convex hull (``trimesh.Trimesh``) of the mesh in ``mesh_file`` as the readers load it
    (:func:`parsers.massprops.load_mesh`, unscaled: the file's own units); InputError naming the file, as
    for a mesh that cannot be read, when its vertices span no volume (a flat or degenerate mesh has no hull
    to collide with)."""
    from ..errors import InputError
    from ..massprops import load_mesh

    mesh = load_mesh(mesh_file)
    try:
        hull = mesh.convex_hull
    except Exception as exc:  # qhull raises its own error types for flat and degenerate input
        raise InputError(f"no convex hull of mesh {Path(mesh_file).name} ({type(exc).__name__}: {exc}); use "
                         "--collision mesh or none", file=str(mesh_file)) from None
    if len(hull.faces) < 4 or not hull.is_volume:
        raise InputError(f"no convex hull of mesh {Path(mesh_file).name}: its vertices span no volume; use "
                         "--collision mesh or none", file=str(mesh_file))
    return hull


def _hull_shapes(body) -> tuple:
    """The shapes of ``body`` for the ``hull`` mode (module docstring)."""
    out = []
    for g, shown, colliding in shown_and_colliding(body):
        if shown:
            out.append(replace(g, role="visual"))
        if not colliding:
            continue
        if g.kind == "mesh" and g.file is not None:
            params = {**g.params, HULL_OF: str(Path(g.file).resolve())}
            out.append(replace(g, file=hull_file(g.file), params=params, role="collision"))
        else:
            out.append(replace(g, role="collision"))
    return tuple(out)


def _visual_shapes(body) -> tuple:
    """The shapes of ``body`` for the ``none`` mode: those shown, as visual shapes."""
    return tuple(replace(g, role="visual") for g, shown, _ in shown_and_colliding(body) if shown)


def simplify_collision(assembly: Assembly, mode: str = DEFAULT_COLLISION) -> Assembly:
    """``assembly`` with the collision geometry of ``mode`` (one of :data:`COLLISION_MODES`; module
    docstring); the same object for ``mesh``.  A hull shape is a ``mesh`` shape whose ``file`` is
    :func:`hull_file` of its source and whose ``params`` name the source under :data:`HULL_OF`; write
    the result through :func:`parsers.exporters.assets.plan_mesh_assets`, which writes the hulls.

    Examples
    --------
    >>> from mbcompose.parsers.assembly import Assembly
    >>> simplify_collision(Assembly(name="empty", bodies=(), joints=()), "none").bodies
    ()
    """
    if mode not in COLLISION_MODES:
        raise ExportError(f"collision mode {mode!r} is not one of {', '.join(COLLISION_MODES)}")
    if mode == DEFAULT_COLLISION:
        return assembly
    shapes = _hull_shapes if mode == "hull" else _visual_shapes
    bodies = tuple(replace(b, geometry=shapes(b)) for b in assembly.bodies)
    if mode == "hull":
        n = sum(HULL_OF in g.params for b in bodies for g in b.geometry)
        log.info("export of %s: %d colliding mesh(es) replaced by their convex hulls", assembly.name, n)
    return replace(assembly, bodies=bodies)


__all__ = ["COLLISION_MODES", "DEFAULT_COLLISION", "HULL_OF", "convex_hull_mesh", "hull_file", "simplify_collision"]
