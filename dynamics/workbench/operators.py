"""The named operators of PyCraft (seed 002 sections 3-5), built for a subgraph ``g``.

=============== ============================ ==========================================
class           operator                     blocks (node k of ``g``)
=============== ============================ ==========================================
IdClass         I                            identity (node or joint space, adapts)
HStarClass      H*  (Eq. 6)                  H*(k), (m_k, n_k)
HClass          H   (Eq. 6)                  H(k), (n_k, m_k)
MClass          M   (Eq. 15)                 M(k)
EPhiClass       E_phi (Eq. 7)                E(parent(k), k) = phi(parent(k), k)
PClass          P   (Eqs. 22-23)             articulated body inertia P(k)
DClass, DinvClass, GClass, TauClass, TauBarClass, PPlusClass  (Eq. 24)
KClass          K = E_phi G (Eq. 24)         K(parent(k), k) = phi(parent(k), k) G(k)
EPsiClass       E_psi = E_phi tau_bar        psi(parent(k), k) (Eq. 24; seed 001 Lemma 8)
BStarClass      B* pick-off (Eq. 12)         B*(nd, k) = phi*(k, O_nd)
H_iClass        H~_{<=i}  (Eq. 40)           H~*(i) for k = i and k outboard of i
Hs_iClass       H~_{<i}                      H~*(i) for k strictly outboard of i
Hd_iClass       H~_{=i}                      H~*(i) for k = i only
=============== ============================ ==========================================

Aliases read like the papers: ``H(g)``, ``Hst(g)`` (= ``HStar``), ``M(g)``,
``P(g)``, ``Id(g)``, ``EPhi(g)``, ``EPsi(g)``, ``Phi(g)``, ``PhiStar(g)``,
``Psi(g)``, ``PsiStar(g)``, ``D(g)``, ``Dinv(g)``, ``G(g)``, ``K(g)``,
``BStar(g, nodes)``, ``H_i(g, i)``, ``Hs_i(g, i)``, ``Hd_i(g, i)``.

Sensitivity operators (seed 002 section 5).  ``H~*(i)`` is the 6 x 6 matrix of
Eq. 39, ``diag(~h, ~h)`` for a rotational hinge with ``H*(i) = [h; 0]``; we use
``crf(H*(i))``, which is that matrix for a rotational hinge.  Eq. 40 as printed
puts ``H~*(k)`` (each node's own hinge) on the diagonal and its text mixes ``<=``
and ``>=``; derived again: the derivative with respect to ``theta_i`` rotates
every node outboard of hinge i about hinge i's axis, so the block is hinge
``i``'s ``H~*(i)`` for every node in the subtree of i ("k <= i" in seed 001's
partial order, where ``i >= j`` means i is an ancestor of j).

Which derivative formulas hold depends on the frame the node blocks are
expressed in (``Subgraph.from_model(..., frames=...)``); all are checked against
finite differences in tests/dynamics/test_workbench_sensitivity.py:

* ``frames="world"`` (one inertial frame): Eq. 41a ``[E_phi]_i = H~_{<=i} E_phi - E_phi H~_{<i}``,
  41c ``[H*]_i = H~_{<i} H*``, 41d ``[M]_i = H~_{<=i} M - M H~_{<=i}``; Eq. 41b derived
  again as ``[phi]_i = phi H~_{=i} phi - phi H~_{<=i} + H~_{<i} phi``; Eqs. 43-46 as
  printed, except Eq. 44f whose left factor is ``H~_{<=i}``:
  ``[E_psi]_i = H~_{<=i} E_psi - E_psi H~_{<i} - E_psi lambda H* D^-1 H``;
* ``frames="hinge"`` (node k in a frame fixed on its parent at hinge k): Listing 18,
  ``[E_phi]_i = H~_{=i} E_phi``, ``[phi]_i = phi H~_{=i} phi - phi H~_{=i}``,
  ``[M]_i = H~_{=i} M - M H~_{=i}``;
* ``frames="body"`` (:mod:`dynamics.model`): ``[E_phi]_i = E_phi H~_{=i}``, ``[M]_i = 0``;
* all frames: Eq. 42 (mass matrix) and Eq. 48 (Fixman gradient).
"""

from __future__ import annotations

import numpy as np

from ..spatial import crf, phi_transform
from .core import Space
from .structured import (BlockSparseOperator, IdClass, SKOClass, SPOClass, SPOStarClass,
                         SpatialDiagonalMatrixOperator)
from .system import Subgraph

__all__ = ["IdClass", "HStarClass", "HClass", "MClass", "PClass", "DClass", "DinvClass", "GClass", "TauClass",
           "TauBarClass", "PPlusClass", "EPhiClass", "EPsiClass", "KClass", "BStarClass", "H_iClass", "Hs_iClass",
           "Hd_iClass", "hinge_tilde",
           "Id", "H", "Hst", "HStar", "M", "P", "D", "Dinv", "G", "K", "Tau", "TauBar", "EPhi", "EPsi", "Phi",
           "PhiStar", "Psi", "PsiStar", "BStar", "B", "H_i", "Hs_i", "Hd_i"]


def _check_g(g):
    if not isinstance(g, Subgraph):
        raise TypeError(f"operators are built for a Subgraph g, got {type(g).__name__}")


class HStarClass(SpatialDiagonalMatrixOperator):
    """``H* = diag{H*(k)}`` (seed 002 Eq. 6): joint space -> node space."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        super().__init__(g.node_space, g.joint_space, [h.T for h in g.H], "H*")


class HClass(HStarClass):
    """``H = diag{H(k)}`` (seed 002 Eq. 6): node space -> joint space.

    Derived from :class:`HStarClass` as in PyCraft; its blocks are ``H(k)``.
    """

    def __init__(self, g: Subgraph):
        _check_g(g)
        SpatialDiagonalMatrixOperator.__init__(self, g.joint_space, g.node_space, list(g.H), "H")


class MClass(SpatialDiagonalMatrixOperator):
    """``M = diag{M(k)}`` (seed 002 Eq. 15)."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        super().__init__(g.node_space, g.node_space, list(g.M), "M")


def _ab(g, field):
    return [x[0] for x in getattr(g.articulated, field)]


class PClass(SpatialDiagonalMatrixOperator):
    """Articulated body inertia ``P = diag{P(k)}`` (seed 002 Eqs. 22-23), Riccati solution
    by :func:`dynamics.riccati.articulated_body` (seed 001 Eq. 33)."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        super().__init__(g.node_space, g.node_space, _ab(g, "P"), "P")


class PPlusClass(SpatialDiagonalMatrixOperator):
    """``P+ = tau_bar P`` (seed 002 Eq. 24)."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        super().__init__(g.node_space, g.node_space, _ab(g, "P_plus"), "P+")


class DClass(SpatialDiagonalMatrixOperator):
    """``D = H P H*`` (seed 002 Eq. 24), joint space."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        super().__init__(g.joint_space, g.joint_space, _ab(g, "D"), "D")


class DinvClass(SpatialDiagonalMatrixOperator):
    """``D^-1`` (seed 002 Eq. 24), joint space."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        super().__init__(g.joint_space, g.joint_space, _ab(g, "Dinv"), "D^-1")


class GClass(SpatialDiagonalMatrixOperator):
    """Kalman gain ``G = P H* D^-1`` (seed 002 Eq. 24): joint space -> node space."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        super().__init__(g.node_space, g.joint_space, _ab(g, "G"), "G")


class TauBarClass(SpatialDiagonalMatrixOperator):
    """``tau_bar = I - G H`` (seed 002 Eq. 24)."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        super().__init__(g.node_space, g.node_space, _ab(g, "tau_bar"), "tau_bar")


class TauClass(SpatialDiagonalMatrixOperator):
    """``tau = G H`` (seed 002 Eq. 24)."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        super().__init__(g.node_space, g.node_space, [np.eye(t.shape[0]) - t for t in _ab(g, "tau_bar")], "tau")


class EPhiClass(SKOClass):
    """``E_phi`` (seed 002 Eq. 7): SKO operator with blocks ``phi(parent(k), k)``."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        super().__init__(g, g.phi, name="E_phi")


class EPsiClass(SKOClass):
    """``E_psi = E_phi tau_bar`` (seed 002 Eq. 24; seed 001 Lemma 8): blocks
    ``psi(parent(k), k) = phi(parent(k), k) tau_bar(k)``."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        psi = g.articulated.psi
        super().__init__(g, [None if p is None else p[0] for p in psi], name="E_psi")


class KClass(SKOClass):
    """``K = E_phi G`` (seed 002 Eq. 24): blocks ``K(parent(k), k) = phi(parent(k), k) G(k)``,
    joint space -> node space."""

    def __init__(self, g: Subgraph):
        _check_g(g)
        Kb = g.articulated.K
        super().__init__(g, [None if x is None else x[0] for x in Kb], g.node_space, g.joint_space, "K")


def _pick_block(g: Subgraph, k, spec):
    m = g.tree.m[g.local(k)]
    if spec is None:
        return np.eye(m)
    spec_arr = None if isinstance(spec, tuple) else np.asarray(spec, dtype=float)
    if isinstance(spec, tuple):
        R, l = spec
        return phi_transform(np.asarray(R, float), np.asarray(l, float))
    if spec_arr.shape == (3,):
        return phi_transform(np.eye(3), spec_arr)
    if spec_arr.ndim == 2 and spec_arr.shape[0] == m:
        return spec_arr
    raise ValueError(f"pick-off node on {k}: expected None, a (3,) offset, (R, l) or an ({m}, c) block, "
                     f"got {spec!r}")


class BStarClass(BlockSparseOperator):
    """Pick-off operator ``B*`` (seed 002 Eq. 12): node space -> pick-off node velocities.

    Parameters
    ----------
    g : Subgraph
    nodes : list of ``k`` or ``(k, spec)``
        ``k`` is the node (global index or name) the pick-off node ``O`` sits on;
        ``spec`` gives ``phi(k, O)``: None (``O`` is node k's frame), a (3,) offset
        ``l(k, O)`` in node k's frame (``phi = [[I, ~l], [0, I]]``, Eq. 4), a pair
        ``(R, l)`` with the orientation of ``O`` in k (:func:`dynamics.spatial.phi_transform`),
        or an explicit (m_k, c) block (generic SKO models).

    ``V_nd = B* V`` (Eq. 11-12) and ``J = B* phi* H*`` (Eq. 13).
    """

    def __init__(self, g: Subgraph, nodes):
        _check_g(g)
        items = []
        for spec in nodes:
            k, s = (spec if isinstance(spec, (tuple, list)) and len(spec) == 2 else (spec, None))
            items.append((g._index(k), _pick_block(g, k, s)))
        self.pick_nodes = tuple(k for k, _ in items)
        row = Space(g, "pick", range(len(items)), [b.shape[1] for _, b in items], tag=id(self))
        super().__init__(row, g.node_space, {(i, k): b.T for i, (k, b) in enumerate(items)}, "B*")


def hinge_tilde(g: Subgraph, i) -> np.ndarray:
    """``H~*(i)`` (seed 002 Eq. 39) = ``crf(H*(i))``; node i must be a 6-D node with a 1-dof hinge."""
    j = g.local(i)
    Hi = g.H[j]
    if Hi.shape != (1, 6):
        raise ValueError(f"node {i}: sensitivity operators need a single-dof hinge on a 6-D node, H is {Hi.shape}")
    return crf(Hi[0])


def _subtree_local(g: Subgraph, j):
    out, stack = set(), [j]
    ch = g.tree.children
    while stack:
        x = stack.pop()
        out.add(x)
        stack.extend(ch[x])
    return out


class _HingeSensitivity(SpatialDiagonalMatrixOperator):
    _which = "<="

    def __init__(self, g: Subgraph, i):
        _check_g(g)
        j = g.local(i)
        Ht = hinge_tilde(g, i)
        sub = _subtree_local(g, j)
        if self._which == "<":
            sub.discard(j)
        elif self._which == "=":
            sub = {j}
        blocks = [Ht if x in sub else np.zeros((m, m)) for x, m in enumerate(g.tree.m)]
        super().__init__(g.node_space, g.node_space, blocks, f"H~{self._which}{i}")
        self.i = g._index(i)


class H_iClass(_HingeSensitivity):
    """``H~_{<=i} = diag{H~*(i) 1[k <= i]}`` (seed 002 Eq. 40): node i and its outboard nodes."""

    _which = "<="


class Hs_iClass(_HingeSensitivity):
    """``H~_{<i} = diag{H~*(i) 1[k < i]}`` (seed 002 Eq. 40): nodes strictly outboard of i."""

    _which = "<"


class Hd_iClass(_HingeSensitivity):
    """``H~_{=i} = diag{H~*(i) 1[k = i]}`` (seed 002 Eq. 40): node i only."""

    _which = "="


# ---- aliases that read like the papers ----------------------------------------
Id = IdClass
H = HClass
Hst = HStar = HStarClass
M = MClass
P = PClass
D = DClass
Dinv = DinvClass
G = GClass
K = KClass
Tau = TauClass
TauBar = TauBarClass
EPhi = EPhiClass
EPsi = EPsiClass
BStar = BStarClass
H_i = H_iClass
Hs_i = Hs_iClass
Hd_i = Hd_iClass


def Phi(g: Subgraph) -> SPOClass:
    """``phi = (I - E_phi)^-1`` (seed 002 Eq. 9)."""
    return SPOClass(EPhiClass(g), "phi")


def PhiStar(g: Subgraph) -> SPOStarClass:
    """``phi*``."""
    return SPOStarClass(EPhiClass(g), "phi*")


def Psi(g: Subgraph) -> SPOClass:
    """``psi = (I - E_psi)^-1`` (seed 002 section 4)."""
    return SPOClass(EPsiClass(g), "psi")


def PsiStar(g: Subgraph) -> SPOStarClass:
    """``psi*``."""
    return SPOStarClass(EPsiClass(g), "psi*")


def B(g: Subgraph, nodes):
    """``B`` = transpose of :class:`BStarClass`."""
    return BStarClass(g, nodes).getTranspose()
