"""Index spaces of the workbench's operators and vectors (seed 002 section 3).

A :class:`Space` is an ordered set of index blocks: the nodes of a subgraph with
their weight dimensions (node space), with their joint dimensions (joint space),
or the pick-off nodes of a ``B*`` operator (pick space).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Space"]


class Space:
    """An ordered set of index blocks: rows or columns of a spatial operator.

    Parameters
    ----------
    g : object
        The subgraph the space belongs to (compared by identity).
    kind : {"node", "joint", "pick"}
    ids : sequence of hashable
        Block ids in order (global node indices for "node"/"joint", pick-off
        node positions for "pick").
    dims : sequence of int
        Block sizes, aligned with ``ids``.
    tag : object, optional
        Distinguishes spaces of the same kind and ids (e.g. two pick-off lists).
    """

    __slots__ = ("g", "kind", "ids", "dims", "offsets", "tag", "_pos")

    def __init__(self, g, kind, ids, dims, tag=None):
        self.g = g
        self.kind = kind
        self.ids = tuple(ids)
        self.dims = tuple(int(d) for d in dims)
        self.offsets = np.concatenate([[0], np.cumsum(self.dims)]).astype(int)
        self.tag = tag
        self._pos = {k: i for i, k in enumerate(self.ids)}

    @property
    def size(self) -> int:
        return int(self.offsets[-1])

    @property
    def label(self) -> str:
        return f"{self.kind}-space[{len(self.ids)} blocks]"

    def pos(self, k) -> int:
        """Position of block id ``k`` in this space."""
        try:
            return self._pos[k]
        except KeyError:
            raise KeyError(f"{k!r} is not a block of this {self.label} (blocks {self.ids})") from None

    def slice(self, k) -> slice:
        i = self.pos(k)
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def slice_at(self, i: int) -> slice:
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def __eq__(self, other):
        return self is other or (isinstance(other, Space) and self.g is other.g and self.kind == other.kind
                                 and self.ids == other.ids and self.dims == other.dims
                                 and self.tag == other.tag)

    def __hash__(self):
        return hash((id(self.g), self.kind, self.ids, self.dims))

    def __repr__(self):
        return f"Space({self.kind}, ids={self.ids}, dims={self.dims})"
