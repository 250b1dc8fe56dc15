"""The records of joint springs, dampers and actuators a tree model carries (:mod:`dynamics.forces`
evaluates them; its docstring gives their terminal equations, seed 004 Fig. 1)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .joints import JOINTS

__all__ = ["JointSpring", "ActuatorSpec", "ForceElements"]

#: (nq, nv) of the joints whose configuration is a unit quaternion ``[w, x, y, z]`` (nq 4, nv 3) or
#: ``[p; quaternion]`` (nq 7, nv 6): their springs pull towards the identity (module docstring of
#: :mod:`dynamics.forces`)
QUATERNION_JOINT_SHAPES = ((4, 3), (7, 6))


@dataclass(frozen=True)
class JointSpring:
    """The spring and damper parallel to one joint.

    joint : the joint's name.
    stiffness : N m/rad or N/m; damping : N m s/rad or N s/m (every velocity coordinate).
    springref : the coordinate (rad or m) where a hinge's or slide's spring is relaxed; a ball's and
        a free joint's spring is relaxed at the reference configuration (``neutral()``).
    """

    joint: str
    stiffness: float = 0.0
    damping: float = 0.0
    springref: float = 0.0


@dataclass(frozen=True)
class ActuatorSpec:
    """An actuator on a one-coordinate joint (see the module docstring).

    gain, bias : (3,) affine coefficients (constant, per unit length, per unit velocity).
    ctrlrange, forcerange : (lower, upper); (-inf, inf) when not limited.
    """

    name: str
    joint: str
    gear: float = 1.0
    gain: tuple = (1.0, 0.0, 0.0)
    bias: tuple = (0.0, 0.0, 0.0)
    ctrlrange: tuple = (-np.inf, np.inf)
    forcerange: tuple = (-np.inf, np.inf)


@dataclass(frozen=True)
class ForceElements:
    """The joint springs, dampers and actuators of a tree model, by joint name (:class:`dynamics.SKOModel`
    resolves them to its coordinates once: :meth:`indexed`)."""

    springs: tuple[JointSpring, ...] = ()
    actuators: tuple[ActuatorSpec, ...] = ()
    # set by :meth:`indexed`
    layout: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def actuator_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.actuators)

    def indexed(self, model) -> "ForceElements":
        """These elements with their coordinates in ``model`` (anything with ``joint_types``,
        ``joint_index``, ``q_slice``, ``v_slice``, ``nv``): the arrays the evaluations use."""
        types = dict(zip(model.joint_names, model.joint_types))
        lay = {"damping": np.zeros(model.nv), "q1": [], "v1": [], "k1": [], "ref1": [], "balls": [], "frees": []}
        for s in self.springs:
            if s.joint not in types:
                raise ValueError(f"joint spring on unknown joint {s.joint!r}")
            qs, vs = model.q_slice(s.joint), model.v_slice(s.joint)
            lay["damping"][vs] = s.damping
            if not s.stiffness:
                continue
            if vs.stop - vs.start == 1 and qs.stop - qs.start == 1:
                lay["q1"].append(qs.start), lay["v1"].append(vs.start)
                lay["k1"].append(s.stiffness), lay["ref1"].append(s.springref)
            elif (JOINTS[types[s.joint]].nq, JOINTS[types[s.joint]].nv) in QUATERNION_JOINT_SHAPES:
                # q a unit quaternion (a ball) or [p; quaternion] (a free joint), JOINTS' coordinates
                kind = "balls" if JOINTS[types[s.joint]].nv == 3 else "frees"
                lay[kind].append((qs.start, vs.start, s.stiffness))
            else:
                raise ValueError(f"joint {s.joint!r} ({types[s.joint]}): springs act on one-coordinate joints "
                                 "and on those whose configuration is a quaternion (ball, free)")
        for key in ("q1", "v1"):
            lay[key] = np.array(lay[key], dtype=int)
        lay["k1"], lay["ref1"] = np.array(lay["k1"], dtype=float), np.array(lay["ref1"], dtype=float)
        lay.update(_actuator_layout(self.actuators, model))
        return ForceElements(self.springs, self.actuators, lay)


def _actuator_layout(actuators, model) -> dict:
    """Index and parameter arrays of ``actuators`` in ``model``'s coordinates."""
    qa, va = [], []
    for a in actuators:
        qs, vs = model.q_slice(a.joint), model.v_slice(a.joint)
        if qs.stop - qs.start != 1 or vs.stop - vs.start != 1:
            raise ValueError(f"actuator {a.name!r}: joint {a.joint!r} has {vs.stop - vs.start} freedoms; "
                             "actuators drive one-coordinate joints")
        qa.append(qs.start), va.append(vs.start)
    n = len(actuators)
    rows = lambda key, width: np.array([getattr(a, key) for a in actuators], dtype=float).reshape(n, width)
    return {"act_q": np.array(qa, dtype=int), "act_v": np.array(va, dtype=int), "gear": rows("gear", 1)[:, 0],
            "gain": rows("gain", 3), "bias": rows("bias", 3), "ctrlrange": rows("ctrlrange", 2),
            "forcerange": rows("forcerange", 2)}
