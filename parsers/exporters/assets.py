"""Meshes of an export, copied or converted into an ``assets/`` folder beside it.

An export that names meshes by absolute path only works on the machine that
wrote it.  :func:`plan_mesh_assets` gives every mesh file of an assembly a
name in ``assets/`` (relative to the export's folder, as onshape-to-robot
does); the writers reference meshes through :meth:`MeshAssets.reference` and
the caller writes the files with :meth:`MeshAssets.writers`, so a copied
output folder loads in MuJoCo and Pinocchio anywhere.

STL and OBJ files (which URDF, SDFormat and MuJoCo readers all accept) are
copied byte for byte; other formats (DAE, PLY, OFF, GLB ...) are converted to
binary STL through trimesh, as loaded by the readers of this package (their
unit scale applied; a ``scale`` attribute in the export stays as it was).  The convex
hull of a mesh (a shape of :func:`parsers.exporters.collision.simplify_collision`'s
``hull`` mode) is computed when written, as binary STL ``assets/STEM_hull.stl``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

#: mesh formats every target reader accepts; others are converted to STL
PORTABLE_MESHES = (".stl", ".obj")


def absolute_reference(file) -> str:
    """The default mesh reference of the writers: the file's absolute path."""
    return str(Path(file).resolve())


@dataclass(frozen=True)
class MeshAssets:
    """Relative names of the meshes of one export.

    names : resolved source path -> reference written in the export
        (``assets/<name>``, forward slashes, relative to the export's folder).
    hulls : resolved (virtual) hull path -> the mesh file it is the convex hull of
        (:func:`parsers.exporters.collision.hull_file`); written as that mesh's hull.
    """

    names: dict = field(default_factory=dict)
    hulls: dict = field(default_factory=dict)

    def reference(self, file) -> str:
        """The reference to write for mesh ``file`` (KeyError if it was not planned)."""
        return self.names[str(Path(file).resolve())]

    def writers(self) -> dict[str, Callable[[Path], None]]:
        """Relative file name -> ``write(path)`` that copies or converts the source mesh there."""
        return {rel: (lambda p, s=src: _write_hull(Path(self.hulls[s]), p)) if src in self.hulls
                else (lambda p, s=src: _write_mesh(Path(s), p)) for src, rel in self.names.items()}


def _write_hull(source: Path, target: Path) -> None:
    from .collision import convex_hull_mesh

    target.write_bytes(convex_hull_mesh(source).export(file_type="stl"))


def _write_mesh(source: Path, target: Path) -> None:
    if source.suffix.lower() in PORTABLE_MESHES:
        shutil.copyfile(source, target)
        return
    from ..massprops import load_mesh

    target.write_bytes(load_mesh(source).export(file_type="stl"))  # (InputError for a file that is no mesh)


def _unique_name(stem: str, suffix: str, taken: set) -> str:
    name, k = f"{stem}{suffix}", 1
    while name.lower() in taken:
        name, k = f"{stem}_{k}{suffix}", k + 1
    taken.add(name.lower())
    return name


def plan_mesh_assets(*assemblies, folder: str = "assets") -> MeshAssets:
    """Give every mesh file of the ``assemblies``' bodies a name in ``folder`` (in body order).

    Two different files with the same name get ``_1``, ``_2`` ... suffixes; a file
    used by several shapes (or by several of the assemblies: the model file's and an
    export's with simplified collision geometry) is written once.  Non-portable formats
    get ``.stl``; a hull shape (its ``params`` name its source mesh under
    :data:`parsers.exporters.collision.HULL_OF`) is planned as the STL of that hull.
    """
    from .collision import HULL_OF

    names: dict[str, str] = {}
    hulls: dict[str, str] = {}
    taken: set = set()
    for g in (g for a in assemblies for body in a.bodies for g in body.geometry):
        if g.kind != "mesh" or g.file is None:
            continue
        src = str(Path(g.file).resolve())
        if src in names:
            continue
        p = Path(src)
        if HULL_OF in g.params:
            hulls[src] = str(g.params[HULL_OF])
        suffix = p.suffix.lower() if p.suffix.lower() in PORTABLE_MESHES and src not in hulls else ".stl"
        names[src] = f"{folder}/{_unique_name(p.stem, suffix, taken)}"
    return MeshAssets(names, hulls)


def relocated(assembly, assets: MeshAssets, directory):
    """``assembly`` with every planned mesh file replaced by its copy under ``directory``.

    Writers that make mesh paths relative to their folder (the native YAML
    model file) then name the copies in ``assets/``.
    """
    from dataclasses import replace

    base = Path(directory)

    def moved(g):
        if g.kind != "mesh" or g.file is None:
            return g
        return replace(g, file=str(base / assets.reference(g.file)))

    bodies = tuple(replace(b, geometry=tuple(moved(g) for g in b.geometry)) for b in assembly.bodies)
    return replace(assembly, bodies=bodies)
