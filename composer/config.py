"""Pipeline configuration: frozen, validated dataclasses loaded from YAML.

A pipeline file (see docs/pipeline-format.md) names the input, the options of
each stage and the outputs.  Validation errors carry the config file, the line
and the key path, like every other input error.

Example::

    input: seeker.yaml                 # or  inputs: [a.yaml, b.urdf]
    options:
      lumping: true
      composite_names: {BODY_1: camera_assembly}
      redundant_joints: remove         # remove | keep
      loops: embed                     # embed | lagrange | error
      base: fixed                      # fixed | floating (URDF/MJCF roots)
      tolerances: {rank: 1.0e-6, closure: 1.0e-12}
      mating: {contact_tol: 0.01, angle_tol: 0.001, max_clearance: 0.5}   # STEP inputs (file's unit)
      sdf: {model: robot, model_path: [models]}   # SDFormat inputs: a world's model, include folders
      packages: {my_robot_description: ../my_robot_description}   # URDF/xacro/SDF package:// folders
      package_dirs: [../ros_ws/src]    # folders holding packages (Pinocchio's package_dirs)
      xacro_args: {arm_length: 0.4}    # a .xacro input's $(arg NAME) values
    outputs:
      directory: out/seeker            # relative to this file
      model: true                      # native model file (YAML assembly, lumped)
      exports: [urdf, mjcf, sdf]
      collision: mesh                  # the exports' collision shapes: mesh (as read) | hull | none
      report: true                     # HTML + Markdown
      graphs: [extended, reduced, sko, sparsity]
      simulation:
        duration: 1.0
        samples: 201
        integrator: adaptive           # adaptive | rk4 | euler | a scipy.integrate.solve_ivp method
        dt: 1.0e-3                     # step of rk4 / euler, s
        rtol: 1.0e-10
        atol: 1.0e-10
        initial: {q: {pitch_a: 0.1}, v: {}}   # rad, m (SI) or with a unit: {pitch_a: 6deg}
        torques: zero                  # zero | {joint: value}
        controls: {}                   # {actuator: value}: constant controls (model.actuator_names; default 0)
        voltages: {}                   # {dc_motor: volts}: constant DC motor voltages (default 0)
        format: csv                    # csv | npz
    sweep: {...}                       # variants of the input: see composer.sweep.config
    executor: {kind: local}            # local | dask | inline, for sweeps and batches
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from mbcompose.dynamics.tolerances import ADAPTIVE_ATOL, ADAPTIVE_RTOL, GRAPH_RANK_RTOL, SIMULATION_CLOSURE_TOL
from mbcompose.graph.model import LOOP_POLICIES, REDUNDANT_POLICIES
from mbcompose.parsers import limits as input_limits
from mbcompose.parsers.errors import InputError, did_you_mean
from mbcompose.parsers.exporters.collision import COLLISION_MODES, DEFAULT_COLLISION
from mbcompose.dynamics.records import record
from mbcompose.parsers.limits import InputLimits
from mbcompose.parsers.step.mating import PLANAR_CONTACT_POLICIES
from mbcompose.parsers.yaml.document import Node, load_yaml

from .sweep.config import ExecutorConfig, SweepConfig, parse_executor, parse_sweep

EXPORT_FORMATS = ("urdf", "mjcf", "sdf")
GRAPH_STAGES = ("extended", "reduced", "sko", "sparsity")
#: adaptive (DOP853) or a named scipy solve_ivp method; rk4 / euler: fixed step (dynamics.simulation.fixed_step)
INTEGRATORS = ("adaptive", "rk4", "euler", "RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


@record(eq=True)
class Tolerances:
    """rank: relative tolerance of the graph stage's rank decisions;
    closure: loop-closure error accepted by Newton's method in simulations (m, rad).
    Defaults and meaning: :mod:`dynamics.tolerances`."""

    rank: float = GRAPH_RANK_RTOL
    closure: float = SIMULATION_CLOSURE_TOL


@record(eq=True)
class StageOptions:
    """The options of :func:`composer.compose.compose`'s stages (see the module docstring).  A frozen
    dataclass built as :func:`dynamics.records.record` builds (one per ``compose`` call)."""

    lumping: bool = True
    composite_names: Mapping[str, str] = field(default_factory=dict)
    redundant_joints: str = "remove"
    loops: str = "embed"
    base: str = "fixed"
    tolerances: Tolerances = field(default_factory=Tolerances)
    #: CAD (STEP) inputs: the mating rules' tolerances (contact_tol, angle_tol, max_clearance,
    #: planar_contacts), handed to the STEP reader
    mating: Mapping[str, object] = field(default_factory=dict)
    #: SDFormat inputs: ``model`` (the model of a world to read) and ``model_paths`` (absolute folders
    #: searched first for ``<include>`` ``model://NAME``), handed to the SDFormat reader
    sdf: Mapping[str, object] = field(default_factory=dict)
    #: URDF, xacro and SDFormat inputs: ``package_dirs`` (folders holding packages and (NAME, FOLDER)
    #: pairs, see parsers.urdf.geometry.split_package_dirs) and ``xacro_args`` ((NAME, VALUE) pairs)
    packages: Mapping[str, object] = field(default_factory=dict)


MATING_OPTIONS = ("contact_tol", "angle_tol", "max_clearance", "planar_contacts")


@dataclass(frozen=True)
class SimulationConfig:
    duration: float = 1.0
    samples: int = 201
    integrator: str = "adaptive"
    #: step of the fixed-step integrators, s (None: dynamics.simulation.DEFAULT_DT)
    dt: float | None = None
    rtol: float = ADAPTIVE_RTOL
    atol: float = ADAPTIVE_ATOL
    initial_q: Mapping[str, object] = field(default_factory=dict)
    initial_v: Mapping[str, object] = field(default_factory=dict)
    torques: Mapping[str, object] = field(default_factory=dict)
    format: str = "csv"
    #: constant controls by actuator name (``model.actuator_names``; the others 0)
    controls: Mapping[str, object] = field(default_factory=dict)
    #: constant voltages of the DC motors by name (V; the others 0)
    voltages: Mapping[str, object] = field(default_factory=dict)
    #: "initial.q.JOINT" (or initial.v, torques, controls) -> (file, line) where the config gave it
    locations: Mapping[str, tuple[str, int]] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class OutputConfig:
    directory: Path
    model: bool = True
    exports: tuple[str, ...] = ()
    #: the exports' collision geometry: "mesh" (as read), "hull" (one convex hull per part) or "none"
    collision: str = DEFAULT_COLLISION
    report: bool = True
    graphs: tuple[str, ...] = ("extended", "reduced", "sparsity")
    simulation: SimulationConfig | None = None


@dataclass(frozen=True)
class PipelineConfig:
    source: Path
    inputs: tuple[Path, ...]
    options: StageOptions
    outputs: OutputConfig
    limits: InputLimits = field(default_factory=InputLimits)
    sweep: "SweepConfig | None" = None
    executor: ExecutorConfig = field(default_factory=ExecutorConfig)


def _choice(node: Node, choices) -> str:
    value = node.string()
    if value not in choices:
        raise node.error(f"expected one of: {', '.join(choices)}; got '{value}'{did_you_mean(value, choices)}")
    return value


def _choices(node: Node, choices) -> tuple[str, ...]:
    return tuple(_choice(item, choices) for item in node.sequence(f"a list of: {', '.join(choices)}"))


def _joint_values(node: Node | None, key: str, locations: dict, units: bool = False) -> dict[str, object]:
    """{joint: number or list} of a config entry; with ``units`` (positions, velocities) a number may carry
    a unit, ``20deg`` (:data:`composer.simulation.VALUE_UNITS`): checked here, kept as written (the
    simulation converts it exactly, and plain numbers from the input file's units)."""
    if node is None:
        return {}
    out = {}
    for name, value in node.mapping("a mapping joint name -> value").items():
        if units and isinstance(value.value, str):
            _with_unit(name, value)
            out[name] = value.value
        else:
            out[name] = value.number() if not isinstance(value.value, list) else [v.number() for v in value]
        locations[f"{key}.{name}"] = (value.file, value.line)
    return out


def _with_unit(name: str, node: Node) -> float:
    from .simulation import JointValueError, value_with_unit

    try:
        return value_with_unit(name, node.value)
    except JointValueError as exc:
        raise node.error(str(exc)) from None


def _simulation(node: Node) -> SimulationConfig:
    node.check_keys(("duration", "samples", "integrator", "dt", "rtol", "atol", "initial", "torques", "format",
                     "controls", "voltages"))
    get = node.get
    initial = get("initial")
    q0, v0, locations = {}, {}, {}
    if initial is not None:
        initial.check_keys(("q", "v"))
        q0 = _joint_values(initial.get("q"), "initial.q", locations, units=True)
        v0 = _joint_values(initial.get("v"), "initial.v", locations, units=True)
    torques: dict[str, object] = {}
    if get("torques") is not None and get("torques").value != "zero":
        torques = _joint_values(get("torques"), "torques", locations)
    controls = _joint_values(get("controls"), "controls", locations)
    voltages = _joint_values(get("voltages"), "voltages", locations)
    samples = get("samples").number(positive=True) if get("samples") is not None else 201
    if samples != int(samples) or samples < 2:
        raise get("samples").error("samples must be an integer >= 2")
    duration = get("duration").number(positive=True) if get("duration") is not None else 1.0
    _check_size(node, duration, int(samples))
    dt = get("dt").number(positive=True) if get("dt") is not None else None
    if dt is not None:
        _check_steps(get("dt"), duration, int(samples), dt)
    return SimulationConfig(
        duration=duration,
        samples=int(samples),
        integrator=_choice(get("integrator"), INTEGRATORS) if get("integrator") is not None else "adaptive",
        dt=dt,
        rtol=get("rtol").number(positive=True) if get("rtol") is not None else ADAPTIVE_RTOL,
        atol=get("atol").number(positive=True) if get("atol") is not None else ADAPTIVE_ATOL,
        initial_q=q0, initial_v=v0, torques=torques, controls=controls, voltages=voltages,
        format=_choice(get("format"), ("csv", "npz")) if get("format") is not None else "csv",
        locations=locations,
    )


def _check_size(node: Node, duration: float, samples: int) -> None:
    """duration and samples within the limits (errors at their lines)."""
    from .simulation import check_simulation_size

    for key, args in (("duration", (duration, 2)), ("samples", (1.0, samples))):
        try:
            check_simulation_size(*args)
        except InputError as exc:
            raise (node.get(key) or node).error(exc.message) from None


def _check_steps(node: Node, duration: float, samples: int, dt: float) -> None:
    """The number of fixed steps within the limit (error at the ``dt`` line)."""
    from .simulation import check_steps

    try:
        check_steps(duration, samples, dt)
    except InputError as exc:
        raise node.error(exc.message) from None


def _limits(node: Node | None) -> InputLimits:
    """The ``limits:`` section: overrides of :class:`parsers.limits.InputLimits`."""
    if node is None:
        return input_limits.active()
    node.check_keys(input_limits.LIMIT_NAMES)
    values = {key: value.number(positive=True) for key, value in node.mapping().items()}
    try:
        return input_limits.checked_limits(values)
    except ValueError as exc:
        raise node.error(str(exc)) from None


def _options(node: Node | None, base_dir: Path) -> StageOptions:
    if node is None:
        return StageOptions()
    node.check_keys(("lumping", "composite_names", "redundant_joints", "loops", "base", "tolerances", "mating",
                     "sdf", "packages", "package_dirs", "xacro_args"))
    get = node.get
    tol = Tolerances()
    if get("tolerances") is not None:
        t = get("tolerances")
        t.check_keys(("rank", "closure"))
        tol = Tolerances(rank=t.get("rank").number(positive=True) if t.get("rank") is not None else tol.rank,
                         closure=t.get("closure").number(positive=True) if t.get("closure") is not None
                         else tol.closure)
    names = {}
    if get("composite_names") is not None:
        names = {k: v.string() for k, v in get("composite_names").mapping().items()}
    return StageOptions(
        lumping=get("lumping").boolean() if get("lumping") is not None else True,
        composite_names=names,
        redundant_joints=_choice(get("redundant_joints"), REDUNDANT_POLICIES) if get("redundant_joints") is not None
        else "remove",
        loops=_choice(get("loops"), LOOP_POLICIES) if get("loops") is not None else "embed",
        base=_choice(get("base"), ("fixed", "floating")) if get("base") is not None else "fixed",
        tolerances=tol,
        mating=_mating(get("mating")),
        sdf=_sdf(get("sdf"), base_dir),
        packages=_packages(node, base_dir),
    )


def _packages(node: Node, base_dir: Path) -> dict[str, object]:
    """``packages`` (NAME: folder), ``package_dirs`` (folders) and ``xacro_args`` (NAME: value) as the
    URDF/xacro/SDFormat readers' ``package_dirs`` and ``xacro_args``; folders relative to the config file."""
    out: dict[str, object] = {}
    dirs: list = []
    if node.get("packages") is not None:
        dirs += [(name, _folder(value, base_dir)) for name, value in node.get("packages").mapping().items()]
    if node.get("package_dirs") is not None:
        dirs += [_folder(item, base_dir) for item in node.get("package_dirs").sequence("a list of folders")]
    if dirs:
        out["package_dirs"] = tuple(dirs)
    if node.get("xacro_args") is not None:
        out["xacro_args"] = tuple((name, _scalar_text(value)) for name, value in node.get("xacro_args").mapping().items())
    return out


def _scalar_text(node: Node) -> str:
    """A YAML scalar as xacro reads its arguments: text (true/false for booleans)."""
    value = node.value
    if isinstance(value, (dict, list)) or value is None:
        raise node.error("expected a value (text or a number)")
    return str(value).lower() if isinstance(value, bool) else str(value)


def _folder(node: Node, base_dir: Path) -> str:
    folder = base_dir / node.string()
    if not folder.is_dir():
        raise node.error(f"{node.string()!r} is not a folder (relative to the pipeline file: {folder})")
    return str(folder)


def _sdf(node: Node | None, base_dir: Path) -> dict[str, object]:
    """The SDFormat reader's ``model`` and ``model_paths`` (folders relative to the config file)."""
    if node is None:
        return {}
    node.check_keys(("model", "model_path"))
    out: dict[str, object] = {}
    if node.get("model") is not None:
        out["model"] = node.get("model").string()
    if node.get("model_path") is not None:
        out["model_paths"] = tuple(str(base_dir / item.string())
                                   for item in node.get("model_path").sequence("a list of folders"))
    return out


def _mating(node: Node | None) -> dict[str, object]:
    """The STEP reader's mating tolerances (lengths in the STEP file's unit)."""
    if node is None:
        return {}
    node.check_keys(MATING_OPTIONS)
    out: dict[str, object] = {}
    for key, value in node.mapping().items():
        out[key] = (_choice(value, PLANAR_CONTACT_POLICIES) if key == "planar_contacts"
                    else value.number(positive=True))
    return out


def _outputs(node: Node | None, base_dir: Path, stem: str) -> OutputConfig:
    if node is None:
        return OutputConfig(directory=base_dir / "out" / stem)
    node.check_keys(("directory", "model", "exports", "collision", "report", "graphs", "simulation"))
    get = node.get
    directory = (base_dir / (get("directory").string() if get("directory") is not None else f"out/{stem}")).resolve()
    return OutputConfig(
        directory=directory,
        model=get("model").boolean() if get("model") is not None else True,
        exports=_choices(get("exports"), EXPORT_FORMATS) if get("exports") is not None else (),
        collision=_choice(get("collision"), COLLISION_MODES) if get("collision") is not None
        else DEFAULT_COLLISION,
        report=get("report").boolean() if get("report") is not None else True,
        graphs=_choices(get("graphs"), GRAPH_STAGES) if get("graphs") is not None
        else ("extended", "reduced", "sparsity"),
        simulation=_simulation(get("simulation")) if get("simulation") is not None else None,
    )


def load_pipeline(path) -> PipelineConfig:
    """Read and validate a pipeline YAML file; InputError with file, line and key on any problem."""
    path = Path(path)
    root = load_yaml(path)
    root.mapping("a mapping with 'input' (or 'inputs'), 'options' and 'outputs'")
    root.check_keys(("input", "inputs", "options", "outputs", "limits", "sweep", "executor"))
    with input_limits.using(_limits(root.get("limits"))) as active:
        return _pipeline(path, root, active)


def _pipeline(path: Path, root: Node, active: InputLimits) -> PipelineConfig:
    if (root.get("input") is None) == (root.get("inputs") is None):
        raise root.error("give exactly one of 'input' (a file) or 'inputs' (a list of files)")
    nodes = [root.get("input")] if root.get("input") is not None else root.get("inputs").sequence("a list of files")
    if not nodes:
        raise root.get("inputs").error("the list of inputs is empty")
    inputs = []
    for n in nodes:
        p = Path(os.path.abspath(path.parent / n.string()))  # a link keeps its own name
        if not p.exists():
            raise n.error(f"input file not found: {n.string()}")
        inputs.append(p)
    outputs = _outputs(root.get("outputs"), path.parent.resolve(), path.stem)
    sweep = None
    if root.get("sweep") is not None:
        sweep = parse_sweep(root.get("sweep"), inputs, outputs.simulation is not None)
    return PipelineConfig(source=path, inputs=tuple(inputs),
                          options=_options(root.get("options"), path.parent.resolve()),
                          outputs=outputs, limits=active, sweep=sweep,
                          executor=parse_executor(root.get("executor")))
