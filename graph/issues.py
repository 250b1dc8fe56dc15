"""Findings of the graph stage that are not exceptions: errors, warnings and information.

Severity levels (what the CLI does with them is the CLI's business; the
intended use is exit code 2 when any ``error`` is present):

========================== ======== =====================================================
code                       severity meaning
========================== ======== =====================================================
``disconnected``           error    bodies that no chain of joints connects to ground
``loop-not-closed``        error    a loop whose joint frames do not meet at the
                                    reference configuration
``overconstrained-loop``   warning  a loop with mobility <= 0 (it cannot move)
``redundant-constraints``  warning  a loop whose closure Jacobian has rank < 6 (not planar)
``planar-loop``            info     a planar loop: its three out-of-plane closure constraints
                                    are redundant, as every planar mechanism's are
``joint-frame-gap``        warning  a tree joint whose two attachment points differ
``locked-pair``            warning  joints on one pair of bodies that leave no freedom:
                                    the pair was merged into one composite
``partial-pair``           warning  joints on one pair with a common motion smaller than
                                    each joint's, but not zero: kept, and a loop
``actuated-removed``       warning  an actuated joint removed as redundant (another
                                    actuated joint with the same freedoms was kept)
========================== ======== =====================================================
"""

from __future__ import annotations

from mbcompose.dynamics.records import record

ERROR = "error"
WARNING = "warning"
INFO = "info"


@record(eq=True)
class Issue:
    """One finding. ``subjects`` names the bodies, joints, composites or loops concerned."""

    severity: str
    code: str
    message: str
    subjects: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.severity}: {self.message}"
