"""Mechanisms with known answers, built in Python, for the graph-stage tests.

Every body is made of boxes, so that an independent mass-property reference is
exact: trimesh's integral of the box meshes merged at the reference configuration.
"""

from __future__ import annotations

import numpy as np

from mbcompose.dynamics.spatial import rot_x, rot_y, rot_z
from mbcompose.parsers.assembly import GROUND, Assembly, Body, Geometry, Joint, Pose
from mbcompose.parsers.massprops import shapes_mass_properties

DENSITY = 2700.0


def box(size, xyz=(0, 0, 0), R=None) -> Geometry:
    return Geometry("box", {"size": np.asarray(size, float)},
                    Pose(np.eye(3) if R is None else R, np.asarray(xyz, float)))


def body(name, xyz, shapes, R=None) -> Body:
    pose = Pose(np.eye(3) if R is None else R, np.asarray(xyz, float))
    return Body(name, pose, shapes_mass_properties(shapes, DENSITY), tuple(shapes))


def joint(name, type_, ref, sec, origin=(0, 0, 0), axis=(0, 0, 1), actuated=False, axis2=None) -> Joint:
    return Joint(name, type_, ref, sec, np.asarray(origin, float), np.asarray(axis, float) / np.linalg.norm(axis),
                 None if axis2 is None else np.asarray(axis2, float), actuated=actuated)


SEEKER_TABLE2 = [
    {"shaft_b", "camera", "shaft_a"},
    {"housing", "pitch_connector_b", "pitch_connector_a"},
    {"gimbal_ring", "yaw_connector_b", "yaw_connector_a"},
]


def seeker() -> Assembly:
    """The missile seeker of seed 004 (Fig. 2, Table 1), housing welded to ground.

    Pitch axis: the x axis line through (0, 0, 0.1); yaw axis: the y axis line
    through the same point.  Starred revolutes of Table 1 (pitch_a, yaw_a) are
    actuated.  Some bodies have rotated frames to exercise the rotation of inertias.
    """
    c = np.array([0.0, 0.0, 0.1])
    ring = [box([0.02, 0.24, 0.03], [0.11, 0, 0]), box([0.02, 0.24, 0.03], [-0.11, 0, 0]),
            box([0.20, 0.02, 0.03], [0, 0.11, 0]), box([0.20, 0.02, 0.03], [0, -0.11, 0])]
    bodies = [
        body("housing", [0, 0, 0.01], [box([0.34, 0.30, 0.02])]),
        body("pitch_connector_a", [0.14, 0, 0.06], [box([0.02, 0.04, 0.10])]),
        body("pitch_connector_b", [-0.14, 0, 0.06], [box([0.02, 0.04, 0.10])], R=rot_z(np.pi)),
        body("gimbal_ring", c, ring, R=rot_z(0.3)),
        body("yaw_connector_a", c + [0, 0.085, 0], [box([0.03, 0.03, 0.02])]),
        body("yaw_connector_b", c + [0, -0.085, 0], [box([0.03, 0.03, 0.02])], R=rot_x(0.4)),
        body("shaft_a", c + [0, 0.06, 0], [box([0.012, 0.04, 0.012])], R=rot_y(0.7)),
        body("shaft_b", c + [0, -0.06, 0], [box([0.012, 0.04, 0.012])]),
        body("camera", c + [0.01, 0, 0.005], [box([0.10, 0.08, 0.06]), box([0.03, 0.03, 0.03], [0.06, 0, 0])]),
    ]
    X, Y = [1, 0, 0], [0, 1, 0]
    joints = [
        joint("housing_to_ground", "fixed", GROUND, "housing", [0, 0, 0]),
        joint("housing_pitch_a", "fixed", "housing", "pitch_connector_a", [0.14, 0, 0.02]),
        joint("housing_pitch_b", "fixed", "housing", "pitch_connector_b", [-0.14, 0, 0.02]),
        joint("pitch_a", "revolute", "pitch_connector_a", "gimbal_ring", c + [0.13, 0, 0], X, actuated=True),
        joint("pitch_b", "revolute", "pitch_connector_b", "gimbal_ring", c + [-0.13, 0, 0], X),
        joint("ring_yaw_a", "fixed", "gimbal_ring", "yaw_connector_a", c + [0, 0.10, 0]),
        joint("yaw_a", "revolute", "yaw_connector_a", "shaft_a", c + [0, 0.075, 0], Y, actuated=True),
        joint("ring_yaw_b", "fixed", "gimbal_ring", "yaw_connector_b", c + [0, -0.10, 0]),
        joint("yaw_b", "revolute", "yaw_connector_b", "shaft_b", c + [0, -0.075, 0], [0, -1, 0]),
        joint("shaft_a_camera", "fixed", "shaft_a", "camera", c + [0, 0.04, 0]),
        joint("shaft_b_camera", "fixed", "shaft_b", "camera", c + [0, -0.04, 0]),
    ]
    return Assembly("seeker", tuple(bodies), tuple(joints))


def _cube(name, xyz, s=0.02):
    return body(name, xyz, [box([s, s, s])])


def bearing() -> Assembly:
    """A shaft supported on ground by three coaxial revolutes (x axis); the middle one actuated."""
    shaft = body("shaft", [0.2, 0, 0], [box([0.4, 0.02, 0.02])])
    joints = [joint(f"bearing_{i}", "revolute", GROUND, "shaft", [x, 0, 0], [1, 0, 0], actuated=(i == 2))
              for i, x in ((1, 0.0), (2, 0.2), (3, 0.4))]
    return Assembly("bearing", (shaft,), tuple(joints))


FOURBAR_POINTS = {"O1": [0.0, 0.0, 0.0], "P": [0.05, 0.10, 0.0], "Q": [0.25, 0.15, 0.0], "O2": [0.30, 0.0, 0.0]}


def fourbar(tilt: float = 0.0) -> Assembly:
    """Planar four-bar of parallel (z) revolutes; ``tilt`` (rad) tilts the last axis about x."""
    p = {k: np.array(v) for k, v in FOURBAR_POINTS.items()}
    crank = _cube("crank", (p["O1"] + p["P"]) / 2)
    coupler = _cube("coupler", (p["P"] + p["Q"]) / 2)
    rocker = _cube("rocker", (p["Q"] + p["O2"]) / 2)
    tilted = rot_x(tilt) @ np.array([0, 0, 1.0])
    joints = [joint("j1_ground_crank", "revolute", GROUND, "crank", p["O1"], actuated=True),
              joint("j2_crank_coupler", "revolute", "crank", "coupler", p["P"]),
              joint("j3_coupler_rocker", "revolute", "coupler", "rocker", p["Q"]),
              joint("j4_rocker_ground", "revolute", "rocker", GROUND, p["O2"], tilted)]
    return Assembly("fourbar", (crank, coupler, rocker), tuple(joints))


def crossed_pair() -> Assembly:
    """Arm on a revolute to ground; a plate joined to the arm by revolutes on crossing axes (locked)."""
    arm = _cube("arm", [0.1, 0, 0])
    plate = body("plate", [0.2, 0, 0], [box([0.05, 0.05, 0.01])])
    joints = [joint("arm_pivot", "revolute", GROUND, "arm", [0, 0, 0], [0, 0, 1], actuated=True),
              joint("plate_hinge_x", "revolute", "arm", "plate", [0.2, 0, 0], [1, 0, 0]),
              joint("plate_hinge_y", "revolute", "arm", "plate", [0.2, 0.01, 0.02], [0, 1, 0])]
    return Assembly("crossed", (arm, plate), tuple(joints))


def rssr() -> Assembly:
    """Spatial RSSR: crank (revolute z at origin), coupler with spherical ends, rocker (revolute x).

    Mobility 2 (one output + the coupler's idle spin about its own axis).
    """
    A, B, C, D = (np.array(v, float) for v in ([0, 0, 0], [0.05, 0, 0.02], [0.2, 0.1, 0.15], [0.25, 0.1, 0.05]))
    bodies = (_cube("crank", (A + B) / 2), _cube("coupler", (B + C) / 2), _cube("rocker", (C + D) / 2))
    joints = [joint("r_in", "revolute", GROUND, "crank", A, [0, 0, 1], actuated=True),
              joint("s_crank", "spherical", "crank", "coupler", B),
              joint("s_rocker", "spherical", "coupler", "rocker", C),
              joint("r_out", "revolute", "rocker", GROUND, D, [1, 0, 0])]
    return Assembly("rssr", bodies, joints)


def relabel(assembly: Assembly, body_map, joint_map, reverse: bool = True) -> Assembly:
    """Rename bodies/joints (maps old -> new) and optionally reverse the input order."""
    def bn(n):
        return body_map.get(n, n)
    bodies = [Body(bn(b.name), b.pose, b.mass, b.geometry) for b in assembly.bodies]
    joints = [Joint(joint_map.get(j.name, j.name), j.type, bn(j.reference), bn(j.secondary), j.origin,
                    j.axis, j.axis2, actuated=j.actuated) for j in assembly.joints]
    if reverse:
        bodies, joints = bodies[::-1], joints[::-1]
    return Assembly(assembly.name, tuple(bodies), tuple(joints), assembly.gravity)


def random_assembly(rng: np.random.Generator, n_bodies: int = 8, n_extra: int = 4) -> Assembly:
    """Random tree of bodies on random joints plus ``n_extra`` loop-closing joints."""
    types = ["fixed", "revolute", "prismatic", "spherical", "universal", "cylindrical"]
    bodies, joints = [], []
    names = [GROUND]
    for i in range(n_bodies):
        R = rot_z(rng.uniform(-3, 3)) @ rot_y(rng.uniform(-3, 3)) @ rot_x(rng.uniform(-3, 3))
        shapes = [box(rng.uniform(0.01, 0.2, 3), rng.uniform(-0.1, 0.1, 3), rot_x(rng.uniform(-1, 1)))
                  for _ in range(rng.integers(1, 3))]
        bodies.append(body(f"b{i}", rng.uniform(-1, 1, 3), shapes, R=R))
        parent = names[rng.integers(0, len(names))]
        names.append(f"b{i}")
        t = types[rng.integers(0, len(types))]
        a = rng.normal(size=3)
        a2 = np.cross(a, rng.normal(size=3))
        joints.append(joint(f"j{i}", t, parent, f"b{i}", rng.uniform(-1, 1, 3), a,
                            actuated=bool(rng.integers(0, 2)), axis2=a2 / np.linalg.norm(a2) if t == "universal" else None))
    for k in range(n_extra):
        a, b = rng.choice(len(names), 2, replace=False)
        t = types[rng.integers(1, 4)]
        joints.append(joint(f"x{k}", t, names[a], names[b], rng.uniform(-1, 1, 3), rng.normal(size=3)))
    return Assembly("random", tuple(bodies), tuple(joints))
