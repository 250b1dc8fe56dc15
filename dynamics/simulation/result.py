"""The result of a simulation: a sampled trajectory with its columns named after the joints.

Columns are ``name`` for one-coordinate joints and ``name[i]`` otherwise (the public contract in
DESIGN.md: ``mbcompose simulate``'s CSV).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..energy import kinetic_energy, potential_energy


@dataclass(frozen=True)
class SimulationResult:
    """Sampled trajectory.

    t : (T,) s.  q : (T, nq).  v : (T, nv).  energy : (T,) kinetic + potential, J.
    columns : coordinate column names (len nq).  status : the integrator and its settings.
    closure : (T,) loop closure error norm for closed chains, else None.
    limit_contacts : number of times a joint reached one of its limits.
    extra_columns, extra_q : joints that are not coordinates of the model (the
        chords that close loops, joints removed as redundant), named like the
        others, and their coordinates (T, k); see :func:`derived_joint_columns`.
    currents : (T, nmotors) the DC motors' currents, A, named ``current_columns`` (``i:MOTOR``); None
        without motors.
    activations : (T, nact) the activations of the actuators with activation dynamics, named
        ``activation_columns`` (``act:ACTUATOR``); None without them.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    energy: np.ndarray
    columns: tuple[str, ...]
    velocity_columns: tuple[str, ...]
    status: str
    closure: np.ndarray | None = None
    extra_columns: tuple[str, ...] = ()
    extra_q: np.ndarray | None = None
    limit_contacts: int = 0
    kinetic: np.ndarray | None = None
    dissipative: bool = False
    currents: np.ndarray | None = None
    current_columns: tuple[str, ...] = ()
    activations: np.ndarray | None = None
    activation_columns: tuple[str, ...] = ()

    def with_extra(self, columns, values) -> "SimulationResult":
        """A copy with the joints ``columns`` (their coordinates ``values`` (T, len(columns))) appended to
        the extra columns."""
        values = np.asarray(values, dtype=float).reshape(len(self.t), len(columns))
        if self.extra_q is not None:
            values = np.hstack([self.extra_q, values])
        return replace(self, extra_columns=self.extra_columns + tuple(columns), extra_q=values)

    def energy_scale(self) -> float:
        """The energy the motion involves, J: the largest of |E(0)|, the kinetic energy and the change
        of potential energy over the run (|E(0)| alone would make a system released from rest, whose
        E(0) is a rounding error, drift by 1e17 of nothing); |E(0)| when the kinetic energy was not kept."""
        E = self.energy
        if self.kinetic is None:
            return abs(float(E[0]))
        P = E - self.kinetic
        return max(abs(float(E[0])), float(self.kinetic.max()), float(np.abs(P - P[0]).max()))

    def energy_drift(self) -> float:
        """max |E(t) - E(0)| relative to :meth:`energy_scale` (absolute when the scale is zero)."""
        drift = float(np.abs(self.energy - self.energy[0]).max())
        scale = self.energy_scale()
        return drift / scale if scale > 0 else drift


def coordinate_columns(model, rate: bool = False) -> tuple[str, ...]:
    """Column names: ``joint`` or ``joint[i]`` per coordinate (velocity coordinates if ``rate``)."""
    names = []
    for name in model.joint_names:
        sl = model.v_slice(name) if rate else model.q_slice(name)
        n = sl.stop - sl.start
        if n == 1:
            names.append(name)
        else:
            names.extend(f"{name}[{i}]" for i in range(n))
    return tuple(names)


def energies(model, Q, V) -> tuple[np.ndarray, np.ndarray]:
    """(total, kinetic) energy in J at each sample of ``Q`` (T, nq), ``V`` (T, nv) of a tree: the kinetic energy
    ``v^T M(q) v / 2`` with the mass matrix of :func:`dynamics.mass_matrix` (the compiled composite-body inertia,
    armature included; one configuration per call), the potential of :func:`dynamics.energy.potential_energy`
    (one batched call)."""
    from .. import mass_matrix

    Q, V = np.asarray(Q, dtype=float).reshape(len(Q), model.nq), np.asarray(V, dtype=float).reshape(len(V), model.nv)
    K = np.array([0.5 * float(v @ mass_matrix(model, q) @ v) for q, v in zip(Q, V)], dtype=float).reshape(len(Q))
    P = np.asarray(potential_energy(model, Q), dtype=float).reshape(len(Q)) if len(Q) else np.zeros(0)
    return K + P, K


def total_energy(model, q, v) -> float:
    return float(kinetic_energy(model, q, v) + potential_energy(model, q))


