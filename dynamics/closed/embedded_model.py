"""Building a constraint-embedded model: loop sets, compound nodes, dependent coordinates.

The construction half of constraint embedding (:mod:`dynamics.embedding` states
the method; seed 000 sections 5-6): the loops closed by the chords become
compound nodes of the aggregated tree (:func:`dynamics.topology.loop_sets`,
:func:`dynamics.closed.aggregated.aggregate_tree`), and for each the independent
coordinates are chosen -- actuated joints first, then by QR with column
pivoting of the closure Jacobian ``G_S`` at the reference configuration; the
``r = rank G_S`` pivot columns are the dependent coordinates ``theta_d`` and
``r`` rows of ``G_S`` are kept (the others are redundant constraints).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.linalg as sla

from ..batch import prepare
from ..model import SKOModel, TreeCoordinates
from ..sko import SKOTree
from ..tolerances import CLOSURE_RANK_RTOL, CLOSURE_TOL, SINGULAR_FLOOR
from ..topology import loop_sets
from .aggregated import aggregate_tree
from .closure import ChordSet, ClosureError, chord_set, kinematics
from .coupling import coupling_pairs
from .embedded_coordinates import complete_configuration
from .embedded_state import constraint_terms, select_columns

logger = logging.getLogger(__name__)

__all__ = ["EmbeddedLoop", "EmbeddedModel", "embed", "coordinate_names"]


def coordinate_names(model: SKOModel) -> list[tuple[str, str]]:
    """``(joint, coordinate)`` per velocity coordinate of the tree: ``joint`` or ``joint[i]``."""
    names = []
    for jn, nk in zip(model.joint_names, model.tree.nv_node.tolist()):
        names.extend([(jn, jn)] if nk == 1 else [(jn, f"{jn}[{i}]") for i in range(nk)])
    return names


@dataclass(frozen=True, eq=False)
class EmbeddedLoop:
    """One compound node carrying loop constraints.

    node : aggregated node index;  bodies : its member bodies (increasing)
    chords : indices into :attr:`EmbeddedModel.chords`
    v_idx : (n_S,) tree v indices of the node, in node order
    ind, dep : positions in ``v_idx`` of the independent / dependent coordinates
    rows : kept constraint rows (indices into ``all_rows``)
    name : chord and coupling names joined by ``+``;  joints : tree joints of the node, then the chords
    all_rows : the rows of ``chords`` in the model's :class:`dynamics.closed.closure.ChordSet`, then those of
        ``couplings`` (coupling ``i`` is row ``chord_set.n_rows + i``)
    couplings : indices into :attr:`EmbeddedModel.couplings`
    """

    node: int
    bodies: tuple
    chords: tuple
    v_idx: np.ndarray
    ind: np.ndarray
    dep: np.ndarray
    rows: np.ndarray
    name: str
    joints: tuple
    all_rows: np.ndarray
    couplings: tuple = ()

    def error(self, message, model, dep=None) -> ClosureError:
        dep = self.dep if dep is None else dep
        names = tuple(model.coordinate_names[self.v_idx[i]] for i in dep)
        return ClosureError(message, self.name, self.joints, names)


class EmbeddedModel(TreeCoordinates):
    """A closed-chain mechanism as an SKO tree with loop-constrained compound nodes.

    Attributes
    ----------
    tree_model : SKOModel -- the spanning tree
    chords : tuple of Chord;  chord_set : their stacked constraint rows (:class:`dynamics.closed.closure.ChordSet`)
    couplings : tuple of :class:`dynamics.closed.coupling.JointCoupling` (constraint rows after the chords')
    agg : dynamics.closed.aggregated.AggregatedTree -- the tree with the loop sets aggregated
    loops : tuple of EmbeddedLoop
    etree : SKOTree -- the embedded tree (compound nodes with ``n = #independent``)
    joint_names : tree joints (all joints of the mechanism except the chords)
    nq, nv : full tree coordinate counts;  gravity : (3,)
    coordinate_names : (nv,) names of the velocity coordinates (``joint`` or ``joint[i]``)
    independent : names of the independent coordinates; independent_v : their v indices
    dependent : names; dependent_v : indices
    """

    kind = "embedded"

    def __init__(self, tree_model: SKOModel, chords, chord_set: ChordSet, agg, loops, q_ref, couplings=()):
        super().__init__(tree_model)
        self.chords = tuple(chords)
        self.couplings = tuple(couplings)
        self.chord_set = chord_set
        self.agg = agg
        self.loops = tuple(loops)
        self.coordinate_names = tuple(cn for _, cn in coordinate_names(tree_model))
        dep = np.zeros(self.nv, dtype=bool)
        for lp in self.loops:
            dep[lp.v_idx[lp.dep]] = True
        self.dependent_v = np.flatnonzero(dep)
        self.independent_v = np.flatnonzero(~dep)
        self.independent = tuple(self.coordinate_names[i] for i in self.independent_v)
        self.dependent = tuple(self.coordinate_names[i] for i in self.dependent_v)
        self.loop_of_node = {lp.node: lp for lp in self.loops}
        t = agg.tree
        nv_e = np.array([len(self.loop_of_node[a].ind) if a in self.loop_of_node else nk
                         for a, nk in enumerate(t.nv_node.tolist())], dtype=int)
        self.etree = SKOTree(t.parent, t.m, nv_e)
        # embedded generalized vector (node order) -> tree v indices
        self.e_to_v = np.concatenate(
            [self.loop_of_node[a].v_idx[self.loop_of_node[a].ind] if a in self.loop_of_node
             else agg.v_perm[agg.tree.v_slice(a)] for a in range(t.n_nodes)] + [np.zeros(0, dtype=int)]).astype(int)
        # position of each independent coordinate (sorted v order) in the embedded vector
        pos = {v: i for i, v in enumerate(self.e_to_v.tolist())}
        self.e_order = np.array([pos[v] for v in self.independent_v.tolist()], dtype=int)
        self._q_ref = np.asarray(q_ref, float)

    @property
    def n_independent(self) -> int:
        return len(self.independent_v)

    def neutral(self) -> np.ndarray:
        """The reference configuration, closed (nq,)."""
        return self._q_ref.copy()

    @cached_property
    def closed_flat(self):
        """The packed loop data of the compiled closed-chain kernels
        (:class:`dynamics.compiled.closed_layout.ClosedFlat`), made on first use (numpy only) and kept
        with the model; None for a model with joint couplings, which only the numpy reference evaluates."""
        from ..compiled.closed_layout import ClosedFlat

        return None if self.couplings else ClosedFlat(self)

    def create_data(self):
        """Work arrays of the compiled closed-chain kernels (:class:`dynamics.compiled.closed_layout.ClosedData`:
        the tree's ``Data`` and the loops' scratch), Pinocchio's ``Data``: pass it as ``data=`` to reuse
        one set per caller; one call at a time.  Imports no numba."""
        from ..compiled.closed_layout import ClosedData

        return ClosedData(self)

    @cached_property
    def default_data(self):
        """The :meth:`create_data` the compiled functions use when called without ``data=`` (made on first
        use, then kept with the model)."""
        return self.create_data()

    def __repr__(self) -> str:
        return (f"EmbeddedModel(n_bodies={self.tree_model.n_bodies}, loops={len(self.loops)}, "
                f"nv={self.nv}, independent={self.n_independent})")


def _independent_rows(G) -> tuple[int, np.ndarray]:
    """(r, rows): the numerical rank of G (relative :data:`CLOSURE_RANK_RTOL`) and r independent rows of it,
    increasing (QR with column pivoting of ``G^T``)."""
    sv = np.linalg.svd(G, compute_uv=False) if G.size else np.zeros(0)
    r = int(np.sum(sv > CLOSURE_RANK_RTOL * max(sv[0], SINGULAR_FLOOR))) if len(sv) else 0
    rows = np.sort(sla.qr(G.T, mode="economic", pivoting=True)[2][:r]) if r else np.zeros(0, dtype=int)
    return r, rows


def _dependent_columns(Gr, coord, r, actuated, forced) -> list:
    """Positions of ``r`` dependent coordinates among ``coord`` ((joint, coordinate) pairs): passive
    coordinates first, then actuated ones orthogonally to those already chosen; never a forced one."""
    free_pos = [i for i, (jn, cn) in enumerate(coord) if jn not in forced and cn not in forced]
    passive = [i for i in free_pos if coord[i][0] not in actuated]
    dep = select_columns(Gr, passive, r)
    if len(dep) < r:
        rest = [i for i in free_pos if i not in dep]
        Gres = Gr
        if dep:
            Q = np.linalg.qr(Gr[:, dep])[0]
            Gres = Gr - Q @ (Q.T @ Gr)
        dep = dep + select_columns(Gres, rest, r - len(dep))
    return dep


def _loop_chords(chords, agg, S, node) -> tuple[int, ...]:
    """Indices of the chords whose loop the compound node ``node`` (member set ``S``) closes."""
    base = agg.entry_parent[node]
    return tuple(i for i, c in enumerate(chords)
                 if (c.body_a in S or c.body_a == base) and (c.body_b in S or c.body_b == base)
                 and (c.body_a in S or c.body_b in S))


def _embedded_loop(m, chords, cs, G_ref, agg, S, names, actuated, forced, couplings=()) -> EmbeddedLoop:
    """The :class:`EmbeddedLoop` of one loop set ``S`` (``G_ref``: closure Jacobian at the reference)."""
    node = int(agg.node_of[min(S)])
    bodies = agg.members[node]
    cidx = _loop_chords(chords, agg, S, node)
    kidx = tuple(i for i, c in enumerate(couplings) if c.bodies[0] in S)
    v_idx = agg.v_perm[agg.tree.v_slice(node)]
    all_rows = np.concatenate([np.arange(cs.row_offset[i], cs.row_offset[i + 1]) for i in cidx]
                              + [np.array([cs.n_rows + i for i in kidx], dtype=int)]).astype(int)
    G = G_ref[np.ix_(all_rows, v_idx)]
    r, rows = _independent_rows(G)
    coord = [names[i] for i in v_idx]
    dep = _dependent_columns(G[rows], coord, r, actuated, forced)
    name = "+".join([chords[i].name for i in cidx] + [couplings[i].name for i in kidx])
    joints = tuple(m.joint_names[b] for b in bodies) + tuple(chords[i].name for i in cidx)
    if len(dep) < r:
        raise ClosureError("too few coordinates can serve as dependent coordinates "
                           f"(closure rank {r}, forced independent {sorted(forced)})", name, joints)
    dep = np.array(sorted(dep), dtype=int)
    ind = np.array([i for i in range(len(v_idx)) if i not in set(dep.tolist())], dtype=int)
    logger.debug("loop %s: %d coordinates, closure rank %d, dependent %s", name, len(v_idx), r,
                 [coord[i][1] for i in dep])
    return EmbeddedLoop(node, bodies, cidx, v_idx, ind, dep, rows, name, joints, all_rows, kidx)


def embed(tree_model: SKOModel, chords, actuated=(), independent=None, q_ref=None, couplings=()) -> EmbeddedModel:
    """Constraint-embed the loops closed by ``chords`` (and the joint ``couplings``) into the tree ``tree_model``.

    Parameters
    ----------
    tree_model : SKOModel -- the spanning tree
    chords : sequence of :class:`dynamics.closed.closure.Chord`
    couplings : sequence of :class:`dynamics.closed.coupling.JointCoupling` -- embedded like loop closures
    actuated : iterable of joint names -- kept independent when possible
    independent : iterable of joint or coordinate names, optional -- forced independent
        (a :class:`ClosureError` if the rest cannot serve as dependent coordinates)
    q_ref : (nq,) optional -- reference configuration (default ``tree_model.neutral()``);
        closed by Newton's method if it is not closed

    Returns
    -------
    EmbeddedModel
    """
    chords, couplings = tuple(chords), tuple(couplings)
    m = tree_model
    sets = loop_sets(m.parent.tolist(), [(c.body_a, c.body_b) for c in chords],
                     couplings=coupling_pairs(couplings))
    agg = aggregate_tree(m.tree, sets)
    q_ref = m.neutral() if q_ref is None else np.asarray(q_ref, float)
    names = coordinate_names(m)
    w = prepare(m, q_ref)[3]
    cs = chord_set(m, chords)
    unplaced = EmbeddedModel(m, chords, cs, agg, [], q_ref, couplings)
    terms = constraint_terms(unplaced, kinematics(m, w), q_ref)
    loops = [_embedded_loop(m, chords, cs, terms.G, agg, S, names, set(actuated), set(independent or ()),
                            couplings) for S in sets]
    em = EmbeddedModel(m, chords, cs, agg, loops, q_ref, couplings)
    em._q_ref = q_ref.copy() if all(_closed_as_is(terms.e, lp) for lp in loops) else complete_configuration(em, q_ref)
    return em


def _closed_as_is(e_ref, lp: EmbeddedLoop) -> bool:
    """True when :func:`complete_configuration` leaves loop ``lp`` as it is at the reference
    configuration (closure error ``e_ref`` (all rows) there): no error at all, or within
    :data:`CLOSURE_TOL` and no dependent coordinate to move."""
    err = np.max(np.abs(e_ref[lp.all_rows]), initial=0.0)
    return err == 0.0 or (err <= CLOSURE_TOL and len(lp.dep) == 0)
