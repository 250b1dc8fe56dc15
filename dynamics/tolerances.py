"""Numerical tolerances of mbcompose, each named after what it bounds and documented here once.

Every package imports its tolerances from this module (``dynamics`` is the
lowest layer, so ``graph``, ``parsers`` and ``composer`` may all import it).
Pipeline options override the two a user may need to change
(:class:`composer.config.Tolerances`: ``rank`` is passed to the graph stage's
rank decisions, ``closure`` to the simulator's loop closure); the defaults
below are what library calls use when no option is given.

Relative tolerances compare a singular value (or a pivot of a QR
factorization) with the largest one; :data:`SINGULAR_FLOOR` keeps that
comparison meaningful for an all-zero matrix.  Lengths are in metres and
angles in radians (assemblies are in SI units).
"""

from __future__ import annotations

__all__ = ["SINGULAR_FLOOR", "GRAPH_RANK_RTOL", "RANK_RTOL", "RCOND_MIN", "RCOND_SWITCH", "CLOSURE_TOL",
           "CLOSURE_CHECK_FACTOR", "NEWTON_MAX_ITER"]

#: the largest singular value below which a matrix counts as zero when forming relative
#: tolerances (``rtol * max(s_max, SINGULAR_FLOOR)``).
SINGULAR_FLOOR = 1e-300

#: relative rank tolerance of the graph stage's geometric decisions (intersections of joint
#: motion subspaces, redundant joints, loop mobility at the reference configuration): input
#: geometry carries the rounding of file formats (often 6-7 digits), so ranks there are
#: decided at 1e-6.  Pipeline option ``tolerances.rank``.
GRAPH_RANK_RTOL = 1e-6

#: relative rank tolerance of closure Jacobians evaluated by the dynamics (constraint
#: embedding, Lagrange multipliers): these are computed to rounding error, so a singular
#: value below 1e-9 of the largest is a redundant constraint.
RANK_RTOL = 1e-9

#: a dependent block ``G_d`` of a loop's closure Jacobian whose reciprocal condition number
#: (smallest / largest singular value) falls below this is singular.
RCOND_MIN = 1e-8

#: forward dynamics and constraint forces (which do not depend on the choice of independent
#: coordinates) re-pick the dependent set of a loop, by QR with column pivoting at the current
#: configuration, when the default set's reciprocal condition number falls below this.
RCOND_SWITCH = 1e-4

#: loop closure error accepted as closed by Newton's method in evaluations (m and rad); the
#: simulator uses the pipeline option ``tolerances.closure`` (default 1e-12) instead.
CLOSURE_TOL = 1e-10

#: functions of a closed configuration refuse a configuration whose closure error exceeds
#: ``CLOSURE_CHECK_FACTOR * CLOSURE_TOL`` (a factor, so that closures to slightly looser
#: tolerances still pass).
CLOSURE_CHECK_FACTOR = 1e3

#: Newton (and Gauss-Newton) iterations per loop before a closure is declared impossible.
NEWTON_MAX_ITER = 50
