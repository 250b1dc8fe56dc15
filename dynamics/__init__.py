"""Recursive O(N) multibody dynamics on SKO models (seeds 001, 002, 003).

Two layers:

* the **generic SKO layer** (:mod:`dynamics.sko`): a tree (``SKOTree``: parent
  array with ``parent[k] < k``, node weight dimensions ``m_k``, joint dimensions
  ``n_k``) and per-configuration blocks (``SKOWeights``: ``phi(parent(k), k)``,
  ``H(k)``, ``M(k)``, optional ``a(k)``, ``b(k)``).  The algorithms of seed 001
  are written once on it (``*_sko`` functions and :mod:`dynamics.spo`,
  :mod:`dynamics.lyapunov`, :mod:`dynamics.riccati`) and accept any weights,
  including non-square ones.
* the **rigid-body tree** (:mod:`dynamics.model`): ``build_model(bodies)`` returns
  an ``SKOModel`` that produces those blocks for a configuration q; the public
  functions below take ``(model, q, ...)``.

Conventions: spatial vectors angular first, ``V = [omega; v]``, ``f = [N; F]``;
every body quantity in its own body frame (body frame = joint moving frame);
joint coordinates and velocities as tabulated in :mod:`dynamics.joints`
(quaternions ``[w, x, y, z]``; free joint ``q = [p; quat]``, ``v = [omega; v]`` in
the body frame).  Gravity comes from ``model.gravity``.  Every public function
accepts a single configuration (``q`` of shape (nq,)) or a batch (``(B, nq)``)
and returns matching shapes.

Public API
----------
Model:      ``BodySpec``, ``build_model(bodies, gravity)``, ``SKOModel`` (``joint_names``,
            ``body_names``, ``nq``, ``nv``, ``q_slice(name)``, ``v_slice(name)``, ``gravity``,
            ``neutral()``, ``parent``, ``tree``)
Dynamics:   ``mass_matrix``, ``inverse_dynamics(model, q, v, a, f_ext=None)``,
            ``forward_dynamics(model, q, v, tau, f_ext=None)``, ``bias_forces``, ``gravity_forces``,
            ``composite_inertia``, ``articulated_body_quantities``
Factors:    ``innovations_factors``, ``mass_matrix_inverse``, ``mass_matrix_det``,
            ``mass_matrix_logdet``
Task space: ``jacobian(model, q, body, point=None, frame="local")``,
            ``frame_acceleration(model, q, v, a, body, point=None, frame="world")`` (``J a + J_dot v``),
            ``operational_space_compliance``, ``operational_space_inertia``
Gradients:  ``mass_matrix_sensitivity``, ``articulated_body_sensitivity``,
            ``innovations_factors_sensitivity``, ``fixman_potential``, ``fixman_gradient``,
            ``christoffel_symbols``, ``coriolis_matrix``
Kinematics: ``integrate(model, q, v, dt)``, ``difference(model, q0, q1)``, ``normalize``,
            ``random_configuration``, ``body_poses``, ``body_velocities``, ``center_of_mass``,
            ``kinetic_energy``, ``potential_energy``

Notation (papers -> code)
-------------------------
=================  ==========================  ===================================================
paper              code                        meaning
=================  ==========================  ===================================================
phi(x, y)          ``phi_transform(R, l)``     rigid-body force transform y -> x (seed 002 Eq. 4)
E_phi, phi         ``SKOWeights.phi``,         SKO operator / its SPO ``(I - E_phi)^-1``; products
                   ``spo_mul``                 by gather/scatter (seed 001 Lemmas 1-2)
phi~ = phi - I     ``spo_tilde_mul``           seed 001 Corollary 3.1
H, H*              ``SKOWeights.H``            joint map (n_k x m_k); ``H*`` = motion subspace
M(k)               ``SKOWeights.M``,           spatial inertia about the body origin (seed 002 Eq. 14)
                   ``spatial_inertia``
a, b               ``velocity_terms``          Coriolis acceleration, gyroscopic force
V, alpha, f        rnea internals              node velocities, accelerations, inter-node forces
R                  ``composite_inertia``       composite body inertia (seed 001 Eq. 18)
P, P+              ``ArticulatedBody.P``,      articulated body inertia (seed 001 Eq. 33)
                   ``.P_plus``
D, G, K            ``.D``, ``.G``, ``.K``      ``H P H*``, ``P H* D^-1``, ``E_phi G``
tau, tau_bar       ``.tau_bar``                ``G H``, ``I - G H``
E_psi, psi         ``.psi``                    ``E_phi tau_bar`` and its SPO (seed 001 Lemma 8)
[I + H phi K]      ``InnovationsFactors.L``    innovations factor (seed 001 Eq. 49)
[I - H psi K]      ``InnovationsFactors.Linv`` its inverse (seed 001 Eq. 50)
Y (Upsilon)        ``opspace.upsilon``         backward Lyapunov solution (seed 002 Eq. 36)
Omega              ``extended_compliance_sko`` ``psi* H* D^-1 H psi`` (seed 002 Eq. 34)
B                  ``pick_off``                pick-off operator (seed 002 Eq. 12)
J                  ``jacobian``                ``B* phi* H*`` (seed 002 Eq. 13)
Lambda             ``operational_space_inertia`` ``(J M^-1 J*)^-1`` (seed 002 Eq. 32)
H~*(i)             ``crf(S_i)``                Eq. 39 (equals ``crm`` for rotation axes)
lambda_theta_i     ``ABSensitivity.lam``       seed 002 Eq. 43
U_f                ``fixman_potential``        ``log det M`` (seed 002 Eq. 47)
c_i(j, k)          ``christoffel_symbols``     seed 002 Eq. 38
=================  ==========================  ===================================================
"""

import numpy as np

from ._batch import prepare as _prepare
from .aba import forward_dynamics as _tree_forward_dynamics
from .aba import forward_dynamics_sko
from .closure import ClosureError
from .coriolis import christoffel_symbols, coriolis_matrix
from .crba import composite_inertia as _composite_inertia_sko
from .crba import mass_matrix as _tree_mass_matrix
from .crba import mass_matrix_sko
from .energy import kinetic_energy, potential_energy
from .fixman import fixman_gradient, fixman_potential
from .innovations import (InnovationsFactors, innovations_factors, mass_matrix_det, mass_matrix_inverse,
                          mass_matrix_logdet)
from .jacobians import frame_acceleration, pick_off
from .jacobians import jacobian as _tree_jacobian
from .kinematics import (body_poses, body_velocities, center_of_mass, difference, integrate, normalize,
                         random_configuration)
from .model import BodySpec, SKOModel, build_model
from .opspace import RankDeficientTask, inertia_from_compliance, operational_space_compliance, task_rows
from .opspace import operational_space_inertia as _tree_operational_space_inertia
from .riccati import ArticulatedBody, articulated_body
from .rnea import bias_forces as _tree_bias_forces
from .rnea import gravity_forces, newton_euler
from .rnea import inverse_dynamics as _tree_inverse_dynamics
from .sensitivity import articulated_body_sensitivity, innovations_factors_sensitivity, mass_matrix_sensitivity
from .sko import SKOTree, SKOWeights
from .spatial import crf, crm, phi_transform, spatial_inertia


def _each_configuration(func, model, *arrays):
    """Apply a single-configuration function to (nq,) inputs or row by row to (B, .) batches."""
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    if all(a.ndim == 1 for a in arrays):
        return func(model, *arrays)
    batch = max(a.shape[0] for a in arrays if a.ndim == 2)
    rows = [np.broadcast_to(a, (batch, a.shape[-1])) for a in arrays]
    return np.stack([func(model, *row) for row in zip(*rows)])


def _closed_chain_kind(model) -> str | None:
    from .embedding import EmbeddedModel
    from .lagrange import LagrangeModel

    if isinstance(model, EmbeddedModel):
        return "embedded"
    if isinstance(model, LagrangeModel):
        return "lagrange"
    return None


def mass_matrix(model, q):
    """The mass matrix M(q): (nv, nv) or (B, nv, nv) for q (nq,) or (B, nq).

    Rigid-body trees: composite-body algorithm (seed 001 Algorithms 4.1-4.2).
    Closed chains embedded by :mod:`dynamics.embedding`: the mass matrix in the
    minimal (independent) coordinates, ``X* M X`` (n_ind, n_ind), q closed.
    """
    kind = _closed_chain_kind(model)
    if kind == "embedded":
        from . import embedding
        return _each_configuration(embedding.mass_matrix, model, q)
    if kind == "lagrange":
        raise TypeError("a LagrangeModel has no minimal-coordinate mass matrix; use the tree's "
                        "(model.tree_model) or embed the loops")
    return _tree_mass_matrix(model, q)


def inverse_dynamics(model, q, v, a, f_ext=None):
    """Joint forces for accelerations a (Newton-Euler, seed 001 Algorithm 3.1), gravity from the model.

    Closed chains embedded by :mod:`dynamics.embedding`: (nv,) forces, zero at
    the dependent coordinates, for closed q and consistent v, a.
    """
    kind = _closed_chain_kind(model)
    if kind == "embedded":
        if f_ext is not None:
            raise TypeError("external forces are not supported on closed chains yet")
        from . import embedding
        return _each_configuration(embedding.inverse_dynamics, model, q, v, a)
    if kind == "lagrange":
        raise TypeError("inverse dynamics of a LagrangeModel is not unique; embed the loops")
    return _tree_inverse_dynamics(model, q, v, a, f_ext)


def forward_dynamics(model, q, v, tau, f_ext=None):
    """Accelerations (nv,) or (B, nv) for joint forces tau (articulated body, seed 001 Algorithm 6.1).

    Closed chains: the accelerations of every tree joint, dependent ones
    included, consistent with the loop constraints (constraint embedding, or
    multipliers for a :class:`dynamics.lagrange.LagrangeModel`).
    """
    kind = _closed_chain_kind(model)
    if kind is not None:
        if f_ext is not None:
            raise TypeError("external forces are not supported on closed chains yet")
        from . import embedding, lagrange
        func = embedding.forward_dynamics if kind == "embedded" else lagrange.forward_dynamics
        return _each_configuration(func, model, q, v, tau)
    return _tree_forward_dynamics(model, q, v, tau, f_ext)


def bias_forces(model, q, v, f_ext=None):
    """Coriolis, centrifugal and gravity forces ``C(q, v) + g(q)``: inverse dynamics with zero acceleration.

    Trees: (nv,) or (B, nv).  Closed chains embedded by :mod:`dynamics.embedding`:
    ``X* (M a_c + C)`` at the independent coordinates (zero at the dependent ones),
    where ``a_c`` are the tree accelerations the loop constraints force when the
    independent accelerations are zero; q closed, v consistent.
    """
    kind = _closed_chain_kind(model)
    if kind == "embedded":
        if f_ext is not None:
            raise TypeError("external forces are not supported on closed chains yet")
        from . import embedding

        def one(m, qi, vi):
            return embedding.inverse_dynamics(m, qi, vi, np.zeros(m.nv))
        return _each_configuration(one, model, q, v)
    if kind == "lagrange":
        raise TypeError("bias forces of a LagrangeModel are not unique; embed the loops")
    return _tree_bias_forces(model, q, v, f_ext)


def _null_space_basis(em, q) -> np.ndarray:
    """X(q) (nv, n_ind): tree velocities per unit independent velocity (closed q)."""
    from . import embedding

    return np.column_stack([embedding.complete_velocity(em, q, e) for e in np.eye(em.n_independent)])


def jacobian(model, q, body, point=None, frame: str = "local"):
    """Jacobian of the spatial velocity ``[omega; v]`` of a point on a body (J = B* phi* H*).

    q (nq,) or (B, nq); body a name or index; point (3,) in the body frame;
    frame "local" (body axes) or "world" (ground axes).  Returns (6, nv).
    Closed chains (embedded): with respect to the independent velocities,
    ``J_tree X(q)`` (6, n_ind).
    """
    if _closed_chain_kind(model) == "embedded":
        def one(m, qi):
            return _tree_jacobian(m.tree_model, qi, body, point, frame) @ _null_space_basis(m, qi)
        return _each_configuration(one, model, q)
    return _tree_jacobian(model, q, body, point, frame)


def operational_space_inertia(model, q, bodies, points=None, frame: str = "local", directions=None,
                              pseudo_inverse: bool = False):
    """Operational space inertia ``Lambda = (B* Omega B)^-1`` of task frames (seed 002 Eqs. 32-34).

    directions : task rows kept per frame ("all", "linear", "angular" or names such as "x,z";
        :func:`dynamics.opspace.task_rows`).  At a rank-deficient task (a singular
        configuration, or more directions than the mechanism moves in) raises
        :class:`dynamics.opspace.RankDeficientTask` with the rank, or returns the
        pseudo-inverse when ``pseudo_inverse`` is True.
    Closed chains (embedded): ``(J M^-1 J*)^-1`` with J and M in the independent coordinates.
    """
    if _closed_chain_kind(model) == "embedded":
        from . import embedding
        rows = task_rows(directions, len(bodies))

        def one(m, qi):
            X = _null_space_basis(m, qi)
            pts = [None] * len(bodies) if points is None else points
            J = np.vstack([_tree_jacobian(m.tree_model, qi, b, p, frame) @ X for b, p in zip(bodies, pts)])[rows]
            return inertia_from_compliance(J @ np.linalg.solve(embedding.mass_matrix(m, qi), J.T), pseudo_inverse)
        return _each_configuration(one, model, q)
    return _tree_operational_space_inertia(model, q, bodies, points, frame, directions, pseudo_inverse)


def weights(model, q) -> SKOWeights:
    """SKO weights of the rigid-body model at q ((nq,) or (B, nq)); always batched (B >= 1)."""
    return _prepare(model, q)[3]


def composite_inertia(model, q) -> list:
    """Composite body inertias R(k) (seed 001 Algorithm 4.1): list of (B, 6, 6), body frames."""
    return _composite_inertia_sko(weights(model, q))


def articulated_body_quantities(model, q) -> ArticulatedBody:
    """Riccati solution P, D, G, tau_bar, P+, psi, K (seed 001 Eq. 33), node lists (B, ...)."""
    return articulated_body(weights(model, q))


__all__ = [
    "BodySpec", "SKOModel", "build_model", "ClosureError", "SKOTree", "SKOWeights", "weights",
    "mass_matrix", "inverse_dynamics", "forward_dynamics", "bias_forces", "gravity_forces",
    "composite_inertia", "articulated_body_quantities", "ArticulatedBody",
    "innovations_factors", "InnovationsFactors", "mass_matrix_inverse", "mass_matrix_det", "mass_matrix_logdet",
    "jacobian", "pick_off", "frame_acceleration", "operational_space_compliance", "operational_space_inertia",
    "RankDeficientTask", "task_rows",
    "mass_matrix_sensitivity", "articulated_body_sensitivity", "innovations_factors_sensitivity",
    "fixman_potential", "fixman_gradient", "christoffel_symbols", "coriolis_matrix",
    "integrate", "difference", "normalize", "random_configuration", "body_poses", "body_velocities", "center_of_mass",
    "kinetic_energy", "potential_energy",
    "newton_euler", "mass_matrix_sko", "forward_dynamics_sko", "articulated_body",
    "crf", "crm", "phi_transform", "spatial_inertia",
]
