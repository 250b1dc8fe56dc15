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
e1, e2         (n, 3)       in-plane axes of planar joints (zeros elsewhere)
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
KIND = {t: j.kernel for t, j in J.JOINTS.items()}


class FlatModel:
    """Static flat arrays of one rigid-body tree (see module table).

    The kernels receive three packed arrays and take the arrays of the module table as
    views by basic slicing (:func:`model_views`): numba unboxes each array argument
    at every call, so few arguments keep the call cheap.

    Attributes
    ----------
    ints : (4, n+1) int64 -- rows parent, kind (last entry unused), q_offset, v_offset
    blocks : (3n, 6, 6) -- S_const, M_body, then per body ``[[R_place, p_place], [axis; axis2;
        e1 e2]]`` (rows 0-2: placement_R | placement_p, row 3: axis, row 4: axis2, row 5: e1 | e2)
    extra : (3 + nv,) -- gravity, armature
    arrays : the tuple of the module table (views of the three)
    """

    def __init__(self, model):
        n = model.n_bodies
        self.n_bodies, self.nq, self.nv = n, model.nq, model.nv
        self.ints = np.zeros((4, n + 1), dtype=np.int64)
        self.ints[0, :n] = model.parent
        self.ints[1, :n] = [KIND[t] for t in model.joint_types]
        self.ints[2] = model.q_offset
        self.ints[3] = model.v_offset
        self.blocks = np.zeros((3 * n, 6, 6))
        S, M_body, geometry = self.blocks[:n], self.blocks[n:2 * n], self.blocks[2 * n:]
        M_body[:] = model.M_body
        geometry[:, 0:3, 0:3] = model.placement_R
        geometry[:, 0:3, 3] = model.placement_p
        geometry[:, 3, 0:3] = model.axis
        geometry[:, 4, 0:3] = model.axis2
        for k, t in enumerate(model.joint_types):
            if t == "planar":
                e1, e2 = J.plane_basis(model.axis[k])
                geometry[k, 5, 0:3], geometry[k, 5, 3:6] = e1, e2
            H = model.H_const[k][0]
            S[k, :H.shape[0]] = H
        self.extra = np.zeros(3 + model.nv)
        self.extra[:3] = model.gravity
        given = getattr(model, "armature", None)
        if given is not None:
            self.extra[3:] = np.asarray(given, dtype=float)
        self.arrays = model_views(self.ints, self.blocks, self.extra)


def model_views(ints, blocks, extra):
    """The tuple of the module table as views of the packed arrays, by basic slicing only
    (plain Python; the kernels call its compiled twin)."""
    n = ints.shape[1] - 1
    geometry = blocks[2 * n:3 * n]
    return (ints[0, :n], ints[1, :n], ints[2], ints[3], geometry[:, 0:3, 0:3], geometry[:, 0:3, 3],
            geometry[:, 3, 0:3], geometry[:, 4, 0:3], geometry[:, 5, 0:3], geometry[:, 5, 3:6],
            blocks[0:n], blocks[n:2 * n], extra[0:3], extra[3:])


def flat_model(model) -> FlatModel:
    """The :class:`FlatModel` of an ``SKOModel``, built on first use and kept on the model."""
    flat = model.__dict__.get("_flat_model")
    if flat is None:
        flat = FlatModel(model)
        model.__dict__["_flat_model"] = flat
    return flat


def work_size(n_bodies: int) -> int:
    """Number of (6, 6) blocks of the packed work array of a tree of n bodies."""
    return 7 * n_bodies + 4


def work_views(work, n):
    """Work arrays (see :class:`Data`) as views of the packed array ``work`` (work_size(n), 6, 6),
    by basic slicing only (plain Python; the kernels call its compiled twin)."""
    vectors, poses = work[5 * n:6 * n], work[6 * n:7 * n]
    o = 7 * n
    return (poses[:, 0:3, 0:3], poses[:, 0:3, 3], work[0:n], vectors[:, 0], vectors[:, 1], vectors[:, 2],
            vectors[:, 3], work[n:2 * n], vectors[:, 4], work[2 * n:3 * n], work[3 * n:4 * n], work[4 * n:5 * n],
            vectors[:, 5], poses[:, 3:6, 0:3], poses[:, 3:6, 3], work[o], work[o + 1], work[o + 2], work[o + 3])


class Data:
    """Work arrays of the compiled kernels for one model (Pinocchio's ``Data``).

    Created by ``model.create_data()``; the kernels overwrite them on every call, so
    after a call they hold that call's intermediate results (body frames unless stated):

    R, p : (n, 3, 3), (n, 3)       pose of body k in its parent (ground for roots)
    S : (n, 6, 6)                  rows 0..n_k-1: H(k) at the current q (universal joints only)
    V, A, f, c : (n, 6)            velocity V(k), acceleration alpha(k), force f(k) (RNEA),
                                   velocity-product acceleration a(k) (RNEA, ABA)
    P, z : (n, 6, 6), (n, 6)       articulated body inertia P(k) and residual force z(k) (ABA;
                                   RNEA: z the bias force b(k); CRBA: P the composite inertia in
                                   3+3 form, see ``spatial_kernels.set_rigid_inertia_moved``)
    PH, Dinv, G : (n, 6, 6)        ``P H*`` (6, n_k), ``D^-1`` (n_k, n_k), ``G = P H* D^-1`` (6, n_k)
    eps : (n, 6)                   ``T - H z`` of each node (seed 001 Eq. 58c)
    oR, op : (n, 3, 3), (n, 3)     pose of each body in the ground frame
    F, T, Y, vec : (6, 6) scratch

    ``work`` is the packed array the kernels receive; the attributes are views of it.
    """

    names = ("R", "p", "S", "V", "A", "f", "c", "P", "z", "PH", "Dinv", "G", "eps", "oR", "op",
             "F", "T", "Y", "vec")

    def __init__(self, n_bodies: int):
        self.n_bodies = n_bodies
        self.work = np.zeros((work_size(n_bodies), 6, 6))
        for name, arr in zip(self.names, work_views(self.work, n_bodies)):
            setattr(self, name, arr)
