"""Mass properties of shapes and meshes, through trimesh.

Meshes are integrated by trimesh (``Trimesh.mass_properties``), never by a
hand-written integrator.  Primitives use closed forms: trimesh's analytic
cylinder and sphere (``trimesh.primitives``), the exact polyhedral integral
of a box mesh, and, where trimesh has no closed form (capsule, ellipsoid),
the textbook formulas for a cylinder with two hemispherical caps and for an
ellipsoid.

All results are :class:`~parsers.assembly.MassProperties` in the frame the
shape's ``pose`` is given in (the body frame): ``com`` is the centre of mass,
``inertia`` is taken about the centre of mass along that frame's axes.

A mesh is accepted only if it is watertight, has positive volume, and gives
an inertia that is positive definite and satisfies the triangle inequality.
``params['convex_hull'] = True`` is the explicit fallback to the convex hull.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import trimesh

from mbcompose.dynamics.tolerances import INERTIA_ROUNDING_RTOL, INERTIA_RTOL

from . import limits
from .assembly import Geometry, MassProperties, Pose, frozen
from .errors import InputError
from .mesh_progress import file_progressed


#: the identity rotation every default Pose shares
_EYE = Pose().rotation

MESH_SUFFIXES = (".stl", ".obj", ".ply", ".off", ".glb", ".gltf", ".dae")


def inertia_problem(inertia, mass: float | None = None) -> str | None:
    """Why a 3x3 central inertia is not physical, or None when it is.

    inertia : (3, 3) array or nested sequence (rows).
    Checks symmetry, positive definiteness and the triangle inequality
    ``I1 + I2 >= I3`` of the principal moments (relative tolerance
    :data:`dynamics.tolerances.INERTIA_RTOL`).
    """
    if _clearly_physical(inertia.tolist() if isinstance(inertia, np.ndarray) else inertia):
        return None
    J = np.asarray(inertia, dtype=float)
    if J.shape != (3, 3) or not np.all(np.isfinite(J)):
        return "inertia must be a finite 3x3 matrix"
    return inertia_problems(J[None])[0]


def inertia_problems(inertias: np.ndarray) -> list[str | None]:
    """:func:`inertia_problem` of each of a stack ``(n, 3, 3)`` of finite inertias, with one call of
    each numpy function for the stack (a reader examines a document's doubtful inertias together:
    LAPACK's eigenvalues of a stack are those of each matrix alone)."""
    J = inertias
    Jt = np.swapaxes(J, 1, 2)
    scale = np.maximum(np.abs(J).max(axis=(1, 2)), np.finfo(float).tiny)
    skew = np.abs(J - Jt).max(axis=(1, 2)) > INERTIA_RTOL * scale
    eigs = np.linalg.eigvalsh(0.5 * (J + Jt))
    return [_principal_problem(eig, s) if not asym else "inertia is not symmetric"
            for eig, s, asym in zip(eigs.tolist(), scale.tolist(), skew.tolist())]


def _principal_problem(eig: list[float], scale: float) -> str | None:
    """Why the principal moments ``eig`` (ascending) of an inertia whose largest entry is ``scale``
    are not physical (see :func:`inertia_problem`), or None."""
    if eig[0] <= INERTIA_RTOL * scale:
        return f"inertia is not positive definite (principal moments {eig})"
    if eig[0] + eig[1] < eig[2] * (1.0 - INERTIA_RTOL):
        return ("inertia breaks the triangle inequality: principal moments "
                f"{eig[0]:.6g} + {eig[1]:.6g} < {eig[2]:.6g}")
    return None


def _clearly_physical(rows) -> bool:
    """True when a symmetric, finite 3x3 inertia (a list of rows) is proven physical with
    :func:`inertia_problem`'s tolerances by Sylvester's criterion: ``J - rtol scale 1``
    positive definite (every principal moment above ``rtol * scale``) and
    ``trace / (2 - rtol) 1 - J`` positive definite (every moment below that, so
    ``I1 + I2 = trace - I3 >= I3 (1 - rtol)``).  False means "not proven" (a moment within
    rounding of those bounds, or not three rows of three numbers), not "unphysical"."""
    try:
        (a, b, c), (d, e, f), (g, h, i) = rows
        if b != d or c != g or f != h or not math.isfinite(a + b + c + e + f + i):
            return False
    except (TypeError, ValueError):
        return False
    return bool(proven_physical(a, b, c, e, f, i, max(abs(a), abs(b), abs(c), abs(e), abs(f), abs(i))))


def proven_physical(a, b, c, e, f, i, scale):
    """The test of :func:`_clearly_physical` for the finite symmetric inertia
    ``[[a, b, c], [b, e, f], [c, f, i]]`` whose largest absolute entry is ``scale``: floats, or
    arrays of many inertias at once (element by element, a boolean array)."""
    lo, hi = INERTIA_RTOL * scale, (a + e + i) / (2.0 - INERTIA_RTOL)
    return (_positive_definite(a - lo, b, c, e - lo, f, i - lo, scale)
            & _positive_definite(hi - a, -b, -c, hi - e, -f, hi - i, scale))


def _positive_definite(a, b, c, e, f, i, scale):
    """Sylvester's criterion for ``[[a, b, c], [b, e, f], [c, f, i]]``: its leading minors above
    ``INERTIA_ROUNDING_RTOL scale^k`` (k = 1, 2, 3), a margin far above their rounding errors (~1e-15 scale^k)."""
    m = INERTIA_ROUNDING_RTOL * scale
    return ((a > m) & (a * e - b * b > m * scale)
            & (a * (e * i - f * f) - b * (b * i - c * f) + c * (b * f - c * e) > m * scale * scale))


def transform_mass_properties(mp: MassProperties, pose: Pose) -> MassProperties:
    """Express ``mp`` (given in an inner frame) in the outer frame of ``pose``."""
    R = pose.rotation
    if R is _EYE:  # the shared identity: R J R^T == J exactly
        return MassProperties(mp.mass, frozen(mp.com + pose.translation), mp.inertia)
    com, inertia = transform_mass_arrays(mp.com, mp.inertia, R, pose.translation)
    return MassProperties(mp.mass, frozen(com), frozen(inertia))


def transform_mass_arrays(com: np.ndarray, inertia: np.ndarray, rotation: np.ndarray,
                          translation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centre of mass and central inertia moved from inner frames to outer frames:
    ``R c + t`` and ``R J R^T``.

    com (..., 3), inertia (..., 3, 3) in the inner frames; rotation (..., 3, 3) and
    translation (..., 3) place each inner frame in its outer frame (one part, or a stack).
    """
    com_out = (rotation @ com[..., None])[..., 0] + translation
    return com_out, rotation @ inertia @ np.swapaxes(rotation, -1, -2)


def combine(parts: Iterable[MassProperties]) -> MassProperties:
    """Exact merge of rigidly joined parts given in one common frame.

    Total mass, mass-weighted centre of mass, and inertia about it by the
    parallel-axis theorem.  A massless part adds its rotational inertia (a
    rotor or a frame with inertia but no mass, as URDF allows and Pinocchio
    keeps): about any point it is the same tensor.  When the total mass is
    zero the centre of mass is the mean of the parts' ``com``.
    """
    parts = list(parts)
    if not parts:
        return MassProperties.zero()
    return combine_groups(np.array([p.mass for p in parts], dtype=float), np.array([p.com for p in parts]),
                          np.array([p.inertia for p in parts]), [range(len(parts))])[0]


def combine_groups(mass: np.ndarray, com: np.ndarray, inertia: np.ndarray,
                   groups: Sequence[Sequence[int]]) -> list[MassProperties]:
    """:func:`combine` of each group of parts, all groups at once (the one home of the merge):
    the :class:`MassProperties` of :func:`combined_arrays`, checked in one pass.

    mass (n,) kg, com (n, 3) m, inertia (n, 3, 3) kg m^2 about each part's centre of mass:
    the parts, in one common frame; groups : row indices of the parts of each group.
    """
    return MassProperties.many(*combined_arrays(mass, com, inertia, groups))


def combined_arrays(mass: np.ndarray, com: np.ndarray, inertia: np.ndarray,
                    groups: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The merged mass (g,), centre of mass (g, 3) and central inertia (g, 3, 3) of each of the g
    ``groups`` of parts (arguments as :func:`combine_groups`).  Parts without mass and inertia are
    left out; a group left with one part gets it (inertia symmetrised), a group left with none zeros
    (:meth:`MassProperties.zero`); the others :func:`_merged_groups`."""
    if not (mass > 0.0).all():
        kept = ((mass > 0.0) | inertia.any(axis=(1, 2))).tolist()
        if not all(kept):
            groups = [[i for i in g if kept[i]] for g in groups]
    singles = [k for k, g in enumerate(groups) if len(g) == 1]
    rows = [groups[k][0] for k in singles]
    Js = inertia[rows]
    one_part = mass[rows], com[rows], 0.5 * (Js + Js.transpose(0, 2, 1))
    if len(rows) == len(groups):  # (every group one part: its rows, in order)
        return one_part
    n = len(groups)
    m, c, J = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
    if singles:
        m[singles], c[singles], J[singles] = one_part
    several = [k for k, g in enumerate(groups) if len(g) > 1]
    if several:
        m[several], c[several], J[several] = _merged_groups(mass, com, inertia, [groups[k] for k in several])
    return m, c, J


def _merged_groups(mass, com, inertia, groups) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Total mass (g,), centre of mass (g, 3) and parallel-axis inertia (g, 3, 3) of groups of two or
    more parts."""
    rows = np.fromiter((i for g in groups for i in g), dtype=int)
    sizes = np.array([len(g) for g in groups])
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    m, c = mass[rows], com[rows]
    total = np.add.reduceat(m, starts)
    weighted = np.add.reduceat(m[:, None] * c, starts)
    massive = total > 0.0
    if massive.all():
        centre = weighted / total[:, None]
    else:  # a massless group's centre: the mean of its parts' centres
        centre = np.where(massive[:, None], weighted / np.where(massive, total, 1.0)[:, None],
                          np.add.reduceat(c, starts) / sizes[:, None])
    d = c - np.repeat(centre, sizes, axis=0)
    shift = m[:, None, None] * (np.einsum("ki,ki->k", d, d)[:, None, None] * np.eye(3) - d[:, :, None] * d[:, None, :])
    merged = np.add.reduceat(inertia[rows], starts) + np.add.reduceat(shift, starts)
    return total, centre, 0.5 * (merged + merged.transpose(0, 2, 1))


def _capsule_unit_density(radius: float, length: float) -> tuple[float, np.ndarray]:
    """Volume and central inertia (unit density) of a z-capsule; length excludes the caps."""
    r, h = radius, length
    v_cyl = np.pi * r * r * h
    v_hemi = 2.0 / 3.0 * np.pi * r ** 3
    i_axial = v_cyl * r * r / 2.0 + 2.0 * (2.0 / 5.0) * v_hemi * r * r
    # hemisphere: centroid 3r/8 from its flat face, transverse inertia about the
    # flat-face centre (2/5) m r^2; shift to the capsule centre (h/2 + 3r/8 away)
    hemi_c = 3.0 * r / 8.0
    hemi_t_central = (2.0 / 5.0) * v_hemi * r * r - v_hemi * hemi_c ** 2
    i_trans = (v_cyl * (3.0 * r * r + h * h) / 12.0
               + 2.0 * (hemi_t_central + v_hemi * (h / 2.0 + hemi_c) ** 2))
    return v_cyl + 2.0 * v_hemi, np.diag([i_trans, i_trans, i_axial])


def _ellipsoid_unit_density(radii) -> tuple[float, np.ndarray]:
    a, b, c = radii
    vol = 4.0 / 3.0 * np.pi * a * b * c
    return vol, vol / 5.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


#: the dimensions of each primitive that must be positive
POSITIVE_DIMENSIONS = {"box": ("size",), "cylinder": ("radius", "length"), "sphere": ("radius",),
                       "capsule": ("radius",), "ellipsoid": ("radii",)}


def _check_dimensions(kind: str, params) -> None:
    for key in POSITIVE_DIMENSIONS.get(kind, ()):
        values = np.atleast_1d(np.asarray(params[key], dtype=float))
        if not np.all(values > 0):
            raise InputError(f"{kind} {key} must be positive, got {' '.join(f'{v:g}' for v in values)} "
                             "(a shape without volume has no mass properties)")
    if kind == "capsule" and not float(params["length"]) >= 0:
        raise InputError(f"capsule length must be >= 0, got {float(params['length']):g}")


def primitive_unit_density(kind: str, params) -> tuple[float, np.ndarray]:
    """Volume and central inertia at unit density of a primitive centred at its origin.

    box ``size`` (3,), cylinder ``radius``/``length`` (z axis), sphere ``radius``,
    capsule ``radius``/``length`` (cylindrical part, z axis), ellipsoid ``radii`` (3,).
    A dimension that is not positive (a capsule's length may be 0) is an InputError: such a
    shape has no volume, and a density would give it no mass or NaN inertia.
    """
    _check_dimensions(kind, params)
    if kind == "box":
        box = trimesh.primitives.Box(extents=np.asarray(params["size"], dtype=float))
        return float(box.volume), np.array(box.moment_inertia)
    if kind == "cylinder":
        cyl = trimesh.primitives.Cylinder(radius=float(params["radius"]), height=float(params["length"]))
        return float(cyl.volume), np.array(cyl.moment_inertia)
    if kind == "sphere":
        sph = trimesh.primitives.Sphere(radius=float(params["radius"]))
        return float(sph.volume), np.array(sph.moment_inertia)
    if kind == "capsule":
        return _capsule_unit_density(float(params["radius"]), float(params["length"]))
    if kind == "ellipsoid":
        return _ellipsoid_unit_density([float(r) for r in params["radii"]])
    raise ValueError(f"not a primitive: {kind!r}")


def primitive_mesh(kind: str, params) -> trimesh.Trimesh:
    """A tessellation of a primitive (for pictures and exports), centred at its origin."""
    if kind == "box":
        return trimesh.creation.box(extents=params["size"])
    if kind == "cylinder":
        return trimesh.creation.cylinder(radius=params["radius"], height=params["length"], sections=48)
    if kind == "sphere":
        return trimesh.creation.icosphere(subdivisions=3, radius=params["radius"])
    if kind == "capsule":
        return trimesh.creation.capsule(radius=params["radius"], height=params["length"], count=[32, 32])
    if kind == "ellipsoid":
        sphere = trimesh.creation.icosphere(subdivisions=3, radius=1.0)
        sphere.apply_scale(params["radii"])
        return sphere
    raise ValueError(f"not a primitive: {kind!r}")


def _check_mesh_size(path: Path) -> None:
    """Regular file within ``input_bytes``; a binary STL's triangle count within ``mesh_faces``.

    The count of a binary STL is in its header, so a huge mesh is refused
    before trimesh reads it.
    """
    size = limits.check_input_file(path, "mesh file")
    if path.suffix.lower() != ".stl" or size < 84:
        return
    with open(path, "rb") as fh:
        header = fh.read(84)
    count = int.from_bytes(header[80:84], "little")
    if not header.lstrip().startswith(b"solid") and size == 84 + 50 * count \
            and count > limits.active().mesh_faces:
        raise InputError(limits.exceeded("mesh triangles", count, "mesh_faces"), file=str(path))


def mesh_suffix_problem(path) -> str | None:
    """Why ``path`` cannot name a mesh file by its suffix (one of :data:`MESH_SUFFIXES`), or None.
    No I/O: the readers ask it of every mesh they find (``/etc/passwd`` is refused at its line)."""
    suffix = os.path.splitext(str(path))[1].lower()
    if suffix in MESH_SUFFIXES:
        return None
    return f"{f'its suffix {suffix!r}' if suffix else 'it has no suffix'}; mesh files end in {', '.join(MESH_SUFFIXES)}"


def mesh_file_problem(path) -> str | None:
    """Why the regular file ``path`` is not a mesh file, or None when it may be one.

    Its suffix (:func:`mesh_suffix_problem`) and a look at its first bytes (a binary STL's
    size matches its triangle count or an ASCII STL starts with ``solid``; PLY, GLB and OFF
    files start with their magic; OBJ is text; glTF and COLLADA start with ``{`` and ``<``), so
    that a text file renamed ``.stl`` is refused before trimesh reads it (:func:`load_mesh`).
    The reason names the format and never quotes the file.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    problem = mesh_suffix_problem(p)
    if problem is not None:
        return problem
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            size = os.fstat(fd).st_size
            head = os.read(fd, 84 if suffix == ".stl" else _SNIFF_BYTES)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    start = head.lstrip()
    if suffix == ".stl":
        count = int.from_bytes(head[80:84], "little") if size >= 84 else -1
        if start.startswith(b"solid") or (count >= 0 and size >= 84 + 50 * count):
            return None
        return f"neither a binary STL ({size} bytes, not 84 + 50 per triangle) nor an ASCII one"
    ok = {".ply": start.startswith(b"ply"), ".glb": head.startswith(b"glTF"), ".off": b"OFF" in head,
          ".obj": b"\0" not in head, ".gltf": start[:1] == b"{", ".dae": start[:1] == b"<"}[suffix]
    return None if ok else f"its content is not {suffix[1:].upper()}"


#: how much of a file other than an STL :func:`mesh_file_problem` reads
_SNIFF_BYTES = 1024


def load_mesh(path, scale=1.0) -> trimesh.Trimesh:
    """Load a mesh file as one Trimesh, scaled; InputError naming the file on failure.

    A negative scale factor mirrors the mesh (trimesh keeps the faces oriented
    outwards, so the volume stays positive).  Multi-part files (GLB/GLTF/DAE scenes) are concatenated in their scene frames.
    """
    given, path = path, Path(path)
    if not path.exists():
        raise InputError(f"mesh file not found: {path}", file=str(path))
    if path.suffix.lower() not in MESH_SUFFIXES:
        raise InputError(f"unsupported mesh format {path.suffix!r} (expected one of "
                         f"{', '.join(MESH_SUFFIXES)})", file=str(path))
    _check_mesh_size(path)
    problem = mesh_file_problem(path)
    if problem is not None:
        raise InputError(f"mesh {path.name}: not a mesh file ({problem})", file=str(path))
    try:
        loaded = trimesh.load(str(path), force="mesh", process=True)
    except Exception as exc:  # trimesh raises many types for corrupt files
        raise InputError(f"cannot read mesh {path.name}: {type(exc).__name__}", file=str(path)) from None
    if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
        raise InputError(f"mesh {path} has no triangles", file=str(path))
    if len(loaded.faces) > limits.active().mesh_faces:
        raise InputError(limits.exceeded("mesh triangles", len(loaded.faces), "mesh_faces"), file=str(path))
    s = np.broadcast_to(np.asarray(scale, dtype=float), (3,))
    if np.any(s == 0) or not np.all(np.isfinite(s)):
        raise InputError(f"mesh scale must be finite and non-zero, got {s.tolist()}", file=str(path))
    loaded.apply_transform(np.diag([*s, 1.0]))
    file_progressed(given, 0.5)
    return loaded


def mesh_mass_properties(mesh: trimesh.Trimesh, density: float, name: str,
                         convex_hull: bool = False) -> MassProperties:
    """Mass properties of a closed mesh at ``density`` in the mesh frame.

    ``name`` names the mesh in errors.  With ``convex_hull`` the hull is used.
    Raises InputError for an open mesh, non-positive volume or a non-physical inertia.
    """
    if convex_hull:
        mesh = mesh.convex_hull
    elif not mesh.is_watertight:
        raise InputError(f"{name}: mesh is not watertight (set convex_hull: true to use its convex hull)")
    volume = float(mesh.volume)
    if not volume > 0.0:
        raise InputError(f"{name}: mesh volume is {volume:.6g}, expected > 0 (inverted normals?)")
    mp = mesh.mass_properties
    mass = density * volume
    inertia = density * np.array(mp["inertia"])
    problem = inertia_problem(inertia)
    if problem:
        raise InputError(f"{name}: {problem}")
    return MassProperties(mass, np.array(mp["center_mass"]), inertia)


def shape_mass_properties(shape: Geometry, density: float) -> MassProperties:
    """Mass properties of one shape at ``density`` (kg/m^3), in the frame of ``shape.pose``."""
    if shape.kind == "mesh":
        mesh = load_mesh(shape.file, shape.params.get("scale", 1.0))
        local = mesh_mass_properties(mesh, density, f"mesh {shape.file}",
                                     bool(shape.params.get("convex_hull", False)))
        file_progressed(shape.file, 1.0)
    else:
        vol, inertia = primitive_unit_density(shape.kind, shape.params)
        local = MassProperties(density * vol, np.zeros(3), density * inertia)
    return transform_mass_properties(local, shape.pose)


def shapes_mass_properties(shapes: Sequence[Geometry], density: float) -> MassProperties:
    """Merged mass properties of several shapes of one body at one density."""
    return combine(shape_mass_properties(s, density) for s in shapes)
