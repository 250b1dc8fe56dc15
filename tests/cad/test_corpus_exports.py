"""Exports of real assemblies with declared joints load in Pinocchio and MuJoCo with our mass matrix (issue 24, must-show 4).

References: Pinocchio's CRBA on the URDF that ``mbcompose convert`` writes, MuJoCo's ``mj_fullM`` on
the MJCF it writes (armature zeroed), at random joint values; our ``dynamics.mass_matrix`` of the
model composed from the wrapper (tests/data/cad/<name>.yaml, joints declared one line each).
``koch_v1_1_follower`` (SolidWorks, six declared revolutes, a serial arm) and ``chrono_pendulum``
(Solid Edge, one declared revolute).  Skips, naming the places looked in, when the corpus is absent.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("OCP")

from test_corpus_joints import _wrapper  # noqa: E402
from test_real_assemblies import PLACES, _corpus  # noqa: E402

from mbcompose import compose, dynamics  # noqa: E402

#: issue 24, must-show 4: the exports' mass matrices equal ours to 1e-9 (of the largest entry)
MASS_MATRIX_RTOL = 1e-9
DECLARED = ("koch_v1_1_follower", "chrono_pendulum")


@pytest.fixture(scope="module")
def root():
    found = _corpus()
    if found is None:
        pytest.skip(f"the real-CAD corpus is absent (looked in {', '.join(p for p in PLACES if p)}); "
                    "see tests/data/cad/README.md")
    return found


def _convert(wrapper, target):
    from click.testing import CliRunner

    from mbcompose.composer.cli.commands import main
    r = CliRunner().invoke(main, ["convert", str(wrapper), "-o", str(target)])
    assert r.exit_code == 0, r.output
    return target


def _ours(model, names, values):
    q = np.zeros(model.nq)
    for n, x in zip(names, values):
        q[model.q_slice(n)] = x
    perm = np.concatenate([np.arange(model.nv)[model.v_slice(n)] for n in names])
    return dynamics.mass_matrix(model, q)[np.ix_(perm, perm)]


def _pinocchio(pin, pm, names, values):
    pd = pm.createData()
    qp = pin.neutral(pm)
    for n, x in zip(names, values):
        qp[pm.joints[pm.getJointId(n)].idx_q] = x
    m = pin.crba(pm, pd, qp)
    m = np.triu(m) + np.triu(m, 1).T
    idx = [pm.joints[pm.getJointId(n)].idx_v for n in names]
    return m[np.ix_(idx, idx)]


def _mujoco(mujoco, mm, names, values):
    md = mujoco.MjData(mm)
    for n, x in zip(names, values):
        md.qpos[mm.jnt_qposadr[mm.joint(n).id]] = x
    mujoco.mj_forward(mm, md)
    full = np.zeros((mm.nv, mm.nv))
    try:
        mujoco.mj_fullM(mm, md, full)
    except TypeError:
        mujoco.mj_fullM(mm, full, md.qM)
    order = [mm.jnt_dofadr[mm.joint(n).id] for n in names]
    return full[np.ix_(order, order)]


@pytest.mark.slow
@pytest.mark.parametrize("name", DECLARED)
def test_urdf_and_mjcf_exports_of_a_declared_real_assembly_have_our_mass_matrix(root, name, tmp_path):
    pin = pytest.importorskip("pinocchio")
    mujoco = pytest.importorskip("mujoco")
    wrapper = _wrapper(root, name, tmp_path)
    composed = compose(wrapper)
    model = composed.model
    names = [j.name for j in composed.assembly.joints if j.type == "revolute"]
    assert names and model.nv == len(names)
    out = tmp_path / "out"
    out.mkdir()
    pm = pin.buildModelFromUrdf(str(_convert(wrapper, out / f"{name}.urdf")))
    mm = mujoco.MjModel.from_xml_path(str(_convert(wrapper, out / f"{name}.xml")))
    mm.dof_armature[:] = 0.0
    rng = np.random.default_rng(24)
    for _ in range(3):
        values = rng.uniform(-0.5, 0.5, len(names))
        ours = _ours(model, names, values)
        tol = MASS_MATRIX_RTOL * np.abs(ours).max()
        np.testing.assert_allclose(_pinocchio(pin, pm, names, values), ours, atol=tol, rtol=0)
        np.testing.assert_allclose(_mujoco(mujoco, mm, names, values), ours, atol=tol, rtol=0)
