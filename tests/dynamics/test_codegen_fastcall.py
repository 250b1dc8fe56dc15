"""One call from Python into generated C (issue 28 point 3): ``compile_model(model).forward_dynamics`` and the
public functions under ``backend("codegen")`` against the numpy reference, on every kind of argument the
fast path in C refuses (lists, other dtypes, strides, batches, ``out=``), and bad shapes giving ``ValueError``
rather than a crash.  Skips without a C compiler or cffi.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import mbcompose
import numpy as np
import pytest
from mbcompose import dynamics as dyn
from mbcompose.dynamics import dispatch, embedding
from mbcompose.dynamics.codegen import compile_model, fastcall
from test_codegen import HAVE_CC, SAMPLES, close
from trees import random_model, random_q

pytestmark = pytest.mark.skipif(not HAVE_CC, reason="no C compiler or cffi: the codegen backend is unavailable")


def tree_case(seed=21):
    model, rng = random_model(seed, types=("revolute", "prismatic", "spherical", "free", "fixed"), n_max=8)
    q = random_q(model, rng)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    with dispatch.backend("numpy"):
        ref = dyn.forward_dynamics(model, q, v, tau)
    return model, q, v, tau, ref


def test_the_extension_builds_here_and_the_fast_path_is_in_c():
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        pytest.skip("Python's headers are not installed: the fast-call extension is not built (the cffi path runs)")
    assert fastcall.extension() is not None
    model, q, v, tau, ref = tree_case()
    cm = compile_model(model)
    assert cm._fast_aba is not None
    res = cm._fast_aba(q, v, tau)
    assert isinstance(res, np.ndarray) and close(res, ref)
    assert cm._fast_aba(list(q), v, tau) is NotImplemented


def test_every_argument_form_gives_the_reference():
    model, q, v, tau, ref = tree_case()
    cm = compile_model(model)
    assert close(cm.forward_dynamics(q, v, tau), ref)
    assert close(cm.forward_dynamics(list(q), list(v), list(tau)), ref)
    tau_int = np.round(10 * tau).astype(np.int64)                                # another dtype
    with dispatch.backend("numpy"):
        ref_int = dyn.forward_dynamics(model, q, v, tau_int.astype(float))
    assert close(cm.forward_dynamics(q, v, tau_int), ref_int)
    big = np.zeros((3, model.nq))
    big[:, :] = q
    assert close(cm.forward_dynamics(big[:, ::1][1], v, tau), ref)             # a row of a batch
    strided = np.repeat(v, 2)[::2]
    assert strided.strides != (8,) and close(cm.forward_dynamics(q, strided, tau), ref)
    assert close(cm.forward_dynamics(q, v, tau.astype(">f8")), ref)             # swapped byte order
    out = np.full(model.nv, np.nan)
    assert cm.forward_dynamics(q, v, tau, out=out) is out and close(out, ref)
    batch = cm.forward_dynamics(np.stack([q, q]), v, np.stack([tau, tau]))
    assert batch.shape == (2, model.nv) and close(batch[1], ref)
    with dispatch.backend("codegen"):
        assert close(dyn.forward_dynamics(model, q, v, tau), ref)
        assert close(dyn.forward_dynamics(model, list(q), v, tau), ref)


def test_inverse_dynamics_and_mass_matrix_of_the_library_object():
    model, rng = random_model(8, types=("revolute", "prismatic", "spherical", "free"), n_max=7)
    q, v, a = random_q(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    with dispatch.backend("numpy"):
        tau, M = dyn.inverse_dynamics(model, q, v, a), dyn.mass_matrix(model, q)
    cm = compile_model(model)
    assert close(cm.inverse_dynamics(q, v, a), tau)
    assert close(cm.mass_matrix(q), M)
    assert close(cm.mass_matrix(np.stack([q, q]))[1], M)


@pytest.mark.parametrize("bad", ["short q", "long v", "matrix tau", "scalar q", "rows", "out"])
def test_bad_shapes_raise_value_error_not_a_crash(bad):
    model, q, v, tau, _ = tree_case()
    cm = compile_model(model)
    args = {"short q": (q[:-1], v, tau), "long v": (q, np.append(v, 0.0), tau),
            "matrix tau": (q, v, np.zeros((2, 3, model.nv))), "scalar q": (1.0, v, tau),
            "rows": (np.stack([q, q, q]), v, np.zeros((2, model.nv))), "out": (q, v, tau)}[bad]
    kwargs = {"out": np.empty(model.nv + 1)} if bad == "out" else {}
    with pytest.raises(ValueError):
        cm.forward_dynamics(*args, **kwargs)
    if not kwargs:
        with dispatch.backend("codegen"), pytest.raises(ValueError):
            dyn.forward_dynamics(model, *args)


def test_the_converting_path_alone_gives_the_reference(monkeypatch):
    """As where the extension cannot be built (no headers): the cffi path serves every form."""
    model, q, v, tau, ref = tree_case(22)
    cm = compile_model(model)
    monkeypatch.setattr(cm, "_fast_aba", None)
    assert close(cm.forward_dynamics(q, v, tau), ref)
    assert close(cm.forward_dynamics(list(q), v, tau), ref)
    with pytest.raises(ValueError):
        cm.forward_dynamics(q[:-1], v, tau)


def test_embedded_closed_chain_through_the_library_object():
    em = mbcompose.compose(str(SAMPLES / "fourbar" / "fourbar.yaml")).model
    rng = np.random.default_rng(4)
    qg = em.neutral()
    qg[em.tree_model.q_slice(em.independent[0])] += 0.2
    q = embedding.complete_configuration(em, q_guess=qg)
    v = embedding.complete_velocity(em, q, rng.normal(size=em.n_independent))
    tau = np.zeros(em.nv)
    tau[em.independent_v] = rng.normal(size=em.n_independent)
    with dispatch.backend("numpy"):
        ref = dyn.forward_dynamics(em, q, v, tau)
    cm = compile_model(em)
    assert close(cm.forward_dynamics(q, v, tau), ref)
    assert close(cm.forward_dynamics(np.stack([q, q]), v, tau)[1], ref)
    with dispatch.backend("codegen"):
        assert close(dyn.forward_dynamics(em, q, v, tau), ref)
