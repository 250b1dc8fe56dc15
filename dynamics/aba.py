"""O(N) articulated-body forward dynamics (seed 001 Lemma 12, Eq. 58, Algorithm 6.1; seed 002 Eq. 31).

``theta_ddot = [I - H psi K]* D^-1 [T - H psi (K T + P a + b)] - K* psi* a``
is evaluated by a tips-to-base gather for the residual forces::

    z(k)   = sum_{j in C(k)} A(k, j) z+(j) + P(k) a(k) + b(k)     (58a)
    eps(k) = T(k) - H(k) z(k)                                    (58c)
    nu(k)  = D^-1(k) eps(k)                                      (58d)
    z+(k)  = z(k) + G(k) eps(k)                                  (58b)

followed by a base-to-tips scatter for the accelerations::

    alpha+(k)        = A*(parent(k), k) alpha(parent(k))          (58e)
    theta_ddot(k)    = nu(k) - G*(k) alpha+(k)                     (58f)
    alpha(k)         = alpha+(k) + H*(k) theta_ddot(k) + a(k)     (58g)

after the Riccati recursion of :mod:`dynamics.riccati` (step 1).
"""

from __future__ import annotations

import numpy as np

from .batch import external_forces, node_list, out, prepare
from .batch import as_batch
from .model import SKOModel
from .riccati import ArticulatedBody, articulated_body
from .sko import SKOWeights, mul, mulT

__all__ = ["forward_dynamics_sko", "forward_dynamics"]


def forward_dynamics_sko(w: SKOWeights, T, a, b, ab: ArticulatedBody | None = None):
    """Generic SKO forward dynamics (seed 001 Algorithm 6.1).

    Parameters
    ----------
    w : SKOWeights
    T : (B, N) generalized forces
    a, b : node lists (B, m_k) -- velocity-dependent accelerations and forces
    ab : ArticulatedBody, optional (computed when None)

    Returns
    -------
    theta_ddot : (B, N);  alpha : node list of node accelerations
    """
    t = w.tree
    n = t.n_nodes
    if ab is None:
        ab = articulated_body(w)
    B = T.shape[0]
    z = [mul(ab.P[k], a[k]) + b[k] for k in range(n)]
    nu = [None] * n
    # tips-to-base gather
    for k in range(n - 1, -1, -1):
        sk = t.v_slices[k]
        eps = T[:, sk] - mul(w.H[k], z[k])
        nu[k] = mul(ab.Dinv[k], eps)
        p = t.parent_list[k]
        if p >= 0:
            z[p] = z[p] + mul(w.phi[k], z[k] + mul(ab.G[k], eps))
    # base-to-tips scatter
    qdd = np.empty((B, t.nv))
    alpha = [None] * n
    for k in range(n):
        p = t.parent_list[k]
        sk = t.v_slices[k]
        if p < 0:
            th = nu[k]
            alpha[k] = mulT(w.H[k], th) + a[k]
        else:
            ap = mulT(w.phi[k], alpha[p])
            th = nu[k] - mulT(ab.G[k], ap)
            alpha[k] = ap + mulT(w.H[k], th) + a[k]
        qdd[:, sk] = th
    return qdd, alpha


def forward_dynamics(model: SKOModel, q, v, tau, f_ext=None):
    """Accelerations ``a = M^-1 (tau - C(q, v))`` by the articulated-body algorithm.

    Parameters
    ----------
    q : (nq,) or (B, nq);  v, tau : (nv,) or (B, nv)
    f_ext : None, (n_bodies, 6) or (B, n_bodies, 6) -- see :func:`dynamics.inverse_dynamics`

    Returns
    -------
    (nv,) or (B, nv)
    """
    qb, vb, single, w, V, ac, bc, ag = prepare(model, q, v)
    tb, s3 = as_batch(tau, model.nv, "tau")
    B = max(qb.shape[0], tb.shape[0])
    tb = np.broadcast_to(tb, (B, model.nv))
    fe = external_forces(model, f_ext, B)
    aa, bb = node_list(ac), node_list(bc)
    a_list = [aa[k] + ag[k] for k in range(model.n_bodies)]
    b_list = bb if fe is None else [bb[k] - fe[:, k] for k in range(model.n_bodies)]
    qdd, _ = forward_dynamics_sko(w, tb, a_list, b_list)
    return out(qdd, single and s3)
