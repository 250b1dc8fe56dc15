"""Checks of command-line values: one clean error for every bad value.

Finite floats (``--duration nan`` is refused), choices and commands that say
"did you mean", joint values and points that are finite numbers within the
``magnitude`` limit, ``--limit NAME=VALUE``, output folders that must exist,
and SIGTERM unwinding like Ctrl-C so that staged outputs are discarded.
"""

from __future__ import annotations

from pathlib import Path

import click

from mbcompose.parsers import limits as input_limits
from mbcompose.parsers.errors import InputError, did_you_mean


def terminate_cleanly_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C (staged outputs are discarded), exit status 143."""
    import signal
    import threading

    def handler(signum, frame):
        click.echo("error: terminated", err=True)
        raise SystemExit(128 + signum)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


class SuggestingChoice(click.Choice):
    """click.Choice whose error adds "did you mean" for a mistyped value."""

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            raise click.BadParameter(f"{exc.message}{did_you_mean(value, self.choices)}", ctx, param) from None


class FiniteFloat(click.ParamType):
    """A finite float (nan and inf refused), > 0 when ``positive``."""

    name = "float"

    def __init__(self, positive: bool = False):
        self.positive = positive

    def convert(self, value, param, ctx):
        try:
            v = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if v != v or v in (float("inf"), float("-inf")):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.positive and not v > 0:
            self.fail(f"{value!r} must be > 0", param, ctx)
        return v


def limit_overrides(specs) -> None:
    """Apply ``--limit NAME=VALUE`` options (over the defaults of :mod:`parsers.limits`)."""
    values = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        try:
            values[name.strip()] = float(value) if sep else None
        except ValueError:
            values[name.strip()] = value
    try:
        input_limits.set_default(input_limits.checked_limits(values, input_limits.InputLimits()))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--limit") from None


def check_simulation_options(duration: float, samples: int, dt: float | None = None) -> None:
    from mbcompose.composer.simulation import check_simulation_size, check_steps

    try:
        check_simulation_size(duration, 2)
    except InputError as exc:
        raise click.BadParameter(exc.message, param_hint="--duration") from None
    try:
        check_simulation_size(1.0, samples)
    except InputError as exc:
        raise click.BadParameter(exc.message, param_hint="--samples") from None
    try:
        check_steps(duration, samples, dt)
    except InputError as exc:
        raise click.BadParameter(exc.message, param_hint="--dt") from None


def check_output_folder(out: Path) -> None:
    """The folder of an output file must exist, be a folder and take new files before any work is done."""
    from mbcompose.composer.outputs import check_writable, prepare_directory

    folder = out.parent if str(out.parent) else Path(".")
    prepare_directory(folder, create=False)
    check_writable(folder)


def checked_values(values: dict, what: str) -> dict[str, object]:
    """Joint values that are finite numbers (or lists of them) within the magnitude limit."""
    from mbcompose.composer.simulation import joint_values_array

    for name, value in values.items():
        try:
            joint_values_array(name, value)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint=what) from None
    return values


def point_value(spec: str):
    """``'x,y,z'`` -> (3,) finite array within the magnitude limit; BadParameter otherwise."""
    import numpy as np

    try:
        pt = np.array([float(x) for x in spec.split(",")])
    except ValueError:
        pt = None
    if pt is None or pt.shape != (3,):
        raise click.BadParameter("expected 'x,y,z'", param_hint="--point")
    if not np.all(np.isfinite(pt)):
        raise click.BadParameter(f"coordinates must be finite, got {spec!r}", param_hint="--point")
    for v in pt:
        too_big = input_limits.check_magnitude(float(v), "coordinate")
        if too_big:
            raise click.BadParameter(too_big, param_hint="--point")
    return pt


def suggest_choices(group: click.Group) -> None:
    """Every click.Choice option of every command says "did you mean" for a typo."""
    for command in group.commands.values():
        for param in command.params:
            if isinstance(param.type, click.Choice) and not isinstance(param.type, SuggestingChoice):
                param.type = SuggestingChoice(param.type.choices, param.type.case_sensitive)
