"""The compiled (numba) backend against the numpy reference and Pinocchio.

References: the numpy SKO recursions (:mod:`dynamics.rnea`, :mod:`dynamics.crba`,
:mod:`dynamics.aba`, :mod:`dynamics.innovations`, :mod:`dynamics.jacobians`,
:mod:`dynamics.kinematics`) on seeded random trees with every joint type, and
Pinocchio's ``crba``/``rnea``/``aba`` with rotor armature.  Each kernel is compiled
once per test session (numba's on-disk cache makes later sessions load it).
"""

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose.dynamics import aba, crba, innovations, jacobians, kinematics, rnea
from mbcompose.dynamics.compiled import api
from trees import ALL_TYPES, q_to_pin, random_bodies, random_q, to_pinocchio, v_perm

SEEDS = range(12)


def rel_err(x, ref):
    return np.max(np.abs(x - ref)) / max(1.0, np.max(np.abs(ref)))


def make(seed, n_max=30):
    rng = np.random.default_rng(500 + seed)
    model = dyn.build_model(random_bodies(rng, int(rng.integers(2, n_max + 1)), ALL_TYPES))
    return model, rng


def states(model, rng, B):
    q = np.stack([random_q(model, rng) for _ in range(B)])
    return q, rng.normal(size=(B, model.nv)), rng.normal(size=(B, model.nv))


def test_batches_broadcast_read_only_and_one_row_arguments():
    """A batch of one against single rows, and read-only external forces broadcast to the batch, give the
    numpy reference's results (the batch entries call the sealed one-configuration kernels, which take
    only writeable C arrays: the arguments are copied to that type first)."""
    model, rng = make(0, n_max=8)
    q, v, a = states(model, rng, 2)
    f = rng.normal(size=(model.n_bodies, 6))
    f.setflags(write=False)
    ref = np.stack([rnea.inverse_dynamics(model, q[b], v[b], a[b], f) for b in range(2)])
    assert rel_err(api.inverse_dynamics(model, q, v, a, f), ref) < 1e-11
    one = api.forward_dynamics(model, q[0], v[:1], a[0], np.broadcast_to(f, (1,) + f.shape))
    assert one.shape == (1, model.nv)
    assert rel_err(one[0], aba.forward_dynamics(model, q[0], v[0], a[0], f)) < 1e-10


@pytest.mark.parametrize("seed", SEEDS)
def test_compiled_dynamics_match_numpy_reference_single_and_batch(seed):
    model, rng = make(seed)
    q, v, a = states(model, rng, 3)
    fe = rng.normal(size=(3, model.n_bodies, 6))
    for sl in (0, slice(None)):
        f = fe[sl]
        assert rel_err(api.inverse_dynamics(model, q[sl], v[sl], a[sl], f),
                       rnea.inverse_dynamics(model, q[sl], v[sl], a[sl], f)) < 1e-11
        assert rel_err(api.forward_dynamics(model, q[sl], v[sl], a[sl], f),
                       aba.forward_dynamics(model, q[sl], v[sl], a[sl], f)) < 1e-10
        assert rel_err(api.mass_matrix(model, q[sl]), crba.mass_matrix(model, q[sl])) < 1e-12
        assert rel_err(api.bias_forces(model, q[sl], v[sl]), rnea.bias_forces(model, q[sl], v[sl])) < 1e-11
        assert rel_err(api.gravity_forces(model, q[sl]), rnea.gravity_forces(model, q[sl])) < 1e-11
        assert rel_err(api.mass_matrix_inverse(model, q[sl]), innovations.mass_matrix_inverse(model, q[sl])) < 1e-10
        assert np.allclose(api.mass_matrix_logdet(model, q[sl]), innovations.mass_matrix_logdet(model, q[sl]),
                           rtol=1e-12, atol=1e-10)
        R, p = api.body_poses(model, q[sl])
        R0, p0 = kinematics.body_poses(model, q[sl])
        assert rel_err(R, R0) < 1e-13 and rel_err(p, p0) < 1e-12
    body = model.n_bodies - 1
    for frame in ("local", "world"):
        J = api.jacobian(model, q, body, [0.1, -0.2, 0.3], frame)
        assert rel_err(J, jacobians.jacobian(model, q, body, [0.1, -0.2, 0.3], frame)) < 1e-12


def test_batch_broadcasts_unbatched_arguments_like_the_reference():
    model, rng = make(3)
    q, v, a = states(model, rng, 4)
    assert rel_err(api.forward_dynamics(model, q[0], v, a[1]), aba.forward_dynamics(model, q[0], v, a[1])) < 1e-10
    assert rel_err(api.inverse_dynamics(model, q, v[2], a[1]), rnea.inverse_dynamics(model, q, v[2], a[1])) < 1e-11
    assert api.inverse_dynamics(model, q, v, a).shape == (4, model.nv)
    with pytest.raises(ValueError):
        api.inverse_dynamics(model, q[:2], v[:3], a)
    with pytest.raises(ValueError):
        api.forward_dynamics(model, q[0, :-1], v[0], a[0])


def test_data_holds_the_last_call_and_separate_data_give_the_same_result():
    model, rng = make(5)
    q, v, a = states(model, rng, 1)
    data = model.create_data()
    tau = api.inverse_dynamics(model, q[0], v[0], a[0], data=data)
    assert np.allclose(tau, api.inverse_dynamics(model, q[0], v[0], a[0]), rtol=0, atol=1e-13)
    V_ref = kinematics.body_velocities(model, q[0], v[0])
    assert rel_err(data.V, V_ref) < 1e-12


def test_batch_of_one_thousand_matches_row_by_row_calls():
    model, rng = make(7)
    q, v, a = states(model, rng, 1000)
    qdd = api.forward_dynamics(model, q, v, a)
    rows = np.array([api.forward_dynamics(model, q[i], v[i], a[i]) for i in range(0, 1000, 97)])
    assert np.array_equal(qdd[::97], rows)


@pytest.mark.parametrize("seed", range(4))
def test_armature_enters_mass_matrix_rnea_and_aba_like_pinocchio(seed):
    pin = pytest.importorskip("pinocchio")
    model, rng = make(20 + seed)
    model.armature = rng.uniform(0.0, 0.5, size=model.nv)
    pm, jid, off = to_pinocchio(model)
    perm = v_perm(model)
    pm.armature = model.armature[perm]
    pd = pm.createData()
    q, v, a = states(model, rng, 1)
    qp = q_to_pin(model, q[0])
    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    assert rel_err(api.mass_matrix(model, q[0])[np.ix_(perm, perm)], Mp) < 1e-10
    assert rel_err(api.inverse_dynamics(model, q[0], v[0], a[0])[perm], pin.rnea(pm, pd, qp, v[0][perm], a[0][perm])) < 1e-10
    assert rel_err(api.forward_dynamics(model, q[0], v[0], a[0])[perm], pin.aba(pm, pd, qp, v[0][perm], a[0][perm])) < 1e-10
    assert rel_err(api.mass_matrix_inverse(model, q[0])[np.ix_(perm, perm)], np.linalg.inv(Mp)) < 1e-9


def test_importing_the_package_loads_no_numba_and_compiles_no_kernel():
    import subprocess
    import sys

    code = ("import sys, mbcompose, mbcompose.dynamics; loaded = 'numba' in sys.modules\n"
            "from mbcompose.dynamics.compiled import entry_kernels as ek, spatial_kernels as sk\n"
            "compiled = [n for mod in (ek, sk) for n in dir(mod) if getattr(getattr(mod, n), 'signatures', None)]\n"
            "print(loaded, compiled)")
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False []"


def test_single_configuration_fast_path_and_converted_inputs_agree_with_the_reference():
    """float64 (n,) arrays take the wrapper's fast path; lists, float32, strided and read-only
    arrays, and a separate Data, are converted or checked and give the reference's numbers."""
    model, rng = make(9)
    q, v, a = (x[0] for x in states(model, rng, 1))
    ref_tau, ref_qdd = rnea.inverse_dynamics(model, q, v, a), aba.forward_dynamics(model, q, v, a)
    ref_M = crba.mass_matrix(model, q)
    strided = np.zeros((model.nq, 2))
    strided[:, 0] = q
    frozen = q.copy()
    frozen.flags.writeable = False
    for qi in (q, list(q), strided[:, 0], frozen):
        assert rel_err(api.inverse_dynamics(model, qi, v, a), ref_tau) < 1e-11
        assert rel_err(api.forward_dynamics(model, qi, list(v), a), ref_qdd) < 1e-10
        assert rel_err(api.mass_matrix(model, qi), ref_M) < 1e-12
    q32 = q.astype(np.float32)
    assert rel_err(api.forward_dynamics(model, q32, v, a), aba.forward_dynamics(model, q32.astype(float), v, a)) < 1e-10
    data = model.create_data()
    assert rel_err(api.forward_dynamics(model, q, v, a, data=data), ref_qdd) < 1e-10
    for bad in (q[:-1], np.append(q, 0.0), q.reshape(1, -1, 1)):
        with pytest.raises(ValueError):
            api.forward_dynamics(model, bad, v, a)
        with pytest.raises(ValueError):
            api.mass_matrix(model, bad)
    with pytest.raises(ValueError):
        api.inverse_dynamics(model, q, v[:-1], a)
