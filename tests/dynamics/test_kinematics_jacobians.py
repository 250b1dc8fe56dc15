"""Kinematics, Jacobians, energies and operational space quantities against Pinocchio.

References: Pinocchio's frame placements, frame Jacobians (LOCAL and
LOCAL_WORLD_ALIGNED), kinetic/potential energy; ``J M^-1 J*`` from Pinocchio's
Jacobians and mass matrix for the operational space compliance (seed 002
Eq. 32); finite differences for ``integrate`` / ``difference``.
"""

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from trees import q_to_pin, random_bodies, random_q, to_pinocchio, v_perm

pin = pytest.importorskip("pinocchio")


def setup(seed, n=None):
    rng = np.random.default_rng(3000 + seed)
    model = dyn.build_model(random_bodies(rng, n or int(rng.integers(2, 20))))
    pm, jid, off = to_pinocchio(model)
    return model, pm, jid, off, rng


def add_frame(pm, jid, off, k, point):
    return pm.addFrame(pin.Frame(f"f{k}_{len(pm.frames)}", jid[k], off[k] * pin.SE3(np.eye(3), np.asarray(point)),
                                 pin.FrameType.OP_FRAME))


def pin_frame_jacobian(model, pm, pd, fid, qp, ref):
    pin.computeJointJacobians(pm, pd, qp)
    pin.updateFramePlacements(pm, pd)
    Jp = pin.getFrameJacobian(pm, pd, fid, ref)
    out = np.zeros_like(Jp)
    out[:, v_perm(model)] = np.vstack([Jp[3:], Jp[:3]])
    return out


@pytest.mark.parametrize("seed", range(8))
def test_body_poses_and_energies_match_pinocchio(seed):
    model, pm, jid, off, rng = setup(seed)
    fids = [add_frame(pm, jid, off, k, np.zeros(3)) for k in range(model.n_bodies)]
    pd = pm.createData()
    q = random_q(model, rng)
    v = rng.normal(size=model.nv)
    qp = q_to_pin(model, q)
    pin.framesForwardKinematics(pm, pd, qp)
    R, p = dyn.body_poses(model, q)
    for k, f in enumerate(fids):
        assert np.allclose(R[k], pd.oMf[f].rotation, atol=1e-12)
        assert np.allclose(p[k], pd.oMf[f].translation, atol=1e-12)
    ke = pin.computeKineticEnergy(pm, pd, qp, v[v_perm(model)])
    assert abs(dyn.kinetic_energy(model, q, v) - ke) < 1e-10 * max(1, abs(ke))
    assert np.allclose(dyn.center_of_mass(model, q), pin.centerOfMass(pm, pd, qp), atol=1e-12)
    pe = pin.computePotentialEnergy(pm, pd, qp)
    assert abs(dyn.potential_energy(model, q) - pe) < 1e-10 * max(1, abs(pe))


@pytest.mark.parametrize("seed", range(8))
def test_pick_off_jacobian_matches_pinocchio_frame_jacobian(seed):
    model, pm, jid, off, rng = setup(seed)
    k = int(rng.integers(0, model.n_bodies))
    point = rng.normal(size=3)
    fid = add_frame(pm, jid, off, k, point)
    pd = pm.createData()
    q = random_q(model, rng)
    qp = q_to_pin(model, q)
    J = dyn.jacobian(model, q, k, point)
    assert np.allclose(J, pin_frame_jacobian(model, pm, pd, fid, qp, pin.LOCAL), atol=1e-11)
    Jw = dyn.jacobian(model, q, model.body_names[k], point, frame="world")
    assert np.allclose(Jw, pin_frame_jacobian(model, pm, pd, fid, qp, pin.LOCAL_WORLD_ALIGNED), atol=1e-11)


@pytest.mark.parametrize("seed", range(8))
def test_operational_space_compliance_equals_J_Minv_Jt_from_pinocchio(seed):
    model, pm, jid, off, rng = setup(seed, n=12)
    ks = [int(k) for k in rng.choice(model.n_bodies, size=2, replace=False)]
    pts = [rng.normal(size=3) for _ in ks]
    fids = [add_frame(pm, jid, off, k, p) for k, p in zip(ks, pts)]
    pd = pm.createData()
    q = random_q(model, rng)
    qp = q_to_pin(model, q)
    perm = v_perm(model)
    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    M = np.zeros_like(Mp)
    M[np.ix_(perm, perm)] = Mp
    for frame, ref in (("local", pin.LOCAL), ("world", pin.LOCAL_WORLD_ALIGNED)):
        J = np.vstack([pin_frame_jacobian(model, pm, pd, f, qp, ref) for f in fids])
        ref_c = J @ np.linalg.solve(M, J.T)
        Lc = dyn.operational_space_compliance(model, q, ks, pts, frame=frame)
        assert np.max(np.abs(Lc - ref_c)) < 1e-10 * max(1, np.max(np.abs(ref_c)))


@pytest.mark.parametrize("seed", range(5))
def test_integrate_difference_roundtrip_and_velocity_is_derivative(seed):
    model, pm, jid, off, rng = setup(seed)
    q0 = random_q(model, rng)
    v = rng.normal(size=model.nv)
    q1 = dyn.integrate(model, q0, v, 0.3)
    assert np.allclose(dyn.difference(model, q0, q1), 0.3 * v, atol=1e-10)
    for t in ("spherical", "free"):
        if t in model.groups:
            idx, qc, _ = model.groups[t]
            quat = q1[qc][:, -4:]
            assert np.allclose(np.linalg.norm(quat, axis=1), 1.0)
    # body velocities are the time derivative of the body poses along integrate
    h = 1e-6
    Rp, pp = dyn.body_poses(model, dyn.integrate(model, q0, v, h))
    Rm, pm_ = dyn.body_poses(model, dyn.integrate(model, q0, v, -h))
    R0, p0 = dyn.body_poses(model, q0)
    V = dyn.body_velocities(model, q0, v)
    for k in range(model.n_bodies):
        Wd = R0[k].T @ (Rp[k] - Rm[k]) / (2 * h)
        w = np.array([Wd[2, 1], Wd[0, 2], Wd[1, 0]])
        vk = R0[k].T @ (pp[k] - pm_[k]) / (2 * h)
        assert np.allclose(V[k], np.r_[w, vk], atol=1e-6)


def test_batched_calls_return_matching_shapes_and_values():
    model, pm, jid, off, rng = setup(1, n=10)
    Bn = 5
    q = np.array([random_q(model, rng) for _ in range(Bn)])
    v = rng.normal(size=(Bn, model.nv))
    a = rng.normal(size=(Bn, model.nv))
    M = dyn.mass_matrix(model, q)
    tau = dyn.inverse_dynamics(model, q, v, a)
    acc = dyn.forward_dynamics(model, q, v, tau)
    assert M.shape == (Bn, model.nv, model.nv) and tau.shape == (Bn, model.nv)
    for b in range(Bn):
        assert np.allclose(M[b], dyn.mass_matrix(model, q[b]))
        assert np.allclose(tau[b], dyn.inverse_dynamics(model, q[b], v[b], a[b]))
    assert np.allclose(acc, a)
    assert dyn.mass_matrix_logdet(model, q).shape == (Bn,)
    assert dyn.jacobian(model, q, 3).shape == (Bn, 6, model.nv)


def test_large_batches_use_the_einsum_path_and_agree_with_single_calls():
    from mbcompose.dynamics.sko import EINSUM_MIN_BATCH

    model, pm, jid, off, rng = setup(2, n=12)
    Bn = EINSUM_MIN_BATCH + 8
    q = np.array([random_q(model, rng) for _ in range(Bn)])
    v = rng.normal(size=(Bn, model.nv))
    a = rng.normal(size=(Bn, model.nv))
    tau = dyn.inverse_dynamics(model, q, v, a)
    acc = dyn.forward_dynamics(model, q, v, tau)
    M = dyn.mass_matrix(model, q)
    for b in (0, Bn - 1):
        assert np.allclose(tau[b], dyn.inverse_dynamics(model, q[b], v[b], a[b]), atol=1e-10)
        assert np.allclose(M[b], dyn.mass_matrix(model, q[b]), atol=1e-10)
    assert np.allclose(acc, a, atol=1e-9)
    assert np.allclose(dyn.mass_matrix_inverse(model, q) @ M, np.eye(model.nv), atol=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_frame_acceleration_is_J_a_plus_finite_difference_of_J_along_v(seed):
    model, pm, jid, off, rng = setup(seed)
    k = int(rng.integers(0, model.n_bodies))
    point = rng.normal(size=3)
    q = random_q(model, rng)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    h = 1e-6
    for frame in ("world", "local"):
        if frame == "world":
            # classical acceleration = d/dt (J v) along the motion, world axes
            Jp = dyn.jacobian(model, dyn.integrate(model, q, v, h), k, point, frame="world")
            Jm = dyn.jacobian(model, dyn.integrate(model, q, v, -h), k, point, frame="world")
            ref = dyn.jacobian(model, q, k, point, frame="world") @ a + (Jp - Jm) @ v / (2 * h)
        else:
            R, _ = dyn.body_poses(model, q)
            Rk = R[k]
            wa = dyn.frame_acceleration(model, q, v, a, k, point, frame="world")
            ref = np.r_[Rk.T @ wa[:3], Rk.T @ wa[3:]]
        got = dyn.frame_acceleration(model, q, v, a, k, point, frame=frame)
        assert np.allclose(got, ref, atol=1e-6 * max(1, np.max(np.abs(ref))))


def test_frame_acceleration_matches_pinocchio_classical_acceleration():
    model, pm, jid, off, rng = setup(11)
    k = model.n_bodies - 1
    point = rng.normal(size=3)
    fid = add_frame(pm, jid, off, k, point)
    pd = pm.createData()
    q = random_q(model, rng)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    perm = v_perm(model)
    pin.forwardKinematics(pm, pd, q_to_pin(model, q), v[perm], a[perm])
    pin.updateFramePlacements(pm, pd)
    acc = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
    got = dyn.frame_acceleration(model, q, v, a, k, point)
    assert np.allclose(got, np.r_[acc.angular, acc.linear], atol=1e-10)
