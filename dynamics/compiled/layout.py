"""Packed arrays of the compiled kernels: named fields from one table each (numpy only).

A :class:`Layout` is a table ``field -> (shape, meaning)``: the fields lie one after another in
one flat array, each in C order, with shapes whose entries are numbers or the names of
dimensions given when an array is packed (``n`` bodies, ``nv`` velocities ...).  From the one
table come

* the packing (Python): :meth:`Layout.describe` writes each field's offset and shape into a
  *descriptor table* (rows ``(offset, extent0, extent1, extent2)``, :data:`DESCRIPTOR_WIDTH`
  integers a row) and returns the array's size; :meth:`Layout.views` gives the fields of a packed
  array as a named tuple of numpy views;
* the views of the kernels (compiled): :mod:`dynamics.compiled.fields` reads the same descriptor
  rows, found by name (``layout.row.parent``), and returns the same named tuples inside numba.

No size is written twice: the kernels read every offset and extent from the descriptor table.

The rigid-body tree (:class:`FlatModel`, once per :class:`dynamics.model.SKOModel`, Pinocchio's
static ``Model``) packs :data:`MODEL_INTS` and :data:`MODEL_FLOATS` into two arrays, ``ints``
(the descriptor table of the three tree layouts first, then the integer fields) and ``floats``.
:class:`Data` (Pinocchio's ``Data``, made by ``model.create_data()``) holds the work array of
:data:`WORK`, which the kernels overwrite on every call.  Tables (n bodies, node k = body k,
``parent[k] < k``; body frames unless stated):
"""

from __future__ import annotations

import math
from collections import namedtuple
from enum import IntEnum
from functools import lru_cache

import numpy as np

from .. import joints as J

__all__ = ["KIND", "DESCRIPTOR_WIDTH", "Layout", "MODEL_INTS", "MODEL_FLOATS", "WORK", "ModelFields", "WorkFields",
           "FlatModel", "Data"]

#: joint kind codes of the kernels (continuous shares revolute's code)
KIND = {t: j.kernel for t, j in J.JOINTS.items()}

#: integers of one descriptor row: offset of the field in its array, then its shape (padded with 1)
DESCRIPTOR_WIDTH = 4


class Layout:
    """Named fields packed one after another in a flat array, from one table.

    Parameters
    ----------
    name : the name of the named tuple of the fields
    fields : ``(name, shape, meaning)`` rows; ``shape`` (at most 3 entries, ``()`` for a scalar)
        holds numbers and dimension names
    first_row : the layout's first row in the descriptor table it shares with other layouts

    Attributes
    ----------
    names : the field names, in order;  shapes : name -> shape as given
    row : ``IntEnum`` field -> its row in the descriptor table (what the compiled views read)
    Fields : the named tuple class of the fields
    end : the first row after the layout's rows
    """

    def __init__(self, name: str, fields, first_row: int = 0):
        self.name = name
        self.names = tuple(f[0] for f in fields)
        self.shapes = {f[0]: tuple(f[1]) for f in fields}
        self.meanings = {f[0]: f[2] for f in fields}
        if any(len(s) > 3 for s in self.shapes.values()) or len(set(self.names)) != len(self.names):
            raise ValueError(f"{name}: fields need distinct names and at most 3 dimensions")
        self.row = IntEnum(f"{name}Row", self.names, start=first_row)
        self.Fields = namedtuple(name, self.names)
        self.first_row, self.end = first_row, first_row + len(self.names)

    def extents(self, dims: dict) -> dict:
        """name -> shape (ints) for the dimensions ``dims`` (name -> int)."""
        try:
            return {k: tuple(int(dims[e]) if isinstance(e, str) else int(e) for e in s) for k, s in self.shapes.items()}
        except KeyError as exc:
            raise ValueError(f"{self.name}: dimension {exc.args[0]!r} not given") from None

    def describe(self, dims: dict, table: np.ndarray, start: int = 0) -> int:
        """Write the descriptor rows of the fields (first at ``start`` in the packed array) into
        ``table`` ((rows, :data:`DESCRIPTOR_WIDTH`) int64); returns the first offset after the fields."""
        offset, rows = start, []
        for shape in self.extents(dims).values():
            rows.append((offset, *shape) + (1,) * (DESCRIPTOR_WIDTH - 1 - len(shape)))
            offset += math.prod(shape)
        table[self.first_row:self.end] = rows
        return offset

    def views(self, buf: np.ndarray, table: np.ndarray):
        """The fields of the packed ``buf`` as a named tuple of views (shapes as in the table)."""
        out = []
        for k, (o, *extent) in zip(self.names, table[self.first_row:self.end].tolist()):
            shape = tuple(extent[:len(self.shapes[k])])
            out.append(buf[o:o + math.prod(shape)].reshape(shape))
        return self.Fields(*out)

    def doc(self) -> str:
        """The table as reStructuredText rows (``name  shape  meaning``)."""
        return "\n".join(f"{k:14s} {str(self.shapes[k]).replace(chr(39), ''):14s} {self.meanings[k]}" for k in self.names)


MODEL_INTS = Layout("ModelInts", [
    ("nq", (), "number of coordinates"),
    ("nv", (), "number of velocities"),
    ("float_size", (), "size of floats"),
    ("work_size", (), "size of the work array of a Data of the model"),
    ("parent", ("n",), "parent body, -1 for a root"),
    ("kind", ("n",), "joint kind code (KIND)"),
    ("q_offset", ("n1",), "first coordinate of joint k in q (n + 1: the last is nq)"),
    ("v_offset", ("n1",), "first velocity of joint k in v (n + 1: the last is nv)"),
])

MODEL_FLOATS = Layout("ModelFloats", [
    ("placement_R", ("n", 3, 3), "joint frame orientation in the parent body frame"),
    ("placement_p", ("n", 3), "joint frame origin in the parent body frame, m"),
    ("axis", ("n", 3), "unit joint axis in the joint frame (zeros where unused)"),
    ("axis2", ("n", 3), "second axis of a universal joint (zeros elsewhere)"),
    ("e1", ("n", 3), "first in-plane axis of a planar joint (zeros elsewhere)"),
    ("e2", ("n", 3), "second in-plane axis of a planar joint (zeros elsewhere)"),
    ("S_const", ("n", 6, 6), "rows 0..n_k-1: motion subspace H(k) (universal: at q2 = 0)"),
    ("M_body", ("n", 6, 6), "spatial inertia about the body origin (seed 002 Eq. 14)"),
    ("gravity", (3,), "gravity, ground frame, m/s^2"),
    ("armature", ("nv",), "rotor inertia added to the diagonal of M, kg m^2 or kg"),
], first_row=MODEL_INTS.end)

WORK = Layout("Work", [
    ("R", ("n", 3, 3), "orientation R_parent_k of body k in its parent (ground for a root)"),
    ("p", ("n", 3), "origin of body k in its parent, m"),
    ("S", ("n", 6, 6), "rows 0..n_k-1: H(k) at the current q (universal joints only)"),
    ("V", ("n", 6), "velocity V(k)"),
    ("alpha", ("n", 6), "acceleration alpha(k) (gravity included as the ground's acceleration)"),
    ("a", ("n", 6), "velocity-product acceleration a(k) = V(k) x H*(k) theta_dot(k) (+ Sdot theta_dot)"),
    ("b", ("n", 6), "bias force b(k) = V(k) x* M(k) V(k) - f_ext(k)"),
    ("f", ("n", 6), "inter-node force f(k) (RNEA)"),
    ("P", ("n", 6, 6), "articulated body inertia P(k) (seed 001 Eq. 33)"),
    ("z", ("n", 6), "residual force z(k) (seed 001 Eq. 58a)"),
    ("eps", ("n", 6), "entries 0..n_k-1: eps(k) = T(k) - H(k) z(k) (seed 001 Eq. 58c)"),
    ("PH", ("n", 6, 6), "columns 0..n_k-1: P(k) H*(k)"),
    ("Dinv", ("n", 6, 6), "block 0..n_k-1: D(k)^-1 = (H P H* + armature)^-1"),
    ("G", ("n", 6, 6), "columns 0..n_k-1: G(k) = P H* D^-1"),
    ("R_composite_I", ("n", 3, 3), "composite inertia R(k): rotational inertia about the ground origin, "
                                   "ground axes, kg m^2 (CRBA, seed 001 Eq. 20)"),
    ("R_composite_h", ("n", 3), "composite inertia R(k): first moment m c, ground frame, kg m"),
    ("R_composite_m", ("n",), "composite inertia R(k): mass, kg"),
    ("oS", ("n", 6, 6), "rows 0..n_k-1: H(k) in the ground frame, about the ground origin (CRBA)"),
    ("oR", ("n", 3, 3), "orientation of body k in the ground frame"),
    ("op", ("n", 3), "origin of body k in the ground frame, m"),
    ("joint_motion", (6, 3), "scratch: R_J (rows 0-2) and p_J (row 3) of the joint being posed "
                             "(universal: rows 3-5 hold Rot(a2, q2) first)"),
    ("P_plus", (6, 6), "scratch: P+(k) = tau_bar(k) P(k) of the node being gathered (seed 001 Eq. 33)"),
    ("inertia_scratch", (6, 6), "scratch: rotated blocks of an inertia being moved"),
    ("vJ", (1, 6), "scratch: H*(k) theta_dot(k) of the joint being passed"),
    ("MV", (1, 6), "scratch: M(k) V(k)"),
    ("z_to_parent", (1, 6), "scratch: z(k) + P+(k) a(k) + G(k) eps(k), the force the gather carries to the parent"),
    ("alpha_ground", (1, 6), "the ground's acceleration [0; -g] (gravity)"),
    ("eps_alpha", (1, 6), "scratch: eps(k) - (P H*)(k)^T alpha+(k), D(k) theta_ddot(k) (seed 001 Eq. 58f)"),
    ("force_columns", (6, 6), "scratch: columns G(k) carried up the path (innovations factor)"),
    ("H_force_columns", (6, 6), "scratch: H(j) times force_columns (innovations factor)"),
], first_row=MODEL_FLOATS.end)

#: rows of the descriptor table at the start of a :class:`FlatModel`'s ``ints``
TREE_ROWS = WORK.end

#: the named tuples the kernels receive (:mod:`dynamics.compiled.fields`)
ModelFields = namedtuple("ModelFields", MODEL_INTS.names + MODEL_FLOATS.names)
WorkFields = WORK.Fields

__doc__ += "\n".join(["", f"``ints`` ({MODEL_INTS.name})", "", MODEL_INTS.doc(), "",
                      f"``floats`` ({MODEL_FLOATS.name})", "", MODEL_FLOATS.doc(), "",
                      f"``Data.work`` ({WORK.name})", "", WORK.doc()])


def tree_dims(n_bodies: int, nq: int = 0, nv: int = 0) -> dict:
    return {"n": n_bodies, "n1": n_bodies + 1, "nq": nq, "nv": nv}


class FlatModel:
    """Packed arrays of one rigid-body tree (module tables), built once per model.

    The kernels receive two packed arrays (and the work array) and take the fields as views
    (:func:`dynamics.compiled.fields.model_fields`): numba unboxes every array argument at every
    call, so few arguments keep the call cheap.

    Attributes
    ----------
    ints : int64 -- descriptor table (:data:`TREE_ROWS` rows), then the fields of :data:`MODEL_INTS`
    floats : float64 -- the fields of :data:`MODEL_FLOATS`
    fields : :data:`ModelFields` of numpy views of the two
    n_bodies, nq, nv, work_size : ints;  nv2 : (nv, nv)
    """

    __slots__ = ("ints", "floats", "fields", "n_bodies", "nq", "nv", "nv2", "work_size")

    def __init__(self, model):
        n = model.n_bodies
        self.n_bodies, self.nq, self.nv, self.nv2 = n, int(model.nq), int(model.nv), (int(model.nv), int(model.nv))
        dims = tree_dims(n, self.nq, self.nv)
        table = np.zeros((TREE_ROWS, DESCRIPTOR_WIDTH), dtype=np.int64)
        self.work_size = WORK.describe(dims, table)
        self.ints = np.zeros(MODEL_INTS.describe(dims, table, TREE_ROWS * DESCRIPTOR_WIDTH), dtype=np.int64)
        self.floats = np.zeros(MODEL_FLOATS.describe(dims, table))
        self.ints[:table.size] = table.ravel()
        table = self.ints[:table.size].reshape(table.shape)
        i, f = MODEL_INTS.views(self.ints, table), MODEL_FLOATS.views(self.floats, table)
        i.nq[()], i.nv[()], i.float_size[()], i.work_size[()] = self.nq, self.nv, self.floats.size, self.work_size
        i.parent[:], i.kind[:] = model.parent, [KIND[t] for t in model.joint_types]
        i.q_offset[:], i.v_offset[:] = model.q_offset, model.v_offset
        f.placement_R[:], f.placement_p[:] = model.placement_R, model.placement_p
        f.axis[:], f.axis2[:], f.M_body[:] = model.axis, model.axis2, model.M_body
        for k, t in enumerate(model.joint_types):
            if t == "planar":
                f.e1[k], f.e2[k] = J.plane_basis(model.axis[k])
            H = model.H_const[k][0]
            f.S_const[k, :H.shape[0]] = H
        f.gravity[:] = model.gravity
        given = getattr(model, "armature", None)
        if given is not None:
            f.armature[:] = np.asarray(given, dtype=float)
        self.fields = ModelFields(*i, *f)


class Data:
    """Work arrays of the compiled kernels for one model (Pinocchio's ``Data``).

    Created by ``model.create_data()``; reused across calls (no allocation per call) and
    overwritten by every call, so after a call it holds that call's intermediate results (the
    fields of :data:`WORK`, attributes of the same names: ``data.V``, ``data.P`` ...).  One
    ``Data`` serves one call at a time: threads need one each.

    ``work`` is the packed array the kernels receive (a new one, or ``work``: float64 (size,), C-contiguous, e.g. a
    section of a closed chain's buffer, :class:`dynamics.compiled.closed_layout.ClosedData`); ``fields`` and the
    attributes are views of it.
    """

    def __init__(self, n_bodies: int, work: np.ndarray | None = None):
        self.n_bodies = n_bodies
        table, size = _work_table(n_bodies)
        if work is None:
            work = np.zeros(size)
        elif work.dtype != np.float64 or work.shape != (size,) or not work.flags.c_contiguous:
            raise ValueError(f"the work array of a Data of {n_bodies} bodies is float64 ({size},), got "
                             f"{work.dtype} {work.shape}")
        self.work = work
        self.fields = WORK.views(self.work, table)
        for name, arr in zip(WORK.names, self.fields):
            setattr(self, name, arr)

    def __repr__(self) -> str:
        return f"Data(n_bodies={self.n_bodies})"


@lru_cache(maxsize=64)
def _work_table(n_bodies: int) -> tuple[np.ndarray, int]:
    """(descriptor table (read-only), size) of the work array of a :class:`Data` of ``n_bodies`` bodies."""
    table = np.zeros((TREE_ROWS, DESCRIPTOR_WIDTH), dtype=np.int64)
    size = WORK.describe(tree_dims(n_bodies), table)
    table.flags.writeable = False
    return table, size
