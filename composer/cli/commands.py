"""The ``mbcompose`` command line: thin click commands that wire the stages.

Exit codes: 0 success, 2 bad input (one line ``error: FILE:LINE: message``),
1 internal error (one line with a hint; ``--verbose`` shows the traceback).

One click command per verb, each a few lines of option declarations next to the function
they feed; values are checked in :mod:`.values`, the work is done by the stages.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
from pathlib import Path

import click

from mbcompose.dynamics.closed.closure import ClosureError
from mbcompose.dynamics import dispatch
from mbcompose.dynamics.dispatch import BACKEND_ENV, BACKENDS
from mbcompose.dynamics.singular import SingularMassMatrix
from mbcompose.dynamics.tolerances import ADAPTIVE_ATOL, ADAPTIVE_RTOL
from mbcompose.parsers import limits as input_limits
from mbcompose.parsers.errors import InputError, did_you_mean

from ..config import INTEGRATORS as SIMULATION_INTEGRATORS
from ..formatting import plural
from .values import (FiniteFloat, SuggestingChoice, check_output_folder, check_simulation_options, checked_values,
                     limit_overrides, suggest_choices, terminate_cleanly_on_sigterm)

log = logging.getLogger("mbcompose")



class _Group(click.Group):
    """A click group that turns exceptions into one-line errors and exit codes."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """The command, under the process backend ``auto`` unless :data:`BACKEND_ENV` or ``--backend``
        says otherwise (the setting restored afterwards, for a caller in the same process)."""
        saved = os.environ.get(BACKEND_ENV)
        os.environ.setdefault(BACKEND_ENV, "auto")
        try:
            return self._main(args, prog_name, complete_var, standalone_mode, **extra)
        finally:
            if os.environ.get(BACKEND_ENV) != saved:
                if saved is None:
                    os.environ.pop(BACKEND_ENV)
                else:
                    os.environ[BACKEND_ENV] = saved
                dispatch.forget_process_backend()

    def _main(self, args, prog_name, complete_var, standalone_mode, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(0)
        except click.UsageError as exc:
            hint = f" (see 'mbcompose {exc.ctx.command_path.split(' ', 1)[1]} --help')" \
                if exc.ctx and " " in exc.ctx.command_path else " (see 'mbcompose --help')"
            click.echo(f"error: {exc.format_message()}{hint}", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            click.echo(f"error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(1)
        sys.exit(0)

    def resolve_command(self, ctx, args):
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            if args and args[0] not in self.commands and not args[0].startswith("-"):
                message = exc.format_message().split(" Did you mean")[0]   # click >= 8.2 suggests by itself
                raise click.UsageError(f"{message}{did_you_mean(args[0], self.commands)}", ctx) from None
            raise

    def invoke(self, ctx):
        terminate_cleanly_on_sigterm()
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except (ClosureError, SingularMassMatrix) as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:  # the one place where anything unexpected is caught
            if log.isEnabledFor(logging.DEBUG):
                traceback.print_exc()
            click.echo(f"internal error: {type(exc).__name__}: {exc} "
                       "(hint: rerun with --verbose for the traceback and report it)", err=True)
            sys.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mbcompose")
@click.option("-v", "--verbose", count=True,
              help="Log progress, stage timings and debugging details (-vv: other libraries' too).")
@click.option("-q", "--quiet", is_flag=True, help="Log errors only.")
@click.option("--backend", type=click.Choice(BACKENDS), default=None, expose_value=False,
              callback=lambda ctx, param, value: _set_backend(value), help="See 'mbcompose simulate --help'.")
@click.option("--limit", "limit_specs", multiple=True, metavar="NAME=VALUE",
              help=f"Raise or lower a resource limit ({', '.join(input_limits.LIMIT_NAMES)}; see "
                   "'mbcompose docs limits'). Repeatable.")
def main(verbose: int, quiet: bool, limit_specs):
    """mbcompose: mechanical assemblies to multibody dynamics models.

    Reads an assembly (a STEP CAD assembly, native YAML, URDF, SDFormat,
    MJCF), builds its system graph, lumps rigid parts into composite bodies,
    finds loops, and evaluates the dynamics on the resulting tree.
    """
    limit_overrides(limit_specs)
    _set_level(verbose, quiet)


def _set_backend(value: str | None) -> None:
    """``--backend``: the process's dynamics backend, through :data:`dispatch.BACKEND_ENV` (read at the
    first dynamics call; Dask worker processes inherit it)."""
    if value is not None:
        os.environ[BACKEND_ENV] = value
        dispatch.forget_process_backend()


#: help of ``--backend`` (run, simulate, eval)
BACKEND_HELP = ("Dynamics kernels. auto: compiled kernels once numba's cache holds them; on first use "
                "(after an install or an upgrade) this run takes the numpy path while one background process "
                "compiles them (about 90 s of CPU), and says so. compiled: compile here and wait (worth it for "
                "a long simulation or a big sweep on first use). numpy: the numpy reference throughout. "
                "codegen: C generated for the model and compiled with the system C compiler (about a second "
                "for a small robot; 'mbcompose docs codegen'). "
                f"Default: auto, or ${BACKEND_ENV}.")


def _backend_option(command):
    return click.option("--backend", type=click.Choice(BACKENDS), default=None, expose_value=False,
                        callback=lambda ctx, param, value: _set_backend(value), help=BACKEND_HELP)(command)


def _set_level(verbose: int, quiet: bool) -> None:
    """Warnings by default; ``-q`` errors only; ``-v`` our debugging lines (other libraries stay at
    warnings: matplotlib's font search, trimesh's details); ``-vv`` everyone's."""
    root, ours = logging.getLogger(), logging.getLogger("mbcompose")
    if not root.handlers:
        from ..logs import GroupingHandler

        root.addHandler(GroupingHandler(sys.stderr))
    root.setLevel(logging.DEBUG if verbose >= 2 else logging.ERROR if quiet else logging.WARNING)
    ours.setLevel(logging.DEBUG if verbose else logging.NOTSET)


def _verbosity_options(command):
    """``--verbose`` / ``--quiet`` accepted after the subcommand as well as before it."""
    def flag(name):
        def set_flag(ctx, param, value):
            if value:
                _set_level(value if name == "verbose" else 0, name == "quiet")
            return value
        return set_flag

    command = click.option("-q", "--quiet", is_flag=True, expose_value=False, callback=flag("quiet"),
                           help="Log errors only.")(command)
    return click.option("-v", "--verbose", count=True, expose_value=False, callback=flag("verbose"),
                        help="Log progress, stage timings and debugging details (tracebacks of internal "
                             "errors); -vv: other libraries' too.")(command)


def _base_option(command):
    command = _reader_option_group(command)
    return click.option("--base", type=click.Choice(["fixed", "floating"]), default="fixed", show_default=True,
                        help="URDF/MJCF root body: welded to ground (fixed) or free to move in space "
                             "(floating, a 6-dof free joint).")(command)


_READER_META = "mbcompose.reader_options"
#: reader option -> (the formats that take it, the option's name in messages)
_READER_OPTION_FORMATS = {
    "model": ((".sdf", ".world"), "--model"),
    "model_paths": ((".sdf", ".world"), "--model-path"),
    "package_dirs": ((".urdf", ".xacro", ".sdf", ".world"), "--package-dir"),
    "xacro_args": ((".xacro",), "--xacro-arg"),
}


def _reader_option_group(command):
    """The readers' options (``--model``, ``--model-path``, ``--package-dir``, ``--xacro-arg``), kept
    for :func:`_reader_options`."""
    def keep(key, convert=lambda values: values):
        def store(ctx, param, value):
            if value:
                ctx.meta.setdefault(_READER_META, {})[key] = convert(value)
        return store

    command = click.option("--xacro-arg", "xacro_args", multiple=True, expose_value=False, metavar="NAME=VALUE",
                           callback=keep("xacro_args", lambda v: tuple(_name_value(x, "--xacro-arg") for x in v)),
                           help="A .xacro file's argument ($(arg NAME), xacro's NAME:=VALUE; repeatable).")(command)
    command = click.option("--package-dir", "package_dirs", multiple=True, expose_value=False,
                           metavar="NAME=DIR|DIR", callback=keep("package_dirs", _package_dirs),
                           help="URDF/xacro/SDFormat package:// and $(find NAME) look-ups: NAME=DIR is package "
                                "NAME's folder, a plain DIR a folder holding packages (Pinocchio's "
                                "package_dirs); repeatable; then $ROS_PACKAGE_PATH and the folders above the "
                                "file.")(command)
    command = click.option("--model-path", multiple=True, type=click.Path(file_okay=False), expose_value=False,
                           callback=keep("model_paths"), metavar="DIR",
                           help="SDFormat: a folder searched first for <include> model://NAME (repeatable; "
                                "then $GZ_SIM_RESOURCE_PATH, $IGN_GAZEBO_RESOURCE_PATH, $SDF_PATH).")(command)
    return click.option("--model", expose_value=False, callback=keep("model"), metavar="NAME",
                        help="SDFormat: the model of a world to read.")(command)


def _name_value(text: str, option: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise click.BadParameter(f"expected NAME=VALUE, got {text!r}", param_hint=option)
    return name.strip(), value


def _package_dirs(values) -> tuple:
    """``--package-dir`` values: ``(NAME, DIR)`` pairs and plain folders, each an existing folder."""
    out = []
    for text in values:
        name, sep, folder = text.partition("=")
        entry = (name.strip(), folder) if sep and name.strip() and "/" not in name else text
        folder = entry[1] if isinstance(entry, tuple) else entry
        if not Path(folder).is_dir():
            raise click.BadParameter(f"{folder!r} is not a folder", param_hint="--package-dir")
        out.append(entry)
    return tuple(out)


def _reader_options(file: str) -> dict:
    """The reader options given on the command line; a usage error for a format that does not take one."""
    options = dict(click.get_current_context().meta.get(_READER_META, {}))
    for key in options:
        suffixes, option = _READER_OPTION_FORMATS[key]
        if not _has_suffix(file, suffixes):
            raise click.BadParameter(f"applies to {', '.join(suffixes)} files only", param_hint=option)
    return options


def _has_suffix(file: str, suffixes) -> bool:
    """``file`` has one of ``suffixes``; an SDFormat document also under ``.xml`` (sniffed)."""
    suffix = Path(file).suffix.lower()
    if suffix in suffixes:
        return True
    if suffix == ".xml" and ".sdf" in suffixes:
        from mbcompose.parsers.sdf.reader import is_sdformat

        return is_sdformat(file)
    return False


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="Output format.")
@click.option("--matrices", is_flag=True, help="Also print the incidence, cut-set and circuit matrices.")
@click.option("--write-joints", "write_joints", type=click.Path(dir_okay=False), default=None, metavar="YAML",
              help="STEP assemblies: write the rigid groups and joints found, one line each with its evidence, "
                   "as a wrapper YAML to edit and read back (docs/assembly-format.md).")
@_base_option
@_verbosity_options
def inspect(file: str, fmt: str, matrices: bool, base: str, write_joints: str | None = None):
    """Print the bodies, joints, composites, loops and degrees of freedom of FILE.

    The tables follow seed 004 (Diaz-Calderon et al.): Table 1 (kinematic
    description, actuated joints marked *), Table 2 (composite bodies) and
    Table 3 (reduced kinematic description).  A composite body is a group of
    parts joined by fixed joints, which move as one rigid body.
    """
    from mbcompose.parsers import read_assembly

    with _mesh_bars():
        assembly = read_assembly(file, **({"base": base} if base != "fixed" else {}), **_reader_options(file))
    if write_joints is not None:
        _write_joints(assembly, write_joints)
    from mbcompose.composer import inspect as render
    from mbcompose.graph import analyse

    analysis = analyse(assembly)
    if fmt == "json":
        click.echo(json.dumps(render.render_json(analysis, matrices=matrices), indent=2))
    elif fmt == "markdown":
        click.echo(render.render_markdown(analysis, matrices=matrices), nl=False)
    else:
        click.echo(render.render_text(analysis, matrices=matrices), nl=False)
    from mbcompose.composer.compose import subject_location

    for issue in analysis.errors:
        where, line = subject_location(issue.subjects, assembly)
        click.echo(f"error: {InputError(issue.message, file=where or file, line=line)}", err=True)
    if analysis.errors:
        sys.exit(2)


def _write_joints(assembly, out: str) -> None:
    """``inspect --write-joints``: the STEP assembly's joints as a wrapper YAML (a usage error for other inputs)."""
    from pathlib import Path

    if not str(assembly.source_file).lower().endswith((".step", ".stp")):
        raise click.BadParameter("applies to STEP assemblies (a .step/.stp file or its wrapper YAML)",
                                 param_hint="--write-joints")
    check_output_folder(Path(out))
    from mbcompose.parsers.step.joints_file import write_joints

    click.echo(f"wrote {write_joints(assembly, out)}", err=True)


@main.command("graph")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), required=True,
              help="Picture to write (.svg, .png or .pdf); with --stage both, '_extended'/'_reduced' "
                   "is added before the suffix (the names written are printed).")
@click.option("--stage", type=click.Choice(["extended", "reduced", "both", "sko", "sparsity"]), default="extended",
              show_default=True,
              help="extended system graph (every part, joint and force; seed 004 Fig. 3), reduced graph "
                   "(one node per composite body; Fig. 4), both, the SKO tree the dynamics runs on, or "
                   "the block sparsity of E_A, A and M (seed 000 Figs. 6-7).")
@_base_option
@_verbosity_options
def graph_cmd(file: str, output: str, stage: str, base: str):
    """Draw a picture of FILE's mechanism: system graphs, SKO tree or block sparsity.

    The SKO (spatial operator) tree is the tree of bodies the dynamics
    recursions run on: closed loops are merged into compound nodes.
    """
    from pathlib import Path

    from mbcompose.composer.report.pictures import save_picture

    out = Path(output)
    if out.suffix.lower() not in (".svg", ".png", ".pdf"):
        raise click.BadParameter(f"unsupported picture format {out.suffix!r} (use .svg, .png or .pdf)",
                                 param_hint="--output")
    check_output_folder(out)
    composition, read = _compose_with_inputs(file, base=base)
    stages = ("extended", "reduced") if stage == "both" else (stage,)
    written = []
    for st in stages:
        path = out.with_name(f"{out.stem}_{st}{out.suffix}") if stage == "both" else out
        save_picture(composition, st, path, inputs=read)
        written.append(str(path))
    click.echo(f"wrote {', '.join(written)}")


def _progress_bars(enabled: bool):
    """tqdm bars on stderr (drawn only on a terminal; see :mod:`composer.progress`)."""
    from mbcompose.composer.progress import ProgressBars

    return ProgressBars(enabled=enabled)


def _mesh_bars():
    from mbcompose.composer.progress import mesh_bars

    return mesh_bars(enabled=logging.getLogger().getEffectiveLevel() < logging.ERROR)


@main.command()
@click.argument("pipeline", type=click.Path(dir_okay=False))
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run sweep variants and batch inputs on this Dask scheduler (tcp://HOST:8786).")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes for the local executor or a Dask LocalCluster (default: one per core).")
@_verbosity_options
@_backend_option
@click.pass_context
def run(ctx, pipeline: str, scheduler: str | None, workers: int | None):
    """Run the pipeline described by PIPELINE (a YAML file; 'mbcompose docs pipeline' prints its format).

    Reads the input(s), analyses them, builds the dynamics model, and writes the
    model file, exports, pictures, simulation and report into the configured
    folder. Files appear only when an input's run succeeds. With a 'sweep:'
    section, composes every variant and writes one table row per variant.
    """
    from mbcompose.composer.config import load_pipeline
    from mbcompose.composer.sweep.executors import make_executor
    from mbcompose.composer.pipeline import run_pipeline

    config = load_pipeline(pipeline)
    executor = make_executor(config.executor, scheduler, workers)
    if config.sweep is not None:
        return _run_sweep(config, executor)
    quiet = logging.getLogger().getEffectiveLevel() >= logging.ERROR
    with _progress_bars(not quiet) as bars:
        results = run_pipeline(config, progress=bars, executor=executor)
    failed = 0
    if len(results) == 1 and results[0].ok and not quiet:
        from mbcompose.composer.inspect import render_text

        click.echo(render_text(results[0].artefact("analyse")))
    for r in results:
        if r.ok:
            click.echo(f"ok: {r.input} -> {plural(len(r.outputs), 'file')} in "
                       f"{r.outputs[0].parent if r.outputs else config.outputs.directory}")
            for p in r.outputs:
                click.echo(f"  {p}")
        else:
            failed += 1
            click.echo(r.error if r.error.startswith(("error:", "internal error:")) else f"error: {r.error}",
                       err=True)
    if failed:
        internal = any(r.error and r.error.startswith("internal error:") for r in results)
        sys.exit(1 if internal else 2)


#: exit code of a sweep that ran to its end with failed variants (0: none failed; 1 and 2 as elsewhere)
SWEEP_FAILED_EXIT = 3


def _run_sweep(config, executor) -> None:
    from mbcompose.composer.sweep.run import run_sweep

    result = run_sweep(config, executor)
    click.echo(f"ok: {len(result.keys)} variants ({len(result.computed)} computed, {len(result.skipped)} "
               f"already done, {len(result.failed)} failed) -> {result.table}")
    for p in result.outputs:
        click.echo(f"  {p}")
    if result.failed:
        click.echo(f"warning: {plural(len(result.failed), 'variant')} failed; their errors are in {result.table}",
                   err=True)
        sys.exit(SWEEP_FAILED_EXIT)


def _compose(file: str, **options):
    return _compose_with_inputs(file, **options)[0]


def _compose_with_inputs(file: str, **options):
    """compose(file) and the resolved paths of every file it read (model, includes, meshes)."""
    from mbcompose.composer import compose

    with input_limits.recording_inputs() as read, _mesh_bars():
        read.add(Path(file).resolve())
        composition = compose(file, **options, **_reader_options(file))
    return composition, read


def _parse_values(spec: str | None, what: str) -> dict[str, object]:
    """``"a=0.1,b=0.2,c=[1,0,0,0]"`` -> {a: 0.1, ...}; JSON values allowed."""
    if not spec:
        return {}
    out = {}
    try:
        parsed = json.loads(spec) if spec.strip().startswith("{") else None
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"invalid JSON: {exc}", param_hint=what) from None
    if parsed is not None:
        if not isinstance(parsed, dict):
            raise click.BadParameter("expected a JSON object {name: value}", param_hint=what)
        return checked_values(parsed, what)
    for item in _split_top(spec):
        if "=" not in item:
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint=what)
        name, value = item.split("=", 1)
        try:
            out[name.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[name.strip()] = value      # a number with a unit ("20deg"): checked below
    return checked_values(out, what)


def _split_top(spec: str) -> list[str]:
    items, depth, cur = [], 0, ""
    for ch in spec:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        items.append(cur)
    return items


def _vector(model, values, rate: bool, what: str, removed=(), units=None):
    """joint_vector of one option's values (plain numbers in ``units``, the file's; None: SI)."""
    from mbcompose.composer.simulation import joint_vector

    try:
        return joint_vector(model, values, rate=rate, removed=removed, units=units)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=what) from None


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--duration", type=FiniteFloat(positive=True), default=1.0, show_default=True,
              help="Simulated time in seconds (at most the 'duration' limit).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="Trajectory file: .csv or .npz; a plot .png is written beside it.")
@click.option("--q0", help="Initial joint positions: plain numbers in the file's units (a YAML file's units:, "
                           "e.g. deg and mm; rad and m for URDF, SDFormat, MJCF, STEP) or with a unit (deg, rad, "
                           "mm, cm, m), e.g. 'pitch_a=0.1,yaw_a=-12deg' (default: reference; outside a joint's "
                           "limits: warned, started at the limit).")
@click.option("--v0", help="Initial joint velocities in the file's units per second, or with a unit (deg/s, "
                           "rad/s, mm/s, m/s) (default: at rest).")
@click.option("--torque", help="Constant joint forces in N m and N, e.g. 'pitch_a=0.01' (default: zero).")
@click.option("--ctrl", help="Constant actuator controls by actuator name, e.g. 'shoulder=0.5' (default: zero).")
@click.option("--voltage", help="Constant DC motor voltages in V by motor name (the forces: section's dc_motor "
                                "entries), e.g. 'motor_a=12' (default: zero); their currents are columns i:MOTOR.")
@click.option("--samples", type=click.IntRange(min=2), default=201, show_default=True)
@click.option("--integrator", type=SuggestingChoice(SIMULATION_INTEGRATORS), default="adaptive", show_default=True,
              help="adaptive: DOP853 to --rtol/--atol, the accurate one; rk4 or euler (semi-implicit): "
                   "fixed step --dt (trees with constant forces compiled end to end; springs, friction, servos, "
                   "activations and motor currents evaluated at every stage); or a scipy solve_ivp method.")
@click.option("--dt", type=FiniteFloat(positive=True), default=None,
              help="Step of rk4/euler in seconds, rounded down to divide the sample interval [default: 0.001].")
@click.option("--rtol", type=FiniteFloat(positive=True), default=ADAPTIVE_RTOL, show_default=True)
@click.option("--atol", type=FiniteFloat(positive=True), default=ADAPTIVE_ATOL, show_default=True)
@click.option("--no-plot", is_flag=True, help="Do not write the plot PNG.")
@_base_option
@_verbosity_options
@_backend_option
def simulate(file, duration, output, q0, v0, torque, ctrl, voltage, samples, integrator, dt, rtol, atol, no_plot,
             base):
    """Simulate FILE from an initial state and write the trajectory.

    Columns: ``time``, one per joint coordinate (``name`` or ``name[i]``), the
    velocities (``v:name``), the DC motors' currents (``i:name``, A) and the total energy.
    """
    from pathlib import Path

    from mbcompose.composer.config import SimulationConfig
    from mbcompose.composer.outputs import OutputSet
    from mbcompose.composer.report.plots import png_bytes, simulation_figure
    from mbcompose.composer.simulation import (control_vector, energy_summary, run_simulation, voltage_vector,
                                               write_simulation)

    out = Path(output)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("csv", "npz"):
        raise click.BadParameter(f"unsupported trajectory format {out.suffix!r} (use .csv or .npz)",
                                 param_hint="--output")
    check_simulation_options(duration, samples, dt)
    check_output_folder(out)
    composition, read = _compose_with_inputs(file, base=base)
    values = {hint: _parse_values(spec, hint) for hint, spec in (("--q0", q0), ("--v0", v0), ("--torque", torque))}
    units = composition.assembly.value_units
    for hint, rate, u in (("--q0", False, units), ("--v0", True, units), ("--torque", True, None)):
        _vector(composition.model, values[hint], rate, hint, composition.analysis.removed_joints, u)
    controls = _parse_values(ctrl, "--ctrl")
    try:
        control_vector(composition.model, controls)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--ctrl") from None
    voltages = _parse_values(voltage, "--voltage")
    try:
        voltage_vector(composition.model, voltages)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--voltage") from None
    cfg = SimulationConfig(duration=duration, samples=samples, integrator=integrator, dt=dt, rtol=rtol, atol=atol,
                           initial_q=values["--q0"], initial_v=values["--v0"], torques=values["--torque"],
                           controls=controls, voltages=voltages, format=fmt)
    quiet = logging.getLogger().getEffectiveLevel() >= logging.ERROR
    with _progress_bars(not quiet) as bars:
        result = run_simulation(composition, cfg, progress=lambda f: bars("simulate", f))
    with OutputSet(inputs=read) as staged:
        staged.add(out, lambda p: write_simulation(result, p, fmt))
        if not no_plot:
            png = png_bytes(simulation_figure(result, composition.assembly.name))
            staged.add(out.with_suffix(".png"), lambda p: p.write_bytes(png))
    click.echo(f"{output}: {plural(len(result.t), 'sample')}, {plural(len(result.columns), 'coordinate')}, "
               f"{energy_summary(result)}"
               + (f", {plural(result.limit_contacts, 'joint limit contact')}" if result.limit_contacts else ""))


@main.command("eval")
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("quantity", type=click.Choice(["mass-matrix", "inverse-dynamics", "forward-dynamics",
                                               "jacobian", "opspace-inertia", "bias"]))
@click.option("--q", "q_spec", help="Joint positions: plain numbers in the file's units (a YAML file's units:, "
                                    "e.g. deg and mm; rad and m for URDF, SDFormat, MJCF, STEP) or with a unit, "
                                    "e.g. 'pitch_a=0.1,yaw_a=-12deg' (default: reference). Results are SI.")
@click.option("--v", "v_spec", help="Joint velocities in the file's units per second, or with a unit (deg/s, "
                                    "mm/s) (default: zero).")
@click.option("--a", "a_spec", help="Joint accelerations for inverse dynamics, in the file's units per "
                                    "second squared (default: zero).")
@click.option("--tau", "tau_spec", help="Joint forces for forward dynamics, N m and N (default: zero).")
@click.option("--body", help="Body for jacobian / opspace-inertia: a composite body or one of its original "
                             "parts (default: the last body).")
@click.option("--point", help="Point on the body, body frame, 'x,y,z' in metres (default: body origin).")
@click.option("--frame", type=click.Choice(["local", "world"]), default="local", show_default=True,
              help="Axes of jacobian / opspace-inertia: the body's (local) or ground's (world).")
@click.option("--directions", default="all", show_default=True,
              help="opspace-inertia task directions: all, linear, angular, or a list of wx,wy,wz,x,y,z "
                   "(e.g. 'x,z' for a planar 2-dof mechanism).")
@click.option("--pinv", is_flag=True, help="opspace-inertia at a singular or rank-deficient task: give the "
                                           "pseudo-inverse instead of an error.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_base_option
@_verbosity_options
@_backend_option
def eval_cmd(file, quantity, q_spec, v_spec, a_spec, tau_spec, body, point, frame, directions, pinv, fmt, base):
    """Evaluate a dynamics quantity of FILE at one state.

    mass-matrix M(q); inverse-dynamics tau(q, v, a); forward-dynamics a(q, v, tau);
    bias forces C(q, v) + g(q) (inverse dynamics at zero acceleration); jacobian J
    (6 x nv, angular rows first) of a body point; opspace-inertia Lambda (the
    inertia felt at a body point, k x k for the k chosen --directions). Closed
    chains: the loops are closed first (the given independent coordinates kept,
    dependent ones solved by Newton's method from the given values); results are
    in the independent (minimal) coordinates (mass matrix, jacobian) or for all
    joints (dynamics, zero at the dependent joints for forces).
    """
    import numpy as np

    from mbcompose import dynamics

    from .evaluate import frame_options, opspace_inertia, print_value

    composition = _compose(file, base=base)
    model = composition.model
    removed, units = composition.analysis.removed_joints, composition.assembly.value_units
    q = _vector(model, _parse_values(q_spec, "--q"), False, "--q", removed, units)
    v = _vector(model, _parse_values(v_spec, "--v"), True, "--v", removed, units)
    q, v = dynamics.consistent_state(model, q, v)
    note = ""
    if quantity == "mass-matrix":
        value = dynamics.mass_matrix(model, q)
    elif quantity == "inverse-dynamics":
        value = dynamics.inverse_dynamics(model, q, v, _vector(model, _parse_values(a_spec, "--a"), True, "--a", (), units))
    elif quantity == "forward-dynamics":
        value = dynamics.forward_dynamics(model, q, v,
                                          _vector(model, _parse_values(tau_spec, "--tau"), True, "--tau"))
    elif quantity == "bias":
        value = dynamics.bias_forces(model, q, v)
    else:
        target, pt, note = frame_options(composition, body, point)
        if quantity == "jacobian":
            value = dynamics.jacobian(model, q, target, pt, frame)
        else:
            value = opspace_inertia(file, model, q, target, pt, frame, directions, pinv)
    value = np.asarray(value)
    if not np.all(np.isfinite(value)):
        raise InputError(f"{quantity} is not finite at this state (check the joint values' size)", file=file)
    print_value(composition, quantity, np.asarray(value), frame, fmt, note,
                 dynamics.task_rows(directions) if quantity == "opspace-inertia" else None)


@main.command("codegen")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Folder for PREFIX.c and PREFIX.h (created when missing).")
@click.option("--lang", type=click.Choice(["c"]), default="c", show_default=True, help="Language of the source.")
@click.option("--prefix", default=None, help="C identifier prefix of the functions (default: the file's name).")
@click.option("--symbolic", is_flag=True,
              help="Also write closed forms (sympy, common subexpressions eliminated) of M(q), the bias h(q, v) "
                   "and the forward dynamics as C (PREFIX_sym.c, PREFIX_sym.h) and LaTeX (PREFIX_sym.md); small "
                   "models only (at most 6 velocity coordinates and 12 bodies).")
@_base_option
@_verbosity_options
def codegen_cmd(file, out_dir, lang, prefix, symbolic, base):
    """Write C99 source of FILE's dynamics: ABA, RNEA, CRBA specialised to the model, the force
    elements, and for closed chains the forward dynamics in independent coordinates with the loop
    closure (PREFIX_start_state, PREFIX_derivatives, PREFIX_outputs; see 'mbcompose docs codegen');
    with --symbolic, closed forms beside it."""
    from mbcompose.composer.outputs import OutputSet
    from mbcompose.dynamics.codegen import CodegenUnsupported, generate_c

    composition, read = _compose_with_inputs(file, base=base)
    prefix = prefix or _c_identifier(Path(file).stem)
    if not prefix.isidentifier():
        raise InputError(f"--prefix {prefix!r} is not a C identifier", file=file)
    try:
        gen = generate_c(composition.model, prefix)
        if symbolic:
            from mbcompose.dynamics.codegen.symbolic import generate_symbolic

            sym = generate_symbolic(composition.model, prefix)
    except CodegenUnsupported as exc:
        raise InputError(str(exc), file=file) from None
    folder = Path(out_dir)
    with OutputSet(inputs=read, create_dirs=True) as staged:
        staged.add_text(folder / f"{prefix}.c", gen.source)
        staged.add_text(folder / f"{prefix}.h", gen.header)
        if symbolic:
            staged.add_text(folder / f"{prefix}_sym.c", sym.source)
            staged.add_text(folder / f"{prefix}_sym.h", sym.header)
            staged.add_text(folder / f"{prefix}_sym.md", sym.latex)
    log.info("wrote %s and %s: nx %d, nu %d, ny %d, %d parameters", folder / f"{prefix}.c", folder / f"{prefix}.h",
             gen.nx, gen.nu, gen.ny, len(gen.param_names))


def _c_identifier(stem: str) -> str:
    """A C identifier from a file name: other characters become ``_``, a leading digit gets ``m_``."""
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in stem) or "model"
    return name if not name[0].isdigit() else "m_" + name


@main.command("linearize")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--at", "at_spec", help="Joint positions of the state, e.g. 'hinge=0.1': plain numbers in the "
                                      "file's units (a YAML file's units:; rad and m for URDF, SDFormat, MJCF, "
                                      "STEP) or with a unit, '20deg' (default: reference). A, B, C, D are SI.")
@click.option("--v", "v_spec", help="Joint velocities of the state, in the file's units per second or with a "
                                    "unit (default: zero).")
@click.option("--ctrl", help="Actuator controls there, e.g. 'shoulder=0.5' (default: zero).")
@click.option("--tau", "tau_spec", help="Joint forces there, N m or N (default: zero).")
@click.option("--inputs", help="Columns of B, D: actuator names, 'tau:JOINT', 'volt:MOTOR', or the families "
                               "'ctrl', 'tau', 'volt' (comma-separated; default: the actuators and motors, or "
                               "the joint forces if none).")
@click.option("--outputs", help="Rows of C, D: states 'q:JOINT', 'v:JOINT', 'i:MOTOR' or the families 'q', 'v', 'i' "
                                "(comma-separated; default: every state).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="Result file: .npz (arrays A, B, C, D and the names) or .json.")
@_base_option
@_verbosity_options
def linearize_cmd(file, at_spec, v_spec, ctrl, tau_spec, inputs, outputs, output, base):
    """Linearize FILE at a state: continuous x_dot = A x + B u, y = C x + D u.

    States: the joint coordinates (tangent displacements for ball and free joints) and velocities;
    closed chains in their independent coordinates (the loops closed from --at); the DC motors'
    currents. Inputs: actuator controls, joint forces ('tau:JOINT'), motor voltages ('volt:MOTOR'). Rows of velocities by central differences of the forward dynamics
    (springs, dampers and actuators included; mbcompose docs linearize).
    """
    from mbcompose.composer.simulation import control_vector
    from mbcompose.dynamics.linearize import linearize

    out = Path(output)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("npz", "json"):
        raise click.BadParameter(f"unsupported format {out.suffix!r} (use .npz or .json)", param_hint="--output")
    check_output_folder(out)
    composition = _compose(file, base=base)
    model = composition.model
    if model.kind not in ("tree", "embedded"):
        raise InputError(f"linearize takes trees and embedded closed chains, not {model.kind} models", file=file)
    removed, units = composition.analysis.removed_joints, composition.assembly.value_units
    q = _vector(model, _parse_values(at_spec, "--at"), False, "--at", removed, units)
    v = _vector(model, _parse_values(v_spec, "--v"), True, "--v", removed, units)
    tau = _vector(model, _parse_values(tau_spec, "--tau"), True, "--tau", removed)
    try:
        u = control_vector(model, _parse_values(ctrl, "--ctrl"))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--ctrl") from None
    names = {hint: [x.strip() for x in spec.split(",") if x.strip()] if spec else None
             for hint, spec in (("--inputs", inputs), ("--outputs", outputs))}
    try:
        lin = linearize(model, q, v, ctrl=u, tau=tau, inputs=names["--inputs"], outputs=names["--outputs"])
    except ValueError as exc:
        hint = "--inputs" if "input" in str(exc).split("'")[0] else "--outputs"
        raise click.BadParameter(str(exc), param_hint=hint) from None
    _write_linearization(lin, out, fmt)
    click.echo(f"{output}: A {lin.A.shape[0]}x{lin.A.shape[1]}, B {lin.B.shape[0]}x{lin.B.shape[1]}, "
               f"C {lin.C.shape[0]}x{lin.C.shape[1]}; states {', '.join(lin.states)}")


def _write_linearization(lin, out: Path, fmt: str) -> None:
    import numpy as np

    from mbcompose.composer.outputs import OutputSet

    data = lin.as_dict()
    if fmt == "npz":
        def write(p):
            with open(p, "wb") as fh:
                np.savez(fh, **{k: np.asarray(v) for k, v in data.items()})
    else:
        text = json.dumps({k: np.asarray(v).tolist() for k, v in data.items()}, indent=1)

        def write(p):
            p.write_text(text)
    with OutputSet() as staged:
        staged.add(out, write)


def _doc_topics() -> dict[str, object]:
    from importlib import resources

    pages = {p.name[:-3]: p for p in resources.files("mbcompose.docs").iterdir() if p.name.endswith(".md")}
    aliases = {name.split("-")[0]: page for name, page in pages.items() if name.split("-")[0] not in pages}
    return {**aliases, **pages}


@main.command("docs")
@click.argument("topic", required=False)
def docs_cmd(topic: str | None):
    """Print an installed documentation page; without TOPIC, list the topics.

    Topics: assembly (the YAML assembly format, STEP wrappers, what exports
    keep), pipeline (the pipeline file of 'mbcompose run'), limits, linearize
    (state space), codegen (generated C), fmu (FMI 2.0 export), workbench (the
    operator workbench), architecture.
    """
    topics = _doc_topics()
    if topic is None:
        for name in sorted(topics):
            click.echo(name)
        return
    if topic not in topics:
        raise click.BadParameter(f"no page {topic!r}{did_you_mean(topic, topics)} (pages: "
                                 f"{', '.join(sorted(topics))})", param_hint="TOPIC")
    click.echo(_without_markers(topics[topic].read_text(encoding="utf-8")), nl=False)


def _without_markers(page: str) -> str:
    """``page`` without the lines that are one HTML comment (``<!-- fragment: ... -->``, the markers of the
    code blocks the docs test does not run): invisible in a rendered page, noise in a terminal."""
    return "".join(line for line in page.splitlines(keepends=True)
                   if not (line.startswith("<!--") and line.rstrip().endswith("-->")))


@main.command()
@click.argument("input_file", metavar="INPUT", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="Output file; its suffix picks the writer: .yaml (native model), .urdf, .sdf, .xml/.mjcf (MJCF), "
                   ".fmu (FMI 2.0 FMU, Model Exchange and Co-Simulation; needs a C compiler).")
@click.option("--no-lumping", is_flag=True, help="Export every body as it is instead of the composites.")
@click.option("--cut-loops", is_flag=True,
              help="URDF only (URDF describes trees): leave out loop-closing joints, listed in a comment and a "
                   "warning, instead of refusing.  MJCF closes loops with equality constraints; SDFormat keeps them.")
@click.option("--collision", type=click.Choice(["mesh", "hull", "none"]), default="mesh", show_default=True,
              help="Collision geometry of a URDF, MJCF or SDFormat export: 'mesh' the shapes as read; 'hull' one "
                   "convex hull per part's mesh (assets/STEM_hull.stl; primitives stay primitives, visual meshes "
                   "stay); 'none' no collision shapes (visual ones kept).  Mass properties are unchanged.")
@click.option("--fmi-step", type=FiniteFloat(positive=True), default=None,
              help="FMU only: largest internal Runge-Kutta step of co-simulation in seconds [default: 0.001].")
@click.option("--fmu-output-pose", "fmu_poses", metavar="BODY", multiple=True,
              help="FMU only (repeatable): outputs BODY.x, BODY.y, BODY.z (world position of the frame's origin, m) "
                   "and BODY.R[i][j] (its world rotation, row-major) of a body or a part lumped into one.")
@_base_option
@_verbosity_options
def convert(input_file, output, no_lumping, cut_loops, collision, fmi_step, fmu_poses, base):
    """Convert INPUT to another format (reader and writer chosen by suffix).

    By default the lumped model is written: composites with merged mass
    properties, every original part and every named frame (a tool point)
    kept as a frame (URDF: a massless link; MJCF: a site; SDFormat: a frame).
    Meshes are copied (or converted to STL, once) into an assets/ folder
    beside OUTPUT and referenced relatively, so the folder can be moved.

    Kept: visual and collision shapes apart (URDF <visual>/<collision>; MJCF
    class 'visual', group 2, no contacts), colours, actuators (MJCF: motor,
    position, velocity, general as read), couplings (URDF/SDFormat mimic, MJCF
    equality, YAML couplings).  Joints a format lacks: a cylindrical or
    universal joint becomes two URDF joints through a massless link; MJCF loop
    joints become equality constraints.  Whatever a format cannot hold is
    named in one warning (see 'mbcompose docs assembly', "What the
    exporters keep").  A .fmu is an FMI 2.0 FMU of the model's dynamics
    (generated C compiled for this platform; 'mbcompose docs fmu').
    """
    from pathlib import Path

    from mbcompose.composer.exports import FMU_SUFFIX, MODEL_SUFFIXES, export_writers
    from mbcompose.composer.outputs import OutputSet
    from mbcompose.parsers.exporters import EXPORTERS, ExportError

    out = Path(output)
    suffix = out.suffix.lower()
    if suffix not in MODEL_SUFFIXES and suffix not in EXPORTERS and suffix != FMU_SUFFIX:
        raise click.BadParameter(f"no writer for suffix {suffix!r} (use .yaml, "
                                 f"{', '.join(sorted([*EXPORTERS, FMU_SUFFIX]))})", param_hint="--output")
    if fmu_poses and suffix != FMU_SUFFIX:
        raise click.BadParameter(f"body poses are outputs of an FMU only, not of a {suffix} file",
                                 param_hint="--fmu-output-pose")
    check_output_folder(out)
    if suffix == FMU_SUFFIX:
        _convert_to_fmu(input_file, out, fmi_step, base, fmu_poses)
        return
    composition, read = _compose_with_inputs(input_file, lumping=not no_lumping, loops="embed", base=base)
    assembly = composition.lumped
    writers = export_writers(assembly, [out.name], out.parent, {".urdf": {"cut_loops": cut_loops}}, collision)
    with OutputSet(inputs=read, create_dirs=True) as staged:     # the folder exists; assets/ may be created
        try:
            staged.add(out, writers.pop(out.name))
        except ExportError as exc:
            message = str(exc).replace("pass cut_loops=True", "use --cut-loops")
            raise InputError(f"cannot write {output}: {message}", file=input_file) from None
        for name, write in writers.items():
            staged.add(out.parent / name, write)
    click.echo(f"{output}: {plural(len(assembly.bodies), 'body')}, {plural(len(assembly.joints), 'joint')}")


def _convert_to_fmu(input_file: str, out: Path, fmi_step: float | None, base, poses=()) -> None:
    """``convert -o X.fmu``: the model composed as ``simulate`` composes it, its FMU (with the world poses
    of the bodies or parts ``poses`` as outputs) written atomically."""
    from mbcompose.composer.exports import fmu_archive
    from mbcompose.composer.outputs import OutputSet

    composition, read = _compose_with_inputs(input_file, base=base)
    data = fmu_archive(composition, cs_step=fmi_step, poses=poses)
    with OutputSet(inputs=read) as staged:
        staged.add(out, lambda p: p.write_bytes(data))
    click.echo(f"{out}: FMI 2.0 FMU (model exchange and co-simulation), {len(data)} bytes")


suggest_choices(main)
