"""What ``mbcompose eval`` says: the body and point of a task frame, the operational space
inertia with its rank check, and the printed value (text or JSON).

Helpers of :mod:`composer.cli.commands`; they raise ``click.BadParameter`` for bad options and
:class:`parsers.errors.InputError` for a quantity that does not exist at the state.
"""

from __future__ import annotations

import json

import click

from mbcompose.parsers.errors import InputError, did_you_mean

from ..formatting import format_matrix, plural
from .values import point_value


def frame_options(composition, body: str | None, point: str | None):
    """(tree body name, point in its frame (3,) or None, note) for jacobian / opspace-inertia.

    ``body`` may name a composite (a body of the model) or one of its original
    parts; a part's point (its own frame) is moved into the composite's frame,
    whose origin is the composite's tree joint origin, axes those of the assembly
    at the reference configuration (:mod:`graph.model.tree`).
    """
    import numpy as np

    model = composition.model
    names = list(model.tree_model.body_names)
    parts = {m: c.name for c in composition.analysis.composites for m in c.members}
    target = body or names[-1]
    pt = point_value(point) if point else None
    if target in names:
        return target, pt, "" if body else f"{target!r} (the model's last body; choose another with --body)"
    if target not in parts or parts[target] not in names:
        raise click.BadParameter(f"unknown body {target!r}{did_you_mean(target, names + list(parts))} "
                                 f"(bodies: {', '.join(names)})", param_hint="--body")
    composite = parts[target]
    origin = next(e.joint.origin for e in composition.tree.edges if e.child == composite)
    part_pose = composition.assembly.body(target).pose
    pt = part_pose.apply(np.zeros(3) if pt is None else pt) - np.asarray(origin, float)
    return composite, pt, f"part {target!r} of composite body {composite!r}, point {np.round(pt, 9).tolist()} " \
                          f"in the composite's frame"


def opspace_inertia(file, model, q, target, pt, frame, directions, pinv):
    """Lambda of the task frame (``dynamics.operational_space_inertia``); a rank-deficient task is an
    InputError naming the rank unless ``pinv``; an unknown direction a BadParameter."""
    from mbcompose import dynamics

    try:
        return dynamics.operational_space_inertia(model, q, [target], None if pt is None else [pt], frame,
                                                  directions=directions, pseudo_inverse=pinv)
    except dynamics.RankDeficientTask as exc:
        raise InputError(f"the operational space inertia of {target!r} does not exist here: {exc} "
                         f"({plural(model.nv, 'joint freedom')}; choose fewer --directions, e.g. 'linear' or "
                         f"'x,z', or use --pinv for the pseudo-inverse)", file=file) from None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--directions") from None


def print_value(composition, quantity, value, frame, fmt, note, rows):
    """Echo ``value`` with its coordinate (or task direction ``rows``) names, as text or JSON."""

    from mbcompose.dynamics.simulation import coordinate_columns
    from mbcompose.dynamics.opspace import TASK_DIRECTIONS

    model = composition.model
    columns = list(model.independent) if model.kind == "embedded" and quantity in ("mass-matrix", "jacobian") \
        else list(coordinate_columns(model, rate=True))
    if rows is not None:
        columns = [TASK_DIRECTIONS[r] for r in rows]
    framed = quantity in ("jacobian", "opspace-inertia")
    if fmt == "json":
        doc = {"quantity": quantity, "coordinates": columns, "frame": frame if framed else None,
               "value": value.tolist()}
        if note:
            doc["note"] = note
        click.echo(json.dumps(doc, indent=2))
        return
    what = "task directions" if rows is not None else "coordinates"
    where = f", {frame} axes" if framed else ""
    click.echo(f"{quantity} of {composition.assembly.name} ({what}: {', '.join(columns)}{where})")
    if note:
        click.echo(f"body: {note}")
    click.echo(format_matrix(value))
