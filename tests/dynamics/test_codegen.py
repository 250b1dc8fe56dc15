"""Generated C (dynamics/codegen) against the numpy reference (``dispatch.backend("numpy")``), issue 28.

Random trees of every joint type the generator writes, with rotor inertia and force elements; the
example robots (panda, talos_reduced); the closed-chain samples (fourbar, fivebar, slider_crank) in
independent coordinates; the no-compiler path; a 200-body model generated and compiled in < 30 s.
Every test skips when no C compiler (or cffi) is available.
"""

from __future__ import annotations

import os
import sysconfig
import time
from pathlib import Path

import numpy as np
import pytest

import mbcompose
from mbcompose import dynamics as dyn
from mbcompose.dynamics import dispatch, embedding, forces
from mbcompose.dynamics.codegen import CodegenUnavailable, CodegenUnsupported, compile_model, compiler, generate_c
from mbcompose.dynamics.force_elements import ActuatorSpec, ForceElements, JointSpring
from mbcompose.dynamics.rates import configuration_rate

from trees import random_bodies, random_model, random_q

try:
    compiler()
    import cffi  # noqa: F401
    HAVE_CC = True
except (CodegenUnavailable, ImportError):
    HAVE_CC = False

pytestmark = pytest.mark.skipif(not HAVE_CC, reason="no C compiler or cffi: the codegen backend is unavailable")

TYPES = ("fixed", "revolute", "continuous", "prismatic", "cylindrical", "spherical", "planar", "free")
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
ROBOTS = os.path.join(SHARE, "example-robot-data", "robots")
TOL = 1e-12


def close(a, b, tol=TOL):
    """Relative agreement, scaled by the larger magnitude (at least 1)."""
    a, b = np.asarray(a), np.asarray(b)
    return np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max())


def reference(model, q, v, x, tau):
    with dispatch.backend("numpy"):
        return (dyn.forward_dynamics(model, q, v, tau), dyn.inverse_dynamics(model, q, v, x), dyn.mass_matrix(model, q))


def check_tree(model, rng, batch=3):
    q = np.array([random_q(model, rng) for _ in range(batch)])
    v, a, tau = (rng.normal(size=(batch, model.nv)) for _ in range(3))
    fd, idyn, M = reference(model, q, v, a, tau)
    with dispatch.backend("codegen"):
        assert close(dyn.forward_dynamics(model, q, v, tau), fd)
        assert close(dyn.inverse_dynamics(model, q, v, a), idyn)
        assert close(dyn.mass_matrix(model, q), M)
        assert close(dyn.forward_dynamics(model, q[0], v[0], tau[0]), fd[0])   # one configuration


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_agree_with_the_numpy_reference(seed):
    model, rng = random_model(100 + seed, types=TYPES, n_max=12)
    check_tree(model, rng)


def test_rotor_inertia_and_single_joint_types():
    rng = np.random.default_rng(5)
    for t in TYPES[1:]:
        bodies = random_bodies(rng, 4, types=(t,))
        bodies = [b.__class__(**{**b.__dict__, "armature": 0.3}) for b in bodies]
        check_tree(dyn.build_model(bodies), rng, batch=2)


def test_universal_joints_are_refused_clearly():
    model, _ = random_model(3, n=4, types=("universal",))
    with pytest.raises(CodegenUnsupported, match="universal"):
        generate_c(model)


def forced_model(rng):
    bodies = random_bodies(rng, 6, types=("revolute", "prismatic", "spherical", "free"))
    names = {b.joint_name: b.joint_type for b in bodies}
    springs = tuple(JointSpring(j, stiffness=float(rng.uniform(1, 5)), damping=float(rng.uniform(0, 1)),
                                springref=0.1 if t in ("revolute", "prismatic") else 0.0) for j, t in names.items())
    one = [j for j, t in names.items() if t in ("revolute", "prismatic")]
    acts = tuple(ActuatorSpec(f"act_{j}", j, gear=2.0, gain=(3.0, 0.1, 0.0), bias=(0.5, -1.0, -0.2),
                              ctrlrange=(-1.0, 1.0), forcerange=(-4.0, 4.0)) for j in one)
    return dyn.build_model(bodies, forces=ForceElements(springs, acts))


def test_state_space_functions_of_a_tree_with_springs_dampers_and_actuators():
    rng = np.random.default_rng(11)
    model = forced_model(rng)
    cm = compile_model(model)
    g = cm.gen
    assert (g.nx, g.nu, g.ny) == (model.nq + model.nv, model.nv + len(model.actuator_names), model.nq)
    assert g.input_names[-len(model.actuator_names):] == model.actuator_names
    x0 = np.zeros(g.nx)
    cm.function("start_state")(cm.buf(x0))
    assert np.array_equal(x0, np.concatenate([model.neutral(), np.zeros(model.nv)]))
    q, v = random_q(model, rng), rng.normal(size=model.nv)
    u = rng.normal(size=g.nu) * 2
    x, dx, y = np.concatenate([q, v]), np.zeros(g.nx), np.zeros(g.ny)
    assert cm.function("derivatives")(cm.buf(cm.p), 0.0, cm.buf(x), cm.buf(u), cm.buf(dx)) == 0
    assert cm.function("outputs")(cm.buf(cm.p), cm.buf(x), cm.buf(y)) == 0
    ctrl = u[model.nv:]
    with dispatch.backend("numpy"):
        T = u[:model.nv] + forces.passive_forces(model, q, v) + forces.actuator_forces(model, q, v, ctrl)
        a = dyn.forward_dynamics(model, q, v, T)
    assert close(dx[model.nq:], a)
    assert close(dx[:model.nq], configuration_rate(model, q, v))
    assert np.array_equal(y, q)


def test_parameters_change_the_masses():
    rng = np.random.default_rng(2)
    model, _ = random_model(4, n=5, types=("revolute",))
    cm = compile_model(model)
    p = cm.p.copy()
    i = cm.gen.param_names.index(f"{model.body_names[2]}.mass")
    p[i] *= 3.0
    heavy = dyn.build_model([b for b in _bodies_of(model, mass_scale={2: 3.0})])
    q = random_q(model, rng)
    M = np.zeros((model.nv, model.nv))
    cm.function("crba")(cm.buf(p), cm.buf(q), cm.buf(M))
    with dispatch.backend("numpy"):
        assert close(M, dyn.mass_matrix(heavy, q))


def _bodies_of(model, mass_scale):
    for k in range(model.n_bodies):
        yield dyn.BodySpec(model.body_names[k], int(model.parent[k]), model.joint_types[k], model.joint_names[k],
                           model.placement_R[k], model.placement_p[k], model.mass[k] * mass_scale.get(k, 1.0),
                           model.com[k], model.inertia_com[k], tuple(model.axis[k]))


@pytest.mark.parametrize("name", ["fourbar", "fivebar", "slider_crank"])
def test_closed_chains_in_independent_coordinates(name):
    em = mbcompose.compose(str(SAMPLES / name / f"{name}.yaml")).model
    assert em.kind == "embedded"
    cm = compile_model(em)
    g = cm.gen
    rng = np.random.default_rng(7)
    for _ in range(3):
        qg = em.neutral()
        qg[em.tree_model.q_slice(em.independent[0])] += rng.uniform(-0.3, 0.3)
        q = embedding.complete_configuration(em, q_guess=qg)
        v = embedding.complete_velocity(em, q, rng.normal(size=em.n_independent))
        tau = np.zeros(em.nv)
        tau[em.independent_v] = rng.normal(size=em.n_independent)
        with dispatch.backend("numpy"):
            ref = dyn.forward_dynamics(em, q, v, tau)
        with dispatch.backend("codegen"):
            assert close(dyn.forward_dynamics(em, q, v, tau), ref)
        # state-space functions: the closure solve and the reduced equations
        ind_q = [g.output_names.index(s) for s in g.state_names[:g.nx - em.n_independent]]
        x = np.concatenate([q[ind_q], v[em.independent_v]])
        u = np.concatenate([tau[em.independent_v], np.zeros(len(em.actuator_names))])
        dx, y = np.zeros(g.nx), np.zeros(g.ny)
        assert cm.function("outputs")(cm.buf(cm.p), cm.buf(x), cm.buf(y)) == 0
        assert close(y, q, 1e-10)
        assert cm.function("derivatives")(cm.buf(cm.p), 0.0, cm.buf(x), cm.buf(u), cm.buf(dx)) == 0
        with dispatch.backend("numpy"):
            T = tau + forces.passive_forces(em, q, v)
            a = dyn.forward_dynamics(em, q, v, T)
        assert close(dx[-em.n_independent:], a[em.independent_v], 1e-9)
        assert close(dx[:len(ind_q)], v[em.independent_v])          # revolute independent joints: q_dot = v


def test_no_compiler_gives_one_clear_message(monkeypatch, tmp_path):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setenv("MBCOMPOSE_CACHE", str(tmp_path))
    model, rng = random_model(9, n=3, types=("revolute",))
    with pytest.raises(CodegenUnavailable, match="CC='/nonexistent/cc' was not found"):
        compile_model(model)
    with dispatch.backend("codegen"), pytest.raises(CodegenUnavailable):
        dyn.mass_matrix(model, model.neutral())
    with dispatch.backend("numpy"):                                # the other backends keep working
        assert dyn.mass_matrix(model, model.neutral()).shape == (model.nv, model.nv)
    assert dyn.mass_matrix(model, model.neutral()).shape == (model.nv, model.nv)


def _robot(rel, floating):
    path = os.path.join(ROBOTS, rel)
    if not os.path.exists(path):
        pytest.skip(f"example-robot-data's {rel} is not installed")
    model = mbcompose.compose(path, base="floating" if floating else "fixed", package_dirs=[SHARE]).model
    return model.tree_model if model.kind == "embedded" else model


def test_panda_agrees_with_the_numpy_reference():
    model = _robot("panda_description/urdf/panda.urdf", False)
    check_tree(model, np.random.default_rng(0))


@pytest.mark.slow
def test_talos_reduced_free_flyer_agrees_with_the_numpy_reference():
    model = _robot("talos_data/robots/talos_reduced.urdf", True)
    check_tree(model, np.random.default_rng(1))


@pytest.mark.slow
def test_a_200_body_model_generates_and_compiles_in_under_30_s(monkeypatch, tmp_path):
    monkeypatch.setenv("MBCOMPOSE_CACHE", str(tmp_path))            # a cold cache
    model, rng = random_model(7, n=200, types=("revolute", "prismatic", "fixed", "spherical"))
    t0 = time.perf_counter()
    cm = compile_model(model)
    elapsed = time.perf_counter() - t0
    assert elapsed < 30.0, f"generate + compile took {elapsed:.1f} s"
    q, v, tau = random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    with dispatch.backend("numpy"):
        ref = dyn.forward_dynamics(model, q, v, tau)
    out = np.zeros(model.nv)
    cm.function("aba")(cm.buf(cm.p), cm.buf(q), cm.buf(v), cm.buf(tau), cm.buf(out))
    assert close(out, ref, 1e-10)
