"""The pipeline runner: every sample runs, interruption leaves nothing, batches go on after errors."""

import shutil
from pathlib import Path

import pytest
import yaml

from mbcompose.composer.config import load_pipeline
from mbcompose.composer.pipeline import run_pipeline
from mbcompose.parsers import InputError

ROOT = Path(__file__).resolve().parents[2]
PIPELINES = sorted(ROOT.glob("samples/*/pipeline.yaml"))


def retarget(pipeline: Path, tmp_path: Path, **changes) -> Path:
    """A copy of a sample's pipeline writing into tmp_path/out, with keys changed."""
    doc = yaml.safe_load(pipeline.read_text())
    doc.setdefault("outputs", {})["directory"] = str(tmp_path / "out")
    for key, value in changes.items():
        section, _, name = key.partition(".")
        if name:
            doc.setdefault(section, {})[name] = value
        else:
            doc[section] = value
    if "input" in doc:
        doc["input"] = str(pipeline.parent / doc["input"])
    target = tmp_path / "pipeline.yaml"
    target.write_text(yaml.safe_dump(doc))
    return target


def test_every_sample_has_a_pipeline_config():
    samples = {p.parent.name for p in ROOT.glob("samples/*/*.yaml") if p.name not in ("pipeline.yaml", "sweep.yaml")}
    assert samples == {p.parent.name for p in PIPELINES}


@pytest.mark.parametrize("pipeline", PIPELINES, ids=[p.parent.name for p in PIPELINES])
def test_each_sample_pipeline_runs_and_writes_its_outputs(pipeline, tmp_path):
    cfg = load_pipeline(retarget(pipeline, tmp_path))
    [result] = run_pipeline(cfg)
    assert result.ok, result.error
    out = tmp_path / "out"
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    stem = cfg.inputs[0].stem
    assert f"{stem}.report.html" in names and f"{stem}.report.md" in names
    assert sorted(p.relative_to(out).as_posix() for p in result.outputs) == names
    assert not [n for n in names if n.endswith(".part")]
    for fmt, suffix in (("urdf", ".urdf"), ("mjcf", ".mjcf.xml"), ("sdf", ".sdf")):
        assert (f"{stem}{suffix}" in names) == (fmt in cfg.outputs.exports)


STAGES = ["read", "analyse", "model", "exports", "pictures", "simulate", "report"]


@pytest.mark.parametrize("stage", STAGES)
def test_an_exception_injected_after_any_stage_leaves_no_output_file(stage, tmp_path):
    cfg = load_pipeline(retarget(ROOT / "samples/seeker/pipeline.yaml", tmp_path,
                                 **{"outputs.exports": ["urdf"]}))

    def fail(name):
        if name == stage:
            raise RuntimeError(f"injected failure after {name}")

    with pytest.raises(RuntimeError, match="injected"):
        run_pipeline(cfg, after_stage=fail)
    out = tmp_path / "out"
    assert not out.exists() or list(out.iterdir()) == []


def test_a_failed_rerun_keeps_the_previous_complete_outputs(tmp_path):
    cfg = load_pipeline(retarget(ROOT / "samples/double_pendulum/pipeline.yaml", tmp_path))
    run_pipeline(cfg)
    before = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}

    def fail(name):
        if name == "simulate":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_pipeline(cfg, after_stage=fail)
    after = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    assert after == before


def test_a_batch_reports_each_file_and_goes_on_after_a_bad_one(tmp_path):
    inputs = [str(p) for p in sorted(ROOT.glob("samples/*/*.yaml")) if p.name not in ("pipeline.yaml", "sweep.yaml")]
    bad = ROOT / "tests/data/malformed/unknown_body_in_joint.yaml"
    inputs.insert(1, str(bad))
    target = tmp_path / "batch.yaml"
    target.write_text(yaml.safe_dump({"inputs": inputs, "outputs": {"directory": str(tmp_path / "out"),
                                                                     "graphs": [], "exports": []}}))
    results = run_pipeline(load_pipeline(target))
    assert [r.input for r in results] == [Path(p) for p in inputs]
    failed = [r for r in results if not r.ok]
    assert [r.input for r in failed] == [bad]
    assert failed[0].error.startswith(f"error: {bad}:9: ")
    for r in results:
        folder = tmp_path / "out" / r.input.stem
        assert folder.exists() == r.ok


def test_pipeline_validation_errors_name_file_line_and_key(tmp_path):
    target = tmp_path / "p.yaml"
    target.write_text(f"input: {ROOT / 'samples/seeker/seeker.yaml'}\noptions:\n  loops: maybe\n")
    with pytest.raises(InputError) as info:
        load_pipeline(target)
    assert (info.value.file, info.value.line, info.value.key) == (str(target), 3, "options.loops")


def test_the_pipeline_never_overwrites_its_input(tmp_path):
    src = tmp_path / "seeker.yaml"
    shutil.copy(ROOT / "samples/double_pendulum/double_pendulum.yaml", src)
    target = tmp_path / "p.yaml"
    target.write_text("input: seeker.yaml\noutputs:\n  directory: .\n  graphs: []\n")
    # the model file would be seeker.model.yaml, the input seeker.yaml: both must survive
    original = src.read_text()
    run_pipeline(load_pipeline(target))
    assert src.read_text() == original
