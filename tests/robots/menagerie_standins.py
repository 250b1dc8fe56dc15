"""A local MuJoCo Menagerie corpus with small stand-in meshes, and where the tests find it.

The Menagerie repository (google-deepmind/mujoco_menagerie) is too large to fetch here and its files
may not be committed to this repository, so its robot XMLs are copied one by one into a folder
outside the repository, ``<corpus>/<robot folder>/`` (the folder names of Menagerie), and every file
they reference as an asset (meshes, textures, height fields) is replaced by a small stand-in with the
same name and format:

* a mesh (``.stl`` binary, ``.obj``) is a tetrahedron with edges along the axes, its sizes chosen so
  that after the largest ``scale`` the XML applies to it it measures about 3-7 cm (MuJoCo refuses
  meshes of tiny volume); the edge lengths differ, so its principal axes are not its file axes and
  MuJoCo's re-centring and rotation of meshes are exercised;
* a texture (``.png``) is a 2 x 2 grey PNG;
* a height field (``.png``) likewise.

MuJoCo and mbcompose then read identical geometry, so their dynamics can be compared; the masses are
not the real robot's wherever a body takes its inertia from a mesh.

Run as a script: ``python tests/robots/menagerie_standins.py [CORPUS]`` writes the stand-ins of every
XML under ``CORPUS`` (default: :func:`corpus_root`'s places) and leaves files that exist alone unless
``--force``.  The corpus' ``README.md`` records each robot's source path and licence.

The tests look for the corpus in ``$MBCOMPOSE_MENAGERIE``, else ``../shared/mujoco_menagerie`` beside
the repository, else ``/work/menagerie-data``, and skip when none has the robot they need.
"""

from __future__ import annotations

import argparse
import logging
import os
import struct
import sys
import zlib
from pathlib import Path
from xml.etree import ElementTree

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
PLACES = (os.environ.get("MBCOMPOSE_MENAGERIE"), str(REPO.parent / "shared" / "mujoco_menagerie"),
          "/work/menagerie-data")
MESH_SIZE = 0.05                          # m, the stand-in's middle edge after the file's scale
EDGES = (0.8, 1.0, 1.4)                   # edge ratios along x, y, z


def corpus_root() -> Path | None:
    """The first of :data:`PLACES` that exists (a folder of Menagerie robot folders), or None."""
    for place in PLACES:
        if place and Path(place).is_dir():
            return Path(place)
    return None


def robot_file(robot: str, name: str) -> Path | None:
    """``<corpus>/<robot>/<name>`` when the corpus has it, else None."""
    root = corpus_root()
    path = None if root is None else root / robot / name
    return path if path is not None and path.is_file() else None


def _compiler_dirs(root: ElementTree.Element) -> dict[str, str]:
    dirs = {}
    for comp in root.iter("compiler"):
        for key in ("assetdir", "meshdir", "texturedir"):
            if comp.get(key) is not None:
                dirs[key] = comp.get(key)
    return dirs


def _included(xml: Path, root: ElementTree.Element) -> list[Path]:
    return [xml.parent / inc.get("file") for inc in root.iter("include") if inc.get("file")]


def asset_references(xml: Path) -> dict[Path, tuple[str, float]]:
    """Asset files an MJCF file and its includes reference: path -> (kind, largest |scale|).

    kind is ``"mesh"``, ``"texture"`` or ``"hfield"``; directories follow MuJoCo's compiler rules
    (``meshdir`` / ``texturedir``, else ``assetdir``, relative to the main file's folder).
    """
    files, dirs, seen, todo = {}, {}, set(), [xml]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        root = ElementTree.parse(path).getroot()
        dirs.update(_compiler_dirs(root))
        todo.extend(_included(path, root))
        for kind in ("mesh", "texture", "hfield"):
            for el in root.iter(kind):
                for key, value in el.attrib.items():
                    if key.startswith("file") and value:
                        scale = max((abs(float(s)) for s in (el.get("scale") or "1").split()), default=1.0)
                        files.setdefault((kind, value), []).append(scale)
    out = {}
    for (kind, value), scales in files.items():
        folder = dirs.get("meshdir" if kind == "mesh" else "texturedir", dirs.get("assetdir", ""))
        out[xml.parent / folder / value] = (kind, max(scales))
    return out


def tetrahedron(size: float):
    """(4, 3) vertices and (4, 3) outward faces of the stand-in tetrahedron, middle edge ``size``."""
    a, b, c = (size * e for e in EDGES)
    v = [(0.0, 0.0, 0.0), (a, 0.0, 0.0), (0.0, b, 0.0), (0.0, 0.0, c)]
    f = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    return v, f


def _stl(size: float) -> bytes:
    v, f = tetrahedron(size)
    out = [b"mbcompose stand-in tetrahedron".ljust(80, b" "), struct.pack("<I", len(f))]
    for tri in f:
        out.append(struct.pack("<3f", 0.0, 0.0, 0.0))
        for i in tri:
            out.append(struct.pack("<3f", *v[i]))
        out.append(struct.pack("<H", 0))
    return b"".join(out)


def _obj(size: float) -> bytes:
    v, f = tetrahedron(size)
    lines = ["# mbcompose stand-in tetrahedron"] + [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in v]
    lines += [f"f {i + 1} {j + 1} {k + 1}" for i, j, k in f]
    return ("\n".join(lines) + "\n").encode()


def _png() -> bytes:
    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    rows = b"".join(b"\x00" + bytes([128, 128, 128] * 2) for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def stand_in(path: Path, kind: str, scale: float) -> bytes:
    """The stand-in bytes of one referenced asset file."""
    suffix = path.suffix.lower()
    if kind == "mesh" and suffix == ".stl":
        return _stl(MESH_SIZE / scale)
    if kind == "mesh" and suffix == ".obj":
        return _obj(MESH_SIZE / scale)
    if suffix == ".png":
        return _png()
    raise ValueError(f"{path}: no stand-in for a {kind} in {suffix or 'a file without suffix'} format")


def write_standins(corpus: Path, force: bool = False) -> list[Path]:
    """Write the stand-in of every asset the XMLs under ``corpus`` reference; return the files written."""
    written = []
    for xml in sorted(corpus.rglob("*.xml")):
        for path, (kind, scale) in asset_references(xml).items():
            if path.exists() and not force:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(stand_in(path, kind, scale))
            written.append(path)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", help="folder of Menagerie robot folders")
    parser.add_argument("--force", action="store_true", help="rewrite stand-ins that exist")
    args = parser.parse_args(argv)
    corpus = Path(args.corpus) if args.corpus else corpus_root()
    if corpus is None:
        parser.error(f"no corpus found in {', '.join(p for p in PLACES if p)}")
    written = write_standins(corpus, args.force)
    sys.stdout.write(f"{len(written)} stand-in files written under {corpus}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
