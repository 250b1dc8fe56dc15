"""URDF link elements: ``<origin>`` poses, ``<inertial>``, mesh URIs (``package://``, ``file://``) and shapes.

Shared by the URDF and SDFormat readers.

Meshes ``package://PKG/rel`` are looked up in each of ``package_dirs``: a ``(PKG, DIR)`` pair names
the package's own folder (``DIR/rel``), a plain folder holds packages (``DIR/PKG/rel``, Pinocchio's
``package_dirs``); then in ``$ROS_PACKAGE_PATH``'s folders, next to the file and in every parent directory
(``ANCESTOR/PKG/rel``, or ``ANCESTOR/rel`` when the ancestor itself is named
PKG); ``file://`` URIs and plain paths are taken relative to the URDF file.
Which missing meshes are errors: :mod:`parsers.urdf.reader`.  Meshes are only checked for existence while reading (mass properties come from
``<inertial>``); they are loaded, through :func:`parsers.massprops.load_mesh`,
only when inertia from geometry is requested.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

from mbcompose.dynamics.spatial import rpy_to_matrices, rpy_to_matrix
from mbcompose.dynamics.tolerances import INERTIA_SCALE_FLOOR

from .. import limits
from ..assembly import Geometry, MassProperties, Pose, frozen
from ..massprops import inertia_problems, mesh_suffix_problem, proven_physical
from ..xml import (attr_float, attr_float_list, attr_float_values, attr_floats, error, float_rows,
                   parse_floats, required, where)

log = logging.getLogger(__name__)

#: collision shapes without volume, skipped with a warning (no inertia effect).
MASSLESS_SHAPES = ("plane", "cdf")

_UNKNOWN = object()  # a mesh URI not looked up yet


#: the pose of an absent ``<origin>`` (a Pose is immutable, so one serves every element)
IDENTITY = Pose()


def origin_poses(origins, memo: dict) -> list[Pose]:
    """Each ``<origin xyz rpy>`` element of ``origins`` as a Pose (None: the identity, no origin).

    memo : poses already read from the same file, keyed by their ``(xyz, rpy)`` text (half a
        robot's origins repeat another's); a Pose is immutable, so shared.  The texts not read
        yet are converted together (:func:`parsers.xml.float_rows`) and made Poses together
        (:meth:`Pose.many`); when one of them is not three numbers, they are read one by one,
        which raises for the first bad one.
    """
    keys, new = [], {}
    for o in origins:
        if o is None:
            keys.append(None)
            continue
        key = (o.get("xyz"), o.get("rpy"))
        keys.append(key)
        if key not in memo:
            new.setdefault(key, o)
    if new:
        memo.update(zip(new, _poses_of_texts(list(new), list(new.values()))))
    return [IDENTITY if key is None else memo[key] for key in keys]


def _poses_of_texts(keys: list, origins: list) -> list[Pose]:
    """The Poses of ``<origin>`` elements given their ``(xyz, rpy)`` texts (absent: zeros)."""
    xyz = float_rows([_ZEROS if x is None else x for x, _ in keys], 3)
    rpy = float_rows([_ZEROS if r is None else r for _, r in keys], 3)
    if xyz is None or rpy is None:
        return [_origin(o) for o in origins]
    rotations = [IDENTITY.rotation] * len(keys)
    turned = rpy.any(axis=1).nonzero()[0].tolist()
    if turned:
        for k, R in zip(turned, frozen(rpy_to_matrices(rpy[turned]))):
            rotations[k] = R
    return Pose.many(rotations, xyz)


_ZEROS = "0 0 0"


def _origin(o) -> Pose:
    """The Pose of an ``<origin>`` element, read alone (InputError for a bad attribute)."""
    xyz = frozen(attr_floats(o, "xyz", 3, (0.0, 0.0, 0.0)))
    rpy = attr_float_list(o, "rpy", 3, (0.0, 0.0, 0.0))
    return Pose(frozen(rpy_to_matrix(rpy)) if any(rpy) else IDENTITY.rotation, xyz)


def split_package_dirs(package_dirs) -> tuple[tuple[str, ...], dict[str, str]]:
    """``package_dirs`` (folders holding packages, and ``(NAME, FOLDER)`` pairs naming one package's
    folder) as (the folders, NAME -> FOLDER), folders as absolute path strings."""
    folders, named = [], {}
    for entry in package_dirs:
        if isinstance(entry, (tuple, list)):
            name, folder = entry
            named[str(name)] = os.path.abspath(str(folder))
        else:
            folders.append(os.path.abspath(str(entry)))
    return tuple(folders), named


def package_folders(package_dirs) -> tuple[str, ...]:
    """Every folder ``package_dirs`` names (the plain ones and the named packages' own)."""
    folders, named = split_package_dirs(package_dirs)
    return folders + tuple(named.values())


def _package_roots(pkg: str, meshes: "MeshFiles", ros_path: str):
    """Folders that may hold package ``pkg``'s files, most likely first (lazily: the document's
    directory, ``meshes.base``, is found only when the package is not in the others)."""
    if pkg in meshes.named_packages:
        yield meshes.named_packages[pkg]
    for d in meshes.package_dirs:
        yield os.path.join(d, pkg)
    for d in ros_path.split(os.pathsep):
        if d:
            yield os.path.join(d, pkg)
    anc = meshes.base
    while True:
        yield os.path.join(anc, pkg)
        if os.path.basename(anc) == pkg:
            yield anc
        parent = os.path.dirname(anc)
        if parent == anc:
            return
        anc = parent


def package_roots(pkg: str, meshes: "MeshFiles"):
    """Folders that may be package ``pkg``'s, in the look-up order of ``package://`` URIs."""
    return _package_roots(pkg, meshes, meshes.ros_package_path)


_ROOT_CACHE: dict[tuple, str] = {}


def resolve_uri(uri: str, base_dir: Path, package_dirs=()) -> Path | None:
    """The file a mesh ``filename`` names, or None when it cannot be found.

    ``package://PKG/rel``: ``DIR/PKG/rel`` for DIR in ``package_dirs`` and in
    ``$ROS_PACKAGE_PATH``, then the URDF's directory and its ancestors
    (``A/PKG/rel``, or ``A/rel`` if A is named PKG).  ``file://abs`` and plain
    paths: relative to ``base_dir``.  The package folder found first is
    remembered for the next look-ups.
    """
    found = MeshFiles(base_dir, package_dirs).find(uri)
    return None if found is None else Path(found)


class MeshFiles:
    """The files of one document's mesh URIs (the rules of :func:`resolve_uri`), each looked up once.

    base_dir : the directory relative URIs start from, or ``document``: the file whose real
    directory (symbolic links resolved, only when a look-up needs it) that is;
    package_dirs : folders holding packages and ``(NAME, FOLDER)`` pairs (:func:`split_package_dirs`);
    found : URI -> normalised path string or None.

    Whether a file exists is read from one listing of its folder per document (``os.scandir``: one
    system call for every file of a folder, where ``os.path.isfile`` costs one per file, each walking
    the whole path): :meth:`is_file`.
    """

    def __init__(self, base_dir=None, package_dirs=(), *, document: str | None = None):
        self._document = document
        self._base = None if document is not None else os.path.abspath(str(base_dir))
        given = self._base if document is None else os.path.dirname(os.path.abspath(document))
        self.package_dirs, self.named_packages = split_package_dirs(package_dirs)
        self._roots_key = (given, self.package_dirs, tuple(sorted(self.named_packages.items())),
                           os.environ.get("ROS_PACKAGE_PATH", ""))
        self.found: dict[str, str | None] = {}
        self._listed: dict[str, dict | None] = {}

    def is_file(self, path: str) -> bool:
        """``os.path.isfile(path)`` (an absolute path; symbolic links followed) from the listing of its
        folder, made on the first question about that folder (a folder that does not exist holds no file;
        one that cannot be listed is asked ``os.path.isfile``)."""
        folder, sep, name = path.rpartition("/")
        if not sep or os.sep != "/":
            return os.path.isfile(path)
        entries = self._listed.get(folder, _UNKNOWN)
        if entries is _UNKNOWN:
            entries = self._listed[folder] = _folder_entries(folder)
        if entries is None:
            return os.path.isfile(path)
        entry = entries.get(name)
        if entry is None:
            return False
        try:
            return entry.is_file()
        except OSError:
            return os.path.isfile(path)

    @property
    def base(self) -> str:
        """The absolute directory relative URIs start from."""
        if self._base is None:
            self._base = os.path.dirname(os.path.realpath(self._document))
        return self._base

    @property
    def ros_package_path(self) -> str:
        """``$ROS_PACKAGE_PATH`` when this document's look-ups began."""
        return self._roots_key[-1]

    def where_searched(self, uri: str) -> str:
        """For a missing ``package://`` mesh: the folders given and how to give another (the
        ``--package-dir`` option, ``$ROS_PACKAGE_PATH``); empty for other URIs."""
        if not uri.startswith("package://"):
            return ""
        pkg = uri[len("package://"):].partition("/")[0]
        given = [*(f"{n}={d}" for n, d in self.named_packages.items()), *self.package_dirs]
        searched = f"{', '.join(given)}, " if given else ""
        return (f" (looked in {searched}$ROS_PACKAGE_PATH and the folders above the file; give the package's "
                f"folder with --package-dir {pkg}=DIR)")

    def find(self, uri: str) -> str | None:
        """``uri``'s file as a normalised path string, or None when it cannot be found."""
        found = self.found.get(uri, _UNKNOWN)
        if found is _UNKNOWN:
            found = self.found[uri] = self._look_up(uri)
        return found

    def _look_up(self, uri: str) -> str | None:
        if uri.startswith("package://"):
            pkg, _, rel = uri[len("package://"):].partition("/")
            key = (pkg, *self._roots_key)
            hit = _ROOT_CACHE.get(key)
            if hit is not None:
                f = hit + "/" + rel if _clean(rel) else os.path.normpath(os.path.join(hit, rel))
                if self.is_file(f):
                    return f
            for root in _package_roots(pkg, self, self.ros_package_path):
                f = os.path.join(root, rel)
                if self.is_file(f):
                    _ROOT_CACHE[key] = os.path.normpath(root)
                    return os.path.normpath(f)
            return None
        if uri.startswith("file://"):
            uri = uri[len("file://"):]
        f = os.path.normpath(os.path.join(self.base, uri))
        return f if self.is_file(f) else None


def _folder_entries(folder: str) -> dict | None:
    """Name -> ``os.DirEntry`` of what ``folder`` holds (one system call; whether an entry is a
    regular file is asked only of the entries looked up, so a big folder costs no ``stat`` per
    entry); empty when the folder does not exist or is not a folder; None when it cannot be listed."""
    try:
        with os.scandir(folder) as entries:
            return {e.name: e for e in entries}
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError:
        return None


def shape_geometry(shape_el, g, role: str, meshes: MeshFiles, check_meshes: bool, pose: Pose,
                   memo: dict | None = None) -> Geometry | None:
    """The shape of a ``<visual>`` or ``<collision>`` (None when skipped, see :mod:`parsers.urdf.reader`).

    g : its first ``<geometry>`` (None when it has none); meshes : the document's mesh files;
    pose : its ``<origin>`` (:func:`origin_poses`); memo : the mesh scales read from the same file
    (by text), shared read-only.
    """
    if g is None or len(g) == 0:
        raise error(shape_el, f"<{role}> needs a <geometry> with one shape")
    s = g[0]
    tag = s.tag  # (lxml makes a new string at every .tag: read once; meshes, the common shape, first)
    if tag == "mesh":
        return _mesh_geometry(s, role, meshes, check_meshes, pose, memo)
    if tag == "box":
        size = attr_floats(s, "size", 3)
        if size is None:
            raise error(s, "<box> needs attribute 'size'")
        return _shape("box", {"size": size}, pose, None, role)
    if tag in ("cylinder", "capsule"):
        r = attr_float(s, "radius")
        ln = attr_float(s, "length")
        if r is None or ln is None:
            raise error(s, f"<{tag}> needs attributes 'radius' and 'length'")
        return _shape(tag, {"radius": r, "length": ln}, pose, None, role)
    if tag == "sphere":
        r = attr_float(s, "radius")
        if r is None:
            raise error(s, "<sphere> needs attribute 'radius'")
        return _shape("sphere", {"radius": r}, pose, None, role)
    if tag in MASSLESS_SHAPES:
        log.warning("%s: <%s> %s geometry skipped (it has no volume; Pinocchio ignores it too)",
                    where(s), tag, role)
        return None
    raise error(s, f"unknown geometry <{tag}> (expected box, cylinder, sphere, capsule, mesh, plane or cdf)")


def _mesh_geometry(s, role: str, meshes: MeshFiles, check_meshes: bool, pose: Pose, memo: dict | None):
    """The shape of a ``<mesh>`` element ``s`` (see :func:`shape_geometry`); None when it is skipped."""
    uri = required(s, "filename")
    scale = _mesh_scale(s, memo)
    first = uri not in meshes.found  # (a URI met again was checked at its first shape)
    if first:
        _check_mesh_uri(s, uri, meshes)
    path = meshes.find(uri)
    if path is None:
        if check_meshes and role == "collision":
            raise error(s, f"mesh file not found: {uri!r}{meshes.where_searched(uri)}")
        log.warning("%s: %s mesh not found: %r (shape skipped)%s", where(s), role, uri,
                    meshes.where_searched(uri))
        return None
    problem = mesh_suffix_problem(path) if first else None
    if problem is not None:
        raise error(s, f"mesh {uri!r}: not a mesh file ({problem})")
    return _shape("mesh", {"scale": scale, "uri": uri}, pose, path, role)


def _shape(kind: str, params: dict, pose: Pose, file: str | None, role: str) -> Geometry:
    return Geometry(kind, params, pose, file, role)


def _clean(rel: str) -> bool:
    """True when ``os.path.normpath(root + "/" + rel)`` is ``root + "/" + rel`` for a normalised
    ``root`` on POSIX: a relative path without empty, ``.`` or ``..`` parts (conservative)."""
    return (os.sep == "/" and bool(rel) and rel[0] != "/" and rel[-1] != "/" and "//" not in rel
            and "/." not in "/" + rel)


def _check_mesh_uri(s, uri: str, meshes: MeshFiles) -> None:
    """InputError for a mesh URI that is not merely missing: a ``package://`` path climbing out of
    its package, or a local path (relative to ``meshes.base``) to something that is not a
    regular file (a device, a FIFO)."""
    if uri.startswith("package://"):
        rel = uri[len("package://"):].partition("/")[2]
        if ".." in rel and os.path.normpath(rel).startswith(".."):
            raise error(s, f"mesh URI {uri!r} climbs out of its package")
        return
    f = os.path.join(meshes.base, uri[len("file://"):] if uri.startswith("file://") else uri)
    if meshes.is_file(os.path.normpath(f)):
        return
    if os.path.exists(f) and not os.path.isfile(f):
        raise error(s, f"mesh {uri!r} is not a regular file")


def _mesh_scale(s, memo: dict | None = None) -> np.ndarray:
    """``<mesh scale>``: one or three numbers, read-only (shared through ``memo`` by the meshes of
    the same scale text); a fourth (seen in the wild) is ignored with a warning."""
    text = s.get("scale")
    key = ("scale", text)
    scale = None if memo is None else memo.get(key)
    if scale is None:
        scale = frozen(_scale_values(s, text))
        if memo is not None:
            memo[key] = scale
    return scale


def _scale_values(s, text: str | None) -> np.ndarray:
    if text is None:
        return np.ones(3)
    if len(text.split()) == 4:
        log.warning("%s: mesh scale %r has 4 numbers: the 4th is ignored", where(s), text)
        return parse_floats(text, s, "mesh@scale", 4)[:3].copy()
    scale = attr_float_list(s, "scale", (1, 3))
    return np.array(scale if len(scale) == 3 else scale * 3)


def link_inertials(links, found: dict, poses: list, memo: dict) -> dict:
    """Link name (of ``links``) -> its ``<inertial>`` in the link frame as MassProperties (None without
    one), values kept as written; ``found``: name -> (its first ``<inertial>``, that element's first
    children by tag) of the links that have one; ``poses``: their ``<origin>`` Poses, in that order.
    The numbers of all the links are converted and checked together (:func:`_inertials_together`);
    when one is missing or bad, each link is read alone (:func:`link_inertial`), which raises for
    the first.  ``memo``: see :func:`origin_poses`."""
    out = dict.fromkeys(links)
    if found:
        together = _inertials_together(found, poses)
        out.update(together if together is not None else {n: link_inertial(*found[n], n, memo) for n in found})
    return out


def _inertials_together(found: dict, poses: list) -> dict | None:
    """name -> MassProperties of the ``<inertial>`` elements ``found`` (name -> (element, its first
    children by tag); ``poses``: their origins), or None when one lacks ``<mass>`` or ``<inertia>``
    or has a number that is not finite, beyond the ``magnitude`` limit, or a negative mass."""
    texts, inertia_els = [], []
    for _, parts in found.values():
        m_el, i_el = parts.get("mass"), parts.get("inertia")
        if m_el is None or i_el is None:
            return None
        texts.append(m_el.get("value"))
        texts.extend(map(i_el.get, INERTIA_KEYS))
        inertia_els.append(i_el)
    try:
        values = np.array(list(map(float, texts)), dtype=float).reshape(-1, 7)  # mass, ixx ... izz
    except (TypeError, ValueError):
        return None
    if not np.abs(values).max() <= limits.active().magnitude or values[:, 0].min() < 0.0:
        return None
    _warn_unphysical(values, list(found), inertia_els)
    J = values[:, _SYMMETRIC].reshape(-1, 3, 3)
    turned = [k for k, pose in enumerate(poses) if pose.rotation is not IDENTITY.rotation]
    if turned:
        R = np.array([poses[k].rotation for k in turned])
        J[turned] = R @ J[turned] @ R.transpose(0, 2, 1)
    coms = np.array([pose.translation for pose in poses]).reshape(-1, 3)
    return dict(zip(found, MassProperties.many(values[:, 0], coms, J)))


#: the columns of ``ixx ixy ixz iyy iyz izz`` (1-6 after the mass) in the rows of a symmetric 3x3
_SYMMETRIC = np.array([1, 2, 3, 2, 4, 5, 3, 5, 6])


def _warn_unphysical(values: np.ndarray, names: list, inertia_els: list) -> None:
    """Warn for each inertia of ``values`` (rows: mass, ixx ... izz) that has mass, is not all but
    zero and is not physical (kept as written): :func:`parsers.massprops.proven_physical` settles
    all of them at once but the doubtful few, which :func:`parsers.massprops.inertia_problems` examines
    together."""
    six = values[:, 1:]
    scale = np.abs(six).max(axis=1)
    doubtful = (values[:, 0] > 0.0) & (scale > INERTIA_SCALE_FLOOR) & ~proven_physical(*six.T, scale)
    found = doubtful.nonzero()[0].tolist()
    if not found:
        return
    for k, problem in zip(found, inertia_problems(values[found][:, _SYMMETRIC].reshape(-1, 3, 3))):
        if problem:
            log.warning("%s: link %r: %s (kept as written)", where(inertia_els[k]), names[k], problem)


def link_inertial(inl, parts: dict, name: str, memo: dict | None = None) -> MassProperties:
    """A link's ``<inertial>`` element ``inl`` (``parts``: its first children by tag) in the link frame,
    values kept as written.  Read alone, raising for the first missing or bad value (see
    :func:`link_inertials`).  ``memo``: see :func:`origin_poses`."""
    pose = origin_poses([parts.get("origin")], {} if memo is None else memo)[0]
    m_el = parts.get("mass")
    if m_el is None:
        raise error(inl, f"link {name!r}: <inertial> needs <mass value=...>")
    mass = attr_float(m_el, "value")
    if mass is None:
        raise error(m_el, "<mass> needs attribute 'value'")
    if mass < 0:
        raise error(m_el, f"link {name!r}: mass must be >= 0, got {mass:g}")
    i_el = parts.get("inertia")
    if i_el is None:
        raise error(inl, f"link {name!r}: <inertial> needs <inertia ixx ixy ixz iyy iyz izz>")
    six = attr_float_values(i_el, INERTIA_KEYS) or _inertia_values(i_el)
    values = np.array([[mass, *six]])
    _warn_unphysical(values, [name], [i_el])
    J = values[0, _SYMMETRIC].reshape(3, 3)
    R = pose.rotation
    return MassProperties(mass, pose.translation, J if R is IDENTITY.rotation else R @ J @ R.T)


INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def _inertia_values(i_el) -> list[float]:
    """The six numbers of ``<inertia>`` one by one: InputError for the first missing or bad one."""
    vals = []
    for k in INERTIA_KEYS:
        v = attr_float(i_el, k)
        if v is None:
            raise error(i_el, f"<inertia> needs attribute {k!r}")
        vals.append(v)
    return vals
