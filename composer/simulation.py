"""Simulation in the pipeline and the CLI: joint values from the user, checks, the run, the file.

The integrators are :mod:`dynamics.simulation`'s; here the user's joint values (``--q0``,
``initial.q``, ...) become vectors with errors that name the joint, the simulation's size is
checked against the input limits, the joints removed by the reduction get their columns
(:func:`graph.model.removed_joint_columns`) and the trajectory is written as CSV or NPZ.
"""

from __future__ import annotations

import logging
from typing import Callable, Mapping

import numpy as np

from mbcompose.dynamics.forces import motor_names
from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.simulation import SIMULATORS, ConstantForcesOnly, SimulationResult, simulate, too_many_steps
from mbcompose.dynamics.simulation.stops import TooManyStopEvents
from mbcompose.graph.model import removed_joint_columns
from mbcompose.parsers import limits
from mbcompose.parsers.errors import InputError, did_you_mean

log = logging.getLogger(__name__)


class JointValueError(ValueError):
    """A joint value that does not fit the model; ``joint`` names the joint."""

    def __init__(self, message: str, joint: str):
        super().__init__(message)
        self.joint = joint


#: units a joint value may carry ("20deg", "15 mm", "90deg/s"), and their factor to SI (rad, m, rad/s, m/s)
VALUE_UNITS = {"rad": 1.0, "deg": np.pi / 180.0, "m": 1.0, "cm": 1e-2, "mm": 1e-3,
               "rad/s": 1.0, "deg/s": np.pi / 180.0, "m/s": 1.0, "cm/s": 1e-2, "mm/s": 1e-3}


def value_with_unit(name: str, text: str) -> float:
    """``"20deg"``, ``"15 mm"``, ``"90deg/s"`` (a number and one of :data:`VALUE_UNITS`) in SI units."""
    stripped = text.strip()
    for unit in sorted(VALUE_UNITS, key=len, reverse=True):
        if stripped.endswith(unit):
            number = stripped[:-len(unit)].strip()
            try:
                return float(number) * VALUE_UNITS[unit]
            except ValueError:
                break
    raise JointValueError(f"joint '{name}': expected a number (SI: rad, m) or a number with a unit "
                          f"({', '.join(VALUE_UNITS)}), got {text[:40]!r}", name)


def joint_values_array(name: str, value, scale=None) -> np.ndarray:
    """``value`` (a number, a number with a unit such as ``"20deg"``, or a list of numbers) as a finite
    1-D array in SI units within the magnitude limit; plain numbers times ``scale`` (SI per unit of each
    coordinate, :meth:`parsers.assembly.ValueUnits.factors`; None: SI already), numbers with a unit exact."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    factors = scale if scale is not None and len(scale) == len(items) else np.ones(len(items))
    items = [value_with_unit(name, v) if isinstance(v, str) else _plain(name, v) * f for v, f in zip(items, factors)]
    for v in items:
        too_big = limits.check_magnitude(float(v), f"joint '{name}'")
        if too_big:
            raise JointValueError(too_big, name)
    return np.array(items, dtype=float)


def _plain(name: str, v) -> float:
    """A given plain number as a float; :class:`JointValueError` for anything else or a non-finite one."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
        raise JointValueError(f"joint '{name}': expected a number or a list of numbers, "
                              f"got {type(v).__name__} {str(v)[:40]!r}", name)
    if not np.isfinite(float(v)):
        raise JointValueError(f"joint '{name}': values must be finite, got {v}", name)
    return float(v)


def coordinate_factors(model, name: str, rate: bool, units) -> np.ndarray | None:
    """SI per given unit of joint ``name``'s position (velocity if ``rate``) coordinates for plain numbers
    in ``units`` (:class:`parsers.assembly.ValueUnits`), from the joint-type table's ``q_units``/``v_units``;
    None when the values are SI already."""
    if units is None or units.si:
        return None
    tree = getattr(model, "tree_model", model)
    facts = JOINTS[tree.joint_types[tree.joint_index(name)]]
    return units.factors(facts.v_units if rate else facts.q_units)


def joint_vector(model, values: Mapping[str, object], rate: bool, base=None, removed=(), units=None) -> np.ndarray:
    """A q (or v if ``rate``) vector in SI from ``{joint: value or list}``, plain numbers in ``units``
    (:class:`parsers.assembly.ValueUnits`, the file's: :func:`value_units`; None: SI).

    Unknown joints (with a "did you mean"; a joint of ``removed``, the reduction's
    :class:`graph.reduce.RemovedJoint` records, is named as removed, with the joint kept in its
    place), wrong counts and non-finite values raise :class:`JointValueError`.
    """
    out = np.array(base if base is not None else (np.zeros(model.nv) if rate else model.neutral()), dtype=float)
    gone = {r.name: r for r in removed}
    for name, value in values.items():
        if name in gone and name not in model.joint_names:
            r = gone[name]
            instead = f"; give its value to '{r.kept}'" if r.kept in model.joint_names else ""
            raise JointValueError(f"joint '{name}' is not a coordinate of the model: it was removed as {r.kind}, "
                                  f"{r.reason}{instead}", name)
        if name not in model.joint_names:
            raise JointValueError(f"unknown joint '{name}'{did_you_mean(name, model.joint_names)} "
                                  f"(joints: {', '.join(model.joint_names)})", name)
        sl = model.v_slice(name) if rate else model.q_slice(name)
        vals = joint_values_array(name, value, coordinate_factors(model, name, rate, units))
        if vals.size != sl.stop - sl.start:
            raise JointValueError(f"joint '{name}' takes {sl.stop - sl.start} values, got {vals.size}", name)
        out[sl] = vals
    return out


def _named_scalars(names, values: Mapping[str, object], what: str, kinds: str, one: str) -> np.ndarray:
    """(len(names),) from ``{name: number}`` (the others 0); :class:`JointValueError` naming the element
    for an unknown name (``what`` it is, ``kinds`` the list's title) or a value that is not ``one`` number."""
    out = np.zeros(len(names))
    for name, value in values.items():
        if name not in names:
            raise JointValueError(f"unknown {what} '{name}'{did_you_mean(name, names)} "
                                  f"({kinds}: {', '.join(names) or 'none'})", name)
        vals = joint_values_array(name, value)
        if vals.size != 1:
            raise JointValueError(f"{what} '{name}' takes {one}, got {vals.size}", name)
        out[names.index(name)] = vals[0]
    return out


def voltage_vector(model, values: Mapping[str, object]) -> np.ndarray | None:
    """The (nmotors,) constant voltages of the model's DC motors (``dynamics.forces.motor_names``) from
    ``{motor: volts}`` (the others 0), None without any given; :class:`JointValueError` naming the motor."""
    if not values:
        return None
    return _named_scalars(tuple(motor_names(model)), values, "motor", "DC motors", "one voltage")


def control_vector(model, values: Mapping[str, object]) -> np.ndarray:
    """The (na,) controls of ``model.actuator_names`` from ``{actuator: number}`` (the others 0);
    :class:`JointValueError` naming the actuator for an unknown name or a value that is not one number."""
    return _named_scalars(tuple(getattr(model, "actuator_names", ())), values, "actuator", "actuators",
                          "one control value")


def run_simulation(composition, cfg, progress: Callable[[float], None] | None = None) -> SimulationResult:
    """Simulate a composition as a pipeline config says (initial state, torques, constant controls of the
    actuators, integrator; the joint springs and actuators act as :func:`dynamics.simulation.simulate` says).

    Unknown joint names in the config are input errors naming the joint.
    """
    model = composition.model
    if model.kind not in SIMULATORS:
        raise InputError("simulation of closed chains needs options.loops: embed "
                         "(loops: lagrange evaluates dynamics but does not simulate)")
    check_simulation_size(cfg.duration, cfg.samples, composition.assembly.source_file)
    units = composition.assembly.value_units
    q0, v0, tau = (_config_vector(model, cfg, key, values, rate, composition.analysis.removed_joints, u)
                   for key, values, rate, u in
                   (("initial.q", cfg.initial_q, False, units), ("initial.v", cfg.initial_v, True, units),
                    ("torques", cfg.torques, True, None)))
    announce_outside_limits(model, q0, composition.joint_properties, set(cfg.initial_q), units)
    try:
        ctrl = control_vector(model, getattr(cfg, "controls", {}))
    except JointValueError as exc:
        file, line = getattr(cfg, "locations", {}).get(f"controls.{exc.joint}", (None, None))
        raise InputError(str(exc), file=file, line=line, key="simulation.controls") from None
    try:
        voltage = voltage_vector(model, getattr(cfg, "voltages", {}))
    except JointValueError as exc:
        file, line = getattr(cfg, "locations", {}).get(f"voltages.{exc.joint}", (None, None))
        raise InputError(str(exc), file=file, line=line, key="simulation.voltages") from None
    try:
        result = simulate(model, q0, v0, cfg.duration, cfg.samples, torque=tau if cfg.torques else None,
                          method=cfg.integrator, rtol=cfg.rtol, atol=cfg.atol, progress=progress,
                          closure_tol=composition.options.tolerances.closure, dt=cfg.dt,
                          joints=composition.joint_properties, ctrl=ctrl, voltage=voltage)
    except (ConstantForcesOnly, TooManyStopEvents) as exc:
        raise InputError(str(exc), file=composition.assembly.source_file, key="simulation.integrator") from None
    names, values = removed_joint_columns(composition.assembly, composition.analysis, result.columns, result.q)
    return result.with_extra(names, values) if names else result


def announce_outside_limits(model, q0, joints, given: set, units=None) -> list[str]:
    """Warn for each one-coordinate joint whose initial position ``q0`` (SI) lies outside its limits (the
    simulation's stops put it at the nearest limit, which must not happen silently); the joints the
    user gave (``given``) and those at their reference position are told apart; values shown in ``units``
    (:class:`parsers.assembly.ValueUnits`, None: SI).  Returns the messages."""
    tree = model.tree_model
    if joints is None or tree.nq != len(q0):
        return []
    messages = []
    for name in tree.joint_names:
        qs, vs = tree.q_slice(name), tree.v_slice(name)
        if qs.stop - qs.start != 1 or vs.stop - vs.start != 1:
            continue
        x, lo, hi = float(q0[qs.start]), float(joints.lower[vs.start]), float(joints.upper[vs.start])
        if lo <= x <= hi:
            continue
        kind = JOINTS[tree.joint_types[tree.joint_index(name)]].q_units
        f, unit = _shown_unit(kind, units)
        which = "initial position" if name in given else "reference position"
        hint = _degrees_hint(name, x, lo, hi) if name in given and kind == "a" and unit == "rad" else ""
        messages.append(f"joint '{name}': {which} {x / f:.6g} is outside its limits [{lo / f:.6g}, {hi / f:.6g}] "
                        f"({unit}): the simulation starts at the nearest limit{hint}")
        log.warning("%s", messages[-1])
    return messages


def _shown_unit(kind: str, units) -> tuple[float, str]:
    """(SI per unit, unit name) of a coordinate of ``kind`` ('a' or 'l') in ``units`` (None: SI)."""
    if units is None:
        return 1.0, "rad" if kind == "a" else "m"
    return (units.angle, units.angle_name) if kind == "a" else (units.length, units.length_name)


def _degrees_hint(name: str, x: float, lo: float, hi: float) -> str:
    """"; did you mean NAME=Xdeg?" when ``x`` read as degrees lies within the limits (SI values are rad)."""
    in_rad = x * np.pi / 180.0
    return f"; did you mean {name}={x:.6g}deg?" if lo <= in_rad <= hi and x != 0 else ""


def _config_vector(model, cfg, key: str, values, rate: bool, removed=(), units=None) -> np.ndarray:
    """joint_vector of one config entry (plain numbers in ``units``); errors located where the config gave
    the joint."""
    try:
        return joint_vector(model, values, rate=rate, removed=removed, units=units)
    except JointValueError as exc:
        file, line = getattr(cfg, "locations", {}).get(f"{key}.{exc.joint}", (None, None))
        raise InputError(str(exc), file=file, line=line, key=f"simulation.{key}") from None


def check_simulation_size(duration: float, samples: int, file=None, line=None) -> None:
    """InputError unless ``duration`` (s) and ``samples`` are finite and within the limits."""
    from mbcompose.parsers import limits
    if not (np.isfinite(duration) and duration > 0):
        raise InputError(f"simulation duration must be a finite number > 0, got {duration}", file=file, line=line)
    if duration > limits.active().duration:
        raise InputError(limits.exceeded("simulation duration in s", duration, "duration"), file=file, line=line)
    if samples > limits.active().samples:
        raise InputError(limits.exceeded("simulation samples", samples, "samples"), file=file, line=line)


def check_steps(duration: float, samples: int, dt: float | None, file=None, line=None) -> None:
    """InputError when ``dt`` would take too many fixed steps (:data:`dynamics.simulation.MAX_STEPS`)."""
    why = too_many_steps(duration, samples, dt)
    if why:
        raise InputError(why, file=file, line=line)


def write_simulation(result: SimulationResult, path, fmt: str = "csv") -> None:
    """Write a trajectory: CSV (``time``, one column per coordinate of the model,
    then the derived joints' columns, the ``v:`` velocity columns, the DC motors' currents ``i:MOTOR``
    (A), the actuators' activations ``act:ACTUATOR`` and ``energy``) or NPZ (arrays ``time``, ``q``, ``v``,
    ``energy``, ``columns``, ``extra_columns``, ``extra_q``, ``current_columns``, ``currents``,
    ``activation_columns``, ``activations``)."""
    none = np.zeros((len(result.t), 0))
    acts = result.activations if result.activations is not None else none
    if fmt == "npz":
        with open(path, "wb") as fh:
            np.savez(fh, time=result.t, q=result.q, v=result.v, energy=result.energy,
                     columns=np.array(result.columns), velocity_columns=np.array(result.velocity_columns),
                     extra_columns=np.array(result.extra_columns),
                     extra_q=result.extra_q if result.extra_q is not None else np.zeros((len(result.t), 0)),
                     current_columns=np.array(result.current_columns),
                     currents=result.currents if result.currents is not None else np.zeros((len(result.t), 0)),
                     activation_columns=np.array(result.activation_columns), activations=acts)
        return
    extra = result.extra_q if result.extra_q is not None else np.zeros((len(result.t), 0))
    currents = result.currents if result.currents is not None else np.zeros((len(result.t), 0))
    header = ["time", *result.columns, *result.extra_columns, *(f"v:{c}" for c in result.velocity_columns),
              *result.current_columns, *result.activation_columns, "energy"]
    data = np.column_stack([result.t, result.q, extra, result.v, currents, acts, result.energy])
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(",".join(header) + "\n")
        np.savetxt(fh, data, delimiter=",", fmt="%.17g")


def energy_summary(result) -> str:
    """One phrase on the energy of a simulation (CLI line, report): its drift relative to the
    energy the motion involves (``SimulationResult.energy_scale``), or, when damping, limit stops or
    applied forces changed it, by how much."""
    E, scale = result.energy, result.energy_scale()
    if result.dissipative:
        change = float(E[-1] - E[0])
        share = f" ({abs(change) / scale:.2e} of the energy scale {scale:.3g} J)" if scale > 0 else ""
        return f"energy change {change:+.3g} J by damping, limit stops and applied forces{share}"
    if not scale > 0:
        return "no motion (energy scale 0 J)"
    return f"relative energy drift {result.energy_drift():.2e} (of the energy scale {scale:.3g} J)"

