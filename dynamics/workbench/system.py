"""The subgraph ``g`` that workbench operators are built for (seed 002 section 3).

PyCraft builds every operator from "a multibody subgraph ``g``", which may be
the whole system or any connected subtree (seed 002 section 1: "the analysis of
individual limbs").  :class:`Subgraph` holds, for one configuration, the
blocks of the generic SKO model of :mod:`dynamics.sko` restricted to a set of
nodes:

* the local tree: node ``j`` of the subgraph is global node ``nodes[j]``; its
  parent is the local index of the global parent when that parent is in the
  subgraph, else -1 (the subgraph's top node is cut from its inboard edge, as
  when a limb is analysed on its own with its base held fixed);
* per node: ``phi[j] = E(parent(j), j)`` (None for the top), ``H[j]`` (n_j, m_j),
  ``M[j]`` (m_j, m_j), and optional Coriolis/gyroscopic vectors ``a[j]``, ``b[j]``.

The articulated-body (Riccati) quantities are computed once per subgraph by
:func:`dynamics.riccati.articulated_body` (seed 001 Eq. 33).  The operators are those of
the papers' SKO model: a joint's rotor inertia (``SKOModel.armature``, a joint-space term
``J`` outside ``H A M A* H*``) is not part of them, so ``M`` here is ``H A M A* H*``.

:meth:`Subgraph.similarity` applies a block-diagonal similarity transform
(seed 003 section 5, Lemma 8): ``E' = X E X^-1``, ``H' = H X^-1``,
``M' = X M X*``, ``a' = X^-* a``... with ``X = diag{X(k)}``; the mass matrix is
unchanged.  With ``X(k) = diag(R_k, R_k)`` it re-expresses every body's
quantities in another frame (e.g. the inertial frame assumed by seed 002 Eq. 41).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..joints import JOINTS
from ..sko import SKOTree, SKOWeights
from .core import Space, SpatialVector

__all__ = ["Subgraph", "subgraph"]


class Subgraph:
    """Blocks of an SKO model on a connected set of nodes, at one configuration.

    Parameters
    ----------
    weights : dynamics.sko.SKOWeights
        Blocks of the whole model (batched; entry ``batch_index`` is used).
    nodes : sequence of int or str, optional
        Global node indices (or names) of a connected subtree; default all.
    batch_index : int
    names : sequence of str, optional
        Node names (global order), so that nodes can be given by name.
    a, b : list of (m_k,) or (B, m_k) arrays, optional
        Coriolis accelerations and gyroscopic forces of all nodes (seed 001 Eq. 1).
    """

    def __init__(self, weights: SKOWeights, nodes=None, batch_index: int = 0, names=None, a=None, b=None):
        t = weights.tree
        self.full_tree = t
        self.names = None if names is None else tuple(names)
        n = t.n_nodes
        if nodes is None:
            nodes = range(n)
        gl = sorted({self._index(k) for k in nodes})
        if not gl:
            raise ValueError("a subgraph needs at least one node")
        pos = {k: j for j, k in enumerate(gl)}
        parent = np.array([pos.get(int(t.parent[k]), -1) for k in gl], dtype=int)
        tops = [gl[j] for j in range(len(gl)) if parent[j] < 0]
        if len(tops) > 1 and nodes is not None and len(gl) < n:
            raise ValueError(f"nodes {gl} are not a connected subtree: several top nodes {tops}")
        self.nodes = tuple(int(k) for k in gl)
        self.tree = SKOTree(parent, t.m[gl], t.nv_node[gl])

        def pick(x):
            x = np.asarray(x, dtype=float)
            return x[batch_index if x.shape[0] > 1 else 0] if x.ndim == 3 else x

        self.phi = [None if parent[j] < 0 else pick(weights.phi[k]) for j, k in enumerate(gl)]
        self.H = [pick(weights.H[k]) for k in gl]
        self.M = [pick(weights.M[k]) for k in gl]

        def vec(lst):
            if lst is None:
                return None
            out = []
            for k in gl:
                v = np.asarray(lst[k], dtype=float)
                out.append(v[batch_index if v.shape[0] > 1 else 0] if v.ndim == 2 else v)
            return out

        self._a = vec(a if a is not None else weights.a)
        self._b = vec(b if b is not None else weights.b)

    # ---- constructors ------------------------------------------------------
    @classmethod
    def from_blocks(cls, parent, phi, H, M, names=None, a=None, b=None) -> "Subgraph":
        """A subgraph from plain blocks (generic SKO model, seed 001 section 2.1).

        Parameters
        ----------
        parent : (n,) int -- ``parent[k] < k``, -1 for roots
        phi : list -- ``phi[k] = E(parent(k), k)`` (m_parent, m_k), None for roots
        H : list of (n_k, m_k) arrays;  M : list of (m_k, m_k) arrays
        """
        parent = np.asarray(parent, dtype=int)
        m = [np.shape(Mk)[-1] for Mk in M]
        nv = [np.shape(Hk)[-2] for Hk in H]
        tree = SKOTree(parent, m, nv)
        w = SKOWeights(tree, [None if p is None else np.asarray(p, float)[None] for p in phi],
                       [np.asarray(h, float)[None] for h in H], [np.asarray(x, float)[None] for x in M], 1)
        w.check()
        return cls(w, names=names, a=a, b=b)

    @classmethod
    def from_model(cls, model, q, v=None, nodes=None, frames: str = "body") -> "Subgraph":
        """The rigid-body tree ``model`` (:class:`dynamics.SKOModel`) at ``q`` (nq,).

        Parameters
        ----------
        model : dynamics.SKOModel
        q : (nq,) configuration
        v : (nv,), optional
            Attaches the Coriolis ``a`` and gyroscopic ``b`` vectors of
            :func:`dynamics.model.velocity_terms` (``g.a()``, ``g.b()``).
        nodes : optional -- a connected subtree (indices or body names)
        frames : {"body", "world", "hinge"}
            Frame each node's blocks are expressed in: the body frames of
            :mod:`dynamics.model`; one inertial frame (``X(k) = diag(R_k, R_k)`` with
            R_k the body's orientation in the ground frame; seed 002 Eqs. 41, 43-46
            assume it); or, for rotational hinges, a frame fixed on the parent at hinge
            k (``X(k) = diag(R_J, R_J)``, R_J the hinge rotation; seed 002 Listing 18).
            The mass matrix does not depend on the choice.
        """
        from ..model import velocity_terms, weights
        from ..spatial import rotation_about_axis

        q2 = np.asarray(q, dtype=float).reshape(1, -1)
        w = weights(model, q2)
        a = b = None
        if v is not None:
            _, a3, b3 = velocity_terms(model, w, q2, np.asarray(v, dtype=float).reshape(1, -1))
            a, b = list(a3[0]), list(b3[0])
        g = cls(w, names=model.body_names, a=a, b=b)
        if frames != "body":
            n = model.n_bodies
            if frames == "world":
                Rrel = w.extras["R_rel"][0]
                Rw = [None] * n
                for k in range(n):
                    p = model.parent[k]
                    Rw[k] = Rrel[k] if p < 0 else Rw[p] @ Rrel[k]
            elif frames == "hinge":
                Rw = [rotation_about_axis(model.axis[k], q2[0, model.q_offset[k]])
                      if JOINTS[model.joint_types[k]].moves_as == "revolute" else np.eye(3) for k in range(n)]
            else:
                raise ValueError(f"frames must be 'body', 'world' or 'hinge', got {frames!r}")
            g = g.similarity([np.kron(np.eye(2), R) for R in Rw])
        return g if nodes is None else g.subgraph(nodes)

    def subgraph(self, nodes) -> "Subgraph":
        """The connected subtree on ``nodes`` (global indices or names) of this subgraph."""
        idx = sorted({self._index(k) for k in nodes})
        missing = [k for k in idx if k not in self.nodes]
        if missing:
            raise ValueError(f"nodes {missing} are not in this subgraph")
        return Subgraph(self._as_weights(), [self.nodes.index(k) for k in idx], names=None,
                        a=self._a, b=self._b)._relabel(idx, self.names)

    def similarity(self, X) -> "Subgraph":
        """Block-diagonal similarity transform (seed 003 Lemma 8).

        Parameters
        ----------
        X : list of (m_k, m_k) invertible arrays, one per node of this subgraph

        Returns
        -------
        Subgraph with ``E'(p, k) = X(p) E(p, k) X(k)^-1``, ``H'(k) = H(k) X(k)^-1``,
        ``M'(k) = X(k) M(k) X(k)*``, ``a'(k) = X(k) a(k)``, ``b'(k) = X(k)^-* b(k)``.
        """
        X = [np.asarray(x, dtype=float) for x in X]
        Xi = [np.linalg.inv(x) for x in X]
        par = self.tree.parent
        phi = [None if par[j] < 0 else X[par[j]] @ self.phi[j] @ Xi[j] for j in range(len(self.nodes))]
        H = [h @ Xi[j] for j, h in enumerate(self.H)]
        M = [X[j] @ m @ X[j].T for j, m in enumerate(self.M)]
        a = None if self._a is None else [X[j] @ v for j, v in enumerate(self._a)]
        b = None if self._b is None else [Xi[j].T @ v for j, v in enumerate(self._b)]
        g = Subgraph.from_blocks(par, phi, H, M, a=a, b=b)
        return g._relabel(list(self.nodes), self.names)

    def _relabel(self, gl, names):
        self.nodes = tuple(int(k) for k in gl)
        self.names = names
        self.__dict__.pop("node_space", None)
        self.__dict__.pop("joint_space", None)
        return self

    def _as_weights(self) -> SKOWeights:
        return SKOWeights(self.tree, [None if p is None else p[None] for p in self.phi],
                          [h[None] for h in self.H], [m[None] for m in self.M], 1)

    def _index(self, k) -> int:
        if isinstance(k, str):
            if self.names is None or k not in self.names:
                raise KeyError(f"unknown node name {k!r}")
            return self.names.index(k)
        return int(k)

    # ---- spaces and data -----------------------------------------------------
    @cached_property
    def node_space(self) -> Space:
        """Stacked spatial vectors (``V``, ``alpha``, ``f``): blocks of size m_k."""
        return Space(self, "node", self.nodes, self.tree.m)

    @cached_property
    def joint_space(self) -> Space:
        """Generalized vectors (``theta_dot``, ``T``): blocks of size n_k."""
        return Space(self, "joint", self.nodes, self.tree.nv_node)

    def local(self, k) -> int:
        """Local index of a node given by global index or name."""
        return self.nodes.index(self._index(k))

    @cached_property
    def articulated(self):
        """:class:`dynamics.riccati.ArticulatedBody` of this subgraph (seed 001 Eq. 33)."""
        from ..riccati import articulated_body

        return articulated_body(self._as_weights())

    def a(self) -> SpatialVector:
        """Coriolis accelerations ``a`` as a SpatialVector (needs ``v`` at construction)."""
        if self._a is None:
            raise ValueError("this subgraph has no velocity-dependent terms (build it with v=...)")
        return SpatialVector(self.node_space, np.concatenate(self._a))

    def b(self) -> SpatialVector:
        """Gyroscopic forces ``b`` as a SpatialVector (needs ``v`` at construction)."""
        if self._b is None:
            raise ValueError("this subgraph has no velocity-dependent terms (build it with v=...)")
        return SpatialVector(self.node_space, np.concatenate(self._b))

    def vector(self, data=None, space: str = "joint") -> SpatialVector:
        """A SpatialVector on the joint (default) or node space of ``g``."""
        return SpatialVector(self.joint_space if space == "joint" else self.node_space, data)

    def __repr__(self):
        return f"Subgraph(nodes={self.nodes})"


def subgraph(source, nodes=None, q=None, v=None) -> Subgraph:
    """``g`` for a model at ``q``, for SKOWeights, or a sub-subgraph of a Subgraph."""
    if isinstance(source, Subgraph):
        return source if nodes is None else source.subgraph(nodes)
    if isinstance(source, SKOWeights):
        return Subgraph(source, nodes)
    if q is None:
        raise ValueError("a model needs a configuration q")
    return Subgraph.from_model(source, q, v, nodes)
