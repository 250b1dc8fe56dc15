"""Flat arrays of a rigid-body tree for the compiled kernels, and the ``Data`` work arrays.

``FlatModel`` is built once per :class:`dynamics.model.SKOModel` (Pinocchio's static
``Model``); :class:`Data` holds the work arrays the kernels fill (Pinocchio's ``Data``),
allocated once by ``model.create_data()``.  Nothing here compiles: building the arrays
is numpy only.

Layout (n bodies, node k = body k, ``parent[k] < k``)
-----------------------------------------------------
``arrays`` is the tuple the kernels unpack, in this order:

=============  ===========  ============================================================
name           shape        meaning
=============  ===========  ============================================================
parent         (n,) int     parent body, -1 for a root
kind           (n,) int     joint kind code (:data:`KIND`)
q_offset       (n+1,) int   first coordinate of joint k in q
v_offset       (n+1,) int   first velocity of joint k in v
placement_R    (n, 3, 3)    joint frame orientation in the parent body frame
placement_p    (n, 3) m     joint frame origin in the parent body frame
axis, axis2    (n, 3)       unit joint axes in the joint frame (zeros where unused)
plane          (n, 2, 3)    in-plane axes e1, e2 of planar joints (zeros elsewhere)
S_const        (n, 6, 6)    rows 0..n_k-1: motion subspace H(k) (universal: at q2 = 0)
M_body         (n, 6, 6)    spatial inertia about the body origin (seed 002 Eq. 14)
gravity        (3,) m/s^2   ground frame
armature       (nv,)        rotor inertia added to the diagonal of M (kg m^2 or kg)
=============  ===========  ============================================================
"""

from __future__ import annotations

import numpy as np

from .. import joints as J

__all__ = ["KIND", "FlatModel", "Data", "flat_model", "model_views", "work_views", "work_size"]

#: joint kind codes of the kernels (continuous shares revolute's code)
KIND = {"fixed": 0, "revolute": 1, "continuous": 1, "prismatic": 2, "cylindrical": 3, "universal": 4,
        "spherical": 5, "planar": 6, "free": 7}


class FlatModel:
    """Static flat arrays of one rigid-body tree (see module table).

    The kernels receive two packed arrays (numba dispatches plain arrays in a fraction
    of the time it needs for a tuple of arrays) and unpack them with
    :func:`model_views` into the tuple of the module table.

    Attributes
    ----------
    ints : (2 + 4 n + 2,) int64 -- ``[n, nv, parent, kind, q_offset, v_offset]``
    floats : float64 -- placement_R ... armature, flattened in table order
    n_bodies, nq, nv : int
    """

    def __init__(self, model):
        n = model.n_bodies
        self.n_bodies, self.nq, self.nv = n, model.nq, model.nv
        kind = np.array([KIND[t] for t in model.joint_types], dtype=np.int64)
        plane = np.zeros((n, 2, 3))
        S = np.zeros((n, 6, 6))
        for k, t in enumerate(model.joint_types):
            if t == "planar":
                plane[k] = J.plane_basis(model.axis[k])
            H = model.H_const[k][0]
            S[k, :H.shape[0]] = H
        armature = np.zeros(model.nv)
        given = getattr(model, "armature", None)
        if given is not None:
            armature[:] = np.asarray(given, dtype=float)
        self.ints = np.concatenate([[n, model.nv], model.parent, kind, model.q_offset, model.v_offset]).astype(np.int64)
        parts = (model.placement_R, model.placement_p, model.axis, model.axis2, plane, S, model.M_body,
                 model.gravity, armature)
        self.floats = np.concatenate([np.asarray(x, dtype=float).ravel() for x in parts])
        self.arrays = model_views(self.ints, self.floats)


def model_views(ints, floats):
    """The tuple of the module table as views of the packed arrays (plain Python; the
    kernels call its compiled twin)."""
    n, nv = ints[0], ints[1]
    parent, kind = ints[2:2 + n], ints[2 + n:2 + 2 * n]
    q_offset, v_offset = ints[2 + 2 * n:3 + 3 * n], ints[3 + 3 * n:4 + 4 * n]
    o = 0
    placement_R = floats[o:o + 9 * n].reshape((n, 3, 3))
    o += 9 * n
    placement_p = floats[o:o + 3 * n].reshape((n, 3))
    o += 3 * n
    axis = floats[o:o + 3 * n].reshape((n, 3))
    o += 3 * n
    axis2 = floats[o:o + 3 * n].reshape((n, 3))
    o += 3 * n
    plane = floats[o:o + 6 * n].reshape((n, 2, 3))
    o += 6 * n
    S_const = floats[o:o + 36 * n].reshape((n, 6, 6))
    o += 36 * n
    M_body = floats[o:o + 36 * n].reshape((n, 6, 6))
    o += 36 * n
    gravity = floats[o:o + 3]
    armature = floats[o + 3:o + 3 + nv]
    return (parent, kind, q_offset, v_offset, placement_R, placement_p, axis, axis2, plane, S_const, M_body,
            gravity, armature)


def flat_model(model) -> FlatModel:
    """The :class:`FlatModel` of an ``SKOModel``, built on first use and kept on the model."""
    flat = model.__dict__.get("_flat_model")
    if flat is None:
        flat = FlatModel(model)
        model.__dict__["_flat_model"] = flat
    return flat


def work_size(n_bodies: int) -> int:
    """Length of the packed work array of a tree of n bodies."""
    return 240 * n_bodies + 156


def work_views(work, n):
    """Work arrays (see :class:`Data`) as views of the packed array ``work`` (work_size(n),)
    (plain Python; the kernels call its compiled twin)."""
    R = work[0:9 * n].reshape((n, 3, 3))
    p = work[9 * n:12 * n].reshape((n, 3))
    S = work[12 * n:48 * n].reshape((n, 6, 6))
    V = work[48 * n:54 * n].reshape((n, 6))
    A = work[54 * n:60 * n].reshape((n, 6))
    f = work[60 * n:66 * n].reshape((n, 6))
    c = work[66 * n:72 * n].reshape((n, 6))
    P = work[72 * n:108 * n].reshape((n, 6, 6))
    z = work[108 * n:114 * n].reshape((n, 6))
    PH = work[114 * n:150 * n].reshape((n, 6, 6))
    Dinv = work[150 * n:186 * n].reshape((n, 6, 6))
    G = work[186 * n:222 * n].reshape((n, 6, 6))
    eps = work[222 * n:228 * n].reshape((n, 6))
    oR = work[228 * n:237 * n].reshape((n, 3, 3))
    op = work[237 * n:240 * n].reshape((n, 3))
    o = 240 * n
    F = work[o:o + 36].reshape((6, 6))
    T = work[o + 36:o + 72].reshape((6, 6))
    Y = work[o + 72:o + 108].reshape((6, 6))
    vec = work[o + 108:o + 156].reshape((8, 6))
    return R, p, S, V, A, f, c, P, z, PH, Dinv, G, eps, oR, op, F, T, Y, vec


class Data:
    """Work arrays of the compiled kernels for one model (Pinocchio's ``Data``).

    Created by ``model.create_data()``; the kernels overwrite them on every call, so
    after a call they hold that call's intermediate results (body frames unless stated):

    R, p : (n, 3, 3), (n, 3)       pose of body k in its parent (ground for roots)
    S : (n, 6, 6)                  rows 0..n_k-1: H(k) at the current q (universal joints only)
    V, A, f, c : (n, 6)            velocity V(k), acceleration alpha(k), force f(k) (RNEA),
                                   velocity-product acceleration a(k) (ABA)
    P, z : (n, 6, 6), (n, 6)       articulated body inertia P(k) and residual force z(k) (ABA)
    PH, Dinv, G : (n, 6, 6)        ``P H*`` (6, n_k), ``D^-1`` (n_k, n_k), ``G = P H* D^-1`` (6, n_k)
    eps : (n, 6)                   ``T - H z`` of each node (seed 001 Eq. 58c)
    oR, op : (n, 3, 3), (n, 3)     pose of each body in the ground frame
    F, T, Y : (6, 6); vec : (8, 6) scratch

    ``work`` is the packed array the kernels receive; the attributes are views of it.
    """

    names = ("R", "p", "S", "V", "A", "f", "c", "P", "z", "PH", "Dinv", "G", "eps", "oR", "op",
             "F", "T", "Y", "vec")

    def __init__(self, n_bodies: int):
        self.n_bodies = n_bodies
        self.work = np.zeros(work_size(n_bodies))
        for name, arr in zip(self.names, work_views(self.work, n_bodies)):
            setattr(self, name, arr)
