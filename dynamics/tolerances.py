"""Numerical tolerances of mbcompose, each named after what it bounds and documented here once.

Every package imports its tolerances from this module (``dynamics`` is the
lowest layer, so ``graph``, ``parsers`` and ``composer`` may all import it).
Pipeline options override the two a user may need to change
(:class:`composer.config.Tolerances`, YAML ``options.tolerances``):
``rank`` replaces :data:`GRAPH_RANK_RTOL` in the graph stage and ``closure``
replaces :data:`SIMULATION_CLOSURE_TOL` in the simulator.  Library functions
take the same values as keyword arguments (``rtol=``, ``tol=``,
``closure_tol=``) whose defaults are the constants below.

Relative tolerances compare a singular value (or a pivot of a QR
factorization) with the largest one; :data:`SINGULAR_FLOOR` keeps that
comparison meaningful for an all-zero matrix.  Lengths are in metres and
angles in radians (assemblies are in SI units).

Why two rank tolerances: the graph stage decides ranks of *input geometry*
(joint axes and attachment points as written in files, often rounded to 6-7
digits), so 1e-6; the dynamics decides ranks of closure Jacobians it computes
itself to rounding error, so 1e-9 (a looser value there would drop real
constraints of nearly singular loops).
"""

from __future__ import annotations

import sys

__all__ = ["SINGULAR_FLOOR", "GRAPH_RANK_RTOL", "ATTACHMENT_GAP_RTOL", "INERTIA_RTOL", "CLOSURE_RANK_RTOL", "ROUNDED_CLOSURE_TOL",
           "RCOND_MIN", "RCOND_SWITCH", "PARTITION_RCOND_RATIO", "CLOSURE_TOL", "SIMULATION_CLOSURE_TOL", "CLOSURE_CHECK_FACTOR",
           "NEWTON_MAX_ITER", "NEWTON_MAX_STEP", "NEWTON_ROUNDING_STEP", "SMALL_ANGLE", "OPERATOR_TOL", "DISPLAY_ZERO_RTOL",
           "ADAPTIVE_RTOL", "ADAPTIVE_ATOL", "STEP_GRID_RTOL", "GIMBAL_LOCK_ATOL", "PARALLEL_SINE",
           "TASK_RANK_RTOL", "STRUCTURE_RTOL", "DRAWING_ZERO", "PLOT_LOG_FLOOR", "GEOMETRY_ATOL",
           "DECLARED_GEOMETRY_ATOL", "INERTIA_ROUNDING_RTOL", "INERTIA_SCALE_FLOOR", "FRAME_SCALE_FLOOR", "STRUCTURAL_ZERO"]

#: the largest singular value below which a matrix counts as zero when forming relative
#: tolerances (``rtol * max(s_max, SINGULAR_FLOOR)``); also the floor of any scale a result is
#: divided by (a norm, an energy) that is zero only for degenerate input.
SINGULAR_FLOOR = 1e-300

# ---------------------------------------------------------------- input geometry (parsers, graph)

#: lengths (m) and unit-vector components that agree within this are the same: two poses
#: compared, a point on an axis, two axes parallel, a direction that is zero (readers,
#: exporters). Far above the rounding of poses composed from a file's numbers (~1e-15 m).
GEOMETRY_ATOL = 1e-12

#: two directions or poses *written in an input file* (often with 9-10 digits) are taken as
#: perpendicular, parallel or equal within this: a universal joint's two axes, a gearbox's
#: reference axis, a weld's two sides, a YAML joint's two axes.
DECLARED_GEOMETRY_ATOL = 1e-9

#: relative margin by which an inertia's eigenvalues or leading minors may miss positivity and
#: the triangle inequality and still be accepted (rounding, ~1e-15 of the scale, far below it).
INERTIA_ROUNDING_RTOL = 1e-12

#: inertia entries (kg m^2) all below this are "no inertia written": not checked for physics.
INERTIA_SCALE_FLOOR = 1e-8

#: the size (m) below which a model's extent counts as zero when it scales the graph stage's
#: geometric tolerances (a model that is one point gets scale 1).
FRAME_SCALE_FLOOR = 1e-9

#: relative rank tolerance of the graph stage's geometric decisions (intersections of joint
#: motion subspaces, redundant joints, loop mobility at the reference configuration): singular
#: values above ``GRAPH_RANK_RTOL * max(1, s_max)`` count, so axes that agree to about a
#: micro-radian and a micro-``L`` coincide.  Pipeline option ``tolerances.rank``.
GRAPH_RANK_RTOL = 1e-6

#: a joint's attachment gap (distance of its attachment points plus ``L`` times the angle
#: between its axis lines) above ``ATTACHMENT_GAP_RTOL * L`` (``L`` the mechanism's
#: characteristic length) opens a loop (error) or misplaces a tree joint (warning).
ATTACHMENT_GAP_RTOL = 1e-6

#: relative tolerance of the physical-inertia checks of mass properties (symmetry, positive
#: definiteness, triangle inequality of the principal moments), relative to the largest moment.
INERTIA_RTOL = 1e-9

# ---------------------------------------------------------------- closed chains (dynamics)

#: relative rank tolerance of closure Jacobians evaluated by the dynamics (constraint
#: embedding, Lagrange multipliers): a singular value below 1e-9 of the largest is a
#: redundant constraint.
CLOSURE_RANK_RTOL = 1e-9

#: closure error (m and rad) that a constraint row dropped as dependent may keep while the kept rows
#: close to :data:`CLOSURE_TOL`: a loop's rows are ranked at :data:`GRAPH_RANK_RTOL` (the input
#: geometry's, as the graph stage ranks them), so rows that a file's rounded geometry makes only nearly
#: dependent (a parallelogram whose sides agree to 6-7 digits, toddlerbot's neck; or rows exactly
#: dependent at the reference that the rounding separates away from it) are dropped instead of locking
#: the loop; what they measure is the file's rounding, not an error of ours.  The bound of
#: :data:`ATTACHMENT_GAP_RTOL` for a 1 m mechanism.
ROUNDED_CLOSURE_TOL = 1e-6

#: a dependent block ``G_d`` of a loop's closure Jacobian whose reciprocal condition number
#: (smallest / largest singular value) falls below this is singular.
RCOND_MIN = 1e-8

#: forward dynamics and constraint forces (which do not depend on the choice of independent
#: coordinates) re-pick the dependent set of a loop, by QR with column pivoting at the current
#: configuration, when the default set's reciprocal condition number falls below this.
RCOND_SWITCH = 1e-4

#: the adaptive closed-chain simulator integrates a loop's independent coordinates until its dependent
#: block's reciprocal condition number falls below this fraction of the best-conditioned block's at
#: the current state, then re-partitions (generalized coordinate partitioning).
PARTITION_RCOND_RATIO = 0.1

#: a joint stop holds its coordinate while its force (N or N m) is above minus this: a stop that
#: carries no load (a gripper finger resting at its limit) stays held instead of being released and
#: hit again by rounding (the adaptive simulators' events would chatter at one instant).
STOP_HOLD_FORCE_TOL = 1e-9

#: loop closure error accepted as closed by Newton's method in evaluations (m and rad).
CLOSURE_TOL = 1e-10

#: loop closure error to which the simulator closes every state (m and rad): tighter than
#: :data:`CLOSURE_TOL` so that energy drift measures the integrator, not the closure.
#: Pipeline option ``tolerances.closure``.
SIMULATION_CLOSURE_TOL = 1e-12

#: functions of a closed configuration refuse a configuration whose closure error exceeds
#: ``CLOSURE_CHECK_FACTOR * CLOSURE_TOL`` (a factor, so that closures to slightly looser
#: tolerances still pass).
CLOSURE_CHECK_FACTOR = 1e3

#: Newton (and Gauss-Newton) iterations per loop before a closure is declared impossible.
NEWTON_MAX_ITER = 50

#: a Newton step on the dependent coordinates larger than this (m or rad) has diverged.
NEWTON_MAX_STEP = 1e6

#: a polishing Newton step (the closure error already below its tolerance) no larger than this in
#: every dependent coordinate (rad or m) ends the iteration without being taken: four units in the
#: last place of a coordinate of unit size, the rounding floor of the closure error it would
#: correct (the machine's precision, not a tolerance to choose).  Used alike by the numpy reference
#: (:func:`dynamics.closed.embedding.complete_configuration`) and the compiled closure
#: (:mod:`dynamics.compiled.closure_kernels`), so that their iterates stay the same.
NEWTON_ROUNDING_STEP = 4.0 * sys.float_info.epsilon

# ---------------------------------------------------------------- kinematics and operators

#: angles (rad) below which exponential and logarithm maps of rotations use their Taylor
#: series (the closed forms divide by the angle).
SMALL_ANGLE = 1e-8

#: default tolerance of the workbench's ``isZero()`` / ``isIdentity()``: max |entry| <=
#: ``OPERATOR_TOL * max(1, scale)``, scale being the largest entry of the terms compared.
OPERATOR_TOL = 1e-10

#: entries of a printed matrix below this times its largest entry print as 0 (round-off of
#: rotations in reports, inspect and eval output).
DISPLAY_ZERO_RTOL = 1e-12

#: ``|cos(pitch)|`` below which a rotation is at gimbal lock for roll-pitch-yaw angles (roll is
#: then set to 0 and yaw takes the whole rotation about the vertical).
GIMBAL_LOCK_ATOL = 1e-12

#: the sine of the angle between two directions below which they are parallel (or opposite)
#: to rounding error, where the axis of the rotation between them is undefined.
PARALLEL_SINE = 1e-15

#: relative rank tolerance of an operational space compliance: eigenvalues below this times the
#: largest are directions the mechanism cannot move in (:func:`dynamics.opspace.inertia_from_compliance`).
TASK_RANK_RTOL = 1e-9

#: entries below this times the largest count as structural zeros when the workbench recognises the
#: block structure of a dense matrix (a block-diagonal operator built from an array).
STRUCTURE_RTOL = 1e-12

# ---------------------------------------------------------------- simulation

#: default relative and absolute tolerances of the adaptive integrator (DOP853), per state entry
#: (rad, m, rad/s, m/s); pipeline options ``simulation.rtol`` and ``simulation.atol``.
ADAPTIVE_RTOL = 1e-10
ADAPTIVE_ATOL = 1e-10

#: relative slack when counting the fixed steps in a sample interval, so that an interval that is
#: a whole number of steps up to rounding is not given one step more.
STEP_GRID_RTOL = 1e-12

# ---------------------------------------------------------------- pictures

#: positions in a graph drawing (layout units, about 1 between nodes) closer than this coincide.
DRAWING_ZERO = 1e-9

#: the smallest loop closure error drawn on the logarithmic axis of the simulation plot.
PLOT_LOG_FLOOR = 1e-18

# ---------------------------------------------------------------- STEP materials (parsers.step)

#: relative agreement of a STEP file's density values (converted from the unit each file declares)
#: with the values OpenCascade's XCAF transfer stored: the pairing of the two is accepted when
#: their ratio is the same to this tolerance for every material; the tests compare masses with
#: B-rep volume times density to it.
STEP_DENSITY_RTOL = 1e-9

#: sewing tolerance (mm) with which the STEP reader closes a part's open shells into a solid
#: (``BRepBuilderAPI_Sewing``; OpenCascade's default, the B-rep's own precision): faces that
#: meet closer than this are joined, wider gaps leave the part open (skipped with a warning).
STEP_SEWING_TOL = 1e-6

#: generated code (:mod:`dynamics.codegen`): a constant of the model (a placement's rotation entry,
#: an axis component) below this in magnitude is the rounding residue of an exact zero (``cos(pi/2)``
#: = 6e-17 in URDF rpy angles) and is folded away as one; the results move by this times the
#: model's lengths, far below the 1e-12 agreement with the numpy reference.
STRUCTURAL_ZERO = 1e-15
