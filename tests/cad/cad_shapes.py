"""Small CAD assemblies made with OpenCascade for the STEP reader's tests (mm).

Each mechanism is a list of (instance name, product, placement) built in a local
frame; :func:`write_mechanism` places it in the assembly by a rigid transform
that is not axis-aligned, optionally nests some parts in a sub-assembly with
its own placement, and optionally adds placement noise to every part.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from mbcompose.parsers.step.solids import box, cut, cylinder, fuse, sphere  # noqa: F401 (used as S.box ...)
from mbcompose.parsers.step.writer import Node, Product, write_step


def rigid(rotvec=(0, 0, 0), translation=(0, 0, 0)) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = Rotation.from_rotvec(rotvec).as_matrix()
    m[:3, 3] = translation
    return m


#: the placement of every test mechanism in the assembly: not axis-aligned
WORLD = rigid([0.3, -0.5, 0.7], [12.0, -7.0, 30.0])


def noise(rng, dx=0.02, dtheta=2e-4) -> np.ndarray:
    """A rigid perturbation: translation of length dx (mm), rotation of angle dtheta (rad)."""
    t = rng.normal(size=3)
    w = rng.normal(size=3)
    return rigid(dtheta * w / np.linalg.norm(w), dx * t / np.linalg.norm(t))


def write_mechanism(path, parts, world=WORLD, nest=(), rng=None, unit="MM"):
    """Write ``parts`` [(name, Product, local 4x4)] as a STEP assembly.

    world : placement of the mechanism's frame in the assembly.
    nest : names of parts put in a sub-assembly 'sub' placed at an arbitrary pose.
    rng : when given, every part gets placement noise (:func:`noise`).
    """
    sub_place = rigid([-0.4, 0.2, 0.1], [5.0, 3.0, -2.0])
    top, sub = [], []
    for name, product, local in parts:
        place = world @ local
        if rng is not None:
            place = place @ noise(rng)
        if name in nest:
            sub.append(Node(name, product, placement=np.linalg.inv(sub_place) @ place))
        else:
            top.append(Node(name, product, placement=place))
    if sub:
        top.append(Node("sub", children=sub, placement=sub_place))
    write_step(path, Node("top", children=top), unit=unit)
    return path


def product(name, shape, density=1000.0):
    return Product(name, shape, density=density)


# ---------------------------------------------------------------- mechanisms (local frame, mm)

def plate_with_hole(radius):
    return product("plate", cut(box((-20, -20, -10), (20, 20, 0)), cylinder(radius, (0, 0, -11), (0, 0, 1))))


def pin_mechanism(hole_radius, shoulder):
    """A plate with a hole along z and a pin r 5 in it (with a collar on the plate when ``shoulder``)."""
    pin = cylinder(5, (0, 0, -10), (0, 0, 0))
    if shoulder:
        pin = fuse(pin, cylinder(8, (0, 0, 0), (0, 0, 3)))
    else:
        pin = cylinder(5, (0, 0, -10), (0, 0, 5))
    return [("plate", plate_with_hole(hole_radius), np.eye(4)), ("pin", product("pin", pin), np.eye(4))]


def stacked_plates():
    """Plate b resting on plate a (one planar contact)."""
    return [("plate_a", product("plate_a", box((-20, -20, -5), (20, 20, 0))), np.eye(4)),
            ("plate_b", product("plate_b", box((-10, -15, 0), (15, 10, 4))), np.eye(4))]


def slot_mechanism():
    """A block in a slot along x: it touches the slot's bottom and both walls."""
    base = cut(box((-30, -15, -10), (30, 15, 10)), box((-31, -5, 0), (31, 5, 11)))
    return [("base", product("base", base), np.eye(4)),
            ("slider", product("slider", box((-8, -5, 0), (8, 5, 6))), np.eye(4))]


def ball_mechanism(ball_radius):
    """A ball with a stem in a hemispherical socket r 5 (open at the socket's top face z = 0)."""
    socket = cut(box((-10, -10, -10), (10, 10, 0)), sphere(5.0))
    ball = fuse(sphere(ball_radius), cylinder(2, (0, 0, 0), (0, 0, 12)))
    return [("socket", product("socket", socket), np.eye(4)), ("ball", product("ball", ball), np.eye(4))]


def two_bearings():
    """A shaft in two separated bearing blocks of one frame (two coaxial bearings, shoulders on both)."""
    frame = cut(fuse(box((-20, -10, -10), (-10, 10, 10)), box((10, -10, -10), (20, 10, 10)),
                     box((-20, -10, -14), (20, 10, -10))),
                cylinder(4.2, (-21, 0, 0), (21, 0, 0)))
    shaft = fuse(cylinder(4, (-22, 0, 0), (22, 0, 0)), cylinder(7, (-10, 0, 0), (-6, 0, 0)))
    return [("frame", product("frame", frame), np.eye(4)), ("shaft", product("shaft", shaft), np.eye(4))]


def wheels_on_a_plate(n: int):
    """A plate with ``n`` wheels, each turning on a pin pressed into the plate (2 n + 1 parts).

    Pin: peg r 4 pressed into the plate's hole r 4, collar r 6 (z 0..1) under the
    wheel, shaft r 4 in the wheel's hole r 4.2 (bearing); the wheel rests on the
    collar (planar) and never touches the plate: each pin-wheel pair is a revolute
    about z, each plate-pin pair fixed.
    """
    from OCP.BRep import BRep_Builder
    from OCP.TopoDS import TopoDS_Compound
    cols = int(np.ceil(np.sqrt(n)))
    centres = [(30.0 * (k % cols), 30.0 * (k // cols)) for k in range(n)]
    holes = TopoDS_Compound()
    builder = BRep_Builder()
    builder.MakeCompound(holes)
    for x, y in centres:
        builder.Add(holes, cylinder(4, (x, y, -11), (x, y, 1)))
    size = 30.0 * cols
    plate = product("plate", cut(box((-15, -15, -10), (size - 15, size - 15, 0)), holes))
    wheel = product("wheel", cut(cylinder(12, (0, 0, 1), (0, 0, 6)), cylinder(4.2, (0, 0, 0), (0, 0, 7))))
    pin = product("pin", fuse(cylinder(4, (0, 0, -8), (0, 0, 0)), cylinder(6, (0, 0, 0), (0, 0, 1)),
                              cylinder(4, (0, 0, 1), (0, 0, 6))))
    parts = [("plate", plate, np.eye(4))]
    for k, (x, y) in enumerate(centres):
        parts.append((f"pin_{k}", pin, rigid(translation=(x, y, 0))))
        parts.append((f"wheel_{k}", wheel, rigid(translation=(x, y, 0))))
    return parts


def torus(major, minor, centre=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0)):
    """Solid torus (mm): tube of radius ``minor`` about the circle of radius ``major`` about ``axis``."""
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeTorus
    from OCP.gp import gp_Ax2, gp_Dir, gp_Pnt
    return BRepPrimAPI_MakeTorus(gp_Ax2(gp_Pnt(*map(float, centre)), gp_Dir(*map(float, axis))),
                                 float(major), float(minor)).Shape()


def ball_bearing(n_balls=7, pitch=14.0, ball=2.5, off_circle=0.0):
    """A deep-groove ball bearing about z with no telling names: rings 'a' (outer, r 16..19) and 'b'
    (inner, r 9..12), 5 mm wide, each with a raceway groove (a torus of minor radius ``ball`` about
    the pitch circle) and ``n_balls`` balls 'p_k' of radius ``ball`` on that circle (the first one
    moved radially by ``off_circle`` mm and shrunk by as much, so that it still touches the outer race)."""
    groove = torus(pitch, ball)
    outer = product("a", cut(cylinder(19, (0, 0, -2.5), (0, 0, 2.5)), cylinder(16, (0, 0, -3), (0, 0, 3)), groove))
    inner = product("b", cut(cut(cylinder(12, (0, 0, -2.5), (0, 0, 2.5)), cylinder(9, (0, 0, -3), (0, 0, 3))),
                             groove))
    parts = [("a", outer, np.eye(4)), ("b", inner, np.eye(4))]
    for k in range(n_balls):
        t = 2 * np.pi * k / n_balls
        shift = off_circle if k == 0 else 0.0
        shape = sphere(ball - shift / 2, ((pitch + shift / 2) * np.cos(t), (pitch + shift / 2) * np.sin(t), 0))
        parts.append((f"p_{k}", product(f"p_{k}", shape), np.eye(4)))
    return parts


def surface_servo_arm(gap=0.2, name="XL330_servo"):
    """A one-part servo drawn as a surface model (no solid: the faces of its 20 x 30 x 20 case without the
    bottom one, and of its horn, a cylinder r 6 about z through (0, 5) from z 10 to 12), a bracket 'base'
    beside the case (a planar face ``gap`` mm from its +x face) and an 'arm' plate resting on the horn's
    face only.  Mechanism: the arm turns about the horn axis relative to base and servo case, dof 1.
    ``name``: the servo's product name."""
    from OCP.BRep import BRep_Builder
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS_Compound
    faces = TopoDS_Compound()
    builder = BRep_Builder()
    builder.MakeCompound(faces)
    for shape, skip_z in ((box((-10, -15, -10), (10, 15, 10)), -10.0), (cylinder(6, (0, 5, 10), (0, 5, 12)), 10.0)):
        explorer = TopExp_Explorer(shape, TopAbs_FACE)
        while explorer.More():
            face = explorer.Current()
            explorer.Next()
            from OCP.BRepGProp import BRepGProp
            from OCP.GProp import GProp_GProps
            props = GProp_GProps()
            BRepGProp.SurfaceProperties_s(face, props)
            if abs(props.CentreOfMass().Z() - skip_z) > 1e-9:
                builder.Add(faces, face)
    return [("base", product("base", box((10 + gap, -15, -10), (15, 15, 10))), np.eye(4)),
            ("servo", product(name, faces), np.eye(4)),
            ("arm", product("arm", box((-8, -1, 12), (8, 30, 14))), np.eye(4))]
