"""MJCF equality constraints as MuJoCo compiles them: sites, joint and tendon couplings, ref/armature.

References: MuJoCo's compiled model (site_xpos, eq_data, jnt_armature, qpos0) and
the polynomial of MuJoCo's XML reference for ``equality/joint`` and ``equality/tendon``.
"""

import numpy as np
import pytest

from mbcompose.parsers import InputError
from mbcompose.parsers.mjcf.reader import read_mjcf

mujoco = pytest.importorskip("mujoco")

ARM = """<mujoco><compiler angle="radian"/>
  <worldbody>
    <body name="a" pos="0 0 1"><joint name="j1" axis="0 1 0" ref="0.2" armature="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/><site name="tip_a" pos="0.4 0 0"/>
      <body name="b" pos="0.4 0 0"><joint name="j2" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
        <body name="c" pos="0.4 0 0"><joint name="j3" type="slide" axis="1 0 0" ref="0.05"/>
          <geom type="box" size="0.05 0.05 0.05"/><site name="tip_c" pos="0.1 0 0" euler="0 0 0.3"/></body>
      </body>
    </body>
    <body name="d" pos="1.0 0 1"><joint name="j4" axis="0 1 0"/><geom type="sphere" size="0.05"/>
      <site name="on_d" pos="-0.1 0 0" euler="0 0 0.3"/></body>
  </worldbody>
  <tendon><fixed name="t1"><joint joint="j2" coef="2"/></fixed><fixed name="t3"><joint joint="j3" coef="0.5"/></fixed>
    <fixed name="t12"><joint joint="j1" coef="1"/><joint joint="j2" coef="1"/></fixed></tendon>
  EQUALITY
</mujoco>"""


def compiled(equality):
    text = ARM.replace("EQUALITY", equality)
    return read_mjcf("arm.xml", text=text), mujoco.MjModel.from_xml_string(text)


def test_ref_and_armature_are_carried_into_the_assembly():
    a, m = compiled("")
    for k in range(m.njnt):
        j = a.joint(m.joint(k).name)
        assert j.ref == pytest.approx(m.qpos0[m.jnt_qposadr[k]], abs=1e-15)
        assert j.armature == pytest.approx(m.dof_armature[m.jnt_dofadr[k]], abs=1e-15)


def test_connect_and_weld_by_sites_join_the_sites_mujoco_joins():
    a, m = compiled('<equality><connect site1="tip_c" site2="on_d"/><weld site1="tip_c" site2="on_d"/></equality>')
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    connect, weld = [j for j in a.joints if j.loop]
    assert (connect.type, weld.type) == ("spherical", "fixed")
    assert {connect.reference, connect.secondary} == {"c", "d"}
    np.testing.assert_allclose(connect.origin, d.site_xpos[m.site("tip_c").id], atol=1e-12)
    assert connect.secondary_origin is None                         # the sites coincide at qpos0
    np.testing.assert_allclose(d.site_xpos[m.site("on_d").id], connect.origin, atol=1e-12)


def test_joint_equality_polycoef_is_a_coupling_in_our_coordinates():
    a, m = compiled('<equality><joint joint1="j2" joint2="j1" polycoef="0.1 -2 0.5 0 0.25"/>'
                    '<joint name="hold" joint1="j4" polycoef="0.3"/></equality>')
    poly, hold = a.couplings
    assert (poly.joint, poly.leader, len(poly.higher)) == ("j2", "j1", 3)
    assert (hold.joint, hold.leader, hold.coefficients) == ("j4", None, (0.3, 0.0))
    # MuJoCo's residual vanishes where ours does, in MuJoCo's own coordinates qpos (j1 has ref 0.2)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = rng.uniform(-1, 1)
        d.qpos[:] = rng.uniform(-1, 1, m.nq)
        d.qpos[m.jnt_qposadr[m.joint("j1").id]] = x
        d.qpos[m.jnt_qposadr[m.joint("j2").id]] = np.polyval(np.array(poly.coefficients)[::-1], x)
        d.qpos[m.jnt_qposadr[m.joint("j4").id]] = 0.3
        mujoco.mj_forward(m, d)
        assert np.abs(d.efc_pos[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]).max() < 1e-12


def test_tendon_equality_couples_the_tendons_joint_sums():
    a, m = compiled('<equality><tendon tendon1="t3" tendon2="t12" polycoef="0.01 3 1 0 0"/></equality>')
    (c,) = a.couplings
    # 0.5 q3 = p(q1 + q2) in MuJoCo's qpos: MuJoCo's residual vanishes there (j1, j3 have refs)
    assert c.follower_sum == (("j3", 0.5),) and c.leader_sum == (("j1", 1.0), ("j2", 1.0))
    assert len(c.coefficients) == 3
    d = mujoco.MjData(m)
    rng = np.random.default_rng(4)
    for _ in range(3):
        d.qpos[:] = rng.uniform(-1, 1, m.nq)
        x = sum(d.qpos[m.jnt_qposadr[m.joint(n).id]] for n in ("j1", "j2"))
        d.qpos[m.jnt_qposadr[m.joint("j3").id]] = np.polyval(np.array(c.coefficients)[::-1], x) / 0.5
        mujoco.mj_forward(m, d)
        assert np.abs(d.efc_pos[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]).max() < 1e-12


def test_tendon_equality_names_an_unknown_tendon_with_its_line():
    with pytest.raises(InputError) as exc:
        compiled('<equality><tendon tendon1="t4" tendon2="t1"/></equality>')
    assert "t4" in str(exc.value) and exc.value.line == 16


def test_coupled_joint_must_exist_and_have_one_coordinate():
    with pytest.raises(InputError, match="unknown joint 'nope'"):
        compiled('<equality><joint joint1="nope" joint2="j1"/></equality>')
