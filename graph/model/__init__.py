"""From the analysed assembly to a dynamics model (seed 004's graph -> seed 001's SKO tree -> seed
000's aggregated tree for closed chains).

Modules: :mod:`.build` (bodies and joints of the tree from composites and reduced joints;
``build_model``), :mod:`.tree` (the spanning tree and its ``SKOModel``), :mod:`.closed` (chords and
couplings for :mod:`dynamics.embedding`, the Lagrange model), :mod:`.lumped` (the lumped assembly
the exporters write), :mod:`.passive` (joint damping and limits per coordinate),
:mod:`.removed` (coordinates of joints the reduction removed, for simulation outputs).
"""

from .build import LOOP_POLICIES, REDUNDANT_POLICIES, build_model, lumped, subject_location, tree_inputs
from .passive import joint_properties
from .removed import removed_joint_columns
from .tree import RigidBody, TreeModel, build_tree_model

__all__ = ["LOOP_POLICIES", "REDUNDANT_POLICIES", "RigidBody", "TreeModel", "build_model", "build_tree_model",
           "joint_properties", "lumped", "removed_joint_columns", "subject_location", "tree_inputs"]
