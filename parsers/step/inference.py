"""Joints of a CAD assembly: rigid groups of parts (the real bodies), then the joints between them.

Seed 004 (Diaz-Calderon, Paredis, Khosla) starts from the mating relations of a CAD assembly; this
module finds them and applies the rules of how machines are built (docs/assembly-format.md,
"STEP assemblies", "Inference rules"):

1. **Contacts** between every pair of parts whose boxes meet (:mod:`.mating`); a zero-clearance
   cylindrical fit between two parts that are both wider than :data:`PIN_SIZE_RADII` fit radii
   is a journal (a bearing), not a press fit (:func:`_journals`).
2. **Rigid groups** (:class:`.groups.RigidGroups`), each union with its evidence: the declared
   ``rigid`` groups; the two sides of every declared joint (``between``), then kept apart; the rings
   of every rolling bearing (:func:`.rules.bearing_units` by name, :func:`.rules.bearing_by_geometry`
   by its balls and raceways; rolling elements with the outer ring), kept apart; the case and output sides of every servo (:func:`.rules.servo_units`), kept apart, and a part riding on a
   horn-less servo's output face (:func:`_horn_faces`); what every fastener touches
   (:func:`.rules.fastener_by_name`, :func:`.rules.fastener_by_geometry`); then, until nothing
   changes, every two groups whose pooled contacts leave no freedom (press fits, planar contacts
   in one plane when ``planar_contacts: fixed``), clamp (:func:`clamped`), or hold a servo case by
   planar contacts only (:func:`_weld_fixed`).
3. **Joints**: one fixed joint per touching pair of parts of a group (and one from the group's first
   part to a part touching none of the others), its note saying why (``rigid group ...``); one joint
   per declared joint, between its first parts, axis and origin from the groups' pooled cylindrical,
   spherical or planar contacts unless given; one revolute per bearing about its rings' common
   axis (:func:`_bearing_link`); one actuated revolute per servo about its output axis
   (the widest fit between its case and output); one joint per other touching pair of parts in two
   groups that no declaration or servo holds (:mod:`.freedom`; seed 004's Table 1 keeps its
   per-pair joints and its redundant ones).  Each joint's note carries a confidence
   (:data:`CONFIDENCE_BY_FREEDOMS`) and its evidence; those under :data:`REVIEW_BELOW` are logged for review.
4. A group that touches no other group and has no joint is an error naming its first part.

Joints are oriented away from ground (the reference is the part closer to a ground part in the
graph of joined pairs; ties: the part earlier in the file).  Lengths: mm in, metres out.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.tolerances import DECLARED_GEOMETRY_ATOL

from ..assembly import GROUND, Joint, Source
from ..errors import InputError
from . import rules
from .freedom import canonical_axis, coplanar, pair_freedom
from .groups import RigidGroups
from .mating import Contact, MatingTolerances, Surface, pair_contacts

log = logging.getLogger(__name__)

#: confidence of an inferred joint by type (fixed: welded by its contacts); declared joints have 1
#: confidence of an inferred joint by its number of freedoms (JOINTS[type].nv): the more a joint
#: lets move, the likelier it is a fit whose fasteners the file does not model; declared joints have 1
CONFIDENCE_BY_FREEDOMS = (0.9, 0.8, 0.5, 0.4)
#: confidence of a servo's joint whose axis is a fit between its case and output sides, and from a plane
SERVO_CONFIDENCE = (0.9, 0.6)
#: joints whose confidence is under this are listed for review
REVIEW_BELOW = 0.6
#: the note of the fixed joints that weld a rigid group starts with this
RIGID_NOTE = "rigid group"


@dataclass(frozen=True, eq=False)
class Declared:
    """A declared joint between two sets of parts (the wrapper's ``between``), lengths in mm.

    a, b : part names of each side (their groups are joined).  axis : unit (3,) or None (from the
    contacts); origin : (3,) mm or None.  error : makes an InputError pointing at the declaration.
    """

    type: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    name: str | None = None
    axis: np.ndarray | None = None
    origin: np.ndarray | None = None
    actuated: bool = False
    error: Callable[[str], InputError] | None = None


@dataclass(frozen=True)
class Inference:
    """joints : every joint (SI); contacts : every contact found (mm); group_of : part -> group
    representative; review : (joint name, confidence, evidence) of the low-confidence joints."""

    joints: tuple[Joint, ...]
    contacts: tuple[Contact, ...]
    group_of: dict = field(default_factory=dict)
    review: tuple = ()


def candidate_pairs(names: list[str], boxes: dict[str, np.ndarray], margin: float) -> list[tuple[int, int]]:
    """Index pairs (i < j) whose bounding boxes, grown by ``margin``, overlap."""
    lo = np.array([boxes[n][0] for n in names]) - margin
    hi = np.array([boxes[n][1] for n in names]) + margin
    hit = np.all((lo[:, None, :] <= hi[None, :, :]) & (hi[:, None, :] >= lo[None, :, :]), axis=2)
    i, j = np.nonzero(np.triu(hit, 1))
    return list(zip(i.tolist(), j.tolist()))


def _depths(nodes: list[str], edges, grounds: list[str]) -> dict[str, int]:
    adjacent: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        adjacent[a].append(b)
        adjacent[b].append(a)
    depth = {g: 0 for g in grounds}
    queue = deque(grounds)
    while queue:
        n = queue.popleft()
        for m in adjacent[n]:
            if m not in depth:
                depth[m] = depth[n] + 1
                queue.append(m)
    return depth


def _note(contacts: list[Contact], how: str, confidence: float) -> str:
    what = "; ".join(c.scaled(1e-3).describe() for c in contacts[:6])
    more = f"; and {len(contacts) - 6} more" if len(contacts) > 6 else ""
    tail = f" from {len(contacts)} contact(s): {what}{more} (lengths in m)" if contacts else ""
    return f"confidence {confidence:.2f}: {how}{tail}"


def _pooled(rg: RigidGroups, contacts: dict) -> dict[tuple[str, str], list[Contact]]:
    """Contacts pooled by pair of groups (representatives in file order)."""
    pool: dict[tuple[str, str], list[Contact]] = {}
    for (a, b), found in contacts.items():
        ga, gb = rg.find(a), rg.find(b)
        if ga != gb:
            key = (ga, gb) if rg.order[ga] < rg.order[gb] else (gb, ga)
            if key[0] != ga:      # planar normals outward of the first group of the key
                found = [replace(c, part_a=c.part_b, part_b=c.part_a, axis=-c.axis) if c.kind == "planar" else c
                         for c in found]
            pool.setdefault(key, []).extend(found)
    return pool


CLAMPED = "clamping: planar contacts on opposite faces only (a part held in a bracket or between plates)"


def clamped(found: list[Contact], angle_tol: float) -> bool:
    """True when every contact is planar, all normals are parallel, and both senses occur.

    Such a pair (a servo in a U-bracket, a plate between two plates) is held by fasteners that the
    file often models as open shells or not at all; a planar joint between parallel faces on both
    sides is rare in machines, so the rule welds it (evidence :data:`CLAMPED`).
    """
    if not found or any(c.kind != "planar" for c in found):
        return False
    n = found[0].axis
    if any(np.linalg.norm(np.cross(c.axis, n)) > angle_tol for c in found):
        return False
    signs = {bool(np.dot(c.axis, n) > 0) for c in found}
    return len(signs) == 2


def _kept_apart(rg: RigidGroups) -> set[frozenset]:
    return {frozenset((rg.find(x), rg.find(y))) for x, y in rg.apart}


SERVO_HELD = ("a servo case held by planar contacts only: servos are screwed to their brackets "
              "(the screws are not solids here), they do not slide in them")


def _weld_fixed(rg: RigidGroups, pool, tol: MatingTolerances, planar_contacts: str,
                servo_cases: frozenset = frozenset()) -> None:
    """Join every pair of groups whose pooled contacts leave no freedom, until nothing changes.

    Also welded: groups that touch in planar contacts only when one of them holds a servo's case
    (``servo_cases``: part names), evidence :data:`SERVO_HELD`.
    """
    changed = True
    while changed:
        changed = False
        apart = _kept_apart(rg)
        for (ga, gb), found in pool(rg).items():
            if frozenset((ga, gb)) in apart or rg.find(ga) == rg.find(gb):
                continue
            if coplanar(found, tol.angle_tol, tol.contact_tol):
                why = "planar contacts in one plane" if planar_contacts == "fixed" else None
            elif clamped(found, tol.angle_tol):
                why = CLAMPED
            elif all(c.kind == "planar" for c in found) and any(
                    rg.find(p) in (rg.find(ga), rg.find(gb)) for p in servo_cases):
                why = SERVO_HELD
            else:
                f = pair_freedom(found, tol.angle_tol, tol.contact_tol)
                why = None if f.type != "fixed" else (
                    "a press fit" if any(c.kind == "press fit" for c in found) else "contacts that leave no freedom")
            if why and rg.join(ga, gb, f"welded to {ga} by {why}"):
                changed = True
                apart = _kept_apart(rg)


def _declare_groups(file: str, rg: RigidGroups, names: list[str], rigid, between: list[Declared],
                    declared: list[Joint]) -> None:
    """Rigid groups and declared sides into ``rg`` (step 2's declared part)."""
    for parts, evidence in rigid:
        for p in parts[1:]:
            if not rg.join(parts[0], p, evidence):
                raise InputError(f"rigid group {list(parts)} joins parts a declared joint keeps apart", file=file)
    for d in between:
        for side in (d.a, d.b):
            for p in side[1:]:
                rg.join(side[0], p, f"one side of the declared joint {d.name or ''}".rstrip())
        if rg.find(d.a[0]) == rg.find(d.b[0]):
            raise (d.error or (lambda m: InputError(m, file=file)))(
                f"both sides of the joint are in one rigid group ({rg.find(d.a[0])})")
        rg.keep_apart(d.a[0], d.b[0])
    for j in declared:
        for part in (j.reference, j.secondary):
            if part not in names and part != GROUND:
                raise InputError(f"joint {j.name}: no part {part!r}", file=file)
        if GROUND not in (j.reference, j.secondary):
            rg.keep_apart(j.reference, j.secondary)


def _servo_groups(rg: RigidGroups, units: list[rules.ServoUnit]) -> list[rules.ServoUnit]:
    """Join each servo's case and output sides and keep them apart; the units that hold (step 2)."""
    kept = []
    apart = _kept_apart(rg)
    for u in units:
        if frozenset((rg.find(u.case[0]), rg.find(u.output[0]))) in apart:
            continue                      # a declared joint already says how these move
        ok = all(rg.join(u.case[0], p, f"the case of servo {u.model} ({u.node[-1]})") for p in u.case[1:])
        ok &= all(rg.join(u.output[0], p, f"the output of servo {u.model} ({u.node[-1]})") for p in u.output[1:])
        if not ok or rg.find(u.case[0]) == rg.find(u.output[0]):
            log.info("servo %s: its case and output are already one rigid group; no servo joint", u.node[-1])
            continue
        rg.keep_apart(u.case[0], u.output[0])
        kept.append(u)
    return kept


def _bearing_groups(rg: RigidGroups, units: list[rules.BearingUnit]) -> list[rules.BearingUnit]:
    """Join each bearing's outer ring with its rolling elements, its inner ring parts, and keep the
    rings apart; the units that hold (step 2)."""
    kept = []
    apart = _kept_apart(rg)
    for u in units:
        if frozenset((rg.find(u.outer[0]), rg.find(u.inner[0]))) in apart:
            continue                      # a declared joint already says how these move
        where = u.label + (f" ({u.evidence})" if u.evidence else "")
        ok = all(rg.join(u.outer[0], p, f"the outer ring of bearing {where}") for p in u.outer[1:])
        ok &= all(rg.join(u.outer[0], p, f"a rolling element of bearing {where}: it rides with the outer ring "
                                         "(lumped; a rigid model has no rolling)") for p in u.rolling)
        ok &= all(rg.join(u.inner[0], p, f"the inner ring of bearing {where}") for p in u.inner[1:])
        if not ok or rg.find(u.outer[0]) == rg.find(u.inner[0]):
            log.info("bearing %s: its rings are already one rigid group; no bearing joint", u.label)
            continue
        rg.keep_apart(u.outer[0], u.inner[0])
        kept.append(u)
    return kept


def _bearing_link(u: rules.BearingUnit, surfaces: dict, boxes: dict, tol: MatingTolerances) -> _Link | None:
    """The revolute joint of a rolling bearing about the common axis of its rings, or None.

    A bearing found by geometry turns about the axis of its ball circle, origin at its centre.  Else
    the axis is the widest cylinder of the outer ring that a cylinder of the inner ring shares
    (parallel within ``angle_tol``, coincident within ``contact_tol``); the origin is the rings'
    centre projected on it.
    """
    confidence = _confidence("revolute")
    if u.axis is not None:
        note = (f"confidence {confidence:.2f}: {u.evidence}: the inner ring turns in the outer ring about "
                "that axis")
        return _Link(u.outer[0], u.inner[0], "revolute", canonical_axis(u.axis), u.centre, note, confidence)
    outer = [f for p in u.outer for f in surfaces.get(p, []) if f.kind == "cylinder"]
    inner = [f for p in u.inner for f in surfaces.get(p, []) if f.kind == "cylinder"]
    shared = [o for o in outer if any(np.linalg.norm(np.cross(o.direction, i.direction)) <= tol.angle_tol
                                      and np.linalg.norm(np.cross(i.point - o.point, o.direction)) <= tol.contact_tol
                                      for i in inner)]
    if not shared:
        log.warning("bearing %s: its rings share no cylinder axis; its joint is left to the contacts", u.label)
        return None
    widest = max(shared, key=lambda f: f.radius)
    axis = canonical_axis(widest.direction)
    centre = np.mean([0.5 * (boxes[p][0] + boxes[p][1]) for p in (u.outer[0], u.inner[0])], axis=0)
    origin = widest.point + np.dot(centre - widest.point, axis) * axis
    note = (f"confidence {confidence:.2f}: rolling bearing {u.label}: the inner ring turns in the outer "
            f"ring about their common axis (cylinders of radius {widest.radius:.6g} mm and coaxial ones)")
    return _Link(u.outer[0], u.inner[0], "revolute", axis, origin, note, confidence, _unit_name(u.node))


def _output_axis(u: rules.ServoUnit, contacts: dict, tol: MatingTolerances) -> Contact | None:
    """The widest cylindrical fit between a servo's case and output parts (its output axis), or None."""
    case, out = set(u.case), set(u.output)
    fits = [c for (a, b), found in contacts.items() if (a in case and b in out) or (a in out and b in case)
            for c in found if c.kind in ("press fit", "bearing")]
    return max(fits, key=lambda c: c.radii[1]) if fits else None


def _horn_faces(rg: RigidGroups, units: list[rules.ServoUnit], contacts: dict, tol: MatingTolerances) -> None:
    """A part outside a servo that touches its case with a face centred on the output axis rides on the horn.

    Only for servos whose output side has no horn part.  Servo models often make the horn one solid
    with the case (Robotis' XL430 'DUMMY'; the output side is the idler): the bracket
    screwed to the horn then touches the case in a planar face normal to the output axis whose
    centre lies within half the output fit's radius of the axis.  That part joins the output side.
    """
    for u in units:
        fit = _output_axis(u, contacts, tol)
        if fit is None or any(rules.HORN_WORD.search(p) for p in u.output_paths):
            continue                 # no axis, or the horn is a part of its own: what touches it rides on it
        unit, case = set(u.case) | set(u.output), set(u.case)
        for (a, b), found in contacts.items():
            if (a in case) == (b in case) or a in unit and b in unit:
                continue
            other = b if a in case else a
            for c in found:
                off = c.point - fit.point
                radial = np.linalg.norm(off - np.dot(off, fit.axis) * fit.axis)
                if (c.kind == "planar" and np.linalg.norm(np.cross(c.axis, fit.axis)) <= tol.angle_tol
                        and radial <= 0.5 * fit.radii[1]):
                    rg.join(u.output[0], other, f"a face centred on the output axis of servo {u.model} "
                                                f"({u.node[-1]}): it rides on the horn")
                    break


def _end_cap(surfs: list[Surface], face: Surface, tol: MatingTolerances) -> Surface | None:
    """The widest convex cylinder of a part of which the planar ``face`` is an end cap (normal along its
    axis and facing away from it, every vertex within its radius of the axis, no farther than its radius
    from its nearer end), or None."""
    if face.kind != "plane" or not len(face.triangles):
        return None
    verts = face.triangles.reshape(-1, 3)
    caps = []
    for c in surfs:
        if c.kind != "cylinder" or not c.convex or np.linalg.norm(np.cross(c.direction, face.direction)) > tol.angle_tol:
            continue
        off = verts - c.point
        along = off @ c.direction
        if np.linalg.norm(off - along[:, None] * c.direction, axis=1).max() > c.radius + tol.contact_tol:
            continue
        h, (lo, hi) = float(np.mean(along)), sorted(c.extent)
        outward = (h - 0.5 * (lo + hi)) * float(face.direction @ c.direction) > 0
        if outward and min(abs(h - lo), abs(h - hi)) <= c.radius:
            caps.append(c)
    return max(caps, key=lambda c: c.radius) if caps else None


def _output_contacts(servo: str, found: list[Contact], surfs: list[Surface], tol: MatingTolerances):
    """(axis (3,), point (3,) mm, radius mm) of a one-part servo's output when another part touches it
    there only, else None.

    The axis is that of the part's fits with the servo, else of the widest convex cylinder of the servo
    one of its planar contacts is an end cap of (the horn's face, or the idler boss').  Every contact must
    be on it: fits coaxial with it, planar contacts normal to it, their centre within the radius of the
    servo's widest convex cylinder on it (the horn) of the axis.
    """
    by_face = {f.face: f for f in surfs}
    fits = [c for c in found if c.kind in ("press fit", "bearing")]
    if fits:
        axis, point = fits[0].axis, fits[0].point
    else:
        caps = [_end_cap(surfs, by_face[c.faces[0] if c.part_a == servo else c.faces[1]], tol) for c in found
                if c.kind == "planar" and (c.faces[0] if c.part_a == servo else c.faces[1]) in by_face]
        caps = [c for c in caps if c is not None]
        if not caps:
            return None
        widest = max(caps, key=lambda c: c.radius)
        axis, point = widest.direction, widest.point
    radius = _widest_coaxial(surfs, axis, point, tol) or max(max(c.radii) for c in fits)
    for c in found:
        off = c.point - point
        radial = np.linalg.norm(off - np.dot(off, axis) * axis)
        if np.linalg.norm(np.cross(c.axis, axis)) > tol.angle_tol or c.kind == "ball" or (
                radial > (tol.contact_tol if c.kind != "planar" else radius)):
            return None
    return canonical_axis(axis), point, radius


def _widest_coaxial(surfs: list[Surface], axis: np.ndarray, point: np.ndarray, tol: MatingTolerances) -> float:
    """The radius (mm) of a part's widest convex cylinder on the line (axis, point), 0 without one."""
    return max([c.radius for c in surfs if c.kind == "cylinder" and c.convex
                and np.linalg.norm(np.cross(c.direction, axis)) <= tol.angle_tol
                and np.linalg.norm(np.cross(c.point - point, axis)) <= tol.contact_tol], default=0.0)


def _leaf_servo_links(rg: RigidGroups, servos, surfaces: dict, contacts: dict, tol: MatingTolerances) -> list:
    """(servo part, link) of each one-part servo (:func:`.rules.leaf_servos`): the parts that touch it
    only on its output (:func:`_output_contacts`) ride on the horn, about the axis of its widest convex
    cylinder among theirs; they are joined and kept apart from the servo, which is its case (step 2)."""
    out = []
    for servo, model, encoder in servos:
        riders: dict[str, tuple] = {}
        for (a, b), found in contacts.items():
            if servo in (a, b):
                other = b if a == servo else a
                axis = _output_contacts(servo, found, surfaces[servo], tol)
                if axis is not None and rg.find(other) != rg.find(servo):
                    riders[other] = axis
        if not riders:
            log.info("one-part servo %s: nothing rides on its output; its joint is left to the contacts", servo)
            continue
        horn = max(riders.values(), key=lambda r: _widest_coaxial(surfaces[servo], r[0], r[1], tol))
        on_horn = [p for p, r in riders.items() if np.linalg.norm(np.cross(r[0], horn[0])) <= tol.angle_tol
                   and np.linalg.norm(np.cross(r[1] - horn[1], horn[0])) <= tol.contact_tol]
        radius = _widest_coaxial(surfaces[servo], horn[0], horn[1], tol)
        evidence = (f"servo {model} ({servo}, one part: case and horn) turns about its output axis, the "
                    f"axis of its convex cylinder of radius {radius:.6g} mm that {', '.join(on_horn)} touch only on")
        if not all(rg.join(on_horn[0], p, f"rides on the output of servo {servo}") for p in on_horn[1:]) \
                or rg.find(on_horn[0]) == rg.find(servo):
            log.info("one-part servo %s: its case and output are already one rigid group; no servo joint", servo)
            continue
        rg.keep_apart(servo, on_horn[0])
        what = f"; {encoder}" if encoder else ""
        note = f"confidence {SERVO_CONFIDENCE[0]:.2f}: {evidence}{what}"
        out.append((servo, _Link(servo, on_horn[0], "revolute", horn[0], horn[1], note, SERVO_CONFIDENCE[0],
                                 servo, encoder is None)))
    return out


#: a part is a pin or bushing of a fit when its size across the fit's axis is at most this many radii
PIN_SIZE_RADII = 6.0
JOURNAL = ("a zero-clearance fit between two parts neither of which is a pin or bushing (each is wider "
           "than 6 radii across the axis): a journal modelled at its nominal size, not a press fit")
#: confidence of a joint that turns on such a journal
JOURNAL_CONFIDENCE = 0.5


def _across(box: np.ndarray, axis: np.ndarray) -> float:
    """The larger size (mm) of an axis-aligned box across ``axis`` (its extent along the two normals)."""
    size = box[1] - box[0]
    return max(float(np.abs(e) @ size) for e in _normals(axis))


def _normals(axis: np.ndarray) -> np.ndarray:
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
    e1 = np.cross(axis, helper)
    e1 /= np.linalg.norm(e1)
    return np.array([e1, np.cross(axis, e1)])


def _journals(contacts: dict, boxes: dict) -> set[frozenset]:
    """Turn each zero-clearance cylindrical fit between two parts that are both wider than
    :data:`PIN_SIZE_RADII` radii across its axis into a bearing (in place); the pairs changed.

    A pin or bushing is pressed; a shaft that is one solid with a large body, in the bore of
    another large body, is a journal that CAD models at its nominal size (Chrono's pendulum).
    """
    changed = set()
    for (a, b), found in contacts.items():
        for k, c in enumerate(found):
            if c.kind == "press fit" and c.surface == "cylinder" and all(
                    _across(boxes[p], c.axis) > PIN_SIZE_RADII * c.radii[0] for p in (a, b)):
                found[k] = replace(c, kind="bearing")
                changed.add(frozenset((a, b)))
    return changed


def _fasteners(rg: RigidGroups, names: list[str], paths: dict, contacts: dict, tol: MatingTolerances) -> None:
    """Each fastener makes rigid what it touches (step 2)."""
    touching: dict[str, list[tuple[str, Contact]]] = {n: [] for n in names}
    pairs = frozenset(frozenset(p) for p in contacts)
    for (a, b), found in contacts.items():
        for c in found:
            touching[a].append((b, c))
            touching[b].append((a, c))
    for n in names:
        evidence = rules.fastener_by_name(n, paths.get(n, ())) or rules.fastener_by_geometry(
            n, [c for _, c in touching[n]], pairs, tol)
        if evidence is None:
            continue
        for other in dict.fromkeys(o for o, _ in touching[n]):
            if not rg.join(n, other, f"clamped by {n}: {evidence}"):
                log.info("fastener %s touches %s across a declared or servo joint: not welded", n, other)


def _confidence(jtype: str) -> float:
    """The confidence of an inferred joint of type ``jtype`` (:data:`CONFIDENCE_BY_FREEDOMS`)."""
    return CONFIDENCE_BY_FREEDOMS[min(JOINTS[jtype].nv, len(CONFIDENCE_BY_FREEDOMS) - 1)]


def _contact_geometry(kind: str, found: list[Contact], tol: MatingTolerances):
    """(axis, origin mm, how) of a ``kind`` joint from pooled contacts, or a message saying what is missing.

    The joint table says which contact gives what: a cylindrical fit the axis of a joint with one
    axis and at most two freedoms (revolute, continuous, prismatic, cylindrical); a spherical fit
    the centre of a three-rotation joint; planar contacts in one plane the normal of a joint that
    rotates about its axis (revolute, continuous, planar); any contact the point of a fixed joint.
    """
    facts = JOINTS[kind]
    fits = [c for c in found if c.kind in ("press fit", "bearing")]
    balls = [c for c in found if c.kind == "ball"]
    planes = [c for c in found if c.kind == "planar"]
    if not facts.has_axis and facts.nv == 3 and balls:
        return None, balls[0].point, "the centre of a spherical fit"
    if facts.has_axis and not facts.has_axis2 and facts.nv <= 2 and fits:
        axes = [c for c in fits if np.linalg.norm(np.cross(c.axis, fits[0].axis)) <= tol.angle_tol
                and np.linalg.norm(np.cross(c.point - fits[0].point, fits[0].axis)) <= tol.contact_tol]
        if len(axes) != len(fits):
            return (f"their cylindrical fits have {len(fits) - len(axes) + 1} different axes: "
                    "give 'axis' and 'origin'")
        return canonical_axis(fits[0].axis), np.mean([c.point for c in fits], axis=0), "the axis of their cylindrical fit"
    if facts.has_axis and (facts.moves_as == "revolute" or facts.nv == 3) and planes \
            and coplanar(planes, tol.angle_tol, tol.contact_tol):
        return canonical_axis(planes[0].axis), np.mean([c.point for c in planes], axis=0), "the normal of their planar contact"
    if facts.nv == 0 and found:
        return None, np.mean([c.point for c in found], axis=0), "their contacts"
    kinds = ", ".join(sorted({c.kind for c in found})) or "none"
    return f"their contacts ({kinds}) give no {kind} axis: give 'axis' and 'origin'"


@dataclass
class _Link:
    """A joint between two parts before it is oriented: geometry in mm, its note and confidence."""

    a: str
    b: str
    type: str
    axis: np.ndarray | None
    origin: np.ndarray
    note: str
    confidence: float
    name: str | None = None
    actuated: bool = False


def _between(pool: dict, ga: str, gb: str) -> list[Contact]:
    return pool.get((ga, gb)) or pool.get((gb, ga)) or []


def _declared_link(file: str, rg: RigidGroups, pool, d: Declared, tol: MatingTolerances) -> _Link:
    """The link of a declared joint (between its first part on each side): its geometry as given,
    else from the pooled contacts of its two groups."""
    error = d.error or (lambda m: InputError(m, file=file))
    ga, gb = rg.find(d.a[0]), rg.find(d.b[0])
    found = _between(pool, ga, gb)
    needs_axis = JOINTS[d.type].has_axis
    axis, origin, how = d.axis, d.origin, "declared"
    if (needs_axis and axis is None) or origin is None:
        if not found:
            raise error(f"the groups of {d.a[0]} and {d.b[0]} do not touch: give 'axis' and 'origin' of the "
                        "joint, or declare it between parts that touch")
        geometry = _contact_geometry(d.type, found, tol)
        if isinstance(geometry, str):
            raise error(f"{d.type} joint between {d.a[0]} and {d.b[0]}: {geometry}")
        axis = axis if axis is not None else geometry[0]
        origin = origin if origin is not None else geometry[1]
        how = f"declared; {'axis and ' if d.axis is None and needs_axis else ''}origin from {geometry[2]}"
    return _Link(d.a[0], d.b[0], d.type, axis, np.asarray(origin, dtype=float),
                 _note(found if how != "declared" else [], how, 1.0), 1.0, d.name, d.actuated)


def _servo_link(rg: RigidGroups, pool, u: rules.ServoUnit, tol: MatingTolerances) -> _Link | None:
    """The revolute joint of a servo about its output axis (actuated unless the servo is an encoder,
    :data:`rules.ENCODER_WORDS`), or None (logged) without one.

    Between the two parts of its widest fit across the case and output groups (else the first
    part of each side).
    """
    ga, gb = rg.find(u.case[0]), rg.find(u.output[0])
    found = _between(pool, ga, gb)
    geometry = _contact_geometry("revolute", found, tol) if found else "its case and output do not touch"
    if isinstance(geometry, str):
        log.warning("servo %s (%s): no output axis (%s); its joint is left to the contacts", u.node[-1], u.model,
                    geometry)
        return None
    axis, origin, how = geometry
    fits = [c for c in found if c.kind in ("press fit", "bearing")]
    a, b = (u.case[0], u.output[0])
    if fits:
        widest = max(fits, key=lambda c: c.radii[1])
        a, b = (widest.part_a, widest.part_b) if rg.find(widest.part_a) == ga else (widest.part_b, widest.part_a)
    confidence = SERVO_CONFIDENCE[0] if fits else SERVO_CONFIDENCE[1]
    what = f"; {u.encoder}" if u.encoder else ""
    note = _note(found, f"servo {u.model} ({'/'.join(u.node)}) turns about its output axis, {how}{what}", confidence)
    return _Link(a, b, "revolute", axis, origin, note, confidence, _unit_name(u.node), u.encoder is None)


def _unit_name(node: tuple[str, ...]) -> str:
    """A servo's or bearing's joint name: its assembly path below the top assembly (unique in the file)."""
    return "/".join(node[1:]) or node[-1]


def _inferred_link(file: str, a: str, b: str, found: list[Contact], tol: MatingTolerances,
                   planar_contacts: str) -> _Link:
    """The joint the contacts of two parts of different groups leave; InputError if it is no joint type.

    Planar contacts in one plane are a planar joint here: whether they weld is decided for the
    groups' pooled contacts (:func:`_weld_fixed`), and did not.
    """
    f = pair_freedom(found, tol.angle_tol, tol.contact_tol)
    if f.type is None:
        kinds = ", ".join(sorted({c.kind for c in found}))
        raise InputError(f"parts {a} and {b}: their contacts ({kinds}) leave a {f.dim}-dimensional freedom "
                         f"that is no joint type; declare the joint between them (joints: [{{between: [{a}, {b}], "
                         f"type: ...}}]) or make them one body (rigid: [[{a}, {b}]])", file=file)
    confidence = _confidence(f.type)
    return _Link(a, b, f.type, f.axis, f.origin, _note(found, f"{f.type} inferred", confidence), confidence)


def _links(file: str, rg: RigidGroups, contacts: dict, between: list[Declared], units, tol: MatingTolerances,
           planar_contacts: str, journals: frozenset = frozenset(), bearings=()) -> list[_Link]:
    """Declared links, then bearing and servo links (one per pair of groups; ``bearings`` holds
    (unit, link or None)), then one inferred link per touching pair of parts in two groups that
    no declaration, bearing or servo holds."""
    pool = _pooled(rg, contacts)
    links = [_declared_link(file, rg, pool, d, tol) for d in between]
    done = {frozenset((rg.find(k.a), rg.find(k.b))) for k in links}
    for _, link in bearings:
        if link is not None and frozenset((rg.find(link.a), rg.find(link.b))) not in done:
            links.append(link)
            done.add(frozenset((rg.find(link.a), rg.find(link.b))))
    for u in units:
        link = _servo_link(rg, pool, u, tol)
        pair = frozenset((rg.find(u.case[0]), rg.find(u.output[0])))
        if link is not None and pair not in done:
            links.append(link)
            done.add(pair)
    servo_pairs = {frozenset((rg.find(u.case[0]), rg.find(u.output[0]))) for u in units}
    held = done | (_kept_apart(rg) - servo_pairs)   # a servo without an axis is left to its contacts
    for (a, b), found in contacts.items():
        if rg.find(a) != rg.find(b) and frozenset((rg.find(a), rg.find(b))) not in held:
            link = _inferred_link(file, a, b, found, tol, planar_contacts)
            if frozenset((a, b)) in journals:
                link.confidence = min(link.confidence, JOURNAL_CONFIDENCE)
                link.note = f"confidence {link.confidence:.2f}: {JOURNAL}; " + link.note.split(": ", 1)[1]
            links.append(link)
    return links


def _welds(file: str, rg: RigidGroups, contacts: dict, boxes: dict) -> list[tuple[str, str, Joint]]:
    """The fixed joints that weld each group: one per touching pair of its parts, and one from its first
    part to each part that touches none of the others (a declared group); their note says why."""
    out = []
    linked = RigidGroups(list(rg.order))
    for (a, b), found in contacts.items():
        rep = rg.find(a)
        if rep != rg.find(b):
            continue
        why = rg.evidence.get(b) or rg.evidence.get(a) or "one body"
        origin = np.mean([c.point for c in found], axis=0) * 1e-3
        out.append((a, b, origin, f"{RIGID_NOTE} {rep}: {why}; {_note(found, 'welded', 1.0)}"))
        linked.join(a, b, "")
    for rep, parts in rg.groups().items():
        for p in parts[1:]:
            if linked.find(p) != linked.find(rep) and linked.join(rep, p, ""):
                centre = 0.5 * (boxes[p][0] + boxes[p][1]) * 1e-3
                out.append((rep, p, centre, f"{RIGID_NOTE} {rep}: {rg.evidence.get(p, 'declared')}"))
    return [(a, b, Joint(name="", type="fixed", reference=a, secondary=b, origin=origin,
                         source=Source(file=file, note=note))) for a, b, origin, note in out]


def _oriented(file: str, names: list[str], welds, links: list[_Link], declared: list[Joint],
              grounds: list[str]) -> list[Joint]:
    """Joints of welds and links, each with the part closer to ground (in the graph of joined parts)
    as reference (ties: the part earlier in the file), named ``reference-secondary`` unless named."""
    edges = [(a, b) for a, b, _ in welds] + [(k.a, k.b) for k in links]
    edges += [(j.reference, j.secondary) for j in declared if GROUND not in (j.reference, j.secondary)]
    depth = _depths(names, edges, grounds)
    order = {n: k for k, n in enumerate(names)}

    def ends(a, b):
        key_a, key_b = (depth.get(a, len(names)), order[a]), (depth.get(b, len(names)), order[b])
        return (a, b) if key_a <= key_b else (b, a)
    out = []
    for a, b, weld in welds:
        ref, sec = ends(a, b)
        out.append(replace(weld, name=f"{ref}-{sec}", reference=ref, secondary=sec))
    for k in links:
        ref, sec = ends(k.a, k.b)
        axis = np.array([0.0, 0.0, 1.0]) if k.axis is None else np.asarray(k.axis, dtype=float)
        out.append(Joint(name=k.name or f"{ref}-{sec}", type=k.type, reference=ref, secondary=sec,
                         origin=np.asarray(k.origin, dtype=float) * 1e-3, axis=axis, actuated=k.actuated,
                         source=Source(file=file, note=k.note)))
    return out


def _check_lonely(file: str, rg: RigidGroups, links: list[_Link], declared: list[Joint], grounds: list[str]) -> None:
    """InputError naming the first parts of the groups that touch no other group and have no joint."""
    held = {rg.find(g) for g in grounds} | {rg.find(x) for k in links for x in (k.a, k.b)}
    held |= {rg.find(p) for j in declared for p in (j.reference, j.secondary) if p != GROUND}
    lonely = [rep for rep in rg.groups() if rep not in held]
    if lonely:
        raise InputError(f"part {lonely[0]} touches no other part and has no declared joint"
                         + (f" (also: {', '.join(lonely[1:])})" if len(lonely) > 1 else "")
                         + "; declare a joint ('joints:'), weld it ('rigid:') or drop it ('ignore:')", file=file)


def _moved_contact(c: Contact, names: dict[str, str], r: np.ndarray, t: np.ndarray) -> Contact:
    """``c`` moved by the rigid motion (r (3, 3), t (3,) mm) with its parts renamed by ``names``; a
    spherical contact's axis stays +z (:class:`.mating.Contact`)."""
    axis = c.axis if c.surface == "sphere" else r @ c.axis
    return replace(c, part_a=names[c.part_a], part_b=names[c.part_b], point=r @ c.point + t, axis=axis)


def _all_contacts(names: list[str], surfaces: dict, boxes: dict, tol: MatingTolerances, connectors,
                  frames: dict, progress) -> dict[tuple[str, str], list[Contact]]:
    """(part, part) -> their contacts (:func:`.mating.pair_contacts`), for every pair whose boxes meet.

    Two parts whose products (``frames``' keys) were already paired in the same relative placement
    (rotation and translation of one in the other's product frame within DECLARED_GEOMETRY_ATOL) touch
    as that pair did: its contacts are moved by the rigid motion taking the earlier pair to this one
    instead of compared face by face again (servo cases, screws and brackets repeat in a robot arm).
    """
    contacts: dict[tuple[str, str], list[Contact]] = {}
    gap = replace(tol, planar_gap=tol.max_clearance)
    seen: dict[tuple, list] = {}
    for i, j in progress(candidate_pairs(names, boxes, tol.max_clearance + tol.contact_tol), "contacts"):
        a, b = names[i], names[j]
        pair_tol = gap if a in connectors or b in connectors else tol
        fa, fb = frames.get(a), frames.get(b)
        found, bucket = None, None
        if fa is not None and fb is not None:
            rel_r, rel_t = fa[1].T @ fb[1], fa[1].T @ (fb[2] - fa[2])
            bucket = seen.setdefault((fa[0], fb[0], pair_tol is gap), [])
            for r0, t0, (a0, b0), earlier in bucket:
                if np.allclose(r0, rel_r, atol=DECLARED_GEOMETRY_ATOL) and np.allclose(t0, rel_t, atol=DECLARED_GEOMETRY_ATOL):
                    r = fa[1] @ frames[a0][1].T
                    found = [_moved_contact(c, {a0: a, b0: b}, r, fa[2] - r @ frames[a0][2]) for c in earlier]
                    break
        if found is None:
            found = pair_contacts(surfaces[a], surfaces[b], pair_tol)
            if bucket is not None:
                bucket.append((rel_r, rel_t, (a, b), found))
        if found:
            contacts[(a, b)] = found
    return contacts


def infer_joints(file: str, names: list[str], surfaces: dict[str, list[Surface]], boxes: dict[str, np.ndarray],
                 tol: MatingTolerances, planar_contacts: str, grounds: list[str], declared: list[Joint],
                 progress=lambda items, what: items, *, between=(), rigid=(), paths=None,
                 connectors=frozenset(), products=None, frames=None) -> Inference:
    """Rigid groups and the joints between them (see the module docstring).

    declared : joints of the YAML joint syntax by part name (kept as given; their pair is not inferred).
    between : :class:`Declared` joints; rigid : ``(part names, evidence)`` groups; paths : part name ->
    its instance path (for the name rules).  connectors : parts kept for mating only (surface models):
    their planar contacts may have a gap up to ``max_clearance``; one that touches nothing is dropped
    (``group_of`` leaves it out).  products : part name -> its product's name (for the name rules).
    frames : part name -> (product key, rotation (3, 3), translation (3,) mm): the rigid motion placing
    the product's shape (a key any hashable that the instances of one product share), for
    :func:`_all_contacts` to reuse the contacts of a pair of products placed alike.
    """
    contacts = _all_contacts(names, surfaces, boxes, tol, connectors, frames or {}, progress)
    touched = {p for pair in contacts for p in pair}
    lonely = [n for n in names if n in connectors and n not in touched and n not in grounds]
    if lonely:
        log.info("%s: connector(s) touching no part dropped: %s", file, ", ".join(lonely))
        names = [n for n in names if n not in lonely]
    journals = frozenset(_journals(contacts, boxes))
    paths = paths or {}
    rg = RigidGroups(names)
    _declare_groups(file, rg, names, rigid, list(between), list(declared))
    named = [(n, tuple(paths.get(n, ()))) for n in names]
    by_name = rules.bearing_units(named)
    by_geometry = rules.bearing_by_geometry(surfaces, tol, frozenset(p for u in by_name for p in (
        *u.outer, *u.inner, *u.rolling)))
    bearings = [(u, _bearing_link(u, surfaces, boxes, tol)) for u in _bearing_groups(rg, by_name + by_geometry)]
    units = _servo_groups(rg, rules.servo_units(named))
    in_units = {p for u in units for p in (*u.case, *u.output)}
    leaf = [s for s in rules.leaf_servos(named, products) if s[0] not in in_units]
    bearings += _leaf_servo_links(rg, leaf, surfaces, contacts, tol)
    _horn_faces(rg, units, contacts, tol)
    _fasteners(rg, names, paths, contacts, tol)
    _weld_fixed(rg, lambda g: _pooled(g, contacts), tol, planar_contacts,
                frozenset(p for u in units for p in u.case) | {s[0] for s in leaf})
    links = _links(file, rg, contacts, list(between), units, tol, planar_contacts, journals, bearings)
    _check_lonely(file, rg, links, list(declared), grounds)
    welds = _welds(file, rg, contacts, boxes)
    oriented = _oriented(file, names, welds, links, list(declared), grounds)
    joints = oriented[:len(welds)] + list(declared) + oriented[len(welds):]
    review = tuple((j.name, k.confidence, k.note) for j, k in zip(oriented[len(welds):], links)
                   if k.confidence < REVIEW_BELOW)
    for name, confidence, note in review:
        log.info("%s: joint %s to review (%s)", file, name, note)
    if review:
        log.warning("%s: %d joint(s) of low confidence to review: %s (run with --verbose for their evidence; "
                    "'inspect --write-joints' writes them all)", file, len(review), ", ".join(r[0] for r in review))
    all_contacts = tuple(c for found in contacts.values() for c in found)
    return Inference(joints=tuple(joints), contacts=all_contacts, group_of={n: rg.find(n) for n in names},
                     review=review)
