"""Rigid groups of parts: a union-find whose unions respect the pairs that must stay apart.

A *group* is a set of parts welded together (one rigid body of the mechanism).  Declared joints
and servos say two sets of parts move relative to each other: :meth:`RigidGroups.keep_apart`
records that, and a later :meth:`RigidGroups.join` that would put both sets in one group is
refused (it returns False and the caller records why).  Every union keeps its evidence, so the
fixed joints that weld a group can say why the parts are one body.
"""

from __future__ import annotations


class RigidGroups:
    """Parts in file order; ``find(part)`` is the group's representative (its first part in file order)."""

    def __init__(self, names: list[str]):
        self.order = {n: k for k, n in enumerate(names)}
        self.parent = {n: n for n in names}
        self.members = {n: [n] for n in names}
        self.apart: list[tuple[str, str]] = []
        self.evidence: dict[str, str] = {}      # part -> why it joined its group (not for representatives)

    def find(self, part: str) -> str:
        root = part
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[part] != root:
            self.parent[part], part = root, self.parent[part]
        return root

    def keep_apart(self, a: str, b: str) -> None:
        """The groups of ``a`` and ``b`` must never become one."""
        self.apart.append((a, b))

    def allowed(self, a: str, b: str) -> bool:
        """True when joining the groups of ``a`` and ``b`` separates no kept-apart pair."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        return not any({self.find(x), self.find(y)} == {ra, rb} for x, y in self.apart)

    def join(self, a: str, b: str, evidence: str) -> bool:
        """Weld the groups of ``a`` and ``b``; False (nothing changed) when they must stay apart."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        if not self.allowed(a, b):
            return False
        keep, gone = (ra, rb) if self.order[ra] < self.order[rb] else (rb, ra)
        self.parent[gone] = keep
        for part in self.members[gone]:
            self.evidence.setdefault(part, evidence)
        self.members[keep] += self.members.pop(gone)
        return True

    def groups(self) -> dict[str, list[str]]:
        """representative -> its parts in file order (groups in the order of their representatives)."""
        out: dict[str, list[str]] = {}
        for n in sorted(self.parent, key=self.order.__getitem__):
            out.setdefault(self.find(n), []).append(n)
        return out
