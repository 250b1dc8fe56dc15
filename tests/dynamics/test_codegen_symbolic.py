"""Closed forms of ``mbcompose codegen --symbolic`` (dynamics/codegen/symbolic.py) against the numpy
reference (``dispatch.backend("numpy")``), issue 28 must-show 2: the seeker, the double pendulum, the
four-bar (embedded, in its independent coordinate) and small random trees, evaluated through
``sympy.lambdify`` and through the generated C compiled with the system compiler; the size refusal.
"""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import mbcompose
import numpy as np
import pytest
import sympy as sp
from mbcompose import dynamics as dyn
from mbcompose.dynamics import dispatch, embedding
from mbcompose.dynamics.codegen import CodegenUnavailable, CodegenUnsupported, compiler
from mbcompose.dynamics.codegen.symbolic import (
    MAX_NV,
    SymbolicTooLarge,
    c_source,
    symbolic_model,
)
from trees import random_model

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
TREES = ("seeker/seeker.yaml", "double_pendulum/double_pendulum.yaml")
TOL = 1e-12


def close(a, b, tol=TOL):
    """Relative agreement, scaled by the larger magnitude (at least 1)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max())


def evaluators(sm):
    """lambdified (M(q, p), h(q, v, p), qdd(q, v, tau, p))."""
    q, v, tau, p = map(list, (sm.q, sm.v, sm.tau, sm.p))
    return (sp.lambdify([q, p], sm.M, "numpy", cse=True), sp.lambdify([q, v, p], sm.h, "numpy", cse=True),
            sp.lambdify([q, v, tau, p], sm.qdd, "numpy", cse=True))


def tree_states(model, rng, n=5):
    return [(rng.uniform(-np.pi, np.pi, model.nq), rng.normal(size=model.nv), rng.normal(size=model.nv))
            for _ in range(n)]


def closed_states(em, rng, n=5):
    out = []
    for _ in range(n):
        q = embedding.complete_configuration(em, q_ind=em.neutral()[list(em.independent_v)] + rng.uniform(-1, 1))
        v = embedding.complete_velocity(em, q, rng.normal(size=len(em.independent_v)))
        out.append((q, v, rng.normal(size=em.nv)))
    return out


def reference(model, q, v, tau):
    with dispatch.backend("numpy"):
        return dyn.mass_matrix(model, q), dyn.bias_forces(model, q, v), dyn.forward_dynamics(model, q, v, tau)


def check(model, sm, states, evaluate):
    """Every state: M, h (at the independent coordinates) and qdd equal the numpy reference's."""
    ind = list(sm.independent_v)
    if model.kind == "embedded":
        assert sorted(model.independent_v) == ind
        order = [ind.index(j) for j in model.independent_v]
    else:
        order = ind
    for q, v, tau in states:
        M_ref, h_ref, a_ref = reference(model, q, v, tau)
        M, h, a = evaluate(q, v, tau)
        assert close(np.asarray(M)[np.ix_(order, order)], M_ref)
        assert close(np.ravel(h), np.asarray(h_ref)[ind])
        assert close(np.ravel(a), a_ref)


def lambdified(sm):
    fM, fh, fa = evaluators(sm)
    p = list(sm.p_defaults)
    return lambda q, v, tau: (fM(list(q), p), fh(list(q), list(v), p), fa(list(q), list(v), list(tau), p))


def compiled(sm, tmp_path, prefix):
    """The generated C compiled into a shared library and called through ctypes."""
    source, _ = c_source(sm, prefix)
    c, so = tmp_path / f"{prefix}_sym.c", tmp_path / f"lib{prefix}_sym.so"
    c.write_text(source)
    done = subprocess.run([*compiler().split(), "-std=c99", "-Wall", "-O2", "-fPIC", "-shared", str(c), "-o", str(so),
                           "-lm"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    lib = ctypes.CDLL(str(so))
    ni, nv = sm.M.shape[0], len(sm.v)
    p = np.array(sm.p_defaults)
    ptr = lambda x: np.ascontiguousarray(x, float).ctypes.data_as(ctypes.POINTER(ctypes.c_double))

    def evaluate(q, v, tau):
        M, h, a = np.zeros(ni * ni), np.zeros(ni), np.zeros(nv)
        q, v, tau = (np.ascontiguousarray(x, float) for x in (q, v, tau))
        getattr(lib, f"{prefix}_sym_mass_matrix")(ptr(p), ptr(q), M.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        getattr(lib, f"{prefix}_sym_bias")(ptr(p), ptr(q), ptr(v), h.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        getattr(lib, f"{prefix}_sym_forward_dynamics")(ptr(p), ptr(q), ptr(v), ptr(tau),
                                                       a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        return M.reshape(ni, ni), h, a

    return evaluate


def have_compiler() -> bool:
    try:
        compiler()
        return True
    except CodegenUnavailable:
        return False


@pytest.mark.parametrize("sample", TREES)
def test_closed_forms_of_the_sample_trees_equal_the_numpy_reference(sample):
    model = mbcompose.compose(SAMPLES / sample).model
    sm = symbolic_model(model)
    check(model, sm, tree_states(model, np.random.default_rng(1)), lambdified(sm))


def test_closed_forms_of_the_fourbar_in_its_independent_coordinate_equal_the_numpy_reference():
    em = mbcompose.compose(SAMPLES / "fourbar" / "fourbar.yaml").model
    assert em.kind == "embedded"
    sm = symbolic_model(em)
    assert sm.M.shape == (1, 1) and len(sm.qdd) == em.nv
    check(em, sm, closed_states(em, np.random.default_rng(2)), lambdified(sm))


@pytest.mark.parametrize("seed", range(2))
def test_closed_forms_of_random_small_trees_equal_the_numpy_reference(seed):
    model, rng = random_model(seed, n=3, types=("revolute", "continuous", "prismatic", "fixed"))
    sm = symbolic_model(model)
    check(model, sm, tree_states(model, rng, n=3), lambdified(sm))


@pytest.mark.skipif(not have_compiler(), reason="no C compiler")
@pytest.mark.parametrize("sample", [*TREES, "fourbar/fourbar.yaml"])
def test_generated_c_of_the_closed_forms_equals_the_numpy_reference(sample, tmp_path):
    model = mbcompose.compose(SAMPLES / sample).model
    sm = symbolic_model(model)
    rng = np.random.default_rng(3)
    states = closed_states(model, rng) if model.kind == "embedded" else tree_states(model, rng)
    check(model, sm, states, compiled(sm, tmp_path, Path(sample).stem))


def test_models_above_the_size_limit_are_refused_clearly():
    model, _ = random_model(5, n=MAX_NV + 1, types=("revolute",))
    with pytest.raises(SymbolicTooLarge, match="small models only"):
        symbolic_model(model)
    assert issubclass(SymbolicTooLarge, CodegenUnsupported)


CHAIN = """format: mbcompose-assembly/1
name: chain
units: {{length: m, mass: kg, angle: rad}}
gravity: [0, 0, -9.81]
bodies:
{bodies}
joints:
{joints}
"""


def _chain_yaml(n: int) -> str:
    bodies = "\n".join(f"  - name: b{k}\n    pose: {{xyz: [0, 0, {-0.1 * k}]}}\n    inertial: {{mass: 1.0, com: [0, 0, "
                       f"-0.05], inertia: {{ixx: 0.01, iyy: 0.01, izz: 0.01, ixy: 0, ixz: 0, iyz: 0}}}}"
                       for k in range(n))
    joints = "\n".join(f"  - name: j{k}\n    type: revolute\n    reference: {'ground' if k == 0 else f'b{k - 1}'}\n"
                       f"    secondary: b{k}\n    origin: [0, 0, {-0.1 * k}]\n    axis: [0, 1, 0]" for k in range(n))
    return CHAIN.format(bodies=bodies, joints=joints)


def test_cli_writes_the_closed_forms_beside_the_numeric_c_and_refuses_large_models(tmp_path):
    from click.testing import CliRunner
    from mbcompose.composer.cli.commands import main

    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["codegen", str(SAMPLES / "double_pendulum" / "double_pendulum.yaml"), "-o",
                                    str(out), "--symbolic"])
    assert res.exit_code == 0, res.output
    for name in ("double_pendulum.c", "double_pendulum.h", "double_pendulum_sym.c", "double_pendulum_sym.h",
                 "double_pendulum_sym.md"):
        assert (out / name).is_file(), name
    src = (out / "double_pendulum_sym.c").read_text()
    assert "void double_pendulum_sym_mass_matrix(const double *p, const double *q, double *M)" in src
    assert "\\begin{aligned}" in (out / "double_pendulum_sym.md").read_text()
    chain = tmp_path / "chain.yaml"
    chain.write_text(_chain_yaml(MAX_NV + 1))
    res = CliRunner().invoke(main, ["codegen", str(chain), "-o", str(tmp_path / "big"), "--symbolic"])
    assert res.exit_code == 2, res.output
    assert "small models only" in res.output
    assert not (tmp_path / "big" / "chain_sym.c").exists()
