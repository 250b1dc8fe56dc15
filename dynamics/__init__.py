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
Dispatch:   every model has a ``kind`` (``tree``, ``embedded``, ``lagrange``, ``aggregated``);
            :mod:`dynamics.dispatch` maps it to the algorithms of the functions below;
            ``dispatch.backend("numpy" | "compiled")`` forces an implementation in a ``with`` block
Data:       ``model.create_data()`` (Pinocchio's ``Data``): ``data=`` of the tree functions below
Dynamics:   ``mass_matrix``, ``inverse_dynamics(model, q, v, a, f_ext=None, data=None)``,
            ``forward_dynamics(model, q, v, tau, f_ext=None, data=None)``, ``bias_forces``, ``gravity_forces``,
            ``composite_inertia``, ``articulated_body_quantities``
Forces:     ``passive_forces(model, q, v)`` (joint springs and dampers), ``actuator_forces(model, q, v, ctrl, act)``
            (``ctrl`` in ``model.actuator_names`` order), MuJoCo's semantics (:mod:`dynamics.forces`)
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


from .aba import forward_dynamics_sko
from .batch import prepare as _prepare
from .closed.closure import ClosureError
from .coriolis import christoffel_symbols, coriolis_matrix
from .crba import composite_inertia as _composite_inertia_sko
from .crba import mass_matrix_sko
from .dispatch import algorithm
from .energy import kinetic_energy, potential_energy
from .fixman import fixman_gradient, fixman_potential
from .force_elements import ActuatorSpec, ForceElements, JointSpring
from .forces import activation_names, actuator_activation_rates, actuator_forces, friction_forces, passive_forces
from .innovations import InnovationsFactors, innovations_factors
from .jacobians import frame_acceleration, pick_off
from .kinematics import (body_poses, body_velocities, center_of_mass, difference, integrate, normalize,
                         random_configuration)
from .model import BodySpec, SKOModel, build_model
from .opspace import RankDeficientTask, operational_space_compliance, task_rows
from .riccati import ArticulatedBody, articulated_body
from .rnea import newton_euler
from .sensitivity import articulated_body_sensitivity, innovations_factors_sensitivity, mass_matrix_sensitivity
from .singular import SingularMassMatrix
from .sko import SKOTree, SKOWeights
from .spatial import crf, crm, phi_transform, spatial_inertia


def mass_matrix(model, q, data=None):
    """The mass matrix M(q): (nv, nv) or (B, nv, nv) for q (nq,) or (B, nq).

    Rigid-body trees: composite-body algorithm (seed 001 Algorithms 4.1-4.2).
    Closed chains embedded by :mod:`dynamics.embedding`: the mass matrix in the
    minimal (independent) coordinates, ``X* M X`` (n_ind, n_ind), q closed.
    Implementation by model kind: :mod:`dynamics.dispatch`.

    ``data`` (every tree function takes it): a ``model.create_data()``, Pinocchio's ``Data``: the
    compiled kernels' work arrays, reused across calls (default: one kept with the model,
    ``model.default_data``); after a call it holds that call's intermediate results.  Not
    thread-safe: a thread needs its own.  The numpy reference (``dispatch.backend("numpy")``)
    ignores it.
    """
    return algorithm(model, "mass_matrix")(model, q, data=data)


def inverse_dynamics(model, q, v, a, f_ext=None, data=None):
    """Joint forces for accelerations a (Newton-Euler, seed 001 Algorithm 3.1), gravity from the model.

    Closed chains embedded by :mod:`dynamics.embedding`: (nv,) forces, zero at
    the dependent coordinates, for closed q and consistent v, a.
    """
    return algorithm(model, "inverse_dynamics")(model, q, v, a, f_ext=f_ext, data=data)


def forward_dynamics(model, q, v, tau, f_ext=None, data=None):
    """Accelerations (nv,) or (B, nv) for joint forces tau (articulated body, seed 001 Algorithm 6.1).

    Closed chains: the accelerations of every tree joint, dependent ones
    included, consistent with the loop constraints (constraint embedding, or
    multipliers for a :class:`dynamics.closed.lagrange.LagrangeModel`).
    """
    return algorithm(model, "forward_dynamics")(model, q, v, tau, f_ext=f_ext, data=data)


def bias_forces(model, q, v, f_ext=None, data=None):
    """Coriolis, centrifugal and gravity forces ``C(q, v) + g(q)``: inverse dynamics with zero acceleration.

    Trees: (nv,) or (B, nv).  Closed chains embedded by :mod:`dynamics.embedding`:
    ``X* (M a_c + C)`` at the independent coordinates (zero at the dependent ones),
    where ``a_c`` are the tree accelerations the loop constraints force when the
    independent accelerations are zero; q closed, v consistent.
    """
    return algorithm(model, "bias_forces")(model, q, v, f_ext=f_ext, data=data)


def gravity_forces(model, q, data=None):
    """Generalized gravity forces ``g(q)`` (inverse dynamics with v = a = 0): (nv,) or (B, nv); trees."""
    return algorithm(model, "gravity_forces")(model, q, data=data)


def mass_matrix_inverse(model, q, data=None):
    """``M(q)^-1`` by the innovations factorization (seed 001 Eq. 51): (nv, nv) or (B, nv, nv); trees."""
    return algorithm(model, "mass_matrix_inverse")(model, q, data=data)


def mass_matrix_logdet(model, q, data=None):
    """``log det M(q) = sum_k log det D(k)`` (seed 001 Eq. 53): float or (B,); trees."""
    return algorithm(model, "mass_matrix_logdet")(model, q, data=data)


def mass_matrix_det(model, q, data=None):
    """``det M(q) = prod_k det D(k)`` (seed 001 Corollary 6.1): float or (B,); trees."""
    return algorithm(model, "mass_matrix_det")(model, q, data=data)


def jacobian(model, q, body, point=None, frame: str = "local", data=None):
    """Jacobian of the spatial velocity ``[omega; v]`` of a point on a body (J = B* phi* H*).

    q (nq,) or (B, nq); body a name or index; point (3,) in the body frame;
    frame "local" (body axes) or "world" (ground axes).  Returns (6, nv).
    Closed chains (embedded): with respect to the independent velocities,
    ``J_tree X(q)`` (6, n_ind).
    """
    return algorithm(model, "jacobian")(model, q, body, point, frame, data=data)


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
    return algorithm(model, "operational_space_inertia")(model, q, bodies, points, frame, directions,
                                                         pseudo_inverse)


def consistent_state(model, q, v):
    """A state (q (nq,), v (nv,)) the model can evaluate: for an embedded closed chain the loops
    closed from q (independent coordinates kept, dependent ones by Newton's method) and v
    completed from its independent entries; for every other kind (q, v) as given."""
    return algorithm(model, "consistent_state")(model, q, v)


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
    "mass_matrix", "inverse_dynamics", "forward_dynamics", "consistent_state", "bias_forces", "gravity_forces",
    "composite_inertia", "articulated_body_quantities", "ArticulatedBody",
    "innovations_factors", "InnovationsFactors", "mass_matrix_inverse", "mass_matrix_det", "mass_matrix_logdet",
    "jacobian", "pick_off", "frame_acceleration", "operational_space_compliance", "operational_space_inertia",
    "RankDeficientTask", "SingularMassMatrix", "task_rows",
    "mass_matrix_sensitivity", "articulated_body_sensitivity", "innovations_factors_sensitivity",
    "fixman_potential", "fixman_gradient", "christoffel_symbols", "coriolis_matrix",
    "integrate", "difference", "normalize", "random_configuration", "body_poses", "body_velocities", "center_of_mass",
    "kinetic_energy", "potential_energy",
    "newton_euler", "mass_matrix_sko", "forward_dynamics_sko", "articulated_body",
    "crf", "crm", "phi_transform", "spatial_inertia",
    "passive_forces", "actuator_forces", "ForceElements", "JointSpring", "ActuatorSpec",
    "actuator_activation_rates", "activation_names", "friction_forces",
]
