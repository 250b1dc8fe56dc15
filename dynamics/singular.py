"""A singular mass matrix: the error raised where accelerations or M^-1 are not defined.

A body with zero mass, or a zero principal moment of inertia, on a joint that lets it
move along that direction leaves the mass matrix singular (URDF and MJCF files allow
such bodies; Pinocchio and MuJoCo read them too).  ``M(q)`` is then still defined, and
so are inverse dynamics and ``det M = 0``; forward dynamics and ``M^-1`` are not.  The
articulated-body recursion meets the singularity as a zero articulated inertia ``D(k)``
(seed 001, Algorithm 6.1); this module turns it into one error that names the joints
whose coordinates nothing resists.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SingularMassMatrix", "singular_mass_matrix"]


class SingularMassMatrix(np.linalg.LinAlgError):
    """The mass matrix is singular at the given configuration (forward dynamics undefined)."""


def singular_mass_matrix(joint_names, v_offset, M) -> SingularMassMatrix:
    """The error for a singular mass matrix ``M`` (nv, nv), naming the joints of its null direction.

    joint_names : names of the model's joints; v_offset (n+1,) : first velocity index of each.
    The eigenvector of M's smallest eigenvalue says which coordinates move freely; each joint
    holding an entry above a third of its largest is named.
    """
    w, V = np.linalg.eigh(0.5 * (M + M.T))
    direction = np.abs(V[:, 0])
    moved = np.flatnonzero(direction > direction.max() / 3)
    joint_of = np.searchsorted(np.asarray(v_offset), moved, side="right") - 1
    names = [joint_names[k] for k in dict.fromkeys(joint_of.tolist())]
    listed = ", ".join(repr(n) for n in names)
    return SingularMassMatrix(
        f"the mass matrix is singular at this configuration (smallest eigenvalue {w[0]:.3g}): nothing resists "
        f"motion of joint{'s' if len(names) > 1 else ''} {listed} (a body with zero mass or a zero principal "
        "moment of inertia moves there), so forward dynamics is not defined; give the body mass and inertia, "
        "or fix the joint")
