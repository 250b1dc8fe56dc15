"""MJCF ``<equality>`` constraints and fixed ``<tendon>``s: loop joints and joint couplings.

As MuJoCo compiles them (XML reference, ``equality``):

* ``connect`` (``body1``/``body2`` with ``anchor`` in body1's frame, or ``site1``/``site2``
  that must coincide) becomes a spherical joint with ``loop=True``; ``weld`` (bodies,
  optional ``anchor`` in body2's frame, or two sites whose frames coincide at the
  reference configuration) a fixed joint with ``loop=True``.  The world side, if any,
  is the reference body.
* ``joint``: ``joint1 - joint1_0 = a0 + a1 d + a2 d^2 + a3 d^3 + a4 d^4`` with
  ``d = joint2 - joint2_0`` (``polycoef``, default ``0 1 0 0 0``); without ``joint2``
  the joint is held at ``joint1_0 + a0``.  ``_0`` is MuJoCo's ``qpos0`` (the joint's
  ``ref``); our coordinates are ``qpos``, so the polynomial is re-expanded about zero
  (:func:`coupling_in_qpos`): a :class:`~parsers.assembly.Coupling` ``q1 = p(q2)``.
* ``tendon`` over fixed tendons (``L = sum coef_k q_k``): the same polynomial between
  ``L1 - L1_0`` and ``L2 - L2_0`` (``L_0 = sum coef_k ref_k``), re-expanded the same way:
  a coupling of linear combinations of joint coordinates.
* Inactive constraints (``active="false"``) are skipped.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy import polynomial as P

from mbcompose.dynamics.joints import JOINTS
from mbcompose.dynamics.tolerances import DECLARED_GEOMETRY_ATOL, GEOMETRY_ATOL

from ..assembly import GROUND, Coupling, Joint, Pose, Source
from ..errors import did_you_mean
from ..xml import error, parse_float, parse_floats

LOOP_TYPES = ("connect", "weld")
COUPLING_TYPES = ("joint", "tendon")


def _active(el, attrs) -> bool:
    v = attrs.get("active", "true")
    if v not in ("true", "false", "1", "0"):
        raise error(el, f"{el.tag}@active: expected true or false, got {v!r}")
    return v in ("true", "1")


def _polycoef(el, attrs) -> np.ndarray:
    pc = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
    if "polycoef" in attrs:
        given = parse_floats(attrs["polycoef"], el, f"{el.tag}@polycoef", None)
        if len(given) > 5:
            raise error(el, f"{el.tag}@polycoef: at most 5 coefficients, got {len(given)}")
        pc[:len(given)] = given
    return pc


def _site_end(el, attrs, key, sites):
    name = attrs.get(key)
    if name not in sites:
        raise error(el, f"<{el.tag}>: unknown site {name!r}{did_you_mean(name, sites)}")
    return sites[name]


def loop_equality(el, attrs, index: int, body_names, sites) -> dict:
    """One ``connect``/``weld`` as a record: body names and the world points (or sites) to join."""
    rec = {"el": el, "type": el.tag, "name": attrs.get("name") or f"{el.tag}{index}"}
    if "site1" in attrs or "site2" in attrs:
        if "site1" not in attrs or "site2" not in attrs:
            raise error(el, f"<{el.tag}> with sites needs both 'site1' and 'site2'")
        (i1, p1), (i2, p2) = _site_end(el, attrs, "site1", sites), _site_end(el, attrs, "site2", sites)
        rec.update(body1=i1, body2=i2, site_poses=(p1, p2))
    else:
        b1 = attrs.get("body1")
        if b1 is None:
            raise error(el, f"<{el.tag}> needs attribute 'body1' (or 'site1' and 'site2')")
        b2 = attrs.get("body2", "world")
        for b in (b1, b2):
            if b != "world" and b not in body_names:
                raise error(el, f"<{el.tag}>: unknown body {b!r}{did_you_mean(b, body_names)}")
        anchor = attrs.get("anchor")
        if el.tag == "connect" and anchor is None:
            raise error(el, "<connect> needs attribute 'anchor'")
        anchor = np.zeros(3) if anchor is None else parse_floats(anchor, el, f"{el.tag}@anchor", 3)
        rec.update(body1=b1, body2=b2, anchor=anchor)
    if rec["body1"] == rec["body2"]:
        raise error(el, f"<{el.tag}> connects body {rec['body1']!r} to itself")
    return rec


def loop_joint(rec, pose_of, file: str) -> Joint:
    """The loop-closing joint of a ``connect``/``weld`` record; ``pose_of(name)`` is a body's world pose."""
    el = rec["el"]
    r1 = GROUND if rec["body1"] == "world" else rec["body1"]
    r2 = GROUND if rec["body2"] == "world" else rec["body2"]
    second = None
    if "site_poses" in rec:
        s1, s2 = rec["site_poses"]
        origin = s1.translation
        if rec["type"] == "weld" and not s1.isclose(s2, atol=DECLARED_GEOMETRY_ATOL):
            raise error(el, "<weld> of two sites whose frames differ at the reference configuration is not "
                            "supported (the weld would not be assembled)")
        if not np.allclose(s1.translation, s2.translation, atol=GEOMETRY_ATOL):
            second = s2.translation
    elif rec["type"] == "connect":
        origin = pose_of(r1).apply(rec["anchor"])
    else:
        origin = pose_of(r2).apply(rec["anchor"])
    if r2 == GROUND:
        r1, r2 = r2, r1
    jt = "spherical" if rec["type"] == "connect" else "fixed"
    return Joint(rec["name"], jt, r1, r2, origin=origin, secondary_origin=second, loop=True,
                 source=Source(file, el.sourceline, f"equality {rec['type']}"))


def fixed_tendons(root, attrs_of) -> dict:
    """Fixed tendons by name: list of (joint name, coef) and the element."""
    out = {}
    for t in root.findall("tendon"):
        for f in t.findall("fixed"):
            a = attrs_of(f)
            terms = []
            for j in f.findall("joint"):
                ja = attrs_of(j)
                if "joint" not in ja or "coef" not in ja:
                    raise error(j, "a fixed tendon's <joint> needs 'joint' and 'coef'")
                terms.append((ja["joint"], parse_float(ja["coef"], j, "joint@coef")))
            if a.get("name"):
                out[a["name"]] = (terms, f)
    return out


def coupling_equality(el, attrs, tendons, file: str) -> Coupling:
    """An ``equality/joint`` or ``equality/tendon`` as a :class:`Coupling` (see module docstring)."""
    pc = _polycoef(el, attrs)
    if el.tag == "joint":
        j1, j2 = attrs.get("joint1"), attrs.get("joint2")
        if j1 is None:
            raise error(el, "<joint> equality needs attribute 'joint1'")
        c1 = c2 = 1.0
    else:
        return _tendon_coupling(el, attrs, tendons, pc, file)
    coef = pc * c2 ** np.arange(5) / c1
    if j2 is None:
        coef[1:] = 0.0
    higher = tuple(float(x) for x in np.trim_zeros(coef[2:], "b"))
    name = attrs.get("name") or f"{el.tag} equality at line {el.sourceline}"
    return Coupling(j1, j2, float(coef[1]), float(coef[0]), higher, Source(file, el.sourceline, name))


def _tendon_coupling(el, attrs, tendons, pc, file) -> Coupling:
    """``equality/tendon``: ``L1 - L1_0 = poly(L2 - L2_0)`` over fixed tendons ``L = sum coef q``."""
    sides = []
    for key in ("tendon1", "tendon2"):
        name = attrs.get(key)
        if name is None:
            sides.append(())
            continue
        if name not in tendons:
            raise error(el, f"<tendon> equality: unknown fixed tendon {name!r}{did_you_mean(name, tendons)}")
        terms, _ = tendons[name]
        if not terms:
            raise error(el, f"<tendon> equality: tendon {name!r} has no joints")
        sides.append(tuple(terms))
    if not sides[0]:
        raise error(el, "<tendon> equality needs attribute 'tendon1'")
    coef = pc.copy()
    if not sides[1]:
        coef[1:] = 0.0
    higher = tuple(float(x) for x in np.trim_zeros(coef[2:], "b"))
    name = attrs.get("name") or f"tendon equality at line {el.sourceline}"
    return Coupling(sides[0][0][0], sides[1][0][0] if sides[1] else None, float(coef[1]), float(coef[0]), higher,
                    Source(file, el.sourceline, name), joint_terms=sides[0], leader_terms=sides[1])


def check_coupling_joints(couplings, joints_by_name, elements) -> None:
    """Each coupled joint exists and has one coordinate (MuJoCo: hinge or slide)."""
    for c, el in zip(couplings, elements):
        for jn, _ in c.follower_sum + c.leader_sum:
            if jn not in joints_by_name:
                raise error(el, f"<{el.tag}> equality: unknown joint {jn!r}")
            if not JOINTS[joints_by_name[jn].type].couplable:
                raise error(el, f"<{el.tag}> equality: joint {jn!r} is {joints_by_name[jn].type}; "
                                "only hinge and slide joints can be coupled")


def coupling_in_qpos(c: Coupling, refs: dict) -> Coupling:
    """``c`` read as ``y - y0 = a(x - x0)`` (MuJoCo: offsets at ``qpos0``) rewritten as ``y = b(x)``
    in the joints' own coordinates, ``b(x) = y0 + a(x - x0)``; ``y0``, ``x0`` are the follower's and
    leader's sums ``sum coef * ref`` (``refs``: joint name -> ref)."""
    return _shifted(c, refs, 1.0)


def coupling_about_ref(c: Coupling, refs: dict) -> Coupling:
    """The inverse of :func:`coupling_in_qpos`: ``y = b(x)`` as ``y - y0 = a(x - x0)``,
    ``a(u) = b(u + x0) - y0`` (what an MJCF ``polycoef`` holds when the joints have ``ref``)."""
    return _shifted(c, refs, -1.0)


def _shifted(c: Coupling, refs: dict, sign: float) -> Coupling:
    """``c`` with ``b(x) = sign y0 + a(x - sign x0)`` (see :func:`coupling_in_qpos`)."""
    y0 = sign * sum(coef * refs.get(j, 0.0) for j, coef in c.follower_sum)
    x0 = sign * sum(coef * refs.get(j, 0.0) for j, coef in c.leader_sum)
    if y0 == 0.0 and x0 == 0.0:
        return c
    if not c.leader_sum:
        return replace(c, offset=c.offset + y0)
    b = (P.Polynomial(c.coefficients)(P.Polynomial([-x0, 1.0])) + y0).coef
    b = np.concatenate([b, np.zeros(max(0, 2 - len(b)))])
    higher = tuple(float(x) for x in np.trim_zeros(b[2:], "b"))
    return replace(c, offset=float(b[0]), multiplier=float(b[1]), higher=higher)


def site_pose(body_pose: Pose, frame_pose: Pose, R, pos) -> Pose:
    """World pose of a site given in a body (through a ``<frame>``)."""
    return body_pose.compose(frame_pose.compose(Pose(R, pos)))


def check_joint_references(root) -> None:
    """Actuators and fixed tendons name joints the model has (MuJoCo refuses the file otherwise,
    e.g. pybullet_data's ``mjcf/ground.xml``, whose motors name joints of a removed humanoid)."""
    known = sorted({el.get("name") for w in root.findall("worldbody") for el in w.iter()
                    if el.tag in ("joint", "freejoint") and el.get("name")})
    users = [c for act in root.findall("actuator") for c in act]
    users += [j for t in root.findall("tendon") for f in t.findall("fixed") for j in f.findall("joint")]
    for el in users:
        name = el.get("joint")
        if name is not None and name not in known:
            raise error(el, f"<{el.tag}> names joint {name!r}, which the model does not have"
                            f"{did_you_mean(name, known)}")
