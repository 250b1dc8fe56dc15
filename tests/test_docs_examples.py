"""The YAML examples of docs/pipeline-format.md and docs/assembly-format.md work as written
(issue 27, point 11).  Each block is copied verbatim beside a copy of the seeker sample (the
pipeline examples name ``seeker.yaml`` and write to paths relative to it), then loaded or run;
the assembly format's complete example gets the one file it names that a user supplies, a mesh.
"""

import re
import shutil
from pathlib import Path

import pytest

from mbcompose import parsers
from mbcompose.composer.config import load_pipeline
from mbcompose.composer.pipeline import run_pipeline

ROOT = Path(__file__).resolve().parents[1]


def yaml_blocks(name: str) -> list[str]:
    text = (ROOT / "docs" / name).read_text(encoding="utf-8")
    return re.findall(r"^```yaml\n(.*?)^```", text, flags=re.S | re.M)


@pytest.fixture
def seeker_copy(tmp_path) -> Path:
    """``<tmp>/samples/seeker``: the sample's folder, so ``../../out/seeker`` stays inside ``tmp``."""
    folder = tmp_path / "samples" / "seeker"
    shutil.copytree(ROOT / "samples" / "seeker", folder)
    return folder


def test_every_pipeline_example_loads_and_the_first_runs(seeker_copy):
    blocks = yaml_blocks("pipeline-format.md")
    assert len(blocks) >= 2
    configs = []
    for k, block in enumerate(blocks):
        path = seeker_copy / f"example{k}.yaml"
        path.write_text(block)
        configs.append(load_pipeline(path))
    [result] = run_pipeline(configs[0])
    assert result.ok, result.error
    assert {p.name for p in result.outputs} >= {"seeker.urdf", "seeker.report.html", "seeker.simulation.csv"}


def test_the_complete_assembly_example_reads(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    block = yaml_blocks("assembly-format.md")[0]
    mesh = re.search(r"mesh: (\S+)", block).group(1)
    (tmp_path / mesh).parent.mkdir(parents=True, exist_ok=True)
    trimesh.creation.box(extents=(20.0, 10.0, 10.0)).export(tmp_path / mesh)   # mm, as its 'scale' says
    path = tmp_path / "demo.yaml"
    path.write_text(block)
    a = parsers.read_assembly(path)
    assert a.name == "demo" and [b.name for b in a.bodies] == ["base_plate", "arm", "tool"]
    assert a.body("base_plate").mass.mass == 2.0
