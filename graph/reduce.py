"""Reduction: composites become single bodies, redundant joints go (seed 004, section 4, Table 3).

After lumping (:mod:`graph.composites`) every fixed joint between two bodies
is internal to a composite.  The remaining joints, re-attached to the
composites, form the *kinematic description of the composite bodies* (seed
004, Table 3: two revolutes between each pair of the seeker's composites).

Several joints between the same pair of composites are then analysed
together, through their motion subspaces at the reference configuration
(:func:`graph.subspaces.joint_subspace`, all twists in one frame).  Joints
are grouped into classes with equal subspaces, and

* **redundant joints** - a class with more than one joint: the joints' freedoms
  coincide (co-axial revolutes, parallel prismatics, concentric spherical
  joints, duplicate welds to ground).  One joint is kept - the actuated one
  (seed 004: "only the joints marked with an asterisk are considered"), else
  the first by name - and the others are removed with the reason recorded;
* **locked pair** - two or more classes whose subspaces intersect only in
  zero: the joints leave no relative freedom (two revolutes on different axes,
  parallel but distinct revolute axes, a revolute and a prismatic, ...).  The
  joints are removed and the two composites merge into one (or, when the
  other side is ground, the composite is welded to ground by one fixed joint
  standing for them, named ``a+b``);
* **already rigid** - a pair joined to ground by a fixed joint and by other
  joints: the other joints are removed;
* **partial** - classes whose common subspace is smaller than each class's
  but not zero: a revolute inside a cylindrical joint on the same axis, a
  revolute through the centre of a spherical joint, two spherical joints at
  different centres (common motion: the rotation about the line joining the
  centres), a universal and a revolute sharing one axis.  Nothing is removed:
  the pair stays a loop of the reduced graph and is classified there
  (:mod:`graph.loops`), with a ``partial-pair`` warning.

Merging can make joints that joined different composites join the same pair,
so the analysis repeats until nothing changes.  Composites welded to ground
count as ground when joints are paired (a joint to the housing and a joint to
ground on the same axis are redundant); a joint to ground itself pairs ground
with its composite (so a second weld of a welded composite is redundant).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from mbcompose.parsers.assembly import GROUND, JOINT_TYPES, Assembly, Joint

from .composites import (Composite, distances_to_ground, find_composites, merged_mass,
                         name_composites, order_members)
from .issues import WARNING, Issue
from .subspaces import RANK_RTOL, intersection, joint_subspace, same_subspace


@dataclass(frozen=True, eq=False)
class ReducedJoint:
    """A joint of the reduced graph, between composites (or ground).

    name, type : the joint's (a lock to ground is a ``fixed`` joint named ``a+b``).
    reference, secondary : composite names (or ``ground``).
    reference_body, secondary_body : the original bodies.
    actuated : starred in seed 004's tables.
    origin, axis, axis2 : assembly frame, reference configuration (as in :class:`parsers.Joint`).
    joints : the original joints it stands for.
    secondary_origin, secondary_axis : the attachment point and axis on the
        secondary body when the input gives them separately
        (``Joint.secondary_origin``, ``Joint.secondary_axis``), else None.
    """

    name: str
    type: str
    reference: str
    secondary: str
    reference_body: str
    secondary_body: str
    actuated: bool
    origin: np.ndarray
    axis: np.ndarray
    axis2: np.ndarray | None = None
    joints: tuple[str, ...] = ()
    secondary_origin: np.ndarray | None = None
    secondary_axis: np.ndarray | None = None

    @property
    def nv(self) -> int:
        return JOINT_TYPES[self.type][1]


@dataclass(frozen=True)
class RemovedJoint:
    """A joint removed by the reduction, and why.

    kind : ``'redundant'`` (same freedoms as ``kept``), ``'locking'`` (the pair
        merged), ``'rigid'`` (pair already welded by ``kept``) or ``'internal'``
        (both bodies ended up in one composite).
    reference, secondary : final composite names of its two bodies.
    """

    name: str
    type: str
    reference: str
    secondary: str
    actuated: bool
    kind: str
    kept: str | None
    reason: str


@dataclass(frozen=True)
class PairReport:
    """Several joints on one pair of composites; ``kind`` is ``'partial'`` here.

    common_dim : dimension of the intersection of their motion subspaces.
    """

    reference: str
    secondary: str
    joints: tuple[str, ...]
    kind: str
    common_dim: int


@dataclass(frozen=True, eq=False)
class Reduction:
    """Result of :func:`reduce_assembly`.

    fixed_composites : composites from fixed joints only (seed 004 Table 2).
    composites : final composites (after locked pairs merged).
    joints_before : joints between ``fixed_composites`` before redundancy
        analysis (seed 004 Table 3), sorted by name; welds to ground included.
    joints : joints of the reduced graph, between ``composites``.
    removed : removed joints with reasons.
    pairs : pairs of composites left with several, partially coupled joints.
    issues : warnings.
    length : characteristic length L used for the twists, m.
    """

    fixed_composites: tuple[Composite, ...]
    composites: tuple[Composite, ...]
    joints_before: tuple[ReducedJoint, ...]
    joints: tuple[ReducedJoint, ...]
    removed: tuple[RemovedJoint, ...]
    pairs: tuple[PairReport, ...]
    issues: tuple[Issue, ...] = ()
    length: float = 1.0


def characteristic_length(assembly: Assembly) -> float:
    """Largest distance of a joint origin or body frame origin from their centroid (1 m if none)."""
    pts = [j.origin for j in assembly.joints] + [b.pose.translation for b in assembly.bodies]
    if not pts:
        return 1.0
    pts = np.asarray(pts)
    L = float(np.linalg.norm(pts - pts.mean(axis=0), axis=1).max())
    return L if L > 1e-9 else 1.0


def _describe(types: Sequence[str]) -> str:
    kinds = set(types)
    if kinds <= {"revolute", "continuous"}:
        return "co-axial revolutes"
    if kinds == {"prismatic"}:
        return "parallel prismatics"
    if kinds == {"spherical"}:
        return "concentric spherical joints"
    if kinds == {"fixed"}:
        return "duplicate fixed joints"
    return "identical motion subspaces"


def _reduced(j: Joint, comp_of: Mapping[str, str], name: str | None = None, type_: str | None = None,
             joints: tuple[str, ...] | None = None) -> ReducedJoint:
    return ReducedJoint(name or j.name, type_ or j.type, comp_of[j.reference], comp_of[j.secondary],
                        j.reference, j.secondary, j.actuated and (type_ is None), j.origin, j.axis, j.axis2,
                        joints or (j.name,), getattr(j, "secondary_origin", None),
                        getattr(j, "secondary_axis", None))


class _Groups:
    """Union-find of bodies into composites, with the grounded flag."""

    def __init__(self, composites: Sequence[Composite]):
        self.of = {GROUND: GROUND}
        self.members: dict[str, set[str]] = {}
        self.grounded: set[str] = set()
        for c in composites:
            self.members[c.root] = set(c.members)
            for m in c.members:
                self.of[m] = c.root
            if c.grounded:
                self.grounded.add(c.root)

    def anchor(self, body: str) -> str:
        g = self.of[body]
        return GROUND if g in self.grounded else g

    def pair(self, a: str, b: str) -> tuple[str, str] | None:
        """The pair of composites a joint between bodies a and b is grouped by, or None.

        A joint to ground itself pairs (ground, composite); otherwise composites
        welded to ground count as ground; None when both ends are the same
        composite or both count as ground.
        """
        if GROUND in (a, b):
            other = self.of[b if a == GROUND else a]
            return None if other == GROUND else (GROUND, other)
        ga, gb = self.anchor(a), self.anchor(b)
        if self.of[a] == self.of[b] or ga == gb:
            return None
        return tuple(sorted((ga, gb)))

    def merge(self, a: str, b: str) -> str:
        keep, gone = sorted((a, b))
        self.members[keep] |= self.members.pop(gone)
        for m in self.members[keep]:
            self.of[m] = keep
        if gone in self.grounded:
            self.grounded.discard(gone)
            self.grounded.add(keep)
        return keep


def _keep_first(joints: Sequence[Joint]) -> Joint:
    return sorted(joints, key=lambda j: (not j.actuated, j.name))[0]


def reduce_assembly(assembly: Assembly, composite_names: Mapping[str, str] | None = None,
                    rtol: float = RANK_RTOL, extended=None) -> Reduction:
    """Lump composites and remove redundant joints (see module docstring).

    Parameters
    ----------
    assembly : Assembly
    composite_names : mapping, optional
        Renaming of composites, keyed by default name (the root body) or any
        member body; applied to both the fixed and the final composites.
    rtol : float
        Relative tolerance of numerical ranks (:data:`graph.subspaces.RANK_RTOL`).
    extended : SystemGraph, optional
        The extended graph, if already built.
    """
    fixed = find_composites(assembly, names=None, extended=extended)
    dist = distances_to_ground(assembly)
    L = characteristic_length(assembly)
    centre = np.zeros(3)
    if assembly.joints:
        centre = np.mean([j.origin for j in assembly.joints], axis=0)

    fixed_named = [Composite(n, c.members, c.mass, c.grounded) for n, c in
                   zip(name_composites([c.root for c in fixed], [c.members for c in fixed], composite_names), fixed)]
    before_map = {GROUND: GROUND}
    for c in fixed_named:
        for m in c.members:
            before_map[m] = c.name
    comp_root = {GROUND: GROUND}
    for c in fixed:
        for m in c.members:
            comp_root[m] = c.root

    active = [j for j in assembly.joints
              if j.reference != j.secondary and not (j.type == "fixed" and GROUND not in (j.reference, j.secondary))
              and comp_root[j.reference] != comp_root[j.secondary]]
    joints_before = tuple(_reduced(j, before_map) for j in sorted(active, key=lambda j: j.name))

    groups = _Groups(fixed)
    S = {j.name: joint_subspace(j, centre, L) for j in assembly.joints}
    removed: list[tuple[Joint, str, str | None, str]] = []
    locks: list[tuple[str, ...]] = []  # synthetic fixed joints to ground
    lock_source: dict[tuple[str, ...], Joint] = {}
    rigid_pairs = [(j.reference, j.secondary) for j in assembly.joints if j.type == "fixed"]
    issues: list[Issue] = []

    changed = True
    while changed:
        changed = False
        by_pair: dict[tuple[str, str], list[Joint]] = {}
        for j in active:
            key = groups.pair(j.reference, j.secondary)
            if key is not None:
                by_pair.setdefault(key, []).append(j)
        for pair in sorted(by_pair):
            js = sorted(by_pair[pair], key=lambda j: j.name)
            if len(js) < 2:
                continue
            classes: list[list[Joint]] = []
            for j in js:
                for cl in classes:
                    if same_subspace(S[cl[0].name], S[j.name], rtol):
                        cl.append(j)
                        break
                else:
                    classes.append([j])
            reps = []
            for cl in classes:
                keep = _keep_first(cl)
                reps.append(keep)
                for j in cl:
                    if j is keep:
                        continue
                    removed.append((j, "redundant", keep.name,
                                    f"same freedoms as {keep.name} ({_describe([keep.type, j.type])})"))
                    if j.actuated:
                        issues.append(Issue(WARNING, "actuated-removed",
                                            f"actuated joint {j.name} removed as redundant with {keep.name}",
                                            (j.name, keep.name)))
                    active.remove(j)
                    changed = True
            if len(reps) < 2:
                continue
            welds = [j for j in reps if j.type == "fixed"]
            if welds:
                weld = sorted(welds, key=lambda j: j.name)[0]
                for j in reps:
                    if j is not weld:
                        removed.append((j, "rigid", weld.name, f"pair already rigid through fixed joint {weld.name}"))
                        active.remove(j)
                        if j.actuated:
                            issues.append(Issue(WARNING, "actuated-removed",
                                                f"actuated joint {j.name} removed: its bodies are welded by "
                                                f"{weld.name}", (j.name, weld.name)))
                changed = True
            elif intersection([S[j.name] for j in reps], rtol).shape[1] == 0:
                names = tuple(j.name for j in reps)
                ends = [groups.of[j.reference] if groups.of[j.reference] != GROUND else None for j in reps]
                ends2 = [groups.of[j.secondary] if groups.of[j.secondary] != GROUND else None for j in reps]
                left, right = pair
                text = f"{' and '.join(names)} leave no common freedom between {left} and {right}"
                for j in reps:
                    active.remove(j)
                if GROUND in pair:
                    # the other side is ground or composites welded to it
                    moving = [g for g in ends + ends2 if g is not None and g not in groups.grounded]
                    other = [g for g in ends + ends2 if g is not None and g in groups.grounded]
                    g_moving = moving[0]
                    if other:
                        groups.merge(g_moving, sorted(other)[0])
                        rigid_pairs.extend((j.reference, j.secondary) for j in reps)
                        why = f"locks the pair: {text}; merged into one composite"
                    else:
                        groups.grounded.add(g_moving)
                        locks.append(names)
                        lock_source[names] = reps[0]
                        why = f"locks the pair: {text}; replaced by fixed joint {'+'.join(names)}"
                else:
                    groups.merge(*pair)
                    rigid_pairs.extend((j.reference, j.secondary) for j in reps)
                    why = f"locks the pair: {text}; merged into one composite"
                for j in reps:
                    removed.append((j, "locking", None, why))
                issues.append(Issue(WARNING, "locked-pair", f"joints {', '.join(names)} lock {left} to {right}; "
                                    "they are treated as one rigid composite", names))
                changed = True
            if changed:
                break

    # final composites
    member_sets = [order_members(m, rigid_pairs, dist) for m in groups.members.values()]
    member_sets.sort(key=lambda m: (dist[m[0]], m[0]))
    final = _rename_sets(member_sets, composite_names, assembly, groups)
    comp_of = {GROUND: GROUND}
    for c in final:
        for m in c.members:
            comp_of[m] = c.name

    kept = []
    for j in active:
        if comp_of[j.reference] == comp_of[j.secondary]:
            removed.append((j, "internal", None, f"internal to composite {comp_of[j.reference]}"))
        else:
            kept.append(_reduced(j, comp_of))
    for names in locks:
        j = lock_source[names]
        kept.append(_reduced(j, comp_of, name="+".join(names), type_="fixed", joints=names))
    kept.sort(key=lambda j: j.name)

    pairs = []
    by_pair = {}
    for j in kept:
        key = groups.pair(j.reference_body, j.secondary_body)
        if key is not None:
            by_pair.setdefault(key, []).append(j)
    for pair in sorted(by_pair):
        js = by_pair[pair]
        if len(js) >= 2:
            names = tuple(j.name for j in js)
            dim = intersection([joint_subspace(j, centre, L) for j in js], rtol).shape[1]
            left, right = (comp_of.get(pair[0], pair[0]) if pair[0] != GROUND else GROUND,
                           comp_of.get(pair[1], pair[1]) if pair[1] != GROUND else GROUND)
            pairs.append(PairReport(left, right, names, "partial", dim))
            issues.append(Issue(WARNING, "partial-pair",
                                f"joints {', '.join(names)} between {left} and {right} share a "
                                f"{dim}-dimensional common motion but differ: kept, analysed as a loop", names))

    removed_out = tuple(RemovedJoint(j.name, j.type, comp_of[j.reference], comp_of[j.secondary], j.actuated,
                                     kind, keep, why) for j, kind, keep, why in sorted(removed, key=lambda r: r[0].name))
    return Reduction(tuple(fixed_named), tuple(final), joints_before, tuple(kept), removed_out,
                     tuple(pairs), tuple(issues), L)


def _rename_sets(member_sets, names, assembly, groups: _Groups) -> list[Composite]:
    new = name_composites([m[0] for m in member_sets], member_sets, names)
    return [Composite(n, m, merged_mass(assembly, m), groups.of[m[0]] in groups.grounded)
            for n, m in zip(new, member_sets)]
