"""Generated C of models with joint couplings (issue 28): URDF ``mimic``, MJCF ``equality/joint`` and
``equality/tendon``, SDFormat ``mimic`` and ``gearbox``.

References: the numpy reference of the embedding (``dynamics.forward_dynamics`` under
``backend("numpy")``, :mod:`dynamics.closed.embedding`) at random closed states, to 1e-12; the panda's
mimic fingers against Pinocchio's ``mimic=True`` model (its rnea; its aba has no mimic joints, see
tests/robots/test_couplings.py); FMUs with FMPy's validation and simulation against ``mbcompose simulate``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import mbcompose
from mbcompose import dynamics as dyn
from mbcompose.dynamics import dispatch, embedding, forces
from mbcompose.dynamics.codegen import compile_model, compiler, generate_c

from test_codegen import HAVE_CC  # noqa: E402  (the compiler check: one home)

pytestmark = pytest.mark.skipif(not HAVE_CC, reason="no C compiler or cffi: the codegen backend is unavailable")

TESTS = Path(__file__).resolve().parents[1]
SAMPLES = TESTS.parent / "samples"
SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
PANDA = os.path.join(SHARE, "example-robot-data", "robots", "panda_description", "urdf", "panda.urdf")
TOL = 1e-12


def _link(name, mass, length):
    return (f'<link name="{name}"><inertial><origin xyz="{length / 2} 0 0" rpy="0.1 0.2 0.3"/><mass value="{mass}"/>'
            f'<inertia ixx="0.01" ixy="0.001" ixz="0" iyy="0.02" iyz="0" izz="0.025"/></inertial></link>')


def _joint(name, parent, child, x, axis, mimic=""):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{x} 0 0" rpy="0 0.3 0"/><axis xyz="{axis}"/>'
            f'<limit lower="-3" upper="3" effort="1" velocity="1"/>{mimic}</joint>')


#: a chain with three followers of j1 (one a mimic of a mimic) and a free joint j4
MIMIC_CHAIN = ('<robot name="chain">' + "".join(_link(n, m, 0.3) for n, m in
                                                  (("base", 2.0), ("l1", 1.0), ("l2", 0.8), ("l3", 0.6), ("l4", 0.4)))
               + _joint("j1", "base", "l1", 0.0, "0 0 1")
               + _joint("j2", "l1", "l2", 0.3, "0 1 0", '<mimic joint="j1" multiplier="-1.5" offset="0.2"/>')
               + _joint("j3", "l2", "l3", 0.3, "1 0 0", '<mimic joint="j2" multiplier="0.5" offset="-0.1"/>')
               + _joint("j4", "l3", "l4", 0.3, "0 1 0")
               + _joint("j5", "base", "l5", 0.1, "0 1 0", '<mimic joint="j1" multiplier="2"/>')
               + _link("l5", 0.5, 0.2) + "</robot>")

#: MJCF equalities: a joint polynomial and a tendon one (``{joint}`` and ``{tendon}`` the polycoef)
MJCF = """<mujoco><compiler angle="radian"/><option gravity="0.3 -0.2 -9.81"/>
  <worldbody>
    <body name="a" pos="0 0 1"><joint name="j1" axis="0 1 0" ref="0.2" damping="0.05"/>
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
  <equality><joint joint1="j2" joint2="j1" polycoef="{joint}"/>
    <tendon tendon1="t3" tendon2="t5" polycoef="{tendon}"/></equality>
</mujoco>"""
MJCF_LINEAR = MJCF.format(joint="0.1 -0.7 0 0 0", tendon="0 0.03 0 0 0")
MJCF_POLYNOMIAL = MJCF.format(joint="0.1 -0.7 0.5 0.2 0", tendon="0 0.03 0.01 0 0")

#: the four-bar with a flag on the ground whose pivot mimics the crank: a coupling beside a loop
FOURBAR_FLAG = (SAMPLES / "fourbar" / "fourbar.yaml").read_text().replace("\njoints:\n", """
  - name: flag
    pose: {xyz: [0.5, 0, 0], rpy: [0, 0, 0]}
    density: 2700
    geometry:
      - box: {size: [0.12, 0.01, 0.03]}
        pose: {xyz: [0.06, 0, 0]}

joints:
  - name: flag_pivot
    type: revolute
    reference: ground
    secondary: flag
    origin: [0.5, 0, 0]
    axis: [0, 1, 0]
""") + """
couplings:
  - {joint: flag_pivot, leader: crank_pivot, multiplier: -0.5, offset: 10}
"""

MODELS = {"mimic_chain.urdf": MIMIC_CHAIN, "linear_equalities.xml": MJCF_LINEAR,
          "polynomial_equalities.xml": MJCF_POLYNOMIAL, "fourbar_flag.yaml": FOURBAR_FLAG}


def _compose(tmp_path, name):
    if name == "couplings.sdf":
        return mbcompose.compose(str(TESTS / "data" / "sdf" / name)).model
    if name == "panda.urdf":
        if not os.path.isfile(PANDA):
            pytest.skip(f"example-robot-data's panda not at {PANDA}")
        return mbcompose.compose(PANDA, package_dirs=[SHARE]).model
    path = tmp_path / name
    path.write_text(MODELS[name])
    return mbcompose.compose(str(path)).model


def close(a, b, tol=TOL):
    """Relative agreement, scaled by the larger magnitude (at least 1)."""
    a, b = np.asarray(a), np.asarray(b)
    return np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max())


def random_state(em, rng, spread=0.5):
    """A closed state at random independent coordinates (around the reference) and velocities."""
    q_ind = em.neutral()[[em.tree_model.q_slice(n).start for n in em.independent]]
    q = embedding.complete_configuration(em, q_ind=dict(zip(em.independent,
                                                            q_ind + rng.uniform(-spread, spread, len(q_ind)))))
    return q, embedding.complete_velocity(em, q, rng.normal(size=em.n_independent))


def check_against_numpy(em, seed=3, n=4):
    """Forward dynamics (public function under ``backend("codegen")``) and the state-space functions
    (``derivatives``, ``outputs``) of the generated library against the numpy reference."""
    cm = compile_model(em)
    g = cm.gen
    ind_q = [g.output_names.index(s) for s in g.state_names[:g.nx - em.n_independent]]
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q, v = random_state(em, rng)
        tau = np.zeros(em.nv)
        tau[em.independent_v] = rng.normal(size=em.n_independent)
        with dispatch.backend("numpy"):
            ref = dyn.forward_dynamics(em, q, v, tau)
            T = tau + forces.passive_forces(em, q, v)
            a = dyn.forward_dynamics(em, q, v, T)
        with dispatch.backend("codegen"):
            assert close(dyn.forward_dynamics(em, q, v, tau), ref)
        assert close(cm.forward_dynamics(q, v, tau), ref)          # the library itself (no fallback)
        x = np.concatenate([q[ind_q], v[em.independent_v]])
        u = np.concatenate([tau[em.independent_v], np.zeros(len(em.actuator_names))])
        dx, y = np.zeros(g.nx), np.zeros(g.ny)
        assert cm.function("outputs")(cm.buf(cm.p), cm.buf(x), cm.buf(y)) == 0
        assert close(y, q, 1e-10)                   # the followers, from the couplings (Newton: to its tolerance)
        assert cm.function("derivatives")(cm.buf(cm.p), 0.0, cm.buf(x), cm.buf(u), cm.buf(dx)) == 0
        assert close(dx[-em.n_independent:], a[em.independent_v], 1e-9)
    return cm


@pytest.mark.parametrize("name", ["mimic_chain.urdf", "couplings.sdf", "linear_equalities.xml", "panda.urdf"])
def test_linear_couplings_are_generated_in_closed_form_and_agree_with_the_numpy_reference(tmp_path, name):
    em = _compose(tmp_path, name)
    assert em.kind == "embedded" and em.couplings and em.linear_couplings is not None
    cm = check_against_numpy(em)
    assert "_cholesky_solve" in cm.gen.source and f"{cm.gen.prefix}_solve(int n" not in cm.gen.source   # no Newton solve
    assert set(em.dependent) <= set(cm.gen.output_names)                             # followers are outputs


@pytest.mark.parametrize("name", ["polynomial_equalities.xml", "fourbar_flag.yaml"])
def test_polynomial_couplings_and_couplings_beside_loops_close_in_the_generated_newton_solve(tmp_path, name):
    em = _compose(tmp_path, name)
    assert em.kind == "embedded" and em.couplings and em.linear_couplings is None
    cm = check_against_numpy(em)
    assert f"{cm.gen.prefix}_close(" in cm.gen.source


def test_the_pandas_mimic_fingers_agree_with_pinocchios_mimic_model(tmp_path):
    pin = pytest.importorskip("pinocchio")
    em = _compose(tmp_path, "panda.urdf")
    try:
        pm = pin.buildModelFromUrdf(PANDA, mimic=True)
    except (TypeError, ValueError) as exc:
        pytest.skip(f"this Pinocchio has no mimic=True model: {exc}".splitlines()[0])
    pd = pm.createData()
    names = [pm.names[i] for i in range(1, pm.njoints) if pm.joints[i].nv]
    assert sorted(names) == sorted(em.independent) and em.dependent == ("panda_finger_joint2",)
    vidx = [em.v_slice(n).start for n in names]
    cm = compile_model(em)
    rng = np.random.default_rng(28)
    for _ in range(4):
        q, v = random_state(em, rng, spread=1.0)
        qp = np.array([q[em.q_slice(n).start] for n in names])
        tau = np.zeros(em.nv)
        tau[vidx] = rng.normal(size=len(vidx))
        zero = np.zeros(pm.nv)
        g = pin.rnea(pm, pd, qp, zero, zero)
        Mp = np.column_stack([pin.rnea(pm, pd, qp, zero, e) - g for e in np.eye(pm.nv)])
        ap = np.linalg.solve(Mp, tau[vidx] - pin.rnea(pm, pd, qp, v[vidx], zero))
        a = cm.forward_dynamics(q, v, tau)
        assert close(a[vidx], ap, 1e-9)
        assert a[em.v_slice("panda_finger_joint2").start] == pytest.approx(a[em.v_slice("panda_finger_joint1").start])


def test_cli_writes_the_coupled_source_and_it_compiles_on_its_own(tmp_path):
    from mbcompose.composer.cli.commands import main

    path = tmp_path / "chain.urdf"
    path.write_text(MIMIC_CHAIN)
    out = tmp_path / "gen"
    res = CliRunner().invoke(main, ["codegen", str(path), "-o", str(out)])
    assert res.exit_code == 0, res.output
    c_file = next(out.glob("*.c"))
    assert re.search(r"int \w+_embedded_fd\(", c_file.read_text())
    done = subprocess.run([*compiler().split(), "-std=c99", "-Wall", "-pedantic", "-c", str(c_file), "-o",
                           str(tmp_path / "chain.o")], capture_output=True, text=True)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr


def test_the_generated_source_names_each_coupling_it_closes(tmp_path):
    em = _compose(tmp_path, "polynomial_equalities.xml")
    src = generate_c(em, "eq").source
    for c in em.couplings:
        assert f"coupling {c.name}" in src


#: the issue's agreement of an FMU with ``mbcompose simulate`` (rad or m)
FMU_AGREEMENT = 1e-6
#: FMPy's CVode for Model Exchange: simulate's own tolerance leaves CVode's error near 1e-6 (tests/composer/test_fmu.py)
CVODE_RTOL = 1e-12


@pytest.mark.parametrize("name", ["mimic_chain.urdf", "polynomial_equalities.xml"])
def test_the_fmu_of_a_coupled_model_validates_and_moves_as_mbcompose_simulate(tmp_path, name):
    """The followers are outputs, computed from the leaders in the FMU (closed form or the Newton solve);
    the mimic chain stays inside its joint limits for the second simulated (the FMU of a coupled model has
    no joint stops)."""
    fmpy = pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu

    from mbcompose.composer.cli import main

    path = tmp_path / name
    path.write_text(MODELS[name])
    csv, fmu = tmp_path / "ref.csv", tmp_path / "model.fmu"
    res = CliRunner().invoke(main, ["simulate", str(path), "--duration", "1", "-o", str(csv), "--no-plot"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["convert", str(path), "-o", str(fmu)])
    assert res.exit_code == 0, res.output
    assert validate_fmu(str(fmu)) == []
    ref = np.genfromtxt(csv, delimiter=",", names=True, deletechars="")
    columns = [c for c in ref.dtype.names if c not in ("time", "energy") and not c.startswith("v:")]
    md = fmpy.read_model_description(str(fmu))
    outputs = {v.name for v in md.modelVariables if v.causality == "output"}
    states = {d.variable.derivative.name for d in md.derivatives}
    em = mbcompose.compose(str(path)).model
    assert set(columns) <= outputs and not set(em.dependent) & states
    for fmi_type in ("ModelExchange", "CoSimulation"):
        r = fmpy.simulate_fmu(str(fmu), fmi_type=fmi_type, stop_time=1.0, output_interval=0.005,
                              record_events=False, relative_tolerance=CVODE_RTOL, output=columns)
        assert np.allclose(r["time"], ref["time"])
        worst = {c: float(np.abs(r[c] - ref[c]).max()) for c in columns}
        assert max(worst.values()) < FMU_AGREEMENT, (fmi_type, worst)
        assert max(np.abs(ref[c] - ref[c][0]).max() for c in em.dependent) > 100 * FMU_AGREEMENT   # they move


SMALL_POLYNOMIAL = """<mujoco><compiler angle="radian"/>
  <worldbody>
    <body name="a" pos="0 0 1"><joint name="j1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
      <body name="b" pos="0.4 0 0" euler="0.3 0 0"><joint name="j2" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0.1 0" size="0.03"/>
        <body name="c" pos="0.4 0 0"><joint name="j3" axis="1 0 0"/><geom type="box" size="0.05 0.04 0.03" pos="0.05 0 0"/></body>
      </body>
    </body>
  </worldbody>
  <equality><joint joint1="j2" joint2="j1" polycoef="0.1 -0.7 0.5 0.2 0"/></equality>
</mujoco>"""


@pytest.mark.parametrize("text", [SMALL_POLYNOMIAL, SMALL_POLYNOMIAL.replace("0.1 -0.7 0.5 0.2 0", "0.1 -0.7 0 0 0")],
                         ids=["cubic", "linear"])
def test_symbolic_closed_forms_of_a_coupled_chain_equal_the_numpy_reference(tmp_path, text):
    """``--symbolic`` takes the couplings' rows ``s_f - p(s_l)`` into its closure (lambdified here)."""
    import sympy as sp

    from mbcompose.dynamics.codegen.symbolic import symbolic_model

    path = tmp_path / "small.xml"
    path.write_text(text)
    em = mbcompose.compose(str(path)).model
    sm = symbolic_model(em)
    fa = sp.lambdify([list(sm.q), list(sm.v), list(sm.tau), list(sm.p)], sm.qdd, "numpy", cse=True)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, v = random_state(em, rng)
        tau = np.zeros(em.nv)
        tau[em.independent_v] = rng.normal(size=em.n_independent)
        with dispatch.backend("numpy"):
            ref = dyn.forward_dynamics(em, q, v, tau)
        assert close(np.ravel(fa(list(q), list(v), list(tau), list(sm.p_defaults))), ref)
