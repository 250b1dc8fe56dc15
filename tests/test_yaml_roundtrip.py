"""The native model file: write_yaml then read_yaml gives the same assembly."""

from pathlib import Path

import numpy as np
import pytest

from mbcompose.parsers import read_assembly
from mbcompose.parsers.yaml.format import write_yaml

SAMPLES = sorted(Path(__file__).parents[1].glob("samples/*/*.yaml"))
SAMPLES = [p for p in SAMPLES if p.name not in ("pipeline.yaml", "sweep.yaml")]


def same_pose(a, b):
    np.testing.assert_allclose(a.rotation, b.rotation, atol=1e-12)
    np.testing.assert_allclose(a.translation, b.translation, atol=1e-12)


@pytest.mark.parametrize("path", SAMPLES, ids=[p.parent.name for p in SAMPLES])
def test_written_model_reads_back_identically(path, tmp_path):
    original = read_assembly(path)
    out = tmp_path / "model.yaml"
    out.write_text(write_yaml(original, tmp_path))
    again = read_assembly(out)
    assert again.body_names == original.body_names
    assert again.joint_names == original.joint_names
    np.testing.assert_allclose(again.gravity, original.gravity, atol=1e-15)
    for a, b in zip(original.bodies, again.bodies):
        same_pose(a.pose, b.pose)
        assert b.mass.mass == pytest.approx(a.mass.mass, rel=1e-14)
        np.testing.assert_allclose(b.mass.com, a.mass.com, atol=1e-15)
        np.testing.assert_allclose(b.mass.inertia, a.mass.inertia, rtol=1e-14, atol=1e-20)
        assert [g.kind for g in b.geometry] == [g.kind for g in a.geometry]
        # mesh paths are written relative to the output folder and resolve to the same files
        assert [Path(g.file).resolve() for g in b.geometry if g.kind == "mesh"] == \
            [Path(g.file).resolve() for g in a.geometry if g.kind == "mesh"]
    for a, b in zip(original.joints, again.joints):
        assert (b.type, b.reference, b.secondary, b.actuated) == (a.type, a.reference, a.secondary, a.actuated)
        np.testing.assert_allclose(b.origin, a.origin, atol=1e-15)
        np.testing.assert_allclose(b.axis, a.axis, atol=1e-15)
