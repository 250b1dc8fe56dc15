"""Generated C (dynamics/codegen) against the numpy reference (``dispatch.backend("numpy")``), issue 28.

Random trees of every joint type the generator writes, with rotor inertia and force elements; the
example robots (panda, talos_reduced); the closed-chain samples (fourbar, fivebar, slider_crank) in
independent coordinates; the no-compiler path; a 200-body model generated and compiled in < 30 s.
Every test skips when no C compiler (or cffi) is available.
"""

from __future__ import annotations

import os
import resource
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


URDF_WITH_FRICTION = """<robot name="rubbing">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="1.5"/>
    <inertia ixx="0.01" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="slider"><inertial><mass value="0.7"/>
    <inertia ixx="0.002" iyy="0.002" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="5"/><dynamics damping="0.3" friction="0.8"/></joint>
  <joint name="rail" type="prismatic"><parent link="arm"/><child link="slider"/><origin xyz="0.6 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="5"/><dynamics friction="2.5"/></joint>
</robot>
"""


def test_joint_friction_read_from_a_urdf_is_in_the_generated_derivatives(tmp_path):
    """URDF ``<dynamics damping friction>`` (regularised Coulomb friction, dynamics.force_elements.JointForce)
    in the generated state derivatives, against the numpy reference's passive forces and forward dynamics."""
    path = tmp_path / "rubbing.urdf"
    path.write_text(URDF_WITH_FRICTION)
    model = mbcompose.compose(str(path)).model
    assert np.abs(forces.friction_forces(model, model.neutral(), np.ones(model.nv))).min() > 0
    cm = compile_model(model)
    rng = np.random.default_rng(5)
    for _ in range(4):
        q, v = random_q(model, rng), rng.normal(size=model.nv) * 0.05
        u = rng.normal(size=cm.gen.nu)
        x, dx = np.concatenate([q, v]), np.zeros(cm.gen.nx)
        assert cm.function("derivatives")(cm.buf(cm.p), 0.0, cm.buf(x), cm.buf(u), cm.buf(dx)) == 0
        with dispatch.backend("numpy"):
            a = dyn.forward_dynamics(model, q, v, u[:model.nv] + forces.passive_forces(model, q, v))
        assert close(dx[model.nq:], a)


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


def _cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.mark.slow
def test_a_200_body_model_generates_and_compiles_in_under_30_s(monkeypatch, tmp_path):
    """CPU time of the generator and the compiler (the wall time on a shared machine counts the other
    processes' share of the cores; benchmarks/codegen.py prints both)."""
    monkeypatch.setenv("MBCOMPOSE_CACHE", str(tmp_path))            # a cold cache
    model, rng = random_model(7, n=200, types=("revolute", "prismatic", "fixed", "spherical"))
    c0, t0 = _cpu_seconds(), time.perf_counter()
    cm = compile_model(model)
    cpu, wall = _cpu_seconds() - c0, time.perf_counter() - t0
    assert cpu < 30.0, f"generate + compile took {cpu:.1f} s of CPU ({wall:.1f} s wall)"
    q, v, tau = random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    with dispatch.backend("numpy"):
        ref = dyn.forward_dynamics(model, q, v, tau)
    out = np.zeros(model.nv)
    cm.function("aba")(cm.buf(cm.p), cm.buf(q), cm.buf(v), cm.buf(tau), cm.buf(out))
    assert close(out, ref, 1e-10)


@pytest.mark.parametrize("name", ["seeker", "fourbar"])
def test_the_simulator_runs_on_the_generated_code(name):
    from mbcompose.dynamics.simulation import simulate

    model = mbcompose.compose(str(SAMPLES / name / f"{name}.yaml")).model
    q0, v0 = model.neutral(), np.zeros(model.nv)
    q0[model.q_slice(model.joint_names[0])] += 0.2
    if model.kind == "embedded":
        q0 = embedding.complete_configuration(model, q_guess=q0)
    with dispatch.backend("numpy"):
        ref = simulate(model, q0, v0, 0.2, samples=5)
    with dispatch.backend("codegen"):
        got = simulate(model, q0, v0, 0.2, samples=5)
    assert np.abs(got.q - ref.q).max() < 1e-8


def test_cli_writes_a_source_that_compiles_on_its_own(tmp_path):
    import subprocess

    from click.testing import CliRunner

    from mbcompose.composer.cli.commands import main

    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["codegen", str(SAMPLES / "fourbar" / "fourbar.yaml"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    src = (out / "fourbar.c").read_text()
    assert "int fourbar_derivatives(const double *p, double t, const double *x, const double *u, double *dx)" in src
    assert "void fourbar_start_state(double *x)" in (out / "fourbar.h").read_text()
    cc = compiler().split()
    done = subprocess.run([*cc, "-std=c99", "-Wall", "-pedantic", "-c", str(out / "fourbar.c"), "-o",
                           str(tmp_path / "fourbar.o")], capture_output=True, text=True)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
