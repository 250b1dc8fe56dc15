"""Constraint embedding of closed chains into an SKO tree (seed 000 sections 5-6; seed 002 section 6).

A closed-chain mechanism is a spanning tree (a rigid-body :class:`dynamics.SKOModel`)
plus *chords*, the joints that close its loops (:class:`dynamics.closed.closure.Chord`).
For every chord ``a - b`` the bodies of its loop that move relative to the loop's
base -- the tree path from ``a`` to ``b`` minus their lowest common ancestor -- form
a set satisfying the aggregation condition (seed 000 Lemma 6.3, the same set as
:func:`graph.aggregation.loop_aggregation_nodes`); sets that share a body are
merged into the aggregation subgraph ``S_A`` of their union (as
:func:`graph.aggregation.loop_aggregation_sets`).  Each set becomes one compound
node of the aggregated tree (:mod:`dynamics.closed.aggregated`, Lemmas 7-9), and since a
loop's closure depends only on the coordinates of its own compound node, the
node's coordinates ``theta_S`` are restricted locally:

* independent coordinates ``theta_i``: actuated joints first, then chosen by QR
  with column pivoting of the closure Jacobian ``G_S`` at the reference
  configuration (the pivot columns are the well-conditioned *dependent* set
  ``theta_d``, ``r = rank G_S`` of them; ``r`` rows of ``G_S`` are kept likewise, the
  others being redundant constraints).  This *default* split names the minimal
  coordinates (``independent``, :func:`mass_matrix`); where its dependent block is
  ill-conditioned, the functions that do not depend on the parametrization (forward
  dynamics, constraint forces, closing loops from a guess, :func:`complete_state`)
  re-choose rows and dependent coordinates at that state by the same factorization
  (generalized coordinate partitioning, Wehage & Haug 1982: :func:`partition_at`,
  :func:`best_partition`, :func:`rows_at`), and a rank below ``r`` there is a singular
  configuration (the mechanism changes mobility);
* positions: ``theta_d`` solves ``e(theta) = 0`` by Newton's method (exact
  Jacobian, :mod:`dynamics.closed.closure`);
* velocities: ``theta_dot_S = X theta_dot_i`` with the null-space basis
  ``X = [I; -G_d^-1 G_i]`` of ``G_S`` (rows permuted to the node's order);
* accelerations: ``theta_ddot_S = X theta_ddot_i + Xdot theta_dot_i`` where
  ``Xdot theta_dot_i = [0; -G_d^-1 gamma]``, ``gamma = Gdot v`` (the velocity-
  dependent term the map brings).

The embedded SKO model of the aggregated tree then has, on a compound node, the
joint map ``H_e = X^* H_a`` (``H_a = H_S A_S``, seed 000 Eq. 37), the Coriolis term
``a_e = A_S^* a_S + H_a^* Xdot theta_dot_i`` and the generalized force
``T_e = X^* T_S``; elsewhere it is the aggregated model.  It is again an SKO model
(block-diagonal ``H_e``, SPO ``A_a``, block-diagonal ``M``), so the O(N) algorithms
of :mod:`dynamics` (articulated-body forward dynamics, Newton-Euler, composite
inertia) run on it unchanged and give the dynamics in minimal coordinates:
``M_e = X^* M X`` and ``C_e = X^* (C + M Xdot theta_dot_i)``.  This is the
"constraint embedding" of Jain's Part II (cited in seed 000 and seed 002,
section 6: compound bodies make tree techniques apply to closed graphs).

Singular configurations are never returned as numbers: a loop that cannot close
(Newton fails, or redundant constraints are violated) or whose ``G_d`` loses rank
raises :class:`dynamics.closed.closure.ClosureError` naming the loop and its joints.

Functions take one configuration (``q`` (nq,), ``v`` (nv,)); the states and results
are full tree vectors in the tree model's order (``q_slice``/``v_slice`` by joint
name), dependent joints included; the chords' own coordinates come from
:func:`chord_coordinates`.

Public API
----------
``embed(tree_model, chords, actuated=(), independent=None, q_ref=None) -> EmbeddedModel``;
``loop_sets`` (:func:`dynamics.topology.loop_sets` on the chords' body pairs).  The
composer's tree model is converted to chords by :mod:`graph.model.closed`
(``chords_from_tree_model``, ``embed_tree_model``).
``EmbeddedModel``: ``joint_names``, ``nq``, ``nv``, ``q_slice(name)``, ``v_slice(name)``,
``gravity``, ``neutral()``, ``independent`` / ``independent_v``, ``dependent`` /
``dependent_v``, ``coordinate_names``, ``loops``, ``chords``.
``complete_configuration(em, q_guess=None, q_ind=None)``, ``complete_velocity(em, q, v_ind)``,
``complete_state(em, q, v)`` (the split chosen at the state), ``partition_at``, ``choose_partition``,
``partition_quality`` (the splits a simulator holds, :mod:`dynamics.simulation.closed`),
``project_configuration(em, q)``, ``project_velocity(em, q, v)``, ``project_state(em, q, v)``,
``forward_dynamics(em, q, v, tau)``,
``inverse_dynamics(em, q, v, a)``, ``mass_matrix(em, q)`` (minimal coordinates),
``constraint_forces(em, q, v, tau)``, ``chord_coordinates(em, q, v=None)``,
``embedded_state(em, q, v=None)`` (the embedded SKO weights, for the generic algorithms).

The module reads in four parts: building the model (compound nodes, choice of the dependent
coordinates), per-configuration terms (``X``, ``Xdot theta_dot_i``, embedded weights),
positions and velocities (closing loops, projections, chord coordinates) and dynamics in
minimal coordinates (forward and inverse dynamics, mass matrix, constraint forces).
:mod:`dynamics.embedding` is the public name of this module (the public contract).
Tolerances are in :mod:`dynamics.tolerances`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.linalg as sla

from .. import joints as J
from .. import topology
from ..aba import forward_dynamics_sko
from ..batch import node_list, prepare
from ..crba import mass_matrix_sko
from ..jacobians import jacobian as tree_jacobian
from ..kinematics import integrate
from ..model import SKOModel, TreeCoordinates
from ..opspace import inertia_from_compliance, task_rows
from ..records import record
from ..rnea import inverse_dynamics as tree_inverse_dynamics
from ..rnea import newton_euler
from ..sko import SKOTree, SKOWeights
from ..spatial import matrix_to_quat
from ..tolerances import (CLOSURE_CHECK_FACTOR, CLOSURE_RANK_RTOL, CLOSURE_TOL, GRAPH_RANK_RTOL, NEWTON_MAX_ITER,
                          NEWTON_MAX_STEP, NEWTON_ROUNDING_STEP, PARTITION_RCOND_RATIO, RCOND_MIN, RCOND_SWITCH,
                          ROUNDED_CLOSURE_TOL, SINGULAR_FLOOR)
from .aggregated import aggregate_tree, aggregated_velocity_terms, aggregated_weights
from .closure import ChordSet, ChordTerms, ClosureError, chord_set, chord_set_terms, kinematics, relative_motion
from .coupling import coupling_pairs, coupling_residuals
from .linear import linear_couplings

logger = logging.getLogger(__name__)

__all__ = ["EmbeddedLoop", "EmbeddedModel", "embed", "coordinate_names", "EmbeddedState", "embedded_state",
           "loop_closure", "dependent_inverse", "check_closed", "select_columns", "complete_configuration",
           "complete_velocity", "complete_state", "partition_at", "best_partition", "rows_at",
           "choose_partition", "partition_quality", "null_space_basis",
           "project_configuration", "project_velocity", "project_state",
           "chord_coordinates", "forward_dynamics", "inverse_dynamics", "mass_matrix", "bias_forces", "jacobian",
           "operational_space_inertia", "constraint_forces", "ConstraintForces", "loop_sets"]


# ==================== building the model: loop sets, compound nodes, dependent coordinates

def coordinate_names(model: SKOModel) -> list[tuple[str, str]]:
    """``(joint, coordinate)`` per velocity coordinate of the tree: ``joint`` or ``joint[i]``."""
    names = []
    for jn, nk in zip(model.joint_names, model.tree.nv_node.tolist()):
        names.extend([(jn, jn)] if nk == 1 else [(jn, f"{jn}[{i}]") for i in range(nk)])
    return names


@record
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
    actuated : positions in ``v_idx`` of actuated coordinates (kept independent where possible when the
        split is re-chosen at a state, :func:`partition_at`);  forced : positions never dependent in the
        default split
    slack : closure error (m, rad) the constraint rows dropped as dependent may keep while the kept ones
        close (:data:`ROUNDED_CLOSURE_TOL` when the loop has dropped rows, else 0): exactly dependent rows
        stay closed with the kept ones, nearly dependent rows of a file's rounded geometry (toddlerbot's
        neck) keep the rounding, which is not an error of ours
    ``ind``, ``dep`` and ``rows`` are the *default* split, chosen at the reference configuration; the
    functions that take ``adaptive`` re-choose it per state (:func:`partition_at`).
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
    actuated: tuple = ()
    forced: tuple = ()
    slack: float = 0.0

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
        (:class:`dynamics.compiled.closed_layout.ClosedFlat`, joint couplings included), made on first use
        (numpy only) and kept with the model."""
        from ..compiled.closed_layout import ClosedFlat

        return ClosedFlat(self)

    @cached_property
    def constant_basis(self) -> np.ndarray | None:
        """``X`` (nv, n_independent) of :func:`null_space_basis` when it does not depend on q: no
        loop-closing joints and every coupling linear (URDF ``mimic``, a first-degree ``polycoef``),
        so ``v = X v_ind`` everywhere and ``Xdot = 0``; None otherwise."""
        if self.chords or any(float(a) != 0.0 for c in self.couplings for a in c.coefficients[2:]):
            return None
        return _null_space_basis(self, self._q_ref)

    @cached_property
    def linear_couplings(self):
        """The closed-form embedding of linear joint couplings (:class:`dynamics.closed.linear.LinearCouplings`:
        ``q_d = q0_d + X_di (q_i - q0_i)``, ``v = X v_i``) when :attr:`constant_basis` is not None and the
        default split is the one generalized coordinate partitioning keeps everywhere (its dependent
        blocks, the same at every state, above :data:`RCOND_SWITCH` (:func:`partition_at`) and
        :data:`PARTITION_RCOND_RATIO` of the best (:func:`partition_quality`)); None otherwise."""
        X = self.constant_basis
        if X is None:
            return None
        G = terms_at(self, self._q_ref).G
        default = {lp.node: (lp.rows, lp.dep, lp.ind) for lp in self.loops}
        if (partition_quality(self, self._q_ref, default) < PARTITION_RCOND_RATIO
                or any(len(lp.dep) and _rcond(G[np.ix_(lp.all_rows[lp.rows], lp.v_idx[lp.dep])]) <= RCOND_SWITCH
                       for lp in self.loops)):
            return None
        return linear_couplings(self, X)

    def create_data(self, rcond_switch: float | None = None, splits: dict | None = None):
        """Work arrays of the compiled closed-chain kernels (:class:`dynamics.compiled.closed_layout.ClosedData`:
        the tree's ``Data`` and the loops' scratch), Pinocchio's ``Data``: pass it as ``data=`` to reuse
        one set per caller; one call at a time.  ``rcond_switch``: a stricter decline threshold of the
        kernels called with them (the fixed-step loop's), None for the model's; ``splits``: the split of
        the loops they use (dict loop node -> (rows, dep, ind), as :func:`partition_at` returns it; a
        simulator's current one), None for the default one.  Imports no numba."""
        from ..compiled.closed_layout import ClosedData

        return ClosedData(self, rcond_switch, splits)

    @cached_property
    def default_data(self):
        """The :meth:`create_data` the compiled functions use when called without ``data=`` (made on first
        use, then kept with the model)."""
        return self.create_data()

    def __repr__(self) -> str:
        return (f"EmbeddedModel(n_bodies={self.tree_model.n_bodies}, loops={len(self.loops)}, "
                f"nv={self.nv}, independent={self.n_independent})")


def _independent_rows(G, rtol: float = GRAPH_RANK_RTOL) -> tuple[int, np.ndarray, int]:
    """(r, rows, r_exact): the numerical rank of G at relative tolerance ``rtol`` (default the input
    geometry's, :data:`GRAPH_RANK_RTOL`), r independent rows of it, increasing (QR with column pivoting
    of ``G^T``), and its rank at :data:`CLOSURE_RANK_RTOL` (above ``r`` when rows of the file's rounded
    geometry are nearly, not exactly, dependent)."""
    sv = np.linalg.svd(G, compute_uv=False) if G.size else np.zeros(0)
    r = int(np.sum(sv > rtol * max(sv[0], SINGULAR_FLOOR))) if len(sv) else 0
    r_exact = int(np.sum(sv > CLOSURE_RANK_RTOL * max(sv[0], SINGULAR_FLOOR))) if len(sv) else 0
    rows = np.sort(sla.qr(G.T, mode="r", pivoting=True)[1][:r]) if r else np.zeros(0, dtype=int)
    return r, rows, r_exact


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
    r, rows, r_exact = _independent_rows(G)
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
    act = tuple(i for i, (jn, cn) in enumerate(coord) if jn in actuated)
    fix = tuple(i for i, (jn, cn) in enumerate(coord) if jn in forced or cn in forced)
    slack = ROUNDED_CLOSURE_TOL if r < len(all_rows) else 0.0
    if r_exact > r:
        logger.info("loop %s: %d constraint row(s) nearly dependent (rank %d at %g, %d at %g): dropped, the "
                    "file's rounded geometry may leave them open by up to %g", name, r_exact - r, r,
                    GRAPH_RANK_RTOL, r_exact, CLOSURE_RANK_RTOL, slack)
    return EmbeddedLoop(node, bodies, cidx, v_idx, ind, dep, rows, name, joints, all_rows, kidx, act, fix, slack)


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
    sets = topology.loop_sets(m.parent.tolist(), [(c.body_a, c.body_b) for c in chords],
                     couplings=coupling_pairs(couplings))
    agg = aggregate_tree(m.tree, sets)
    q_ref = m.neutral() if q_ref is None else np.asarray(q_ref, float)
    names = coordinate_names(m)
    cs = chord_set(m, chords)
    unplaced = EmbeddedModel(m, chords, cs, agg, [], q_ref, couplings)
    terms = terms_at(unplaced, q_ref)  # (couplings alone need no kinematics)
    loops = [_embedded_loop(m, chords, cs, terms.G, agg, S, names, set(actuated), set(independent or ()),
                            couplings) for S in sets]
    em = EmbeddedModel(m, chords, cs, agg, loops, q_ref.copy(), couplings)
    if all(_closed_as_is(terms.e, lp) for lp in loops):
        return em
    # closed by Newton's method on the split chosen at q_ref; the model's cached per-reference terms
    # (constant_basis, linear_couplings) are those of the closed reference
    splits = {lp.node: partition_at(em, lp, loop_closure(terms, lp, slice(None))[1]) for lp in loops}
    return EmbeddedModel(m, chords, cs, agg, loops, complete_configuration(em, q_ref, splits=splits), couplings)


def _closed_as_is(e_ref, lp: EmbeddedLoop) -> bool:
    """True when :func:`complete_configuration` leaves loop ``lp`` as it is at the reference
    configuration (closure error ``e_ref`` (all rows) there): no error at all, or within
    :data:`CLOSURE_TOL` and no dependent coordinate to move."""
    err = np.max(np.abs(e_ref[lp.all_rows]), initial=0.0)
    return err == 0.0 or (err <= CLOSURE_TOL and len(lp.dep) == 0)


# ==================== per-configuration terms: X, Xdot theta_dot_i, the embedded weights

def select_columns(G, candidates, r, rtol: float = CLOSURE_RANK_RTOL) -> list:
    """Up to ``r`` well-conditioned columns of G among ``candidates`` (QR with column pivoting);
    fewer when the candidates' columns have a smaller numerical rank (relative tolerance ``rtol``)."""
    if r == 0 or len(candidates) == 0:
        return []
    Rq, piv = sla.qr(G[:, candidates], mode="r", pivoting=True)  # (R only: no Q is formed)
    d = np.abs(np.diag(Rq))
    k = int(np.sum(d > rtol * max(d[0], SINGULAR_FLOOR))) if len(d) else 0
    return [candidates[i] for i in piv[:min(k, r)]]


def constraint_terms(em, kin, q, v=None) -> ChordTerms:
    """Closure terms of the chords (:func:`dynamics.closed.closure.chord_set_terms`) followed by one row per
    joint coupling (:func:`dynamics.closed.coupling.coupling_residuals`; no wrench rows: ``K`` is zero there).
    ``q`` (nq,), ``v`` (nv,) or None (then no ``gamma``)."""
    terms = chord_set_terms(em.chord_set, kin, with_bias=v is not None)
    if not em.couplings:
        return terms
    e, G, gamma = coupling_residuals(em.couplings, em.nv, q, v)
    return ChordTerms(np.concatenate([terms.e, e]), np.vstack([terms.G, G]),
                      None if v is None else np.concatenate([terms.gamma, gamma]),
                      np.vstack([terms.K, np.zeros((len(e), 6))]), terms.R_Ja, terms.x_b)


def terms_at(em, q) -> ChordTerms:
    """:func:`constraint_terms` at q (nq,) without velocity terms; a model without loop-closing joints
    (joint couplings only) needs no kinematics, its rows are the couplings' alone."""
    q = np.asarray(q, float)
    if not em.chords:
        e, G, _ = coupling_residuals(em.couplings, em.nv, q)
        return ChordTerms(e, G, None, np.zeros((len(e), 6)), None, None)
    m = em.tree_model
    return constraint_terms(em, kinematics(m, prepare(m, q)[3]), q)


def loop_closure(terms, lp: EmbeddedLoop, rows=None):
    """(e all rows of the loop, G rows ``rows`` (r, n_S), gamma those rows or None); ``rows`` index
    ``lp.all_rows`` (default the default kept rows ``lp.rows``; ``slice(None)`` for all of them)."""
    kept = lp.all_rows[lp.rows if rows is None else rows]
    G = terms.G[np.ix_(kept, lp.v_idx)]
    gamma = None if terms.gamma is None else terms.gamma[kept]
    return terms.e[lp.all_rows], G, gamma


class DependentInverse:
    """``G_d^-1`` of a loop's dependent block (small: one row per independent constraint)."""

    def __init__(self, Gd):
        self.inv = np.linalg.inv(Gd)

    def solve(self, b):
        return self.inv @ b

    def solve_T(self, b):
        return self.inv.T @ b


def dependent_inverse(em, lp, G, dep=None):
    dep = lp.dep if dep is None else dep
    Gd = G[:, dep]
    if Gd.shape[0] == 0:
        return None
    sv = np.linalg.svd(Gd, compute_uv=False)
    if not np.all(np.isfinite(sv)) or sv[-1] <= RCOND_MIN * max(sv[0], SINGULAR_FLOOR):
        raise lp.error(f"the closure Jacobian loses rank (singular values of the dependent block "
                       f"{sv[-1]:.3g} .. {sv[0]:.3g})", em, dep)
    return DependentInverse(Gd)


def _rcond(A) -> float:
    """Reciprocal 2-norm condition number of a square block (0 when it is not finite)."""
    sv = np.linalg.svd(A, compute_uv=False)
    return float(sv[-1] / max(sv[0], SINGULAR_FLOOR)) if len(sv) and np.all(np.isfinite(sv)) else 0.0


def rows_at(em, lp, G_all) -> np.ndarray:
    """The loop's independent constraint rows at this state (indices into ``lp.all_rows``, increasing):
    the first ``r`` pivots of QR with column pivoting of ``G_all^T`` (``G_all`` (n_rows, n_S), every
    row of the loop), ``r`` the closure rank at the reference.  Redundant rows are thus dropped by rank
    here, not at the reference.  Raises :class:`ClosureError` where the rank falls below ``r``: the
    mechanism changes mobility (a singular configuration)."""
    r = len(lp.rows)
    if r == 0 or r == G_all.shape[0]:
        return lp.rows if r == 0 else np.arange(r)
    R, piv = sla.qr(G_all.T, mode="r", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int(np.sum(d > CLOSURE_RANK_RTOL * max(d[0], SINGULAR_FLOOR))) if len(d) else 0
    if rank < r:
        raise lp.error(f"singular configuration: the closure rank falls to {rank} (generic rank {r}), "
                       "the mechanism changes mobility here", em)
    return np.sort(piv[:r])


def partition_at(em, lp, G_all) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, dep, ind) of loop ``lp`` at this state: generalized coordinate partitioning (Wehage & Haug,
    J. Mech. Des. 104, 1982) by QR with column pivoting of the closure Jacobian.

    ``G_all`` (n_rows, n_S): every constraint row of the loop at this state.  The default split (chosen
    at the reference) is kept while its dependent block's reciprocal condition exceeds
    :data:`RCOND_SWITCH`; below, the rows are re-chosen by rank (:func:`rows_at`) and the dependent
    coordinates by column pivoting, passive coordinates first (actuated and forced ones stay
    independent where the passive block is well-conditioned), else the best-conditioned set
    (:func:`best_partition`).
    ``rows``, ``dep``, ``ind``: indices into ``lp.all_rows`` and ``lp.v_idx``, increasing.  Raises
    :class:`ClosureError` (naming the loop) at a singular configuration: the rank falls, or even the
    best dependent block has reciprocal condition <= :data:`RCOND_MIN`.
    """
    if len(lp.dep) == 0 or _rcond(G_all[np.ix_(lp.rows, lp.dep)]) > RCOND_SWITCH:
        return lp.rows, lp.dep, lp.ind
    rows, dep, ind, rc = best_partition(em, lp, G_all)
    if rc <= RCOND_MIN:
        raise lp.error(f"singular configuration: no dependent coordinates with a regular block (best "
                       f"reciprocal condition {rc:.3g}), the mechanism changes mobility here", em, dep)
    logger.debug("loop %s: rows %s, dependent coordinates %s at this state", lp.name, rows.tolist(),
                 [em.coordinate_names[lp.v_idx[i]] for i in dep])
    return rows, dep, ind


def _pivoted(Gr, free, r) -> tuple[list, float]:
    """(columns, rcond): ``r`` columns of ``Gr`` among ``free`` by QR with column pivoting, and the
    reciprocal condition number of their block (0 when fewer than ``r`` are independent)."""
    cols = select_columns(Gr, free, r)
    return cols, (_rcond(Gr[:, cols]) if len(cols) == r else 0.0)


def best_partition(em, lp, G_all) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(rows, dep, ind, rcond) chosen at this state by QR with column pivoting (see :func:`partition_at`),
    whatever the default split; ``rcond`` the reciprocal condition number of ``G[rows][:, dep]``.

    The passive coordinates (neither actuated nor forced independent) serve as dependent ones while
    their block's ``rcond`` is at least ``sqrt(PARTITION_RCOND_RATIO)`` of the pivoted block's over all
    coordinates, that one otherwise (a forced independent coordinate too: at this state only).  A
    simulator re-partitions below ``PARTITION_RCOND_RATIO`` (:func:`partition_quality`),
    so a fresh split is a factor ``1 / sqrt(PARTITION_RCOND_RATIO)`` away from the next switch."""
    r = len(lp.dep)
    if r == 0:
        return lp.rows, lp.dep, lp.ind, 1.0
    rows = rows_at(em, lp, G_all)
    Gr = G_all[rows]
    dep = select_columns(Gr, [i for i in range(Gr.shape[1]) if i not in lp.actuated and i not in lp.forced], r)
    rc = _rcond(Gr[:, dep]) if len(dep) == r else 0.0
    best, rb = _pivoted(Gr, list(range(Gr.shape[1])), r)
    if rc < np.sqrt(PARTITION_RCOND_RATIO) * rb:
        dep, rc = best, rb
    dep = np.array(sorted(dep), dtype=int)
    return rows, dep, np.array([i for i in range(Gr.shape[1]) if i not in set(dep.tolist())], dtype=int), rc


@dataclass(eq=False)
class EmbeddedState:
    """Per-configuration data: weights of the embedded tree and the velocity maps."""

    we: SKOWeights
    a_e: list | None
    b_e: list | None
    X: dict
    c: dict
    wa: SKOWeights
    kin: object
    closure: dict
    lu: dict
    terms: object = None
    split: dict | None = None
    armature_bias: np.ndarray | None = None


def embedded_state(em: EmbeddedModel, q, v=None, adaptive: bool = False) -> EmbeddedState:
    """Embedded SKO weights at a closed configuration q (nq,) (and velocity terms for v (nv,)).

    With ``adaptive``, a loop whose default dependent block is ill-conditioned here uses
    the rows and dependent set chosen at q instead (:func:`partition_at`; ``split[node] =
    (dep, ind, rows)``); the embedded tree is then a different but equally valid parametrization,
    which is what the parametrization-free results (all accelerations, constraint forces) may use.
    """
    m = em.tree_model
    qb, vb, single, w, V, ac, bc, ag = prepare(m, q, v)
    if qb.shape[0] != 1:
        raise ValueError("embedded models take one configuration at a time")
    kin = kinematics(m, w, V, ac)
    terms = constraint_terms(em, kin, qb[0], None if v is None else vb[0])
    wa = aggregated_weights(em.agg, w)
    H = list(wa.H)
    Je = None if wa.armature is None else list(wa.armature)
    X, c, clos, lus, split = {}, {}, {}, {}, {}
    for lp in em.loops:
        e, G, gamma = loop_closure(terms, lp, slice(None))
        rows, dep, ind = partition_at(em, lp, G) if adaptive else (lp.rows, lp.dep, lp.ind)
        G, gamma = G[rows], None if gamma is None else gamma[rows]
        split[lp.node] = (dep, ind, rows)
        lu = dependent_inverse(em, lp, G, dep)
        n_S = len(lp.v_idx)
        Xl = np.zeros((n_S, len(ind)))
        Xl[ind, np.arange(len(ind))] = 1.0
        if lu is not None:
            Xl[dep] = -lu.solve(G[:, ind])
        X[lp.node] = Xl
        H[lp.node] = Xl.T[None] @ wa.H[lp.node]
        if Je is not None:
            Je[lp.node] = Xl.T[None] @ wa.armature[lp.node] @ Xl[None]
        clos[lp.node] = (e, G)
        lus[lp.node] = lu
        if v is not None:
            cl = np.zeros(n_S)
            if lu is not None:
                cl[dep] = -lu.solve(gamma)
            c[lp.node] = cl
    we = SKOWeights(em.etree, wa.phi, H, wa.M, 1, armature=Je)
    a_e = b_e = t_e = None
    if v is not None:
        aa, bb = node_list(ac), node_list(bc)
        a = [aa[k] + ag[k] for k in range(m.n_bodies)]
        a_e, b_e = aggregated_velocity_terms(em.agg, wa, a, list(bb))
        for lp in em.loops:
            a_e[lp.node] = a_e[lp.node] + (c[lp.node] @ wa.H[lp.node][0])[None]
        t_e = armature_bias(em, wa, X, c)
    return EmbeddedState(we, a_e, b_e, X, c, wa, kin, clos, lus, terms, split, t_e)


def armature_bias(em, wa: SKOWeights, X: dict, c: dict) -> np.ndarray | None:
    """``X^* J_a Xdot theta_dot_i`` of each loop node (1, n_e) in the embedded tree's order, None
    when the tree has no rotor inertia (see the module docstring)."""
    if wa.armature is None:
        return None
    t = np.zeros((1, em.etree.nv))
    for lp in em.loops:
        t[0, em.etree.v_slice(lp.node)] = X[lp.node].T @ (wa.armature[lp.node][0] @ c[lp.node])
    return t


def closing_error(lp, e, rows=None) -> float:
    """The closure error of loop ``lp`` that must vanish, from ``e`` (every row of the loop): the largest
    over every row, or only over the kept ``rows`` (indices into ``lp.all_rows``, default the default
    split's) of a loop whose nearly dependent rows are dropped (``lp.slack``: :data:`ROUNDED_CLOSURE_TOL`)."""
    e = np.abs(e)
    return float(np.max(e[lp.rows if rows is None else rows] if lp.slack else e, initial=0.0))


def dropped_error(lp, e, rows=None) -> float:
    """The largest closure error of the rows of ``lp`` dropped at this split (``e``: every row of the loop;
    ``rows``: the kept ones, default the default split's): what the file's rounding leaves open in a loop
    with nearly dependent rows (``lp.slack``), 0 for a loop whose dropped rows are exactly dependent."""
    if not lp.slack:
        return 0.0
    out = np.ones(len(e), dtype=bool)
    out[lp.rows if rows is None else rows] = False
    return float(np.max(np.abs(np.asarray(e)[out]), initial=0.0))


def check_closed(em, lp, e, rows=None):
    """Raise :class:`ClosureError` unless the loop is closed at a state: its closure error ``e`` (every row)
    at most ``CLOSURE_CHECK_FACTOR * CLOSURE_TOL`` (kept rows ``rows`` of a loop with nearly dependent rows
    dropped; those may stay open by ``lp.slack``)."""
    err, gap = closing_error(lp, e, rows), dropped_error(lp, e, rows)
    if err > CLOSURE_CHECK_FACTOR * CLOSURE_TOL or gap > lp.slack:
        raise lp.error(f"the loop is not closed at this configuration (closure error {err:.3g}"
                       + (f", nearly dependent rows {gap:.3g}" if lp.slack else "")
                       + "); call complete_configuration first", em)


# ==================== positions and velocities: closing loops, projections, chord coordinates

def _closure_at(em, q, lp) -> tuple[np.ndarray, np.ndarray]:
    """(e, G): the closure error and Jacobian (every row of the loop, (n_rows,), (n_rows, n_S)) of loop
    ``lp`` at q (nq,)."""
    e, G, _ = loop_closure(terms_at(em, q), lp, slice(None))
    return e, G




def complete_configuration(em: EmbeddedModel, q_guess=None, q_ind=None, tol: float = CLOSURE_TOL,
                           max_iter: int = NEWTON_MAX_ITER, adaptive: bool | None = None,
                           splits: dict | None = None) -> np.ndarray:
    """Close every loop by Newton's method on the dependent coordinates.

    Parameters
    ----------
    q_guess : (nq,), optional -- starting configuration (default ``em.neutral()``)
    q_ind : mapping coordinate name -> value, or (n_independent,) array, optional --
        values of the independent coordinates (one-coordinate joints, and the
        coordinates of Euclidean joints), set in ``q_guess`` before iterating
    tol : closure error accepted (m, rad);  max_iter : Newton iterations per loop
    adaptive : the dependent coordinates and rows of each loop chosen at the start ``q_guess``
        (:func:`partition_at`: the default ones unless their block is ill-conditioned there) rather
        than the default ones; default: adaptive unless ``q_ind`` names default independent values
    splits : dict loop node -> (rows, dep, ind), optional -- the split to use (as :func:`partition_at`
        returns it), whatever the conditioning (a simulator's current partition)

    Returns
    -------
    (nq,) closed configuration; the independent coordinates (of the split used) are those of the
    start (for quaternion joints only the dependent velocity directions move).

    Raises
    ------
    ClosureError -- the loop does not close (no convergence, or redundant constraints
    left violated) or ``G_d`` is singular on the way.

    Linear joint couplings (:attr:`EmbeddedModel.linear_couplings`) close in one exact step,
    ``q_d = q0_d + X_di (q_i - q0_i)``, unless ``splits`` is given.
    """
    m = em.tree_model
    q = (em.neutral() if q_guess is None else np.asarray(q_guess, float)).copy()
    if q_ind is not None:
        vals = dict(q_ind) if isinstance(q_ind, dict) else dict(zip(em.independent, np.asarray(q_ind, float)))
        for name, val in vals.items():
            _set_coordinate(em, q, name, val)
    if splits is None and em.linear_couplings is not None:
        return em.linear_couplings.complete_configuration(q)
    adaptive = q_ind is None if adaptive is None else adaptive
    for lp in em.loops:
        polish, last, split = 0, np.inf, None
        for it in range(max_iter + 1):
            e, G_all = _closure_at(em, q, lp)
            if split is None:
                split = (splits[lp.node] if splits is not None else partition_at(em, lp, G_all) if adaptive
                         else (lp.rows, lp.dep, lp.ind))
            rows, dep, _ = split
            G = G_all[rows]
            err = closing_error(lp, e, rows)
            if err <= tol:
                # converged; Newton steps while they still reduce the error (quadratic
                # convergence takes it to rounding level, so G's null space is exact) and
                # move a coordinate by more than NEWTON_ROUNDING_STEP
                if polish == 2 or err == 0.0 or err > 0.5 * last or len(lp.dep) == 0:
                    _check_dropped(em, lp, e, rows)
                    break
                polish += 1
            last = err
            if it == max_iter:
                raise lp.error(f"Newton's method did not close the loop in {max_iter} iterations "
                               f"(closure error {np.max(np.abs(e)):.3g}): the loop cannot close here", em)
            lu = dependent_inverse(em, lp, G, dep)
            if lu is None:
                raise lp.error(f"the loop is not closed (error {np.max(np.abs(e)):.3g}) and has no "
                               "dependent coordinates to close it", em)
            dv = np.zeros(m.nv)
            dv[lp.v_idx[dep]] = -lu.solve(e[rows])
            if not np.all(np.isfinite(dv)) or np.max(np.abs(dv)) > NEWTON_MAX_STEP:
                raise lp.error("Newton's method diverged: the loop cannot close here", em)
            if polish and np.max(np.abs(dv)) <= NEWTON_ROUNDING_STEP:
                # a polishing step below the rounding of a unit coordinate cannot lower the error
                _check_dropped(em, lp, e, rows)
                break
            q = integrate(m, q, dv)
    return q


def _check_dropped(em, lp, e, rows):
    """Raise :class:`ClosureError` when the rows of a loop with nearly dependent rows dropped (``lp.slack``)
    stay open beyond the file's rounding once its kept ``rows`` are closed."""
    gap = dropped_error(lp, e, rows)
    if gap > lp.slack:
        raise lp.error(f"the kept constraint rows close but the nearly dependent ones stay open by {gap:.3g} "
                       f"(more than the rounding of the file's geometry, {lp.slack:.3g}): the loop cannot close "
                       "here", em)
    if gap:
        logger.debug("loop %s: nearly dependent rows open by %.3g (the file's rounding)", lp.name, gap)


def project_velocity(em: EmbeddedModel, q, v) -> np.ndarray:
    """Orthogonal projection of joint velocities v (nv,) onto the constraint tangent space
    ``{v : G(q) v = 0}`` at a closed q: ``v - G^T (G G^T)^-1 G v`` loop by loop (kept rows).

    Unlike :func:`complete_velocity` it needs no choice of independent coordinates, so it
    stays well defined where the default dependent block is singular (e.g. a five-bar with
    its distal links in line); it fails only where the loop's own constraints lose rank.
    """
    st = embedded_state(em, q, adaptive=True)
    v = np.array(v, dtype=float)
    for lp in em.loops:
        check_closed(em, lp, st.closure[lp.node][0], st.split[lp.node][2])
        G = st.closure[lp.node][1]
        if G.shape[0] == 0:
            continue
        vs = v[lp.v_idx]
        v[lp.v_idx] = vs - G.T @ np.linalg.solve(G @ G.T, G @ vs)
    return v


def project_configuration(em: EmbeddedModel, q, tol: float = CLOSURE_TOL,
                          max_iter: int = NEWTON_MAX_ITER) -> np.ndarray:
    """Close every loop by Gauss-Newton steps of minimum norm, ``dq = -G^T (G G^T)^-1 e``.

    Unlike :func:`complete_configuration` all coordinates of a loop may move (the
    smallest move that closes it), so it needs no choice of independent coordinates and
    works through configurations where the default dependent block is singular; it
    fails (:class:`ClosureError`) only where the loop's own constraints lose rank or
    cannot be met.
    """
    m = em.tree_model
    q = np.array(q, dtype=float)
    for lp in em.loops:
        last = np.inf
        for it in range(max_iter + 1):
            e, G_all = _closure_at(em, q, lp)
            rows = rows_at(em, lp, G_all)
            G = G_all[rows]
            err = closing_error(lp, e, rows)
            if err <= tol and (err == 0.0 or err > 0.5 * last or G.shape[0] == 0 or it == max_iter):
                _check_dropped(em, lp, e, rows)
                break
            if it == max_iter:
                raise lp.error(f"Gauss-Newton did not close the loop in {max_iter} iterations "
                               f"(closure error {err:.3g}): the loop cannot close here", em)
            if G.shape[0] == 0:
                raise lp.error(f"the loop is not closed (error {err:.3g}) and has no coordinates to "
                               "close it", em)
            sv = np.linalg.svd(G, compute_uv=False)
            if sv[-1] <= RCOND_MIN * max(sv[0], SINGULAR_FLOOR):
                raise lp.error(f"the closure Jacobian loses rank (singular values {sv[-1]:.3g} .. "
                               f"{sv[0]:.3g})", em)
            dv = np.zeros(m.nv)
            dv[lp.v_idx] = -G.T @ np.linalg.solve(G @ G.T, e[rows])
            q = integrate(m, q, dv)
            last = err
    return q


def project_state(em: EmbeddedModel, q, v):
    """A consistent state near (q, v) without choosing independent coordinates: the loops
    closed by :func:`project_configuration`, then v projected by :func:`project_velocity`.
    For integrators that carry the full (q, v) (e.g. through parametrization singularities
    of the independent coordinates).  Returns (q (nq,), v (nv,))."""
    qc = project_configuration(em, q)
    return qc, project_velocity(em, qc, v)


def _set_coordinate(em, q, name, val):
    m = em.tree_model
    if "[" in name:
        jn, i = name[:-1].split("[")
        k = m.joint_index(jn)
        i = int(i)
    else:
        jn, k, i = name, m.joint_index(name), 0
    if not J.JOINTS[m.joint_types[k]].euclidean:
        raise ValueError(f"coordinate {name!r} of a {m.joint_types[k]} joint cannot be set by value")
    q[m.q_slice(k).start + i] = val


def complete_velocity(em: EmbeddedModel, q, v_ind) -> np.ndarray:
    """Full joint velocities ``v = X(q) v_ind`` at a closed q.

    Parameters
    ----------
    q : (nq,) closed configuration
    v_ind : (n_independent,) in ``em.independent`` order, or (nv,) (its independent entries are used)

    Returns
    -------
    (nv,) with ``G(q) v = 0``.
    """
    v_ind = np.asarray(v_ind, float)
    if v_ind.shape == (em.nv,):
        v_ind = v_ind[em.independent_v]
    if em.linear_couplings is not None:
        return null_space_basis(em, q) @ v_ind
    st = embedded_state(em, q)
    v = np.zeros(em.nv)
    v[em.independent_v] = v_ind
    for lp in em.loops:
        check_closed(em, lp, st.closure[lp.node][0], st.split[lp.node][2])
        vi = v[lp.v_idx[lp.ind]]
        v[lp.v_idx] = st.X[lp.node] @ vi
    return v


def complete_state(em: EmbeddedModel, q, v, tol: float = CLOSURE_TOL, max_iter: int = NEWTON_MAX_ITER,
                   splits: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Generalized coordinate partitioning of a full state (Wehage & Haug, J. Mech. Des. 104, 1982).

    The loops of q (nq,) are closed by Newton's method on the dependent coordinates chosen at q
    (:func:`partition_at`), its independent coordinates kept; then v's dependent entries follow from its
    independent ones through the split chosen at the closed q, ``v_d = -G_d^-1 G_i v_i``.  For
    integrators that carry the full (q, v) (nq + nv,): the independent coordinates are re-chosen at
    every state, so the state is carried across a change of split exactly (nothing is converted).
    ``splits`` (dict loop node -> (rows, dep, ind)) fixes the split instead (a simulator's current one).

    Without ``splits`` the split of each loop is the default one while its dependent block's
    reciprocal condition is at least :data:`PARTITION_RCOND_RATIO` of the best block's at q, else the
    best one (:func:`best_partition`), chosen once at the given q for both q and v.  Linear joint
    couplings (:attr:`EmbeddedModel.linear_couplings`) keep the default split everywhere and close in
    one exact step, ``q_d = q0_d + X_di (q_i - q0_i)``, ``v = X v_i``.

    Returns (q (nq,) closed to ``tol``, v (nv,) with ``G(q) v = 0``); raises :class:`ClosureError` at a
    singular configuration (the mechanism changes mobility) or where the loop cannot close.
    """
    if splits is None and em.linear_couplings is not None:
        return em.linear_couplings.complete_state(q, v)
    splits = _state_splits(em, q) if splits is None else splits
    q = complete_configuration(em, q, tol=tol, max_iter=max_iter, splits=splits)
    terms = terms_at(em, q)
    v = np.array(v, dtype=float)
    for lp in em.loops:
        _, G, _ = loop_closure(terms, lp, slice(None))
        rows, dep, ind = splits[lp.node]
        lu = dependent_inverse(em, lp, G[rows], dep)
        if lu is not None:
            v[lp.v_idx[dep]] = -lu.solve(G[np.ix_(rows, ind)] @ v[lp.v_idx[ind]])
    return q, v


def _state_splits(em, q) -> dict:
    """The split of every loop for :func:`complete_state` at q (nq,): the default one unless it has
    degraded below :data:`PARTITION_RCOND_RATIO` of the best (:func:`partition_quality`), else the
    best one (:func:`choose_partition`'s)."""
    default = {lp.node: (lp.rows, lp.dep, lp.ind) for lp in em.loops}
    if partition_quality(em, q, default) >= PARTITION_RCOND_RATIO:
        return default
    best = choose_partition(em, q)
    return {n: split if partition_quality(em, q, {n: split}) >= PARTITION_RCOND_RATIO else best[n]
            for n, split in default.items()}


def choose_partition(em: EmbeddedModel, q) -> dict:
    """The split of every loop chosen at a closed q (nq,) by :func:`best_partition` (whatever the default
    one): dict loop node -> (rows, dep, ind).  Raises :class:`ClosureError` at a singular configuration
    (the rank falls, or the best block's reciprocal condition is at most :data:`RCOND_MIN`)."""
    terms = terms_at(em, q)
    out = {}
    for lp in em.loops:
        rows, dep, ind, rc = best_partition(em, lp, loop_closure(terms, lp, slice(None))[1])
        if len(dep) and rc <= RCOND_MIN:
            raise lp.error(f"singular configuration: no dependent coordinates with a regular block (best "
                           f"reciprocal condition {rc:.3g}), the mechanism changes mobility here", em, dep)
        out[lp.node] = (rows, dep, ind)
    return out


def partition_quality(em: EmbeddedModel, q, splits: dict, jacobians: dict | None = None) -> float:
    """min over loops of ``rcond(split) / rcond(best split)`` at q (nq,): how far the ``splits`` (dict loop
    node -> (rows, dep, ind); loops without an entry are skipped) have degraded against the best ones
    there (1 when they are the best; 0 where a split's rows lose rank).  A simulator re-partitions below
    :data:`dynamics.tolerances.PARTITION_RCOND_RATIO`.  ``jacobians``: dict loop node -> the loop's closure
    Jacobian at q over every row (as ``loop_closure(terms, lp, slice(None))[1]``; a simulator's, from the
    compiled kernels), computed here when None."""
    terms = terms_at(em, q) if jacobians is None else None
    worst = 1.0
    for lp in em.loops:
        rows, dep, _ = splits.get(lp.node, (None, (), None))
        if len(dep) == 0:
            continue
        G = loop_closure(terms, lp, slice(None))[1] if jacobians is None else jacobians[lp.node]
        try:
            Gr = G[rows_at(em, lp, G)]
        except ClosureError:
            return 0.0
        best = _pivoted(Gr, list(range(Gr.shape[1])), len(dep))[1]
        worst = min(worst, _rcond(G[np.ix_(rows, dep)]) / max(best, SINGULAR_FLOOR))
    return worst


def null_space_basis(em: EmbeddedModel, q) -> np.ndarray:
    """``X(q)`` (nv, n_independent): tree velocities per unit independent velocity at a closed q
    (columns in ``em.independent`` order; :func:`complete_velocity` of each unit vector, one state);
    the constant one of linear joint couplings (:attr:`EmbeddedModel.linear_couplings`) without a
    state."""
    lc = em.linear_couplings
    if lc is None:
        return _null_space_basis(em, q)
    e = lc.closure_error(q)              # no chords: the coupling rows are all the rows
    for lp in em.loops:
        check_closed(em, lp, e[lp.all_rows])
    return lc.X.copy()


def _null_space_basis(em: EmbeddedModel, q) -> np.ndarray:
    """:func:`null_space_basis` from the embedded state at q."""
    st = embedded_state(em, q)
    X = np.zeros((em.nv, em.n_independent))
    X[em.independent_v, np.arange(em.n_independent)] = 1.0
    for lp in em.loops:
        check_closed(em, lp, st.closure[lp.node][0], st.split[lp.node][2])
        X[lp.v_idx] = st.X[lp.node] @ X[lp.v_idx[lp.ind]]
    return X


def _angle_about(u, R_ab) -> float:
    """The angle of rotation ``R_ab`` (3, 3) about unit axis ``u`` (3,), rad: of a vector normal to ``u``."""
    a1 = np.cross(u, [1.0, 0, 0] if abs(u[0]) < 0.9 else [0, 1.0, 0])
    a1 /= np.linalg.norm(a1)
    a2 = np.cross(u, a1)
    Rn = R_ab @ a1
    return np.arctan2(a2 @ Rn, a1 @ Rn)


def _planar_chord(n, R_ab, p_ab, w_rel, v_rel):
    """(x, y, theta) and (vx, vy, omega) of a planar chord, as a tree planar joint would have
    them (:mod:`dynamics.joints`): in-plane position along (e1, e2) of ``J_a``, the angle
    about the normal, the in-plane velocity along the *moving* frame's e1, e2."""
    e1, e2 = J.plane_basis(n)
    Re1 = R_ab @ e1
    qc = [e1 @ p_ab, e2 @ p_ab, np.arctan2(e2 @ Re1, e1 @ Re1)]
    vc = None if w_rel is None else [Re1 @ v_rel, (R_ab @ e2) @ v_rel, n @ w_rel]
    return qc, vc


def chord_coordinates(em: EmbeddedModel, q, v=None, kin=None) -> dict:
    """Coordinates (and rates) of the chord joints, which are not tree coordinates.

    A chord's coordinates are those its joint type would have as a tree joint, read
    from the relative pose of its frames ``J_b`` in ``J_a`` (zero at the reference
    configuration): revolute/continuous the angle about the axis, prismatic the
    displacement along it, cylindrical (angle, displacement), spherical the
    quaternion ``[w, x, y, z]`` of ``R_ab`` (rates: angular velocity in ``J_b`` axes,
    like a tree spherical joint), planar (x, y, theta) (:func:`_planar_chord`), fixed none.

    Parameters
    ----------
    q : (nq,) closed configuration;  v : (nv,) optional
    kin : the world kinematics at (q, v) when the caller has them (``dynamics.world_kinematics.Kinematics``,
        e.g. the compiled ones of ``dynamics.compiled.closed_api.world_kinematics``); computed here when None

    Returns
    -------
    dict chord name -> (q_chord (nq_c,), v_chord (nv_c,) or None)
    """
    if kin is None:
        m = em.tree_model
        qb, vb, single, w, V, ac, bc, ag = prepare(m, q, v)
        kin = kinematics(m, w, V, ac)
    out = {}
    for c in em.chords:
        R_ab, p_ab, w_rel, v_rel = relative_motion(kin, c)
        u, t = c.axis, J.JOINTS[c.type].moves_as
        if t == "revolute":
            qc = [_angle_about(u, R_ab)]
            vc = None if w_rel is None else [u @ w_rel]
        elif t == "cylindrical":
            qc = [_angle_about(u, R_ab), u @ p_ab]
            vc = None if w_rel is None else [u @ w_rel, u @ v_rel]
        elif t == "prismatic":
            qc = [u @ p_ab]
            vc = None if v_rel is None else [u @ v_rel]
        elif t == "spherical":
            qc = matrix_to_quat(R_ab)
            vc = None if w_rel is None else R_ab.T @ w_rel
        elif t == "planar":
            qc, vc = _planar_chord(u, R_ab, p_ab, w_rel, v_rel)
        elif t == "fixed":
            qc, vc = [], None if w_rel is None else []
        else:
            raise NotImplementedError(f"coordinates of a {c.type} chord ({c.name!r}) are not implemented")
        out[c.name] = (np.asarray(qc, float), None if vc is None else np.asarray(vc, float))
    return out


# ==================== dynamics in minimal coordinates

def _embedded_forces(em, st, tau):
    Ta = np.asarray(tau, float)[em.agg.v_perm]
    parts = []
    for a in range(em.agg.tree.n_nodes):
        x = Ta[em.agg.tree.v_slice(a)]
        parts.append(st.X[a].T @ x if a in st.X else x)
    return np.concatenate(parts + [np.zeros(0)])[None]


def _expand(em, st, th_e):
    """Embedded accelerations (1, n_e) -> full tree accelerations (nv,)."""
    out = np.zeros(em.nv)
    t = em.etree
    for a in range(t.n_nodes):
        x = th_e[0, t.v_slice(a)]
        if a in st.X:
            lp = em.loop_of_node[a]
            out[lp.v_idx] = st.X[a] @ x + st.c[a]
        else:
            out[em.agg.v_perm[em.agg.tree.v_slice(a)]] = x
    return out


def _check_state(em, st):
    for lp in em.loops:
        check_closed(em, lp, st.closure[lp.node][0], st.split[lp.node][2])


def forward_dynamics(em: EmbeddedModel, q, v, tau) -> np.ndarray:
    """Accelerations of all tree joints of a closed chain (articulated-body algorithm on the
    embedded tree, seed 001 Algorithm 6.1).

    Parameters
    ----------
    q : (nq,) closed configuration;  v : (nv,) with ``G v = 0`` (see :func:`complete_velocity`)
    tau : (nv,) generalized forces at the tree joints (dependent joints included;
        chords carry none)

    Returns
    -------
    (nv,) accelerations, dependent ones included, with ``G a + Gdot v = 0``.
    """
    st = embedded_state(em, q, v, adaptive=True)
    _check_state(em, st)
    T_e = _embedded_forces(em, st, tau)
    if st.armature_bias is not None:
        T_e = T_e - st.armature_bias
    th, _ = forward_dynamics_sko(st.we, T_e, st.a_e, st.b_e)
    return _expand(em, st, th)


def inverse_dynamics(em: EmbeddedModel, q, v, a) -> np.ndarray:
    """Generalized forces at the independent coordinates that produce accelerations ``a``.

    Parameters
    ----------
    q, v : closed, consistent state;  a : (nv,) accelerations (only the independent
        entries are read; the dependent ones follow from the constraints)

    Returns
    -------
    tau : (nv,) -- zero at the dependent coordinates, ``X^* (M a + C)`` (Newton-Euler on the
    embedded tree, seed 001 Algorithm 3.1) at the independent ones, so that
    ``forward_dynamics(em, q, v, tau)`` returns ``a`` (completed).
    """
    st = embedded_state(em, q, v)
    _check_state(em, st)
    a = np.asarray(a, float)
    th = a[em.e_to_v][None]
    T, _, _ = newton_euler(st.we, th, st.a_e, st.b_e)
    if st.armature_bias is not None:
        T = T + st.armature_bias
    tau = np.zeros(em.nv)
    tau[em.e_to_v] = T[0]
    return tau


def mass_matrix(em: EmbeddedModel, q) -> np.ndarray:
    """Mass matrix in minimal coordinates ``X^* M X`` (composite-body inertia on the embedded tree,
    seed 001 Algorithm 4.2), (n_independent, n_independent) in ``em.independent`` order."""
    st = embedded_state(em, q)
    _check_state(em, st)
    Me = mass_matrix_sko(st.we)[0]
    i = em.e_order
    return Me[np.ix_(i, i)]


def jacobian(em: EmbeddedModel, q, body, point=None, frame: str = "local") -> np.ndarray:
    """Jacobian of the spatial velocity ``[omega; v]`` of a body point with respect to the independent
    velocities, ``J_tree X(q)`` (6, n_independent); arguments as :func:`dynamics.jacobian`."""
    return tree_jacobian(em.tree_model, q, body, point, frame) @ null_space_basis(em, q)


def operational_space_inertia(em: EmbeddedModel, q, bodies, points=None, frame: str = "local", directions=None,
                              pseudo_inverse: bool = False) -> np.ndarray:
    """``(J M^-1 J*)^-1`` with J and M in the independent coordinates (seed 002 Eq. 32), over the task
    rows ``directions`` (:func:`dynamics.opspace.task_rows`); arguments as
    :func:`dynamics.operational_space_inertia`."""
    X = null_space_basis(em, q)
    pts = [None] * len(bodies) if points is None else points
    rows = task_rows(directions, len(bodies))
    J = np.vstack([tree_jacobian(em.tree_model, q, b, p, frame) @ X for b, p in zip(bodies, pts)])[rows]
    return inertia_from_compliance(J @ np.linalg.solve(mass_matrix(em, q), J.T), pseudo_inverse)


def bias_forces(em: EmbeddedModel, q, v) -> np.ndarray:
    """``X* (M a_c + C)`` at the independent coordinates (zero at the dependent ones): inverse dynamics
    with zero independent accelerations, ``a_c`` the tree accelerations the loops then force."""
    return inverse_dynamics(em, q, v, np.zeros(em.nv))


@dataclass(eq=False)
class ConstraintForces:
    """Loop constraint forces.

    generalized : (nv,) -- ``G^T lambda = M a + C - tau``, the joint-space force the chords exert
    multipliers : dict chord name -> (nc,) multipliers of its constraint rows (zero for dropped,
        redundant rows: redundant constraints carry an indeterminate share, this is one solution);
        coupling name -> (1,) multiplier of ``q_f - p(q_l) = 0`` (N m or N along the follower)
    wrenches : dict chord name -> (6,) ``[moment; force]`` exerted on body b by body a through the
        chord, about the chord point, in ground axes (N m, N)
    """

    generalized: np.ndarray
    multipliers: dict
    wrenches: dict


def constraint_forces(em: EmbeddedModel, q, v, tau) -> ConstraintForces:
    """Loop constraint forces at a closed state under ``tau`` (see :class:`ConstraintForces`)."""
    a = forward_dynamics(em, q, v, tau)
    r = tree_inverse_dynamics(em.tree_model, q, v, a) - np.asarray(tau, float)
    st = embedded_state(em, q, adaptive=True)
    mult, wr = {}, {}
    cs, terms = em.chord_set, st.terms
    for lp in em.loops:
        lam_all = np.zeros(cs.n_rows + len(em.couplings))
        lu = st.lu[lp.node]
        if lu is not None:
            dep, _, rows = st.split[lp.node]
            lam_all[lp.all_rows[rows]] = lu.solve_T(r[lp.v_idx[dep]])
        for ci in lp.chords:
            rows = slice(cs.row_offset[ci], cs.row_offset[ci + 1])
            lam = lam_all[rows]
            f = terms.K[rows].T @ lam
            Ra = terms.R_Ja[ci]
            name = em.chords[ci].name
            mult[name] = lam
            wr[name] = np.concatenate([Ra @ f[:3], Ra @ f[3:]])
        for ki in lp.couplings:              # a coupling's multiplier is the force along its follower
            mult[em.couplings[ki].name] = lam_all[cs.n_rows + ki:cs.n_rows + ki + 1]
    return ConstraintForces(r, mult, wr)


def loop_sets(parent, chords) -> list[frozenset]:
    """Disjoint compound-node body sets for the loops closed by ``chords`` (seed 000 5.3), on a
    parent array with ground as the root -1 (:func:`dynamics.topology.loop_sets`)."""
    return topology.loop_sets([int(p) for p in parent], [(c.body_a, c.body_b) for c in chords])
