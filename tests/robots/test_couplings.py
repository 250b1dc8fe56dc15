"""Joint couplings embedded like loop closures, against Pinocchio's mimic joints and MuJoCo's equalities.

References: ``pinocchio.buildModelFromUrdf(..., mimic=True)`` (rnea in the leader
coordinates; its aba has no mimic joints and its crba disagrees with its rnea, see
:func:`pin_mass_matrix`); MuJoCo's mass matrix and bias forces reduced to minimal coordinates
by the null space of *its* equality Jacobian (``efc_J``), with ``Jdot v`` from central
finite differences of that Jacobian (issue 13, item 4).
"""

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.dynamics import embedding
from mbcompose.parsers import InputError

pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")


def link(name, mass, length):
    return (f'<link name="{name}"><inertial><origin xyz="{length / 2} 0 0" rpy="0.1 0.2 0.3"/><mass value="{mass}"/>'
            f'<inertia ixx="0.01" ixy="0.001" ixz="0" iyy="0.02" iyz="0" izz="0.025"/></inertial></link>')


def joint(name, parent, child, x, axis, mimic=""):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{x} 0 0" rpy="0 0.3 0"/><axis xyz="{axis}"/>'
            f'<limit lower="-3" upper="3" effort="1" velocity="1"/>{mimic}</joint>')


MIMIC_CHAIN = ('<robot name="chain">' + "".join(link(n, m, 0.3) for n, m in
                                                  (("base", 2.0), ("l1", 1.0), ("l2", 0.8), ("l3", 0.6), ("l4", 0.4)))
               + joint("j1", "base", "l1", 0.0, "0 0 1")
               + joint("j2", "l1", "l2", 0.3, "0 1 0", '<mimic joint="j1" multiplier="-1.5" offset="0.2"/>')
               + joint("j3", "l2", "l3", 0.3, "1 0 0", '<mimic joint="j1" multiplier="-0.75" offset="0"/>')
               + joint("j4", "l3", "l4", 0.3, "0 1 0")
               + joint("j5", "base", "l5", 0.1, "0 1 0", '<mimic joint="j1" multiplier="2"/>')
               + link("l5", 0.5, 0.2) + "</robot>")


def pin_state(pm, ours, q):
    """Pinocchio's q: the independent joints' coordinates (mimic joints have none)."""
    return np.array([q[ours.q_slice(pm.names[i])][0] for i in range(1, pm.njoints) if pm.joints[i].nq])


def independent_order(pm, ours):
    names = [pm.names[i] for i in range(1, pm.njoints) if pm.joints[i].nv]
    return [ours.independent.index(n) for n in names]


def pin_mass_matrix(pm, pd, qp):
    """M of Pinocchio's mimic model from its rnea, column by column (pin.crba of pinocchio 4.1 gives other
    off-diagonal terms for a joint below mimic joints, where rnea agrees with the full model projected)."""
    zero = np.zeros(pm.nv)
    g = pin.rnea(pm, pd, qp, zero, zero)
    return np.column_stack([pin.rnea(pm, pd, qp, zero, e) - g for e in np.eye(pm.nv)])


def check_against_pinocchio(pm, ours):
    pd = pm.createData()
    assert ours.n_independent == pm.nv == 2 and set(ours.dependent) == {"j2", "j3", "j5"}
    order = independent_order(pm, ours)
    rng = np.random.default_rng(13)
    for _ in range(4):
        q = embedding.complete_configuration(ours, q_ind=dict(zip(ours.independent, rng.uniform(-1, 1, 2))))
        v = embedding.complete_velocity(ours, q, rng.normal(size=2))
        qp, vp = pin_state(pm, ours, q), v[[ours.v_slice(n).start for n in ("j1", "j4")]]
        M = dynamics.mass_matrix(ours, q)[np.ix_(order, order)]
        Mp = pin_mass_matrix(pm, pd, qp)
        np.testing.assert_allclose(M, Mp, atol=1e-9 * np.abs(Mp).max())
        tau_ind = rng.normal(size=2)
        tau = np.zeros(ours.nv)
        tau[[ours.v_slice(n).start for n in ("j1", "j4")]] = tau_ind
        a = dynamics.forward_dynamics(ours, q, v, tau)
        ap = np.linalg.solve(Mp, tau_ind - pin.rnea(pm, pd, qp, vp, np.zeros(2)))   # pin.aba has no mimic joints
        np.testing.assert_allclose(a[[ours.v_slice(n).start for n in ("j1", "j4")]], ap, atol=1e-9 * max(1, np.abs(ap).max()))
        back = dynamics.inverse_dynamics(ours, q, v, a)
        np.testing.assert_allclose(back[[ours.v_slice(n).start for n in ("j1", "j4")]], tau_ind, atol=1e-9)
        # the followers stay on their polynomials
        assert q[ours.q_slice("j2")][0] == pytest.approx(-1.5 * q[ours.q_slice("j1")][0] + 0.2, abs=1e-12)
        assert q[ours.q_slice("j3")][0] == pytest.approx(0.5 * q[ours.q_slice("j2")][0] - 0.1, abs=1e-12)


MIMIC_OF_MIMIC = MIMIC_CHAIN.replace('<mimic joint="j1" multiplier="-0.75" offset="0"/>',
                                     '<mimic joint="j2" multiplier="0.5" offset="-0.1"/>')


@pytest.mark.parametrize("text", [MIMIC_CHAIN, MIMIC_OF_MIMIC], ids=["direct", "mimic_of_a_mimic"])
def test_mimic_chain_matches_pinocchios_mimic_joints(text, tmp_path):
    """j3 = 0.5 j2 - 0.1 with j2 = -1.5 j1 + 0.2 is j3 = -0.75 j1: Pinocchio (which mimics
    independent joints only) gets the direct form, we read both."""
    ref = tmp_path / "direct.urdf"
    ref.write_text(MIMIC_CHAIN)
    path = tmp_path / "chain.urdf"
    path.write_text(text)
    check_against_pinocchio(pin.buildModelFromUrdf(str(ref), mimic=True), compose(str(path)).model)


MJCF = """<mujoco><compiler angle="radian"/><option gravity="0.3 -0.2 -9.81"/>
  <worldbody>
    <body name="a" pos="0 0 1"><joint name="j1" axis="0 1 0" ref="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
      <body name="b" pos="0.4 0 0" euler="0.3 0 0"><joint name="j2" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0.1 0" size="0.03"/>
        <body name="c" pos="0.4 0 0"><joint name="j3" type="slide" axis="1 0 0" ref="0.05"/>
          <geom type="box" size="0.05 0.04 0.03"/>
          <body name="d" pos="0.1 0 0"><joint name="j4" axis="0 0 1"/><geom type="box" size="0.1 0.02 0.02" pos="0.1 0 0"/></body>
        </body>
      </body>
    </body>
    <body name="e" pos="1 0 1"><joint name="j5" axis="1 0 0"/><geom type="sphere" size="0.05" pos="0 0.1 0"/></body>
  </worldbody>
  <tendon><fixed name="t3"><joint joint="j3" coef="0.5"/><joint joint="j4" coef="0.3"/></fixed><fixed name="t5"><joint joint="j5" coef="-2"/></fixed></tendon>
  <equality><joint joint1="j2" joint2="j1" polycoef="0.1 -0.7 0.5 0.2 0"/>
    <tendon tendon1="t3" tendon2="t5" polycoef="0 0.03 0.01 0 0"/></equality>
</mujoco>"""


def mujoco_reduced(m, d, qpos, qvel):
    """MuJoCo's M and bias in minimal coordinates: X = null-space basis of its equality Jacobian
    (the independent columns as identity), gamma = Jdot v by central differences of the Jacobian."""
    def jac(qp):
        d.qpos[:] = qp
        mujoco.mj_forward(m, d)
        return d.efc_J.reshape(d.nefc, m.nv)[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY].copy()

    h = 1e-6
    Jp, Jm = jac(qpos + h * qvel), jac(qpos - h * qvel)    # hinge and slide: qpos moves like qvel
    J = jac(qpos)
    d.qvel[:] = qvel
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)                                     # MuJoCo >= 4
    return J, M, d.qfrc_bias.copy(), (Jp - Jm) / (2 * h) @ qvel


def test_polycoef_and_tendon_equalities_match_mujocos_constrained_dynamics(tmp_path):
    path = tmp_path / "eq.xml"
    path.write_text(MJCF)
    ours = compose(str(path)).model
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    assert "j2" in ours.dependent and len(ours.dependent) == 2 and ours.n_independent == 3
    ind = [ours.v_slice(n).start for n in ours.independent]
    dep = [ours.v_slice(n).start for n in ours.dependent]
    mj = {m.joint(k).name: k for k in range(m.njnt)}
    qpos_of = lambda q: np.array([q[ours.q_slice(m.joint(k).name)][0] for k in range(m.njnt)])   # q = qpos
    perm = [mj[n] for n in ours.coordinate_names]                # our v order in MuJoCo's dofs
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = embedding.complete_configuration(ours, q_ind=dict(zip(ours.independent, rng.uniform(-0.6, 0.6, 3))))
        v = embedding.complete_velocity(ours, q, rng.normal(size=3))
        J, M, bias, gamma = mujoco_reduced(m, d, qpos_of(q), v[np.argsort(perm)])
        J = J[:, perm]
        M, bias = M[np.ix_(perm, perm)], bias[perm]
        np.testing.assert_allclose(J @ v, 0.0, atol=1e-9)            # our velocities satisfy MuJoCo's constraint
        X = np.zeros((ours.nv, len(ind)))
        X[ind] = np.eye(len(ind))
        X[dep] = -np.linalg.solve(J[:, dep], J[:, ind])
        xdot_v = np.zeros(ours.nv)
        xdot_v[dep] = -np.linalg.solve(J[:, dep], gamma)
        M_ref = X.T @ M @ X
        np.testing.assert_allclose(dynamics.mass_matrix(ours, q), M_ref, atol=1e-9 * np.abs(M_ref).max())
        tau = np.zeros(ours.nv)
        tau[ind] = rng.normal(size=len(ind))
        a_ind = np.linalg.solve(M_ref, tau[ind] - X.T @ (bias + M @ xdot_v))
        a = dynamics.forward_dynamics(ours, q, v, tau)
        np.testing.assert_allclose(a[ind], a_ind, atol=1e-6 * max(1, np.abs(a_ind).max()))   # central differences


def test_coupling_multipliers_are_the_forces_that_hold_the_followers(tmp_path):
    """Lagrange: the tree's joint forces minus the applied ones are ``G^T lambda``, with the
    mimic Jacobian written out here (+1 at the follower, -multiplier at its leader)."""
    path = tmp_path / "chain.urdf"
    path.write_text(MIMIC_CHAIN)
    ours = compose(str(path)).model
    q = embedding.complete_configuration(ours, q_ind={"j1": 0.3, "j4": -0.2})
    v = embedding.complete_velocity(ours, q, np.array([0.5, -1.0]))
    tau = np.zeros(ours.nv)
    tau[ours.v_slice("j1")] = 0.7
    cf = embedding.constraint_forces(ours, q, v, tau)
    G, lam = [], []
    for follower, leader, mult in (("j2", "j1", -1.5), ("j3", "j1", -0.75), ("j5", "j1", 2.0)):
        row = np.zeros(ours.nv)
        row[ours.v_slice(follower)] = 1.0
        row[ours.v_slice(leader)] = -mult
        G.append(row)
        lam.append(cf.multipliers[f"{follower}<-{leader}"][0])
    np.testing.assert_allclose(cf.generalized, np.array(G).T @ np.array(lam), atol=1e-9)
    assert np.abs(lam).max() > 1e-3


def test_mimic_of_a_fixed_joint_has_no_effect_and_is_dropped_with_its_line(tmp_path, caplog):
    text = MIMIC_CHAIN.replace('<joint name="j4" type="revolute">', '<joint name="j4" type="fixed">').replace(
        '<mimic joint="j1" multiplier="2"/>', '<mimic joint="j4" multiplier="2"/>')
    path = tmp_path / "fixed.urdf"
    path.write_text(text)
    c = compose(str(path))
    assert [k.joint for k in c.assembly.couplings] == ["j2", "j3"]
    assert "mimic of joint 'j5'" in caplog.text and f"{path}:" in caplog.text
    assert c.model.n_independent == 2                        # j1 and j5 (j4 is fixed)


def test_mjcf_export_writes_couplings_back_as_mujoco_equalities(tmp_path):
    from mbcompose.parsers.exporters.mjcf import write_mjcf
    from mbcompose.parsers.mjcf.reader import read_mjcf

    src = tmp_path / "eq.xml"
    src.write_text(MJCF)
    out = write_mjcf(read_mjcf(src), tmp_path / "out.xml")
    original, exported = compose(str(src)).model, compose(str(out)).model
    assert sorted(exported.independent) == sorted(original.independent)
    m = mujoco.MjModel.from_xml_path(str(out))
    d = mujoco.MjData(m)
    m_src = mujoco.MjModel.from_xml_path(str(src))
    assert m.neq == 2 and m.qpos0[m.jnt_qposadr[m.joint("j1").id]] == m_src.qpos0[m_src.jnt_qposadr[m_src.joint("j1").id]]
    q = embedding.complete_configuration(original, q_ind={n: 0.4 for n in original.independent})
    d.qpos[:] = [q[original.q_slice(m.joint(k).name)][0] for k in range(m.njnt)]
    mujoco.mj_forward(m, d)
    eq = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    np.testing.assert_allclose(d.efc_pos[eq], 0.0, atol=1e-10)     # MuJoCo: our closed q satisfies the export
    np.testing.assert_allclose(dynamics.mass_matrix(exported, q), dynamics.mass_matrix(original, q), atol=1e-12)


def pinocchio_trajectory(pm, qp0, vp0, t_eval):
    """Pinocchio's mimic model integrated by DOP853 (rtol = atol = 1e-12): ``M qdd = -rnea(q, v, 0)`` with M
    from its rnea (:func:`pin_mass_matrix`); (len(t_eval), nq) positions of its (independent) joints."""
    from scipy.integrate import solve_ivp

    pd = pm.createData()
    zero = np.zeros(pm.nv)

    def rhs(t, y):
        q, v = y[:pm.nq], y[pm.nq:]
        return np.concatenate([v, np.linalg.solve(pin_mass_matrix(pm, pd, q), -pin.rnea(pm, pd, q, v, zero))])

    sol = solve_ivp(rhs, (0.0, t_eval[-1]), np.concatenate([qp0, vp0]), method="DOP853", t_eval=t_eval,
                    rtol=1e-12, atol=1e-12)
    return sol.y[:pm.nq].T


def _panda_urdf():
    import os
    import sysconfig

    return os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots",
                        "panda_description", "urdf", "panda.urdf")


@pytest.mark.parametrize("robot", ["chain", "panda"])
def test_simulated_linear_couplings_follow_pinocchios_mimic_model(robot, tmp_path):
    """The adaptive simulator with linear couplings in closed form (``q_d = q0_d + X (q_i - q0_i)``,
    ``v = X v_i``: :mod:`dynamics.closed.linear`) against Pinocchio's mimic model integrated on its own:
    the mimic chain (offsets, three followers, one on another branch) and example-robot-data's panda
    (its second finger mimics the first), from a moving state, no limits."""
    from mbcompose.dynamics.simulation import simulate

    if robot == "chain":
        path = tmp_path / "chain.urdf"
        path.write_text(MIMIC_CHAIN)
        path = str(path)
    else:
        path = _panda_urdf()
        if not __import__("os").path.isfile(path):
            pytest.skip(f"example-robot-data's panda not at {path}")
    ours = compose(path).model
    assert ours.linear_couplings is not None
    pm = pin.buildModelFromUrdf(path, mimic=True)
    names = [pm.names[i] for i in range(1, pm.njoints) if pm.joints[i].nq]
    assert sorted(names) == sorted(ours.independent)
    rng = np.random.default_rng(3)
    q0 = embedding.complete_configuration(ours, q_ind=dict(zip(ours.independent, rng.uniform(-0.5, 0.5, pm.nq))))
    v0 = embedding.complete_velocity(ours, q0, rng.normal(size=ours.n_independent))
    result = simulate(ours, q0, v0, 0.3, samples=7)
    ref = pinocchio_trajectory(pm, pin_state(pm, ours, q0), np.array([v0[ours.v_slice(n).start] for n in names]),
                               result.t)
    np.testing.assert_allclose(np.array([pin_state(pm, ours, q) for q in result.q]), ref, atol=1e-7)
    assert result.closure.max() < 1e-12                     # the couplings' residuals, exact closure
    assert np.abs(result.q[-1] - q0).max() > 0.05            # it moved
