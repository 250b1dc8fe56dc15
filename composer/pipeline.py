"""The pipeline runner: ``mbcompose run PIPELINE.yaml``.

Each stage is a function ``run(input, config) -> output`` (read, analyse, model
in :mod:`composer.compose`; exports, pictures, simulation and report here).
The runner keeps every stage's artefact and wall time, logs through
``logging``, and stages every output file of one input in an
:class:`~composer.outputs.OutputSet`: the files appear together when the
input's run succeeds, and none appears when it fails.

A batch config (``inputs: [...]``) runs every input, each into its own
sub-folder, one task per input on an executor (:mod:`composer.sweep.executors`,
as sweeps do), and reports per-file success or the per-file error without
stopping the others.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mbcompose.dynamics.closed.closure import ClosureError
from mbcompose.parsers import limits as input_limits
from mbcompose.parsers import input_stem
from mbcompose.parsers.errors import InputError
from mbcompose.parsers.mesh_progress import reporting_progress

from .compose import Composition, analyse_stage, model_stage, read_stage
from .config import PipelineConfig, SimulationConfig
from .exports import EXPORT_SUFFIXES, export_writers
from .outputs import OutputSet, check_writable, remove_leftovers

log = logging.getLogger(__name__)

Progress = Callable[[str, float], None]


@dataclass
class StageRecord:
    name: str
    seconds: float
    artefact: object = None


@dataclass
class RunResult:
    """What one input's run produced: stage records, output files, or the error."""

    input: Path
    stages: list[StageRecord] = field(default_factory=list)
    outputs: list[Path] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def artefact(self, name: str):
        for s in self.stages:
            if s.name == name:
                return s.artefact
        raise KeyError(name)


class _Stages:
    def __init__(self, result: RunResult):
        self.result = result

    def run(self, name: str, func, *args, **kwargs):
        log.info("stage %s ...", name)
        t0 = time.perf_counter()
        artefact = func(*args, **kwargs)
        dt = time.perf_counter() - t0
        self.result.stages.append(StageRecord(name, dt, artefact))
        log.info("stage %s done in %.3f s", name, dt)
        return artefact


# ---------------------------------------------------------------- stages

def exports_stage(composition: Composition, formats, directory: Path, stem: str,
                  collision: str = "mesh") -> dict[str, Callable]:
    """Writers of the model file, of each export (with the ``collision`` geometry, ``outputs.collision``)
    and of their meshes, keyed by file name (:func:`composer.exports.export_writers`); the runner calls each
    on a staged temporary file."""
    from mbcompose.parsers.exporters import ExportError

    formats_of = {f"{stem}{EXPORT_SUFFIXES[f]}": f for f in formats}
    writers = export_writers(composition.lumped, [f"{stem}.model.yaml", *formats_of], directory,
                             collision=collision)
    source = composition.assembly.source_file

    def located(write, fmt):
        def run(path):
            try:
                write(path)
            except ExportError as exc:
                raise InputError(f"outputs.exports: cannot write {fmt}: {exc}", file=source) from None
        return run
    return {name: located(w, formats_of[name]) if name in formats_of else w for name, w in writers.items()}


def pictures_stage(composition: Composition, stages) -> dict[str, bytes]:
    """PNG bytes of the requested pictures, keyed by a short name."""
    from .report.pictures import picture_png

    return {stage: picture_png(composition, stage) for stage in stages}


def simulation_stage(composition: Composition, cfg: SimulationConfig, progress: Progress | None = None):
    """Simulate from the configured initial state with the configured joint forces."""
    from .simulation import run_simulation

    return run_simulation(composition, cfg, progress=None if progress is None else
                          (lambda f: progress("simulate", f)))


def scene_stage(composition: Composition, simulation):
    """The moving scene of the 3-D view and the GLB file (:func:`composer.report.scene.build_scene`)."""
    from .report.scene import build_scene

    return build_scene(composition, simulation)


def scene_glb(scene) -> bytes:
    from .report.gltf import scene_glb as glb

    return glb(scene)


def report_stage(composition: Composition, result: RunResult, config: PipelineConfig,
                 pictures: dict[str, bytes], simulation, scene=None, files=()) -> tuple[str, str]:
    """The HTML report (with the 3-D view of ``scene`` and links to ``files``) and its Markdown twin."""
    from .report.html import render_report

    return render_report(composition, result, config, pictures, simulation, scene, files)


# ---------------------------------------------------------------- runner

def output_directory(config: PipelineConfig, input_path: Path) -> Path:
    base = config.outputs.directory
    return base / input_stem(input_path) if len(config.inputs) > 1 else base


def run_input(input_path: Path, config: PipelineConfig, progress: Progress | None = None,
              after_stage: Callable[[str], None] | None = None) -> RunResult:
    """Run every stage for one input; outputs appear only if all succeed.

    ``after_stage(name)`` is called after each stage (tests use it to inject failures).
    """
    result = RunResult(input=input_path)
    try:
        with input_limits.using(config.limits), input_limits.recording_inputs() as read, \
                reporting_progress(progress):
            read.update((input_path, config.source))
            _run_stages(result, input_path, config, progress, after_stage or (lambda name: None), read)
    except InputError as exc:
        if exc.file is None:  # an option of the pipeline file that the stages found wrong
            exc.file = str(config.source)
        raise
    return result


def _run_stages(result: RunResult, input_path: Path, config: PipelineConfig, progress: Progress | None,
                hook: Callable[[str], None], read: set) -> None:
    stages = _Stages(result)
    directory = output_directory(config, input_path)
    stem = input_stem(input_path)
    opts, outs = config.options, config.outputs
    check_writable(directory)
    remove_leftovers(directory)
    with OutputSet(inputs=read, create_dirs=True) as out:
        assembly = stages.run("read", read_stage, input_path, opts)
        hook("read")
        analysis = stages.run("analyse", analyse_stage, assembly, opts)
        hook("analyse")
        composition = stages.run("model", model_stage, assembly, analysis, opts)
        hook("model")
        if outs.model or outs.exports:
            files = stages.run("exports", exports_stage, composition,
                               outs.exports, directory, stem, outs.collision)
            for name, write in files.items():
                if name.endswith(".model.yaml") and not outs.model:
                    continue
                out.add(directory / name, write)
            hook("exports")
        pictures = stages.run("pictures", pictures_stage, composition, outs.graphs)
        for name, png in pictures.items():
            out.add(directory / f"{stem}.{name}.png", lambda p, data=png: p.write_bytes(data))
        hook("pictures")
        simulation = None
        if outs.simulation is not None:
            simulation = stages.run("simulate", simulation_stage, composition, outs.simulation, progress)
            from .report.plots import png_bytes, simulation_figure
            from .simulation import write_simulation
            sim_name = f"{stem}.simulation.{outs.simulation.format}"
            out.add(directory / sim_name, lambda p: write_simulation(simulation, p, outs.simulation.format))
            pictures["simulation"] = png_bytes(simulation_figure(simulation, composition.assembly.name))
            out.add(directory / f"{stem}.simulation.png", lambda p: p.write_bytes(pictures["simulation"]))
            hook("simulate")
        if outs.report:
            scene = stages.run("scene", scene_stage, composition, simulation)
            glb = scene_glb(scene)
            out.add(directory / f"{stem}.scene.glb", lambda p: p.write_bytes(glb))
            files = [t.relative_to(directory).as_posix() for t in out.targets] + [f"{stem}.report.md"]
            html, md = stages.run("report", report_stage, composition, result, config, pictures, simulation,
                                  scene, files)
            out.add_text(directory / f"{stem}.report.html", html)
            out.add_text(directory / f"{stem}.report.md", md)
            hook("report")
        result.outputs = out.targets


@dataclass(frozen=True)
class BatchTask:
    """One input of a batch, as sent to an executor (``after_stage`` only runs inline)."""

    index: int
    input: Path
    config: PipelineConfig
    after_stage: Callable[[str], None] | None = None


def run_batch_input(task: BatchTask) -> RunResult:
    """Run one input of a batch; its error, if any, is recorded in the result.

    The result keeps the stage names and times, not their artefacts (models
    stay in the worker that built them).
    """
    path = task.input
    try:
        with input_limits.using(task.config.limits):  # limits do not cross process boundaries
            result = run_input(path, task.config, None, task.after_stage)
        result.stages = [StageRecord(s.name, s.seconds) for s in result.stages]
        return result
    except (InputError, ClosureError) as exc:
        log.error("%s", exc)
        return RunResult(input=path, error=f"error: {exc}")
    except Exception as exc:  # a batch reports every file, whatever failed
        log.exception("internal error on %s", path)
        return RunResult(input=path, error=f"internal error: {path}: {type(exc).__name__}: {exc}")


def run_pipeline(config: PipelineConfig, progress: Progress | None = None,
                 after_stage: Callable[[str], None] | None = None, executor=None) -> list[RunResult]:
    """Run the pipeline on every input.

    With one input, errors propagate (the CLI turns them into exit codes).  A
    batch runs one task per input on ``executor`` (None: the config's
    ``executor:``, local processes by default; always this process when
    ``after_stage`` is given); each input's error is recorded in its
    :class:`RunResult` and the others go on.  Results are in input order.
    """
    if len(config.inputs) == 1:
        return [run_input(config.inputs[0], config, progress, after_stage)]
    from .sweep.executors import InlineExecutor, make_executor

    if after_stage is not None:  # hooks are not sent to other processes
        executor = InlineExecutor()
    tasks = [BatchTask(i, path, config, after_stage) for i, path in enumerate(config.inputs)]
    results: list[RunResult | None] = [None] * len(tasks)
    with executor or make_executor(config.executor) as ex:
        for done, (task, result, exc) in enumerate(ex.map_unordered(run_batch_input, tasks), 1):
            if exc is not None:
                result = RunResult(input=task.input, error=f"internal error: {task.input}: "
                                                           f"{type(exc).__name__}: {exc}")
            results[task.index] = result
            if progress is not None:
                progress("inputs", done / len(tasks))
    return results
