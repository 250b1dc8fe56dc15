"""Jacobians through the pick-off operator (seed 002 Eqs. 11-13).

The spatial velocity of a node ``O`` on body k is ``V(O) = phi*(k, O) V(k)``
(Eq. 11); with the pick-off operator ``B`` whose only non-zero block is
``phi(k, O)`` (Eq. 12), ``V_nd = B* V = J theta_dot`` with
``J = B* phi* H*`` (Eq. 13).  ``phi* H*`` is evaluated column block by column
block by walking from k to the root: the block of an ancestor j is
``phi*(k, O) phi*(j, k) H*(j)`` (Lemma 2 read along one path), zero for the
other joints.

The node frame ``O`` has the orientation of body k and its origin at ``point``
(body-k coordinates).  ``frame="local"`` gives ``[omega; v_O]`` in body-k axes,
``frame="world"`` the same vector in ground axes (Pinocchio's
LOCAL_WORLD_ALIGNED).
"""

from __future__ import annotations

import numpy as np

from .batch import out, prepare
from .kinematics import body_poses
from .model import SKOModel
from .spatial import cross3, phi_transform

__all__ = ["pick_off", "jacobian", "jacobian_sko", "frame_acceleration"]


def pick_off(point) -> np.ndarray:
    """Non-zero block ``phi(k, O) = [[I, ~l], [0, I]]`` of the pick-off operator, (6, 6)."""
    return phi_transform(np.eye(3), np.asarray(point, dtype=float))


def jacobian_sko(w, k: int, Bk=None):
    """``B* phi* H*`` for node k of an SKO model: (B, m_O, N); ``Bk`` (m_k, m_O) defaults to I."""
    t = w.tree
    Xs = np.broadcast_to(np.eye(int(t.m[k])), (w.batch, int(t.m[k]), int(t.m[k])))
    if Bk is not None:
        Xs = np.swapaxes(np.asarray(Bk, dtype=float), -1, -2) @ Xs
    Jm = np.zeros((w.batch, Xs.shape[-2], t.nv))
    j = k
    while True:
        Jm[:, :, t.v_slice(j)] = Xs @ np.swapaxes(w.H[j], -1, -2)
        if t.parent[j] < 0:
            break
        Xs = Xs @ np.swapaxes(w.phi[j], -1, -2)
        j = t.parent[j]
    return Jm


def jacobian(model: SKOModel, q, body, point=None, frame: str = "local"):
    """Jacobian of the spatial velocity ``[omega; v]`` of a point on a body.

    Parameters
    ----------
    q : (nq,) or (B, nq)
    body : str or int
    point : (3,) m, in the body frame; default the body frame origin
    frame : "local" (body axes) or "world" (ground axes)

    Returns
    -------
    (6, nv) or (B, 6, nv)
    """
    qb, _, single, w, *_ = prepare(model, q)
    k = model.body_index(body)
    Bk = None if point is None else pick_off(point)
    Jm = jacobian_sko(w, k, Bk)
    if frame == "world":
        R, _ = body_poses(model, qb)
        Rk = R[:, k]
        Jm = np.concatenate([Rk @ Jm[:, :3], Rk @ Jm[:, 3:]], axis=1)
    elif frame != "local":
        raise ValueError("frame must be 'local' or 'world'")
    return out(Jm, single)


def frame_acceleration(model: SKOModel, q, v, a, body, point=None, frame: str = "world"):
    """Classical acceleration ``[omega_dot; p_ddot]`` of a point fixed on a body.

    Equals ``J a + J_dot v`` with ``J`` the :func:`jacobian` of the same point and
    frame; with ``a = 0`` it is the bias term ``J_dot v`` needed by acceleration-level
    constraints.  Body accelerations come from the scatter of seed 001 Algorithm 3.1
    (``alpha = phi* (H* a + a_coriolis)``, no gravity); the classical acceleration
    of the point ``l`` is ``alpha_v + alpha_w x l + omega x (v_o + omega x l)``.

    Parameters
    ----------
    q : (nq,) or (B, nq);  v, a : (nv,) or (B, nv)
    body : str or int;  point : (3,) in the body frame or None (origin)
    frame : "world" (ground axes) or "local" (body axes)

    Returns
    -------
    (6,) or (B, 6)
    """
    from .batch import as_batch, node_list
    from .rnea import newton_euler

    qb, vb, single, w, V, ac, bc, _ = prepare(model, q, v)
    ab, s3 = as_batch(a, model.nv, "a")
    ab = np.broadcast_to(ab, (qb.shape[0], model.nv))
    zeros = [np.zeros_like(x) for x in node_list(bc)]
    _, alpha, _ = newton_euler(w, ab, node_list(ac), zeros)
    k = model.body_index(body)
    l = np.zeros(3) if point is None else np.asarray(point, dtype=float)
    al, wv = alpha[k], V[:, k]
    om, vo = wv[:, :3], wv[:, 3:]
    lin = al[:, 3:] + cross3(al[:, :3], l) + cross3(om, vo + cross3(om, np.broadcast_to(l, om.shape)))
    res = np.concatenate([al[:, :3], lin], axis=-1)
    if frame == "world":
        R, _ = body_poses(model, qb)
        res = np.concatenate([(R[:, k] @ res[:, :3, None])[..., 0], (R[:, k] @ res[:, 3:, None])[..., 0]], axis=-1)
    elif frame != "local":
        raise ValueError("frame must be 'local' or 'world'")
    return out(res, single and s3)
