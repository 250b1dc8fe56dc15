"""Joint ``armature`` (rotor inertia) and ``ref`` (MuJoCo's ``qpos0``) in the dynamics.

References: MuJoCo (``M``, ``qfrc_bias`` of an MJCF with hinge, slide, ball and free joints
carrying armature and refs, a loop closed by ``equality/connect``) through the coordinate
map of :mod:`mujoco_refs`; the dense Lagrange-multiplier formulation for the closed chain;
(The numpy reference recursions against Pinocchio's ``model.armature``:
``tests/dynamics/test_rotor_inertia.py``.)
"""

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.dynamics import embedding
from mujoco_refs import mujoco_dynamics, reference_orientations, to_mujoco
from test_mujoco_corpora import check_against_mujoco

mujoco = pytest.importorskip("mujoco")

MJCF = """<mujoco><compiler angle="radian"/><option gravity="0.2 -0.1 -9.81"/>
  <worldbody>
    <body name="base" pos="0 0 1"><joint name="root" type="free" FREE_ARMATURE/>
      <geom type="box" size="0.35 0.05 0.05"/>
      <body name="a1" pos="0.3 0 0"><joint name="ha" axis="0 1 0" ref="0.4" armature="0.05"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.02"/></body>
      <body name="b1" pos="-0.3 0 0"><joint name="hb" axis="0 1 0" ref="-0.3" armature="0.03" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02"/>
        <body name="b2" pos="0 0 -0.5"><joint name="hc" axis="0 1 0" armature="0.01"/>
          <geom type="capsule" fromto="0 0 0 0.6 0 0.1" size="0.02"/></body>
      </body>
      <body name="arm" pos="0 0.2 0" euler="0.2 0.1 0"><joint name="s1" type="slide" axis="1 0 0" ref="0.1" armature="0.2"/>
        <geom type="box" size="0.1 0.03 0.02"/>
        <body name="wrist" pos="0.2 0 0"><joint name="b1" type="ball" armature="0.02"/>
          <geom type="sphere" size="0.05" pos="0.05 0.02 0"/></body>
      </body>
    </body>
  </worldbody>
  <equality><connect body1="b2" body2="a1" anchor="0.6 0 0.1"/></equality>
</mujoco>"""


@pytest.fixture
def mjcf(tmp_path):
    path = tmp_path / "armature_ref.xml"
    path.write_text(MJCF.replace("FREE_ARMATURE", ""))
    return str(path)


def test_free_joint_armature_gives_mujocos_mass_matrix_and_a_warning(tmp_path, caplog):
    """MuJoCo's free-joint armature acts on the world-frame translation (qacc = R (vdot + omega x v)):
    M agrees in our body-frame velocities; the bias differs by ``armature omega x v`` (warned)."""
    path = tmp_path / "free.xml"
    path.write_text(MJCF.replace("FREE_ARMATURE", 'armature="0.3"'))
    tree = compose(str(path)).model.tree_model
    assert "armature of free joint 'root'" in caplog.text and f"{path}:3" in caplog.text
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(4)
    q, v = kinematics_random(tree, rng), rng.normal(size=tree.nv)
    qpos, T, tdot_v = to_mujoco(m, tree, q, v)
    M_mj, bias_mj = mujoco_dynamics(m, d, qpos, T @ v)
    np.testing.assert_allclose(dynamics.mass_matrix(tree, q), T.T @ M_mj @ T, atol=1e-9 * np.abs(M_mj).max())
    w, vb = v[tree.v_slice("root")][:3], v[tree.v_slice("root")][3:]
    bias_ref = T.T @ (bias_mj + M_mj @ tdot_v)
    bias_ref[tree.v_slice("root").start + 3:tree.v_slice("root").stop] -= 0.3 * np.cross(w, vb)
    np.testing.assert_allclose(dynamics.inverse_dynamics(tree, q, v, np.zeros(tree.nv)), bias_ref,
                               atol=1e-9 * np.abs(bias_ref).max())


def kinematics_random(tree, rng):
    from test_mujoco_corpora import random_configuration

    return random_configuration(tree, rng)


def test_tree_with_armature_and_ref_matches_mujoco_in_its_own_qpos(mjcf):
    check_against_mujoco(mjcf)                       # M, bias (tree) and the loop's constraint rows
    tree = compose(mjcf).model.tree_model
    m = mujoco.MjModel.from_xml_path(mjcf)
    assert np.count_nonzero(tree.armature) == np.count_nonzero(m.dof_armature) == 7
    qpos, _, _ = to_mujoco(m, tree, tree.neutral(), np.zeros(tree.nv))
    np.testing.assert_allclose(qpos, m.qpos0, atol=1e-15)   # the reference configuration is qpos0


def test_closed_chain_with_armature_matches_mujoco_and_the_lagrange_model(mjcf):
    em = compose(mjcf).model
    lm = compose(mjcf, loops="lagrange").model
    m = mujoco.MjModel.from_xml_path(mjcf)
    d = mujoco.MjData(m)
    B = reference_orientations(m)
    rng = np.random.default_rng(2)
    for _ in range(2):
        q = embedding.complete_configuration(em, q_ind={"ha": rng.uniform(0.2, 0.6), "s1": rng.uniform(-0.2, 0.2)})
        X = np.column_stack([embedding.complete_velocity(em, q, e) for e in np.eye(em.n_independent)])
        v = X @ rng.normal(size=em.n_independent)
        _, T, _ = to_mujoco(m, em.tree_model, q, v, B)
        qpos, _, _ = to_mujoco(m, em.tree_model, q, v, B)
        M_mj, _ = mujoco_dynamics(m, d, qpos, T @ v)
        M_ref = X.T @ T.T @ M_mj @ T @ X
        np.testing.assert_allclose(dynamics.mass_matrix(em, q), M_ref, atol=1e-9 * np.abs(M_ref).max())
        tau = rng.normal(size=em.nv)
        tau[[em.v_slice(n).start for n in em.dependent]] = 0.0
        a = dynamics.forward_dynamics(em, q, v, tau)
        np.testing.assert_allclose(a, dynamics.forward_dynamics(lm, q, v, tau), atol=1e-8 * max(1.0, np.abs(a).max()))
        np.testing.assert_allclose(dynamics.inverse_dynamics(em, q, v, a)[em.e_to_v], tau[em.e_to_v], atol=1e-8)


def test_mjcf_export_writes_ref_and_armature_back(mjcf, tmp_path):
    from mbcompose.parsers.exporters.mjcf import write_mjcf
    from mbcompose.parsers.mjcf.reader import read_mjcf

    out = write_mjcf(read_mjcf(mjcf), tmp_path / "out.xml")
    m0, m1 = mujoco.MjModel.from_xml_path(mjcf), mujoco.MjModel.from_xml_path(str(out))
    for k in range(m0.njnt):
        k1 = m1.joint(m0.joint(k).name).id
        assert m1.qpos0[m1.jnt_qposadr[k1]] == pytest.approx(m0.qpos0[m0.jnt_qposadr[k]], abs=1e-15) or \
            m0.jnt_type[k] in (0, 1)                                       # free/ball: not a ref
        assert m1.dof_armature[m1.jnt_dofadr[k1]] == pytest.approx(m0.dof_armature[m0.jnt_dofadr[k]], abs=1e-15)
    check_against_mujoco(str(out))


URDF_ARM = """<mujoco><compiler angle="radian"/><option gravity="0.2 -0.1 -9.81"/>
  <worldbody>
    <body name="a" pos="0 0 1"><joint name="h1" axis="0 1 0" ref="0.4" armature="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
      <body name="b" pos="0.4 0 0" euler="0.3 0.2 0"><joint name="s1" type="slide" axis="1 0 1" ref="0.1"/>
        <geom type="box" size="0.05 0.04 0.03" pos="0.02 0 0"/>
        <body name="c" pos="0.1 0 0"><joint name="h2" axis="0 0 1" ref="-0.7"/>
          <geom type="box" size="0.1 0.02 0.02" pos="0.1 0 0"/></body>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def test_urdf_export_folds_ref_into_the_joint_origins_and_drops_armature_with_a_warning(tmp_path, caplog):
    """Pinocchio reads the exported URDF in our coordinates: with the armature set on Pinocchio's
    model (``model.armature``, which URDF cannot hold), M, RNEA and ABA agree at the same state."""
    pin = pytest.importorskip("pinocchio")
    from mbcompose.parsers.exporters.sdf import write_sdf
    from mbcompose.parsers.exporters.urdf import write_urdf
    from mbcompose.parsers.mjcf.reader import read_mjcf

    src = tmp_path / "arm.xml"
    src.write_text(URDF_ARM)
    a = read_mjcf(src)
    out = write_urdf(a, tmp_path / "arm.urdf", geometry=False)
    assert "URDF has no joint armature; left out for h1" in caplog.text
    write_sdf(a, tmp_path / "arm.sdf", geometry=False)
    assert "SDFormat has no joint ref; left out for h1, s1, h2" in caplog.text
    ours = compose(str(src)).model
    pm = pin.buildModelFromUrdf(str(out))
    names = [pm.names[i] for i in range(1, pm.njoints)]
    order = [ours.v_slice(n).start for n in names]
    pm.armature = ours.armature[order]
    pm.gravity = pin.Motion(np.concatenate([ours.gravity, np.zeros(3)]))     # URDF carries no gravity
    pd = pm.createData()
    rng = np.random.default_rng(8)
    for _ in range(3):
        q = ours.neutral() + rng.uniform(-1, 1, ours.nq)
        v, a = rng.normal(size=ours.nv), rng.normal(size=ours.nv)
        R = pin.crba(pm, pd, q[order])
        R = np.triu(R) + np.triu(R, 1).T
        np.testing.assert_allclose(dynamics.mass_matrix(ours, q)[np.ix_(order, order)], R, atol=1e-10 * np.abs(R).max())
        tau = pin.rnea(pm, pd, q[order], v[order], a[order])
        np.testing.assert_allclose(dynamics.inverse_dynamics(ours, q, v, a)[order], tau, atol=1e-10 * np.abs(tau).max())
        acc = pin.aba(pm, pd, q[order], v[order], a[order])
        np.testing.assert_allclose(dynamics.forward_dynamics(ours, q, v, a)[order], acc, atol=1e-9 * np.abs(acc).max())
