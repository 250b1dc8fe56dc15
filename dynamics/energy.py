"""Kinetic and gravitational potential energy.

``T = 1/2 sum_k V(k)^T M(k) V(k) + 1/2 v^T J v = 1/2 v^T M(q) v`` (seed 002 Eqs. 10, 16;
``J`` the diagonal rotor inertia, ``model.armature``) and
``U = -sum_k m_k g . c_k`` with ``c_k`` the world position of body k's centre of
mass (zero at the ground origin).
"""

from __future__ import annotations

import numpy as np

from .batch import out, prepare
from .batch import as_batch
from .kinematics import body_poses
from .model import SKOModel

__all__ = ["kinetic_energy", "potential_energy"]


def kinetic_energy(model: SKOModel, q, v):
    """Kinetic energy, J: scalar or (B,)."""
    qb, vb, single, w, V, *_ = prepare(model, q, v)
    e = 0.5 * np.einsum("bki,kij,bkj->b", V, model.M_body, V) + 0.5 * np.einsum("bi,i,bi->b", vb, model.armature, vb)
    return out(e, single)


def potential_energy(model: SKOModel, q):
    """Gravitational potential energy ``-sum m_k g . c_k``, J: scalar or (B,)."""
    qb, s = as_batch(q, model.nq, "q")
    R, p = body_poses(model, qb)
    c = p + (R @ model.com[..., None])[..., 0]
    e = -np.einsum("k,bkj,j->b", model.mass, c, model.gravity)
    return out(e, s)
