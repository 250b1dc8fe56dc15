"""The variables of an FMU and its ``modelDescription.xml`` (FMI 2.0, Model Exchange and Co-Simulation).

Variables, in the order of their value references (the C wrapper ``fmi2_wrapper.c`` uses the same):

* states ``x`` (independent positions, then independent velocities, then the DC motors' currents
  ``i:MOTOR``, A), ``initial="exact"`` at the reference configuration at rest without current; a position state that is also a joint coordinate of the outputs is
  declared once, as an output (``causality="output"``), and so are the velocity states;
* their derivatives ``der(NAME)``;
* inputs ``u`` (joint forces of the independent coordinates, N m or N; actuator controls; the DC
  motors' voltages ``volt:MOTOR``, V), start 0;
* outputs ``y``: every joint coordinate not already a state (dependent coordinates of closed loops);
* outputs of removed and loop-closing joints (:class:`ExtraOutput`: affine in the joint coordinates);
* outputs of the requested frames' world poses (``generated.pose_names``: ``NAME.x .y .z``, m, and
  ``NAME.R[i][j]``, the rotation row-major; the generated ``PREFIX_frame_poses`` of the joint coordinates);
* tunable parameters: the entries of ``p`` (masses, spring stiffnesses, ... as the generator names them)
  except the ``fixed`` ones (:func:`layout`), which keep their defaults.

ModelStructure: outputs depend on the position states only (no direct feed-through of the inputs),
a position derivative on the states, a velocity or current derivative on the states and the inputs; the initial
unknowns (derivatives, outputs that are not states) list no dependencies, which FMI 2.0 reads as
"depends on every known" (true, and the parameters are among them).
"""

from __future__ import annotations

import hashlib
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass

#: the co-simulation's internal Runge-Kutta step, s (the default of ``build_fmu(cs_step=...)``)
DEFAULT_CS_STEP = 1e-3


@dataclass(frozen=True)
class ExtraOutput:
    """An output that is ``offset + sum(scale * output named source for source, scale in terms)``: the
    coordinate of a joint the reduction removed (a redundant revolute moves as the one kept in its place;
    a locked one stays) or of a loop-closing joint whose coordinate is affine in the tree's (planar loops)."""

    name: str
    offset: float
    terms: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Stops:
    """Joint stops of an FMU (the limited coordinates of
    :func:`dynamics.compiled.simulate_api.limited_coordinates`): q_index, v_index (L,) int, indices into the
    position and the velocity states (a tree's q and v; a closed chain's independent coordinates); lower,
    upper (L,) rad or m, -inf / +inf where a side is open."""

    q_index: tuple[int, ...]
    v_index: tuple[int, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.q_index)


@dataclass(frozen=True)
class Variable:
    """One ScalarVariable: ``index`` is its 1-based position in ModelVariables."""

    name: str
    vr: int
    causality: str
    variability: str
    initial: str | None
    start: float | None
    index: int
    derivative: int | None = None
    description: str = ""


@dataclass(frozen=True)
class Layout:
    """The variables and the ModelStructure of one FMU.

    outputs : [(index, dependencies)] in ModelStructure/Outputs order.  derivatives : the same for
    ModelStructure/Derivatives.  initial_unknowns : indices.  extra_gain : (NE, NY) rows of the extra
    outputs' coefficients on ``y``.
    """

    variables: tuple[Variable, ...]
    outputs: tuple[tuple[int, tuple[int, ...]], ...]
    derivatives: tuple[tuple[int, tuple[int, ...]], ...]
    initial_unknowns: tuple[int, ...]
    extra_gain: tuple[tuple[float, ...], ...]


def position_state_count(generated) -> int:
    """Number of position states in ``x`` (the rest are velocities and currents): ``nq`` when ``x = (q, v, i)``
    of the whole tree (``i`` the ``nm`` DC motors' currents), else half of ``nx`` (an embedded closed chain:
    independent coordinates, all scalar)."""
    if generated.nx == generated.nq + generated.nv + getattr(generated, "nm", 0):
        return generated.nq
    return generated.nx // 2


def tunable_indices(generated, fixed=()) -> tuple[int, ...]:
    """Indices into ``p`` of the parameters the FMU lists as tunable: every name of
    ``generated.param_names`` but those in ``fixed`` (each of which must be one of them)."""
    names = tuple(generated.param_names)
    unknown = sorted(set(fixed) - set(names))
    if unknown:
        raise ValueError(f"fixed parameters {unknown} are not parameters of the generated model")
    return tuple(i for i, name in enumerate(names) if name not in set(fixed))


def layout(generated, extra_outputs=(), fixed=()) -> Layout:
    """The variables of ``generated`` (a :class:`dynamics.codegen.GeneratedC`) with value references
    as in the C wrapper, and the dependencies of its ModelStructure; the parameters named in ``fixed``
    are not variables (:func:`tunable_indices`)."""
    nx, nu, ny = generated.nx, generated.nu, generated.ny
    pose_names = tuple(getattr(generated, "pose_names", ()))
    nqx = position_state_count(generated)
    y_index = {name: i for i, name in enumerate(generated.output_names)}
    state_outputs = {name for name in generated.state_names[:nqx] if name in y_index}
    variables: list[Variable] = []

    def add(**kw) -> int:
        variables.append(Variable(index=len(variables) + 1, **kw))
        return len(variables)

    first_current = nx - getattr(generated, "nm", 0)
    kinds = ["position" if i < nqx else "velocity" if i < first_current else "motor current, A" for i in range(nx)]
    x_idx = [add(name=name, vr=i, causality="output" if (i >= nqx or name in state_outputs) else "local",
                 variability="continuous", initial="exact", start=float(generated.start_state[i]),
                 description="state: " + kinds[i])
             for i, name in enumerate(generated.state_names)]
    dx_idx = [add(name=f"der({name})", vr=nx + i, causality="local", variability="continuous",
                  initial="calculated", start=None, derivative=x_idx[i])
              for i, name in enumerate(generated.state_names)]
    u_idx = [add(name=name, vr=2 * nx + i, causality="input", variability="continuous", initial=None, start=0.0,
                 description="input") for i, name in enumerate(generated.input_names)]
    y_var = {}
    for i, name in enumerate(generated.output_names):
        if name not in state_outputs:
            y_var[name] = add(name=name, vr=2 * nx + nu + i, causality="output", variability="continuous",
                              initial="calculated", start=None, description="joint coordinate")
    extra_gain = []
    for k, extra in enumerate(extra_outputs):
        row = [0.0] * ny
        for source, scale in extra.terms:
            if source not in y_index:
                raise ValueError(f"extra output {extra.name!r}: no output named {source!r}")
            row[y_index[source]] += float(scale)
        extra_gain.append(tuple(row))
        formula = " + ".join([repr(extra.offset), *(f"{scale!r} * {source}" for source, scale in extra.terms)])
        y_var[extra.name] = add(name=extra.name, vr=2 * nx + nu + ny + k, causality="output",
                                variability="continuous", initial="calculated", start=None,
                                description=f"joint coordinate ({formula})")
    first_pose = 2 * nx + nu + ny + len(extra_outputs)
    for i, name in enumerate(pose_names):
        what = "world position of the frame's origin, m" if i % 12 < 3 else "world rotation of the frame"
        y_var[name] = add(name=name, vr=first_pose + i, causality="output", variability="continuous",
                          initial="calculated", start=None, description=what)
    for i, j in enumerate(tunable_indices(generated, fixed)):
        add(name=generated.param_names[j], vr=first_pose + len(pose_names) + i, causality="parameter",
            variability="tunable", initial="exact", start=float(generated.param_defaults[j]),
            description="parameter")
    q_deps = tuple(x_idx[:nqx])
    outputs = [(x_idx[i], (x_idx[i],)) for i in range(nx) if variables[x_idx[i] - 1].causality == "output"]
    outputs += [(index, q_deps) for index in y_var.values()]
    derivatives = [(dx_idx[i], tuple(x_idx) + (tuple(u_idx) if i >= nqx else ())) for i in range(nx)]
    initial_unknowns = tuple(dx_idx) + tuple(y_var.values())
    return Layout(tuple(variables), tuple(outputs), tuple(derivatives), tuple(sorted(initial_unknowns)),
                  tuple(extra_gain))


def model_description_xml(lay: Layout, model_identifier: str, model_name: str, description: str,
                          guid: str, sources: tuple[str, ...], stop_time: float, event_indicators: int = 0) -> bytes:
    """The text of ``modelDescription.xml`` (UTF-8): FMI 2.0, Model Exchange and Co-Simulation with the
    same ``modelIdentifier``, ``event_indicators`` (two per limited coordinate: the joint stops),
    ``sources`` listed for both interfaces."""
    root = ET.Element("fmiModelDescription", fmiVersion="2.0", modelName=model_name, guid=guid,
                      **({"description": description} if description else {}), generationTool="mbcompose",
                      variableNamingConvention="flat", numberOfEventIndicators=str(event_indicators))
    common = dict(modelIdentifier=model_identifier, canGetAndSetFMUstate="true", canSerializeFMUstate="true",
                  canNotUseMemoryManagementFunctions="true", providesDirectionalDerivative="false")
    me = ET.SubElement(root, "ModelExchange", completedIntegratorStepNotNeeded="false", **common)
    cs = ET.SubElement(root, "CoSimulation", canHandleVariableCommunicationStepSize="true",
                       canInterpolateInputs="false", maxOutputDerivativeOrder="0", **common)
    for element in (me, cs):
        files = ET.SubElement(element, "SourceFiles")
        for name in sources:
            ET.SubElement(files, "File", name=name)
    categories = ET.SubElement(root, "LogCategories")
    for name in ("logStatusError", "logAll"):
        ET.SubElement(categories, "Category", name=name)
    ET.SubElement(root, "DefaultExperiment", startTime="0", stopTime=repr(float(stop_time)))
    _model_variables(ET.SubElement(root, "ModelVariables"), lay)
    structure = ET.SubElement(root, "ModelStructure")
    for tag, unknowns in (("Outputs", lay.outputs), ("Derivatives", lay.derivatives)):
        if unknowns:
            group = ET.SubElement(structure, tag)
            for index, deps in unknowns:
                ET.SubElement(group, "Unknown", index=str(index), dependencies=" ".join(map(str, deps)),
                              dependenciesKind=" ".join(["dependent"] * len(deps)))
    if lay.initial_unknowns:
        group = ET.SubElement(structure, "InitialUnknowns")
        for index in lay.initial_unknowns:
            ET.SubElement(group, "Unknown", index=str(index))
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def _model_variables(parent: ET.Element, lay: Layout) -> None:
    for v in lay.variables:
        attrs = dict(name=v.name, valueReference=str(v.vr), causality=v.causality, variability=v.variability)
        if v.initial is not None:
            attrs["initial"] = v.initial
        if v.description:
            attrs["description"] = v.description
        element = ET.SubElement(parent, "ScalarVariable", **attrs)
        real = {} if v.start is None else {"start": repr(v.start)}
        if v.derivative is not None:
            real["derivative"] = str(v.derivative)
        ET.SubElement(element, "Real", **real)


def guid_of(*parts: bytes) -> str:
    """``{8-4-4-4-12}`` from the SHA-256 of ``parts`` (the model's description and sources): the same
    model gives the same GUID, a changed one another."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return "{" + str(uuid.UUID(bytes=digest.digest()[:16])) + "}"
