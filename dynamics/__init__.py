"""Recursive O(N) multibody dynamics on SKO models (seeds 001, 002, 003)."""

from .model import BodySpec, SKOModel, build_model
from .rnea import inverse_dynamics, bias_forces, gravity_forces
from .crba import mass_matrix
from .aba import forward_dynamics
