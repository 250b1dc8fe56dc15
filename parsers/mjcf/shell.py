"""Shell inertia of MJCF primitive geoms (``geom@shellinertia="true"``), by MuJoCo's rules.

With ``shellinertia`` MuJoCo takes a geom's mass as spread over its surface: ``density``
is then a surface density (kg/m^2) and the "volume" that multiplies it is the area
(``mjCGeom::GetVolume`` / ``SetInertia`` of MuJoCo's compiler, ``user_objects.cc``).
Sphere, box, cylinder (lateral surface and two disks) and capsule (lateral surface and
two hemispherical shells) are the exact thin shells.  The ellipsoid has no closed form:
MuJoCo takes Thomsen's approximation of its area (p = 1.6075) for the mass, and for the
inertia the difference of two solid ellipsoids whose semi-axes differ by 1e-6 m at the
density that gives that mass; both are reproduced here, so our numbers are MuJoCo's.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["shell_unit_properties"]

#: Thomsen's exponent for the area of an ellipsoid
THOMSEN_P = 1.6075
#: MuJoCo's shell thickness for the ellipsoid's inertia, m
ELLIPSOID_SHELL = 1e-6


def shell_unit_properties(kind: str, params: dict) -> tuple[float, np.ndarray]:
    """Area (m^2) and principal moments (3,) about the centre at unit surface density.

    kind, params : a primitive :class:`parsers.assembly.Geometry` (sphere ``radius``; box
        ``size``, full edges; cylinder and capsule ``radius``, ``length`` along z;
        ellipsoid ``radii``), in the geom frame.
    """
    if kind == "sphere":
        r = params["radius"]
        area = 4 * math.pi * r * r
        return area, np.full(3, 2 * area * r * r / 3)
    if kind == "box":
        return _box(np.asarray(params["size"], dtype=float) / 2)
    if kind in ("cylinder", "capsule"):
        return (_cylinder if kind == "cylinder" else _capsule)(params["radius"], params["length"] / 2)
    if kind == "ellipsoid":
        return _ellipsoid(np.asarray(params["radii"], dtype=float))
    raise ValueError(f"no shell inertia for a {kind} geom")


def _box(half) -> tuple[float, np.ndarray]:
    """Six rectangular plates: each pair at distance ``half[k]`` from the centre along axis k."""
    lx, ly, lz = 2 * half
    faces = {2: (lx * ly, lx, ly), 0: (ly * lz, ly, lz), 1: (lz * lx, lz, lx)}   # normal axis -> area, edges
    moments = np.zeros(3)
    for normal, (area, _, _) in faces.items():
        edges = 2 * half.copy()
        edges[normal] = 0.0
        for axis in range(3):
            others = [k for k in range(3) if k != axis]
            # a plate's own moment (edges in the plane) plus the offset of its pair along the normal
            own = area * sum(edges[k] ** 2 for k in others) / 12
            offset = area * half[normal] ** 2 if normal != axis else 0.0
            moments[axis] += 2 * (own + offset)
    return 2 * sum(f[0] for f in faces.values()), moments


def _cylinder(r, half_height) -> tuple[float, np.ndarray]:
    """Lateral surface and two disks at ``+-half_height``."""
    h = 2 * half_height
    a_side, a_disk = 2 * math.pi * r * h, math.pi * r * r
    side = np.array([a_side * (6 * r * r + h * h) / 12] * 2 + [a_side * r * r])
    disk_x = a_disk * (r * r / 4 + half_height * half_height)
    disks = 2 * np.array([disk_x, disk_x, a_disk * r * r / 2])
    return a_side + 2 * a_disk, side + disks


def _capsule(r, half_height) -> tuple[float, np.ndarray]:
    """Lateral surface and two hemispherical shells (centroid r/2 from their base) at the ends."""
    h = 2 * half_height
    a_side, a_sphere = 2 * math.pi * r * h, 4 * math.pi * r * r
    side = np.array([a_side * (6 * r * r + h * h) / 12] * 2 + [a_side * r * r])
    own = 2 * a_sphere * r * r / 3
    c = r / 2
    shift = a_sphere * ((half_height + c) ** 2 - c * c)
    return a_side + a_sphere, side + np.array([own + shift, own + shift, own])


def _ellipsoid(radii) -> tuple[float, np.ndarray]:
    """Thomsen's area; inertia of a 1e-6 m thick shell (difference of two solids) scaled to that area."""
    a, b, c = radii
    p = THOMSEN_P
    area = 4 * math.pi * (((a * b) ** p + (b * c) ** p + (c * a) ** p) / 3) ** (1 / p)
    outer = radii + ELLIPSOID_SHELL
    v_in, v_out = 4 * math.pi * np.prod(radii) / 3, 4 * math.pi * np.prod(outer) / 3
    rho = area / (v_out - v_in)

    def solid(volume, s):
        return rho * volume * np.array([s[1] ** 2 + s[2] ** 2, s[0] ** 2 + s[2] ** 2, s[0] ** 2 + s[1] ** 2]) / 5
    return area, solid(v_out, outer) - solid(v_in, radii)
