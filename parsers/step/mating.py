"""Joints from mating geometry: contacts between part faces and the freedom they leave.

The rules (issue 11; docs/assembly-format.md, "STEP assemblies"):

* **cylindrical fit**: a convex cylinder (shaft) of one part and a concave one
  (bore) of the other, axes coincident within ``angle_tol`` and ``contact_tol``,
  extents overlapping along the axis.  Radial clearance c = r_bore - r_shaft:
  |c| <= contact_tol is a *press fit* (rigid); contact_tol < c <= max_clearance
  a *bearing* (rotation about and translation along the axis).
* **planar contact**: planar faces with opposite normals, at distance <=
  contact_tol, whose areas overlap: the planar motion in that plane.
* **spherical fit**: convex and concave spheres with the same centre: press fit,
  or with clearance a *ball* (three rotations).

The freedom of a pair is the intersection of the motion subspaces of all its
contacts, twists ``[omega; v]`` (seed 002's convention, angular first) taken about
one point at the reference configuration; it names the joint (fixed, revolute,
prismatic, cylindrical, spherical, planar) or the pair is *unclassified*.
A press fit makes the pair fixed whatever else it touches; a pair whose only
contacts are planar contacts in one plane is fixed by default
(``planar_contacts: fixed``) or planar (``planar``).

This module is plain numpy: surfaces come in as :class:`Surface` records (mm,
assembly frame) from :mod:`.brep`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

PLANAR_CONTACT_POLICIES = ("fixed", "planar")


@dataclass(frozen=True)
class MatingTolerances:
    """Tolerances of the rules, lengths in the geometry's unit (mm in the reader).

    contact_tol : distance under which faces touch and radii are equal (press fit).
    angle_tol : angle under which axes and normals are parallel, rad.
    max_clearance : largest radial clearance of a bearing or ball joint.
    planar_gap : largest distance between the faces of a planar contact (None: ``contact_tol``); the
        reader widens it to ``max_clearance`` for the faces of a connector (a vendor's surface model,
        drawn at its nominal size, in a pocket printed with clearance).
    """

    contact_tol: float = 0.01
    angle_tol: float = 1e-3
    max_clearance: float = 0.5
    planar_gap: float | None = None


@dataclass(frozen=True, eq=False)
class Surface:
    """A plane, cylinder or sphere face of a part (assembly frame).

    part, face : part name and face index in the part.
    kind : 'plane', 'cylinder', 'sphere' or 'torus' (tori make no contact here; the rolling-bearing
        rule reads them as raceways).
    point : (3,) plane: a point of the face; cylinder: a point of the axis; sphere, torus: centre.
    direction : (3,) plane: outward unit normal; cylinder, torus: unit axis.
    radius : cylinder or sphere radius; a torus' major radius.
    convex : True for a shaft or ball (material inside), False for a bore, socket or raceway groove.
    extent : (lo, hi) of a cylinder along its axis, measured from ``point``.
    triangles : (n, 3, 3) the face's triangles (planes only; for the overlap test).
    box : (2, 3) lower and upper corners of the face's bounding box (None: unbounded).
    minor : a torus' minor radius (of its tube), else 0.
    """

    part: str
    face: int
    kind: str
    point: np.ndarray
    direction: np.ndarray
    radius: float = 0.0
    convex: bool = True
    extent: tuple[float, float] = (0.0, 0.0)
    triangles: np.ndarray = field(default_factory=lambda: np.zeros((0, 3, 3)))
    box: np.ndarray | None = None
    minor: float = 0.0


@dataclass(frozen=True, eq=False)
class Contact:
    """A contact between two parts found by the rules.

    kind : 'press fit', 'bearing', 'planar', 'ball' (a spherical press fit is a 'press fit').
    part_a, part_b : the parts (a is the shaft or ball for fits).
    faces : (face index in a, face index in b).
    radii : (r_a, r_b) for fits, else (0, 0).
    clearance : r_b - r_a for fits, the plane distance for planar contacts.
    point : (3,) a point of the contact (on the axis, the plane or the centre).
    axis : (3,) cylinder axis or plane normal (outward of part a); +z for balls.
    area : overlap area of a planar contact, else 0.
    surface : 'cylinder', 'sphere' or 'plane': the faces in contact.
    """

    kind: str
    part_a: str
    part_b: str
    faces: tuple[int, int]
    radii: tuple[float, float]
    clearance: float
    point: np.ndarray
    axis: np.ndarray
    area: float = 0.0
    surface: str = "cylinder"

    def scaled(self, factor: float) -> "Contact":
        """The same contact with lengths multiplied by ``factor`` (unit change)."""
        return replace(self, radii=(self.radii[0] * factor, self.radii[1] * factor),
                       clearance=self.clearance * factor, point=self.point * factor,
                       area=self.area * factor ** 2)

    def describe(self) -> str:
        if self.kind == "planar":
            return f"planar contact, normal {np.round(self.axis, 6).tolist()}, area {self.area:.6g}"
        what = "axis " + str(np.round(self.axis, 6).tolist()) if self.kind != "ball" else "centre"
        return (f"{self.kind}, radii {self.radii[0]:.6g}/{self.radii[1]:.6g}, clearance {self.clearance:.6g}, "
                f"{what} through {np.round(self.point, 9).tolist()}")


# ---------------------------------------------------------------- contacts between two faces

def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def _cylinder_fit(a: Surface, b: Surface, tol: MatingTolerances) -> Contact | None:
    """Shaft ``a`` in bore ``b``: a press fit, a bearing or None."""
    if np.linalg.norm(np.cross(a.direction, b.direction)) > tol.angle_tol:
        return None
    axis = a.direction
    lo_a, hi_a = sorted(a.extent)
    shift = float(np.dot(b.point - a.point, axis))
    sb = np.sign(np.dot(b.direction, axis))
    lo_b, hi_b = sorted((shift + sb * b.extent[0], shift + sb * b.extent[1]))
    lo, hi = max(lo_a, lo_b), min(hi_a, hi_b)
    if hi - lo <= tol.contact_tol:
        return None
    mid = a.point + 0.5 * (lo + hi) * axis
    off = mid - b.point
    if np.linalg.norm(off - np.dot(off, b.direction) * b.direction) > tol.contact_tol:
        return None
    c = b.radius - a.radius
    kind = _fit_kind(c, tol, "bearing")
    if kind is None:
        return None
    return Contact(kind, a.part, b.part, (a.face, b.face), (a.radius, b.radius), c, mid, axis)


def _fit_kind(clearance: float, tol: MatingTolerances, loose: str) -> str | None:
    """'press fit' within ``contact_tol``, ``loose`` up to ``max_clearance``, else None (no fit)."""
    if abs(clearance) <= tol.contact_tol:
        return "press fit"
    if tol.contact_tol < clearance <= tol.max_clearance:
        return loose
    return None


def _sphere_fit(a: Surface, b: Surface, tol: MatingTolerances) -> Contact | None:
    """Ball ``a`` in socket ``b``: a press fit, a ball joint or None."""
    if np.linalg.norm(a.point - b.point) > tol.contact_tol:
        return None
    c = b.radius - a.radius
    kind = _fit_kind(c, tol, "ball")
    if kind is None:
        return None
    return Contact(kind, a.part, b.part, (a.face, b.face), (a.radius, b.radius), c, a.point.copy(),
                   np.array([0.0, 0.0, 1.0]), surface="sphere")


def _plane_basis(n: np.ndarray) -> np.ndarray:
    """(2, 3) two unit vectors orthogonal to ``n`` and to each other."""
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    e1 = _unit(np.cross(n, helper))
    return np.array([e1, np.cross(n, e1)])


def _take(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """a[n, idx[n, k]] for (N, K[, 2]) arrays (``np.take_along_axis`` by fancy indexing, without its copies)."""
    return a[np.arange(len(a))[:, None], idx]


def _compact(values: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the kept entries of ``values`` (N, M, 2) first, in their order; (compacted (N, W, 2), valid (N, W)).

    The same as a stable sort of each row on ``~keep`` cut to the widest row, by scattering each kept
    entry to its rank among the kept ones of its row (zeros where a row has fewer).
    """
    count = keep.sum(axis=1)
    width = max(int(count.max()), 1) if len(count) else 1
    rows, cols = np.nonzero(keep)
    rank = np.cumsum(keep, axis=1)[rows, cols] - 1
    out = np.zeros((len(keep), width, values.shape[2]))
    out[rows, rank] = values[rows, cols]
    return out, np.arange(width)[None, :] < count[:, None]


def _clip_batch(poly: np.ndarray, valid: np.ndarray, a: np.ndarray, b: np.ndarray):
    """Sutherland-Hodgman for N convex polygons at once: keep the part left of the edges a -> b.

    poly : (N, K, 2) vertices, the valid ones first (``valid`` (N, K)), counter-clockwise.
    a, b : (N, 2) the clipping edge of each row.  Returns the clipped (poly, valid).
    """
    n, k = valid.shape
    d = b - a
    side = d[:, None, 0] * (poly[..., 1] - a[:, None, 1]) - d[:, None, 1] * (poly[..., 0] - a[:, None, 0])
    count = np.maximum(valid.sum(axis=1), 1)
    nxt = (np.arange(k)[None, :] + 1) % count[:, None]
    pn, sn = _take(poly, nxt), _take(side, nxt)
    inside, inside_next = side >= 0, sn >= 0
    denom = side - sn
    t = side / np.where(denom == 0, 1.0, denom)
    inter = poly + t[..., None] * (pn - poly)
    out = np.stack([poly, inter], axis=2).reshape(n, 2 * k, 2)
    ok = np.stack([inside & valid, (inside != inside_next) & valid], axis=2).reshape(n, 2 * k)
    return _compact(out, ok)


def _ccw(tris: np.ndarray) -> np.ndarray:
    """(N, 3, 2) triangles, each turned counter-clockwise."""
    d1, d2 = tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]
    flip = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0] < 0
    out = tris.copy()
    out[flip] = tris[flip][:, ::-1]
    return out


def _areas_moments(poly: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shoelace area (N,) and first moment (N, 2) of compacted polygons."""
    count = np.maximum(valid.sum(axis=1), 1)
    nxt = (np.arange(valid.shape[1])[None, :] + 1) % count[:, None]
    pn = _take(poly, nxt)
    cross = (poly[..., 0] * pn[..., 1] - pn[..., 0] * poly[..., 1]) * valid
    area = 0.5 * cross.sum(axis=1)
    moment = ((poly + pn) * cross[..., None]).sum(axis=1) / 6.0
    return area, moment


def overlap_area(tris_a: np.ndarray, tris_b: np.ndarray, basis: np.ndarray,
                 chunk: int = 20000) -> tuple[float, np.ndarray]:
    """Area and centroid (2-D, in ``basis``) of the overlap of two triangle sets projected on a plane.

    tris_a, tris_b : (n, 3, 3) and (m, 3, 3) triangles (the triangles of one set do not overlap).
    basis : (2, 3) orthonormal in-plane axes.  Every pair of triangles whose boxes meet is
    clipped (Sutherland-Hodgman, vectorised over the pairs).
    """
    pa, pb = tris_a @ basis.T, tris_b @ basis.T
    lo_a, hi_a, lo_b, hi_b = pa.min(1), pa.max(1), pb.min(1), pb.max(1)
    # only the triangles inside the other set's box can overlap it: drop the others before the n x m test
    near_a = np.all((lo_a <= hi_b.max(0)) & (hi_a >= lo_b.min(0)), axis=1)
    near_b = np.all((lo_b <= hi_a.max(0)) & (hi_b >= lo_a.min(0)), axis=1)
    pa, pb = _ccw(pa[near_a]), _ccw(pb[near_b])
    lo_a, hi_a, lo_b, hi_b = lo_a[near_a], hi_a[near_a], lo_b[near_b], hi_b[near_b]
    meet = np.all((lo_b[None, :, :] <= hi_a[:, None, :]) & (hi_b[None, :, :] >= lo_a[:, None, :]), axis=2)
    ia, ib = np.nonzero(meet)
    total, moment = 0.0, np.zeros(2)
    for s in range(0, len(ia), chunk):
        i, j = ia[s:s + chunk], ib[s:s + chunk]
        poly, valid = pb[j], np.ones((len(j), 3), dtype=bool)
        for e in range(3):
            poly, valid = _clip_batch(poly, valid, pa[i, e], pa[i, (e + 1) % 3])
        area, first = _areas_moments(poly, valid)
        total += float(area.sum())
        moment += first.sum(axis=0)
    return total, (moment / total if total > 0 else np.zeros(2))


def _planar_contact(a: Surface, b: Surface, tol: MatingTolerances) -> Contact | None:
    """Opposite, touching planar faces with overlapping areas, or None."""
    if np.linalg.norm(a.direction + b.direction) > tol.angle_tol:
        return None
    n = a.direction
    if len(a.triangles) == 0 or len(b.triangles) == 0:
        return None
    centroid_b = b.triangles.reshape(-1, 3).mean(axis=0)
    if abs(np.dot(centroid_b - a.point, n)) > (tol.contact_tol if tol.planar_gap is None else tol.planar_gap):
        return None
    basis = _plane_basis(n)
    area, c2 = overlap_area(a.triangles, b.triangles, basis)
    if not area > 0.0:
        return None
    small = min(_triangles_area(a.triangles), _triangles_area(b.triangles))
    if area <= 10.0 * tol.contact_tol * np.sqrt(small):
        return None
    origin = a.point - np.dot(a.point, basis[0]) * basis[0] - np.dot(a.point, basis[1]) * basis[1]
    point = origin + c2 @ basis
    distance = float(abs(np.dot(centroid_b - a.point, n)))
    return Contact("planar", a.part, b.part, (a.face, b.face), (0.0, 0.0), distance, point, n.copy(), area,
                   surface="plane")


def _triangles_area(tris: np.ndarray) -> float:
    return float(0.5 * np.linalg.norm(np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]), axis=1).sum())


def face_contact(a: Surface, b: Surface, tol: MatingTolerances) -> Contact | None:
    """The contact between faces ``a`` and ``b`` of two parts under the rules, or None."""
    if a.kind != b.kind or a.kind not in ("plane", "cylinder", "sphere"):
        return None
    if a.kind == "plane":
        return _planar_contact(a, b, tol)
    if a.convex == b.convex:
        return None
    shaft, hole = (a, b) if a.convex else (b, a)
    return _cylinder_fit(shaft, hole, tol) if a.kind == "cylinder" else _sphere_fit(shaft, hole, tol)


def _merged(contacts: list[Contact], tol: MatingTolerances) -> list[Contact]:
    """One contact per fit: the faces of a split cylinder or sphere give the same fit several times."""
    out: list[Contact] = []
    for c in contacts:
        if c.kind != "planar" and any(
                o.kind == c.kind and o.part_a == c.part_a and np.allclose(o.radii, c.radii, atol=tol.contact_tol)
                and np.linalg.norm(np.cross(o.axis, c.axis)) <= tol.angle_tol
                and np.linalg.norm(np.cross(o.point - c.point, o.axis)) <= tol.contact_tol for o in out):
            continue
        out.append(c)
    return out


def _boxes(surfs: list[Surface]) -> np.ndarray:
    """(n, 2, 3) face bounding boxes (infinite where unknown)."""
    inf = np.array([[-np.inf] * 3, [np.inf] * 3])
    return np.array([s.box if s.box is not None else inf for s in surfs]).reshape(len(surfs), 2, 3)


def _may_touch(surfs_a: list[Surface], surfs_b: list[Surface], tol: MatingTolerances) -> np.ndarray:
    """(n, m) the face pairs :func:`face_contact` can accept: same kind; planes facing each other
    (opposite normals within ``angle_tol``); a convex and a concave cylinder or sphere.  The same tests
    as :func:`face_contact`'s first ones, for all pairs at once."""
    kinds = {"plane": 0, "cylinder": 1, "sphere": 2}
    ka = np.array([kinds.get(s.kind, 3) for s in surfs_a])
    kb = np.array([kinds.get(s.kind, 3) for s in surfs_b])
    da = np.array([s.direction for s in surfs_a], dtype=float).reshape(-1, 3)
    db = np.array([s.direction for s in surfs_b], dtype=float).reshape(-1, 3)
    ca = np.array([bool(s.convex) for s in surfs_a])
    cb = np.array([bool(s.convex) for s in surfs_b])
    facing = np.linalg.norm(da[:, None, :] + db[None, :, :], axis=2) <= tol.angle_tol
    same = (ka[:, None] == kb[None, :]) & (ka < 3)[:, None]
    plane = (ka == 0)[:, None]
    return same & np.where(plane, facing, ca[:, None] != cb[None, :])


def pair_contacts(surfs_a: list[Surface], surfs_b: list[Surface], tol: MatingTolerances) -> list[Contact]:
    """All contacts between two parts' faces (fits of split faces merged).

    Only faces whose bounding boxes, grown by max_clearance + contact_tol, meet are compared.
    """
    if not surfs_a or not surfs_b:
        return []
    margin = tol.max_clearance + tol.contact_tol
    ba, bb = _boxes(surfs_a), _boxes(surfs_b)
    meet = np.all((ba[:, None, 0] - margin <= bb[None, :, 1]) & (ba[:, None, 1] + margin >= bb[None, :, 0]), axis=2)
    meet &= _may_touch(surfs_a, surfs_b, tol)
    found = []
    for i, j in zip(*np.nonzero(meet)):
        c = face_contact(surfs_a[i], surfs_b[j], tol)
        if c is not None:
            found.append(c)
    return _merged(found, tol)
