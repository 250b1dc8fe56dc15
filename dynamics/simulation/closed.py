"""Closed chains in simulation: the state ``[q, v_ind]`` of a constraint-embedded model.

On every evaluation the dependent coordinates of q are re-solved by Newton's method (the
independent ones kept), the full v follows from the null-space map, and the embedded forward
dynamics gives the accelerations (seed 000; :mod:`dynamics.embedding`), so the dependent
coordinates never leave the constraint manifold, whatever the integrator does.
"""

from __future__ import annotations

import numpy as np

from .. import embedding as E
from .. import forward_dynamics
from ..closed.closure import closure_error
from ..rates import QUATERNION_GAIN, configuration_rate
from ..tolerances import SIMULATION_CLOSURE_TOL
from .result import SimulationResult, coordinate_columns, energies


def closed_chain_rhs(em, torque, duration, progress, tol):
    """``(rhs(t, y), close(q))`` of a constraint-embedded closed chain over ``y = [q, v_ind]`` (see the
    module docstring): ``torque`` f(t, q, v) or None, ``progress(fraction)`` or None, ``tol`` the
    Newton tolerance of the closure."""
    tree = em.tree_model
    zero = np.zeros(em.nv)

    def close(q):
        return E.complete_configuration(em, q_guess=q, tol=tol)

    def rhs(t, y):
        q = close(y[:em.nq])
        v = E.complete_velocity(em, q, y[em.nq:])
        tau = zero if torque is None else torque(t, q, v)
        a = forward_dynamics(em, q, v, tau)
        if progress is not None:
            progress(min(t / duration, 1.0))
        return np.concatenate([configuration_rate(tree, q, v, stabilise=QUATERNION_GAIN), a[em.independent_v]])

    return rhs, close


def closed_chain_result(em, t, q, v_ind, status: str, closure_tol) -> SimulationResult:
    """The result of a closed-chain run: every sample closed to ``closure_tol`` (its loop closure
    error reported), full velocities, energy and the loop-closing joints' columns (the closure and the
    velocities compiled, :mod:`dynamics.compiled.closed_api`, with the numpy reference as fallback)."""
    from ..compiled import closed_api   # numba is imported on first use

    tree = em.tree_model
    tol = SIMULATION_CLOSURE_TOL if closure_tol is None else closure_tol
    qs = np.array([closed_api.complete_configuration(em, qi, tol=tol) for qi in q])
    vs = np.array([closed_api.complete_velocity(em, qi, vi) for qi, vi in zip(qs, v_ind)])
    energy, kinetic = energies(tree, qs, vs)
    closure = np.array([np.max(np.abs(closure_error(tree, em.chords, qi)), initial=0.0) for qi in qs])
    result = SimulationResult(t=np.asarray(t), q=qs, v=vs, energy=energy, columns=coordinate_columns(tree),
                              velocity_columns=coordinate_columns(tree, rate=True), status=status, closure=closure,
                              kinetic=kinetic)
    names, values = chord_columns(em, qs, vs)
    return result.with_extra(names, values)


def chord_columns(em, qs, vs) -> tuple[list[str], np.ndarray]:
    """Coordinates of the loop-closing joints along a trajectory (``name`` or ``name[i]``)."""
    names: list[str] = []
    rows = []
    for q, v in zip(qs, vs):
        coords = E.chord_coordinates(em, q, v)
        row = []
        for c in em.chords:
            if c.name not in coords:
                continue
            value = np.atleast_1d(coords[c.name][0])
            if len(rows) == 0:
                names.extend([c.name] if value.size == 1 else [f"{c.name}[{i}]" for i in range(value.size)])
            row.extend(value.tolist())
        rows.append(row)
    return names, np.array(rows, dtype=float).reshape(len(qs), len(names))


