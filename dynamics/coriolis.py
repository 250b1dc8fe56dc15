"""Coriolis matrix and Christoffel symbols (seed 002 Eq. 38).

``christoffel_symbols`` evaluates Eq. 38,
``c_i(j, k) = 1/2 [dM(i, j)/dtheta_k + dM(i, k)/dtheta_j - dM(j, k)/dtheta_i]``,
with the mass matrix sensitivities of Eq. 42 (:mod:`dynamics.sensitivity`), and
``C(i, j) = sum_k c_i(j, k) v_k``.  It needs q to be a coordinate chart of v
(v = q_dot for every joint: no spherical, planar or free joints).

``coriolis_matrix`` works for every joint type: with ``J_k`` the body-frame
Jacobian of body k (``J = phi* H*`` read per body, seed 002 Eq. 13) and
``Jd_k`` the body-frame image of the time derivative of its ground-frame
Jacobian (column of joint j: ``V_j x S_j + S_dot_j`` carried to body k),

    C = sum_k J_k^T ( M(k) Jd_k + B_k J_k ),
    B_k = 1/2 [ crf(V_k) M(k) - M(k) crm(V_k) + crf_bar(M(k) V_k) ],

where ``crf_bar(f) V = crf(V) f``.  ``C v`` is the Coriolis/centrifugal part of
the bias forces and ``M_dot - 2 C`` is skew-symmetric; on Euclidean models it
equals the Christoffel form.  O(N d^2).
"""

from __future__ import annotations

import numpy as np

from . import joints as J
from .batch import out, prepare
from .model import SKOModel
from .sensitivity import mass_matrix_sensitivity
from .spatial import crf, crm, skew_batch

__all__ = ["christoffel_symbols", "coriolis_matrix", "coriolis_matrix_christoffel"]


def christoffel_symbols(model: SKOModel, q):
    """Christoffel symbols of the first kind ``c[i, j, k] = c_i(j, k)`` (seed 002 Eq. 38).

    Returns (nv, nv, nv) or (B, nv, nv, nv).  Raises ValueError unless v = q_dot.
    """
    if not model.is_euclidean:
        raise ValueError("Christoffel symbols need v = q_dot (no spherical, planar or free joints)")
    dM = mass_matrix_sensitivity(model, q)          # [..., k, i, j] = dM(i, j)/dtheta_k
    dMk = np.moveaxis(dM, -3, -1)                     # [..., i, j, k]
    return 0.5 * (dMk + np.swapaxes(dMk, -1, -2) - np.moveaxis(dMk, -1, -3))


def coriolis_matrix_christoffel(model: SKOModel, q, v):
    """``C(i, j) = sum_k c_i(j, k) v_k`` from Eq. 38."""
    c = christoffel_symbols(model, q)
    return np.einsum("...ijk,...k->...ij", c, np.asarray(v, dtype=float))


def _crf_bar(f):
    n, F = skew_batch(f[..., :3]), skew_batch(f[..., 3:])
    out = np.zeros(f.shape[:-1] + (6, 6))
    out[..., :3, :3] = -n
    out[..., :3, 3:] = -F
    out[..., 3:, :3] = -F
    return out


def coriolis_matrix(model: SKOModel, q, v):
    """Coriolis matrix C(q, v) with ``C v`` = Coriolis/centrifugal forces and ``M_dot - 2C`` skew.

    Parameters
    ----------
    q : (nq,) or (B, nq);  v : (nv,) or (B, nv)

    Returns
    -------
    (nv, nv) or (B, nv, nv)
    """
    qb, vb, single, w, V, a, b, _ = prepare(model, q, v)
    Bn, n, N = qb.shape[0], model.n_bodies, model.nv
    # per-joint columns S_j (B, 6, n_j) and their world-frame rates V_j x S_j + S_dot_j
    S = [np.broadcast_to(np.swapaxes(w.H[k], -1, -2), (Bn, 6, int(model.tree.nv_node[k]))) for k in range(n)]
    Sd = [crm(V[:, k]) @ S[k] for k in range(n)]
    if "universal" in model.groups:
        idx, qc, vc = model.groups["universal"]
        dH = J.universal_dH(qb[:, qc], model.axis[idx], model.axis2[idx])  # d/dq2
        for g, k in enumerate(idx):
            Sd[k] = Sd[k] + np.swapaxes(dH[:, g], -1, -2) * vb[:, vc[g, 1]][:, None, None]
    C = np.zeros((Bn, N, N))
    for k in range(n):
        Jk = np.zeros((Bn, 6, N))
        Jd = np.zeros((Bn, 6, N))
        X = np.broadcast_to(np.eye(6), (Bn, 6, 6))
        j = k
        while True:
            sl = model.tree.v_slice(j)
            Jk[:, :, sl] = X @ S[j]
            Jd[:, :, sl] = X @ Sd[j]
            if model.parent[j] < 0:
                break
            X = X @ np.swapaxes(w.phi[j], -1, -2)
            j = model.parent[j]
        Mk = model.M_body[k]
        Vk = V[:, k]
        Bk = 0.5 * (crf(Vk) @ Mk - Mk @ crm(Vk) + _crf_bar((Mk @ Vk[..., None])[..., 0]))
        C += np.swapaxes(Jk, -1, -2) @ (Mk @ Jd + Bk @ Jk)
    return out(C, single)
