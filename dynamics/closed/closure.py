"""Loop closure functions of chord joints: closure error, Jacobian and its rate term.

A loop of a mechanism is closed by a *chord*: a joint between bodies ``a`` and
``b`` (either may be ground) that was left out of the spanning tree.  The chord
constrains the relative motion of its two attachment frames ``J_a`` (fixed in
``a``) and ``J_b`` (fixed in ``b``), which coincide when the loop is closed.
With ``R_ab = R_Ja^T R_Jb`` and ``p_ab = R_Ja^T (x_b - x_a)`` (the pose of ``J_b``
in ``J_a``), every constraint is one of two scalar kinds, ``n`` being a unit
vector fixed in ``J_a`` and ``u`` one fixed in ``J_b``:

* position row ``e = n . p_ab``; orientation row ``e = n . (R_ab u)``.

Per chord type (``u`` the joint axis, ``n1, n2`` a basis of its normal plane):

=============  ===========================  ===================================
type           position rows ``n``          orientation rows ``(u, n)``
=============  ===========================  ===================================
fixed          x, y, z                      (y, z), (z, x), (x, y)
revolute       x, y, z                      (u, n1), (u, n2)
prismatic      n1, n2                       (y, z), (z, x), (x, y)
cylindrical    n1, n2                       (u, n1), (u, n2)
spherical      x, y, z                      --
universal      x, y, z                      (u2, u1)   (u1 on a, u2 on b)
planar         normal                       (normal, t1), (normal, t2)
free           --                           --
=============  ===========================  ===================================

(for the full orientation ``(y, z)`` reads ``e = z . (R_ab y)``, which is the
rotation angle about x to first order.)

Velocity level.  With the relative twist of ``J_b`` with respect to ``J_a``,
``V_rel = [R_Ja^T (w_b - w_a); R_Ja^T (v_b(x_b) - v_a(x_b))]`` (``v_c(x)`` the
velocity of body c's field at point x), the exact time derivatives are
``d/dt (n . p_ab) = n . v_rel`` and ``d/dt (n . R_ab u) = ((R_ab u) x n) . w_rel``,
so ``e_dot = K(q) V_rel = G(q) v`` with ``K`` the rows ``[0, n]`` and
``[(R_ab u) x n, 0]``: ``G = de/dq`` exactly, which gives Newton quadratic
convergence and makes ``G v = 0`` the tangent of ``e = 0``.

Acceleration level: ``e_ddot = G a + gamma`` with ``gamma = Gdot v``, computed
from the bias accelerations (``a = 0``) of the two bodies::

    n . R^T (d'' - wd_a x d - 2 w_a x d' + w_a x (w_a x d))                   position
    n . R^T ((wd_b - wd_a) x u_b + (w_b - w_a) x (w_b x u_b)
             - w_a x ((w_b - w_a) x u_b))                                    orientation

with ``R = R_Ja``, ``d = x_b - x_a``, ``u_b = R_Jb u`` (world) and ``'`` the time
derivative (classical point velocities and accelerations).  These follow by
differentiating ``p_ab = R^T d`` and ``R_ab u = R^T u_b`` twice with
``dR/dt = [w_a]x R``; they are derived here, not taken from a seed.

All world quantities come from the rigid-body tree (:mod:`dynamics.model`):
body frames, body-frame twists ``V`` and Coriolis terms ``a`` of seed 001 Eq. 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import topology
from ..joints import JOINTS
from ..model import SKOModel
from ..spatial import cross3
from ..world_kinematics import Kinematics, frame_pose, kinematics, point_motion

__all__ = ["Chord", "ClosureError", "ChordRows", "chord_rows", "ChordSet", "chord_set", "ChordTerms",
           "chord_set_terms", "Kinematics", "kinematics", "relative_motion", "closure_error",
           "closure_jacobian", "closure_bias"]

_EX, _EY, _EZ = np.eye(3)
_ORIENT3 = ((_EY, _EZ), (_EZ, _EX), (_EX, _EY))


class ClosureError(ValueError):
    """A loop cannot close, or its closure Jacobian loses rank, at a configuration.

    Attributes
    ----------
    loop : str -- the loop (its chord joints joined by ``+``)
    joints : tuple of str -- the joints of the loop (tree joints, then chords)
    dependent : tuple of str -- the dependent coordinates involved, when known
    reason : str -- the message without the loop's name
    """

    def __init__(self, message: str, loop: str, joints=(), dependent=()):
        super().__init__(f"loop {loop!r} (joints {', '.join(joints)}): {message}")
        self.loop = loop
        self.joints = tuple(joints)
        self.dependent = tuple(dependent)
        self.reason = message


def _normal_pair(u):
    u = np.asarray(u, float)
    ref = _EX if abs(u[0]) <= 0.9 else _EY
    n1 = ref - ref.dot(u) * u
    n1 /= np.linalg.norm(n1)
    return n1, cross3(u, n1)


@dataclass(frozen=True, eq=False)
class Chord:
    """A loop-closing joint between body ``body_a`` and body ``body_b``.

    Parameters
    ----------
    name : str
    type : str -- fixed, revolute, continuous, prismatic, cylindrical, spherical,
        universal, planar or free
    body_a, body_b : int -- tree body indices, -1 for ground
    R_a : (3, 3) -- orientation of the joint frame ``J_a`` in body a's frame
    p_a : (3,) m -- origin of ``J_a`` in body a's frame
    R_b, p_b : the same for ``J_b`` on body b
    axis : (3,) -- joint axis (plane normal for planar; first axis, fixed in a, for
        universal) in ``J_a`` coordinates (= ``J_b`` coordinates when closed)
    axis2 : (3,) or None -- second universal axis, fixed in b, in ``J_b`` coordinates
    actuated : bool -- informational; chord joints carry no generalized force
    """

    name: str
    type: str
    body_a: int
    body_b: int
    R_a: np.ndarray = field(default_factory=lambda: np.eye(3))
    p_a: np.ndarray = field(default_factory=lambda: np.zeros(3))
    R_b: np.ndarray = field(default_factory=lambda: np.eye(3))
    p_b: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    axis2: np.ndarray | None = None
    actuated: bool = False

    def __post_init__(self):
        for key in ("R_a", "R_b"):
            object.__setattr__(self, key, np.asarray(getattr(self, key), float).reshape(3, 3))
        for key in ("p_a", "p_b"):
            object.__setattr__(self, key, np.asarray(getattr(self, key), float).reshape(3))
        a = np.asarray(self.axis, float).reshape(3)
        object.__setattr__(self, "axis", a / np.linalg.norm(a))
        if self.axis2 is not None:
            a2 = np.asarray(self.axis2, float).reshape(3)
            object.__setattr__(self, "axis2", a2 / np.linalg.norm(a2))
        if self.body_a == self.body_b:
            raise ValueError(f"chord {self.name!r} joins body {self.body_a} to itself")


@dataclass(frozen=True, eq=False)
class ChordRows:
    """Constraint rows of a chord: ``N_p`` (np, 3) position normals; ``U_r``, ``N_r``
    (nr, 3) orientation pairs (``e = N_r[i] . R_ab U_r[i]``)."""

    N_p: np.ndarray
    U_r: np.ndarray
    N_r: np.ndarray

    @property
    def n(self) -> int:
        return len(self.N_p) + len(self.N_r)


def chord_rows(chord: Chord) -> ChordRows:
    """The constraint rows of a chord joint type (module table)."""
    if chord.type not in JOINTS:
        raise ValueError(f"chord {chord.name!r}: unknown joint type {chord.type!r}")
    t, u = JOINTS[chord.type].moves_as, chord.axis
    n1, n2 = _normal_pair(u)
    eye = [_EX, _EY, _EZ]
    if t == "fixed":
        P, R = eye, list(_ORIENT3)
    elif t == "revolute":
        P, R = eye, [(u, n1), (u, n2)]
    elif t == "prismatic":
        P, R = [n1, n2], list(_ORIENT3)
    elif t == "cylindrical":
        P, R = [n1, n2], [(u, n1), (u, n2)]
    elif t == "spherical":
        P, R = eye, []
    elif t == "universal":
        if chord.axis2 is None:
            raise ValueError(f"universal chord {chord.name!r} needs axis2")
        P, R = eye, [(chord.axis2, u)]
    elif t == "planar":
        P, R = [u], [(u, n1), (u, n2)]
    elif t == "free":
        P, R = [], []
    else:
        raise ValueError(f"chord {chord.name!r}: unknown joint type {t!r}")
    Np = np.array(P, float).reshape(-1, 3)
    Ur = np.array([r[0] for r in R], float).reshape(-1, 3)
    Nr = np.array([r[1] for r in R], float).reshape(-1, 3)
    return ChordRows(Np, Ur, Nr)


@dataclass(frozen=True, eq=False)
class ChordSet:
    """The constraint rows of several chords, stacked chord after chord (position rows first).

    n_rows : total rows;  row_offset : (n_c + 1,) first row of each chord
    p_rows, p_chord, N_p : position rows -- global row, chord index, normal (in ``J_a``)
    r_rows, r_chord, U_r, N_r : orientation rows
    body_a, body_b : (n_c,) body indices, ground as ``n_bodies`` (an extra, resting body)
    R_a, p_a, R_b, p_b : (n_c, 3, 3), (n_c, 3) -- attachment frames in their bodies
    signs : (n_c, nv) -- +1 / -1 / 0: whether a velocity column moves ``b`` / ``a`` / both or neither
    """

    chords: tuple
    n_rows: int
    row_offset: np.ndarray
    p_rows: np.ndarray
    p_chord: np.ndarray
    N_p: np.ndarray
    r_rows: np.ndarray
    r_chord: np.ndarray
    U_r: np.ndarray
    N_r: np.ndarray
    body_a: np.ndarray
    body_b: np.ndarray
    R_a: np.ndarray
    p_a: np.ndarray
    R_b: np.ndarray
    p_b: np.ndarray
    signs: np.ndarray


def chord_set(model: SKOModel, chords) -> ChordSet:
    """Precompute the stacked rows of ``chords`` (see :class:`ChordSet`)."""
    chords = tuple(chords)
    n = model.n_bodies
    parent = model.parent.tolist()
    body = np.repeat(np.arange(n), model.tree.nv_node)
    p_rows, p_chord, N_p, r_rows, r_chord, U_r, N_r = [], [], [], [], [], [], []
    offsets = [0]
    signs = np.zeros((len(chords), model.nv))
    for i, c in enumerate(chords):
        rows = chord_rows(c)
        o = offsets[-1]
        npos = len(rows.N_p)
        p_rows += list(range(o, o + npos))
        p_chord += [i] * npos
        N_p += list(rows.N_p)
        r_rows += list(range(o + npos, o + rows.n))
        r_chord += [i] * (rows.n - npos)
        U_r += list(rows.U_r)
        N_r += list(rows.N_r)
        offsets.append(o + rows.n)
        pa, pb = (set(topology.path_to_root(parent, int(b))) for b in (c.body_a, c.body_b))
        signs[i] = [(int(k) in pb) - (int(k) in pa) for k in body]
    ground = lambda b: n if b < 0 else int(b)
    arr = lambda x, shape: np.array(x, float).reshape(shape)
    return ChordSet(chords, offsets[-1], np.array(offsets, dtype=int),
                    np.array(p_rows, dtype=int), np.array(p_chord, dtype=int), arr(N_p, (-1, 3)),
                    np.array(r_rows, dtype=int), np.array(r_chord, dtype=int), arr(U_r, (-1, 3)), arr(N_r, (-1, 3)),
                    np.array([ground(c.body_a) for c in chords], dtype=int),
                    np.array([ground(c.body_b) for c in chords], dtype=int),
                    arr([c.R_a for c in chords], (-1, 3, 3)), arr([c.p_a for c in chords], (-1, 3)),
                    arr([c.R_b for c in chords], (-1, 3, 3)), arr([c.p_b for c in chords], (-1, 3)), signs)


@dataclass(eq=False)
class ChordTerms:
    """Closure terms of a :class:`ChordSet` at one state.

    e : (R,) closure errors;  G : (R, nv) ``de/dq``;  gamma : (R,) ``Gdot v`` or None;
    K : (R, 6) rows mapping the relative twist ``V_rel`` (``J_a`` axes, at ``x_b``) to ``e_dot``;
    R_Ja : (n_c, 3, 3) world orientation of ``J_a``;  x_b : (n_c, 3) world origin of ``J_b``
    """

    e: np.ndarray
    G: np.ndarray
    gamma: np.ndarray | None
    K: np.ndarray
    R_Ja: np.ndarray
    x_b: np.ndarray


def _mv(A, x):
    """Batched matrix-vector product (..., i, j), (..., j) -> (..., i)."""
    return (A @ x[..., None])[..., 0]


def _dot(a, b):
    """Row-wise dot product (r, 3), (r, 3) -> (r,)."""
    return (a * b).sum(axis=-1)


def _ext(x, fill):
    return np.concatenate([x, fill[None]], axis=0)


def chord_set_terms(cs: ChordSet, kin: Kinematics, with_bias: bool = False) -> ChordTerms:
    """Closure errors, Jacobian and (optionally) ``gamma = Gdot v`` of all chords of ``cs``,
    vectorized over chords and rows (module docstring for the formulas)."""
    R = _ext(kin.R, np.eye(3))
    p = _ext(kin.p, np.zeros(3))
    Ra = R[cs.body_a] @ cs.R_a
    Rb = R[cs.body_b] @ cs.R_b
    xa = p[cs.body_a] + _mv(R[cs.body_a], cs.p_a)
    xb = p[cs.body_b] + _mv(R[cs.body_b], cs.p_b)
    d = xb - xa
    RaT = np.swapaxes(Ra, 1, 2)
    p_ab = _mv(RaT, d)
    R_ab = RaT @ Rb
    RU = _mv(R_ab[cs.r_chord], cs.U_r)               # R_ab u per orientation row
    e = np.empty(cs.n_rows)
    e[cs.p_rows] = _dot(cs.N_p, p_ab[cs.p_chord])
    e[cs.r_rows] = _dot(cs.N_r, RU)
    K = np.zeros((cs.n_rows, 6))
    K[cs.p_rows, 3:] = cs.N_p
    K[cs.r_rows, :3] = cross3(RU, cs.N_r)
    Sw = kin.S_w[None] * cs.signs[:, None, :]                              # (n_c, 3, nv)
    Sv = kin.S_v[None] * cs.signs[:, None, :] + np.swapaxes(
        cross3(np.swapaxes(Sw, 1, 2), xb[:, None, :] - kin.p_col[None]), 1, 2)
    Wl, Vl = RaT @ Sw, RaT @ Sv                                            # J_a axes
    G = np.empty((cs.n_rows, Sw.shape[2]))
    G[cs.p_rows] = (cs.N_p[:, None, :] @ Vl[cs.p_chord])[:, 0]
    G[cs.r_rows] = (K[cs.r_rows, None, :3] @ Wl[cs.r_chord])[:, 0]
    gamma = None
    if with_bias:
        z = np.zeros(3)
        w, v, wd, ad = (_ext(x, z) for x in (kin.w, kin.v, kin.wd, kin.ad))

        def motion(b, x):
            r = x - p[b]
            w_r = cross3(w[b], r)
            return w[b], v[b] + w_r, wd[b], ad[b] + cross3(wd[b], r) + cross3(w[b], w_r)

        nc = len(cs.body_a)
        wab, vab, wdab, aab = motion(np.concatenate([cs.body_a, cs.body_b]), np.concatenate([xa, xb]))
        wa_, va, wda, aa = wab[:nc], vab[:nc], wdab[:nc], aab[:nc]
        wb_, vb, wdb, ab_ = wab[nc:], vab[nc:], wdab[nc:], aab[nc:]
        dd, ddd = vb - va, ab_ - aa
        c_wa_d = cross3(wa_, d)
        p_dd = _mv(RaT, ddd - cross3(wda, d) - 2.0 * cross3(wa_, dd) + cross3(wa_, c_wa_d))
        gamma = np.empty(cs.n_rows)
        gamma[cs.p_rows] = _dot(cs.N_p, p_dd[cs.p_chord])
        if len(cs.r_rows):
            c = cs.r_chord
            ub = _mv(Rb[c], cs.U_r)                    # world
            wr, wdr = wb_[c] - wa_[c], wdb[c] - wda[c]
            h = cross3(wdr, ub) + cross3(wr, cross3(wb_[c], ub)) - cross3(wa_[c], cross3(wr, ub))
            gamma[cs.r_rows] = _dot(cs.N_r, _mv(RaT[c], h))
    return ChordTerms(e, G, gamma, K, Ra, xb)


def relative_motion(kin: Kinematics, chord: Chord):
    """Pose and (when ``kin`` has velocities) twist of ``J_b`` relative to ``J_a``.

    Returns
    -------
    R_ab : (3, 3); p_ab : (3,) m -- in ``J_a`` axes;
    w_rel, v_rel : (3,) or None -- ``R_Ja^T (w_b - w_a)`` and ``R_Ja^T (v_b(x_b) - v_a(x_b))``
    """
    Ra, xa = frame_pose(kin, chord.body_a, chord.R_a, chord.p_a)
    Rb, xb = frame_pose(kin, chord.body_b, chord.R_b, chord.p_b)
    R_ab, p_ab = Ra.T @ Rb, Ra.T @ (xb - xa)
    if kin.w is None:
        return R_ab, p_ab, None, None
    wa_, va = point_motion(kin, chord.body_a, xb)[:2]
    wb_, vb = point_motion(kin, chord.body_b, xb)[:2]
    return R_ab, p_ab, Ra.T @ (wb_ - wa_), Ra.T @ (vb - va)


def _single(model, q, v=None):
    from ..batch import prepare

    qb, vb, single, w, V, ac, bc, ag = prepare(model, q, v)
    if qb.shape[0] != 1:
        raise ValueError("closure functions take a single configuration")
    return kinematics(model, w, V, ac)


def closure_error(model: SKOModel, chords, q) -> np.ndarray:
    """Stacked closure errors of ``chords`` at q (nq,): (sum nc,)."""
    return chord_set_terms(chord_set(model, chords), _single(model, q)).e


def closure_jacobian(model: SKOModel, chords, q) -> np.ndarray:
    """``G(q) = de/dq`` (w.r.t. the velocity coordinates v), (sum nc, nv)."""
    return chord_set_terms(chord_set(model, chords), _single(model, q)).G


def closure_bias(model: SKOModel, chords, q, v) -> np.ndarray:
    """``gamma = Gdot(q, v) v``: the closure acceleration at zero joint accelerations, (sum nc,)."""
    return chord_set_terms(chord_set(model, chords), _single(model, q, v), with_bias=True).gamma
