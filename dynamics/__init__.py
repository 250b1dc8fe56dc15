"""Recursive O(N) multibody dynamics on SKO models (seeds 001, 002, 003)."""

from .model import BodySpec, SKOModel, build_model
from .rnea import inverse_dynamics, bias_forces, gravity_forces
from .crba import mass_matrix
from .aba import forward_dynamics
from .innovations import innovations_factors, mass_matrix_inverse, mass_matrix_det, mass_matrix_logdet
from .jacobians import jacobian
from .opspace import operational_space_compliance, operational_space_inertia
from .kinematics import integrate, difference, body_poses, body_velocities
from .energy import kinetic_energy, potential_energy
