"""Coordinates of the joints the reduction removed (seed 004 Table 3), along a trajectory of the
joints it kept, so that a simulation names every joint of the input."""

from __future__ import annotations

import numpy as np

from mbcompose.dynamics.joints import neutral
from mbcompose.parsers.assembly import Assembly


def removed_joint_columns(assembly: Assembly, analysis, columns, q) -> tuple[list[str], np.ndarray]:
    """``(names, values (T, k))``: the columns of the removed joints beside a trajectory ``q`` (T, nq)
    whose columns are named ``columns`` (``joint`` or ``joint[i]``).

    A redundant revolute or prismatic joint has the same freedom as the joint
    kept in its place, so its coordinate is ``ref + s (q_kept - ref_kept)`` with ``s = +-1``
    from the directions of the two axes and of the two joints (reference and
    secondary swapped or not).  Joints removed because their pair locked or was
    already rigid never move: their columns hold their ``ref`` (zero unless given), or the
    joint's neutral configuration (a unit quaternion) when it has several coordinates.
    """
    q = np.asarray(q, dtype=float)
    names, values = [], []
    for r in analysis.removed_joints:
        joint = assembly.joint(r.name)
        if joint.nq == 0:
            continue
        if r.kind == "redundant" and r.kept in columns and joint.nq == 1:
            kept = assembly.joint(r.kept)
            kept_reduced = next((j for j in analysis.reduced_joints if j.name == r.kept), None)
            same_way = kept_reduced is None or (kept_reduced.reference, kept_reduced.secondary) == (
                r.reference, r.secondary)
            sign = np.sign(float(np.dot(joint.axis, kept.axis))) * (1.0 if same_way else -1.0)
            col = list(columns).index(r.kept)
            values.append(joint.ref + sign * (q[:, col:col + 1] - kept.ref))   # each at its own ref
            names.append(r.name)
        elif r.kind in ("locking", "rigid", "internal"):
            names.extend([r.name] if joint.nq == 1 else [f"{r.name}[{i}]" for i in range(joint.nq)])
            still = np.array([joint.ref]) if joint.nq == 1 else neutral(joint.type)
            values.append(np.tile(still, (len(q), 1)))
    return names, np.hstack(values) if values else np.zeros((len(q), 0))
