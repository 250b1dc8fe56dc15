"""``linearize`` against MuJoCo's ``mjd_transitionFD`` converted to continuous time, on the gymnasium and
dm_control suite models whose joints are hinges, slides and balls (a free joint's velocity is not
MuJoCo's and the map between them depends on the state) and whose actuators have no activation state.

MuJoCo runs its semi-implicit Euler (``v+ = v + h a(q, v, u)``, ``q+ = q (+) h v+``, implicit damping
off) with contacts, limits, friction loss, equalities, fluid forces and the springs of wrapping tendons off (what our
dynamics does not model); then the continuous velocity rows are ``(A_d[v] - [0, I]) / h`` and
``B_d[v] / h``, exact for this scheme up to MuJoCo's differencing error (centered, step 1e-6, h 1e-3),
and the position rows ``(A_d[q] - [I, 0]) / h`` agree to O(h) (h 1e-5 there).  Coordinates map
through ``T`` (constant for these joints: ``qvel = T v`` and likewise the tangent displacements), so
``A_ours = S^-1 A_mj S`` with ``S = diag(T, T)``.
"""

import logging
import os

import numpy as np
import pytest

from mbcompose import compose
from mbcompose.dynamics.linearize import linearize
from mujoco_refs import reference_orientations, to_mujoco
from test_mujoco_corpora import DM_SUITE, GYMNASIUM, KNOWN_REFUSALS, TREE_DIFFERS, mujoco_loads, random_configuration
from test_mujoco_forces import _our_actuators, _wrapping_tendons

mujoco = pytest.importorskip("mujoco")

DISABLED = ("mjDSBL_CONTACT", "mjDSBL_LIMIT", "mjDSBL_FRICTIONLOSS", "mjDSBL_EQUALITY", "mjDSBL_EULERDAMP")


def _candidates():
    out = []
    for path in GYMNASIUM + DM_SUITE:
        if os.path.basename(path) in KNOWN_REFUSALS or os.path.basename(path) in TREE_DIFFERS or not mujoco_loads(path):
            continue
        m = mujoco.MjModel.from_xml_path(path)
        free = int(mujoco.mjtJoint.mjJNT_FREE)
        if m.nv and m.na == 0 and m.neq == 0 and free not in m.jnt_type.tolist():
            out.append(path)
    return out


CANDIDATES = _candidates()


def _mujoco_transition(m, d, qpos, qvel, ctrl, h):
    m.opt.timestep = h
    d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, ctrl
    mujoco.mj_forward(m, d)
    n = 2 * m.nv
    A, B = np.zeros((n, n)), np.zeros((n, m.nu))
    mujoco.mjd_transitionFD(m, d, 1e-6, True, A, B, None, None)
    return A, B


def test_the_corpus_has_models_to_compare():
    if GYMNASIUM or DM_SUITE:
        assert len(CANDIDATES) >= 10


@pytest.mark.parametrize("path", CANDIDATES, ids=os.path.basename)
def test_linearization_matches_mujocos_transition_derivatives(path, caplog):
    m = mujoco.MjModel.from_xml_path(path)
    m.opt.integrator = int(mujoco.mjtIntegrator.mjINT_EULER)
    for flag in DISABLED:
        m.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag))
    m.opt.density = m.opt.viscosity = 0.0
    for k in _wrapping_tendons(m):          # not supported (warned); fixed and site-only tendons are modelled
        m.tendon_stiffness[k] = m.tendon_damping[k] = 0.0
    d = mujoco.MjData(m)
    with caplog.at_level(logging.ERROR):
        model = compose(path).model
    if model.kind != "tree" or model.nv != m.nv:
        pytest.skip(f"{model.kind} model with {model.nv} of MuJoCo's {m.nv} dofs")
    kept = _our_actuators(m, model)
    rng = np.random.default_rng(1)
    q = random_configuration(model, rng)
    v = rng.normal(size=model.nv) * 0.5
    ctrl = np.zeros(m.nu)
    for k in kept:                                  # inside the control range: no clamping at the state
        lo, hi = m.actuator_ctrlrange[k] if m.actuator_ctrllimited[k] else (-1.0, 1.0)
        ctrl[k] = rng.uniform(lo, hi) * 0.5 + 0.25 * (lo + hi)
    qpos, T, _ = to_mujoco(m, model, q, v, reference_orientations(m))
    lin = linearize(model, q, v, ctrl=ctrl[kept], inputs=["ctrl"] if len(kept) else ["tau"])
    S = np.kron(np.eye(2), T)
    n = model.nv
    h = 1e-3
    A_d, B_d = _mujoco_transition(m, d, qpos, T @ v, ctrl, h)
    A_mj = np.linalg.solve(S, np.vstack([np.zeros((n, 2 * n)), (A_d[n:] - np.eye(2 * n)[n:]) / h]) @ S)
    scale = max(1.0, np.abs(A_mj).max())
    np.testing.assert_allclose(lin.A[n:], A_mj[n:], rtol=0, atol=1e-6 * scale)
    if len(kept):
        B_mj = np.linalg.solve(S, np.vstack([np.zeros((n, m.nu)), B_d[n:] / h]))[:, kept]
        np.testing.assert_allclose(lin.B[n:], B_mj[n:], rtol=0, atol=1e-6 * max(1.0, np.abs(B_mj).max()))
    h = 1e-5
    A_d, _ = _mujoco_transition(m, d, qpos, T @ v, ctrl, h)
    A_q = np.linalg.solve(S, np.vstack([(A_d[:n] - np.eye(2 * n)[:n]) / h, np.zeros((n, 2 * n))]) @ S)
    np.testing.assert_allclose(lin.A[:n], A_q[:n], rtol=0, atol=1e-3 * scale)


ACTIVATED = """<mujoco>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="h1" type="hinge" axis="0 1 0" stiffness="2" springref="0.1" damping="0.3"/>
      <geom type="capsule" size="0.03" fromto="0 0 0 0.4 0 0" mass="0.8"/>
      <body name="b" pos="0.4 0 0">
        <joint name="h2" type="hinge" axis="0 1 0" damping="0.1"/>
        <geom type="capsule" size="0.03" fromto="0 0 0 0.3 0 0.1" mass="0.5"/>
        <body name="c" pos="0.3 0 0.1">
          <joint name="s3" type="slide" axis="1 0 0" damping="0.2"/>
          <geom type="sphere" size="0.05" mass="0.3"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="pos_tc" joint="h1" kp="20" kv="1" timeconst="0.05"/>
    <intvelocity name="iv" joint="h2" kp="10" actrange="-1 1"/>
    <general name="filt" joint="s3" dyntype="filter" dynprm="0.1" gainprm="3" biastype="affine" biasprm="0 -2 -0.3"/>
    <motor name="plain" joint="h2" gear="2"/>
  </actuator>
</mujoco>"""


def test_linearization_with_activations_matches_mujocos_transition_derivatives(tmp_path):
    """States ``[dq, v, act]`` (MuJoCo's with its ``act``), inputs ``ctrl``, on a position servo with a time
    constant (``filterexact``), an ``intvelocity`` (an integrator with an activation range; the state lies
    inside it) and a ``general`` filter.  MuJoCo's Euler step is exact in the velocity rows and in the
    activation rows of the integrator and the filter (``act+ = act + h act_dot``); its ``filterexact``
    step is ``act+ = act + act_dot tau (1 - exp(-h / tau))``, so those rows are divided by
    ``tau (1 - exp(-h / tau))`` instead of h."""
    path = tmp_path / "activated.xml"
    path.write_text(ACTIVATED)
    model = compose(path).model
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.integrator = int(mujoco.mjtIntegrator.mjINT_EULER)
    for flag in DISABLED:
        m.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, flag))
    d = mujoco.MjData(m)
    assert m.na == 3 and model.actuator_names == ("pos_tc", "iv", "filt", "plain")
    rng = np.random.default_rng(2)
    q, v = rng.uniform(-0.5, 0.5, 3), rng.normal(size=3) * 0.5
    ctrl, act = rng.uniform(-0.5, 0.5, 4), rng.uniform(-0.5, 0.5, 3)
    lin = linearize(model, q, v, ctrl=ctrl, activations=act)
    assert lin.states[6:] == ("act:pos_tc", "act:iv", "act:filt")
    h, n = 1e-3, 2 * m.nv + m.na
    m.opt.timestep = h
    d.qpos[:], d.qvel[:], d.ctrl[:], d.act[:] = q, v, ctrl, act
    mujoco.mj_forward(m, d)
    A_d, B_d = np.zeros((n, n)), np.zeros((n, m.nu))
    mujoco.mjd_transitionFD(m, d, 1e-6, True, A_d, B_d, None, None)
    scale = np.full(n, h)
    stateful = np.flatnonzero(m.actuator_dyntype != int(mujoco.mjtDyn.mjDYN_NONE))
    for k, a in enumerate(stateful):
        if m.actuator_dyntype[a] == int(mujoco.mjtDyn.mjDYN_FILTEREXACT):
            tau = m.actuator_dynprm[a, 0]
            scale[2 * m.nv + k] = tau * (1 - np.exp(-h / tau))
    A_mj, B_mj = (A_d - np.eye(n)) / scale[:, None], B_d / scale[:, None]
    nv = m.nv
    np.testing.assert_allclose(lin.A[nv:], A_mj[nv:], rtol=0, atol=1e-8 * np.abs(A_mj[nv:]).max())
    np.testing.assert_allclose(lin.B[nv:], B_mj[nv:], rtol=0, atol=1e-8 * np.abs(B_mj[nv:]).max())
