"""How machines are built: rules that recognise fasteners and servos in a CAD assembly (issue 24).

Each rule gives *evidence* (a sentence saying what was seen) that :mod:`.inference` attaches, with a
confidence, to the rigid groups and joints it produces (docs/assembly-format.md, "Inference rules"):

* **fastener by name** (:func:`fastener_by_name`): screws, bolts, nuts, washers, threaded inserts,
  standoffs, rivets and dowel pins, recognised by the words and the standards of the common
  vocabularies (``screw``, ``DIN 912``, ``ISO 4762``, ``M2x6``, ``SHCS``, ``FHS``, ...) in the part's
  name or in the name of an assembly above it.  A fastener makes rigid what it touches.
* **fastener by geometry** (:func:`fastener_by_geometry`): a slender part (shank radius at most
  :data:`SHANK_RADIUS_MAX` mm) whose one shank passes through two or more other parts, coaxially,
  that touch each other (clamped together), and whose name does not say it is a pin, shaft or axle.
* **rolling bearing** (:func:`bearing_units`): the parts below an assembly node whose name says
  ``bearing`` (or is a bearing number: 608, 6204, 6904-2RS, ...): the parts named ``outer``, the
  parts named ``inner`` and the rolling elements (``ball``, ``roller``, ``needle``, ``cage``,
  ``retainer``, ``seal``, ``shield``).  The inner ring turns in the outer ring about their common
  axis; the rolling elements, which touch the raceways at points or lines only, ride with the
  outer ring (lumped: a rigid multibody model has no rolling).
* **rolling bearing by geometry** (:func:`bearing_by_geometry`, no names): n >= 3 balls (parts whose
  analytic faces are convex spheres of one centre and radius), all of one radius, held in the
  concave toroidal raceway grooves of two solids of revolution (every plane normal to, every
  cylinder, torus and sphere centred on one axis) that are coaxial, with the ball centres on one
  circle about that axis; the ring whose cylinders all lie outside the circle is the outer ring, the
  one whose cylinders all lie inside it the inner ring.  The rings and balls then go as in the rule
  by name (T-FLEX names every product ``Undefined``).
* **servo** (:func:`servo_units`): a part below an assembly node whose name is a servo model
  (Dynamixel XL330/XL430/XM/XH/XC/AX/MX, Feetech STS/SCS, TowerPro SG90/MG90/MG996R, ...).  The parts
  of one servo node split into the output side (horn, idler: names with ``horn``/``idle``/``output``)
  and the case side (everything else); the two sides turn about the servo's output axis.  The joint
  is actuated unless the node's name is a variant used as a hand-moved encoder (``XL330-M077``,
  :data:`ENCODER_WORDS`); a wrapper's ``passive:`` marks other servos so.

* **servo as one part** (:func:`leaf_servos`; the joint itself is found from the contacts in
  :mod:`.inference`): a leaf part whose own name is a servo model (vendors' STEP models of Robotis
  servos are one surface model, case and horn together).
* **connector by name** (:func:`connector_by_name`): a leaf without a closed solid whose name is a
  servo model or a servo horn or idler (:data:`HORN_MODELS`, or ``horn``/``idler``) is kept for
  mating (massless) rather than skipped: vendors ship those as surface models.

Names are matched case-insensitively; ``path`` is the part's instance path from the top assembly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .mating import Contact, MatingTolerances, Surface

#: words and standards that name fasteners (a part or an assembly above it)
FASTENER_WORDS = re.compile(
    r"(screw|bolt|\bnut\b|nut[_\- ]|hexnut|locknut|washer|\binsert|heat[_\- ]?set|standoff|spacer[_\- ]?m\d|"
    r"rivet|dowel|\b(din|iso|iso[_\- ]?7380|iso[_\- ]?10642|en|jis|ansi)[_\- ]?\d{3,5}\b|"
    r"(^|[^a-z])(shcs|bhcs|fhcs|fhs|phs|bhs|pfhs|hhcs|sems)([^a-z]|$)|"
    r"(^|[^a-z0-9])m\d{1,2}([._,]\d)?[x_ ]\d{1,3}([^0-9]|$))",
    re.IGNORECASE)

#: words that say a slender part is a pin, shaft or axle (a joint, not a fastener), whatever its geometry
PIN_WORDS = re.compile(r"(pin|shaft|axle|axis|hinge|pivot|bearing|bushing|rod|spindle)", re.IGNORECASE)

#: servo and motor model names (Dynamixel, Feetech, TowerPro, hobby sizes)
SERVO_WORDS = re.compile(
    r"(dynamixel|(^|[^a-z0-9])(xl|xc|xm|xh|xd|xw|ax|mx|rx)[-_ ,]?(xc[-_ ]?)?(320|330|430|540|12a|18a|28|64|106)"
    r"([^0-9]|$)|\bsts[-_ ]?3\d{3}|\bscs[-_ ]?\d{4}|\bsg[-_ ]?90|\bmg[-_ ]?9(0s|0|46r?|96r?|95)|"
    r"\bsm[-_ ]?s\d{4}|\bhs[-_ ]?\d{3,4}mg|\bsts3215)", re.IGNORECASE)

#: servo variants sold and used as hand-moved joint encoders (their joint is not actuated): ROBOTIS'
#: XL330-M077, the 1:77 low-reduction version that a hand back-drives, which the leader arms of
#: Koch's low-cost robot, Koch v1.1 and LeRobot use with their torque off
ENCODER_WORDS = re.compile(r"(^|[^a-z0-9])m[-_ ]?077([^0-9]|$)", re.IGNORECASE)

#: output-side parts of a servo: the horn and the idler opposite it
OUTPUT_WORDS = re.compile(r"(horn|idle|output)", re.IGNORECASE)
#: a horn of its own among a servo's output parts
HORN_WORD = re.compile(r"horn", re.IGNORECASE)

#: servo horns and idler horns by part number (ROBOTIS: HN11-I101, HN12-I101, HN07-N101, FPX330-H101)
#: and by name
HORN_MODELS = re.compile(r"((^|[^a-z0-9])(hn\d{2}[-_ ]?[ihn]\d{3}|fpx330[-_ ]?[hi]\d{3})([^0-9]|$)|horn|idler)",
                         re.IGNORECASE)

#: largest shank radius (mm) of the fastener-by-geometry rule (an M12 bolt)
SHANK_RADIUS_MAX = 6.0


def fastener_by_name(name: str, path: tuple[str, ...]) -> str | None:
    """Evidence that the part is a fastener from its name or an assembly's above it, or None."""
    for element in (name, *reversed(path)):
        m = FASTENER_WORDS.search(element)
        if m:
            where = "its name" if element == name else f"assembly {element!r}"
            return f"fastener by name ({m.group(0).strip(' _-')!r} in {where})"
    return None


def fastener_by_geometry(name: str, contacts: list[Contact], touching=frozenset(),
                         tol: MatingTolerances = MatingTolerances()) -> str | None:
    """Evidence that a part is a bolt from its contacts (it is ``part_a``, the shaft, of fits), or None.

    contacts : the contacts of the part with every other part (mm).  touching : the pairs of parts
    (frozensets) that touch each other.  tol : coaxial means within its ``angle_tol`` and ``contact_tol``.  A shank is a set of coaxial fits (press fit or bearing) of
    radius <= :data:`SHANK_RADIUS_MAX` where the part is the shaft; one through two or more other
    parts that touch each other (a bolt presses what it clamps together; a pin leaves a gap or a
    washer between the parts it joins) is a fastener, unless the name says pin, shaft, axle.
    """
    if PIN_WORDS.search(name):
        return None
    fits = [c for c in contacts if c.kind in ("press fit", "bearing") and c.part_a == name
            and c.radii[0] <= SHANK_RADIUS_MAX]
    for c in fits:
        coaxial = {o.part_b for o in fits if np.linalg.norm(np.cross(o.axis, c.axis)) <= tol.angle_tol
                   and np.linalg.norm(np.cross(o.point - c.point, c.axis)) <= tol.contact_tol}
        pressed = [frozenset((x, y)) for x in coaxial for y in coaxial if x < y and frozenset((x, y)) in touching]
        if len(coaxial) >= 2 and pressed:
            return (f"fastener by geometry (a shank of radius {c.radii[0]:.3g} mm through "
                    f"{len(coaxial)} parts: {', '.join(sorted(coaxial))})")
    return None


@dataclass(frozen=True)
class ServoUnit:
    """The parts of one servo: ``node`` (its assembly path), ``case`` and ``output`` part names.

    output_paths : the '/'-joined paths of the output parts below ``node`` (names the rules read).
    """

    node: tuple[str, ...]
    model: str
    case: tuple[str, ...]
    output: tuple[str, ...]
    output_paths: tuple[str, ...] = ()
    encoder: str | None = None


def servo_units(parts: list[tuple[str, tuple[str, ...]]]) -> list[ServoUnit]:
    """Servo units from ``(part name, instance path)`` pairs (file order), see the module docstring.

    A part belongs to the deepest assembly node of its path whose name is a servo model; a unit
    needs parts on both sides (case and output) to be a joint.
    """
    units: dict[tuple[str, ...], tuple[str, list[str], list[str], list[str]]] = {}
    encoders: dict[tuple[str, ...], str] = {}
    for name, path in parts:
        for k in range(len(path) - 1, -1, -1):
            m = SERVO_WORDS.search(path[k])
            if m and k < len(path) - 1:
                node = path[:k + 1]
                unit = units.setdefault(node, (m.group(0).strip(" _-,"), [], [], []))
                e = ENCODER_WORDS.search(path[k])
                if e:
                    encoders[node] = (f"an encoder ({e.group(0).strip(' _-')!r} in {path[k]!r}: the low-reduction "
                                      "servo a hand moves; not actuated)")
                output = any(OUTPUT_WORDS.search(e) for e in path[k + 1:]) or OUTPUT_WORDS.search(name)
                (unit[2] if output else unit[1]).append(name)
                if output:
                    unit[3].append("/".join((*path[k + 1:], name)))
                break
    return [ServoUnit(node, model, tuple(case), tuple(out), tuple(paths), encoders.get(node))
            for node, (model, case, out, paths) in units.items() if case and out]


#: assembly nodes that are rolling bearings
BEARING_WORDS = re.compile(r"(bearing|(^|[^0-9])(6[0-9]{2,3}|60[0-9])([-_ ]?(zz|2rs|rs|z))?([^0-9]|$))", re.IGNORECASE)
#: the rolling elements and what rides with them
ROLLING_WORDS = re.compile(r"(ball|roller|needle|cage|retainer|separator|seal|shield)", re.IGNORECASE)


@dataclass(frozen=True, eq=False)
class BearingUnit:
    """The parts of one rolling bearing: ``node`` (its assembly path; () when found by geometry),
    ``outer``, ``inner``, ``rolling``.

    evidence : what the geometric rule saw ('' for the rule by name).  axis (3,), centre (3,) mm: the
    circle of the ball centres when found by geometry, else None (the rings' cylinders give the axis).
    """

    node: tuple[str, ...]
    outer: tuple[str, ...]
    inner: tuple[str, ...]
    rolling: tuple[str, ...]
    evidence: str = ""
    axis: np.ndarray | None = None
    centre: np.ndarray | None = None

    @property
    def label(self) -> str:
        """How logs and notes name the bearing: its assembly path, or its rings."""
        return "/".join(self.node) if self.node else f"({self.outer[0]} and {self.inner[0]})"


def bearing_units(parts: list[tuple[str, tuple[str, ...]]]) -> list[BearingUnit]:
    """Rolling bearings from ``(part name, instance path)`` pairs (file order); see the module docstring.

    A part belongs to the deepest assembly node of its path whose name is a bearing; a unit needs
    an outer and an inner part.  Parts of the node that are none of the three are left alone.
    """
    units: dict[tuple[str, ...], tuple[list[str], list[str], list[str]]] = {}
    for name, path in parts:
        for k in range(len(path) - 2, -1, -1):
            if BEARING_WORDS.search(path[k]):
                own = " ".join((*path[k + 1:], name))
                unit = units.setdefault(path[:k + 1], ([], [], []))
                if re.search("outer", own, re.IGNORECASE):
                    unit[0].append(name)
                elif re.search("inner", own, re.IGNORECASE):
                    unit[1].append(name)
                elif ROLLING_WORDS.search(own):
                    unit[2].append(name)
                break
    return [BearingUnit(node, tuple(o), tuple(i), tuple(r)) for node, (o, i, r) in units.items() if o and i]


def _balls(surfaces: dict[str, list[Surface]], tol: MatingTolerances) -> dict[str, tuple[np.ndarray, float]]:
    """part -> (centre (3,) mm, radius mm) of the parts whose analytic faces are all convex spheres of
    one centre and radius (a ball split into several faces counts once)."""
    out = {}
    for part, surfs in surfaces.items():
        if surfs and all(f.kind == "sphere" and f.convex for f in surfs):
            c, r = surfs[0].point, surfs[0].radius
            if all(np.linalg.norm(f.point - c) <= tol.contact_tol and abs(f.radius - r) <= tol.contact_tol
                   for f in surfs):
                out[part] = (np.asarray(c, dtype=float), float(r))
    return out


def _in_groove(groove: Surface, centre: np.ndarray, radius: float, tol: MatingTolerances) -> bool:
    """A ball (centre (3,), radius, mm) inside the tube of a concave torus ``groove``, touching its wall
    (the gap between the ball and the tube wall within -contact_tol .. max_clearance)."""
    d = centre - groove.point
    h = float(d @ groove.direction)
    rho = float(np.linalg.norm(d - h * groove.direction))
    gap = groove.minor - (np.hypot(rho - groove.radius, h) + radius)
    return -tol.contact_tol <= gap <= tol.max_clearance


def _coaxial(a: Surface, b: Surface, tol: MatingTolerances) -> bool:
    """``b``'s axis (a cylinder's or torus'; a sphere's centre) on ``a``'s axis line."""
    if b.kind != "sphere" and np.linalg.norm(np.cross(a.direction, b.direction)) > tol.angle_tol:
        return False
    return float(np.linalg.norm(np.cross(b.point - a.point, a.direction))) <= tol.contact_tol


def _revolution_side(surfs: list[Surface], groove: Surface, pitch: float, tol: MatingTolerances) -> str | None:
    """'outer' or 'inner' when every analytic face of a part is one of a solid of revolution about
    ``groove``'s axis (planes normal to it; cylinders, tori, spheres on it) and its cylinders all lie
    outside, or all inside, the circle of radius ``pitch`` (mm); else None."""
    radii = []
    for f in surfs:
        if f.kind == "plane":
            if np.linalg.norm(np.cross(f.direction, groove.direction)) > tol.angle_tol:
                return None
        elif not _coaxial(groove, f, tol):
            return None
        elif f.kind == "cylinder":
            radii.append(f.radius)
    if radii and min(radii) > pitch:
        return "outer"
    if radii and max(radii) < pitch:
        return "inner"
    return None


def _ball_circle(centres: np.ndarray, groove: Surface, tol: MatingTolerances):
    """(centre (3,) mm, pitch radius mm) of the circle about ``groove``'s axis through every ball centre
    (n, 3), or None when they are not on one such circle."""
    d = centres - groove.point
    h = d @ groove.direction
    rho = np.linalg.norm(d - h[:, None] * groove.direction, axis=1)
    if np.ptp(h) > tol.contact_tol or np.ptp(rho) > tol.contact_tol:
        return None
    return groove.point + float(h.mean()) * groove.direction, float(rho.mean())


def bearing_by_geometry(surfaces: dict[str, list[Surface]], tol: MatingTolerances | None = None,
                        taken=frozenset()) -> list[BearingUnit]:
    """Rolling bearings from the parts' analytic faces alone (mm, assembly frame), see the module docstring.

    surfaces : part name -> its faces, in file order.  tol : default :class:`MatingTolerances`.
    taken : parts already in a bearing (by name).
    Each unit has its evidence, the axis (3,) of the ball circle (the rings' common axis) and its centre (3,) mm.
    """
    tol = tol or MatingTolerances()
    balls = {p: b for p, b in _balls(surfaces, tol).items() if p not in taken}
    grooves = [(part, f, frozenset(b for b, (c, r) in balls.items() if _in_groove(f, c, r, tol)))
               for part, surfs in surfaces.items() if part not in taken and part not in balls
               for f in surfs if f.kind == "torus" and not f.convex]
    grooves = [g for g in grooves if len(g[2]) >= 3]
    units, used = [], set()
    for i, (a, fa, held_a) in enumerate(grooves):
        for b, fb, held_b in grooves[i + 1:]:
            held = sorted(held_a & held_b - used, key=list(balls).index)
            if a == b or {a, b} & used or len(held) < 3 or not _coaxial(fa, fb, tol):
                continue
            radius = balls[held[0]][1]
            circle = _ball_circle(np.array([balls[h][0] for h in held]), fa, tol)
            if circle is None or any(abs(balls[h][1] - radius) > tol.contact_tol for h in held):
                continue
            sides = {_revolution_side(surfaces[p], fa, circle[1], tol): p for p in (a, b)}
            if set(sides) != {"outer", "inner"}:
                continue
            outer, inner = sides["outer"], sides["inner"]
            evidence = (f"rolling bearing by geometry: {len(held)} balls of radius {radius:.6g} mm with centres on "
                        f"a circle of radius {circle[1]:.6g} mm about the axis "
                        f"{np.round(fa.direction, 6).tolist()} through {np.round(circle[0], 6).tolist()} mm, in "
                        f"the raceway grooves of {outer} (outside) and {inner} (inside), solids of revolution "
                        "about that axis")
            units.append(BearingUnit((), (outer,), (inner,), tuple(held), evidence,
                                     np.asarray(fa.direction, dtype=float), circle[0]))
            used |= {a, b, *held}
    return units


#: parts named after a servo that are not one (its spacers, brackets, frames, horns, cables)
ACCESSORY_WORDS = re.compile(r"(spacer|bracket|frame|mount|plate|cable|horn|idle)", re.IGNORECASE)


def connector_by_name(name: str, product: str = "") -> str | None:
    """Evidence that a leaf without a closed solid is a servo, horn or idler model (kept for mating), or None."""
    for element in (name, product):
        m = SERVO_WORDS.search(element or "") or HORN_MODELS.search(element or "")
        if m:
            return f"a servo or horn model ({m.group(0).strip(' _-,')!r} in {element!r})"
    return None


def leaf_servos(parts: list[tuple[str, tuple[str, ...]]], products=None) -> list[tuple[str, str, str | None]]:
    """``(part, model, encoder evidence or None)`` of the parts whose own name (the last element of
    their instance path, or the part name) or product name (``products``: part -> product name) is a
    servo model and no accessory (:data:`ACCESSORY_WORDS`): one part, case and horn together."""
    out = []
    for name, path in parts:
        own = " ".join(((path[-1] if path else name), (products or {}).get(name) or ""))
        m = SERVO_WORDS.search(own) or SERVO_WORDS.search(name)
        if m and not ACCESSORY_WORDS.search(own):
            e = ENCODER_WORDS.search(own)
            encoder = (f"an encoder ({e.group(0).strip(' _-')!r} in {own!r}: the low-reduction servo a hand "
                       "moves; not actuated)") if e else None
            out.append((name, m.group(0).strip(" _-,"), encoder))
    return out
