"""Composite bodies: rigidly connected parts lumped into one body (seed 004, section 4, Table 2).

Composite bodies are found, as in the seed, by a depth-first traversal of the
extended system graph (:mod:`graph.system_graph`) starting from the node of a
body's centre of mass and following only *rigid connections*: arm elements
and the joint elements of ``fixed`` joints.  Ground is not traversed: two
bodies each welded to ground stay two composites (each *grounded*), joined to
ground by their fixed joints in the reduced graph.  Since every arm ties a
body's CoM node to its own attachment nodes and a fixed joint's element ties
two attachment nodes, that traversal reaches exactly the bodies joined by
chains of fixed joints that do not touch ground; :func:`rigid_components`
walks those directly, so composing a model does not need the extended graph
built (:attr:`graph.Analysis.extended` is built when first asked for).

Determinism (independent of input order):

* the *root* of a composite is its member nearest to ground - fewest joints
  on a path to ground in the body/joint graph, ties broken by name; bodies not
  connected to ground come after all others;
* traversals start from roots in that order and visit neighbours sorted by
  body name, so ``members`` is the depth-first preorder from the root;
* composites are listed in the order of their roots.

Naming: a composite is named after its root (``housing``, ``gimbal_ring``,
``shaft_a`` for the seeker); ``names`` (a mapping) renames them, keyed by the
default name or by any member's name - ``{"shaft_b": "BODY_1", "housing":
"BODY_2", "gimbal_ring": "BODY_3"}`` reproduces seed 004's Table 2.

Mass properties are merged exactly with :func:`parsers.massprops.combine_groups`
after moving each body's properties into the assembly frame
(:func:`parsers.massprops.transform_mass_arrays`): total mass, mass-
weighted centre of mass, and the inertia about it by the parallel-axis
theorem and ``R J R^T`` for the rotation.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np

from mbcompose.dynamics.records import record
from mbcompose.parsers.assembly import GROUND, Assembly, MassProperties
from mbcompose.parsers.massprops import combined_arrays, transform_mass_arrays

from .system_graph import SystemGraph, distances_to_ground, extended_graph, joint_graph  # noqa: F401  (re-exported)


@record
class Composite:
    """A composite body.

    name : composite name (see module docstring).
    members : body names, depth-first preorder from ``members[0]`` (the root).
    mass : merged mass properties **in the assembly frame** at the reference
        configuration: ``com`` (3,) in the assembly frame, ``inertia`` (3, 3)
        about the composite's centre of mass along the assembly axes.
    grounded : True when a fixed joint (or a pair of locking joints) attaches
        it to ground.
    """

    name: str
    members: tuple[str, ...]
    mass: MassProperties
    grounded: bool = False

    @property
    def root(self) -> str:
        return self.members[0]


def merged_masses(assembly: Assembly, member_lists: Sequence[Iterable[str]]) -> list[MassProperties]:
    """Exact merge of each member list's mass properties, in the assembly frame (see module docstring).

    All the assembly's bodies are moved to the assembly frame together
    (:func:`parsers.massprops.transform_mass_arrays`), then merged group by group
    (:func:`parsers.massprops.combined_arrays`, the arrays of :func:`~parsers.massprops.combine_groups`),
    and checked at once (:meth:`MassProperties.many`).  A massless composite gets the mean of its
    members' frame origins as ``com`` and keeps the rotational inertia of its members
    (Pinocchio does the same).
    """
    bodies, names = assembly.bodies, assembly.body_names
    row = dict(zip(reversed(names), range(len(names) - 1, -1, -1)))  # the first of a name, as Assembly.body
    groups = [[row[n] for n in members] for members in member_lists]
    if not bodies:  # (then no composite either)
        return []
    s = assembly.body_stacks
    origins, com, inertia = s.translation, s.com, s.inertia
    if s.rotation is None:  # every body unrotated: R c + t == c + t and R J R^T == J exactly
        com = com + origins
    else:
        com, inertia = transform_mass_arrays(com, inertia, s.rotation, origins)
    mass, centre, inertia = combined_arrays(s.mass, com, inertia, groups)
    massless = (mass == 0.0).nonzero()[0].tolist()
    if massless:  # (arrays combined_arrays made for this call) a massless composite's mass is +0.0
        mass[massless] = 0.0
        for k in massless:
            centre[k] = origins[groups[k]].mean(axis=0)
    return MassProperties.many(mass, centre, inertia)


def _dfs(adjacency: Mapping[str, Iterable[str]], start: str, allowed: set[str]) -> list[str]:
    order, seen, stack = [], set(), [start]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        order.append(n)
        stack.extend(sorted([m for m in adjacency.get(n, ()) if m in allowed and m not in seen], reverse=True))
    return order


def rigid_adjacency(rigid_pairs: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    """Body -> the bodies it is rigidly connected to (both directions of each pair)."""
    adj: dict[str, set[str]] = {}
    for a, b in rigid_pairs:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    return adj


def order_members(members: Iterable[str], adjacency: Mapping[str, Iterable[str]],
                  distance: Mapping[str, float]) -> tuple[str, ...]:
    """Members in canonical order: root nearest ground, then depth-first preorder
    over the rigid connections (``adjacency``, :func:`rigid_adjacency`; links to
    non-members are not followed) with neighbours sorted by name."""
    members = set(members)
    if len(members) == 1:
        return tuple(members)
    adj = adjacency
    out: list[str] = []
    while len(out) < len(members):
        rest = members - set(out)
        root = min([(distance.get(n, np.inf), n) for n in rest])[1]  # (names are unique: no tie)
        out.extend(_dfs(adj, root, rest))
    return tuple(out)


def rigid_components(assembly: Assembly, adj: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Depth-first traversals from each body over the fixed joints not touching ground
    (the arm and fixed-joint elements of the extended graph, see the module docstring);
    ``adj``: :func:`rigid_adjacency` of those joints.

    Returns lists of body names, one per composite, unordered (see
    :func:`find_composites` for the canonical order).  ValueError for a joint
    naming a body the assembly does not have.
    """
    known = set(assembly.body_names)
    known.add(GROUND)
    for j in assembly.joints:
        if j.reference not in known or j.secondary not in known:
            b = j.reference if j.reference not in known else j.secondary
            raise ValueError(f"joint {j.name!r} refers to unknown body {b!r}")
    seen: set[str] = set()
    comps = []
    for b in assembly.body_names:
        if b in seen:
            continue
        seen.add(b)
        if b not in adj:  # no fixed joint to another body: a composite of its own
            comps.append([b])
            continue
        stack, members = [b], []
        while stack:  # depth first; the visiting order does not matter here
            m = stack.pop()
            members.append(m)
            for k in adj.get(m, ()):
                if k not in seen:
                    seen.add(k)
                    stack.append(k)
        comps.append(members)
    return comps


def name_composites(default_names: list[str], member_lists: list[tuple[str, ...]],
                    names: Mapping[str, str] | None) -> list[str]:
    """Apply a renaming (keys: default composite name or any member name).

    When several keys hit one composite (after locked pairs merged), the key
    naming the member earliest in ``members`` (the root first) wins.  Raises
    ValueError for a key that matches no composite, or when the resulting
    names are not unique or use the reserved name ``ground``.
    """
    out = list(default_names)
    if names:
        rank: dict[int, int] = {}
        for key, new in names.items():
            hits = [(i, m.index(key) if key in m else 0) for i, (d, m) in
                    enumerate(zip(default_names, member_lists)) if key == d or key in m]
            if not hits:
                raise ValueError(f"composite name mapping: {key!r} is neither a composite nor a member")
            for i, pos in hits:
                if i not in rank or pos < rank[i]:
                    out[i] = str(new)
                    rank[i] = pos
    if len(set(out)) != len(out):
        raise ValueError(f"composite names are not unique: {out}")
    if GROUND in out:
        raise ValueError(f"{GROUND!r} is reserved and cannot name a composite")
    return out


def find_composites(assembly: Assembly, names: Mapping[str, str] | None = None,
                    distance: Mapping[str, float] | None = None) -> tuple[Composite, ...]:
    """Composite bodies of an assembly (fixed joints only), seed 004 Table 2.

    Parameters
    ----------
    assembly : Assembly
    names : mapping, optional
        Renaming, keyed by default composite name or member name.
    distance : mapping, optional
        :func:`distances_to_ground` of the assembly, if already computed.
    """
    dist = distances_to_ground(assembly) if distance is None else distance
    fixed = [j for j in assembly.joints if j.type == "fixed"]
    grounded_bodies = {j.secondary if j.reference == GROUND else j.reference
                       for j in fixed if GROUND in (j.reference, j.secondary)}
    # the fixed joints between bodies (links to ground would not be followed: ground is no member)
    adj = rigid_adjacency((j.reference, j.secondary) for j in fixed if GROUND not in (j.reference, j.secondary))
    member_lists = [order_members(c, adj, dist) if len(c) > 1 else (c[0],) for c in rigid_components(assembly, adj)]
    member_lists.sort(key=lambda m: (dist[m[0]], m[0]))
    final = name_composites([m[0] for m in member_lists], member_lists, names)
    return tuple(Composite(n, m, mp, not grounded_bodies.isdisjoint(m))
                 for n, m, mp in zip(final, member_lists, merged_masses(assembly, member_lists)))


def composite_of(composites: Iterable[Composite]) -> dict[str, str]:
    """Body name -> composite name (ground maps to ground)."""
    out = {GROUND: GROUND}
    for c in composites:
        for m in c.members:
            out[m] = c.name
    return out
