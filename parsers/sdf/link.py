"""SDFormat links: ``<inertial>`` (or SDFormat's default, or ``auto`` from collisions) and shapes.

Rules: :mod:`parsers.sdf.reader` (Choices).  A link of a static model without ``<inertial>`` is
massless (it is welded to the world: its mass would only add to the total).  Poses of inertials, visuals and collisions
are relative to their link unless ``relative_to`` names another frame.
"""

from __future__ import annotations

import logging
import os

import numpy as np

from mbcompose.dynamics.spatial import quat_to_matrix, rpy_to_matrix
from mbcompose.dynamics.tolerances import INERTIA_ROUNDING_RTOL

from ..assembly import Geometry, MassProperties, Pose, Source
from ..errors import FOREIGN_TEXT, InputError
from ..massprops import combine, mesh_suffix_problem, shape_mass_properties
from ..urdf.geometry import resolve_uri
from ..xml import attr_bool, child_text, error, file_of, text_float, text_floats

log = logging.getLogger(__name__)
log.addFilter(FOREIGN_TEXT)  # (warnings about a file outside the model folder say where, not what)


def pose_of(el) -> tuple[Pose, str | None, object]:
    """The ``<pose>`` child of ``el``: (pose, relative_to or None, the pose element)."""
    p = el.find("pose")
    if p is None:
        return Pose(), None, None
    fmt = p.get("rotation_format", "euler_rpy")
    if fmt == "quat_xyzw":
        v = text_floats(p, 7)
        R = quat_to_matrix([v[6], v[3], v[4], v[5]])
    elif fmt == "euler_rpy":
        v = text_floats(p, 6) if (p.text or "").strip() else np.zeros(6)
        ang = v[3:]
        if attr_bool(p, "degrees", False):
            ang = np.deg2rad(ang)
        R = rpy_to_matrix(ang)
    else:
        raise error(p, f"pose@rotation_format must be euler_rpy or quat_xyzw, got {fmt!r}")
    if p.get("frame"):
        raise error(p, "pose@frame (SDFormat 1.5) is not supported; use relative_to (1.7+)")
    rel = p.get("relative_to")
    return Pose(R, v[:3]), (rel if rel else None), p


def link_contents(l_el, fm, lname, file, base_dir, package_dirs):
    """A link's mass properties (in the link frame), their source, and its shapes (``fm``: the model's
    frame graph, for poses ``relative_to`` other frames)."""
    X_link = fm.resolve(lname, l_el)

    def local_pose(el):
        pose, rel, pel = pose_of(el)
        if rel is None:
            return pose
        if not fm.v17:
            raise error(pel, "pose@relative_to needs SDFormat 1.7 or later")
        return X_link.inverse().compose(fm.resolve(rel, pel)).compose(pose)

    geoms, dens = [], []
    for role in ("visual", "collision"):
        for s_el in l_el.findall(role):
            g = _geometry(s_el, role, local_pose(s_el), base_dir, package_dirs)
            if g is None:
                continue
            geoms.append(g)
            if role == "collision":
                d = s_el.find("density")
                dens.append((g, 1000.0 if d is None else text_float(d), s_el))
    inl = l_el.find("inertial")
    if inl is None and getattr(fm, "static", False):
        return MassProperties.zero(), Source(file, l_el.sourceline, "static model, no <inertial>"), tuple(geoms)
    if inl is None:
        log.warning("%s:%s: link %r has no <inertial>: SDFormat's default (1 kg, unit inertia) is used",
                    file, l_el.sourceline, lname)
        return (MassProperties(1.0, np.zeros(3), np.eye(3)), Source(file, l_el.sourceline, "SDFormat default inertial"),
                tuple(geoms))
    if attr_bool(inl, "auto", False):
        parts = []
        for g, rho, s_el in dens:
            if not rho > 0:
                raise error(s_el, f"link {lname!r}: collision density must be > 0, got {rho:g}")
            try:
                parts.append(shape_mass_properties(g, rho))
            except InputError as exc:
                raise error(s_el, f"link {lname!r}: {exc.message}") from None
        if not parts:
            raise error(inl, f"link {lname!r}: <inertial auto='true'> needs collisions")
        return combine(parts), Source(file, inl.sourceline, "computed from collisions"), tuple(geoms)
    pose = local_pose(inl)
    mass = 1.0
    m_el = inl.find("mass")
    if m_el is not None:
        mass = text_float(m_el)
        if mass < 0:
            raise error(m_el, f"link {lname!r}: mass must be >= 0, got {mass:g}")
    vals = {"ixx": 1.0, "iyy": 1.0, "izz": 1.0, "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}
    i_el = inl.find("inertia")
    if i_el is not None:
        for k in vals:
            c = i_el.find(k)
            if c is not None:
                vals[k] = text_float(c)
    J = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]],
                  [vals["ixy"], vals["iyy"], vals["iyz"]],
                  [vals["ixz"], vals["iyz"], vals["izz"]]])
    if np.linalg.eigvalsh(J)[0] < -INERTIA_ROUNDING_RTOL * max(1.0, np.abs(J).max()):
        raise error(i_el, f"link {lname!r}: inertia is not positive semi-definite")
    R = pose.rotation
    return MassProperties(mass, pose.translation, R @ J @ R.T), Source(file, inl.sourceline), tuple(geoms)


def _geometry(s_el, role, pose, base_dir, package_dirs):
    g = s_el.find("geometry")
    if g is None or len(g) == 0:
        raise error(s_el, f"<{role}> needs a <geometry> with one shape")
    s = g[0]
    if s.tag == "box":
        return Geometry("box", {"size": _positive(s, "size", 3)}, pose, None, role)
    if s.tag in ("cylinder", "capsule"):
        return Geometry(s.tag, {"radius": float(_positive(s, "radius", 1)[0]),
                                "length": float(_positive(s, "length", 1, zero=s.tag == "capsule")[0])},
                        pose, None, role)
    if s.tag == "sphere":
        return Geometry("sphere", {"radius": float(_positive(s, "radius", 1)[0])}, pose, None, role)
    if s.tag == "ellipsoid":
        return Geometry("ellipsoid", {"radii": _positive(s, "radii", 3)}, pose, None, role)
    if s.tag in ("plane", "heightmap"):
        return None
    if s.tag == "mesh":
        uri = child_text(s, "uri")
        if not uri:
            raise error(s, "<mesh> needs <uri>")
        sc = s.find("scale")
        scale = np.ones(3) if sc is None else text_floats(sc, 3)
        u = uri.replace("model://", "package://", 1) if uri.startswith("model://") else uri
        p = resolve_uri(u, base_dir, package_dirs)
        if p is None and u.startswith("/") and not os.path.exists(u):
            p = resolve_uri(u.lstrip("/"), base_dir, package_dirs)
            if p is not None:
                log.warning("%s:%s: mesh %r does not exist; %s, beside the file, is read (as pybullet reads it)",
                            file_of(s), s.sourceline, uri, p)
        if p is None:
            if role == "collision":
                raise error(s.find("uri"), f"mesh file not found: {uri!r}")
            log.warning("%s:%s: visual mesh not found: %r (shape skipped)", file_of(s), s.sourceline, uri)
            return None
        problem = mesh_suffix_problem(p)
        if problem is not None:
            raise error(s.find("uri"), f"mesh {uri!r}: not a mesh file ({problem})")
        return Geometry("mesh", {"scale": scale, "uri": uri}, pose, str(p), role)
    raise error(s, f"geometry <{s.tag}> is not supported")


def _positive(shape_el, tag, n, zero=False):
    """The ``n`` numbers of ``<tag>`` in a shape: each > 0 (>= 0 where ``zero``): a shape without
    volume has no mass properties, and its density would give NaN."""
    el = _need(shape_el, tag)
    values = text_floats(el, n)
    if np.any(values < 0) or (not zero and np.any(values == 0)):
        raise error(el, f"<{shape_el.tag}> <{tag}> must be {'>= 0' if zero else 'positive'}, "
                        f"got {' '.join(f'{v:g}' for v in values)}")
    return values


def _need(el, tag):
    c = el.find(tag)
    if c is None:
        raise error(el, f"<{el.tag}> needs <{tag}>")
    return c
