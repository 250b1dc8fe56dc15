"""MJCF ``<tendon>`` as force elements (seed 004 Fig. 1: an edge between attachment points whose across
variable is the tendon length), with MuJoCo's semantics (XML reference, ``tendon``; ``mj_tendon``,
``mj_springdamper``):

* ``<fixed>``: ``L = sum coef_i q_i`` over its ``<joint joint coef>`` (hinges and slides, ``qpos`` units);
* ``<spatial>`` through ``<site>`` s only: ``L`` the sum of the distances between consecutive sites.
  A spatial tendon that wraps around a geom (``<geom>``) or splits at a ``<pulley>`` is refused as a
  force element: when it carries a spring, a damper or an actuator, one warning gives its file, line and
  the wrapping element, and neither its spring nor its actuators are applied (MuJoCo still compiles the
  file, so the rest of the model is read);
* ``stiffness``, ``damping`` and ``springlength`` (one value, or two: a dead band ``[lower, upper]``
  where the spring is slack; default ``-1 -1``: the length where every joint is at its ``springref``,
  MuJoCo's ``qpos_spring``, resolved by :mod:`dynamics.force_elements`).

A tendon is read when it carries a spring or a damper or an actuator names it (``tendon=``, read by
:mod:`.actuators`); ``frictionloss`` (a constraint of MuJoCo's solver) and ``range`` (a limit
constraint) are not modelled: the first is named in one warning.
"""

from __future__ import annotations

import logging

from ..assembly import GROUND, Source, Tendon
from ..errors import FOREIGN_TEXT, did_you_mean
from ..xml import error, parse_float, parse_floats

log = logging.getLogger(__name__)
log.addFilter(FOREIGN_TEXT)

#: the elements of a spatial tendon's path that wrap (not modelled)
WRAPPING = ("geom", "pulley")


def tendon_attrs(reader, el) -> dict:
    """A tendon element's attributes with its default class's ``<tendon>`` (MuJoCo's one slot for both)."""
    cls = el.get("class", "main")
    if cls != "main" and cls not in reader.defaults:
        raise error(el, f"unknown default class {cls!r}{did_you_mean(cls, reader.defaults)}")
    out = {**reader.defaults.get(cls, {}).get("tendon", {}), **el.attrib}
    out.pop("class", None)
    return out


def _number(el, a, key: str) -> float:
    return parse_float(a[key], el, f"tendon@{key}") if key in a else 0.0


def _springlength(el, a) -> tuple | None:
    """(lower, upper) or None (MuJoCo's default ``-1 -1``: the length at ``qpos_spring``)."""
    if "springlength" not in a:
        return None
    values = [float(x) for x in parse_floats(a["springlength"], el, "tendon@springlength")]
    if len(values) not in (1, 2):
        raise error(el, f"tendon@springlength takes one or two numbers, got {len(values)}")
    lower, upper = values[0], values[-1]
    if lower == -1 and upper == -1:
        return None
    if lower > upper:
        raise error(el, f"tendon@springlength: lower {lower:g} > upper {upper:g}")
    return lower, upper


def _site_point(reader, el, name: str) -> tuple[str, object]:
    """(body name or GROUND, world point at qpos0) of site ``name``; a site on a fused body is on the body it
    was fused into (its point, in the world, is the same)."""
    if name not in reader.sites:
        raise error(el, f"tendon <site> names unknown site {name!r}{did_you_mean(name, reader.sites)}")
    i, pose = reader.sites[name]
    while i and reader.bodies[i].get("fused"):
        i = reader.bodies[i]["parent"]
    return (reader.bodies[i]["name"] if i else GROUND), pose.translation


def _fixed(el, a, name: str, joints: dict) -> tuple:
    terms = []
    for j in el.findall("joint"):
        jn, coef = j.get("joint"), j.get("coef")
        if jn is None or coef is None:
            raise error(j, "a fixed tendon's <joint> needs 'joint' and 'coef'")
        if jn not in joints:
            raise error(j, f"fixed tendon {name!r}: unknown joint {jn!r}{did_you_mean(jn, joints)}")
        if joints[jn].nq != 1 or joints[jn].nv != 1:
            raise error(j, f"fixed tendon {name!r}: joint {jn!r} is a {joints[jn].type} joint (hinges and slides only)")
        terms.append((jn, parse_float(coef, j, "joint@coef")))
    if not terms:
        raise error(el, f"fixed tendon {name!r} has no <joint>")
    return tuple(terms)


def read_tendons(reader, root, joints, actuated: set) -> tuple[Tendon, ...]:
    """The tendons of ``root`` that carry a spring, a damper or (their name in ``actuated``) an actuator, as
    :class:`~parsers.assembly.Tendon` records in file order (module docstring); ``joints``: the
    assembly's joints."""
    by_name = {j.name: j for j in joints}
    out, refused, friction = [], [], []
    for k, el in enumerate(t for ts in root.findall("tendon") for t in ts if t.tag in ("fixed", "spatial")):
        a = tendon_attrs(reader, el)
        name = a.get("name") or f"tendon{k}"
        stiffness, damping = _number(el, a, "stiffness"), _number(el, a, "damping")
        if _number(el, a, "frictionloss"):
            friction.append(name)
        if not (stiffness or damping or name in actuated):
            continue
        source = Source(reader.file, el.sourceline)
        if el.tag == "fixed":
            out.append(Tendon(name, "fixed", joints=_fixed(el, a, name, by_name), stiffness=stiffness,
                              damping=damping, springlength=_springlength(el, a), source=source))
            continue
        wraps = [c for c in el if c.tag in WRAPPING]
        if wraps:
            w = wraps[0]
            what = f"<{w.tag} {w.get('geom', w.get('divisor', ''))}>".replace(" >", ">")
            refused.append(f"{name!r} (line {el.sourceline}: {what} at line {w.sourceline})")
            continue
        sites = tuple(_site_point(reader, c, c.get("site", "")) for c in el if c.tag == "site")
        if len(sites) < 2:
            raise error(el, f"spatial tendon {name!r} needs two sites or more, got {len(sites)}")
        out.append(Tendon(name, "spatial", sites=sites, stiffness=stiffness, damping=damping,
                          springlength=_springlength(el, a), source=source))
    if refused:
        log.warning("%s: spatial tendons that wrap around geoms or split at pulleys are not supported (through "
                    "sites only); their springs, dampers and actuators are not applied: %s", reader.file,
                    "; ".join(refused))
    if friction:
        log.warning("%s: tendon frictionloss (a constraint of MuJoCo's solver) is not modelled, ignored on "
                    "tendons: %s", reader.file, ", ".join(friction))
    return tuple(out)
