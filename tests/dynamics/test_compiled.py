"""The compiled (numba) backend against the numpy reference and Pinocchio.

References: the numpy SKO recursions (:mod:`dynamics.rnea`, :mod:`dynamics.crba`,
:mod:`dynamics.aba`, :mod:`dynamics.innovations`, :mod:`dynamics.jacobians`,
:mod:`dynamics.kinematics`) on seeded random trees with every joint type, and
Pinocchio's ``crba``/``rnea``/``aba`` with rotor armature.  Each kernel is compiled
once per test session (numba's on-disk cache makes later sessions load it).
"""

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose.dynamics import aba, crba, innovations, jacobians, kinematics, rnea
from mbcompose.dynamics.compiled import api
from trees import ALL_TYPES, q_to_pin, random_bodies, random_q, to_pinocchio, v_perm

SEEDS = range(12)


def rel_err(x, ref):
    return np.max(np.abs(x - ref)) / max(1.0, np.max(np.abs(ref)))


def make(seed, n_max=30):
    rng = np.random.default_rng(500 + seed)
    model = dyn.build_model(random_bodies(rng, int(rng.integers(2, n_max + 1)), ALL_TYPES))
    return model, rng


def states(model, rng, B):
    q = np.stack([random_q(model, rng) for _ in range(B)])
    return q, rng.normal(size=(B, model.nv)), rng.normal(size=(B, model.nv))


def test_batches_broadcast_read_only_and_one_row_arguments():
    """A batch of one against single rows, and read-only external forces broadcast to the batch, give the
    numpy reference's results (the batch entries call the sealed one-configuration kernels, which take
    only writeable C arrays: the arguments are copied to that type first)."""
    model, rng = make(0, n_max=8)
    q, v, a = states(model, rng, 2)
    f = rng.normal(size=(model.n_bodies, 6))
    f.setflags(write=False)
    ref = np.stack([rnea.inverse_dynamics(model, q[b], v[b], a[b], f) for b in range(2)])
    assert rel_err(api.inverse_dynamics(model, q, v, a, f), ref) < 1e-11
    one = api.forward_dynamics(model, q[0], v[:1], a[0], np.broadcast_to(f, (1,) + f.shape))
    assert one.shape == (1, model.nv)
    assert rel_err(one[0], aba.forward_dynamics(model, q[0], v[0], a[0], f)) < 1e-10


@pytest.mark.parametrize("seed", SEEDS)
def test_compiled_dynamics_match_numpy_reference_single_and_batch(seed):
    model, rng = make(seed)
    q, v, a = states(model, rng, 3)
    fe = rng.normal(size=(3, model.n_bodies, 6))
    for sl in (0, slice(None)):
        f = fe[sl]
        assert rel_err(api.inverse_dynamics(model, q[sl], v[sl], a[sl], f),
                       rnea.inverse_dynamics(model, q[sl], v[sl], a[sl], f)) < 1e-11
        assert rel_err(api.forward_dynamics(model, q[sl], v[sl], a[sl], f),
                       aba.forward_dynamics(model, q[sl], v[sl], a[sl], f)) < 1e-10
        assert rel_err(api.mass_matrix(model, q[sl]), crba.mass_matrix(model, q[sl])) < 1e-12
        assert rel_err(api.bias_forces(model, q[sl], v[sl]), rnea.bias_forces(model, q[sl], v[sl])) < 1e-11
        assert rel_err(api.gravity_forces(model, q[sl]), rnea.gravity_forces(model, q[sl])) < 1e-11
        assert rel_err(api.mass_matrix_inverse(model, q[sl]), innovations.mass_matrix_inverse(model, q[sl])) < 1e-10
        assert np.allclose(api.mass_matrix_logdet(model, q[sl]), innovations.mass_matrix_logdet(model, q[sl]),
                           rtol=1e-12, atol=1e-10)
        R, p = api.body_poses(model, q[sl])
        R0, p0 = kinematics.body_poses(model, q[sl])
        assert rel_err(R, R0) < 1e-13 and rel_err(p, p0) < 1e-12
    body = model.n_bodies - 1
    for frame in ("local", "world"):
        J = api.jacobian(model, q, body, [0.1, -0.2, 0.3], frame)
        assert rel_err(J, jacobians.jacobian(model, q, body, [0.1, -0.2, 0.3], frame)) < 1e-12


def test_batch_broadcasts_unbatched_arguments_like_the_reference():
    model, rng = make(3)
    q, v, a = states(model, rng, 4)
    assert rel_err(api.forward_dynamics(model, q[0], v, a[1]), aba.forward_dynamics(model, q[0], v, a[1])) < 1e-10
    assert rel_err(api.inverse_dynamics(model, q, v[2], a[1]), rnea.inverse_dynamics(model, q, v[2], a[1])) < 1e-11
    assert api.inverse_dynamics(model, q, v, a).shape == (4, model.nv)
    with pytest.raises(ValueError):
        api.inverse_dynamics(model, q[:2], v[:3], a)
    with pytest.raises(ValueError):
        api.forward_dynamics(model, q[0, :-1], v[0], a[0])


def test_data_holds_the_last_call_and_separate_data_give_the_same_result():
    model, rng = make(5)
    q, v, a = states(model, rng, 1)
    data = model.create_data()
    tau = api.inverse_dynamics(model, q[0], v[0], a[0], data=data)
    assert np.allclose(tau, api.inverse_dynamics(model, q[0], v[0], a[0]), rtol=0, atol=1e-13)
    V_ref = kinematics.body_velocities(model, q[0], v[0])
    assert rel_err(data.V, V_ref) < 1e-12


def test_batch_of_one_thousand_matches_row_by_row_calls():
    model, rng = make(7)
    q, v, a = states(model, rng, 1000)
    qdd = api.forward_dynamics(model, q, v, a)
    rows = np.array([api.forward_dynamics(model, q[i], v[i], a[i]) for i in range(0, 1000, 97)])
    assert np.array_equal(qdd[::97], rows)


@pytest.mark.parametrize("seed", range(4))
def test_armature_enters_mass_matrix_rnea_and_aba_like_pinocchio(seed):
    pin = pytest.importorskip("pinocchio")
    model, rng = make(20 + seed)
    model.armature = rng.uniform(0.0, 0.5, size=model.nv)
    pm, jid, off = to_pinocchio(model)
    perm = v_perm(model)
    pm.armature = model.armature[perm]
    pd = pm.createData()
    q, v, a = states(model, rng, 1)
    qp = q_to_pin(model, q[0])
    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    assert rel_err(api.mass_matrix(model, q[0])[np.ix_(perm, perm)], Mp) < 1e-10
    assert rel_err(api.inverse_dynamics(model, q[0], v[0], a[0])[perm], pin.rnea(pm, pd, qp, v[0][perm], a[0][perm])) < 1e-10
    assert rel_err(api.forward_dynamics(model, q[0], v[0], a[0])[perm], pin.aba(pm, pd, qp, v[0][perm], a[0][perm])) < 1e-10
    assert rel_err(api.mass_matrix_inverse(model, q[0])[np.ix_(perm, perm)], np.linalg.inv(Mp)) < 1e-9


def test_importing_the_package_loads_no_numba_and_compiles_no_kernel():
    import subprocess
    import sys

    code = ("import sys, mbcompose, mbcompose.dynamics; loaded = 'numba' in sys.modules\n"
            "from mbcompose.dynamics.compiled import entry_kernels as ek, spatial_kernels as sk\n"
            "compiled = [n for mod in (ek, sk) for n in dir(mod) if getattr(getattr(mod, n), 'signatures', None)]\n"
            "print(loaded, compiled)")
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False []"


def test_single_configuration_fast_path_and_converted_inputs_agree_with_the_reference():
    """float64 (n,) arrays take the wrapper's fast path; lists, float32, strided and read-only
    arrays, and a separate Data, are converted or checked and give the reference's numbers."""
    model, rng = make(9)
    q, v, a = (x[0] for x in states(model, rng, 1))
    ref_tau, ref_qdd = rnea.inverse_dynamics(model, q, v, a), aba.forward_dynamics(model, q, v, a)
    ref_M = crba.mass_matrix(model, q)
    strided = np.zeros((model.nq, 2))
    strided[:, 0] = q
    frozen = q.copy()
    frozen.flags.writeable = False
    for qi in (q, list(q), strided[:, 0], frozen):
        assert rel_err(api.inverse_dynamics(model, qi, v, a), ref_tau) < 1e-11
        assert rel_err(api.forward_dynamics(model, qi, list(v), a), ref_qdd) < 1e-10
        assert rel_err(api.mass_matrix(model, qi), ref_M) < 1e-12
    q32 = q.astype(np.float32)
    assert rel_err(api.forward_dynamics(model, q32, v, a), aba.forward_dynamics(model, q32.astype(float), v, a)) < 1e-10
    data = model.create_data()
    assert rel_err(api.forward_dynamics(model, q, v, a, data=data), ref_qdd) < 1e-10
    for bad in (q[:-1], np.append(q, 0.0), q.reshape(1, -1, 1)):
        with pytest.raises(ValueError):
            api.forward_dynamics(model, bad, v, a)
        with pytest.raises(ValueError):
            api.mass_matrix(model, bad)
    with pytest.raises(ValueError):
        api.inverse_dynamics(model, q, v[:-1], a)


# ---- named fields, Data, backends, and the numba features outside numba's documentation ----------------

import ast
import functools
from pathlib import Path

import numba

from mbcompose.dynamics import dispatch
from mbcompose.dynamics.compiled import entry_kernels as ek
from mbcompose.dynamics.compiled import fields, jit
from mbcompose.dynamics.compiled.closed_layout import CLOSED_FLOATS, CLOSED_INTS, CLOSED_WORK
from mbcompose.dynamics.compiled.layout import MODEL_FLOATS, MODEL_INTS, WORK

COMPILED = Path(dyn.__file__).parent / "compiled"
#: names the kernels give to the packed arrays and to the tuples of their fields
PACKED_OR_TUPLES = {"m", "w", "L", "s", "P", "packed", "ints", "floats", "work", "cint", "cflt", "cwork", "mv", "wv",
                    "cv", "sc", "kin", "loops", "blocks", "extra"}


def integer_constant(node) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return integer_constant(node.operand)
    if isinstance(node, ast.Tuple):
        return any(integer_constant(e) for e in node.elts)
    if isinstance(node, ast.Slice):
        return any(integer_constant(e) for e in (node.lower, node.upper) if e is not None)
    return False


def positional_reads(source: str) -> list[str]:
    """Subscripts of a packed array or of a tuple of fields (by the names the kernels use) by integer
    constants: ``w[18][3:4]``, ``cint[8, 0]``, ``m[1]``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript):
            base = node.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Name) and base.id in PACKED_OR_TUPLES and integer_constant(node.slice):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_compiled_module_reads_a_packed_array_or_a_tuple_of_fields_by_position():
    assert sorted(positional_reads("a = w[18][3:4]\nb = cint[8, 0]\nc = m[1]\nd = w.P[k, 0]\ne = extra[0:3]\n")) == [
        "1: w[18]", "1: w[18][3:4]", "2: cint[8, 0]", "3: m[1]", "5: extra[0:3]"]
    bad = {p.name: positional_reads(p.read_text()) for p in sorted(COMPILED.glob("*.py"))}
    assert not {k: v for k, v in bad.items() if v}
    assert not any("__dict__[" in p.read_text() for p in COMPILED.glob("*.py"))   # nothing stuck on models


@functools.cache
def _boxed(name):
    """The compiled view functions, compiled here with reference counting so that the views can be returned."""
    return numba.njit(getattr(fields, name).py_func)   # the inline functions' Python source, compiled on their own


def test_the_compiled_views_are_the_fields_of_the_layout_tables():
    """Every field the kernels see (model, work, loops, scratch) has the shape of its table and lies where
    the numpy views of the same descriptors lie: packing and views come from one table."""
    import mbcompose

    model, rng = make(2, n_max=6)
    flat, data = model.flat_model, model.create_data()
    for compiled, numpy_fields, layouts in (
            (_boxed("model_fields")(flat.ints, flat.floats), flat.fields, (MODEL_INTS, MODEL_FLOATS)),
            (_boxed("work_fields")(flat.ints, data.work), data.fields, (WORK,))):
        assert compiled._fields == tuple(n for layout in layouts for n in layout.names)
        for name, a, b in zip(compiled._fields, compiled, numpy_fields):
            a, b = np.asarray(a), np.asarray(b)
            assert a.shape == b.shape and a.ndim == len(next(lay.shapes[name] for lay in layouts if name in lay.shapes))
            assert a.ndim == 0 and a == b or a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    em = mbcompose.compose(COMPILED.parents[1] / "samples" / "fivebar" / "fivebar.yaml").model
    cf, cdata = em.closed_flat, em.create_data()
    loops = _boxed("loop_fields")(cf.cint, cf.cflt)
    scratch = _boxed("scratch_fields")(cf.cint, cdata.work)
    for compiled, numpy_fields, layouts in ((loops, cf.fields, (CLOSED_INTS, CLOSED_FLOATS)),
                                            (scratch, cdata.fields, (CLOSED_WORK,))):
        assert compiled._fields == tuple(n for layout in layouts for n in layout.names)
        for a, b in zip(compiled, numpy_fields):
            a, b = np.asarray(a), np.asarray(b)
            assert a.shape == b.shape
            assert a.ndim == 0 and a == b or a.size == 0 or \
                a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


def test_the_undocumented_numba_features_still_do_what_the_kernels_rely_on():
    """``_nrt=False`` leaves no reference counting in a kernel, ``seal`` makes new argument types raise,
    and the cache of the kernels is in ``CACHE_DIR``: a numba release that changes any of them fails here."""
    def allocates(n):
        return np.ones(n).sum()

    def allocates_too(n):     # another function: numba's cache index does not tell _nrt variants apart
        return np.ones(n).sum()

    # _nrt=False: numba's runtime (reference counting, allocation) is off in the kernel and in what it calls
    with pytest.raises(numba.core.errors.NumbaError, match="NRT required but not enabled|Only accept returning of array"):
        jit.kernel(refcount=False)(allocates_too)(3)
    assert jit.kernel(allocates)(3) == 3.0
    model = make(1, n_max=4)[0]
    api.mass_matrix(model, model.neutral())               # compiled (or loaded) and sealed
    flat = model.flat_model
    with pytest.raises(TypeError):
        ek.crba(flat.ints, flat.floats, model.create_data().work, model.neutral().astype(np.float32),
                np.empty((model.nv, model.nv)))
    assert jit.CACHING and next(jit.CACHE_DIR.rglob("entry_kernels.crba-*.nbi"), None) is not None
    assert numba.core.config.CACHE_DIR != str(jit.CACHE_DIR)     # set for our dispatchers only, then restored


def test_data_is_explicit_and_nothing_but_the_models_own_properties_is_kept_on_it():
    model, rng = make(4, n_max=10)
    q, v, a = (x[0] for x in states(model, rng, 1))
    before = set(vars(model))
    data = model.create_data()
    tau = dyn.inverse_dynamics(model, q, v, a, data=data)
    assert np.allclose(data.V, kinematics.body_velocities(model, q, v), rtol=0, atol=1e-12)
    assert not np.any(model.default_data.work)                 # the model's own Data untouched
    assert np.array_equal(dyn.inverse_dynamics(model, q, v, a), tau)
    assert np.any(model.default_data.work)
    owned = {k for k, x in vars(type(model)).items() if isinstance(x, functools.cached_property)}
    assert set(vars(model)) - before <= owned and {"flat_model", "default_data"} <= owned
    other = make(5, n_max=10)[0].create_data()
    if other.work.size != data.work.size:
        with pytest.raises(ValueError, match="Data of this model"):
            dyn.forward_dynamics(model, q, v, a, data=other)


#: public tree function -> (arguments after the model, the work field its kernel writes)
PUBLIC = {
    "mass_matrix": (lambda q, v, a: (q,), "oS"),
    "inverse_dynamics": (lambda q, v, a: (q, v, a), "f"),
    "forward_dynamics": (lambda q, v, a: (q, v, a), "P"),
    "bias_forces": (lambda q, v, a: (q, v), "f"),
    "gravity_forces": (lambda q, v, a: (q,), "f"),
    "mass_matrix_inverse": (lambda q, v, a: (q,), "Dinv"),
    "mass_matrix_logdet": (lambda q, v, a: (q,), "Dinv"),
    "mass_matrix_det": (lambda q, v, a: (q,), "Dinv"),
    "jacobian": (lambda q, v, a: (q, -1, [0.1, 0.0, -0.2], "world"), "oR"),
}


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_each_public_tree_function_on_each_backend_gives_the_numpy_reference(name):
    """Under ``backend("numpy")`` the reference runs (the given Data stays untouched), under
    ``backend("compiled")`` the kernel (it writes the given Data: the compiled path did run) with
    the same numbers; one configuration and a batch."""
    model, rng = make(6, n_max=12)
    q, v, a = states(model, rng, 3)
    args, written = PUBLIC[name]
    func = getattr(dyn, name)
    for sl in (0, slice(None)):
        call_args = args(q[sl], v[sl], a[sl])
        if name == "jacobian":
            call_args = (call_args[0], model.n_bodies - 1) + call_args[2:]
        results = {}
        for which in ("numpy", "compiled"):
            data = model.create_data()
            with dispatch.backend(which):
                results[which] = func(model, *call_args, data=data)
            if np.ndim(q[sl]) == 1:     # (the batches of RNEA, CRBA and ABA run with a work array per thread)
                assert bool(np.any(getattr(data, written))) == (which == "compiled"), (name, which)
        ref = results["numpy"]
        assert np.allclose(results["compiled"], ref, rtol=1e-10, atol=1e-10 * max(1.0, np.max(np.abs(ref))))


def test_the_backend_switch_is_scoped_and_checked():
    import threading

    model = make(0, n_max=4)[0]
    assert dispatch.current_backend() == "auto"
    with dispatch.backend("numpy"):
        assert dispatch.algorithm(model, "mass_matrix") is dispatch.REFERENCE["tree"]["mass_matrix"]
        elsewhere = []
        thread = threading.Thread(target=lambda: elsewhere.append(dispatch.current_backend()))
        thread.start()
        thread.join()
        assert elsewhere == ["auto"]                      # another thread keeps its own backend
        with dispatch.backend("compiled"):
            assert dispatch.current_backend() == "compiled"
        assert dispatch.current_backend() == "numpy"
    assert dispatch.current_backend() == "auto"
    with pytest.raises(ValueError, match="backend"):
        with dispatch.backend("fortran"):
            pass
