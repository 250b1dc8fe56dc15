"""Per-configuration terms of a constraint-embedded model (seed 000 sections 5-6).

At a closed configuration ``q`` each loop's closure Jacobian ``G_S`` (kept rows)
splits into the dependent block ``G_d`` and the rest ``G_i``; the velocity map of
the compound node is ``X = [I; -G_d^-1 G_i]`` (rows in the node's order) and, for
a velocity ``v``, ``Xdot theta_dot_i = [0; -G_d^-1 gamma]`` with ``gamma = Gdot v``.
The embedded SKO weights are those of the aggregated tree with ``H_e = X^* H_a``
on compound nodes and the Coriolis term ``a_e = A_S^* a_S + H_a^* Xdot theta_dot_i``
(:func:`embedded_state`).  The tree joints' rotor inertia ``J_a`` (diagonal) maps through the
embedding like the joint forces, ``T_e = X^* T_S`` with ``T_S = H_a f + J_a (X theta_ddot_i + Xdot
theta_dot_i)``: the embedded node's rotor inertia is ``X^* J_a X`` and ``X^* J_a Xdot theta_dot_i``
is a joint-space bias (``EmbeddedState.armature_bias``).  A dependent block whose reciprocal condition number
falls below :data:`dynamics.tolerances.RCOND_MIN` is singular: a
:class:`dynamics.closed.closure.ClosureError` naming the loop, never a number.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as sla

from ..batch import node_list, prepare
from ..sko import SKOWeights
from ..tolerances import CLOSURE_CHECK_FACTOR, CLOSURE_RANK_RTOL, CLOSURE_TOL, RCOND_MIN, RCOND_SWITCH, SINGULAR_FLOOR
from .aggregated import aggregated_velocity_terms, aggregated_weights
from .closure import ChordTerms, chord_set_terms, kinematics
from .coupling import coupling_residuals

if TYPE_CHECKING:
    from .embedded_model import EmbeddedLoop, EmbeddedModel

logger = logging.getLogger(__name__)

__all__ = ["EmbeddedState", "embedded_state", "loop_closure", "dependent_inverse", "check_closed",
           "select_columns"]


def select_columns(G, candidates, r, rtol: float = CLOSURE_RANK_RTOL) -> list:
    """Up to ``r`` well-conditioned columns of G among ``candidates`` (QR with column pivoting);
    fewer when the candidates' columns have a smaller numerical rank (relative tolerance ``rtol``)."""
    if r == 0 or len(candidates) == 0:
        return []
    _, Rq, piv = sla.qr(G[:, candidates], mode="economic", pivoting=True)
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


def loop_closure(terms, lp: "EmbeddedLoop"):
    """(e all rows of the loop, G kept rows (r, n_S), gamma kept rows or None)."""
    kept = lp.all_rows[lp.rows]
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


def local_split(em, lp, G):
    """(dep, ind) for this configuration: the default ones unless their block is ill-conditioned
    (reciprocal condition < RCOND_SWITCH), else the pivot columns of G at this configuration."""
    r = len(lp.dep)
    if r == 0:
        return lp.dep, lp.ind
    sv = np.linalg.svd(G[:, lp.dep], compute_uv=False)
    if np.all(np.isfinite(sv)) and sv[-1] > RCOND_SWITCH * max(sv[0], SINGULAR_FLOOR):
        return lp.dep, lp.ind
    dep = select_columns(G, list(range(G.shape[1])), r)
    if len(dep) < r:
        raise lp.error(f"the closure Jacobian loses rank (rank {len(dep)} < {r})", em)
    dep = np.array(sorted(dep), dtype=int)
    logger.debug("loop %s: dependent coordinates switched to %s", lp.name,
                 [em.coordinate_names[lp.v_idx[i]] for i in dep])
    return dep, np.array([i for i in range(G.shape[1]) if i not in set(dep.tolist())], dtype=int)


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


def embedded_state(em: "EmbeddedModel", q, v=None, adaptive: bool = False) -> EmbeddedState:
    """Embedded SKO weights at a closed configuration q (nq,) (and velocity terms for v (nv,)).

    With ``adaptive``, a loop whose default dependent block is ill-conditioned here uses
    the best-conditioned dependent set at q instead (``split[node] = (dep, ind)``); the
    embedded tree is then a different but equally valid parametrization, which is what the
    parametrization-free results (all accelerations, constraint forces) may use.
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
        e, G, gamma = loop_closure(terms, lp)
        dep, ind = local_split(em, lp, G) if adaptive else (lp.dep, lp.ind)
        split[lp.node] = (dep, ind)
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


def check_closed(em, lp, e):
    if np.max(np.abs(e), initial=0.0) > CLOSURE_CHECK_FACTOR * CLOSURE_TOL:
        raise lp.error(f"the loop is not closed at this configuration (closure error "
                       f"{np.max(np.abs(e)):.3g}); call complete_configuration first", em)
