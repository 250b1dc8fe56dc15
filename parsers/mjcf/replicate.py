"""MJCF ``<replicate>``: the repeated subtree written out as ``<frame>`` elements.

As MuJoCo's XML reader expands it (``src/xml/xml_native_reader.cc``, the ``replicate``
branch of ``mjXReader::Body``; XML reference, ``replicate``), checked against
``mujoco.MjModel`` in ``tests/robots/test_mjcf_replicate.py``:

* the children of ``<replicate count="n" offset="x y z" euler="a b c" sep="s">`` are
  repeated ``n`` times; replica ``i`` sits in a frame with orientation ``R(i * euler)``
  (``euler`` in the compiler's angle unit and ``eulerseq``) and position
  ``p_i = sum_{k < i} R(k * euler) offset`` (each replica is the previous one moved by
  ``offset`` in its own frame, the rotation recomputed from ``i * euler``);
* every ``name`` in replica ``i`` gets the suffix ``sep`` + ``i`` zero-padded to the
  number of digits of ``n``; nested replicates are expanded innermost first, so a
  name carries the inner suffix then the outer one;
* elements outside the tree (tendons, equalities, actuators, sensors, contact pairs)
  whose every reference names an element inside the replicated subtree are repeated
  with it, their references and names suffixed in the same way.  An element that
  mixes references inside and outside is left alone, so its inside reference is
  unknown (MuJoCo refuses such a file too).
"""

from __future__ import annotations

import copy

import numpy as np

from mbcompose.dynamics.spatial import matrix_to_quat

from .. import limits
from ..xml import error, file_of, mark_file
from .compiler import Compiler, floats_attr, orientation

#: attributes that name another element of the model (not an asset or a default class)
REFERENCE_ATTRS = ("joint", "joint1", "joint2", "body", "body1", "body2", "site", "site1", "site2", "geom", "geom1",
                   "geom2", "tendon", "tendon1", "tendon2", "jointinparent", "sidesite", "cranksite", "slidersite",
                   "refsite", "objname", "refname", "target", "actuator")
#: the sections whose elements follow the replicas they refer to, in the order their names become known
REFERRING_SECTIONS = ("tendon", "equality", "actuator", "sensor", "contact")


def replica_frames(el, comp: Compiler) -> list[tuple[np.ndarray, np.ndarray]]:
    """(position (3,), quaternion (4,) w x y z) of each replica's frame (module docstring)."""
    a = el.attrib
    count = floats_attr(el, a, "count", 1)
    if count is None or not float(count[0]).is_integer() or count[0] < 1:
        raise error(el, "<replicate> needs attribute 'count', a positive integer")
    offset = floats_attr(el, a, "offset", 3)
    offset = np.zeros(3) if offset is None else offset
    euler = floats_attr(el, a, "euler", 3)
    euler = np.zeros(3) if euler is None else euler
    frames, pos = [], np.zeros(3)
    for i in range(int(count[0])):
        R = orientation(el, {"euler": " ".join(repr(float(x)) for x in i * euler)}, comp)
        frames.append((pos.copy(), matrix_to_quat(R)))
        pos = pos + R @ offset
    return frames


def check_element_count(root, el, extra: int) -> None:
    """InputError at ``el`` when ``extra`` more elements would take the document past ``xml_elements``."""
    total = sum(1 for _ in root.iter()) + extra
    if total > limits.active().xml_elements:
        raise error(el, limits.exceeded(f"<{el.tag}>: model elements once written out", total, "xml_elements"))


def copy_element(el):
    """A deep copy of ``el``, which keeps every element's line (lxml) and file (marked on the copy: it
    may go into another file's tree), for the error messages."""
    return mark_file(copy.deepcopy(el), file_of(el))


def _rename(el, suffix: str, names: set[str]) -> None:
    """Suffix the names in ``el``'s subtree, and its references to ``names``."""
    for e in el.iter():
        for k in REFERENCE_ATTRS:
            if e.get(k) in names:
                e.set(k, e.get(k) + suffix)
        if e.get("name"):
            e.set("name", e.get("name") + suffix)


def _references(el) -> list[str]:
    return [e.get(k) for e in el.iter() for k in REFERENCE_ATTRS if e.get(k) is not None]


def referring(root, names: set[str]) -> list[tuple]:
    """(section, element) of the elements outside the tree that refer only to ``names`` (which grows
    by their own names: an equality over a replicated tendon follows the tendon)."""
    found = []
    for tag in REFERRING_SECTIONS:
        for section in root.findall(tag):
            for c in section:
                refs = _references(c)
                if refs and all(r in names for r in refs):
                    found.append((section, c))
                    if c.get("name"):
                        names.add(c.get("name"))
    return found


def expand_replicates(root, el, comp: Compiler) -> None:
    """Replace every ``<replicate>`` below ``el`` by its replica frames (innermost first)."""
    i = 0
    while i < len(el):
        c = el[i]
        expand_replicates(root, c, comp)
        if c.tag != "replicate":
            i += 1
            continue
        frames = replica_frames(c, comp)
        check_element_count(root, c, (len(frames) - 1) * sum(1 for _ in c.iter()))
        names = {e.get("name") for e in c.iter() if e.get("name") and e is not c}
        followers = referring(root, names)
        width = len(str(len(frames)))
        sep = c.get("sep", "")
        el.remove(c)
        for k, (pos, quat) in enumerate(frames):
            frame = copy_element(c)
            frame.tag = "frame"
            frame.attrib.clear()
            frame.attrib.update({"pos": " ".join(map(repr, pos.tolist())), "quat": " ".join(map(repr, quat.tolist()))})
            _rename(frame, f"{sep}{k:0{width}d}", names)
            el.insert(i + k, frame)
        for section, f in followers:
            at = list(section).index(f)
            section.remove(f)
            for k in range(len(frames)):
                dup = copy_element(f)
                _rename(dup, f"{sep}{k:0{width}d}", names)
                section.insert(at + k, dup)
        i += len(frames)
