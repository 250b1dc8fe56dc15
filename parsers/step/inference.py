"""Joints of a CAD assembly from its contacts (issue 11's rules; :mod:`.mating`, :mod:`.freedom`).

Precedence: (1) declared joints (by part name) replace whatever the contacts of
their pair say; (2) every other touching pair gets the joint its contacts leave;
(3) a part that touches nothing and has no declared joint is an error naming it.
Joints are oriented away from ground: the reference body is the part closer to
a ground part in the graph of touching pairs (ties: the earlier part of the tree).
Lengths: the surfaces are in mm; joints come out in metres.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..assembly import Joint, Source
from ..errors import InputError
from .freedom import coplanar, pair_freedom
from .mating import Contact, MatingTolerances, Surface, pair_contacts


@dataclass(frozen=True)
class Inference:
    """joints : declared and inferred joints (SI); contacts : every contact found (mm)."""

    joints: tuple[Joint, ...]
    contacts: tuple[Contact, ...]


def candidate_pairs(names: list[str], boxes: dict[str, np.ndarray], margin: float) -> list[tuple[int, int]]:
    """Index pairs (i < j) whose bounding boxes, grown by ``margin``, overlap."""
    lo = np.array([boxes[n][0] for n in names]) - margin
    hi = np.array([boxes[n][1] for n in names]) + margin
    hit = np.all((lo[:, None, :] <= hi[None, :, :]) & (hi[:, None, :] >= lo[None, :, :]), axis=2)
    i, j = np.nonzero(np.triu(hit, 1))
    return list(zip(i.tolist(), j.tolist()))


def _depths(names: list[str], edges: list[tuple[str, str]], grounds: list[str]) -> dict[str, int]:
    adjacent: dict[str, list[str]] = {n: [] for n in names}
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


def _joint_source(file: str, contacts: list[Contact], how: str) -> Source:
    what = "; ".join(c.scaled(1e-3).describe() for c in contacts)
    return Source(file=file, note=f"{how} from {len(contacts)} contact(s): {what} (lengths in m)")


def _pair_joint(file: str, a: str, b: str, contacts: list[Contact], tol: MatingTolerances,
                planar_contacts: str) -> Joint:
    """The joint the contacts of pair (a, b) give, with reference ``a``; InputError if unclassified."""
    if coplanar(contacts, tol.angle_tol, tol.contact_tol) and planar_contacts == "fixed":
        point = np.mean([c.point for c in contacts], axis=0)
        return Joint(name=f"{a}-{b}", type="fixed", reference=a, secondary=b, origin=point * 1e-3,
                     source=_joint_source(file, contacts, "fixed (planar contacts in one plane)"))
    f = pair_freedom(contacts, tol.angle_tol, tol.contact_tol)
    if f.type is None:
        kinds = ", ".join(sorted({c.kind for c in contacts}))
        raise InputError(f"parts {a} and {b}: their contacts ({kinds}) leave a {f.dim}-dimensional freedom "
                         f"that is no joint type; declare the joint between them", file=file)
    return Joint(name=f"{a}-{b}", type=f.type, reference=a, secondary=b, origin=f.origin * 1e-3, axis=f.axis,
                 source=_joint_source(file, contacts, "inferred"))


def infer_joints(file: str, names: list[str], surfaces: dict[str, list[Surface]], boxes: dict[str, np.ndarray],
                 tol: MatingTolerances, planar_contacts: str, grounds: list[str], declared: list[Joint],
                 progress=lambda items, what: items) -> Inference:
    """Contacts of every touching pair and the joints they give (see the module docstring)."""
    contacts: dict[tuple[str, str], list[Contact]] = {}
    for i, j in progress(candidate_pairs(names, boxes, tol.max_clearance + tol.contact_tol), "contacts"):
        found = pair_contacts(surfaces[names[i]], surfaces[names[j]], tol)
        if found:
            contacts[(names[i], names[j])] = found
    declared_pairs = {frozenset((j.reference, j.secondary)) for j in declared}
    for j in declared:
        for part in (j.reference, j.secondary):
            if part not in names and part != "ground":
                raise InputError(f"joint {j.name}: no part {part!r}", file=file)
    edges = [p for p in contacts if frozenset(p) not in declared_pairs]
    edges += [(j.reference, j.secondary) for j in declared]
    touching = {n for e in edges for n in e} | set(grounds)
    lonely = [n for n in names if n not in touching]
    if lonely:
        raise InputError(f"part {lonely[0]} touches no other part and has no declared joint"
                         + (f" (also: {', '.join(lonely[1:])})" if len(lonely) > 1 else ""), file=file)
    depth = _depths(names, [e for e in edges if "ground" not in e], grounds)
    order = {n: k for k, n in enumerate(names)}
    joints = list(declared)
    for (a, b), found in contacts.items():
        if frozenset((a, b)) in declared_pairs:
            continue
        key = (depth.get(a, len(names)), order[a]), (depth.get(b, len(names)), order[b])
        ref, sec = (a, b) if key[0] <= key[1] else (b, a)
        joints.append(_pair_joint(file, ref, sec, found, tol, planar_contacts))
    all_contacts = tuple(c for found in contacts.values() for c in found)
    return Inference(joints=tuple(joints), contacts=all_contacts)
