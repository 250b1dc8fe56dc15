"""MJCF ``<attach>`` and model assets: another model's subtree copied into this one.

As MuJoCo's XML reader does it (``src/xml/xml_native_reader.cc``, the ``attach`` branch of
``mjXReader::Body``; XML reference, ``attach`` and ``asset/model``), checked against
``mujoco.MjModel`` in ``tests/robots/test_mjcf_features.py``:

* ``<asset><model name file/>`` names another MJCF file; ``<attach model body prefix>``
  (in a body or a ``<frame>``) copies that model's body ``body`` with its subtree, ``frame``
  a frame, or, with neither, everything in its ``<worldbody>``, into the enclosing frame;
  without ``model`` the body or frame is taken from this model (self-attach);
* every name in the copy gets the ``prefix``;
* the copy keeps the meaning it has in its own file: its default classes, its compiler's
  ``angle`` and ``eulerseq``, its mesh assets (below its own ``meshdir``).  They are
  resolved here into explicit attributes (orientations as quaternions, angles in this
  file's unit) under a default class of their own, so this file's defaults do not apply;
* the model's actuators, tendons and equalities whose every reference names an element of
  the copy are copied with it (prefixed).

Compiler settings of an attached model that change masses (``inertiafromgeom``,
``boundmass`` ...) are refused when they differ from this file's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mbcompose.dynamics.spatial import matrix_to_quat

from ..xml import error, new_element
from .compiler import ORIENT_ATTRS, orientation
from .replicate import REFERENCE_ATTRS, check_element_count, copy_element, referring

#: the default class of attached elements: empty, so this file's defaults do not reach them
ATTACHED_CLASS = "mbcompose:attached"
#: elements whose attributes a default class gives
DEFAULTED = ("joint", "freejoint", "geom", "site", "camera", "light")
#: compiler settings that change an attached model's masses or joints (Compiler attribute: XML name):
#: they must be this file's
MASS_SETTINGS = {"inertiafromgeom": "inertiafromgeom", "groups": "inertiagrouprange", "boundmass": "boundmass",
                 "boundinertia": "boundinertia", "balanceinertia": "balanceinertia", "settotalmass": "settotalmass",
                 "fitaabb": "fitaabb", "autolimits": "autolimits", "fusestatic": "fusestatic"}


def model_assets(reader, root, make_reader) -> dict:
    """The ``<asset><model>`` files by name, each read up to its assets by ``make_reader(path, root)``."""
    models = {}
    for asset in root.findall("asset"):
        for m in asset.findall("model"):
            name, fname = m.get("name"), m.get("file")
            if not name or not fname:
                raise error(m, "<model> needs attributes 'name' and 'file'")
            p = Path(fname) if Path(fname).is_absolute() else reader.dir / fname
            if not p.is_file():
                raise error(m, f"model file not found: {fname!r}")
            child, child_root = make_reader(p)
            for key, xml_name in MASS_SETTINGS.items():
                if getattr(child.comp, key) != getattr(reader.comp, key):
                    raise error(m, f"model asset {name!r}: its compiler setting {xml_name!r} differs from this "
                                   "file's (attaching it is not supported)")
            models[name] = (child, child_root)
    return models


def _source(el, child, child_root):
    """(elements to copy, their childclass in the source file)."""
    kind = "body" if el.get("body") is not None else "frame" if el.get("frame") is not None else None
    world = child_root.findall("worldbody")
    if kind is None:
        if el.get("model") is None:
            raise error(el, "self-attach needs attribute 'body' or 'frame'")
        return [c for w in world for c in w], "main"
    want = el.get(kind)

    def find(node, cc):
        for c in node:
            ccc = c.get("childclass", cc) if c.tag in ("body", "frame") else cc
            if c.tag == kind and c.get("name") == want:
                return c, cc
            found = find(c, ccc)
            if found:
                return found
        return None

    for w in world:
        found = find(w, "main")
        if found:
            return [found[0]], found[1]
    where = f"model asset {el.get('model')!r}" if el.get("model") else "this model"
    raise error(el, f"<attach>: no {kind} {want!r} in {where}")


def _resolve(e, child, reader, childclass: str) -> None:
    """Make ``e``'s subtree mean in this file what it means in ``child``'s (module docstring)."""
    cc = e.get("childclass", childclass) if e.tag in ("body", "frame") else childclass
    a = child.attrs(e, childclass) if e.tag in DEFAULTED else dict(e.attrib)
    a.pop("childclass", None)
    if any(k in a for k in ORIENT_ATTRS):
        R = orientation(e, a, child.comp)
        a = {k: v for k, v in a.items() if k not in ORIENT_ATTRS}
        a["quat"] = " ".join(repr(float(x)) for x in matrix_to_quat(R))
    if e.tag == "joint" and a.get("type", "hinge") in ("hinge", "ball") and child.comp.degree != reader.comp.degree:
        for k in ("range", "ref", "springref"):
            if k in a:
                rad = child.comp.angle(np.array(a[k].split(), dtype=float))
                a[k] = " ".join(repr(float(x)) for x in (np.rad2deg(rad) if reader.comp.degree else rad))
    if e.tag == "geom" and "mesh" in a:
        a["mesh"] = _mesh_name(child, reader, a["mesh"], e)
    e.attrib.clear()
    e.attrib.update(a)
    for c in e:
        _resolve(c, child, reader, cc)


def _mesh_name(child, reader, name, el) -> str:
    """The name in this file of the attached model's mesh ``name`` (its record copied once)."""
    if child is reader:
        return name
    if name not in child.meshes:
        raise error(el, f"unknown mesh {name!r} in the attached model")
    key = f"{child.file}:{name}"
    reader.meshes.setdefault(key, child.meshes[name])
    return key


def _prefix(el, prefix: str, names: set[str]) -> None:
    for e in el.iter():
        for k in REFERENCE_ATTRS:
            if e.get(k) in names:
                e.set(k, prefix + e.get(k))
        if e.get("name"):
            e.set("name", prefix + e.get("name"))


def _followers(child, child_root, names: set[str], root, prefix: str) -> None:
    """Copy the attached model's tendons, equalities and actuators that refer only to ``names``
    (which grows by their names, as in :func:`parsers.mjcf.replicate.referring`)."""
    for section, c in referring(child_root, names):
        dup = copy_element(c)
        if child_root is not root:                   # its own default class, resolved
            resolved = child.attrs(dup, "main")
            dup.attrib.clear()
            dup.attrib.update({**resolved, "class": ATTACHED_CLASS})
        _prefix(dup, prefix, names)
        target = root.find(section.tag)
        if target is None:
            target = new_element(section.tag, {}, like=c)
            root.append(target)
        target.append(dup)


def expand_attachments(reader, root, make_reader) -> None:
    """Replace every ``<attach>`` of the document by a frame holding the attached copy."""
    models = model_assets(reader, root, make_reader)
    reader.defaults[ATTACHED_CLASS] = {}
    for parent in [e for e in root.iter() if any(c.tag == "attach" for c in e)]:
        for i, el in enumerate(list(parent)):
            if el.tag != "attach":
                continue
            if el.get("prefix") is None:
                raise error(el, "<attach> needs attribute 'prefix'")
            name = el.get("model")
            if name is not None and name not in models:
                raise error(el, f"<attach>: unknown model asset {name!r}")
            child, child_root = models[name] if name is not None else (reader, root)
            sources, childclass = _source(el, child, child_root)
            check_element_count(root, el, sum(1 for s in sources for _ in s.iter()))
            frame = new_element("frame", {"childclass": ATTACHED_CLASS} if child is not reader else {}, like=el)
            for s in sources:
                dup = copy_element(s)
                if child is not reader:
                    _resolve(dup, child, reader, childclass)
                frame.append(dup)
            names = {e.get("name") for e in frame.iter() if e.get("name")}
            _followers(child, child_root, names, root, el.get("prefix"))
            _prefix(frame, el.get("prefix"), names)
            parent.remove(el)
            parent.insert(i, frame)
