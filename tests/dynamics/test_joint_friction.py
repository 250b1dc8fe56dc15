"""Joint Coulomb friction read from files (URDF ``<dynamics friction>``, MJCF joint ``frictionloss``): a
``joint_friction`` element regularised as ``-friction tanh(v / 0.01)`` (issue 26).

A block sliding on a horizontal prismatic joint, ``m v' = -f tanh(v / v_f)``, has the closed form
``sinh(v / v_f) = sinh(v0 / v_f) exp(-f t / (m v_f))`` (``d/dt sinh(v / v_f) = cosh(v / v_f) v' / v_f``);
its position is the integral of that velocity (scipy's quadrature of the closed form, independent of our
dynamics).  The URDF export writes the friction back (``<dynamics friction>``) and reading it gives the
same forces; ``passive_forces - friction_forces`` stays MuJoCo's ``qfrc_spring + qfrc_damper``.
"""

import numpy as np
import pytest
from scipy.integrate import quad

from mbcompose import compose, dynamics
from mbcompose.dynamics.simulation import simulate
from mbcompose.parsers.exporters.urdf import write_urdf

MASS, FRICTION, V_F, V0 = 2.0, 0.3, 0.01, 0.05

URDF = f"""<robot name="block">
  <link name="base"/>
  <link name="block"><inertial><mass value="{MASS}"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="block"/><axis xyz="1 0 0"/>
    <limit lower="-10" upper="10" effort="1" velocity="1"/><dynamics friction="{FRICTION}"/></joint>
</robot>"""

MJCF = f"""<mujoco>
  <worldbody>
    <body name="block">
      <joint name="slide" type="slide" axis="1 0 0" frictionloss="{FRICTION}"/>
      <geom type="box" size="0.1 0.1 0.1" mass="{MASS}"/>
    </body>
  </worldbody>
</mujoco>"""


def velocity(t):
    return V_F * np.arcsinh(np.sinh(V0 / V_F) * np.exp(-FRICTION * t / (MASS * V_F)))


@pytest.mark.parametrize("name, text", [("block.urdf", URDF), ("block.xml", MJCF)])
def test_block_sliding_with_file_friction_follows_the_closed_form(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    model = compose(path).model
    r = simulate(model, np.zeros(1), np.full(1, V0), 1.0, samples=21, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(r.v[:, 0], velocity(r.t), rtol=0, atol=1e-10)
    x = [quad(velocity, 0.0, t, epsabs=1e-14, epsrel=1e-13)[0] for t in r.t]
    np.testing.assert_allclose(r.q[:, 0], x, rtol=0, atol=1e-10)
    v = np.array([0.003])
    np.testing.assert_allclose(dynamics.friction_forces(model, model.neutral(), v), -FRICTION * np.tanh(0.3),
                               rtol=1e-15)
    np.testing.assert_allclose(dynamics.passive_forces(model, model.neutral(), v), -FRICTION * np.tanh(0.3),
                               rtol=1e-15)


def test_urdf_round_trip_keeps_the_friction(tmp_path):
    path = tmp_path / "block.urdf"
    path.write_text(URDF)
    composition = compose(path)
    (element,) = composition.assembly.forces
    assert (element.name, element.joint, element.friction) == ("slide_friction", "slide", FRICTION)
    assert element.source.file == str(path) and element.source.line == 6
    write_urdf(composition.assembly, tmp_path / "back.urdf")
    assert f'friction="{FRICTION:g}"' in (tmp_path / "back.urdf").read_text()
    back = compose(tmp_path / "back.urdf")
    assert [(e.joint, e.friction, e.friction_velocity) for e in back.assembly.forces] == [("slide", FRICTION, V_F)]
    v = np.linspace(-0.05, 0.05, 7)[:, None]
    q = np.zeros((7, 1))
    np.testing.assert_array_equal(dynamics.passive_forces(back.model, q, v),
                                  dynamics.passive_forces(composition.model, q, v))


def test_mjcf_friction_is_left_out_of_mujocos_passive_forces(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "block.xml"
    path.write_text(MJCF.replace('frictionloss=', 'damping="0.7" frictionloss='))
    model = compose(path).model
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.qvel[:] = 0.02
    mujoco.mj_forward(m, d)
    q, v = model.neutral(), np.full(1, 0.02)
    np.testing.assert_allclose(dynamics.passive_forces(model, q, v) - dynamics.friction_forces(model, q, v),
                               d.qfrc_spring + d.qfrc_damper, rtol=1e-15)
    assert m.dof_frictionloss[0] == FRICTION


def test_a_light_joint_with_file_friction_is_announced_stiff_with_the_steps_dop853_takes(tmp_path):
    """The regularised friction's slope ``f / v_f`` over a light joint's mass is a decay rate ``f / (v_f m)``
    that limits an explicit integrator's step (toddlerbot's frictionloss: 7.5e5 1/s).  The announced number
    of steps is checked against scipy's DOP853 itself on the block's equation ``m v' = -f tanh(v / v_f)``
    (independent of our dynamics), and a block 1e4 times heavier is not announced."""
    from scipy.integrate import solve_ivp

    from mbcompose.dynamics.simulation.adaptive import STIFF_STEPS, stiffness_warning
    from mbcompose.dynamics.simulation.passive import JointProperties

    rate, duration = 3e7, 0.2                            # 1e6 steps of 6/rate: announced
    light = FRICTION / (V_F * rate)
    path = tmp_path / "light.urdf"
    path.write_text(URDF.replace(f'<mass value="{MASS}"/>', f'<mass value="{light}"/>'))
    model = compose(path).model
    joints = JointProperties.none(model.nv)
    warning = stiffness_warning(model, joints, model.neutral(), duration, "DOP853")
    assert warning and "slide (3e+07/s)" in warning and "about 1e+06 of them for 0.2 s" in warning, warning
    steps = float(warning.split("about ")[1].split(" of them")[0])
    short = 1e-4                                         # scipy's own count on a stretch of the same run
    r = solve_ivp(lambda t, y: [y[1], -FRICTION * np.tanh(y[1] / V_F) / light], (0.0, short), [0.0, 0.005],
                  method="DOP853", rtol=1e-10, atol=1e-12)
    assert abs((len(r.t) - 1) / short - steps / duration) < 0.25 * steps / duration, (len(r.t), steps)
    assert steps > STIFF_STEPS
    heavy = tmp_path / "heavy.urdf"
    heavy.write_text(URDF.replace(f'<mass value="{MASS}"/>', f'<mass value="{light * 1e4}"/>'))
    model = compose(heavy).model
    assert stiffness_warning(model, joints, model.neutral(), duration, "DOP853") is None
    assert stiffness_warning(model, joints, model.neutral(), duration, "Radau") is None


#: a parallelogram closed by a ``connect`` (planar: 3 rows, rank 2): two 0.3 m cranks 0.4 m apart and a light
#: coupler with frictionloss on its joint, damping on crank b's
PARALLELOGRAM = """<mujoco>
  <worldbody>
    <body name="crank_a" pos="-0.2 0 0">
      <joint name="ja" axis="0 1 0"/>
      <inertial pos="0 0 0.15" mass="1.0" diaginertia="0.01 0.01 0.01"/>
      <body name="coupler" pos="0 0 0.3">
        <joint name="jc" axis="0 1 0" frictionloss="0.3"/>
        <inertial pos="0.2 0 0" mass="1e-4" diaginertia="1e-8 1e-8 1e-8"/>
      </body>
    </body>
    <body name="crank_b" pos="0.2 0 0">
      <joint name="jb" axis="0 1 0" damping="0.05"/>
      <inertial pos="0 0 0.15" mass="1.0" diaginertia="0.01 0.01 0.01"/>
    </body>
  </worldbody>
  <equality><connect body1="coupler" body2="crank_b" anchor="0.4 0 0"/></equality>
</mujoco>"""


def test_a_light_link_inside_a_loop_is_rated_with_the_loop_and_not_announced_stiff(tmp_path):
    """The stiffness estimate of a closed chain is that of its independent coordinates, not of each tree
    coordinate alone: a parallelogram's coupler translates, every joint turns at the cranks' rate (``|X| = 1``),
    so its one degree of freedom has the decay rate ``(f / v_f + d) / (I_a + I_b + m_c L^2)`` (cranks' inertia
    about their pivots, the coupler's mass at the crank length: written by hand, independent of our
    dynamics), while the light coupler's joint alone would be announced at ~7e6 1/s (toddlerbot's neck
    four-bar: 7.5e5 1/s on its links alone, 1.1e4 right-hand sides for 2 s whole)."""
    from mbcompose.dynamics.simulation.adaptive import stiffness_warning
    from mbcompose.dynamics.simulation.passive import JointProperties, coordinate_rates

    path = tmp_path / "parallelogram.xml"
    path.write_text(PARALLELOGRAM)
    composition = compose(path)
    model = composition.model
    assert model.kind == "embedded" and model.n_independent == 1
    joints = JointProperties(composition.joint_properties.damping, np.full(3, -np.inf), np.full(3, np.inf))
    q = model.neutral()
    rates, omegas = coordinate_rates(model, joints, q)
    inertia = 2 * (0.01 + 1.0 * 0.15 ** 2) + 1e-4 * 0.3 ** 2
    expected = (FRICTION / V_F + 0.05) / inertia
    (j,) = model.independent_v
    np.testing.assert_allclose(rates[j], expected, rtol=1e-9)
    assert np.count_nonzero(rates) == 1 and not omegas.any()
    tree_alone = coordinate_rates(model.tree_model, joints, q)[0]
    assert tree_alone.max() > 1e4 * expected
    assert stiffness_warning(model, joints, q, 0.2, "DOP853") is None
