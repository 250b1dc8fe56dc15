"""Mass matrix and articulated-body sensitivities (seed 002 Eqs. 41-46).

Derivatives are taken along the velocity coordinates: ``d/d theta_i`` of a
quantity X is ``d/de X(q (+) e e_i)`` at e = 0 with ``(+)`` the joint
exponential map of :func:`dynamics.integrate`; for one-coordinate joints and
every joint whose q is Euclidean this is the partial derivative ``dX/dq_i``.

Body-frame form.  Seed 002 writes the sensitivities with the inertial-frame
operators ``H~_{>=i}``, ``H~_{<i}`` (Eqs. 40-41).  Here every body quantity is
in its own frame, so moving coordinate i of the joint of node k changes only the
one weight ``phi(parent(k), k)``:
``[E_phi]_{theta_i} = E_phi H~_{=i}`` i.e. the single block
``dphi = phi(parent(k), k) H~*(i)`` with ``H~*(i) = crf(S_i) = -crm(S_i)^T``
(Eq. 39 for a rotation axis; the force cross product of the joint's column
``S_i`` in general, since ``d phi*(parent(k), k) = -crm(S_i) phi*(parent(k), k)``),
while ``M`` and (for all joints but universal) ``H`` are constant.  With
``E' = [E_phi]_{theta_i}`` this gives (derivation in the docstrings below):

* Eq. 42: ``M_theta_i = H phi [E' phi M + M phi* E'*] phi* H*``, written as
  ``T + T*`` with ``T = H phi E' (phi M phi* H*)``; it equals Eq. 42 when
  ``H(k) H~*(i) = 0`` (single-dof revolute joints, the case seed 002 treats).
  A q-dependent ``H`` (universal joint) adds ``H_theta phi M phi* H* + (.)*``.
* Eq. 43: ``lambda_theta_i = dP`` solves the forward Lyapunov equation
  ``lambda - E_psi lambda E_psi* = X`` with the only source at node parent(k):
  ``X = dphi P+(k) phi*(parent(k), k) + phi(parent(k), k) P+(k) dphi*``.
* Eq. 44: ``D_theta = H lambda H*``, ``[D^-1]_theta = -D^-1 H lambda H* D^-1``,
  ``G_theta = tau_bar lambda H* D^-1``, ``tau_theta = G_theta H``,
  ``tau_bar_theta = -tau_theta``,
  ``[E_psi]_theta = E' tau_bar - E_psi lambda H* D^-1 H``, ``[K]_theta = E' G + E_psi lambda H* D^-1``.
* Eq. 45: ``[I + H phi K]_theta = H phi [E' phi G + E_psi lambda H* D^-1]``.
* Eq. 46: ``[I - H psi K]_theta = -H psi [E' phi G + E_psi lambda H* D^-1] [I - H psi K]``.

A q-dependent ``H`` (universal joint) adds direct ``dH`` terms at its own node,
documented in :func:`articulated_body_derivative_sko` and
:func:`innovations_derivative_sko`; with ``dH = None`` the formulas are exactly the
body-frame forms above.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import joints as J
from .batch import prepare
from .innovations import innovations_factors_sko
from .lyapunov import forward_lyapunov
from .model import SKOModel, require_tree
from .riccati import ArticulatedBody, articulated_body
from .sko import SKOWeights
from .spatial import crf
from .spo import sko_mul, spo_mul, spo_star_mul

__all__ = ["stacked_Hstar", "phi_M_phistar_Hstar", "mass_matrix_derivative_sko", "ABSensitivity",
           "articulated_body_derivative_sko", "innovations_derivative_sko", "direction_blocks",
           "mass_matrix_sensitivity", "articulated_body_sensitivity", "innovations_factors_sensitivity"]


def stacked_Hstar(w: SKOWeights) -> list:
    """``H*`` as a node list of (B, m_k, N) column blocks."""
    t = w.tree
    out = []
    for k in range(t.n_nodes):
        x = np.zeros((w.batch, int(t.m[k]), t.nv))
        x[:, :, t.v_slices[k]] = np.swapaxes(w.H[k], -1, -2)
        out.append(x)
    return out


def phi_M_phistar_Hstar(w: SKOWeights) -> list:
    """``F = phi M phi* H*`` (node list (B, m_k, N)) by one scatter and one gather (Lemmas 1-2)."""
    Jc = spo_star_mul(w.tree, w.phi, stacked_Hstar(w))
    return spo_mul(w.tree, w.phi, [w.M[k] @ Jc[k] for k in range(w.tree.n_nodes)])


def _H_times(w: SKOWeights, x: list):
    """Dense ``H x`` (B, N, C) for a node list x of (B, m_k, C)."""
    t = w.tree
    out = np.zeros((w.batch, t.nv, x[0].shape[-1]))
    for k in range(t.n_nodes):
        if t.nv_node[k]:
            out[:, t.v_slices[k]] = w.H[k] @ x[k]
    return out


def mass_matrix_derivative_sko(w: SKOWeights, k: int, dphi=None, dH=None, F: list | None = None):
    """``dM`` for a change ``dphi`` of the weight ``phi(parent(k), k)`` and ``dH`` of ``H(k)``.

    ``dM = T + T*``, ``T = H phi E' F + H' F`` with ``F = phi M phi* H*`` (seed 002 Eq. 42
    in body-frame form, see the module docstring).  (B, N, N).
    """
    t = w.tree
    if F is None:
        F = phi_M_phistar_Hstar(w)
    T = np.zeros((w.batch, t.nv, t.nv))
    p = t.parent_list[k]
    if dphi is not None and p >= 0:
        u = dphi @ F[k]
        j = p
        while j >= 0:
            if t.nv_node[j]:
                T[:, t.v_slices[j]] += w.H[j] @ u
            if t.parent_list[j] >= 0:
                u = w.phi[j] @ u
            j = t.parent_list[j]
    if dH is not None:
        T[:, t.v_slices[k]] += dH @ F[k]
    return T + np.swapaxes(T, -1, -2)


@dataclass(eq=False)
class ABSensitivity:
    """Derivatives of the articulated-body quantities (node lists, as in ArticulatedBody).

    lam = dP (seed 002 Eq. 43); dD, dDinv, dG, dtau, dtau_bar (Eq. 44a-e);
    dpsi = d psi(parent(j), j) and dK = d K(parent(j), j) (Eq. 44f), None for roots.
    """

    lam: list
    dD: list
    dDinv: list
    dG: list
    dtau: list
    dtau_bar: list
    dpsi: list
    dK: list


def articulated_body_derivative_sko(w: SKOWeights, k: int, dphi, ab: ArticulatedBody | None = None,
                                    dH=None) -> ABSensitivity:
    """Eqs. 43-44 for a change ``dphi`` of ``phi(parent(k), k)`` and ``dH`` of ``H(k)``.

    ``P(k)`` itself does not change; ``P+(k)`` changes through ``dH``:
    ``dP+ = -(P dH* G* + G dH P) + G dD_k G*`` with ``dD_k = dH P H* + H P dH*``, and the
    Lyapunov source at ``p = parent(k)`` is
    ``X(p) = dphi P+ phi* + phi P+ dphi* + phi dP+ phi*``.  Node k's ``D``, ``G``, ``tau``
    get the direct ``dH`` terms; with ``dH = None`` these are seed 002 Eqs. 43-44.
    """
    t = w.tree
    if ab is None:
        ab = articulated_body(w)
    B, n = w.batch, t.n_nodes
    X = [np.zeros((1, int(t.m[j]), int(t.m[j]))) for j in range(n)]
    p = t.parent_list[k]
    dDk = None
    dPp = None
    if dH is not None:
        Hk, Pk, Gk = w.H[k], ab.P[k], ab.G[k]
        S = Hk @ Pk @ np.swapaxes(dH, -1, -2)
        dDk = S + np.swapaxes(S, -1, -2)
        S2 = Gk @ dH @ Pk
        dPp = -(S2 + np.swapaxes(S2, -1, -2)) + Gk @ dDk @ np.swapaxes(Gk, -1, -2)
    if p >= 0:
        src = 0.0
        if dphi is not None:
            S = dphi @ ab.P_plus[k] @ np.swapaxes(w.phi[k], -1, -2)
            src = S + np.swapaxes(S, -1, -2)
        if dPp is not None:
            src = src + w.phi[k] @ dPp @ np.swapaxes(w.phi[k], -1, -2)
        X[p] = X[p] + src
    lam = forward_lyapunov(t, ab.psi, X, ab.psi, B)
    dD, dDinv, dG, dtau, dtb, dpsi, dK = ([None] * n for _ in range(7))
    for j in range(n):
        Hj = w.H[j]
        Ht = np.swapaxes(Hj, -1, -2)
        dD[j] = Hj @ lam[j] @ Ht
        if j == k and dDk is not None:
            dD[j] = dD[j] + dDk
        dDinv[j] = -ab.Dinv[j] @ dD[j] @ ab.Dinv[j]
        if j == k and dH is not None:
            dG[j] = (lam[j] @ Ht + ab.P[j] @ np.swapaxes(dH, -1, -2)) @ ab.Dinv[j] - ab.G[j] @ dD[j] @ ab.Dinv[j]
            dtau[j] = dG[j] @ Hj + ab.G[j] @ dH
        else:
            dG[j] = ab.tau_bar[j] @ lam[j] @ Ht @ ab.Dinv[j]
            dtau[j] = dG[j] @ Hj
        dtb[j] = -dtau[j]
        if t.parent_list[j] >= 0:
            dpsi[j] = w.phi[j] @ dtb[j]
            dK[j] = w.phi[j] @ dG[j]
            if j == k and dphi is not None:
                dpsi[j] = dpsi[j] + dphi @ ab.tau_bar[j]
                dK[j] = dK[j] + dphi @ ab.G[j]
    return ABSensitivity(lam, dD, dDinv, dG, dtau, dtb, dpsi, dK)


def innovations_derivative_sko(w: SKOWeights, k: int, dphi, ab: ArticulatedBody | None = None,
                               sens: ABSensitivity | None = None, dH=None):
    """Seed 002 Eqs. 45-46: ``([I + H phi K]_theta, [I - H psi K]_theta)``, each (B, N, N).

    ``Z = E' phi G + E_phi G_theta`` (``E_phi G_theta = E_psi lambda H* D^-1`` for a constant H),
    ``[I + H phi K]_theta = H phi Z (+ dH (phi K)(k) in node k's rows)`` and
    ``[I - H psi K]_theta = -H psi Z [I - H psi K] (- [I - H psi K] dH-rows [I - H psi K])``.
    """
    t = w.tree
    if ab is None:
        ab = articulated_body(w)
    if sens is None:
        sens = articulated_body_derivative_sko(w, k, dphi, ab, dH)
    B, n, N = w.batch, t.n_nodes, t.nv
    Gs, dGs = [], []
    for j in range(n):
        g = np.zeros((B, int(t.m[j]), N))
        g[:, :, t.v_slices[j]] = ab.G[j]
        Gs.append(g)
        dg = np.zeros((B, int(t.m[j]), N))
        dg[:, :, t.v_slices[j]] = sens.dG[j]
        dGs.append(dg)
    Z = sko_mul(t, w.phi, dGs)
    p = t.parent_list[k]
    phiG = spo_mul(t, w.phi, Gs)
    if dphi is not None and p >= 0:
        Z[p] = Z[p] + dphi @ phiG[k]
    dL = _H_times(w, spo_mul(t, w.phi, Z))
    Linv = innovations_factors_sko(w, ab).Linv
    dLinv = -_H_times(w, spo_mul(t, ab.psi, Z)) @ Linv
    if dH is not None:
        rows = np.zeros((B, N, N))
        rows[:, t.v_slices[k]] = dH @ (phiG[k] - Gs[k])
        dL = dL + rows
        dLinv = dLinv - Linv @ rows @ Linv
    return dL, dLinv


# ---------------------------------------------------------------------------
# rigid-body model level
# ---------------------------------------------------------------------------

def direction_blocks(model: SKOModel, w: SKOWeights, qb, i: int):
    """(k, dphi, dH) for velocity coordinate i: ``dphi = phi(parent(k), k) crf(S_i)``.

    ``d phi*(parent, k) = -crm(S_i) phi*(parent, k)`` (the moving frame turns with S_i), hence
    ``dphi = -phi crm(S_i)^T = phi crf(S_i)``; for a rotation axis crf = crm = seed 002 Eq. 39.
    """
    if not 0 <= i < model.nv:
        raise IndexError(f"coordinate {i} out of range 0..{model.nv - 1}")
    k = int(np.searchsorted(model.v_offset, i, side="right") - 1)
    j = i - int(model.v_offset[k])
    S = w.H[k][:, j, :]
    dphi = None if model.parent[k] < 0 else w.phi[k] @ crf(S)
    dH = None
    if model.joint_types[k] == "universal" and j == 1:
        dH = J.universal_dH(qb[:, model.q_slice(k)][:, None, :], model.axis[k][None], model.axis2[k][None])[:, 0]
    return k, dphi, dH


def mass_matrix_sensitivity(model: SKOModel, q, i: int | None = None):
    """``dM/dtheta_i`` (seed 002 Eq. 42, body-frame form).

    Parameters
    ----------
    q : (nq,) or (B, nq)
    i : velocity coordinate index, or None for all

    Returns
    -------
    (nv, nv) / (B, nv, nv) for one i; (nv, nv, nv) / (B, nv, nv, nv) indexed [..., i, :, :] for all
    """
    require_tree(model, "mass_matrix_sensitivity")
    qb, _, single, w, *_ = prepare(model, q)
    F = phi_M_phistar_Hstar(w)
    idx = range(model.nv) if i is None else [i]
    res = []
    for ii in idx:
        k, dphi, dH = direction_blocks(model, w, qb, ii)
        res.append(mass_matrix_derivative_sko(w, k, dphi, dH, F))
    out = np.stack(res, axis=1) if i is None else res[0]
    return out[0] if single else out


def articulated_body_sensitivity(model: SKOModel, q, i: int) -> ABSensitivity:
    """Seed 002 Eqs. 43-44 for velocity coordinate i; node lists with a leading batch dim."""
    require_tree(model, "articulated_body_sensitivity")
    qb, _, single, w, *_ = prepare(model, q)
    k, dphi, dH = direction_blocks(model, w, qb, i)
    return articulated_body_derivative_sko(w, k, dphi, dH=dH)


def innovations_factors_sensitivity(model: SKOModel, q, i: int):
    """Seed 002 Eqs. 45-46: derivatives of ``I + H phi K`` and ``I - H psi K``, (nv, nv) or (B, nv, nv)."""
    require_tree(model, "innovations_factors_sensitivity")
    qb, _, single, w, *_ = prepare(model, q)
    k, dphi, dH = direction_blocks(model, w, qb, i)
    dL, dLinv = innovations_derivative_sko(w, k, dphi, dH=dH)
    return (dL[0], dLinv[0]) if single else (dL, dLinv)
