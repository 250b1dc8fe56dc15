"""World kinematics of the bodies of a rigid-body tree at one configuration, for loop closures.

Poses, world joint columns, twists and bias accelerations of every body (body
frames, seed 001 Eq. 1 Coriolis terms), as :mod:`dynamics.closed.closure` needs them to
evaluate chord constraints; and the motion of a point fixed in a body.
Ground (index -1) is at rest at the origin.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import SKOModel
from .spatial import cross3

__all__ = ["Kinematics", "kinematics", "frame_pose", "point_motion"]


@dataclass(eq=False)
class Kinematics:
    """World kinematics of every body at one configuration (index -1 is not stored:
    ground is at rest at the origin).

    R : (n, 3, 3); p : (n, 3) m -- body frame poses
    S_w, S_v : (3, nv) -- world joint columns (angular; velocity of the body origin)
    p_col : (nv, 3) -- origin of the body each column moves
    w, v : (n, 3) -- angular velocity, velocity of the body origin (None without v)
    wd, ad : (n, 3) -- bias angular acceleration and classical acceleration of the
        origin with zero joint accelerations and no gravity (None without v)
    """

    R: np.ndarray
    p: np.ndarray
    S_w: np.ndarray
    S_v: np.ndarray
    p_col: np.ndarray
    w: np.ndarray | None = None
    v: np.ndarray | None = None
    wd: np.ndarray | None = None
    ad: np.ndarray | None = None


def kinematics(model: SKOModel, w_sko, V=None, a=None) -> Kinematics:
    """World poses, joint columns and (given ``V``, ``a``) velocities and bias accelerations.

    Parameters
    ----------
    model : SKOModel
    w_sko : SKOWeights of ``model`` at one configuration (batch 1); uses
        ``extras["R_rel"]``, ``extras["p_rel"]``
    V : (1, n, 6) body-frame twists, optional
    a : (1, n, 6) body-frame Coriolis accelerations (seed 001 Eq. 1), optional
    """
    n = model.n_bodies
    Rr, pr = w_sko.extras["R_rel"][0], w_sko.extras["p_rel"][0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    for k in range(n):
        j = model.parent[k]
        if j < 0:
            R[k], p[k] = Rr[k], pr[k]
        else:
            R[k] = R[j] @ Rr[k]
            p[k] = p[j] + R[j] @ pr[k]
    Ht = np.concatenate([w_sko.H[k][0].T for k in range(n)] + [np.zeros((6, 0))], axis=1)   # (6, nv)
    body = np.repeat(np.arange(n), model.tree.nv_node)
    Rc = R[body]                                                                           # (nv, 3, 3)
    S_w = np.einsum("cij,jc->ic", Rc, Ht[:3])
    S_v = np.einsum("cij,jc->ic", Rc, Ht[3:])
    kin = Kinematics(R, p, S_w, S_v, p[body])
    if V is None:
        return kin
    V = V[0]
    alpha = np.empty((n, 6))
    for k in range(n):
        j = model.parent[k]
        alpha[k] = a[0, k] if j < 0 else alpha[j] @ w_sko.phi[k][0] + a[0, k]
    wl, vl = V[:, :3], V[:, 3:]
    kin.w = np.einsum("kij,kj->ki", R, wl)
    kin.v = np.einsum("kij,kj->ki", R, vl)
    kin.wd = np.einsum("kij,kj->ki", R, alpha[:, :3])
    kin.ad = np.einsum("kij,kj->ki", R, alpha[:, 3:] + cross3(wl, vl))
    return kin


def frame_pose(kin: Kinematics, body: int, Rj, pj):
    """World pose (R (3, 3), p (3,)) of a frame fixed in ``body`` at (Rj, pj) in its body frame
    (ground, ``body < 0``: the frame itself)."""
    if body < 0:
        return Rj, pj.copy()
    return kin.R[body] @ Rj, kin.p[body] + kin.R[body] @ pj


def point_motion(kin: Kinematics, body: int, x):
    """(w, v(x), wd, a(x)) of body at world point x (zeros for ground)."""
    if body < 0:
        z = np.zeros(3)
        return z, z, z, z
    r = x - kin.p[body]
    w = kin.w[body]
    wd = kin.wd[body]
    w_r = cross3(w, r)
    return w, kin.v[body] + w_r, wd, kin.ad[body] + cross3(wd, r) + cross3(w, w_r)
