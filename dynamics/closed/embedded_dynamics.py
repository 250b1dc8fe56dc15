"""Dynamics of a constraint-embedded closed chain in minimal coordinates (seed 000 sections 5-6).

The embedded SKO model (:func:`dynamics.closed.embedded_state.embedded_state`) is again an
SKO model -- block-diagonal ``H_e``, SPO ``A_a``, block-diagonal ``M`` -- so the O(N)
algorithms of seed 001 run on it unchanged: articulated-body forward dynamics
(Algorithm 6.1), Newton-Euler (Algorithm 3.1) and composite-body inertia
(Algorithm 4.2) give ``M_e = X^* M X`` and ``C_e = X^* (C + M Xdot theta_dot_i)``, rotor
inertia included (:mod:`dynamics.closed.embedded_state`).
Generalized forces map as ``T_e = X^* T_S``.  Functions take one closed
configuration; results are full tree vectors (dependent joints included) except
the mass matrix, which is in the independent coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..aba import forward_dynamics_sko
from ..crba import mass_matrix_sko
from ..jacobians import jacobian as tree_jacobian
from ..opspace import inertia_from_compliance, task_rows
from ..rnea import inverse_dynamics as tree_inverse_dynamics
from ..rnea import newton_euler
from .embedded_coordinates import null_space_basis
from .embedded_state import check_closed, embedded_state

if TYPE_CHECKING:
    from .embedded_model import EmbeddedModel

__all__ = ["forward_dynamics", "inverse_dynamics", "mass_matrix", "bias_forces", "jacobian",
           "operational_space_inertia", "constraint_forces", "ConstraintForces"]


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
        check_closed(em, lp, st.closure[lp.node][0])


def forward_dynamics(em: "EmbeddedModel", q, v, tau) -> np.ndarray:
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


def inverse_dynamics(em: "EmbeddedModel", q, v, a) -> np.ndarray:
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


def mass_matrix(em: "EmbeddedModel", q) -> np.ndarray:
    """Mass matrix in minimal coordinates ``X^* M X`` (composite-body inertia on the embedded tree,
    seed 001 Algorithm 4.2), (n_independent, n_independent) in ``em.independent`` order."""
    st = embedded_state(em, q)
    _check_state(em, st)
    Me = mass_matrix_sko(st.we)[0]
    i = em.e_order
    return Me[np.ix_(i, i)]


def jacobian(em: "EmbeddedModel", q, body, point=None, frame: str = "local") -> np.ndarray:
    """Jacobian of the spatial velocity ``[omega; v]`` of a body point with respect to the independent
    velocities, ``J_tree X(q)`` (6, n_independent); arguments as :func:`dynamics.jacobian`."""
    return tree_jacobian(em.tree_model, q, body, point, frame) @ null_space_basis(em, q)


def operational_space_inertia(em: "EmbeddedModel", q, bodies, points=None, frame: str = "local", directions=None,
                              pseudo_inverse: bool = False) -> np.ndarray:
    """``(J M^-1 J*)^-1`` with J and M in the independent coordinates (seed 002 Eq. 32), over the task
    rows ``directions`` (:func:`dynamics.opspace.task_rows`); arguments as
    :func:`dynamics.operational_space_inertia`."""
    X = null_space_basis(em, q)
    pts = [None] * len(bodies) if points is None else points
    rows = task_rows(directions, len(bodies))
    J = np.vstack([tree_jacobian(em.tree_model, q, b, p, frame) @ X for b, p in zip(bodies, pts)])[rows]
    return inertia_from_compliance(J @ np.linalg.solve(mass_matrix(em, q), J.T), pseudo_inverse)


def bias_forces(em: "EmbeddedModel", q, v) -> np.ndarray:
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


def constraint_forces(em: "EmbeddedModel", q, v, tau) -> ConstraintForces:
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
            lam_all[lp.all_rows[lp.rows]] = lu.solve_T(r[lp.v_idx[st.split[lp.node][0]]])
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
