"""The constraint embedding of closed chains (seed 000 sections 5-6): the public contract's module name.

``mbcompose.dynamics.embedding.complete_configuration`` and ``complete_velocity`` (DESIGN.md's public
contract), ``embed``, ``EmbeddedModel`` and the rest of the method live in :mod:`dynamics.closed.embedding`,
which documents them; this module gives them their public name.
"""

from .closed.closure import ClosureError
from .closed.embedding import (ConstraintForces, EmbeddedLoop, EmbeddedModel, EmbeddedState, chord_coordinates,
                               complete_configuration, complete_velocity, constraint_forces, embed,
                               embedded_state, forward_dynamics, inverse_dynamics, loop_sets, mass_matrix,
                               project_configuration, project_state, project_velocity)

__all__ = ["EmbeddedModel", "EmbeddedLoop", "EmbeddedState", "ConstraintForces", "embed", "loop_sets",
           "complete_configuration", "complete_velocity", "forward_dynamics", "inverse_dynamics", "mass_matrix",
           "constraint_forces", "embedded_state", "chord_coordinates", "project_configuration", "project_state",
           "project_velocity", "ClosureError"]
