"""Motion subspaces of joints at the reference configuration, and their algebra.

A joint lets its secondary body move relative to its reference body with a
twist ``V = S qdot``.  ``S`` (6 x nv) holds the unit twists of the joint's
freedoms at the reference configuration, angular part first (Jain's
convention, :mod:`dynamics.spatial`), taken about a common point ``c`` and in
the assembly frame; the linear part is divided by a length ``L`` so that
columns are dimensionless and the numerical rank does not depend on units.
Moving the point or changing ``L`` is an invertible transformation of all
columns at once, so ranks, equalities and intersections of subspaces do not
depend on the choice.

A rotation ``w`` about a line through ``p`` has, about ``c``, the twist
``[w; (p - c) x w / L]``: the body point at ``c`` moves with
``w x (c - p) = (p - c) x w``.  Per joint type (axis ``a``, second
axis ``b``, plane normal ``n`` with in-plane unit vectors ``t1, t2``):

=========== ===============================================================
revolute    ``[a; (p-c) x a / L]`` (continuous likewise)
prismatic   ``[0; a]``
cylindrical revolute and prismatic columns of ``a``
universal   revolute columns of ``a`` and ``b``
spherical   revolute columns of ``e_x, e_y, e_z``
planar      ``[0; t1]``, ``[0; t2]``, revolute column of ``n``
free        the 6 x 6 identity
fixed       no column
=========== ===============================================================

Ranks are numerical: singular values above ``RANK_RTOL * max(1, s_max)``
count.  The default, 1e-6, treats axes that agree to about a micro-radian
and a micro-``L`` as coincident (CAD exports round coordinates).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.spatial import cross3
from mbcompose.dynamics.tolerances import FRAME_SCALE_FLOOR, GRAPH_RANK_RTOL

#: relative tolerance of numerical ranks (:data:`dynamics.tolerances.GRAPH_RANK_RTOL`).
RANK_RTOL = GRAPH_RANK_RTOL


def _in_plane(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = int(np.argmin(np.abs(n)))
    e = np.zeros(3)
    e[k] = 1.0
    t1 = np.cross(n, e)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    nrm = np.linalg.norm(v)
    return v / nrm if nrm > 0 else v


class Once:
    """``func()`` computed at the first call and kept: ``functools.cache`` of a function without
    arguments, without the cost of making a wrapper (``update_wrapper`` looks up five attributes
    a ``partial`` lacks), since the graph stage makes one for every analysis."""

    __slots__ = ("func", "value")

    def __init__(self, func: Callable[[], object]):
        self.func, self.value = func, _NOT_YET

    def __call__(self):
        if self.value is _NOT_YET:
            self.value = self.func()
        return self.value


_NOT_YET = object()


def twist_reference(assembly) -> tuple[np.ndarray, float]:
    """(centre, L): the mean of the joint origins (twists are taken about it; the origin if none) and the
    characteristic length, the largest distance of a joint or body frame origin from their centroid (else 1 m)."""
    n = len(assembly.joints)
    if not n + len(assembly.bodies):
        return np.zeros(3), 1.0
    pts = np.concatenate([assembly.joint_origins, assembly.body_stacks.translation])  # the joints' origins, then the bodies'
    # running sums, row after row as ndarray.sum adds along axis 0: [n - 1] the joints', [-1] all;
    # over the count they are the means (ndarray.mean: that sum, then one division)
    sums = pts.cumsum(axis=0)
    d = pts - sums[-1] / len(pts)
    L = math.sqrt((d * d).sum(axis=1).max())  # the square root of the largest square: the largest norm
    return sums[n - 1] / n if n else np.zeros(3), L if L > FRAME_SCALE_FLOOR else 1.0


def joint_subspace(joint, point=None, length: float = 1.0) -> np.ndarray:
    """Motion subspace ``S`` (6, nv) of ``joint`` at the reference configuration.

    Parameters
    ----------
    joint : Joint or ReducedJoint
        Needs ``type``, ``origin`` (3,), ``axis`` (3,), ``axis2`` ((3,) or None),
        all in the assembly frame.
    point : (3,) float, optional
        The point ``c`` the twists are taken about (assembly frame); default origin.
    length : float
        The length ``L`` dividing the linear parts, m.
    """
    c = np.zeros(3) if point is None else np.asarray(point, dtype=float)
    p = np.asarray(joint.origin, dtype=float) - c
    L = float(length) if length > 0 else 1.0

    def rot(w):
        w = _unit(w)
        return np.concatenate([w, cross3(p, w) / L])

    def lin(v):
        return np.concatenate([np.zeros(3), _unit(v)])

    if joint.type not in JOINTS:
        raise ValueError(f"unknown joint type {joint.type!r}")
    t = JOINTS[joint.type].moves_as
    a = _unit(joint.axis)
    if t == "revolute":
        cols = [rot(a)]
    elif t == "prismatic":
        cols = [lin(a)]
    elif t == "cylindrical":
        cols = [rot(a), lin(a)]
    elif t == "universal":
        b = joint.axis2 if getattr(joint, "axis2", None) is not None else _in_plane(a)[0]
        cols = [rot(a), rot(b)]
    elif t == "spherical":
        cols = [rot(e) for e in np.eye(3)]
    elif t == "planar":
        t1, t2 = _in_plane(a)
        cols = [lin(t1), lin(t2), rot(a)]
    elif t == "free":
        cols = list(np.eye(6))
    elif t == "fixed":
        return np.zeros((6, 0))
    else:
        raise ValueError(f"unknown joint type {t!r}")
    return np.array(cols, dtype=float).T


class LazySubspaces(dict):
    """Joint name -> :func:`joint_subspace` about the point ``c`` with the length ``L`` that
    ``reference()`` gives as ``(c, L)`` (asked once, with the first subspace), each computed when
    first asked (the graph stage needs them only for joints that share a pair of bodies or
    close a loop, a few of a robot's)."""

    def __init__(self, joints, reference):
        super().__init__()
        self._joints = {j.name: j for j in joints}
        self._reference = reference
        self._point = None

    def __missing__(self, name: str) -> np.ndarray:
        if self._point is None:
            self._point = self._reference()
        S = self[name] = joint_subspace(self._joints[name], *self._point)
        return S


def singular_values(M: np.ndarray) -> np.ndarray:
    M = np.asarray(M, dtype=float)
    if M.size == 0:
        return np.zeros(0)
    return np.linalg.svd(M, compute_uv=False)


def numerical_rank(M: np.ndarray, rtol: float = RANK_RTOL) -> int:
    """Number of singular values of M above ``rtol * max(1, s_max)``."""
    s = singular_values(M)
    if s.size == 0:
        return 0
    return int(np.sum(s > rtol * max(1.0, s[0])))


def orth(M: np.ndarray, rtol: float = RANK_RTOL) -> np.ndarray:
    """Orthonormal basis (6, r) of the column space of M."""
    M = np.asarray(M, dtype=float)
    if M.shape[1] == 0:
        return np.zeros((M.shape[0], 0))
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    r = int(np.sum(s > rtol * max(1.0, s[0]))) if s.size else 0
    return U[:, :r]


def null_space(M: np.ndarray, rtol: float = RANK_RTOL) -> np.ndarray:
    """Orthonormal basis (n, k) of the null space of M (m, n)."""
    M = np.asarray(M, dtype=float)
    n = M.shape[1]
    if n == 0:
        return np.zeros((0, 0))
    if M.shape[0] == 0:
        return np.eye(n)
    _, s, Vt = np.linalg.svd(M, full_matrices=True)
    r = int(np.sum(s > rtol * max(1.0, s[0]))) if s.size else 0
    return Vt[r:].T


def same_subspace(S1: np.ndarray, S2: np.ndarray, rtol: float = RANK_RTOL) -> bool:
    """True when S1 and S2 (6 x k) span the same subspace."""
    r1, r2 = numerical_rank(S1, rtol), numerical_rank(S2, rtol)
    return r1 == r2 == numerical_rank(np.hstack([S1, S2]), rtol)


def intersection(subspaces, rtol: float = RANK_RTOL) -> np.ndarray:
    """Orthonormal basis (6, k) of the intersection of the column spaces given."""
    subspaces = list(subspaces)
    Q = orth(subspaces[0], rtol)
    for S in subspaces[1:]:
        S = orth(S, rtol)
        if Q.shape[1] == 0 or S.shape[1] == 0:
            return np.zeros((6, 0))
        N = null_space(np.hstack([Q, -S]), rtol)
        Q = orth(Q @ N[:Q.shape[1]], rtol) if N.shape[1] else np.zeros((6, 0))
    return Q
