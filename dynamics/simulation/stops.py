"""Joint stops (position limits) for the adaptive integrators of trees and closed chains: events and impulses.

The limits are hard, perfectly inelastic stops, the same model as the compiled
fixed-step kernel (:func:`dynamics.compiled.simulate_kernels.enforce_limits`), here
resolved exactly in time:

* free motion is integrated until a limited coordinate reaches a limit (an event of
  ``solve_ivp``, located to the integrator's tolerance);
* there the impulse ``dv = M^-1 E p`` with ``E^T (v + dv) = 0`` stops the coordinates
  on their stops that move outwards (``E`` the unit columns of those coordinates);
* a coordinate whose stop pushes back (force ``lambda`` into the range) is held:
  ``a = a0 + M^-1 E lambda`` with ``E^T a = 0`` (``a0`` the free acceleration), until
  ``lambda`` would pull (another event), when it is released.

A closed chain (an embedded model: loops and joint couplings, tree velocities ``v = X v_ind``) takes
the same impulses with the constrained inverse inertia ``X M_r^-1 X^T`` in place of ``M^-1``
(``M_r = X^T M X`` its mass matrix in independent coordinates, seed 000): a stop on a dependent
coordinate (a mimic finger) acts through the constraints.  Linear joint couplings have a constant ``X``
(:mod:`dynamics.closed.linear`), so ``M_r`` is the tree's mass matrix projected.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from .. import forward_dynamics, mass_matrix
from ..closed.embedding import null_space_basis
from ..closed.linear import reduced_solve
from ..rates import QUATERNION_GAIN, configuration_rate
from ..tolerances import STOP_HOLD_FORCE_TOL


#: most integration segments between stop events in one simulation
MAX_SEGMENTS = 10000


class TooManyStopEvents(RuntimeError):
    """The adaptive integrator met more than :data:`MAX_SEGMENTS` stop events (a joint chattering at
    its limit, as a model whose reference pose lies outside its limits may)."""


def _inverse_inertia_columns(model, q, cols) -> np.ndarray:
    """``M(q)^-1 E`` (nv, len(cols)) for the unit columns ``cols``: the velocity change per unit impulse
    on each of those coordinates; a closed chain's (q closed) is ``X M_r^-1 X[cols]^T``."""
    if model.kind == "embedded":
        lc = model.linear_couplings
        if lc is not None:
            return lc.X @ reduced_solve(lc.mass_matrix(q), lc.XT[:, cols])
        X = null_space_basis(model, q)
        return X @ np.linalg.solve(mass_matrix(model, q), X[cols].T)
    M = mass_matrix(model, q)
    E = np.zeros((model.nv, len(cols)))
    E[cols, np.arange(len(cols))] = 1.0
    return np.linalg.solve(M, E)


def _solve_rows(A, b) -> np.ndarray:
    """The least-norm solution of ``A x = b``: on a closed chain two stops can be one constraint (a
    mimic pair on their limits together), and ``A`` is then singular but consistent."""
    return np.linalg.lstsq(A, b, rcond=None)[0]


def held_forces(model, q, a0, cols, sides) -> np.ndarray:
    """Stop forces ``lambda`` (len(cols),) holding ``cols`` still: ``E^T (a0 + M^-1 E lambda) = 0``;
    sides: -1 (lower stop) or +1 (upper); returned signed so that > 0 pushes into the range."""
    if not cols:
        return np.zeros(0)
    W = _inverse_inertia_columns(model, q, cols)
    lam = _solve_rows(W[cols], -a0[cols])
    return -np.asarray(sides) * lam


def constrained_acceleration(model, q, a0, cols):
    """``a0`` with the coordinates ``cols`` held still by their stops' forces."""
    if not cols:
        return a0
    W = _inverse_inertia_columns(model, q, cols)
    return a0 + W @ _solve_rows(W[cols], -a0[cols])


def stop_impulse(model, q, v, cols) -> np.ndarray:
    """v after the inelastic impulse that zeroes ``v[cols]`` (the least-energy change)."""
    if not cols:
        return v
    W = _inverse_inertia_columns(model, q, cols)
    return v + W @ _solve_rows(W[cols], -v[cols])


class StopSet:
    """The limited coordinates (from :func:`simulate_api.limited_coordinates`) and which are held."""

    def __init__(self, q_index, v_index, lower, upper):
        self.q_index, self.v_index, self.lower, self.upper = q_index, v_index, lower, upper
        self.held: dict[int, int] = {}     # limit row -> side (-1 lower, +1 upper)
        self.contacts = 0

    def on_stop(self, q, hit=None):
        """{row: side} of the coordinates on (or past) a stop; row ``hit`` (an event just located
        it there, to the integrator's tolerance) counts as on its nearer stop."""
        out = {}
        for r, i in enumerate(self.q_index):
            if q[i] <= self.lower[r] or (r == hit and q[i] - self.lower[r] <= self.upper[r] - q[i]):
                out[r] = -1
            elif q[i] >= self.upper[r] or r == hit:
                out[r] = 1
        return out

    def settle(self, model, q, v, a_free, released=(), hit=None, close=None):
        """Clamp q onto the stops, stop outward velocities, choose the held set (in place;
        a_free(q, v) the acceleration without stops);
        ``released`` rows (whose stop force just reached zero) are not held again, ``hit`` the row
        whose stop an event just reached; ``close(q, v) -> (q, v)`` (closed chains) makes the clamped
        state consistent again."""
        touching = self.on_stop(q, hit)
        for r, side in touching.items():
            q[self.q_index[r]] = self.lower[r] if side < 0 else self.upper[r]
            if r not in self.held:
                self.contacts += 1
        if close is not None and touching:
            q[:], v[:] = close(q, v)
        v[:] = self._stopped(model, q, v, touching)
        candidates = {r: side for r, side in touching.items() if r not in released}
        while candidates:
            rows = list(candidates)
            lam = held_forces(model, q, a_free(q, v), [int(self.v_index[r]) for r in rows],
                              [candidates[r] for r in rows])
            if lam.min() >= -STOP_HOLD_FORCE_TOL:
                break
            del candidates[rows[int(np.argmin(lam))]]
        self.held = candidates

    def _stopped(self, model, q, v, touching) -> np.ndarray:
        """v after the impulse that leaves no coordinate on its stop moving outwards: the impulse on the
        outward ones can push another one on its stop outwards (they are coupled through the inertia),
        which then joins the set."""
        rows, out = [], v
        while True:
            more = [r for r, side in touching.items() if r not in rows and side * out[self.v_index[r]] > 0]
            if not more:
                return out
            rows += more
            out = stop_impulse(model, q, v, [int(self.v_index[r]) for r in rows])

    def held_columns(self) -> list[int]:
        """The v indices of the held coordinates."""
        return [int(self.v_index[r]) for r in self.held]

    def events(self, model, a_free):
        """solve_ivp events (a free coordinate reaching a stop, a held one's stop force reaching zero)
        and, for each, the row it watches and whether it is a release; a_free(t, q, v)."""
        nq = model.nq
        out, meaning = [], []
        for r, i in enumerate(self.q_index):
            if r in self.held:
                rows, sides = list(self.held), list(self.held.values())
                k = rows.index(r)

                def release(t, y, k=k, rows=rows, sides=sides):
                    q, v = y[:nq], y[nq:]
                    return (held_forces(model, q, a_free(t, q, v), [int(self.v_index[x]) for x in rows], sides)[k]
                            + STOP_HOLD_FORCE_TOL)
                out.append(release)
                meaning.append((r, True))
            else:
                out.append(lambda t, y, i=i, r=r: y[i] - self.lower[r])
                out.append(lambda t, y, i=i, r=r: self.upper[r] - y[i])
                meaning += [(r, False), (r, False)]
        for e in out:
            e.terminal, e.direction = True, -1
        return out, meaning


def simulate_tree_with_stops(model, y0, t_eval, torque, method, rtol, atol, progress, limits):
    """Adaptive integration of a tree with joint stops: (t (T,), y (T, nq + nv), contacts).

    limits : the (q index, v index, lower, upper) arrays of :func:`simulate_api.limited_coordinates`.
    """
    nq, nv = model.nq, model.nv
    zero = np.zeros(nv)
    stops = StopSet(*limits)
    duration = float(t_eval[-1])

    def a_free(t, q, v):
        return forward_dynamics(model, q, v, zero if torque is None else torque(t, q, v))

    def rhs(t, y):
        q, v = y[:nq], y[nq:]
        tau = zero if torque is None else torque(t, q, v)
        a = forward_dynamics(model, q, v, tau)
        a = constrained_acceleration(model, q, a, stops.held_columns())
        if progress is not None:
            progress(min(t / duration, 1.0))
        return np.concatenate([configuration_rate(model, q, v, stabilise=QUATERNION_GAIN), a])

    y, t, released, hit = np.array(y0, dtype=float), 0.0, set(), None
    ts, ys = [], []
    for _ in range(MAX_SEGMENTS):
        q, v = y[:nq], y[nq:]
        stops.settle(model, q, v, lambda qq, vv, t=t: a_free(t, qq, vv), released, hit)
        pending = t_eval[(t_eval > t) if ts else (t_eval >= t)]
        if not len(pending):
            break
        events, meaning = stops.events(model, a_free)
        sol = solve_ivp(rhs, (t, duration), y, method=method, t_eval=pending, rtol=rtol, atol=atol, events=events)
        if not sol.success:
            raise RuntimeError(f"integration failed: {sol.message}")
        ts.extend(np.atleast_1d(sol.t))
        ys.extend(np.asarray(sol.y, dtype=float).reshape(len(y), -1).T)
        if sol.status != 1:
            break
        k = next(i for i, te in enumerate(sol.t_events) if len(te))
        t, y = float(sol.t_events[k][0]), np.array(sol.y_events[k][0])
        row, is_release = meaning[k]
        released, hit = ({row}, None) if is_release else (set(), row)
    else:
        raise TooManyStopEvents(f"more than {MAX_SEGMENTS} joint stop events by t = {t:.6g} s (joints chattering "
                                "at their limits); use a fixed-step integrator (rk4), whose stops are not events")
    return np.array(ts), np.array(ys), stops.contacts
