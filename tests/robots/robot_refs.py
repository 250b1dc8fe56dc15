"""Reference dynamics of robot files from their own tools (Pinocchio, MuJoCo), in our coordinates.

Written once for every robot test: the map from our coordinates to Pinocchio's
(continuous joints as ``cos, sin``; free flyers ours ``q = [p, w, x, y, z]``,
``v = [omega; v]``, Pinocchio's ``q = [p, x, y, z, w]``, ``v = [v; omega]``, both in the
body frame; mimic joints have no coordinate of their own) and the comparison of M,
Newton-Euler and forward dynamics at random configurations.
"""

import numpy as np

from mbcompose import dynamics


def pin_q(pm, ours, q):
    """Our coordinates (angle for continuous joints) as Pinocchio's q."""
    import pinocchio as pin

    out = pin.neutral(pm)
    for i in range(1, pm.njoints):
        jm = pm.joints[i]
        if jm.nq == 0:
            continue
        val = np.asarray(q)[ours.q_slice(pm.names[i])]
        if jm.nq == 2 and jm.nv == 1:
            out[jm.idx_q:jm.idx_q + 2] = [np.cos(val[0]), np.sin(val[0])]
        elif jm.nq == 7 and jm.nv == 6:
            unit = val[3:] / np.linalg.norm(val[3:])
            out[jm.idx_q:jm.idx_q + 7] = np.r_[val[:3], unit[1:], unit[0]]
        else:
            out[jm.idx_q:jm.idx_q + jm.nq] = val
    return out


def pin_v_permutation(pm, ours):
    """Indices p with ``v_ours[p] == v_pin`` (joints with a velocity of their own in Pinocchio)."""
    idx = np.arange(ours.nv)
    parts = [idx[ours.v_slice(pm.names[i])] for i in range(1, pm.njoints)
             if pm.joints[i].nv > 0 and pm.joints[i].idx_v >= 0]
    parts = [np.r_[p[3:], p[:3]] if len(p) == 6 else p for p in parts]     # free flyer: linear first
    return np.concatenate(parts + [np.zeros(0)]).astype(int)


def assert_matches_pinocchio(pm, ours, seed=7, n=4, rtol=1e-9, forward=True):
    """M, RNEA and ABA of ``ours`` (a tree model with Pinocchio's freedoms) against Pinocchio's
    (``forward=False``: no ABA, for models whose M is singular, where neither has an answer)."""
    import pinocchio as pin

    pd = pm.createData()
    rng = np.random.default_rng(seed)
    perm = pin_v_permutation(pm, ours)
    assert len(perm) == ours.nv == pm.nv
    if pm.nv == 0:                                       # a single fixed body: nothing moves
        return
    for _ in range(n):
        q = rng.uniform(-1.0, 1.0, ours.nq)
        v, a = rng.normal(size=ours.nv), rng.normal(size=ours.nv)
        qp = pin_q(pm, ours, q)
        Mp = pin.crba(pm, pd, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        M = dynamics.mass_matrix(ours, q)[np.ix_(perm, perm)]
        np.testing.assert_allclose(M, Mp, atol=rtol * np.abs(Mp).max())
        taup = pin.rnea(pm, pd, qp, v[perm], a[perm])
        tau = dynamics.inverse_dynamics(ours, q, v, a)[perm]
        np.testing.assert_allclose(tau, taup, atol=rtol * max(1.0, np.abs(taup).max()))
        if not forward:
            continue
        qdd = pin.aba(pm, pd, qp, v[perm], taup)
        ours_qdd = dynamics.forward_dynamics(ours, q, v, dynamics.inverse_dynamics(ours, q, v, a))[perm]
        cond = np.linalg.cond(Mp)
        np.testing.assert_allclose(ours_qdd, qdd, atol=max(rtol, 1e-13 * cond) * max(1.0, np.abs(qdd).max()))
