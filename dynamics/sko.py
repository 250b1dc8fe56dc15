"""Generic SKO model layer: tree structure and per-configuration weights.

Seed 001 section 2.1 defines an SKO model by (i) a tree digraph, (ii) an SKO
operator ``E_A`` with SPO ``A = (I - E_A)^-1``, (iii) a block-diagonal joint map
``H`` and (iv) a block-diagonal, positive definite ``M``.  The algorithms of
seed 001 (gather/scatter, Lyapunov, composite inertia, Riccati, innovations,
``M^-1``, ``det M``, articulated-body forward dynamics) use nothing else, so they
are written once on this layer; the rigid-body tree (:mod:`dynamics.model`) and,
later, aggregated compound-node trees only produce the blocks.

Structure (static) -- :class:`SKOTree`
--------------------------------------
* ``n_nodes`` nodes ``k = 0 .. n_nodes-1``.  ``parent[k]`` is the parent node,
  ``-1`` for a node attached to the inertial frame (ground).  **Ordering:**
  ``parent[k] < k`` (base before tips).  Hence a *tips-to-base gather* is the loop
  ``for k in reversed(range(n))`` and a *base-to-tips scatter* is
  ``for k in range(n)``.  (Jain numbers the other way round, tips first, so his
  ``E_A`` is strictly lower and ours strictly *upper* block triangular; the
  operators are the same up to this relabelling.)  :func:`topological_order`
  gives a permutation that brings any parent array into this order.
* ``m[k]`` -- node weight dimension (6 for a rigid body, ``6 |S|`` for a
  compound node of an aggregated tree, anything for a generic SKO model).
* ``nv_node[k]`` -- joint dimension ``n_k`` (rows of ``H(k)``); may be 0.
* stacked node vectors ("spatial" stacked vectors, ``x in R^{sum m}``) are stored
  as Python lists ``x[k]`` of arrays ``(B, m_k)`` (or ``(B, m_k, C)`` for ``C``
  columns); generalized vectors (``theta_dot``, ``T``) are arrays ``(B, nv)``
  whose node-``k`` part is ``[:, v_offset[k] : v_offset[k] + nv_node[k]]``;
  :meth:`SKOTree.stack` / :meth:`SKOTree.unstack` convert node lists to the flat
  ``(B, sum m)`` layout, ``x_offset[k]`` giving the node-``k`` rows.

Weights (per configuration) -- :class:`SKOWeights`
--------------------------------------------------
* ``phi[k]`` -- ``A(parent(k), k)``, shape ``(B, m_parent, m_k)``; ``None`` for
  roots.  It is the non-zero block ``E_A(parent(k), k)``.  For rigid bodies it is
  ``phi(parent(k), k)`` of seed 002 Eq. 4 and its transpose carries velocities
  from parent to child.  Weights may be non-square and singular.
* ``H[k]`` -- joint map ``H(k)``, shape ``(B, n_k, m_k)`` (leading dim may be 1,
  broadcast over the batch).  ``H*(k) = H(k)^T`` maps joint rates to node
  velocity: ``V = phi* H* theta_dot`` (seed 002 Eq. 10).
* ``M[k]`` -- node inertia ``M(k)``, ``(B or 1, m_k, m_k)``, symmetric PSD.
* ``a[k]``, ``b[k]`` -- optional velocity-dependent stacked vectors (Coriolis
  acceleration ``a``, gyroscopic force ``b``), ``(B, m_k)``; equations of motion
  (seed 001 Eqs. 1-3) ``V = phi* H* theta_dot``,
  ``alpha = phi* (H* theta_ddot + a)``, ``f = phi (M alpha + b)``, ``T = H f``.

Building an operator on this layer needs only ``tree.parent``, ``tree.children``,
the lists above and the product functions of :mod:`dynamics.spo`
(``A x`` gather, ``A* x`` scatter and their ``E_A`` variants).  Everything is
batched over a leading dimension ``B``.

Other modules on this layer: :mod:`dynamics.lyapunov` (forward/backward
Lyapunov recursions and the dense ``A X B*`` / ``A* X B`` products),
:mod:`dynamics.crba` (``composite_inertia``, ``mass_matrix_sko``),
:mod:`dynamics.rnea` (``newton_euler``), :mod:`dynamics.riccati`
(``articulated_body`` -> P, D, G, tau_bar, P+, psi, K),
:mod:`dynamics.innovations` (factors, ``M^-1``, ``log det M``),
:mod:`dynamics.aba` (``forward_dynamics_sko``), :mod:`dynamics.opspace`
(Upsilon, Omega) and :mod:`dynamics.sensitivity` (``*_derivative_sko`` for a
given weight change ``dphi`` / ``dH``).

Helpers for writing recursions: ``mul(A, x)`` / ``mulT(A, x)`` (block times a
node-list element, ``A^T x``; vectors or column blocks), ``tree.parent_list``
and ``tree.v_slices`` (Python tuples, cheaper to index than the arrays).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate

import numpy as np

from . import topology
from .records import record

__all__ = ["SKOTree", "SKOWeights", "topological_order", "mul"]


def topological_order(parent) -> np.ndarray:
    """Permutation ``perm`` (new -> old) such that relabelled parents precede children.

    Parameters
    ----------
    parent : (n,) int
        Parent index of each node, -1 for ground; any order, must be a forest.

    Returns
    -------
    (n,) int
        ``perm[new] = old``; depth-first, children in increasing old index.
    """
    parent = np.asarray(parent, dtype=int)
    n = len(parent)
    children = [[] for _ in range(n)]
    roots = []
    for k, p in enumerate(parent):
        (roots if p < 0 else children[p]).append(k)
    order: list[int] = []
    stack = list(reversed(roots))
    while stack:
        k = stack.pop()
        order.append(k)
        stack.extend(reversed(children[k]))
    if len(order) != n:
        raise ValueError("parent array is not a forest (cycle or bad index)")
    return np.array(order, dtype=int)


@record
class SKOTree:
    """Static tree digraph of an SKO model (seed 003 section 2; seed 001 section 2.1).

    Parameters
    ----------
    parent : (n,) int
        ``parent[k] < k``; -1 for nodes attached to the inertial frame.
    m : (n,) int
        Node weight dimensions ``m_k`` (``M(k)`` is ``m_k x m_k``).
    nv_node : (n,) int
        Joint dimensions ``n_k`` (``H(k)`` is ``n_k x m_k``).
    """

    parent: np.ndarray
    m: np.ndarray
    nv_node: np.ndarray

    def __post_init__(self):
        parent = np.asarray(self.parent, dtype=int)
        object.__setattr__(self, "parent", parent)
        object.__setattr__(self, "m", np.asarray(self.m, dtype=int))
        object.__setattr__(self, "nv_node", np.asarray(self.nv_node, dtype=int))
        if not (len(parent) == len(self.m) == len(self.nv_node)):
            raise ValueError("parent, m and nv_node must have the same length")
        for k, p in enumerate(parent.tolist()):
            if not (-1 <= p < k):
                raise ValueError(f"node {k}: parent {p} violates parent[k] < k (use topological_order)")

    @property
    def n_nodes(self) -> int:
        return len(self.parent)

    @cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """``children[k]``: tuple of the children of node k (increasing)."""
        ch = [[] for _ in range(self.n_nodes)]
        for k, p in enumerate(self.parent):
            if p >= 0:
                ch[p].append(k)
        return tuple(tuple(c) for c in ch)

    @cached_property
    def parent_list(self) -> tuple[int, ...]:
        """``parent`` as a tuple of Python ints (fast indexing in recursions)."""
        return tuple(int(p) for p in self.parent)

    @cached_property
    def v_slices(self) -> tuple[slice, ...]:
        """``v_slices[k] == v_slice(k)``, precomputed."""
        return tuple(self.v_slice(k) for k in range(self.n_nodes))

    @cached_property
    def roots(self) -> tuple[int, ...]:
        return tuple(int(k) for k in np.flatnonzero(self.parent < 0))

    @cached_property
    def v_offset(self) -> np.ndarray:
        """(n+1,) start of node k's rows in generalized vectors; last entry is nv."""
        return np.array([0, *accumulate(self.nv_node.tolist())], dtype=int)

    @cached_property
    def x_offset(self) -> np.ndarray:
        """(n+1,) start of node k's rows in flat stacked node vectors; last entry is sum m."""
        return np.array([0, *accumulate(self.m.tolist())], dtype=int)

    @property
    def nv(self) -> int:
        """Total number of degrees of freedom ``N = sum n_k``."""
        return int(self.v_offset[-1])

    @property
    def nx(self) -> int:
        """Size of stacked node vectors ``sum m_k``."""
        return int(self.x_offset[-1])

    def v_slice(self, k: int) -> slice:
        return slice(int(self.v_offset[k]), int(self.v_offset[k + 1]))

    def x_slice(self, k: int) -> slice:
        return slice(int(self.x_offset[k]), int(self.x_offset[k + 1]))

    @cached_property
    def ancestors_list(self) -> tuple[tuple[int, ...], ...]:
        """``ancestors_list[k]``: strict ancestors of k, nearest first."""
        parent = self.parent_list
        return tuple(tuple(topology.ancestors(parent, k)) for k in range(self.n_nodes))

    def ancestors(self, k: int) -> tuple[int, ...]:
        """Strict ancestors of node k, nearest first."""
        return self.ancestors_list[k]

    def subtree(self, k: int) -> list[int]:
        """Node k and all its descendants, increasing (a contiguous range is not assumed)."""
        out, stack = [], [k]
        while stack:
            j = stack.pop()
            out.append(j)
            stack.extend(self.children[j])
        return sorted(out)

    def is_ancestor(self, i: int, j: int) -> bool:
        """True when i is j or a strict ancestor of j (``i >= j`` in seed 001's partial order)."""
        return i == j or i in self.ancestors_list[j]

    def common_ancestor(self, i: int, j: int) -> int:
        """Nearest common ancestor-or-self of nodes i and j, -1 if none."""
        return topology.lowest_common_ancestor(self.parent_list, (int(i), int(j)))

    @cached_property
    def depth(self) -> np.ndarray:
        return np.array([len(a) for a in self.ancestors_list], dtype=int)

    # ---- stacked vector helpers -----------------------------------------
    def stack(self, x: list) -> np.ndarray:
        """Node list ``x[k]`` (B, m_k[, C]) -> flat (B, sum m[, C])."""
        return np.concatenate(list(x), axis=1)

    def unstack(self, x) -> list:
        """Flat (B, sum m[, C]) -> node list of views (B, m_k[, C])."""
        return [x[:, self.x_slice(k)] for k in range(self.n_nodes)]

    def zeros(self, batch: int, cols: int | None = None) -> list:
        """A zero stacked node vector as a node list."""
        tail = () if cols is None else (cols,)
        return [np.zeros((batch, int(mk)) + tail) for mk in self.m]


@dataclass(eq=False)
class SKOWeights:
    """Per-configuration blocks of an SKO model (see the module docstring).

    Attributes
    ----------
    tree : SKOTree
    phi : list of (B, m_parent, m_k) arrays or None for roots -- ``A(parent(k), k)``
    H : list of (B|1, n_k, m_k) arrays -- joint maps ``H(k)``
    M : list of (B|1, m_k, m_k) arrays -- node inertias ``M(k)``
    a : list of (B, m_k) arrays or None -- Coriolis accelerations ``a(k)``
    b : list of (B, m_k) arrays or None -- gyroscopic forces ``b(k)``
    batch : int -- B
    armature : list of (B|1, n_k, n_k) arrays or None -- joint-space rotor inertia ``J(k)``:
        ``T(k) = H(k) f(k) + J(k) theta_ddot(k)``, so ``M = H A M A* H* + J`` and
        ``D(k) = H(k) P(k) H*(k) + J(k)`` (diagonal for a rigid-body tree; None: zero)
    """

    tree: SKOTree
    phi: list
    H: list
    M: list
    batch: int
    a: list | None = None
    b: list | None = None
    armature: list | None = None
    extras: dict = field(default_factory=dict)

    def check(self) -> None:
        """Raise ValueError if a block has the wrong shape."""
        t = self.tree
        for k in range(t.n_nodes):
            mk, nk, p = t.m[k], t.nv_node[k], t.parent[k]
            if self.H[k].shape[-2:] != (nk, mk):
                raise ValueError(f"H({k}) has shape {self.H[k].shape}, expected (., {nk}, {mk})")
            if self.M[k].shape[-2:] != (mk, mk):
                raise ValueError(f"M({k}) has shape {self.M[k].shape}, expected (., {mk}, {mk})")
            if p >= 0 and self.phi[k].shape[-2:] != (t.m[p], mk):
                raise ValueError(f"phi({p},{k}) has shape {self.phi[k].shape}, expected (., {t.m[p]}, {mk})")


#: batch size from which matrix-vector products use einsum (faster than matmul
#: on many tiny matrices) instead of matmul (less call overhead).
EINSUM_MIN_BATCH = 32


def mul(A, x):
    """Block times stacked-vector element: A (B|1, r, c); x (B, c) or (B, c, C)."""
    if x.ndim == A.ndim - 1:
        if x.shape[0] >= EINSUM_MIN_BATCH:
            return np.einsum("...ij,...j->...i", A, x)
        return (A @ x[..., None])[..., 0]
    return A @ x


def mulT(A, x):
    """``A^T x`` for a block A (B|1, r, c) and x (B, r) or (B, r, C)."""
    if x.ndim == A.ndim - 1:
        if x.shape[0] >= EINSUM_MIN_BATCH:
            return np.einsum("...ji,...j->...i", A, x)
        return (x[..., None, :] @ A)[..., 0, :]
    return np.swapaxes(A, -1, -2) @ x
