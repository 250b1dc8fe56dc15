"""Incidence, cut-set and circuit matrices of a system graph (seed 004, section 3.1).

For a connected graph with v nodes and e elements:

* the (reduced) incidence matrix ``A`` is (v-1) x e; the row of the reference
  node ``ground`` is left out.  ``A[i, k] = +1`` when element k leaves node i
  (node i is its tail), ``-1`` when it enters node i (its head), else 0;
* a spanning tree T (v-1 *branches*) splits the columns, Eq. 1:
  ``A = [A_T  A_C]`` with ``A_T`` (v-1) x (v-1) nonsingular and ``A_C`` the
  e-v+1 *chords*;
* the cut-set matrix, Eq. 2, is ``A_T^-1 A = [U_T  A_T^-1 A_C]`` (the OCR of
  the seed prints ``[U_T A_C]``: the chord block is the one obtained after the
  row operations ``A_T^-1``, as the seed's text says);
* the circuit matrix, Eq. 3, is ``B = [B_T  U_C]`` with, Eq. 4,
  ``B_T = -A_C^T (A_T^-1)^T``, so that ``A B^T = 0`` (orthogonality).
  Row c of B is the fundamental circuit of chord c, oriented like the chord.

Spanning tree: minimum cost (Kruskal), with the element weights of
:data:`TREE_WEIGHTS` - body 1, arm 1, joint 2, driver 4, gravity 4 - so that
body elements and arms are branches wherever possible, then joints; the
force and driver elements, which parallel a body or joint element, become
chords.  Ties are broken by element number, so the tree is unique for a
given numbering.  ``A_T`` is unimodular (a tree's incidence matrix), hence
every matrix here has integer entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
from networkx.utils import UnionFind

from mbcompose.parsers.assembly import GROUND

from .system_graph import SystemGraph

#: element kind -> spanning tree weight (lower is preferred as a branch).
TREE_WEIGHTS: Mapping[str, float] = {"body": 1.0, "arm": 1.0, "joint": 2.0, "driver": 4.0,
                                     "gravity": 4.0}


def incidence_matrix(sg: SystemGraph, reference: str = GROUND) -> tuple[np.ndarray, tuple[str, ...]]:
    """The reduced incidence matrix ``A`` ((v-1) x e, int) and its row node names.

    Columns follow element order e1..en; rows follow ``sg.nodes`` without ``reference``.
    """
    rows = tuple(n for n in sg.nodes if n != reference)
    index = {n: i for i, n in enumerate(rows)}
    A = np.zeros((len(rows), len(sg.elements)), dtype=int)
    for k, e in enumerate(sg.elements):
        if e.tail in index:
            A[index[e.tail], k] += 1
        if e.head in index:
            A[index[e.head], k] -= 1
    return A, rows


def spanning_tree(sg: SystemGraph, weights: Mapping[str, float] | None = None) -> tuple[str, ...]:
    """Names of the branches of the minimum cost spanning tree (Kruskal).

    weights : element kind -> weight (default :data:`TREE_WEIGHTS`); ties are
    broken by element number.  For a disconnected graph the result is a
    spanning forest.
    """
    w = dict(TREE_WEIGHTS if weights is None else weights)
    order = sorted(sg.elements, key=lambda e: (w[e.kind], e.index))
    uf = UnionFind(sg.nodes)
    branches = []
    for e in order:
        if uf[e.tail] != uf[e.head]:
            uf.union(e.tail, e.head)
            branches.append(e)
    return tuple(e.name for e in sorted(branches, key=lambda e: e.index))


@dataclass(frozen=True, eq=False)
class TopologyMatrices:
    """The matrices of seed 004, Eqs. 1-4, for one spanning tree.

    branches, chords : element names, in the column order used below.
    nodes : row node names of A (ground left out).
    A : (v-1, e) int, columns in element order e1..en.
    A_T, A_C : (v-1, v-1) and (v-1, e-v+1), Eq. 1 (``[A_T A_C]`` is A with its
        columns ordered branches first).
    cutset : (v-1, e) int, ``[U_T  A_T^-1 A_C]`` in branch-then-chord order, Eq. 2.
    B_T : (e-v+1, v-1) int, Eq. 4.
    B : (e-v+1, e) int, ``[B_T  U_C]`` in branch-then-chord order, Eq. 3.
    """

    branches: tuple[str, ...]
    chords: tuple[str, ...]
    nodes: tuple[str, ...]
    A: np.ndarray
    A_T: np.ndarray
    A_C: np.ndarray
    cutset: np.ndarray
    B_T: np.ndarray
    B: np.ndarray

    @property
    def columns(self) -> tuple[str, ...]:
        """Element names of the columns of ``[A_T A_C]``, ``cutset`` and ``B``."""
        return self.branches + self.chords

    def A_ordered(self) -> np.ndarray:
        """``[A_T  A_C]``: A with columns in branch-then-chord order."""
        return np.hstack([self.A_T, self.A_C])

    def B_in_element_order(self) -> np.ndarray:
        """B with its columns back in element order e1..en (so ``A @ B.T == 0``)."""
        out = np.zeros_like(self.B)
        idx = [int(n[1:]) - 1 for n in self.columns]
        out[:, idx] = self.B
        return out


def _integer(M: np.ndarray, what: str) -> np.ndarray:
    R = np.rint(M)
    if M.size and np.abs(M - R).max() > 1e-9:
        raise ArithmeticError(f"{what} is not integral; the tree is not a tree")
    return R.astype(int)


def topology_matrices(sg: SystemGraph, weights: Mapping[str, float] | None = None,
                      branches: tuple[str, ...] | None = None) -> TopologyMatrices:
    """Incidence, cut-set and circuit matrices (seed 004, Eqs. 1-4).

    Parameters
    ----------
    sg : SystemGraph
        A connected system graph (every extended graph is: each CoM is joined
        to ground by its body element).
    weights : mapping, optional
        Spanning tree weights per element kind (default :data:`TREE_WEIGHTS`).
    branches : tuple of str, optional
        Use this spanning tree instead (element names); ValueError if it is not one.
    """
    A, rows = incidence_matrix(sg)
    if branches is None:
        branches = spanning_tree(sg, weights)
    names = tuple(e.name for e in sg.elements)
    if len(branches) != len(rows):
        raise ValueError(f"a spanning tree has {len(rows)} branches, got {len(branches)} "
                         "(is the graph connected?)")
    bset = set(branches)
    chords = tuple(n for n in names if n not in bset)
    col = {n: i for i, n in enumerate(names)}
    A_T = A[:, [col[n] for n in branches]]
    A_C = A[:, [col[n] for n in chords]]
    if len(rows) and abs(np.linalg.det(A_T)) < 0.5:
        raise ValueError("the given branches do not form a spanning tree (A_T is singular)")
    A_T_inv = np.linalg.inv(A_T) if len(rows) else np.zeros((0, 0))
    cut_chords = _integer(A_T_inv @ A_C, "A_T^-1 A_C")
    cutset = np.hstack([np.eye(len(rows), dtype=int), cut_chords])
    B_T = _integer(-A_C.T @ A_T_inv.T, "B_T")
    B = np.hstack([B_T, np.eye(len(chords), dtype=int)])
    return TopologyMatrices(tuple(branches), chords, rows, A, A_T, A_C, cutset, B_T, B)
