"""URDF ``<joint>`` elements: their types, the axis in the assembly frame and ``<limit>`` (see
:mod:`parsers.urdf.reader`).

A limit beyond the ``magnitude`` limit or infinite (``lower="-1e16"``, as example-robot-data's
iris writes "unbounded") is no limit (:func:`parsers.limits.joint_bound`).

Position limits (``lower``/``upper``) are kept for the joint types that take them (revolute and
prismatic, :mod:`dynamics.joints`); URDF gives a continuous joint none, so any written on one
(or on a planar or floating joint) are dropped with a warning, as Pinocchio's and MuJoCo's URDF
importers ignore them.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from mbcompose.dynamics.joints import JOINTS

from ..assembly import Limits, frozen
from ..limits import joint_bound
from ..xml import attr_float, attr_float_list, error, float_rows, float_values, where

log = logging.getLogger(__name__)

#: URDF joint type -> ours
URDF_JOINT_TYPES = {"revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic",
                    "fixed": "fixed", "floating": "free", "planar": "planar"}

#: the axis of joint types without one (unused), shared read-only
_NO_AXIS = frozen(np.array([0.0, 0.0, 1.0]))


def joint_axes(joints: list) -> list[np.ndarray]:
    """The axis of each joint ``(its <axis> or None, element, name, type, pose)`` in the assembly
    frame, read-only (:func:`_joint_axis`); the texts of all the joints converted and turned
    together, or, when one is bad or zero, read one by one (which raises for it)."""
    axial = [k for k, joint in enumerate(joints) if JOINTS[joint[3]].has_axis]
    out = [_NO_AXIS] * len(joints)
    if not axial:
        return out
    texts = []
    for k in axial:
        a_el = joints[k][0]
        texts.append(_X_AXIS if a_el is None else a_el.get("xyz", _X_AXIS))
    local = float_rows(texts, 3)
    norm = None if local is None else np.sqrt((local * local).sum(axis=1))
    if norm is None or not (norm > 0.0).all():
        return [_joint_axis(*joint) for joint in joints]
    R = np.array([joints[k][4].rotation for k in axial])
    for k, axis in zip(axial, frozen(np.matmul(R, (local / norm[:, None])[:, :, None]))[:, :, 0]):
        out[k] = axis
    return out


_X_AXIS = "1 0 0"


def _joint_axis(a_el, j_el, jname, jtype, pose) -> np.ndarray:
    """The joint axis in the assembly frame, read-only (+z, unused, for types without one), read alone
    (``a_el``: the joint's ``<axis>`` or None)."""
    if not JOINTS[jtype].has_axis:
        return _NO_AXIS
    x, y, z = (1.0, 0.0, 0.0) if a_el is None else attr_float_list(a_el, "xyz", 3, (1.0, 0.0, 0.0))
    n = math.sqrt(x * x + y * y + z * z)
    if not n > 0:
        raise error(a_el if a_el is not None else j_el, f"joint {jname!r}: axis must be non-zero")
    return frozen(pose.rotation @ np.array([x / n, y / n, z / n]))


def joint_limits(l_el, jname, jtype, memo: dict | None = None) -> Limits:
    """A joint's ``<limit>`` (``l_el``, None when it has none) for our joint type ``jtype``; lower >
    upper is kept as written with a warning (Pinocchio accepts it); lower/upper of a type that takes
    no position limits are dropped, with one (without, for a fixed joint: nothing moves).

    memo : the limits read from the same file, keyed by their four texts and whether the type takes
        position limits (half the ``<limit>`` elements of a robot repeat another's); a Limits is
        immutable, so shared."""
    if l_el is None:
        return _NO_LIMITS
    texts = tuple(map(l_el.get, _LIMIT_KEYS))
    takes = JOINTS[jtype].takes_limits
    key = ("limit", texts, takes)
    found = None if memo is None else memo.get(key)
    if found is None:
        values = float_values(texts) or [_bound(l_el, k) for k in _LIMIT_KEYS]
        found = (values, Limits(*values) if takes else Limits(None, None, *values[2:]))
        if memo is not None:
            memo[key] = found
    (lo, hi, _, _), limits = found
    if not takes:
        if (lo is not None or hi is not None) and JOINTS[jtype].nv:
            log.warning("%s: joint %r: a %s joint has no position limits (only %s joints do); lower/upper "
                        "ignored", where(l_el), jname, l_el.getparent().get("type"), ", ".join(_LIMITED))
    elif lo is not None and hi is not None and lo > hi:
        log.warning("%s: joint %r: limit lower %g > upper %g (kept as written, as Pinocchio does)",
                    where(l_el), jname, lo, hi)
    return limits


def _bound(l_el, key) -> float | None:
    """Attribute ``key`` of ``<limit>`` (:func:`parsers.limits.joint_bound`: beyond ``magnitude``
    or infinite is no limit, as ``lower="-1e16"`` means); None when absent."""
    text = l_el.get(key)
    if text is None:
        return None
    try:
        return joint_bound(text)
    except ValueError:
        return attr_float(l_el, key)  # (raises the reader's message for it)


_LIMIT_KEYS = ("lower", "upper", "velocity", "effort")
#: the URDF types that take position limits (for messages)
_LIMITED = tuple(u for u, t in URDF_JOINT_TYPES.items() if JOINTS[t].takes_limits)
#: the limits of a joint without ``<limit>`` (immutable, so shared)
_NO_LIMITS = Limits()
