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
:data:`TREE_WEIGHTS` - body 1, arm 1, joint 2, source 3, driver, gravity, force, load and electric 4 - so that
body elements and arms are branches wherever possible, then joints; the
force and driver elements, which parallel a body or joint element, become
chords.  Ties are broken by element number, so the tree is unique for a
given numbering.

Sparse, and no inverse: every matrix is a ``scipy.sparse`` CSR matrix of
integers, built in time and memory linear in its number of nonzeros.
``A_T^-1 A_C`` is never formed by inverting ``A_T``: column c of it is the
solution x of ``A_T x = a_c`` (``a_c`` = chord c's column of A), and since
``A_T`` is the incidence matrix of a tree, x is the tree path from the
chord's tail to its head - ``x_b = +1`` for a branch traversed from its tail
to its head along that path, ``-1`` for one traversed backwards, 0 off the
path (the columns then telescope: ``sum_b x_b a_b = e_tail - e_head = a_c``).
``A_T`` is unimodular, so every entry is an exact integer.  In an extended
graph the tree of body and arm elements has depth 2, so each path has at
most 4 branches and all three matrices have O(e) nonzeros.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import scipy.sparse as sp
from networkx.utils import UnionFind

from mbcompose.dynamics import topology
from mbcompose.parsers.assembly import GROUND

from .system_graph import SystemGraph

#: element kind -> spanning tree weight (lower is preferred as a branch).
TREE_WEIGHTS: Mapping[str, float] = {"body": 1.0, "arm": 1.0, "joint": 2.0, "driver": 4.0,
                                     "gravity": 4.0, "force": 4.0, "load": 4.0, "source": 3.0, "electric": 4.0}


def incidence_matrix(sg: SystemGraph, reference: str = GROUND) -> tuple[sp.csr_matrix, tuple[str, ...]]:
    """The reduced incidence matrix ``A`` ((v-1) x e, sparse int) and its row node names.

    Columns follow element order e1..en; rows follow ``sg.nodes`` without ``reference``.
    An element whose tail and head coincide has a zero column.
    """
    rows = tuple(n for n in sg.nodes if n != reference)
    index = {n: i for i, n in enumerate(rows)}
    r, c, v = [], [], []
    for k, e in enumerate(sg.elements):
        for node, sign in ((e.tail, 1), (e.head, -1)):
            if node in index:
                r.append(index[node])
                c.append(k)
                v.append(sign)
    A = sp.coo_matrix((np.array(v, dtype=int), (np.array(r, dtype=int), np.array(c, dtype=int))),
                      shape=(len(rows), len(sg.elements)))
    return A.tocsr(), rows  # tocsr sums the two entries of a self-loop to 0


def minimum_spanning_tree(sg: SystemGraph, weights: Mapping[str, float] | None = None) -> tuple[str, ...]:
    """Names of the branches of the minimum cost spanning tree (Kruskal, with networkx's union-find).

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
    """The matrices of seed 004, Eqs. 1-4, for one spanning tree (all ``scipy.sparse`` CSR, int).

    branches, chords : element names, in the column order used below.
    nodes : row node names of A (ground left out).
    A : (v-1, e), columns in element order e1..en.
    A_T, A_C : (v-1, v-1) and (v-1, e-v+1), Eq. 1 (``[A_T A_C]`` is A with its
        columns ordered branches first).
    cutset : (v-1, e), ``[U_T  A_T^-1 A_C]`` in branch-then-chord order, Eq. 2.
    B_T : (e-v+1, v-1), Eq. 4.
    B : (e-v+1, e), ``[B_T  U_C]`` in branch-then-chord order, Eq. 3.
    """

    branches: tuple[str, ...]
    chords: tuple[str, ...]
    nodes: tuple[str, ...]
    A: sp.csr_matrix
    A_T: sp.csr_matrix
    A_C: sp.csr_matrix
    cutset: sp.csr_matrix
    B_T: sp.csr_matrix
    B: sp.csr_matrix

    @property
    def columns(self) -> tuple[str, ...]:
        """Element names of the columns of ``[A_T A_C]``, ``cutset`` and ``B``."""
        return self.branches + self.chords

    def A_ordered(self) -> sp.csr_matrix:
        """``[A_T  A_C]``: A with columns in branch-then-chord order."""
        return sp.hstack([self.A_T, self.A_C], format="csr")

    def B_in_element_order(self) -> sp.csr_matrix:
        """B with its columns back in element order e1..en (so ``A @ B.T == 0``)."""
        idx = np.array([int(n[1:]) - 1 for n in self.columns], dtype=int)
        perm = sp.csr_matrix((np.ones(len(idx), dtype=int), (np.arange(len(idx)), idx)),
                             shape=(len(idx), len(idx)))
        return (self.B @ perm).tocsr()


def _rooted_tree(sg: SystemGraph, branches: tuple[str, ...]):
    """Parent element, parent node and depth of every node in the tree ``branches``, from ground.

    Returns (up, parent, depth): ``up[n]`` the branch joining node n to its
    parent, ``parent[n]`` that node, ``depth[n]`` its number of branches to
    ground.  ValueError when ``branches`` is not a spanning tree.
    """
    adjacent: dict[str, list] = {n: [] for n in sg.nodes}
    for name in branches:
        e = sg.element(name)
        adjacent[e.tail].append((e, e.head))
        adjacent[e.head].append((e, e.tail))
    up, parent, depth = {GROUND: None}, {GROUND: None}, {GROUND: 0}
    stack = [GROUND]
    while stack:
        n = stack.pop()
        for e, m in adjacent[n]:
            if m in depth:
                if up[n] is not e:
                    raise ValueError("the given branches do not form a spanning tree (they close a circuit)")
                continue
            up[m], parent[m], depth[m] = e, n, depth[n] + 1
            stack.append(m)
    if len(depth) != len(sg.nodes):
        raise ValueError("the given branches do not form a spanning tree (they do not reach every node)")
    return up, parent, depth


def oriented_branches(tail: str, head: str, up, parent) -> list[tuple[str, int]]:
    """Branches on the tree path from ``tail`` to ``head`` (:func:`dynamics.topology.tree_path`), each
    with ``+1`` when the path traverses it from its tail to its head, else ``-1`` (see module docstring)."""
    nodes = topology.tree_path(parent, tail, head, GROUND)
    out = []
    for a, b in zip(nodes, nodes[1:]):
        e = up[a] if parent[a] == b else up[b]
        out.append((e.name, 1 if e.tail == a else -1))
    return out


def _identity_block(n: int) -> sp.csr_matrix:
    return sp.identity(n, dtype=int, format="csr")


def topology_matrices(sg: SystemGraph, weights: Mapping[str, float] | None = None,
                      branches: tuple[str, ...] | None = None) -> TopologyMatrices:
    """Incidence, cut-set and circuit matrices (seed 004, Eqs. 1-4), sparse.

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
        branches = minimum_spanning_tree(sg, weights)
    if len(branches) != len(rows):
        raise ValueError(f"a spanning tree has {len(rows)} branches, got {len(branches)} "
                         "(is the graph connected?)")
    up, parent, _ = _rooted_tree(sg, tuple(branches))
    bset = set(branches)
    chords = tuple(e.name for e in sg.elements if e.name not in bset)
    A_T = A[:, [sg.element(n).index for n in branches]].tocsr()
    A_C = A[:, [sg.element(n).index for n in chords]].tocsr()
    branch_col = {n: i for i, n in enumerate(branches)}
    r, c, v = [], [], []
    for k, name in enumerate(chords):
        e = sg.element(name)
        for b, sign in oriented_branches(e.tail, e.head, up, parent):
            r.append(branch_col[b])
            c.append(k)
            v.append(sign)
    X = sp.csr_matrix((np.array(v, dtype=int), (np.array(r, dtype=int), np.array(c, dtype=int))),
                      shape=(len(rows), len(chords)))  # A_T^-1 A_C
    cutset = sp.hstack([_identity_block(len(rows)), X], format="csr")
    B_T = (-X.T).tocsr()
    B = sp.hstack([B_T, _identity_block(len(chords))], format="csr")
    return TopologyMatrices(tuple(branches), chords, rows, A, A_T, A_C, cutset, B_T, B)
