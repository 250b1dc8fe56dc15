"""samples/seeker_cad: seed 004's seeker from its STEP file gives Tables 1-3 and dof 2.

References: seed 004's Table 1 (joint names, types, reference and secondary
bodies, actuated), Table 2's member sets, Table 3's two removed redundant
revolutes; the answers of samples/seeker (the YAML seeker); Pinocchio and
MuJoCo on our URDF and MJCF exports of the lumped model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("OCP")

from mbcompose import compose, dynamics  # noqa: E402
from mbcompose.composer.inspect import render_json  # noqa: E402
from mbcompose.parsers import read_assembly  # noqa: E402
from seed004_tables import TABLE_1, TABLE_2  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "seeker_cad"

@pytest.fixture(scope="module")
def seeker():
    return compose(SAMPLE / "seeker.yaml")


def test_table_1_from_the_mating_geometry(seeker):
    a = seeker.assembly
    assert len(a.bodies) == 9
    got = {(j.name, j.type, j.reference, j.secondary, j.actuated) for j in a.joints if not j.implicit}
    assert got == set(TABLE_1)
    for name, axis in (("pitch_a", [0, 1, 0]), ("pitch_b", [0, 1, 0]), ("yaw_a", [0, 0, 1]), ("yaw_b", [0, 0, 1])):
        j = a.joint(name)
        np.testing.assert_allclose(j.axis, axis, atol=1e-12)
        np.testing.assert_allclose(np.cross(j.origin, j.axis), 0.0, atol=1e-12)   # on the pitch/yaw axis


def test_tables_2_and_3_and_dof_as_the_yaml_seeker(seeker):
    doc = render_json(seeker.analysis)
    assert sorted(map(sorted, doc["composites"])) == sorted(map(sorted, TABLE_2))
    assert sorted(r["name"] for r in doc["removed_joints"]) == ["pitch_b", "yaw_b"]
    assert doc["dof"] == 2 and seeker.model.nv == 2
    yaml = compose(SAMPLE.parent / "seeker" / "seeker.yaml")
    ref = render_json(yaml.analysis)
    assert sorted(map(sorted, ref["composites"])) == sorted(map(sorted, doc["composites"]))
    assert [r["name"] for r in ref["removed_joints"]] == sorted(r["name"] for r in doc["removed_joints"])
    assert [(r["type"]) for r in ref["reduced_joints"]] == [r["type"] for r in doc["reduced_joints"]]


def test_the_step_file_alone_gives_the_same_mechanism():
    a = read_assembly(SAMPLE / "seeker.step")
    doc = render_json(a)
    assert doc["dof"] == 2
    assert sorted(map(sorted, doc["composites"])) == sorted(map(sorted, TABLE_2))
    types = sorted(j["type"] for j in doc["joints"])
    assert types == ["fixed"] * 6 + ["revolute"] * 4
    kinds = sorted(c["kind"] for c in doc["contacts"])
    assert kinds.count("press fit") == 6 and kinds.count("bearing") == 4
    assert {c["joint_type"] for c in doc["contacts"] if c["kind"] == "bearing"} == {"revolute"}


def test_inspect_prints_the_contacts_before_table_1():
    from click.testing import CliRunner

    from mbcompose.composer.cli.commands import main
    out = CliRunner().invoke(main, ["inspect", str(SAMPLE / "seeker.yaml")])
    assert out.exit_code == 0, out.output
    text = out.output
    assert text.index("Contacts") < text.index("Table 1")
    assert "bearing" in text and "press fit" in text and "pitch_a (revolute)" in text


@pytest.mark.slow
def test_urdf_and_mjcf_exports_load_with_our_mass_matrix(seeker, tmp_path):
    pin = pytest.importorskip("pinocchio")
    mujoco = pytest.importorskip("mujoco")
    from click.testing import CliRunner

    from mbcompose.composer.cli.commands import main
    out = tmp_path / "out"
    out.mkdir()
    urdf, mjcf = out / "seeker.urdf", out / "seeker.xml"
    for target in (urdf, mjcf):
        r = CliRunner().invoke(main, ["convert", str(SAMPLE / "seeker.yaml"), "-o", str(target)])
        assert r.exit_code == 0, r.output
    assets = {p.name for p in (out / "assets").iterdir()}
    assert assets == {f"{b.name}.stl" for b in seeker.assembly.bodies}      # one tessellated mesh per part
    pm = pin.buildModelFromUrdf(str(urdf))
    pd = pm.createData()
    mm = mujoco.MjModel.from_xml_path(str(mjcf))
    mm.dof_armature[:] = 0.0
    md = mujoco.MjData(mm)
    model = seeker.model
    names = ["pitch_a", "yaw_a"]
    rng = np.random.default_rng(3)
    for _ in range(3):
        qj = dict(zip(names, rng.uniform(-0.5, 0.5, 2)))
        q = np.zeros(model.nq)
        for n in names:
            q[model.q_slice(n)] = qj[n]
        perm = np.concatenate([np.arange(model.nv)[model.v_slice(n)] for n in names])
        M = dynamics.mass_matrix(model, q)[np.ix_(perm, perm)]
        qp = pin.neutral(pm)
        for n in names:
            jm = pm.joints[pm.getJointId(n)]
            qp[jm.idx_q] = qj[n]
        R = pin.crba(pm, pd, qp)
        R = np.triu(R) + np.triu(R, 1).T
        idx = [pm.joints[pm.getJointId(n)].idx_v for n in names]
        np.testing.assert_allclose(M, R[np.ix_(idx, idx)], atol=1e-9 * np.abs(M).max(), rtol=0)
        for n in names:
            md.qpos[mm.jnt_qposadr[mm.joint(n).id]] = qj[n]
        mujoco.mj_forward(mm, md)
        full = np.zeros((mm.nv, mm.nv))
        try:
            mujoco.mj_fullM(mm, md, full)
        except TypeError:
            mujoco.mj_fullM(mm, full, md.qM)
        order = [mm.jnt_dofadr[mm.joint(n).id] for n in names]
        np.testing.assert_allclose(M, full[np.ix_(order, order)], atol=1e-9 * np.abs(M).max(), rtol=0)
    assert "assets/" in urdf.read_text() and "assets/" in mjcf.read_text()     # meshes next to the exports
