"""Operational space compliance and inertia (seed 002 Eqs. 32-37; seed 001 Eqs. 59-60).

``Lambda^-1 = J M^-1 J* = B* Omega B`` with the extended operational space
compliance ``Omega = psi* H* D^-1 H psi`` (seed 002 Eq. 34), using
``[I - H psi K] H phi = H psi`` (Eq. 26).  ``Omega = psi* Y + Y psi - Y``
(Eq. 35, ``Y`` = Upsilon) where the block diagonal ``Y`` solves the backward
Lyapunov equation ``H* D^-1 H = Y - E_psi* Y E_psi`` (Eq. 37), computed by the
base-to-tips scatter of Eq. 36
``Y(k) = psi*(parent(k), k) Y(parent(k)) psi(parent(k), k) + H*(k) D^-1(k) H(k)``.
For a tree the blocks of Omega follow seed 001 Eq. 25:
``Omega(i, j) = psi*(c, i) Y(c) psi(c, j)`` with c the nearest common ancestor
of i and j (0 when there is none), so a task-space block costs the length of
the two paths.
"""

from __future__ import annotations

import numpy as np

from .batch import out, prepare
from .jacobians import pick_off
from .kinematics import body_poses
from .lyapunov import backward_lyapunov, backward_lyapunov_product, path_product
from .model import SKOModel
from .riccati import ArticulatedBody, articulated_body
from .sko import SKOWeights
from .tolerances import TASK_RANK_RTOL

__all__ = ["upsilon", "extended_compliance_sko", "compliance_block", "operational_space_compliance",
           "operational_space_inertia", "TASK_DIRECTIONS", "task_rows", "inertia_from_compliance",
           "RankDeficientTask"]

#: names of the six rows of a task frame's spatial velocity ``[omega; v]`` (angular first)
TASK_DIRECTIONS = ("wx", "wy", "wz", "x", "y", "z")
_DIRECTION_GROUPS = {"all": TASK_DIRECTIONS, "angular": TASK_DIRECTIONS[:3], "linear": TASK_DIRECTIONS[3:]}


class RankDeficientTask(np.linalg.LinAlgError):
    """The task directions are not independent here: ``J M^-1 J*`` has rank < its size.

    Attributes: ``rank`` and ``size`` of the compliance.
    """

    def __init__(self, rank: int, size: int):
        super().__init__(f"the {size} task directions have rank {rank} here (a singular configuration, "
                         f"or more directions than the mechanism can move in)")
        self.rank, self.size = rank, size


def _HtDinvH(w: SKOWeights, ab: ArticulatedBody) -> list:
    return [np.swapaxes(w.H[k], -1, -2) @ ab.Dinv[k] @ w.H[k] for k in range(w.tree.n_nodes)]


def upsilon(w: SKOWeights, ab: ArticulatedBody | None = None) -> list:
    """Block diagonal Upsilon of seed 002 Eq. 36 (list of (B, m_k, m_k))."""
    if ab is None:
        ab = articulated_body(w)
    return backward_lyapunov(w.tree, ab.psi, _HtDinvH(w, ab), ab.psi, w.batch)


def extended_compliance_sko(w: SKOWeights, ab: ArticulatedBody | None = None):
    """Dense ``Omega = psi* H* D^-1 H psi`` (B, sum m, sum m) by seed 001 Algorithm 4.3."""
    if ab is None:
        ab = articulated_body(w)
    return backward_lyapunov_product(w.tree, ab.psi, _HtDinvH(w, ab), ab.psi, w.batch)


def compliance_block(w: SKOWeights, ab: ArticulatedBody, Y: list, i: int, j: int):
    """``Omega(i, j)`` from Upsilon by seed 001 Eq. 25, (B, m_i, m_j)."""
    t = w.tree
    c = t.common_ancestor(i, j)
    if c < 0:
        return np.zeros((w.batch, int(t.m[i]), int(t.m[j])))
    L = path_product(t, ab.psi, c, i)
    R = path_product(t, ab.psi, c, j)
    blk = Y[c]
    if L is not None:
        blk = np.swapaxes(L, -1, -2) @ blk
    if R is not None:
        blk = blk @ R
    return blk


def operational_space_compliance(model: SKOModel, q, bodies, points=None, frame: str = "local"):
    """``Lambda^-1 = B* Omega B`` for task frames on the given bodies (seed 002 Eq. 34).

    Parameters
    ----------
    q : (nq,) or (B, nq)
    bodies : sequence of body names or indices (r task frames)
    points : sequence of (3,) points in the body frames, or None for the origins
    frame : "local" (each task frame has its body's axes) or "world" (ground axes)

    Returns
    -------
    (6r, 6r) or (B, 6r, 6r)
    """
    qb, _, single, w, *_ = prepare(model, q)
    ks = [model.body_index(b) for b in bodies]
    if points is None:
        points = [None] * len(ks)
    Bs = [np.eye(6) if p is None else pick_off(p) for p in points]
    ab = articulated_body(w)
    Y = upsilon(w, ab)
    r = len(ks)
    L = np.zeros((w.batch, 6 * r, 6 * r))
    for a in range(r):
        for b in range(a, r):
            blk = Bs[a].T @ compliance_block(w, ab, Y, ks[a], ks[b]) @ Bs[b]
            L[:, 6 * a:6 * a + 6, 6 * b:6 * b + 6] = blk
            L[:, 6 * b:6 * b + 6, 6 * a:6 * a + 6] = np.swapaxes(blk, -1, -2)
    if frame == "world":
        R, _ = body_poses(model, qb)
        T = np.zeros((w.batch, 6 * r, 6 * r))
        for a, k in enumerate(ks):
            T[:, 6 * a:6 * a + 3, 6 * a:6 * a + 3] = R[:, k]
            T[:, 6 * a + 3:6 * a + 6, 6 * a + 3:6 * a + 6] = R[:, k]
        L = T @ L @ np.swapaxes(T, -1, -2)
    elif frame != "local":
        raise ValueError("frame must be 'local' or 'world'")
    return out(L, single)


def task_rows(directions, n_frames: int = 1) -> np.ndarray:
    """Rows of the (6r,) task velocity kept by ``directions``.

    directions : None or "all", "linear", "angular", or a sequence / comma-separated
        string of names from :data:`TASK_DIRECTIONS` (e.g. "x,z"), applied to every frame.
    Raises ValueError for an unknown name.
    """
    if directions is None:
        directions = "all"
    if isinstance(directions, str):
        names = _DIRECTION_GROUPS.get(directions.strip(), [d.strip() for d in directions.split(",")])
    else:
        names = list(directions)
    unknown = [d for d in names if d not in TASK_DIRECTIONS]
    if unknown or not names:
        raise ValueError(f"unknown task direction(s) {', '.join(map(repr, unknown)) or '(none)'}: use all, "
                         f"linear, angular or names from {', '.join(TASK_DIRECTIONS)}")
    cols = sorted({TASK_DIRECTIONS.index(d) for d in names})
    return np.array([6 * f + c for f in range(n_frames) for c in cols], dtype=int)


def inertia_from_compliance(C, pseudo_inverse: bool = False, rtol: float = TASK_RANK_RTOL):
    """``Lambda = C^-1`` of a symmetric positive semi-definite compliance C ((n, n) or (B, n, n)).

    The rank of C is the number of eigenvalues above ``rtol`` times the largest.
    Below full rank, ``pseudo_inverse=True`` gives the Moore-Penrose pseudo-inverse
    (the inertia felt in the directions the mechanism can move in); otherwise
    :class:`RankDeficientTask` is raised with the rank (the smallest rank of a batch).
    """
    C = np.asarray(C, dtype=float)
    Cs = 0.5 * (C + np.swapaxes(C, -1, -2))
    lam, U = np.linalg.eigh(Cs)
    top = np.max(np.abs(lam), axis=-1, keepdims=True)
    keep = lam > rtol * np.where(top > 0, top, 1.0)
    rank = int(np.min(np.sum(keep, axis=-1)))
    n = C.shape[-1]
    if rank < n and not pseudo_inverse:
        raise RankDeficientTask(rank, n)
    inv = np.where(keep, 1.0 / np.where(keep, lam, 1.0), 0.0)
    return (U * inv[..., None, :]) @ np.swapaxes(U, -1, -2)


def operational_space_inertia(model: SKOModel, q, bodies, points=None, frame: str = "local",
                              directions=None, pseudo_inverse: bool = False):
    """Operational space inertia ``Lambda = (B* Omega B)^-1`` (seed 002 Eq. 32); see
    :func:`operational_space_compliance` for the arguments.

    directions : the task rows kept (:func:`task_rows`): (k r, k r) for k directions per frame.
    pseudo_inverse : at a rank-deficient task, return the pseudo-inverse instead of raising
        :class:`RankDeficientTask` (see :func:`inertia_from_compliance`).
    """
    C = operational_space_compliance(model, q, bodies, points, frame)
    rows = task_rows(directions, len(bodies))
    return inertia_from_compliance(C[..., rows[:, None], rows], pseudo_inverse)
