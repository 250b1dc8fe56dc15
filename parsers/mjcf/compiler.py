"""MJCF ``<compiler>`` rules: angles, Euler sequences, orientations, and the mass rules.

As MuJoCo's compiler applies them (XML reference, ``compiler``), each checked
against ``mujoco.MjModel`` in the tests:

* ``angle`` (default degree), ``eulerseq``, the orientation attributes ``quat``,
  ``axisangle``, ``euler``, ``xyaxes``, ``zaxis`` (:func:`orientation`);
* ``boundmass`` and ``boundinertia``: lower bounds on each moving body's mass and
  principal moments; ``balanceinertia``: principal moments breaking the triangle
  inequality are replaced by their mean; ``settotalmass``: all masses and
  inertias scaled so that the model's mass is the value (:func:`bounded_mass`,
  :func:`total_mass_scale`).
"""

from __future__ import annotations

import numpy as np

from mbcompose.dynamics.spatial import axis_angle_to_matrix, quat_to_matrix, rot_x, rot_y, rot_z
from mbcompose.dynamics.tolerances import GEOMETRY_ATOL, INERTIA_ROUNDING_RTOL, PARALLEL_SINE

from ..assembly import MassProperties
from ..xml import error, parse_float, parse_floats

ORIENT_ATTRS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")


class Compiler:
    """``<compiler>`` settings that change what a model means (module docstring)."""

    def __init__(self):
        self.degree = True
        self.eulerseq = "xyz"
        self.meshdir = None
        self.assetdir = None
        self.inertiafromgeom = "auto"
        self.groups = (0, 5)
        self.fusestatic = False
        self.autolimits = True
        self.boundmass = 0.0
        self.boundinertia = 0.0
        self.balanceinertia = False
        self.settotalmass = -1.0
        self.fitaabb = False

    def update(self, el):
        a = el.attrib
        if "angle" in a:
            if a["angle"] not in ("degree", "radian"):
                raise error(el, f"compiler@angle must be 'degree' or 'radian', got {a['angle']!r}")
            self.degree = a["angle"] == "degree"
        if "coordinate" in a and a["coordinate"] != "local":
            raise error(el, f"compiler@coordinate={a['coordinate']!r} is not supported (MuJoCo removed "
                            "global coordinates; only 'local')")
        if "eulerseq" in a:
            seq = a["eulerseq"]
            if len(seq) != 3 or any(c not in "xyzXYZ" for c in seq) or (seq.islower() == seq.isupper()):
                raise error(el, f"compiler@eulerseq must be 3 letters of xyz (all lower or all upper), got {seq!r}")
            self.eulerseq = seq
        self.meshdir = a.get("meshdir", self.meshdir)
        self.assetdir = a.get("assetdir", self.assetdir)
        if "inertiafromgeom" in a:
            v = a["inertiafromgeom"]
            if v not in ("auto", "true", "false"):
                raise error(el, f"compiler@inertiafromgeom must be auto, true or false, got {v!r}")
            self.inertiafromgeom = v
        if "inertiagrouprange" in a:
            g = integers_attr(el, a["inertiagrouprange"], "compiler@inertiagrouprange", 2)
            self.groups = (g[0], g[1])
        if "fusestatic" in a:
            self.fusestatic = bool_attr(el, "fusestatic", a["fusestatic"])
        if "autolimits" in a:
            self.autolimits = bool_attr(el, "autolimits", a["autolimits"])
        for k in ("boundmass", "boundinertia", "settotalmass"):
            if k in a:
                setattr(self, k, parse_float(a[k], el, f"compiler@{k}"))
        if "fitaabb" in a:
            self.fitaabb = bool_attr(el, "fitaabb", a["fitaabb"])
        if "balanceinertia" in a:
            self.balanceinertia = bool_attr(el, "balanceinertia", a["balanceinertia"])

    def angle(self, v):
        return np.deg2rad(v) if self.degree else np.asarray(v, dtype=float)


def integers_attr(el, text: str, what: str, n: int) -> list[int]:
    """``n`` whitespace-separated integers (MJCF group numbers); InputError otherwise."""
    values = parse_floats(text, el, what, n)
    if not all(float(v).is_integer() for v in values):
        raise error(el, f"{what}: expected {n} integer(s), got {text.strip()[:40]!r}")
    return [int(v) for v in values]


def check_principal_moments(el, J: np.ndarray, balance: bool) -> None:
    """Positive semi-definite, and ``A + B >= C`` for the principal moments unless ``balanceinertia``
    will fix it, as MuJoCo's compiler demands."""
    scale = max(1.0, np.abs(J).max())
    eig = np.linalg.eigvalsh(0.5 * (J + J.T))
    if eig[0] < -INERTIA_ROUNDING_RTOL * scale:
        raise error(el, f"<inertial>: inertia is not positive semi-definite ({J.tolist()})")
    if not balance and eig[0] + eig[1] < eig[2] - INERTIA_ROUNDING_RTOL * scale:
        raise error(el, "<inertial>: inertia breaks the triangle inequality: principal moments "
                        f"{eig[0]:.6g} + {eig[1]:.6g} < {eig[2]:.6g} (MuJoCo: use 'balanceinertia' to fix)")


def bool_attr(el, name, v):
    if v in ("true", "1"):
        return True
    if v in ("false", "0"):
        return False
    raise error(el, f"{el.tag}@{name}: expected true or false, got {v!r}")


def floats_attr(el, attrs, name, n=None):
    v = attrs.get(name)
    if v is None:
        return None
    return parse_floats(v, el, f"{el.tag}@{name}", n)


def orientation(el, attrs, comp: Compiler) -> np.ndarray:
    """Rotation matrix from MJCF's orientation attributes of ``el`` (identity when none)."""
    given = [k for k in ORIENT_ATTRS if k in attrs]
    if len(given) > 1:
        raise error(el, f"<{el.tag}> has several orientations ({', '.join(given)}); give one")
    if not given:
        return np.eye(3)
    k = given[0]
    if k == "quat":
        q = floats_attr(el, attrs, k, 4)
        if not np.linalg.norm(q) > 0:
            raise error(el, f"<{el.tag}>@quat must be non-zero")
        return quat_to_matrix(q)
    if k == "axisangle":
        v = floats_attr(el, attrs, k, 4)
        if not np.linalg.norm(v[:3]) > 0:
            raise error(el, f"<{el.tag}>@axisangle: axis must be non-zero")
        return axis_angle_to_matrix(v[:3], float(comp.angle(v[3])))
    if k == "euler":
        v = comp.angle(floats_attr(el, attrs, k, 3))
        rot = {"x": rot_x, "y": rot_y, "z": rot_z}
        R = np.eye(3)
        seq = comp.eulerseq
        for ax, ang in zip(seq, v):
            Ri = rot[ax.lower()](ang)
            R = R @ Ri if ax.islower() else Ri @ R
        return R
    if k == "xyaxes":
        v = floats_attr(el, attrs, k, 6)
        x = v[:3]
        y = v[3:]
        if not np.linalg.norm(x) > 0:
            raise error(el, f"<{el.tag}>@xyaxes: x axis must be non-zero")
        x = x / np.linalg.norm(x)
        y = y - x * (x @ y)
        if not np.linalg.norm(y) > GEOMETRY_ATOL:
            raise error(el, f"<{el.tag}>@xyaxes: y axis is parallel to x")
        y = y / np.linalg.norm(y)
        return np.column_stack([x, y, np.cross(x, y)])
    z = floats_attr(el, attrs, "zaxis", 3)
    return zaxis_rotation(el, z)


def zaxis_rotation(el, z) -> np.ndarray:
    """The smallest rotation taking +z to ``z`` (MuJoCo's ``zaxis`` / ``fromto`` rule)."""
    n = np.linalg.norm(z)
    if not n > 0:
        raise error(el, f"<{el.tag}>: z axis must be non-zero")
    z = z / n
    ez = np.array([0.0, 0.0, 1.0])
    c = float(ez @ z)
    axis = np.cross(ez, z)
    s = np.linalg.norm(axis)
    if s < PARALLEL_SINE:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    return axis_angle_to_matrix(axis, np.arctan2(s, c))


def bounded_mass(mp: MassProperties, comp: Compiler) -> MassProperties:
    """A moving body's mass properties after ``boundmass``, ``boundinertia`` and ``balanceinertia``.

    The bounds act on the mass and on the principal moments (MuJoCo keeps the
    principal axes); the balance replaces moments with ``A + B < C`` by their mean.
    """
    if not (comp.boundmass > 0 or comp.boundinertia > 0 or comp.balanceinertia):
        return mp
    mass = max(mp.mass, comp.boundmass)
    moments, axes = np.linalg.eigh(0.5 * (mp.inertia + mp.inertia.T))
    moments = np.maximum(moments, comp.boundinertia)
    if comp.balanceinertia:
        a, b, c = moments
        if a + b < c or a + c < b or b + c < a:
            moments = np.full(3, moments.mean())
    return MassProperties(mass, mp.com, axes @ np.diag(moments) @ axes.T)


def total_mass_scale(masses, comp: Compiler) -> float:
    """The factor ``settotalmass`` applies to every body's mass and inertia (1 when not set)."""
    total = float(sum(masses))
    if comp.settotalmass > 0 and total > 0:
        return comp.settotalmass / total
    return 1.0
