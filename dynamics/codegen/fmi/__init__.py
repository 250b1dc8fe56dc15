"""FMI 2.0 export: a generated model (:class:`dynamics.codegen.GeneratedC`) packaged as an FMU for Model
Exchange and Co-Simulation.

The FMU holds ``modelDescription.xml`` (:mod:`.description`), ``sources/`` (the generated model C, the
wrapper ``fmi2_wrapper.c``, its configuration ``fmu_model.h`` and the FMI 2.0 headers, vendored from FMPy
with their BSD-2 licence in ``include/``) and ``binaries/<platform>/<modelIdentifier>.<so|dylib>`` compiled
with the system C compiler (``CC`` honoured, else ``cc`` or ``gcc``: :func:`dynamics.codegen.compiler`).  No Python runs inside.
Co-simulation integrates with a fixed-step classical Runge-Kutta method of order 4 whose step is
``cs_step`` (s) or less: each communication step is divided into equal sub-steps.  A model with DC motors
has a fast electrical time constant ``L/R``: the step is then at most the generator's ``max_step`` (a
quarter of the fastest ``L/R``), with a log line when that is below the step asked for.

The bytes of the archive are returned; the caller writes them (atomically, in :mod:`composer`).

Example (the generator of :mod:`dynamics.codegen`)::

    data = build_fmu(generate_c(model, prefix="seeker"), "seeker")
"""

from __future__ import annotations

import io
import logging
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

from .description import (DEFAULT_CS_STEP, ExtraOutput, Stops, guid_of, layout, model_description_xml,
                          position_state_count, tunable_indices)

__all__ = ["build_fmu", "FmuUnavailable", "ExtraOutput", "Stops", "DEFAULT_CS_STEP", "model_identifier",
           "platform_folder", "find_compiler"]

log = logging.getLogger(__name__)

_HEADERS = ("fmi2Functions.h", "fmi2FunctionTypes.h", "fmi2TypesPlatform.h")
_WRAPPER = "fmi2_wrapper.c"
_STOPS = "fmi2_stops.c"
_LICENCE = "LICENSE-fmi2.txt"
#: compiler flags: C99, position independent, only the fmi2 functions exported
_CFLAGS = ("-std=c99", "-O2", "-fPIC", "-shared", "-fvisibility=hidden")
#: zip entries' time stamp: the same model gives the same archive
_ZIP_DATE = (2020, 1, 1, 0, 0, 0)


class FmuUnavailable(RuntimeError):
    """An FMU cannot be built here: no C compiler, an unsupported platform, or a failed compilation;
    the message says which and what to do."""


def model_identifier(name: str) -> str:
    """``name`` as a C identifier (the FMU's ``modelIdentifier`` and the name of its binary)."""
    ident = re.sub(r"\W", "_", name, flags=re.ASCII) or "model"
    return ident if not ident[0].isdigit() else "m_" + ident


def platform_folder() -> tuple[str, str]:
    """(FMI 2.0 platform folder, shared-library suffix) of the running platform: ``("linux64", ".so")``."""
    system = platform.system()
    bits = "64" if sys.maxsize > 2 ** 32 else "32"
    if system == "Linux":
        return "linux" + bits, ".so"
    if system == "Darwin":
        return "darwin" + bits, ".dylib"
    raise FmuUnavailable(f"building an FMU on {system} is not supported (Linux and macOS: a cc-compatible "
                         "compiler builds the binary)")


def find_compiler() -> list[str]:
    """The C compiler command (:func:`dynamics.codegen.compiler`: ``CC`` when set, else ``cc`` or ``gcc``)
    as a word list; :class:`FmuUnavailable` when there is none."""
    from ..build import CodegenUnavailable, compiler

    try:
        return shlex.split(compiler())
    except CodegenUnavailable as exc:
        raise FmuUnavailable(f"{exc.reason}: building an FMU compiles its binary with a C compiler") from None


def build_fmu(generated, model_name: str, description: str = "", cs_step: float = DEFAULT_CS_STEP,
              extra_outputs: tuple[ExtraOutput, ...] = (), stop_time: float = 1.0,
              stops: Stops | None = None, fixed_parameters: tuple[str, ...] = ()) -> bytes:
    """The FMU archive (bytes of a zip) of ``generated`` (a :class:`dynamics.codegen.GeneratedC`).

    model_name : the FMU's ``modelName``; its C identifier (:func:`model_identifier`) is the
        ``modelIdentifier``.  cs_step : largest internal step of co-simulation, s (> 0).
    extra_outputs : outputs that are affine functions of the generated outputs (removed joints).
    stop_time : the DefaultExperiment's stop time, s.
    stops : joint stops, events of the FMU: of the coordinates of a tree (``x = (q, v)`` and ``PREFIX_crba``)
        or of the independent coordinates of an embedded closed chain (indices into its ``x``; the inertia
        ``X^T M X`` from ``PREFIX_close``, ``PREFIX_complete_velocity`` and ``PREFIX_crba``); not with DC motors.
    fixed_parameters : names of ``generated.param_names`` that are not tunable variables (they keep their
        defaults: a value the generated code also holds elsewhere as a constant, or one that acts on nothing).
    The frames of ``generated.pose_names`` (``PREFIX_frame_poses``) are outputs after the extra outputs.
    Raises :class:`FmuUnavailable` (no compiler, unsupported platform, compilation failed).
    """
    if not cs_step > 0:
        raise ValueError(f"cs_step must be positive, got {cs_step!r}")
    max_step = getattr(generated, "max_step", float("inf"))
    if cs_step > max_step:
        log.info("the co-simulation step is %.3g s instead of %.3g s: a quarter of the fastest DC motor's "
                 "electrical time constant L/R (the Runge-Kutta step's stability)", max_step, cs_step)
        cs_step = max_step
    stops = stops if stops is not None and len(stops) else None
    if stops and getattr(generated, "nm", 0):
        raise ValueError("joint stops in an FMU need states q and v only (no DC motor currents)")
    ident = model_identifier(model_name)
    folder, suffix = platform_folder()
    lay = layout(generated, extra_outputs, fixed_parameters)
    tunable = tunable_indices(generated, fixed_parameters)
    sources = {f"{generated.prefix}.c": generated.source.encode(), f"{generated.prefix}.h": generated.header.encode(),
               _WRAPPER: _package_file(_WRAPPER), _STOPS: _package_file(_STOPS)}
    sources.update({name: _package_file("include/" + name) for name in _HEADERS})
    listed = (_WRAPPER, f"{generated.prefix}.c")
    n_events = 2 * len(stops) if stops else 0

    def describe(guid: str) -> bytes:
        return model_description_xml(lay, ident, model_name, description, guid, listed, stop_time, n_events)

    guid = guid_of(describe(""), *sources.values(), repr((cs_step, extra_outputs, stops, tunable)).encode())
    sources["fmu_model.h"] = (_config_header(generated, lay, model_name, guid, cs_step, extra_outputs, tunable)
                              + _stops_header(generated, stops)).encode()
    binary = _compile(sources, listed, ident + suffix)
    files = {"modelDescription.xml": describe(guid), f"binaries/{folder}/{ident}{suffix}": binary}
    files.update({f"sources/{name}": data for name, data in sources.items()})
    files["documentation/licenses/fmi2-headers.txt"] = _package_file("include/" + _LICENCE)
    return _zip(files)


def _package_file(name: str) -> bytes:
    return resources.files(__name__).joinpath(name).read_bytes()


def _c_double(v: float) -> str:
    v = float(v)
    return repr(v) if v not in (float("inf"), float("-inf")) else ("INFINITY" if v > 0 else "-INFINITY")


def _c_doubles(values) -> str:
    items = [_c_double(v) for v in values] or ["0.0"]
    return "{" + ", ".join(items) + "}"


def _c_ints(values) -> str:
    return "{" + (", ".join(str(int(v)) for v in values) or "0") + "}"


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _config_header(generated, lay, model_name: str, guid: str, cs_step: float, extra_outputs, tunable) -> str:
    """``fmu_model.h``: what the wrapper needs of this model (sizes, GUID, parameter defaults and the
    tunable ones' indices, the co-simulation step, the removed joints' outputs, the frames' poses) and the
    prototypes of the generated functions."""
    pre = generated.prefix
    gains = [g for row in lay.extra_gain for g in row]
    n_pose = len(getattr(generated, "pose_names", ()))
    return "\n".join([
        f"/* fmu_model.h: the model {model_name!r} for fmi2_wrapper.c (written by mbcompose) */",
        "#ifndef FMU_MODEL_H", "#define FMU_MODEL_H",
        f"#define FMU_MODEL_NAME {_c_string(model_name)}",
        f"#define FMU_GUID {_c_string(guid)}",
        f"#define FMU_NX {generated.nx}", f"#define FMU_NU {generated.nu}", f"#define FMU_NY {generated.ny}",
        f"#define FMU_NE {len(extra_outputs)}", f"#define FMU_NO {n_pose}",
        f"#define FMU_NP {len(tunable)} /* tunable parameters */",
        f"#define FMU_NP_ALL {len(generated.param_names)} /* entries of p */",
        f"#define FMU_CS_STEP {float(cs_step)!r} /* s: largest internal Runge-Kutta step of co-simulation */",
        f"#define FMU_START_STATE {pre}_start_state", f"#define FMU_DERIVATIVES {pre}_derivatives",
        f"#define FMU_OUTPUTS {pre}_outputs",
        f"void {pre}_start_state(double *x);",
        f"int {pre}_derivatives(const double *p, double t, const double *x, const double *u, double *dx);",
        f"int {pre}_outputs(const double *p, const double *x, double *y);",
        *(_workspace_lines(pre) if _is_closed(generated) else ()),
        *((f"#define FMU_FRAME_POSES {pre}_frame_poses", f"void {pre}_frame_poses(const double *q, double *out);")
          if n_pose else ()),
        f"static const double FMU_PARAM_DEFAULTS[] = {_c_doubles(generated.param_defaults)};",
        f"static const int FMU_PARAM_INDEX[] = {_c_ints(tunable)}; /* p index of each tunable parameter */",
        f"static const double FMU_EXTRA_OFFSET[] = {_c_doubles(e.offset for e in extra_outputs)};",
        f"static const double FMU_EXTRA_GAIN[] = {_c_doubles(gains)}; /* (NE, NY) row-major */", ""])


def _is_closed(generated) -> bool:
    """Whether ``generated`` is an embedded closed chain (its header declares the workspace functions)."""
    return f"{generated.prefix}_derivatives_ws" in generated.header


def _workspace_lines(pre: str) -> tuple[str, ...]:
    """Closed chains: the instance keeps its own ``PREFIX_workspace`` (the generated header declares it)."""
    return (f'#include "{pre}.h"', f"#define FMU_WORKSPACE {pre}_workspace",
            f"#define FMU_WORKSPACE_INIT {pre}_workspace_init", f"#define FMU_DERIVATIVES_WS {pre}_derivatives_ws",
            f"#define FMU_OUTPUTS_WS {pre}_outputs_ws")


def _stops_header(generated, stops: Stops | None) -> str:
    """The rest of ``fmu_model.h``: the numbers of position and velocity states and joint stops (``FMU_NL``
    rows); a closed chain's (:func:`_is_closed`) with the functions of its inertia in independent coordinates."""
    pre, nqx = generated.prefix, position_state_count(generated)
    lines = [f"#define FMU_NQ {nqx}", f"#define FMU_NV {generated.nx - nqx - getattr(generated, 'nm', 0)}",
             f"#define FMU_NL {len(stops) if stops else 0}"]
    if stops and _is_closed(generated):
        lines += ["#define FMU_CLOSED_STOPS 1", f"#define FMU_NQ_TREE {generated.nq}",
                  f"#define FMU_NV_TREE {generated.nv}", f"#define FMU_CLOSE {pre}_close",
                  f"#define FMU_COMPLETE_VELOCITY {pre}_complete_velocity"]
    if stops:
        lines += [f"#define FMU_CRBA {pre}_crba",
                  f"void {pre}_crba(const double *p, const double *q, double *M);",
                  f"static const int FMU_LIMIT_Q[] = {_c_ints(stops.q_index)};",
                  f"static const int FMU_LIMIT_V[] = {_c_ints(stops.v_index)};",
                  f"static const double FMU_LOWER[] = {_c_doubles(stops.lower)};",
                  f"static const double FMU_UPPER[] = {_c_doubles(stops.upper)};"]
    return "\n".join([*lines, "#endif", ""])


def _compile(sources: dict[str, bytes], listed: tuple[str, ...], binary_name: str) -> bytes:
    """Compile ``listed`` of ``sources`` (written to a temporary folder) into one shared library."""
    cc = find_compiler()
    with tempfile.TemporaryDirectory(prefix="mbcompose-fmu-") as tmp:
        root = Path(tmp)
        for name, data in sources.items():
            (root / name).write_bytes(data)
        command = [*cc, *_CFLAGS, "-I", str(root), "-o", str(root / binary_name),
                   *(str(root / name) for name in listed), "-lm"]
        log.debug("compiling the FMU binary: %s", shlex.join(command))
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise FmuUnavailable(f"the C compiler {cc[0]!r} could not run: {exc}") from None
        if done.returncode != 0:
            raise FmuUnavailable(f"compiling the FMU failed ({shlex.join(cc)}, exit {done.returncode}):\n"
                                 + done.stderr.strip()[-4000:])
        return (root / binary_name).read_bytes()


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.external_attr = (0o755 if name.startswith("binaries/") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    return buffer.getvalue()
