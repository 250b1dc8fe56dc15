"""MJCF ``<actuator>`` and the joints' springs: which joints are actuated, through which gear, and
the actuators and springs as force elements (seed 004 Fig. 1: two-terminal driver and spring edges
parallel to their joints).

:func:`read_actuator_records` reads ``motor``, ``position``, ``velocity``, ``intvelocity``, ``damper``,
``cylinder`` and ``general`` actuators on joints and tendons as :class:`~parsers.assembly.Actuator` s with
MuJoCo's semantics, activation dynamics (``dyntype`` integrator, filter, filterexact, ``actrange``,
``actearly``) included: each element, a default class's included, is applied in turn to MuJoCo's default
general actuator (fixed unit gain, no bias, no dynamics), as MuJoCo's XML reader does, so a
``<position kp>`` default followed by a ``<general>`` keeps the servo's gain and bias.  Everything else
(muscles, user dynamics, other transmissions and kinds) is named in one warning with its line and
skipped.  :func:`joint_spring` reads a joint's
``stiffness``, ``springref``, ``damping`` and ``springdamper``.  Actuators with ``tendon=`` pull along
a tendon read by :mod:`.tendons`.

As MuJoCo compiles them (XML reference, ``actuator``): an actuator whose transmission is a
joint (``joint`` or ``jointinparent``) marks that joint ``actuated`` with a
:class:`~parsers.assembly.Motor`: its name (``<kind>_<joint>`` when unnamed), its gear
(the first number of ``gear``, MuJoCo's transmission ratio: force on the joint per unit of
actuator force) and its force range.  With several actuators on one joint the first one's
gear is reported.  All actuator kinds (``general``, ``motor``, ``position`` ...) read the
same slot of a default class, as MuJoCo's ``<default>`` has one actuator per class.
"""

from __future__ import annotations

import logging

import numpy as np

from ..assembly import Actuator, Motor, Source
from ..errors import FOREIGN_TEXT, did_you_mean
from ..xml import error, parse_float, parse_floats
from .compiler import bool_attr, floats_attr

log = logging.getLogger(__name__)
log.addFilter(FOREIGN_TEXT)  # (warnings about a file outside the model folder say where, not what)

#: actuator elements: one default slot for all of them
ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder", "muscle",
                 "adhesion", "dcmotor")


def default_key(tag: str) -> str:
    """The slot of a default class that an element of ``tag`` reads (joint for freejoint, one for actuators)."""
    if tag == "freejoint":
        return "joint"
    return "actuator" if tag in ACTUATOR_TAGS else tag


def read_actuators(reader, root) -> dict[str, Motor]:
    """The motor of each joint an actuator drives, by joint name (``reader.attrs`` resolves classes)."""
    motors = {}
    for act in root.findall("actuator"):
        for c in act:
            a = reader.attrs(c, "main")
            j = a.get("joint", a.get("jointinparent"))
            if j is None:
                continue
            if j in motors:
                log.info("%s:%s: joint %r has several actuators; the first one's gear is reported",
                         reader.file, c.sourceline, j)
                continue
            gear = floats_attr(c, a, "gear", None)
            g = 1.0 if gear is None else float(gear[0])
            fr = floats_attr(c, a, "forcerange", 2)
            eff = None if fr is None else float(max(abs(fr[0]), abs(fr[1])))
            motors[j] = Motor(a.get("name") or f"{c.tag}_{j}", eff, g if g != 0 else 1.0, 0.0)
    return motors


#: actuator kinds read as :class:`~parsers.assembly.Actuator` s (the others warn and are skipped)
MODELLED_KINDS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder")

#: joint transmissions (the others: tendon, site, body, slider-crank warn and are skipped)
JOINT_TRANSMISSIONS = ("joint", "jointinparent")


def joint_spring(jel, a, jt: str, comp) -> tuple[float, float, float, tuple | None]:
    """(damping, stiffness, springref, springdamper) of a joint element with attributes ``a`` (classes
    resolved).

    ``springref`` is absolute, like ``qpos`` (MuJoCo's ``qpos_spring``; an angle of a hinge in the
    compiler's unit); a ball's or free joint's spring is relaxed at ``qpos0`` (MuJoCo ignores
    ``springref`` there), so it is kept 0.  ``springdamper`` (time constant, damping ratio) when both
    are positive, as MuJoCo uses it (the stiffness and damping then follow from the joint's inertia)."""
    damping, stiffness, springref = (parse_float(a.get(key, "0"), jel, f"joint@{key}")
                                     for key in ("damping", "stiffness", "springref"))
    if jt == "hinge":
        springref = float(comp.angle(springref))
    elif jt in ("ball", "free"):
        springref = 0.0
    sd = parse_floats(a.get("springdamper", "0 0"), jel, "joint@springdamper", 2)
    return damping, stiffness, springref, (float(sd[0]), float(sd[1])) if sd[0] > 0 and sd[1] > 0 else None


def _limited(el, a, key: str, comp) -> tuple[float, float] | None:
    """``<key>range`` when ``<key>limited`` (``auto``: when a range is given and ``autolimits``)."""
    rng = floats_attr(el, a, f"{key}range", 2)
    flag = a.get(f"{key}limited", "auto")
    if flag == "auto":
        return rng if rng is not None and comp.autolimits else None
    if not bool_attr(el, f"{key}limited", flag):
        return None
    if rng is None:
        raise error(el, f"{el.tag}@{key}limited is true but {key}range is not given")
    return rng


def _apply_element(p: dict, tag: str, a: dict, el) -> None:
    """MuJoCo's reading of one actuator element ``tag`` (a default's or the actuator's own) onto the
    general parameters ``p`` (``mjXReader::OneActuator`` and the ``mjs_setTo*`` functions of MuJoCo's
    user API): the shortcut kinds set gain, bias and activation dynamics and keep what they do not set
    (XML reference, ``actuator``): ``motor`` a unit fixed gain, no bias, no dynamics; ``position``
    ``gainprm = kp``, ``biasprm[1:3] = (-kp, -kv)``, with ``timeconst > 0`` the dynamics ``filterexact``
    (``dynprm[0] = timeconst``); ``intvelocity`` the same with an ``integrator`` and ``actlimited``;
    ``velocity`` ``gainprm = kv``, ``biasprm = (0, 0, -kv)``; ``damper`` an affine gain ``(0, 0, -kv)``, no
    bias, ``ctrllimited``; ``cylinder`` a ``filter`` of ``timeconst``, gain ``area`` (or ``pi d^2 / 4``),
    an affine ``bias``."""
    for key in ("gear", "ctrlrange", "forcerange", "ctrllimited", "forcelimited", "actrange", "actlimited",
                "joint", "jointinparent", "tendon", "site", "body", "cranksite", "name"):
        if key in a:
            p[key] = a[key]
    num = lambda key, default: parse_float(a[key], el, f"{tag}@{key}") if key in a else default
    if tag == "general":
        for key in ("gaintype", "biastype", "dyntype", "actearly", "actdim"):
            if key in a:
                p[key] = a[key]
        for key in ("gainprm", "biasprm", "dynprm"):
            if key in a:
                vals = list(parse_floats(a[key], el, f"general@{key}"))[:3]
                p[key] = vals + p[key][len(vals):] if key == "dynprm" else vals + [0.0] * (3 - len(vals))
    elif tag == "motor":
        p.update(gaintype="fixed", gainprm=[1.0, 0.0, 0.0], biastype="none", biasprm=[0.0, 0.0, 0.0], dyntype="none")
    elif tag in ("position", "intvelocity"):
        kp = num("kp", p["gainprm"][0])
        kv = num("kv", -p["biasprm"][2])
        if "dampratio" in a:
            p["unsupported"] = f"{tag}@dampratio (a damping ratio needs the joint inertia)"
        if num("inheritrange", 0.0) > 0 and tag == "intvelocity":
            p["unsupported"] = "intvelocity@inheritrange (the activation range from the joint's range)"
        p.update(gaintype="fixed", gainprm=[kp] + p["gainprm"][1:], biastype="affine",
                 biasprm=[p["biasprm"][0], -kp, -kv])
        if "timeconst" in a:
            tc = num("timeconst", 0.0)
            p["dynprm"] = [tc] + p["dynprm"][1:]
            p["dyntype"] = "none" if tc == 0 else "filterexact"
        if tag == "intvelocity":
            p.update(dyntype="integrator", actlimited="true")
    elif tag == "velocity":
        kv = num("kv", p["gainprm"][0])
        p.update(gaintype="fixed", gainprm=[kv] + p["gainprm"][1:], biastype="affine", biasprm=[0.0, 0.0, -kv],
                 dyntype="none")
    elif tag == "damper":
        p.update(gaintype="affine", gainprm=[0.0, 0.0, -num("kv", 0.0)], biastype="none", dyntype="none",
                 ctrllimited="true")
    elif tag == "cylinder":
        area = num("area", p["gainprm"][0])
        if "diameter" in a:
            area = np.pi / 4 * num("diameter", 0.0) ** 2
        bias = list(parse_floats(a["bias"], el, "cylinder@bias"))[:3] if "bias" in a else p["biasprm"][:1]
        p.update(gaintype="fixed", gainprm=[area] + p["gainprm"][1:], biastype="affine",
                 biasprm=bias + p["biasprm"][len(bias):], dyntype="filter",
                 dynprm=[num("timeconst", p["dynprm"][0])] + p["dynprm"][1:])
    elif tag == "muscle":
        p["unsupported"] = ("<muscle> (MuJoCo's muscle force needs the length range and acc0 its compiler "
                            "computes by simulation; not modelled)")
    else:
        p["unsupported"] = f"<{tag}> actuators (other transmissions or force laws)"


#: MuJoCo's activation dynamics that we model (``muscle`` and ``user`` are refused)
DYN_TYPES = ("none", "integrator", "filter", "filterexact")


def _refusal(p: dict) -> str | None:
    """Why an actuator with general parameters ``p`` is not modelled, or None."""
    if "unsupported" in p:
        return p["unsupported"]
    if p["dyntype"] not in DYN_TYPES or p["gaintype"] not in ("fixed", "affine") \
            or p["biastype"] not in ("none", "affine"):
        return f"dyntype {p['dyntype']}, gaintype {p['gaintype']}, biastype {p['biastype']}"
    if int(float(p.get("actdim", "-1"))) > 1:
        return f"actdim {p['actdim']} (one activation per actuator only)"
    return None


def _actuator(reader, c, index: int, joints: dict, names: set, tendons=frozenset()):
    """(the :class:`Actuator` of element ``c``, None) or (None, why it is skipped); ``tendons``: the names of
    the tendons read (:mod:`.tendons`), which actuators may pull along."""
    p = {"gaintype": "fixed", "gainprm": [1.0, 0.0, 0.0], "biastype": "none", "biasprm": [0.0, 0.0, 0.0],
         "dyntype": "none", "dynprm": [1.0, 0.0, 0.0]}
    for tag, attrs in reader.actuator_defaults.get(c.get("class", "main"), []):
        _apply_element(p, tag, attrs, c)
    _apply_element(p, c.tag, dict(c.attrib), c)
    joint = p.get("joint", p.get("jointinparent"))
    label = p.get("name") or f"#{index} <{c.tag}>"
    at = f" at line {c.sourceline}"
    tendon = p.get("tendon") if joint is None else None
    if joint is None and tendon not in tendons:
        trn = next((k for k in ("tendon", "site", "body") if k in p), "no")
        return None, f"{label} ({trn} transmission{': the tendon is not supported' if tendon else ''}){at}"
    why = _refusal(p)
    if why is not None:
        return None, f"{label} ({why}){at}"
    if tendon is not None:
        joint = ""
    elif joint not in joints:
        raise error(c, f"<{c.tag}> names unknown joint {joint!r}{did_you_mean(joint, joints)}")
    elif joints[joint].nv != 1 or joints[joint].nq != 1:
        return None, f"{label} (drives the {joints[joint].type} joint {joint!r}; one-coordinate joints only){at}"
    gear = floats_attr(c, p, "gear", None)
    name = p.get("name") or f"{c.tag}_{joint or tendon}"
    if name in names:
        name = f"{name}_{index}"
    names.add(name)
    stateful = p["dyntype"] != "none"
    actearly = bool_attr(c, "actearly", p["actearly"]) if "actearly" in p else False
    return Actuator(name, joint, c.tag, 1.0 if gear is None else float(gear[0]), p["gaintype"], tuple(p["gainprm"]),
                    p["biastype"], tuple(p["biasprm"]), _limited(c, p, "ctrl", reader.comp),
                    _limited(c, p, "force", reader.comp), Source(reader.file, c.sourceline), tendon,
                    p["dyntype"], float(p["dynprm"][0]), _limited(c, p, "act", reader.comp) if stateful else None,
                    actearly), None


def read_actuator_records(reader, root, joints, tendons=frozenset()) -> tuple[Actuator, ...]:
    """The actuators MuJoCo's semantics are modelled for (module docstring) on one-coordinate joints and on
    the tendons read (names ``tendons``), in file order (:class:`~parsers.assembly.Actuator`); every other
    actuator is named in one warning, with its line and why it is skipped (other transmissions, force laws
    or activation dynamics)."""
    by_name = {j.name: j for j in joints}
    out, skipped, names = [], [], set()
    index = 0
    for act in root.findall("actuator"):
        for c in act:
            if c.tag not in ACTUATOR_TAGS:
                continue
            rec, why = _actuator(reader, c, index, by_name, names, tendons)
            index += 1
            if rec is None:
                skipped.append(why)
            else:
                out.append(rec)
    if skipped:
        log.warning("%s: actuators not modelled, skipped: %s", reader.file, "; ".join(skipped))
    return tuple(out)
