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
  others being redundant constraints);
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
``project_configuration(em, q)``, ``project_velocity(em, q, v)``, ``project_state(em, q, v)``,
``forward_dynamics(em, q, v, tau)``,
``inverse_dynamics(em, q, v, a)``, ``mass_matrix(em, q)`` (minimal coordinates),
``constraint_forces(em, q, v, tau)``, ``chord_coordinates(em, q, v=None)``,
``embedded_state(em, q, v=None)`` (the embedded SKO weights, for the generic algorithms).

This module is the public face; the code lives in one module per topic:
:mod:`dynamics.closed.embedded_model` (building the model: compound nodes, choice of the
dependent coordinates), :mod:`dynamics.closed.embedded_state` (per-configuration terms
``X``, ``Xdot theta_dot_i``, embedded weights), :mod:`dynamics.closed.embedded_coordinates`
(closing loops, velocities, projections, chord coordinates) and
:mod:`dynamics.closed.embedded_dynamics` (forward and inverse dynamics, mass matrix,
constraint forces).  Tolerances are in :mod:`dynamics.tolerances`.
"""

from __future__ import annotations

from . import topology
from .closed.closure import ClosureError
from .closed.embedded_coordinates import (chord_coordinates, complete_configuration, complete_velocity,
                                          project_configuration, project_state, project_velocity)
from .closed.embedded_dynamics import (ConstraintForces, constraint_forces, forward_dynamics, inverse_dynamics,
                                       mass_matrix)
from .closed.embedded_model import EmbeddedLoop, EmbeddedModel, embed
from .closed.embedded_state import EmbeddedState, embedded_state

__all__ = ["EmbeddedModel", "EmbeddedLoop", "EmbeddedState", "ConstraintForces", "embed", "loop_sets",
           "complete_configuration", "complete_velocity", "forward_dynamics", "inverse_dynamics", "mass_matrix",
           "constraint_forces", "embedded_state", "chord_coordinates", "project_configuration", "project_state",
           "project_velocity", "ClosureError"]


def loop_sets(parent, chords) -> list[frozenset]:
    """Disjoint compound-node body sets for the loops closed by ``chords`` (seed 000 5.3), on a
    parent array with ground as the root -1 (:func:`dynamics.topology.loop_sets`)."""
    return topology.loop_sets([int(p) for p in parent], [(c.body_a, c.body_b) for c in chords])
