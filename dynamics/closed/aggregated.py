"""SKO model of an aggregated tree (seed 000, section 6: Lemmas 7-9, Corollary 6.1).

Aggregating disjoint node sets ``S`` of a tree, each satisfying the aggregation
condition (seed 000, Assumption 1), gives a coarser tree ``T_S`` whose node ``S``
stands for all its member bodies (weight dimension ``m_S = sum m_k``, Eq. 29).
With ``T_a = diag(I, A_S^-1, I)`` (Eq. 35) its SKO model is (Lemmas 7-9):

* ``E_A_a = I - (I - E_A) T_a^-1`` (Eq. 31): the block ``A_a(X, Y)`` between an
  aggregated parent ``X`` and child ``Y`` has, in the rows of the original parent
  ``p`` of ``Y``'s members and the columns of member ``s``, ``A(p, s)`` -- the path
  product of the original ``phi`` from ``p`` down to ``s`` (Eq. 34: ``E_S A_S`` has
  a single, full row); all its other rows are zero;
* ``A_a = T_a A`` (Eq. 35), the SPO of ``E_A_a``; the diagonal block of a compound
  node is ``I``;
* ``H_a = H T_a^-1`` (Eq. 37): the compound node's joint map is
  ``H_S A_S`` -- block ``(i, j)`` is ``H(s_i) A_S(s_i, s_j)`` for ``s_i`` an
  ancestor-or-self of ``s_j`` inside ``S``, zero otherwise;
* ``M`` unchanged (block diagonal ``diag M(s_i)`` on a compound node);
* velocity terms (Eq. 38): ``a_a = T_a^-* a``, i.e. ``a_S -> A_S^* a_S`` on a
  compound node, and ``b`` unchanged.

Then ``M = H_a A_a M A_a^* H_a^*`` and ``C = H_a A_a (M A_a^* a_a + b)`` equal the
original mass matrix and Coriolis vector (Corollary 6.1, Eqs. 41-42), so every
generic O(N) algorithm of :mod:`dynamics` (Newton-Euler, composite inertia,
Riccati / articulated body, innovations, ``M^-1``, ``det M``) runs unchanged on
the aggregated weights: they only read ``tree.m``, ``tree.nv_node`` and the
blocks, and none assumes 6-dimensional nodes.

Gravity: the rigid-body model adds the ground acceleration to ``a`` of the root
bodies; it is carried into ``a_a`` by ``A_S^*`` like the other Coriolis terms.

Node order: aggregated nodes are numbered by their smallest member (so
``parent[k] < k`` holds again); members of a compound node are stacked in
increasing original index (base first).  Generalized vectors of the aggregated
tree are the original ones permuted by :attr:`AggregatedTree.v_perm`; the
model-level functions below take and return vectors in the *original* order.

References
----------
Jain, A., Multibody graph transformations and analysis, Part I (seed 000),
Eqs. 29-42.  The graph side (which sets qualify, block patterns) is
:mod:`graph.aggregation` and :mod:`graph.aggregation.blocks`; this module does
not import it (``dynamics`` imports no other package).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..aba import forward_dynamics_sko
from ..batch import node_list, out, prepare
from ..batch import as_batch
from ..crba import mass_matrix_sko
from ..innovations import logdet_sko, mass_matrix_inverse_sko
from ..model import SKOModel, TreeCoordinates
from ..rnea import newton_euler
from ..sko import SKOTree, SKOWeights
from ..topology import satisfies_aggregation_condition

__all__ = ["AggregatedTree", "AggregatedModel", "aggregate_tree", "aggregated_weights",
           "aggregated_velocity_terms", "compound_spo", "mass_matrix", "inverse_dynamics",
           "forward_dynamics", "bias_forces", "mass_matrix_inverse", "mass_matrix_det"]


@dataclass(frozen=True, eq=False)
class AggregatedTree:
    """Static structure of an aggregated tree.

    Attributes
    ----------
    base : SKOTree -- the original tree
    tree : SKOTree -- the aggregated tree ``T_S`` (``m_S = sum m_k``, ``n_S = sum n_k``)
    members : tuple of tuple of int -- original nodes of each aggregated node, increasing
    node_of : (n_base,) int -- aggregated node holding each original node
    entry_parent : (n,) int -- original parent of each aggregated node's members (-1: ground)
    v_perm : (N,) int -- ``theta_aggregated = theta_original[v_perm]``
    """

    base: SKOTree
    tree: SKOTree
    members: tuple
    node_of: np.ndarray
    entry_parent: np.ndarray
    v_perm: np.ndarray

    @cached_property
    def v_inv(self) -> np.ndarray:
        """``theta_original = theta_aggregated[v_inv]``."""
        inv = np.empty_like(self.v_perm)
        inv[self.v_perm] = np.arange(len(self.v_perm))
        return inv

    @cached_property
    def local_ancestors(self) -> tuple:
        """Per aggregated node: for each member position j, the member positions i that
        are ancestors-or-self of member j inside the node (i <= j), nearest last."""
        out = []
        for mem in self.members:
            pos = {s: i for i, s in enumerate(mem)}
            anc = []
            for s in mem:
                chain = [pos[s]]
                p = int(self.base.parent[s])
                while p in pos:
                    chain.append(pos[p])
                    p = int(self.base.parent[p])
                anc.append(tuple(reversed(chain)))
            out.append(tuple(anc))
        return tuple(out)

    @cached_property
    def member_offsets(self) -> tuple:
        """Per aggregated node: (x offsets (|S|+1,), v offsets (|S|+1,)) of its members."""
        res = []
        for mem in self.members:
            xo = np.concatenate([[0], np.cumsum([self.base.m[s] for s in mem])]).astype(int)
            vo = np.concatenate([[0], np.cumsum([self.base.nv_node[s] for s in mem])]).astype(int)
            res.append((xo, vo))
        return tuple(res)


def aggregate_tree(tree: SKOTree, sets) -> AggregatedTree:
    """Aggregate disjoint node sets of ``tree`` into compound nodes (seed 000, Lemma 5).

    Parameters
    ----------
    tree : SKOTree
    sets : iterable of iterables of int
        Pairwise disjoint node sets, each satisfying the aggregation condition
        (e.g. :func:`graph.aggregation.loop_aggregation_sets` on the same tree).

    Returns
    -------
    AggregatedTree

    Raises
    ------
    ValueError
        If the sets overlap or one fails the aggregation condition.
    """
    n = tree.n_nodes
    owner = -np.ones(n, dtype=int)
    groups = []
    for i, S in enumerate(sets):
        S = sorted(int(s) for s in S)
        if not satisfies_aggregation_condition(tree.parent, {int(s) for s in S}, -1):
            raise ValueError(f"node set {S} does not satisfy the aggregation condition "
                             "(seed 000, Assumption 1); aggregate its S_A instead")
        if np.any(owner[S] >= 0):
            raise ValueError(f"node set {S} overlaps another set")
        owner[S] = i
        groups.append(tuple(S))
    for k in range(n):
        if owner[k] < 0:
            groups.append((k,))
    groups.sort(key=lambda g: g[0])
    node_of = np.empty(n, dtype=int)
    for a, g in enumerate(groups):
        node_of[list(g)] = a
    parent_a, entry = [], []
    for a, g in enumerate(groups):
        p = int(tree.parent[g[0]])
        entry.append(p)
        parent_a.append(-1 if p < 0 else int(node_of[p]))
    m_a = [int(sum(tree.m[s] for s in g)) for g in groups]
    n_a = [int(sum(tree.nv_node[s] for s in g)) for g in groups]
    v_perm = np.concatenate([np.arange(tree.v_offset[s], tree.v_offset[s + 1]) for g in groups for s in g]
                            + [np.zeros(0, dtype=int)]).astype(int)
    return AggregatedTree(tree, SKOTree(np.array(parent_a), np.array(m_a), np.array(n_a)), tuple(groups),
                          node_of, np.array(entry, dtype=int), v_perm)


def compound_spo(agg: AggregatedTree, w: SKOWeights, a: int) -> dict:
    """Blocks ``A_S(s_i, s_j)`` of the SPO of compound node ``a`` (member positions i, j).

    Returns
    -------
    dict (i, j) -> (B, m_i, m_j), for ``s_i`` an ancestor-or-self of ``s_j`` in ``S``.
    """
    mem = agg.members[a]
    A = {}
    for j, s in enumerate(mem):
        anc = agg.local_ancestors[a][j]
        A[(j, j)] = np.eye(int(agg.base.m[s]))[None]
        if len(anc) > 1:
            pj = anc[-2]
            for i in anc[:-1]:
                A[(i, j)] = A[(i, pj)] @ w.phi[s]
    return A


def aggregated_weights(agg: AggregatedTree, w: SKOWeights, spo: list | None = None) -> SKOWeights:
    """Weights ``(phi_a, H_a, M)`` of the aggregated tree (seed 000, Eqs. 31, 35, 37).

    Parameters
    ----------
    agg : AggregatedTree
    w : SKOWeights of ``agg.base``
    spo : list of :func:`compound_spo` dicts per aggregated node, optional

    Returns
    -------
    SKOWeights of ``agg.tree``; ``extras["spo"]`` holds the ``A_S`` blocks.
    """
    t, base = agg.tree, agg.base
    B = w.batch
    if spo is None:
        spo = [compound_spo(agg, w, a) if len(agg.members[a]) > 1 else None for a in range(t.n_nodes)]
    phi, H, M = [], [], []
    for a, mem in enumerate(agg.members):
        if len(mem) == 1:
            s = mem[0]
            H.append(w.H[s])
            M.append(w.M[s])
            p = t.parent[a]
            if p < 0:
                phi.append(None)
            elif len(agg.members[p]) == 1:
                phi.append(w.phi[s])
            else:
                blk = np.zeros((B, int(t.m[p]), int(t.m[a])))
                xo = agg.member_offsets[p][0]
                i = agg.members[p].index(int(agg.entry_parent[a]))
                blk[:, xo[i]:xo[i + 1], :] = w.phi[s]
                phi.append(blk)
            continue
        xo, vo = agg.member_offsets[a]
        A = spo[a]
        Ha = np.zeros((B, int(t.nv_node[a]), int(t.m[a])))
        Ma = np.zeros((1, int(t.m[a]), int(t.m[a])))
        for j, s in enumerate(mem):
            Ma[:, xo[j]:xo[j + 1], xo[j]:xo[j + 1]] = w.M[s]
            for i in agg.local_ancestors[a][j]:
                si = mem[i]
                if base.nv_node[si]:
                    Ha[:, vo[i]:vo[i + 1], xo[j]:xo[j + 1]] = w.H[si] @ A[(i, j)]
        H.append(Ha)
        M.append(Ma)
        p = t.parent[a]
        if p < 0:
            phi.append(None)
            continue
        pe = int(agg.entry_parent[a])
        pxo = agg.member_offsets[p][0]
        ip = agg.members[p].index(pe)
        blk = np.zeros((B, int(t.m[p]), int(t.m[a])))
        for j, s in enumerate(mem):
            r = agg.local_ancestors[a][j][0]
            blk[:, pxo[ip]:pxo[ip + 1], xo[j]:xo[j + 1]] = w.phi[mem[r]] @ A[(r, j)]
        phi.append(blk)
    wa = SKOWeights(t, phi, H, M, B, armature=aggregated_armature(agg, w.armature))
    wa.extras["spo"] = spo
    return wa


def aggregated_armature(agg: AggregatedTree, armature: list | None) -> list | None:
    """Rotor inertia of each aggregated node: the members' blocks on the diagonal (the
    coordinates of a compound node are its members', in member order), or None."""
    if armature is None:
        return None
    out = []
    for a, mem in enumerate(agg.members):
        if len(mem) == 1:
            out.append(armature[mem[0]])
            continue
        vo = agg.member_offsets[a][1]
        n = int(agg.tree.nv_node[a])
        Ja = np.zeros((1, n, n))
        for j, s in enumerate(mem):
            Ja[:, vo[j]:vo[j + 1], vo[j]:vo[j + 1]] = armature[s]
        out.append(Ja)
    return out


def aggregated_velocity_terms(agg: AggregatedTree, wa: SKOWeights, a: list, b: list):
    """``a_a = T_a^-* a`` and ``b_a = b`` stacked per aggregated node (seed 000, Eq. 38).

    Parameters
    ----------
    a, b : node lists of the original tree, (B, m_k)

    Returns
    -------
    a_a, b_a : node lists of the aggregated tree, (B, m_S)
    """
    a_a, b_a = [], []
    for k, mem in enumerate(agg.members):
        if len(mem) == 1:
            a_a.append(a[mem[0]])
            b_a.append(b[mem[0]])
            continue
        A = wa.extras["spo"][k]
        parts = []
        for j, s in enumerate(mem):
            x = a[s]
            for i in agg.local_ancestors[k][j][:-1]:
                x = x + (a[mem[i]][:, None, :] @ A[(i, j)])[:, 0]
            parts.append(x)
        a_a.append(np.concatenate(parts, axis=1))
        b_a.append(np.concatenate([b[s] for s in mem], axis=1))
    return a_a, b_a


class AggregatedModel(TreeCoordinates):
    """A rigid-body :class:`dynamics.SKOModel` seen through an aggregated tree.

    Parameters
    ----------
    model : SKOModel
    sets : iterable of iterables of int -- body sets to aggregate (see :func:`aggregate_tree`)

    The public functions of this module take and return generalized vectors in
    the original model's order (``model.q_slice``/``v_slice`` apply unchanged).
    """

    kind = "aggregated"

    def __init__(self, model: SKOModel, sets):
        super().__init__(model)
        self.model = model
        self.agg = aggregate_tree(model.tree, sets)

    def state(self, q, v=None):
        """Aggregated weights and velocity terms at (q, v): (wa, a_a, b_a, qb, vb, single)."""
        qb, vb, single, w, V, ac, bc, ag = prepare(self.model, q, v)
        wa = aggregated_weights(self.agg, w)
        if v is None:
            a = [ag[k] for k in range(self.model.n_bodies)]
            b = [np.zeros_like(ag[k]) for k in range(self.model.n_bodies)]
        else:
            aa, bb = node_list(ac), node_list(bc)
            a = [aa[k] + ag[k] for k in range(self.model.n_bodies)]
            b = list(bb)
        a_a, b_a = aggregated_velocity_terms(self.agg, wa, a, b)
        return wa, a_a, b_a, qb, vb, single

    def __repr__(self):
        return f"AggregatedModel(n_nodes={self.agg.tree.n_nodes} of {self.model.n_bodies}, nv={self.nv})"


def _perm_matrix_back(agg, X):
    """(B, N, N) in aggregated order -> original order."""
    i = agg.v_inv
    return X[:, i][:, :, i]


def mass_matrix(am: AggregatedModel, q):
    """``H_a A_a M A_a^* H_a^*`` (Eq. 40) in the original coordinate order, (nv, nv) or (B, nv, nv)."""
    wa, *_, single = am.state(q)
    return out(_perm_matrix_back(am.agg, mass_matrix_sko(wa)), single)


def inverse_dynamics(am: AggregatedModel, q, v, a):
    """``T = H_a A_a (M alpha + b)`` with ``alpha = A_a^* (H_a^* a + a_a)`` (Eqs. 38-39)."""
    wa, a_a, b_a, qb, vb, single = am.state(q, v)
    ab, s3 = as_batch(a, am.nv, "a")
    ab = np.broadcast_to(ab, (wa.batch, am.nv))
    T, _, _ = newton_euler(wa, ab[:, am.agg.v_perm], a_a, b_a)
    return out(T[:, am.agg.v_inv], single and s3)


def bias_forces(am: AggregatedModel, q, v):
    """``C = H_a A_a (M A_a^* a_a + b)`` (Eq. 40), original order."""
    return inverse_dynamics(am, q, v, np.zeros(am.nv))


def forward_dynamics(am: AggregatedModel, q, v, tau):
    """Articulated-body forward dynamics (seed 001 Algorithm 6.1) on the aggregated tree."""
    wa, a_a, b_a, qb, vb, single = am.state(q, v)
    tb, s3 = as_batch(tau, am.nv, "tau")
    tb = np.broadcast_to(tb, (wa.batch, am.nv))
    qdd, _ = forward_dynamics_sko(wa, tb[:, am.agg.v_perm], a_a, b_a)
    return out(qdd[:, am.agg.v_inv], single and s3)


def mass_matrix_inverse(am: AggregatedModel, q):
    """``M^-1`` from the innovations factors of the aggregated tree (seed 001 Eq. 51)."""
    wa, *_, single = am.state(q)
    return out(_perm_matrix_back(am.agg, mass_matrix_inverse_sko(wa)), single)


def mass_matrix_det(am: AggregatedModel, q):
    """``det M = prod det D(k)`` over the aggregated nodes (seed 001 Eq. 53)."""
    wa, *_, single = am.state(q)
    return out(np.exp(logdet_sko(wa)), single)
