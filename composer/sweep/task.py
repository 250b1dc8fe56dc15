"""One variant of a sweep, computed in a worker: rebuild, compose, record.

A task carries only the pipeline config and the variant's values (small,
picklable); the worker reads the input itself (the parsed YAML document is
cached per process), writes the values into it (:mod:`composer.sweep.paths`),
composes the model and records the outputs the sweep asks for.  No model
crosses a process boundary.  Any error becomes the variant's one-line error,
so a bad variant is a failed row, never a lost one.

Recorded outputs (columns)
--------------------------
dof
    degrees of freedom of the mechanism (graph stage, seed 004).
total_mass
    sum of the body masses, kg.
mass_matrix
    ``M[a,b]`` (a <= b) at the reference configuration, named by the model's
    velocity coordinates (for a constraint-embedded closed chain: its
    independent coordinates; for ``loops: lagrange``: the spanning tree's).
mass_matrix_eigenvalues
    ``eig_M[i]``, ascending.
bias_forces
    ``bias[c]``: inverse dynamics at the reference configuration at rest with
    zero acceleration, i.e. the joint forces that hold the mechanism against
    gravity (N m or N).
simulation
    ``final_q[c]`` and ``final_v[c]`` (all joint coordinates at the end),
    ``energy_drift`` (max relative), ``closure_error`` (max loop closure error,
    0 for trees), ``peak_torque`` (max |applied joint force| along the trajectory).
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mbcompose.dynamics.closed.closure import ClosureError
from mbcompose.parsers import limits as input_limits
from mbcompose.parsers.errors import InputError
from mbcompose.parsers.yaml.document import load_yaml

from .paths import set_in_document, with_body_mass, with_option

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class VariantTask:
    """What a worker needs for one variant: its key, values and the pipeline config."""

    key: str
    values: dict
    config: object


@functools.lru_cache(maxsize=8)
def _document(path: str, mtime_ns: int):
    return load_yaml(path)


def input_document(path):
    """The parsed YAML document of ``path`` (cached per process while the file is unchanged)."""
    path = Path(path)
    return _document(str(path), path.stat().st_mtime_ns)


def compose_variant(config, values: dict):
    """The :class:`~composer.compose.Composition` of one variant.

    config : PipelineConfig with a sweep.  values : ``{parameter name: value}``.
    """
    from mbcompose.parsers.yaml.format import assembly_from_node

    from ..compose import analyse_stage, model_stage, read_stage

    input_path = config.inputs[0]
    options, document, masses = config.options, None, []
    for parameter in config.sweep.parameters:
        value = values[parameter.name]
        for path in parameter.paths:
            if path.target == "options":
                options = with_option(options, path, value)
                continue
            document = input_document(input_path) if document is None else document
            if path.target == "mass":
                masses.append((path, value))
            else:
                document = set_in_document(document, path, value)
    if document is None:
        assembly = read_stage(input_path, options)
    else:
        assembly = assembly_from_node(document, input_path)
        for path, value in masses:
            assembly = with_body_mass(assembly, path, value, document)
    analysis = analyse_stage(assembly, options)
    return model_stage(assembly, analysis, options)


def _velocity_names(model) -> tuple[str, ...]:
    from mbcompose.dynamics.simulation import coordinate_columns

    return coordinate_columns(model, rate=True)


def _reference_dynamics(model) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """(M, bias, names) at the reference configuration at rest (see module docstring)."""
    from mbcompose import dynamics

    if model.kind == "embedded":
        q = model.neutral()
        zero = np.zeros(model.nv)
        bias = dynamics.inverse_dynamics(model, q, zero, zero)[model.independent_v]
        return dynamics.mass_matrix(model, q), bias, tuple(model.independent)
    tree = model.tree_model
    q, zero = tree.neutral(), np.zeros(tree.nv)
    return (dynamics.mass_matrix(tree, q), dynamics.inverse_dynamics(tree, q, zero, zero),
            _velocity_names(tree))


def _simulation_outputs(composition, cfg) -> dict:
    from ..simulation import joint_vector, run_simulation

    sim = run_simulation(composition, cfg)
    out = {}
    extra = sim.extra_q if sim.extra_q is not None else np.zeros((len(sim.t), 0))
    for name, value in zip(sim.columns + sim.extra_columns, np.concatenate([sim.q[-1], extra[-1]])):
        out[f"final_q[{name}]"] = float(value)
    for name, value in zip(sim.velocity_columns, sim.v[-1]):
        out[f"final_v[{name}]"] = float(value)
    out["energy_drift"] = sim.energy_drift()
    out["closure_error"] = float(np.max(sim.closure)) if sim.closure is not None else 0.0
    # the configured joint forces are constant, so their peak is their largest magnitude
    tau = joint_vector(composition.model, cfg.torques, rate=True) if cfg.torques else np.zeros(0)
    out["peak_torque"] = float(np.max(np.abs(tau), initial=0.0))
    return out


def record_outputs(composition, record, simulation_cfg=None) -> dict:
    """The recorded columns of one composed variant (see module docstring)."""
    out: dict = {}
    if "dof" in record:
        out["dof"] = int(composition.analysis.dof)
    if "total_mass" in record:
        out["total_mass"] = composition.assembly.total_mass
    if {"mass_matrix", "mass_matrix_eigenvalues", "bias_forces"} & set(record):
        M, bias, names = _reference_dynamics(composition.model)
        if "mass_matrix" in record:
            for i, a in enumerate(names):
                for j in range(i, len(names)):
                    out[f"M[{a},{names[j]}]"] = float(M[i, j])
        if "mass_matrix_eigenvalues" in record:
            for i, lam in enumerate(np.linalg.eigvalsh(0.5 * (M + M.T))):
                out[f"eig_M[{i}]"] = float(lam)
        if "bias_forces" in record:
            out.update({f"bias[{n}]": float(b) for n, b in zip(names, bias)})
    if "simulation" in record and simulation_cfg is not None:
        out.update(_simulation_outputs(composition, simulation_cfg))
    return out


def one_line(exc: BaseException) -> str:
    """The one-line error of a failed variant (the CLI's format)."""
    if isinstance(exc, (InputError, ClosureError)):
        return " ".join(f"error: {exc}".split())
    return " ".join(f"internal error: {type(exc).__name__}: {exc}".split())


def run_variant(task: VariantTask) -> dict:
    """Compute one variant; returns its row: key, status, error, seconds and the outputs.

    Never raises for a bad variant: its error is in the row.
    """
    t0 = time.perf_counter()
    config = task.config
    try:
        with input_limits.using(config.limits):  # limits do not cross process boundaries
            composition = compose_variant(config, task.values)
            outputs = record_outputs(composition, config.sweep.record, config.outputs.simulation)
        status, error = "ok", ""
    except Exception as exc:  # every failure of a variant is recorded in its row
        if not isinstance(exc, (InputError, ClosureError)):
            log.debug("variant %s failed", task.key, exc_info=True)
        outputs, status, error = {}, "failed", one_line(exc)
    return {"key": task.key, "status": status, "error": error,
            "seconds": time.perf_counter() - t0, **outputs}
