"""Rigid-body tree model: ``BodySpec`` -> compiled ``SKOModel`` -> SKO weights.

The rigid-body tree is one producer of the generic SKO blocks of
:mod:`dynamics.sko` (seed 001 section 2.2): per configuration it gives

* ``phi(parent(k), k) = [[R, ~l R], [0, R]]`` (seed 002 Eq. 4 with the rotation
  ``R = R_parent_k`` and ``l`` the origin of body k in the parent frame),
* ``H(k) = S_k^T`` (the joint's motion subspace in the body frame, see
  :mod:`dynamics.joints`),
* ``M(k)`` the spatial inertia about the body frame origin (seed 002 Eq. 14),
* and, given ``v``, ``a(k) = V(k) x (H*(k) v_k) + S_dot v_k`` and
  ``b(k) = crf(V(k)) M(k) V(k)``.

All quantities of body k are expressed in body k's frame (body frame = joint
moving frame, Pinocchio's convention).  Gravity enters as the ground's spatial
acceleration ``alpha(ground) = [0; -g]`` carried to the root bodies
(``a_gravity``), which is equivalent to applying ``m g`` at every centre of mass.

Fixed joints keep their body as a node with ``n_k = 0`` (not merged).

Rotor inertia (``armature``, MuJoCo's and Pinocchio's name) is a joint-space term:
each freedom's value adds to the diagonal of the mass matrix, ``T = H f + J theta_ddot``
with ``J`` diagonal (:class:`dynamics.sko.SKOWeights` ``armature``).  A hinge or slide
joint's ``ref`` (MuJoCo's ``qpos0``) is the coordinate at which its body sits at the
given placement: the joint motion is that of ``q - ref``, so the coordinates are
MuJoCo's ``qpos``.  Rotations (translations) along one axis commute, so the model keeps
the motion of ``q`` and folds ``-ref`` into the placement once:
``placement_R Rot(axis, -ref)`` (revolute), ``placement_p - ref placement_R axis``
(prismatic); ``neutral()`` returns ``ref`` there.
"""

from __future__ import annotations

from functools import cached_property
from itertools import accumulate

import numpy as np

from . import joints as J
from .force_elements import ForceElements
from .records import record
from .sko import SKOTree, SKOWeights, mulT
from .spatial import force_cross, motion_cross, phi_transform, rotation_about_axis, spatial_inertia

__all__ = ["BodySpec", "SKOModel", "build_model", "weights", "armature_blocks",
           "velocity_terms"]


@record(eq=True)
class BodySpec:
    """One body and the joint that connects it to its parent.

    Parameters
    ----------
    name : str
    parent : int -- index of an earlier BodySpec, or -1 for ground
    joint_type : str -- one of :data:`dynamics.joints.JOINTS`
    joint_name : str
    placement_rotation : (3, 3) -- joint frame orientation in the parent body frame
    placement_translation : (3,) m -- joint frame origin in the parent body frame
    mass : float kg
    com : (3,) m -- centre of mass in the body frame
    inertia : (3, 3) kg m^2 -- about the centre of mass, body axes
    axis : (3,) -- joint axis (plane normal for planar) in the joint frame
    axis2 : (3,) or None -- second axis of a universal joint
    armature : float or (n_k,) -- rotor inertia of each freedom of the joint, kg m^2
        (rotations) or kg (translations), added to the diagonal of the mass matrix
    ref : float -- coordinate (rad or m) at which the body is at the given placement
        (MuJoCo's ``ref``); revolute, continuous and prismatic joints only
    """

    name: str
    parent: int
    joint_type: str
    joint_name: str
    placement_rotation: np.ndarray
    placement_translation: np.ndarray
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    axis: tuple = (0.0, 0.0, 1.0)
    axis2: tuple | None = None
    armature: float | tuple = 0.0
    ref: float = 0.0


_TYPE_ORDER = {t: i for i, t in enumerate(J.JOINTS)}

#: the force elements of a model built without any (their layout arrays shared, read-only)
_NO_FORCES = ForceElements()


class SKOModel:
    """Compiled rigid-body tree (static; per-configuration data is computed per call).

    ``kind = "tree"`` selects the tree algorithms in :mod:`dynamics.dispatch`;
    ``tree_model`` is the model itself (every model kind has one).

    Attributes (flat arrays, node k = body k, ``parent[k] < k``)
    -------------------------------------------------------------
    tree : SKOTree -- generic structure, ``m_k = 6``, ``n_k = nv`` of joint k
    parent : (n,) int
    body_names, joint_names, joint_types : tuple of str
    nq, nv : int
    q_offset, v_offset : (n+1,) int
    placement_R : (n, 3, 3); placement_p : (n, 3) -- joint frame at q = 0 (``ref`` folded in)
    q_ref : (nq,) -- reference configuration (``ref``, identity quaternions), see ``neutral()``
    armature : (nv,) -- rotor inertia of each freedom (zeros when none)
    mass : (n,); com : (n, 3); inertia_com : (n, 3, 3); M_body : (n, 6, 6)
    axis, axis2 : (n, 3) unit vectors (zeros where unused)
    H_const : list of (1, n_k, 6) joint maps (universal: value at q2 = 0)
    gravity : (3,) m/s^2 in the ground frame
    groups : dict joint type -> (node indices (g,), q columns (g, nq), v columns (g, nv))
    forces : the joint springs, dampers and actuators (:class:`dynamics.force_elements.ForceElements`,
        indexed in these coordinates; none when not given); ``actuator_names`` their actuators' names
    """

    kind = "tree"

    def __init__(self, bodies, gravity=(0.0, 0.0, -9.81), forces: ForceElements | None = None):
        bodies = list(bodies)
        n = len(bodies)
        self.gravity = np.asarray(gravity, dtype=float)
        self.body_names = tuple(b.name for b in bodies)
        self.joint_names = tuple(b.joint_name for b in bodies)
        self.joint_types = types = tuple(b.joint_type for b in bodies)
        if len(set(self.joint_names)) != n:
            raise ValueError("joint names must be unique")
        parents = [b.parent for b in bodies]
        for k, (b, p) in enumerate(zip(bodies, parents)):
            if b.joint_type not in J.JOINTS:
                raise ValueError(f"body {b.name!r}: unknown joint type {b.joint_type!r}")
            if not -1 <= p < k:
                raise ValueError(f"body {b.name!r}: parent {p} must be -1 or an earlier body index")
        facts = [J.JOINTS[t] for t in types]
        nvs = [f.nv for f in facts]
        self.tree = SKOTree(np.array(parents, dtype=int), np.full(n, 6), np.array(nvs, dtype=int))
        self.parent = self.tree.parent
        # offsets as Python ints too: q_slice / v_slice are called per joint by the force elements
        self._q_offsets = q_offset = [0, *accumulate(f.nq for f in facts)]
        self._v_offsets = v_offset = [0, *accumulate(nvs)]
        self.q_offset = np.array(q_offset, dtype=int)
        self.v_offset = np.array(v_offset, dtype=int)
        self.nq, self.nv = q_offset[-1], v_offset[-1]
        self.placement_R = np.array([b.placement_rotation for b in bodies], dtype=float).reshape(n, 3, 3)
        self.placement_p = np.array([b.placement_translation for b in bodies], dtype=float).reshape(n, 3)
        self.mass = np.array([float(b.mass) for b in bodies])
        self.com = np.array([b.com for b in bodies], dtype=float).reshape(n, 3)
        self.inertia_com = np.array([b.inertia for b in bodies], dtype=float).reshape(n, 3, 3)
        self.axis, self.axis2 = _unit_axes(bodies, facts)
        self.armature = np.array([a for b, nv in zip(bodies, nvs) for a in _per_freedom(b.armature, nv)], dtype=float)
        self.q_ref = np.array([x for f in facts for x in f.neutral], dtype=float)
        for k, b in enumerate(bodies):
            if b.ref != 0.0:
                self._fold_reference(k, b)
        self._joint_index = {name: k for k, name in enumerate(self.joint_names)}
        self._body_index = {name: k for k, name in enumerate(self.body_names)}
        self.forces = (forces or _NO_FORCES).indexed(self)
        self.actuator_names = self.forces.actuator_names

    @cached_property
    def M_body(self) -> np.ndarray:
        """(n, 6, 6) each body's spatial inertia about its frame's origin (seed 002 Eq. 14), made from
        ``mass``, ``com`` and ``inertia_com`` on first use (the algorithms' input, not the model's check)."""
        return spatial_inertia(self.mass, self.com, self.inertia_com)

    @cached_property
    def groups(self) -> dict:
        """Joint type -> (node indices (g,), q columns (g, nq), v columns (g, nv)), one group per joint type
        present, in :data:`dynamics.joints.JOINTS` order (made on first use, with ``S_group`` and ``H_const``)."""
        return self._joint_groups[0]

    @cached_property
    def S_group(self) -> dict:
        """Joint type -> the constant H(k) of its group: (g, 6) for 1-dof types, (g, n_k, 6) otherwise."""
        return self._joint_groups[1]

    @cached_property
    def H_const(self) -> list:
        """The constant H(k) of each joint, (1, n_k, 6) (universal: at q2 = 0), read-only views of ``S_group``'s."""
        return self._joint_groups[2]

    @cached_property
    def _joint_groups(self) -> tuple[dict, dict, list]:
        """(``groups``, ``S_group``, ``H_const``), see their docstrings."""
        types = self.joint_types
        H_const, groups, S_group = [None] * len(types), {}, {}
        members: dict[str, list[int]] = {}
        for k, t in enumerate(types):
            members.setdefault(t, []).append(k)
        for t in sorted(members, key=_TYPE_ORDER.__getitem__):
            ks, nq, nv = members[t], J.JOINTS[t].nq, J.JOINTS[t].nv
            idx = np.array(ks, dtype=int)
            qc = self.q_offset[idx][:, None] + np.arange(nq)
            vc = self.v_offset[idx][:, None] + np.arange(nv)
            groups[t] = (idx, qc, vc)
            Hs = J.motion_subspace(t, self.axis[idx], self.axis2[idx] if J.JOINTS[t].has_axis2 else None)
            Hs.setflags(write=False)
            for k, H in zip(ks, Hs[:, None]):
                H_const[k] = H
            S_group[t] = Hs[:, 0, :] if nv == 1 else Hs
        return groups, S_group, H_const

    def _fold_reference(self, k: int, b: BodySpec) -> None:
        """Fold joint k's ``ref`` into its placement (see the module docstring)."""
        ref = float(b.ref)
        if not J.JOINTS[b.joint_type].takes_ref:
            raise ValueError(f"joint {b.joint_name!r}: ref is defined for "
                             f"{', '.join(J.joint_types(takes_ref=True))} joints only")
        self.q_ref[self.q_offset[k]] = ref
        if b.joint_type == "prismatic":
            self.placement_p[k] = self.placement_p[k] - ref * (self.placement_R[k] @ self.axis[k])
        else:
            self.placement_R[k] = self.placement_R[k] @ rotation_about_axis(self.axis[k], -ref)

    # ---- public helpers -------------------------------------------------
    @property
    def n_bodies(self) -> int:
        return self.tree.n_nodes

    def body_index(self, body) -> int:
        """Index of a body given by name or index."""
        if isinstance(body, (int, np.integer)):
            return int(body)
        return self._body_index[body]

    def joint_index(self, joint) -> int:
        if isinstance(joint, (int, np.integer)):
            return int(joint)
        return self._joint_index[joint]

    def q_slice(self, name) -> slice:
        """Slice of joint ``name``'s coordinates in q."""
        k = self._joint_index[name] if type(name) is str else self.joint_index(name)
        return slice(self._q_offsets[k], self._q_offsets[k + 1])

    def v_slice(self, name) -> slice:
        """Slice of joint ``name``'s velocities in v (and of its forces in tau)."""
        k = self._joint_index[name] if type(name) is str else self.joint_index(name)
        return slice(self._v_offsets[k], self._v_offsets[k + 1])

    def neutral(self) -> np.ndarray:
        """Reference configuration q (nq,): each joint's ``ref`` (zero unless given), identity
        quaternions; the bodies are at their given placements there."""
        return self.q_ref.copy()

    def create_data(self):
        """Work arrays of the compiled kernels (Pinocchio's ``model.createData()``).

        Returns a :class:`dynamics.compiled.layout.Data`: pass it as ``data=`` to the tree
        functions of :mod:`dynamics` (``inverse_dynamics(model, q, v, a, data=data)`` ...) to reuse
        one set of work arrays per caller, as Pinocchio's ``Data``; it then holds the last call's
        intermediate results (``data.V``, ``data.P`` ...).  One ``Data`` serves one call at a
        time (not thread-safe: a thread needs its own).  Without ``data=`` the functions use
        :attr:`default_data`.  Imports no numba and compiles nothing.
        """
        from .compiled.layout import Data

        return Data(self.n_bodies)

    @cached_property
    def default_data(self):
        """The :meth:`create_data` that the tree functions use when called without ``data=``
        (made on first use, then kept with the model)."""
        return self.create_data()

    @cached_property
    def flat_model(self):
        """The packed arrays of this tree for the compiled kernels
        (:class:`dynamics.compiled.layout.FlatModel`), made on first use (numpy only) and kept with
        the model; a model changed after its first compiled call needs ``del model.flat_model``."""
        from .compiled.layout import FlatModel

        return FlatModel(self)

    @cached_property
    def is_euclidean(self) -> bool:
        """True when v = q_dot for every joint (no spherical, planar, free)."""
        return all(J.JOINTS[t].euclidean for t in self.joint_types)

    @property
    def tree_model(self) -> "SKOModel":
        """The rigid-body tree whose coordinates the model uses: itself."""
        return self

    def __repr__(self) -> str:
        return f"SKOModel(n_bodies={self.n_bodies}, nq={self.nq}, nv={self.nv})"


def require_tree(model, what: str) -> None:
    """Raise ``TypeError`` unless ``model`` is a rigid-body tree (``kind == "tree"``): for the functions
    that only the tree has (sensitivities, Fixman terms), instead of an ``AttributeError`` deep inside."""
    kind = getattr(model, "kind", None)
    if kind != "tree":
        name = kind or type(model).__name__
        raise TypeError(f"{what} is defined on rigid-body trees (SKOModel) only, not on {name!r} models: for a "
                        "closed chain it is not implemented in independent coordinates; model.tree_model gives "
                        "the spanning tree's")


class TreeCoordinates:
    """Base of the models that keep the coordinates of a rigid-body tree ``tree_model``
    (closed chains, aggregated trees): ``joint_names``, ``nq``, ``nv``, ``gravity``,
    ``q_slice(name)``, ``v_slice(name)`` and ``neutral()`` are the tree's.  Subclasses
    set ``kind`` (:mod:`dynamics.dispatch`)."""

    kind = ""

    def __init__(self, tree_model: SKOModel):
        self.tree_model = tree_model
        self.joint_names = tree_model.joint_names
        self.nq, self.nv = tree_model.nq, tree_model.nv
        self.gravity = tree_model.gravity
        self.actuator_names = tree_model.actuator_names

    def q_slice(self, name) -> slice:
        return self.tree_model.q_slice(name)

    def v_slice(self, name) -> slice:
        return self.tree_model.v_slice(name)

    def neutral(self) -> np.ndarray:
        return self.tree_model.neutral()


def _unit_axes(bodies, facts) -> tuple[np.ndarray, np.ndarray]:
    """``axis`` and ``axis2`` (n, 3) of the bodies' joints (``facts``: their
    :class:`dynamics.joints.JointType`), normalised (zeros where unused); ValueError for a zero axis or
    a universal joint without ``axis2``."""
    n = len(bodies)
    has = [f.has_axis for f in facts]
    axis = _unit_rows([b.axis if h else _NO_AXIS for b, h in zip(bodies, has)], has) if any(has) else np.zeros((n, 3))
    has2 = [f.has_axis2 for f in facts]
    if not any(has2):
        return axis, np.zeros((n, 3))
    for b, h in zip(bodies, has2):
        if h and b.axis2 is None:
            raise ValueError(f"{b.joint_type} joint {b.joint_name!r} needs axis2")
    return axis, _unit_rows([b.axis2 if h else _NO_AXIS for b, h in zip(bodies, has2)], has2)


#: the row of a joint without an axis (kept zero by :func:`_unit_rows`)
_NO_AXIS = (0.0, 0.0, 0.0)


def _unit_rows(rows, used) -> np.ndarray:
    """(m, 3) unit vectors along ``rows`` (m vectors) where ``used`` (m bools), zero rows elsewhere;
    ValueError for a zero one that is used."""
    a = np.array(rows, dtype=float).reshape(len(rows), 3)
    norm = np.sqrt(np.einsum("ij,ij->i", a, a)).tolist()
    if not all(x for x, u in zip(norm, used) if u):
        raise ValueError("zero joint axis")
    return a / np.array([x if u else 1.0 for x, u in zip(norm, used)])[:, None]


def _per_freedom(value, nv: int) -> list:
    """A scalar or per-freedom value (``armature``) as a list of ``nv`` values."""
    if type(value) is float or type(value) is int:
        return [value] * nv
    return np.broadcast_to(np.asarray(value, float), (nv,)).tolist()


def build_model(bodies, gravity=(0.0, 0.0, -9.81), forces: ForceElements | None = None) -> SKOModel:
    """Compile a sequence of :class:`BodySpec` (and the joints' springs, dampers and actuators)
    into an :class:`SKOModel`."""
    return SKOModel(bodies, gravity, forces)


def relative_poses(model: SKOModel, q):
    """Pose of each body frame in its parent frame (ground frame for roots).

    Parameters
    ----------
    q : (B, nq)

    Returns
    -------
    R : (B, n, 3, 3) ``R_parent_k``;  p : (B, n, 3) origin of k in the parent frame
    """
    B = q.shape[0]
    n = model.n_bodies
    RJ = np.empty((B, n, 3, 3))
    pJ = np.empty((B, n, 3))
    for t, (idx, qc, _) in model.groups.items():
        R, p = J.transform(t, q[:, qc], model.axis[idx], model.axis2[idx])
        RJ[:, idx] = R
        pJ[:, idx] = p
    R = model.placement_R @ RJ
    p = model.placement_p + (model.placement_R @ pJ[..., None])[..., 0]
    return R, p


def joint_maps(model: SKOModel, q) -> list:
    """H(k) list, (1, n_k, 6) or (B, n_k, 6) for q-dependent joints."""
    H = list(model.H_const)
    if "universal" in model.groups:
        idx, qc, _ = model.groups["universal"]
        Hu = J.universal_H(q[:, qc], model.axis[idx], model.axis2[idx])
        for i, k in enumerate(idx):
            H[k] = Hu[:, i]
    return H


def weights(model: SKOModel, q) -> SKOWeights:
    """SKO weights (phi, H, M) of the rigid-body tree at q (B, nq).

    ``extras`` holds ``phi_all`` (B, n, 6, 6), ``R_rel`` and ``p_rel``.
    """
    R, p = relative_poses(model, q)
    phi_all = phi_transform(R, p)
    phi = [None if model.parent[k] < 0 else phi_all[:, k] for k in range(model.n_bodies)]
    M = [model.M_body[k][None] for k in range(model.n_bodies)]
    w = SKOWeights(model.tree, phi, joint_maps(model, q), M, q.shape[0], armature=armature_blocks(model))
    w.extras.update(phi_all=phi_all, R_rel=R, p_rel=p)
    return w


def armature_blocks(model: SKOModel) -> list | None:
    """Rotor inertia of each joint as (1, n_k, n_k) diagonal blocks, None when the model has none."""
    arm = np.asarray(model.armature, dtype=float)
    if not arm.any():
        return None
    return [np.diag(arm[s])[None] for s in model.tree.v_slices]


def gravity_acceleration(model: SKOModel, w: SKOWeights) -> list:
    """``a_gravity(k) = phi*(ground, k) [0; -g]`` for roots, 0 elsewhere; list of (B, 6)."""
    B = w.batch
    out = [np.zeros((B, 6)) for _ in range(model.n_bodies)]
    R = w.extras["R_rel"]
    for k in model.tree.roots:
        out[k] = np.zeros((B, 6))
        out[k][:, 3:] = -(np.swapaxes(R[:, k], -1, -2) @ model.gravity)
    return out


def velocity_terms(model: SKOModel, w: SKOWeights, q, v):
    """Body velocities V and the Coriolis/gyroscopic terms a, b (seed 001 Eq. 1).

    ``V(k) = phi*(parent, k) V(parent) + H*(k) v_k`` (seed 002 Eq. 3),
    ``a(k) = V(k) x (H*(k) v_k) + S_dot(k) v_k``, ``b(k) = crf(V(k)) M(k) V(k)``.

    Returns
    -------
    V, a, b : (B, n, 6) arrays, body frames
    """
    B = q.shape[0]
    n = model.n_bodies
    vJ = np.zeros((B, n, 6))
    for t, (idx, qc, vc) in model.groups.items():
        if t == "fixed":
            continue
        if t == "universal":
            for k in idx:
                vJ[:, k] = mulT(w.H[k], v[:, model.tree.v_slices[k]])
        elif vc.shape[1] == 1:
            vJ[:, idx] = v[:, vc[:, 0], None] * model.S_group[t]
        else:
            vJ[:, idx] = np.einsum("bgj,gjk->bgk", v[:, vc], model.S_group[t])
    V = np.empty((B, n, 6))
    par, phi = model.tree.parent_list, w.phi
    for k in range(n):
        p = par[k]
        V[:, k] = vJ[:, k] if p < 0 else mulT(phi[k], V[:, p]) + vJ[:, k]
    a = motion_cross(V, vJ)
    if "universal" in model.groups:
        idx, qc, vc = model.groups["universal"]
        a[:, idx] += J.universal_cJ(q[:, qc], v[:, vc], model.axis[idx], model.axis2[idx])
    b = force_cross(V, np.einsum("kij,bkj->bki", model.M_body, V))
    return V, a, b
