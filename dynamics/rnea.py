"""Newton-Euler inverse dynamics (seed 001 Algorithm 3.1, Eq. 10; seed 002 Eq. 17).

For an SKO model ``T = H phi (M alpha + b)`` with ``alpha = phi* (H* theta_ddot + a)``:
a base-to-tips scatter (Lemma 2) for the node accelerations
``alpha(k) = A*(parent(k), k) alpha(parent(k)) + H*(k) theta_ddot(k) + a(k)``,
then a tips-to-base gather (Lemma 1) for the inter-node forces
``f(k) = sum_{i in C(k)} A(k, i) f(i) + M(k) alpha(k) + b(k)`` and
``T(k) = H(k) f(k)``, plus the joint's rotor inertia ``J(k) theta_ddot(k)``
(``SKOWeights.armature``) when the model has one.

Gravity enters the rigid-body tree as the ground acceleration ``[0; -g]``
(added to ``a`` of the root bodies); external forces ``f_ext(k)`` (spatial
forces on body k, body frame, about the body origin, moment first) are
subtracted from ``b(k)``.
"""

from __future__ import annotations

import numpy as np

from .batch import external_forces, node_list, out, prepare
from .batch import as_batch
from .model import SKOModel
from .sko import SKOWeights, mul, mulT

__all__ = ["newton_euler", "inverse_dynamics", "bias_forces", "gravity_forces"]


def newton_euler(w: SKOWeights, theta_ddot, a, b):
    """Generic SKO inverse dynamics (seed 001 Algorithm 3.1).

    Parameters
    ----------
    w : SKOWeights
    theta_ddot : (B, N) generalized accelerations
    a, b : node lists of (B, m_k) -- Coriolis accelerations and gyroscopic forces

    Returns
    -------
    T : (B, N) generalized forces;  alpha, f : node lists (B, m_k)
    """
    t = w.tree
    n = t.n_nodes
    par, vs, H, phi, M = t.parent_list, t.v_slices, w.H, w.phi, w.M
    B = theta_ddot.shape[0]
    alpha = [None] * n
    # base-to-tips scatter
    for k in range(n):
        p = par[k]
        x = mulT(H[k], theta_ddot[:, vs[k]]) + a[k]
        alpha[k] = x if p < 0 else mulT(phi[k], alpha[p]) + x
    f = [mul(M[k], alpha[k]) + b[k] for k in range(n)]
    T = np.empty((B, t.nv))
    J = w.armature
    # tips-to-base gather
    for k in range(n - 1, -1, -1):
        p = par[k]
        fk = f[k]
        T[:, vs[k]] = mul(H[k], fk) if J is None else mul(H[k], fk) + mul(J[k], theta_ddot[:, vs[k]])
        if p >= 0:
            f[p] = f[p] + mul(phi[k], fk)
    return T, alpha, f


def inverse_dynamics(model: SKOModel, q, v, a, f_ext=None):
    """Joint forces ``tau = M(q) a + C(q, v)`` incl. gravity and external forces.

    Parameters
    ----------
    model : SKOModel
    q : (nq,) or (B, nq)
    v, a : (nv,) or (B, nv) -- velocities and accelerations (see :mod:`dynamics.joints`)
    f_ext : None, (n_bodies, 6) or (B, n_bodies, 6) -- external spatial force on each
        body, body frame, about the body frame origin, ``[moment; force]``

    Returns
    -------
    tau : (nv,) or (B, nv)
    """
    qb, vb, single, w, V, ac, bc, ag = prepare(model, q, v)
    ab, s3 = as_batch(a, model.nv, "a")
    B = max(qb.shape[0], ab.shape[0])
    ab = np.broadcast_to(ab, (B, model.nv))
    aa = node_list(ac)
    bb = node_list(bc)
    fe = external_forces(model, f_ext, B)
    a_list = [aa[k] + ag[k] for k in range(model.n_bodies)]
    b_list = bb if fe is None else [bb[k] - fe[:, k] for k in range(model.n_bodies)]
    T, _, _ = newton_euler(w, ab, a_list, b_list)
    return out(T, single and s3)


def bias_forces(model: SKOModel, q, v, f_ext=None):
    """``C(q, v)``: Coriolis, centrifugal and gravity forces (inverse dynamics with a = 0)."""
    return inverse_dynamics(model, q, v, np.zeros(model.nv), f_ext)


def gravity_forces(model: SKOModel, q):
    """Generalized gravity forces ``g(q)`` (inverse dynamics with v = a = 0)."""
    return inverse_dynamics(model, q, np.zeros(model.nv), np.zeros(model.nv))
