"""Positions and velocities of a constraint-embedded closed chain (seed 000 sections 5-6).

* :func:`complete_configuration`: the dependent coordinates ``theta_d`` solve the
  loop closure ``e(theta) = 0`` by Newton's method (exact Jacobian,
  :mod:`dynamics.closed.closure`), the independent ones kept;
* :func:`complete_velocity`: ``theta_dot_S = X theta_dot_i`` with the null-space basis
  ``X = [I; -G_d^-1 G_i]`` of the closure Jacobian;
* :func:`project_configuration`, :func:`project_velocity`, :func:`project_state`: the
  same without a choice of independent coordinates (minimum-norm steps, orthogonal
  projection onto ``{v : G v = 0}``);
* :func:`chord_coordinates`: the coordinates of the loop-closing joints themselves.

Functions take one configuration (``q`` (nq,), ``v`` (nv,)), full tree vectors in the
tree model's order, dependent joints included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import joints as J
from ..batch import prepare
from ..kinematics import integrate
from ..spatial import matrix_to_quat
from ..tolerances import CLOSURE_TOL, NEWTON_MAX_ITER, NEWTON_MAX_STEP, RCOND_MIN, SINGULAR_FLOOR
from .closure import kinematics, relative_motion
from .embedded_state import check_closed, constraint_terms, dependent_inverse, embedded_state, loop_closure

if TYPE_CHECKING:
    from .embedded_model import EmbeddedModel

__all__ = ["complete_configuration", "complete_velocity", "null_space_basis", "project_configuration",
           "project_velocity", "project_state", "chord_coordinates"]


def _closure_at(em, q, lp) -> tuple[np.ndarray, np.ndarray]:
    """(e, G): the closure error (all rows) and Jacobian (kept rows) of loop ``lp`` at q (nq,)."""
    w = prepare(em.tree_model, q)[3]
    e, G, _ = loop_closure(constraint_terms(em, kinematics(em.tree_model, w), np.asarray(q, float)), lp)
    return e, G


def complete_configuration(em: "EmbeddedModel", q_guess=None, q_ind=None, tol: float = CLOSURE_TOL,
                           max_iter: int = NEWTON_MAX_ITER) -> np.ndarray:
    """Close every loop by Newton's method on the dependent coordinates.

    Parameters
    ----------
    q_guess : (nq,), optional -- starting configuration (default ``em.neutral()``)
    q_ind : mapping coordinate name -> value, or (n_independent,) array, optional --
        values of the independent coordinates (one-coordinate joints, and the
        coordinates of Euclidean joints), set in ``q_guess`` before iterating
    tol : closure error accepted (m, rad);  max_iter : Newton iterations per loop

    Returns
    -------
    (nq,) closed configuration; the independent coordinates are those of the start
    (for quaternion joints only the dependent velocity directions move).

    Raises
    ------
    ClosureError -- the loop does not close (no convergence, or redundant constraints
    left violated) or ``G_d`` is singular on the way.
    """
    m = em.tree_model
    q = (em.neutral() if q_guess is None else np.asarray(q_guess, float)).copy()
    if q_ind is not None:
        vals = dict(q_ind) if isinstance(q_ind, dict) else dict(zip(em.independent, np.asarray(q_ind, float)))
        for name, val in vals.items():
            _set_coordinate(em, q, name, val)
    for lp in em.loops:
        polish, last = 0, np.inf
        for it in range(max_iter + 1):
            e, G = _closure_at(em, q, lp)
            err = np.max(np.abs(e), initial=0.0)
            if err <= tol:
                # converged; Newton steps while they still reduce the error (quadratic
                # convergence takes it to rounding level, so G's null space is exact)
                if polish == 2 or err == 0.0 or err > 0.5 * last or len(lp.dep) == 0:
                    break
                polish += 1
            last = err
            if it == max_iter:
                raise lp.error(f"Newton's method did not close the loop in {max_iter} iterations "
                               f"(closure error {np.max(np.abs(e)):.3g}): the loop cannot close here", em)
            lu = dependent_inverse(em, lp, G)
            if lu is None:
                raise lp.error(f"the loop is not closed (error {np.max(np.abs(e)):.3g}) and has no "
                               "dependent coordinates to close it", em)
            dv = np.zeros(m.nv)
            dv[lp.v_idx[lp.dep]] = -lu.solve(e[lp.rows])
            if not np.all(np.isfinite(dv)) or np.max(np.abs(dv)) > NEWTON_MAX_STEP:
                raise lp.error("Newton's method diverged: the loop cannot close here", em)
            q = integrate(m, q, dv)
    return q


def project_velocity(em: "EmbeddedModel", q, v) -> np.ndarray:
    """Orthogonal projection of joint velocities v (nv,) onto the constraint tangent space
    ``{v : G(q) v = 0}`` at a closed q: ``v - G^T (G G^T)^-1 G v`` loop by loop (kept rows).

    Unlike :func:`complete_velocity` it needs no choice of independent coordinates, so it
    stays well defined where the default dependent block is singular (e.g. a five-bar with
    its distal links in line); it fails only where the loop's own constraints lose rank.
    """
    st = embedded_state(em, q, adaptive=True)
    v = np.array(v, dtype=float)
    for lp in em.loops:
        check_closed(em, lp, st.closure[lp.node][0])
        G = st.closure[lp.node][1]
        if G.shape[0] == 0:
            continue
        vs = v[lp.v_idx]
        v[lp.v_idx] = vs - G.T @ np.linalg.solve(G @ G.T, G @ vs)
    return v


def project_configuration(em: "EmbeddedModel", q, tol: float = CLOSURE_TOL,
                          max_iter: int = NEWTON_MAX_ITER) -> np.ndarray:
    """Close every loop by Gauss-Newton steps of minimum norm, ``dq = -G^T (G G^T)^-1 e``.

    Unlike :func:`complete_configuration` all coordinates of a loop may move (the
    smallest move that closes it), so it needs no choice of independent coordinates and
    works through configurations where the default dependent block is singular; it
    fails (:class:`ClosureError`) only where the loop's own constraints lose rank or
    cannot be met.
    """
    m = em.tree_model
    q = np.array(q, dtype=float)
    for lp in em.loops:
        last = np.inf
        for it in range(max_iter + 1):
            e, G = _closure_at(em, q, lp)
            err = np.max(np.abs(e), initial=0.0)
            if err <= tol and (err == 0.0 or err > 0.5 * last or G.shape[0] == 0):
                break
            if it == max_iter:
                if err <= tol:
                    break
                raise lp.error(f"Gauss-Newton did not close the loop in {max_iter} iterations "
                               f"(closure error {err:.3g}): the loop cannot close here", em)
            if G.shape[0] == 0:
                raise lp.error(f"the loop is not closed (error {err:.3g}) and has no coordinates to "
                               "close it", em)
            sv = np.linalg.svd(G, compute_uv=False)
            if sv[-1] <= RCOND_MIN * max(sv[0], SINGULAR_FLOOR):
                raise lp.error(f"the closure Jacobian loses rank (singular values {sv[-1]:.3g} .. "
                               f"{sv[0]:.3g})", em)
            dv = np.zeros(m.nv)
            dv[lp.v_idx] = -G.T @ np.linalg.solve(G @ G.T, e[lp.rows])
            q = integrate(m, q, dv)
            last = err
    return q


def project_state(em: "EmbeddedModel", q, v):
    """A consistent state near (q, v) without choosing independent coordinates: the loops
    closed by :func:`project_configuration`, then v projected by :func:`project_velocity`.
    For integrators that carry the full (q, v) (e.g. through parametrization singularities
    of the independent coordinates).  Returns (q (nq,), v (nv,))."""
    qc = project_configuration(em, q)
    return qc, project_velocity(em, qc, v)


def _set_coordinate(em, q, name, val):
    m = em.tree_model
    if "[" in name:
        jn, i = name[:-1].split("[")
        k = m.joint_index(jn)
        i = int(i)
    else:
        jn, k, i = name, m.joint_index(name), 0
    if not J.JOINTS[m.joint_types[k]].euclidean:
        raise ValueError(f"coordinate {name!r} of a {m.joint_types[k]} joint cannot be set by value")
    q[m.q_slice(k).start + i] = val


def complete_velocity(em: "EmbeddedModel", q, v_ind) -> np.ndarray:
    """Full joint velocities ``v = X(q) v_ind`` at a closed q.

    Parameters
    ----------
    q : (nq,) closed configuration
    v_ind : (n_independent,) in ``em.independent`` order, or (nv,) (its independent entries are used)

    Returns
    -------
    (nv,) with ``G(q) v = 0``.
    """
    v_ind = np.asarray(v_ind, float)
    if v_ind.shape == (em.nv,):
        v_ind = v_ind[em.independent_v]
    st = embedded_state(em, q)
    v = np.zeros(em.nv)
    v[em.independent_v] = v_ind
    for lp in em.loops:
        check_closed(em, lp, st.closure[lp.node][0])
        vi = v[lp.v_idx[lp.ind]]
        v[lp.v_idx] = st.X[lp.node] @ vi
    return v


def null_space_basis(em: "EmbeddedModel", q) -> np.ndarray:
    """``X(q)`` (nv, n_independent): tree velocities per unit independent velocity at a closed q."""
    return np.column_stack([complete_velocity(em, q, e) for e in np.eye(em.n_independent)])


def _angle_about(u, R_ab) -> float:
    """The angle of rotation ``R_ab`` (3, 3) about unit axis ``u`` (3,), rad: of a vector normal to ``u``."""
    a1 = np.cross(u, [1.0, 0, 0] if abs(u[0]) < 0.9 else [0, 1.0, 0])
    a1 /= np.linalg.norm(a1)
    a2 = np.cross(u, a1)
    Rn = R_ab @ a1
    return np.arctan2(a2 @ Rn, a1 @ Rn)


def _planar_chord(n, R_ab, p_ab, w_rel, v_rel):
    """(x, y, theta) and (vx, vy, omega) of a planar chord, as a tree planar joint would have
    them (:mod:`dynamics.joints`): in-plane position along (e1, e2) of ``J_a``, the angle
    about the normal, the in-plane velocity along the *moving* frame's e1, e2."""
    e1, e2 = J.plane_basis(n)
    Re1 = R_ab @ e1
    qc = [e1 @ p_ab, e2 @ p_ab, np.arctan2(e2 @ Re1, e1 @ Re1)]
    vc = None if w_rel is None else [Re1 @ v_rel, (R_ab @ e2) @ v_rel, n @ w_rel]
    return qc, vc


def chord_coordinates(em: "EmbeddedModel", q, v=None) -> dict:
    """Coordinates (and rates) of the chord joints, which are not tree coordinates.

    A chord's coordinates are those its joint type would have as a tree joint, read
    from the relative pose of its frames ``J_b`` in ``J_a`` (zero at the reference
    configuration): revolute/continuous the angle about the axis, prismatic the
    displacement along it, cylindrical (angle, displacement), spherical the
    quaternion ``[w, x, y, z]`` of ``R_ab`` (rates: angular velocity in ``J_b`` axes,
    like a tree spherical joint), planar (x, y, theta) (:func:`_planar_chord`), fixed none.

    Parameters
    ----------
    q : (nq,) closed configuration;  v : (nv,) optional

    Returns
    -------
    dict chord name -> (q_chord (nq_c,), v_chord (nv_c,) or None)
    """
    m = em.tree_model
    qb, vb, single, w, V, ac, bc, ag = prepare(m, q, v)
    kin = kinematics(m, w, V, ac)
    out = {}
    for c in em.chords:
        R_ab, p_ab, w_rel, v_rel = relative_motion(kin, c)
        u, t = c.axis, J.JOINTS[c.type].moves_as
        if t == "revolute":
            qc = [_angle_about(u, R_ab)]
            vc = None if w_rel is None else [u @ w_rel]
        elif t == "cylindrical":
            qc = [_angle_about(u, R_ab), u @ p_ab]
            vc = None if w_rel is None else [u @ w_rel, u @ v_rel]
        elif t == "prismatic":
            qc = [u @ p_ab]
            vc = None if v_rel is None else [u @ v_rel]
        elif t == "spherical":
            qc = matrix_to_quat(R_ab)
            vc = None if w_rel is None else R_ab.T @ w_rel
        elif t == "planar":
            qc, vc = _planar_chord(u, R_ab, p_ab, w_rel, v_rel)
        elif t == "fixed":
            qc, vc = [], None if w_rel is None else []
        else:
            raise NotImplementedError(f"coordinates of a {c.type} chord ({c.name!r}) are not implemented")
        out[c.name] = (np.asarray(qc, float), None if vc is None else np.asarray(vc, float))
    return out
