"""MuJoCo model collections: every file MuJoCo loads composes, and M and the bias forces agree
with MuJoCo's to 1e-9 relative, joint armature (rotor inertia) included, in MuJoCo's own
coordinates (``qpos``: joint ``ref`` carried).

Corpora (the ``corpus`` extra; each skipped when its package is not installed): gymnasium's
MuJoCo assets (``gymnasium/envs/mujoco/assets/*.xml``), dm_control's suite
(``dm_control/suite/*.xml``) and its other model folders (walkers, props, arenas, its own
test models), and the model files MuJoCo's wheel ships (``mujoco/testdata``).
Files we refuse are listed in :data:`KNOWN_REFUSALS` with the feature their error names;
files whose tree is not MuJoCo's in :data:`TREE_DIFFERS`.  Small models of single
features are in ``test_mjcf_features.py``.
Coordinates are mapped by :mod:`mujoco_refs`.
"""

import glob
import os

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.parsers import InputError
from mujoco_refs import mujoco_dynamics, reference_orientations, to_mujoco

mujoco = pytest.importorskip("mujoco")


def corpus(package, pattern):
    try:
        mod = __import__(package, fromlist=["__file__"])
    except ImportError:
        return []
    return sorted(glob.glob(os.path.join(os.path.dirname(mod.__file__), pattern), recursive=True))


GYMNASIUM = corpus("gymnasium", os.path.join("envs", "mujoco", "assets", "*.xml"))
DM_SUITE = corpus("dm_control.suite", "*.xml")
#: dm_control's other model folders (walkers, props, arenas, its own test models) that MuJoCo loads
#: (without variants of models tested already, 15-20 s each: the fly on a floor includes fruitfly.xml,
#: drosophila_fused is an older fly, dog_v2/dog.xml a newer version of the suite's dog)
DM_VARIANTS = ("fruitfly_v2/floor.xml", "drosophila_fused.xml", "dog_v2/dog.xml")
DM_OTHER = [p for p in corpus("dm_control", os.path.join("**", "*.xml"))
            if f"{os.sep}suite{os.sep}" not in p and not p.replace(os.sep, "/").endswith(DM_VARIANTS)]
MUJOCO_TESTDATA = corpus("mujoco", os.path.join("testdata", "*.xml"))

#: files MuJoCo loads that we refuse, with the feature the one-line error names (README, known limits)
KNOWN_REFUSALS: dict[str, str] = {}

#: files that compose but whose tree is not MuJoCo's, with the number of MuJoCo dofs our tree leaves out:
#: mujoco/testdata/model.xml welds a free body to the world; our spanning tree keeps the weld (the body
#: is fixed, 0 dof), MuJoCo keeps the free joint (6 dof) and holds it with 6 equality rows
TREE_DIFFERS = {"model.xml": 6}


def mujoco_loads(path) -> bool:
    """Whether MuJoCo compiles the file (dm_control also ships fragments, schemas and broken test inputs)."""
    try:
        mujoco.MjModel.from_xml_path(path)
    except Exception:
        return False
    return True


def random_configuration(ours, rng):
    q = ours.neutral()
    for name in ours.joint_names:
        qs = ours.q_slice(name)
        n = qs.stop - qs.start
        if n == 1:
            q[qs] = rng.uniform(-0.8, 0.8)
        elif n == 4:
            q[qs] = _unit(rng)
        elif n == 7:
            q[qs] = np.concatenate([rng.normal(size=3), _unit(rng)])
    return q


def _unit(rng):
    x = rng.normal(size=4)
    return x / np.linalg.norm(x)


def check_against_mujoco(path, n=3, rtol=1e-9):
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    if os.path.basename(path) in KNOWN_REFUSALS:
        with pytest.raises(InputError) as exc:
            compose(path)
        assert KNOWN_REFUSALS[os.path.basename(path)] in str(exc.value) and exc.value.line is not None
        return
    model = compose(path).model
    ours = getattr(model, "tree_model", model)        # couplings: the tree's M and bias, constraints below
    if os.path.basename(path) in TREE_DIFFERS:
        assert ours.nv == m.nv - TREE_DIFFERS[os.path.basename(path)]
        return
    assert ours.nv == m.nv
    if m.nv == 0:                                            # a scene without joints
        return
    B = reference_orientations(m)
    assert_tree_matches_mujoco(m, d, ours, B, n, rtol, seed=11)
    if model is not ours:
        check_equalities(m, d, model, B)


def assert_tree_matches_mujoco(m, d, ours, B, n, rtol, seed):
    """Our tree's mass matrix and bias forces equal MuJoCo's, mapped to our coordinates, at ``n``
    random states (``B``: the bodies' orientations at MuJoCo's qpos0)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = random_configuration(ours, rng)
        v = rng.normal(size=ours.nv)
        qpos, T, tdot_v = to_mujoco(m, ours, q, v, B)
        M_mj, bias_mj = mujoco_dynamics(m, d, qpos, T @ v)
        M_ref, bias_ref = T.T @ M_mj @ T, T.T @ (bias_mj + M_mj @ tdot_v)
        np.testing.assert_allclose(dynamics.mass_matrix(ours, q), M_ref, atol=rtol * np.abs(M_ref).max())
        bias = dynamics.inverse_dynamics(ours, q, v, np.zeros(ours.nv))
        np.testing.assert_allclose(bias, bias_ref, atol=rtol * max(1.0, np.abs(bias_ref).max()))


def check_equalities(m, d, model, B):
    """Our closed configurations satisfy MuJoCo's equality constraints and our velocity basis
    spans the null space of MuJoCo's equality Jacobian."""
    from mbcompose.dynamics import embedding

    q = embedding.complete_configuration(model, q_ind={n: 0.3 for n in model.independent if "[" not in n})
    X = np.column_stack([embedding.complete_velocity(model, q, e) for e in np.eye(model.n_independent)])
    qpos, T, _ = to_mujoco(m, model, q, np.zeros(model.nv), B)
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    eq = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    np.testing.assert_allclose(d.efc_pos[eq], 0.0, atol=1e-9)
    np.testing.assert_allclose(d.efc_J.reshape(d.nefc, m.nv)[eq] @ T @ X, 0.0, atol=1e-9)


def test_gymnasium_corpus_is_found_when_installed():
    if not GYMNASIUM:
        pytest.skip("gymnasium (corpus extra) not installed")
    assert len(GYMNASIUM) >= 13


@pytest.mark.parametrize("path", GYMNASIUM, ids=os.path.basename)
def test_gymnasium_mujoco_models_match_mujoco(path):
    check_against_mujoco(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", DM_SUITE + MUJOCO_TESTDATA, ids=os.path.basename)
def test_dm_control_suite_and_mujoco_testdata_match_mujoco(path):
    check_against_mujoco(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", DM_OTHER, ids=lambda p: p.split(f"dm_control{os.sep}")[-1])
def test_dm_control_other_models_match_mujoco(path):
    if not mujoco_loads(path):
        pytest.skip("MuJoCo does not load it either (a fragment, a schema or a malformed test input)")
    check_against_mujoco(path)
