"""PyCraft operator workbench (seed 002 sections 3-5) on the SKO layer of :mod:`dynamics.sko`.

Type operator expressions as in the papers and evaluate them::

    from mbcompose.dynamics.workbench import *
    g = Subgraph.from_model(model, q)          # or Subgraph.from_blocks(parent, phi, H, M)
    H, Hst, M, ephi = HClass(g), HStarClass(g), MClass(g), EPhiClass(g)
    phi, phistar = SPOClass(ephi), SPOStarClass(ephi)
    massmat = H * phi * M * phistar * Hst      # lazy; O(N) recursions per column
    marray = massmat.asArray()                 # seed 002 Eq. 16
    T = massmat * thetaddot                    # thetaddot: SpatialVector(g.joint_space, ...)

Modules: :mod:`.core` (spaces, vectors, the operator base class, lazy products
and sums), :mod:`.structured` (diagonal, SKO, SPO classes and the ``*``/``+``
dispatch), :mod:`.system` (the subgraph ``g``), :mod:`.operators` (named
operators H, M, P, E_phi, E_psi, K, B*, sensitivity operators).  See
docs/workbench.md.
"""

from .core import (TOL, IncompatibleOperands, ProductOperator, Space, SpatialMatrixOperator, SpatialVector,
                   SumOperator)
from .operators import *  # noqa: F401,F403
from .operators import __all__ as _ops_all
from .structured import (BlockSparseOperator, IdClass, SKOClass, SKOStarClass, SPOClass, SPOStarClass,
                         SpatialDiagonalMatrixOperator, SpatialSquareMatrixOperator, as_diagonal)
from .system import Subgraph, subgraph

__all__ = ["TOL", "IncompatibleOperands", "ProductOperator", "Space", "SpatialMatrixOperator", "SpatialVector",
           "SumOperator", "BlockSparseOperator", "IdClass", "SKOClass", "SKOStarClass", "SPOClass", "SPOStarClass",
           "SpatialDiagonalMatrixOperator", "SpatialSquareMatrixOperator", "as_diagonal", "Subgraph",
           "subgraph"] + list(_ops_all)
