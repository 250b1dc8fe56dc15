"""The freedom between two parts: intersection of the motion subspaces of their contacts.

Twists are ``t = [omega; v]`` (angular first, seed 002's spatial convention) with
``v`` the velocity of the common reference point ``O`` and lengths divided by a
characteristic length ``L`` so that both halves are comparable.  Each contact
allows a subspace (:func:`allowed_twists`):

* bearing along unit ``a`` through ``p``: ``[a; a x (O - p)]`` and ``[0; a]``;
* planar contact with normal ``n`` through ``p``: ``[n; n x (O - p)]``, ``[0; e1]``, ``[0; e2]``;
* ball about centre ``c``: ``[e_i; e_i x (O - c)]``, i = 1..3;
* press fit: nothing.

The freedom is the intersection: the null space of the stacked projectors
``I - S_k S_k^T`` onto the complements (singular values below the tolerance count
as zero, so placement noise within the tolerances does not lock a joint).  It is
then named (:func:`classify`): fixed, revolute, prismatic, cylindrical, spherical,
planar, or None for anything else (a screw, two rotations, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mbcompose.dynamics.tolerances import SINGULAR_FLOOR

from .mating import Contact


@dataclass(frozen=True, eq=False)
class Freedom:
    """A named freedom: ``type`` (a joint type or None), ``origin`` and ``axis`` (3,), ``dim``."""

    type: str | None
    origin: np.ndarray
    axis: np.ndarray
    dim: int


def _skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _perp(n: np.ndarray) -> np.ndarray:
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    e1 = np.cross(n, helper)
    e1 /= np.linalg.norm(e1)
    return np.array([e1, np.cross(n, e1)])


def _rotation_about(axis: np.ndarray, point: np.ndarray, origin: np.ndarray, length: float) -> np.ndarray:
    return np.concatenate([axis, np.cross(axis, origin - point) / length])


def allowed_twists(contact: Contact, origin: np.ndarray, length: float) -> np.ndarray:
    """(6, k) basis of the twists ``contact`` allows, about ``origin``, v scaled by 1/length."""
    zero = np.zeros(3)
    if contact.kind == "press fit":
        return np.zeros((6, 0))
    if contact.kind == "bearing":
        a = contact.axis
        cols = [_rotation_about(a, contact.point, origin, length), np.concatenate([zero, a])]
    elif contact.kind == "planar":
        n = contact.axis
        cols = [_rotation_about(n, contact.point, origin, length)]
        cols += [np.concatenate([zero, e]) for e in _perp(n)]
    elif contact.kind == "ball":
        cols = [_rotation_about(e, contact.point, origin, length) for e in np.eye(3)]
    else:
        raise ValueError(f"unknown contact kind {contact.kind!r}")
    return np.array(cols).T


def intersect(bases: list[np.ndarray], tol: float) -> np.ndarray:
    """(6, d) orthonormal basis of the intersection of the column spaces of ``bases``."""
    blocks = []
    for s in bases:
        q, _ = np.linalg.qr(s) if s.shape[1] else (np.zeros((6, 0)), None)
        blocks.append(np.eye(6) - q @ q.T)
    _, sv, vt = np.linalg.svd(np.vstack(blocks))      # (6k, 6): always six singular values
    return vt[sv < tol].T


def canonical_axis(a: np.ndarray) -> np.ndarray:
    """The unit axis with its largest component positive (a joint axis has no preferred sign)."""
    a = a / np.linalg.norm(a)
    return a if a[int(np.argmax(np.abs(a)))] > 0 else -a


def _rank(m: np.ndarray, tol: float) -> int:
    return int((np.linalg.svd(m, compute_uv=False) > tol).sum()) if m.size else 0


def classify(basis: np.ndarray, origin: np.ndarray, length: float, near: np.ndarray, tol: float) -> Freedom:
    """Name the freedom spanned by ``basis`` (6, d) (twists about ``origin``, v scaled by 1/length).

    near : (3,) point the joint origin is placed closest to (the contacts' centre).
    """
    d = basis.shape[1]
    if d == 0:
        return Freedom("fixed", near, np.array([0.0, 0.0, 1.0]), 0)
    w, v = basis[:3], basis[3:] * length
    rw = _rank(w, tol)
    if d == 1:
        if rw == 0:
            return Freedom("prismatic", near, canonical_axis(v[:, 0]), 1)
        return _revolute(w[:, 0], v[:, 0], origin, near, tol, length)
    if d == 2 and rw == 1:
        return _cylindrical(w, v, origin, near, tol, length)
    if d == 3 and rw == 3:
        return _spherical(w, v, origin, near, tol, length)
    if d == 3 and rw == 1:
        return _planar(w, v, near, tol)
    return Freedom(None, near, np.array([0.0, 0.0, 1.0]), d)


def _revolute(w, v, origin, near, tol, length) -> Freedom:
    nw = np.linalg.norm(w)
    a = w / nw
    if abs(np.dot(a, v / nw)) / length > tol:  # a screw: rotation with translation along the axis
        return Freedom(None, near, a, 1)
    point = origin + np.cross(w, v) / nw ** 2
    return _on_axis(Freedom("revolute", point, canonical_axis(a), 1), near)


def _on_axis(f: Freedom, near: np.ndarray) -> Freedom:
    """The same freedom with its origin moved along the axis to the point closest to ``near``."""
    p = f.origin + np.dot(near - f.origin, f.axis) * f.axis
    return Freedom(f.type, p, f.axis, f.dim)


def _cylindrical(w, v, origin, near, tol, length) -> Freedom:
    u, _, _ = np.linalg.svd(w)
    a = u[:, 0]
    coeff = np.linalg.lstsq(w, a, rcond=None)[0]        # the twist whose rotation is a
    null = np.linalg.svd(w)[2][-1]                      # the pure translation of the subspace
    t = v @ null
    if np.linalg.norm(np.cross(t / np.linalg.norm(t), a)) > tol:
        return Freedom(None, near, a, 2)
    vr = v @ coeff
    vr = vr - np.dot(vr, a) * a
    return _on_axis(Freedom("cylindrical", origin + np.cross(a, vr), canonical_axis(a), 2), near)


def _spherical(w, v, origin, near, tol, length) -> Freedom:
    a = np.vstack([_skew(w[:, i]) for i in range(3)])
    x, *_ = np.linalg.lstsq(a, np.concatenate([v[:, i] for i in range(3)]), rcond=None)
    residual = np.linalg.norm(a @ x - np.concatenate([v[:, i] for i in range(3)]))
    if residual / length > tol * np.sqrt(3):
        return Freedom(None, near, np.array([0.0, 0.0, 1.0]), 3)
    return Freedom("spherical", origin - x, np.array([0.0, 0.0, 1.0]), 3)


def _planar(w, v, near, tol) -> Freedom:
    u, _, vt = np.linalg.svd(w)
    n = u[:, 0]
    translations = v @ vt[1:].T                         # the two twists without rotation
    if np.linalg.norm(translations.T @ n) > tol * np.linalg.norm(translations):
        return Freedom(None, near, n, 3)
    return Freedom("planar", near, canonical_axis(n), 3)


def pair_freedom(contacts: list[Contact], angle_tol: float, contact_tol: float) -> Freedom:
    """The freedom all ``contacts`` of one part pair leave (press fits make it fixed)."""
    points = np.array([c.point for c in contacts])
    near = points.mean(axis=0)
    if any(c.kind == "press fit" for c in contacts):
        return Freedom("fixed", near, np.array([0.0, 0.0, 1.0]), 0)
    length = max(SINGULAR_FLOOR, float(np.max(np.linalg.norm(points - near, axis=1))),
                 max(max(c.radii) for c in contacts), 100.0 * contact_tol)
    tol = 3.0 * max(angle_tol, contact_tol / length)
    basis = intersect([allowed_twists(c, near, length) for c in contacts], tol)
    return classify(basis, near, length, near, tol)


def coplanar(contacts: list[Contact], angle_tol: float, contact_tol: float) -> bool:
    """True when every contact is planar and all lie in one plane."""
    if not all(c.kind == "planar" for c in contacts):
        return False
    n, p = contacts[0].axis, contacts[0].point
    return all(np.linalg.norm(np.cross(c.axis, n)) <= angle_tol and abs(np.dot(c.point - p, n)) <= contact_tol
               for c in contacts)
