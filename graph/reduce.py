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

from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter
from typing import Callable, Mapping, Sequence

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.records import record
from mbcompose.parsers.assembly import GROUND, Assembly, Joint

from .composites import (Composite, composite_of, distances_to_ground, find_composites, merged_masses,
                         name_composites, order_members, rigid_adjacency)
from .issues import WARNING, Issue
from .subspaces import RANK_RTOL, LazySubspaces, Once, intersection, joint_subspace, same_subspace, twist_reference


@record
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
        return JOINTS[self.type].nv


@record(eq=True)
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


@record(eq=True)
class PairReport:
    """Several joints on one pair of composites; ``kind`` is ``'partial'`` here.

    common_dim : dimension of the intersection of their motion subspaces.
    """

    reference: str
    secondary: str
    joints: tuple[str, ...]
    kind: str
    common_dim: int


@record
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
    reference : () -> (centre (3,), L): the point the twists are taken about and the characteristic
        length L, m (:func:`graph.subspaces.twist_reference`), computed when first asked.
    """

    fixed_composites: tuple[Composite, ...]
    composites: tuple[Composite, ...]
    joints_before: tuple[ReducedJoint, ...]
    joints: tuple[ReducedJoint, ...]
    removed: tuple[RemovedJoint, ...]
    pairs: tuple[PairReport, ...]
    issues: tuple[Issue, ...] = ()
    reference: Callable[[], tuple[np.ndarray, float]] = lambda: (np.zeros(3), 1.0)

    @property
    def length(self) -> float:
        """The characteristic length L used for the twists, m."""
        return self.reference()[1]


def _describe(types: Sequence[str]) -> str:
    kinds = frozenset(JOINTS[t].moves_as for t in types)
    return {frozenset({"revolute"}): "co-axial revolutes", frozenset({"prismatic"}): "parallel prismatics",
            frozenset({"spherical"}): "concentric spherical joints",
            frozenset({"fixed"}): "duplicate fixed joints"}.get(kinds, "identical motion subspaces")


def _reduced(j: Joint, comp_of: Mapping[str, str], name: str | None = None, type_: str | None = None,
             joints: tuple[str, ...] | None = None) -> ReducedJoint:
    return ReducedJoint(
        name=name or j.name, type=type_ or j.type, reference=comp_of[j.reference],
        secondary=comp_of[j.secondary], reference_body=j.reference, secondary_body=j.secondary,
        actuated=j.actuated and (type_ is None), origin=j.origin, axis=j.axis, axis2=j.axis2,
        joints=joints or (j.name,), secondary_origin=j.secondary_origin, secondary_axis=j.secondary_axis)


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

    def pair(self, a: str, b: str) -> tuple[str, str] | None:
        """The pair of composites a joint between bodies a and b is grouped by, or None.

        A joint to ground itself pairs (ground, composite); otherwise composites
        welded to ground count as ground; None when both ends are the same
        composite or both count as ground.
        """
        if a == GROUND or b == GROUND:
            other = self.of[b if a == GROUND else a]
            return None if other == GROUND else (GROUND, other)
        oa, ob = self.of[a], self.of[b]
        if oa == ob:
            return None
        grounded = self.grounded
        ga = GROUND if oa in grounded else oa
        gb = GROUND if ob in grounded else ob
        return None if ga == gb else (ga, gb) if ga < gb else (gb, ga)

    def merge(self, a: str, b: str) -> str:
        keep, gone = sorted((a, b))
        self.members[keep] |= self.members.pop(gone)
        self.of.update(dict.fromkeys(self.members[keep], keep))
        if gone in self.grounded:
            self.grounded.discard(gone)
            self.grounded.add(keep)
        return keep


def _keep_first(joints: Sequence[Joint]) -> Joint:
    return sorted(joints, key=lambda j: (not j.actuated, j.name))[0]


@dataclass
class _Work:
    """Mutable state of one reduction.

    active : joints still between different composites;  S : joint name -> motion subspace
    removed : (joint, kind, kept joint or None, why);  issues : warnings so far
    locks : names of joint sets replaced by one fixed joint to ground, lock_source : one joint of each
    rigid_pairs : body pairs that are rigidly connected (for ordering composite members)
    """

    groups: _Groups
    active: list
    S: dict
    rtol: float
    rigid_pairs: list
    removed: list = field(default_factory=list)
    issues: list = field(default_factory=list)
    locks: list = field(default_factory=list)
    lock_source: dict = field(default_factory=dict)

    def remove(self, j: Joint, kind: str, keep: str | None, why: str, warning: str | None = None) -> None:
        self.removed.append((j, kind, keep, why))
        if warning is not None and j.actuated:
            self.issues.append(Issue(WARNING, "actuated-removed", warning, (j.name, keep)))
        self.active.remove(j)


def _fixed_composites(assembly: Assembly, composite_names, dist):
    """(fixed, named, name_of, active, joints_before): composites of the fixed joints (by root and named),
    body -> named composite, the joints between different ones, and joint -> reduced joint for those
    (seed 004 Table 3, by name)."""
    fixed = find_composites(assembly, names=None, distance=dist)
    named = [c if n == c.name else Composite(n, c.members, c.mass, c.grounded) for n, c in
             zip(name_composites([c.root for c in fixed], [c.members for c in fixed], composite_names), fixed)]
    name_of = composite_of(named)
    renamed = any(a is not b for a, b in zip(named, fixed))
    root_of = {GROUND: GROUND, **{m: c.root for c in fixed for m in c.members}} if renamed else name_of
    active = [j for j in assembly.joints
              if j.reference != j.secondary and not (j.type == "fixed" and GROUND not in (j.reference, j.secondary))
              and root_of[j.reference] != root_of[j.secondary]]
    joints_before = {j: _reduced(j, name_of) for j in sorted(active, key=lambda j: j.name)}
    return fixed, named, name_of, active, joints_before


def _joints_by_pair(joints, groups: _Groups, ends) -> dict:
    """Composite pair (:meth:`_Groups.pair`) -> the joints between it; ``ends(j)`` gives a joint's bodies."""
    by_pair: dict[tuple[str, str], list] = {}
    for j in joints:
        key = groups.pair(*ends(j))
        if key is not None:
            by_pair.setdefault(key, []).append(j)
    return by_pair


def _equal_freedom_classes(joints: Sequence[Joint], S: Mapping, rtol: float) -> list[list[Joint]]:
    """The joints grouped by equal motion subspace, in order of first appearance."""
    classes: list[list[Joint]] = []
    for j in joints:
        for cl in classes:
            if same_subspace(S[cl[0].name], S[j.name], rtol):
                cl.append(j)
                break
        else:
            classes.append([j])
    return classes


def _remove_redundant(work: _Work, classes) -> tuple[list[Joint], bool]:
    """Keep one joint per class (actuated first, then by name); (the kept joints, whether any went)."""
    reps, changed = [], False
    for cl in classes:
        keep = _keep_first(cl)
        reps.append(keep)
        for j in cl:
            if j is not keep:
                work.remove(j, "redundant", keep.name, f"same freedoms as {keep.name} ({_describe([keep.type, j.type])})",
                            f"actuated joint {j.name} removed as redundant with {keep.name}")
                changed = True
    return reps, changed


def _remove_welded(work: _Work, reps: Sequence[Joint], welds: Sequence[Joint]) -> None:
    """A pair already rigid through a fixed joint: every other joint of it goes."""
    weld = sorted(welds, key=lambda j: j.name)[0]
    for j in reps:
        if j is not weld:
            work.remove(j, "rigid", weld.name, f"pair already rigid through fixed joint {weld.name}",
                        f"actuated joint {j.name} removed: its bodies are welded by {weld.name}")


def _lock_pair(work: _Work, pair: tuple[str, str], reps: Sequence[Joint]) -> None:
    """Joints that leave no common freedom: the pair becomes one composite (or, next to ground,
    a composite welded to ground by one fixed joint named after them)."""
    groups = work.groups
    names = tuple(j.name for j in reps)
    left, right = pair
    text = f"{' and '.join(names)} leave no common freedom between {left} and {right}"
    why = f"locks the pair: {text}; merged into one composite"
    ends = [groups.of[b] for b in [j.reference for j in reps] + [j.secondary for j in reps] if groups.of[b] != GROUND]
    if GROUND in pair:
        moving = [g for g in ends if g not in groups.grounded]
        other = [g for g in ends if g in groups.grounded]
        if other:
            groups.merge(moving[0], sorted(other)[0])
            work.rigid_pairs.extend((j.reference, j.secondary) for j in reps)
        else:
            groups.grounded.add(moving[0])
            work.locks.append(names)
            work.lock_source[names] = reps[0]
            why = f"locks the pair: {text}; replaced by fixed joint {'+'.join(names)}"
    else:
        groups.merge(*pair)
        work.rigid_pairs.extend((j.reference, j.secondary) for j in reps)
    for j in reps:
        work.remove(j, "locking", None, why)
    work.issues.append(Issue(WARNING, "locked-pair", f"joints {', '.join(names)} lock {left} to {right}; "
                             "they are treated as one rigid composite", names))


def _reduce_pair(work: _Work, pair: tuple[str, str], joints: Sequence[Joint]) -> tuple[bool, bool]:
    """Analyse the joints of one composite pair; (whether anything changed, whether to start over)."""
    reps, changed = _remove_redundant(work, _equal_freedom_classes(joints, work.S, work.rtol))
    if len(reps) < 2:
        return changed, False
    welds = [j for j in reps if j.type == "fixed"]
    if welds:
        _remove_welded(work, reps, welds)
        return True, True
    if intersection([work.S[j.name] for j in reps], work.rtol).shape[1] == 0:
        _lock_pair(work, pair, reps)
        return True, True
    return changed, changed


def _reduce_pairs(work: _Work) -> dict:
    """Analyse every composite pair with several joints until nothing changes (merging composites
    can bring joints of different pairs together); the joints by pair of the last pass, which changed
    nothing (so: of the final composites and joints), are returned."""
    changed = True
    while changed:
        changed = False
        by_pair = _joints_by_pair(work.active, work.groups, attrgetter("reference", "secondary"))
        for pair in sorted(by_pair):
            if len(by_pair[pair]) < 2:
                continue
            joints = sorted(by_pair[pair], key=lambda j: j.name)
            pair_changed, restart = _reduce_pair(work, pair, joints)
            changed = changed or pair_changed
            if restart:
                break
    return by_pair


def _final_joints(work: _Work, comp_of: Mapping[str, str], before: Mapping[Joint, ReducedJoint]) -> list[ReducedJoint]:
    """The joints between the final composites (and the fixed joints standing for locked pairs);
    ``before``: joint -> its reduced joint between the fixed composites, kept when the same."""
    kept = []
    for j in work.active:
        ref, sec = comp_of[j.reference], comp_of[j.secondary]
        if ref == sec:
            work.removed.append((j, "internal", None, f"internal to composite {ref}"))
        else:
            rj = before.get(j)
            kept.append(rj if rj is not None and rj.reference == ref and rj.secondary == sec else _reduced(j, comp_of))
    for names in work.locks:
        kept.append(_reduced(work.lock_source[names], comp_of, name="+".join(names), type_="fixed", joints=names))
    return sorted(kept, key=lambda j: j.name)


def _partial_pairs(work: _Work, kept, comp_of: Mapping[str, str], reference, last: dict) -> list[PairReport]:
    """Pairs of composites still joined by several joints: they share a smaller common motion.
    ``last``: :func:`_reduce_pairs`' joints by pair, those of ``kept`` unless a locked pair added a joint;
    ``reference()``: the twists' centre and length."""
    if not work.locks and all(len(js) < 2 for js in last.values()):
        return []
    pairs = []
    if work.locks:
        by_pair = _joints_by_pair(kept, work.groups, attrgetter("reference_body", "secondary_body"))
    else:  # kept is sorted by name, and holds a joint of each name of the pairs
        named = {j.name: j for j in kept}
        by_pair = {p: [named[j.name] for j in sorted(js, key=lambda j: j.name)] for p, js in last.items() if len(js) > 1}
    for pair in sorted(by_pair):
        js = by_pair[pair]
        if len(js) < 2:
            continue
        names = tuple(j.name for j in js)
        dim = intersection([joint_subspace(j, *reference()) for j in js], work.rtol).shape[1]
        left, right = (comp_of.get(p, p) if p != GROUND else GROUND for p in pair)
        pairs.append(PairReport(left, right, names, "partial", dim))
        work.issues.append(Issue(WARNING, "partial-pair",
                                 f"joints {', '.join(names)} between {left} and {right} share a "
                                 f"{dim}-dimensional common motion but differ: kept, analysed as a loop", names))
    return pairs


def reduce_assembly(assembly: Assembly, composite_names: Mapping[str, str] | None = None,
                    rtol: float = RANK_RTOL) -> Reduction:
    """Lump composites and remove redundant joints (see module docstring).

    Parameters
    ----------
    assembly : Assembly
    composite_names : mapping, optional
        Renaming of composites, keyed by default name (the root body) or any
        member body; applied to both the fixed and the final composites.
    rtol : float
        Relative tolerance of numerical ranks (:data:`dynamics.tolerances.GRAPH_RANK_RTOL`).
    """
    dist = distances_to_ground(assembly)
    fixed, fixed_named, comp_of, active, joints_before = _fixed_composites(assembly, composite_names, dist)
    reference = Once(partial(twist_reference, assembly))  # (only pairs of joints and loops need it)
    work = _Work(_Groups(fixed), active, LazySubspaces(assembly.joints, reference), rtol,
                 rigid_pairs=[(j.reference, j.secondary) for j in assembly.joints if j.type == "fixed"])
    last = _reduce_pairs(work)
    fixed_of = {c.root: c.members for c in fixed}  # a group of the same size as its root's is that composite
    grown = any(len(fixed_of.get(r, ())) != len(m) for r, m in work.groups.members.items())
    # the same composites in the same order (and body -> composite), unless some merged or were welded to ground
    final = list(fixed_named)
    if grown or work.locks:
        rigid = rigid_adjacency(work.rigid_pairs) if grown else {}
        member_sets = sorted((fixed_of[r] if len(fixed_of.get(r, ())) == len(m) else order_members(m, rigid, dist)
                              for r, m in work.groups.members.items()), key=lambda m: (dist[m[0]], m[0]))
        final = _rename_sets(member_sets, composite_names, assembly, work.groups, {c.members: c for c in fixed_named})
        comp_of = composite_of(final)
    kept = _final_joints(work, comp_of, joints_before)
    pairs = _partial_pairs(work, kept, comp_of, reference, last)
    removed = tuple(RemovedJoint(j.name, j.type, comp_of[j.reference], comp_of[j.secondary], j.actuated,
                                 kind, keep, why) for j, kind, keep, why in sorted(work.removed, key=lambda r: r[0].name))
    return Reduction(fixed_composites=tuple(fixed_named), composites=tuple(final), reference=reference,
                     joints_before=tuple(joints_before.values()), joints=tuple(kept), removed=removed,
                     pairs=tuple(pairs), issues=tuple(work.issues))


def _rename_sets(member_sets, names, assembly, groups: _Groups, known: Mapping) -> list[Composite]:
    """The final composites, named; ``known``: member tuple -> the composite of the fixed joints with
    those members (kept when its name and grounding stay, else its merged mass reused)."""
    new = name_composites([m[0] for m in member_sets], member_sets, names)
    unknown = [m for m in member_sets if m not in known]
    mass = {m: c.mass for m, c in known.items()}
    mass.update(zip(unknown, merged_masses(assembly, unknown) if unknown else ()))
    grounded = [groups.of[m[0]] in groups.grounded for m in member_sets]
    return [known[m] if m in known and (known[m].name, known[m].grounded) == (n, g) else Composite(n, m, mass[m], g)
            for n, m, g in zip(new, member_sets, grounded)]
