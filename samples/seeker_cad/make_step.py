"""Write ``seeker.step``: the missile seeker of seed 004 (Fig. 2, Table 1) as a CAD assembly.

Nine parts in an XCAF tree (names are the instance names; the two pitch
connectors, the two yaw connectors and the two shafts are two instances of one
product each), millimetres, AP214, written with OpenCascade (the ``cad``
extra).  The joints are not written: they follow from the mating geometry
(docs/assembly-format.md, "STEP assemblies"):

* pitch connector -> housing: peg r 6 pressed into a hole r 6 of the housing (press fit);
* pitch connector -> gimbal ring: pin r 4 in a hole r 4.2 of the ring (bearing,
  clearance 0.2) with the connector's shoulder on the ring's flat outer face (planar):
  a revolute about the pitch axis (y);
* yaw connector -> ring: peg r 3 pressed into a hole r 3 (press fit);
* shaft -> yaw connector: pin r 4 in a blind hole r 4.2 (bearing) with the shaft's
  collar against the connector (planar): a revolute about the yaw axis (z);
* shaft -> camera: peg r 3 pressed into a hole r 3 of the camera (press fit).

Assembly frame: x is the boresight, the gimbal centre is the origin, pitch axis y,
yaw axis z (as samples/seeker).  Run from anywhere::

    python samples/seeker_cad/make_step.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mbcompose.parsers.step.solids import box, cut, cylinder, fuse
from mbcompose.parsers.step.writer import Node, Product, write_step

HERE = Path(__file__).resolve().parent
ALUMINIUM = 2700.0   # kg/m^3, written as each product's material density


def placement(rotation=np.eye(3), translation=(0.0, 0.0, 0.0)) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = rotation, translation
    return m


FLIP_X = np.diag([1.0, -1.0, -1.0])   # half turn about x: +y -> -y, +z -> -z


def products() -> dict[str, Product]:
    """The six products, each in its own frame (mm)."""
    housing = cut(cylinder(70, (-50, 0, 0), (50, 0, 0)), cylinder(62, (-51, 0, 0), (51, 0, 0)),
                  cylinder(6, (0, -80, 0), (0, 80, 0)))
    ring = cut(box((-6, -42, -42), (6, 42, 42)), box((-7, -36, -36), (7, 36, 36)),
               cylinder(4.2, (0, -45, 0), (0, 45, 0)), cylinder(3, (0, 0, -45), (0, 0, 45)))
    # frame: origin on the shoulder face, +y outwards (towards the housing)
    pitch_connector = fuse(box((-8, 0, -8), (8, 16, 8)), cylinder(6, (0, 16, 0), (0, 28, 0)),
                           cylinder(4, (0, 0, 0), (0, -5.5, 0)))
    # frame: origin on the face against the ring, +z outwards
    yaw_connector = cut(fuse(box((-6, -6, -8), (6, 6, 0)), cylinder(3, (0, 0, 0), (0, 0, 6))),
                        cylinder(4.2, (0, 0, -9), (0, 0, -1.5)))
    # frame: origin on the collar face against the camera, +z outwards
    shaft = fuse(cylinder(3, (0, 0, -6), (0, 0, 0)), cylinder(7, (0, 0, 0), (0, 0, 8)),
                 cylinder(4, (0, 0, 8), (0, 0, 14)))
    camera = cut(fuse(cylinder(20, (-15, 0, 0), (25, 0, 0)), box((-30, -15, -15), (-15, 15, 15))),
                 cylinder(3, (0, 0, 14), (0, 0, 21)), cylinder(3, (0, 0, -14), (0, 0, -21)))
    grey, dark, blue = (0.75, 0.75, 0.78), (0.35, 0.35, 0.4), (0.2, 0.35, 0.8)
    return {name: Product(name, shape, color, ALUMINIUM) for name, shape, color in [
        ("housing", housing, grey), ("gimbal_ring", ring, blue), ("pitch_connector", pitch_connector, dark),
        ("yaw_connector", yaw_connector, dark), ("shaft", shaft, dark), ("camera", camera, grey)]}


def seeker_tree() -> Node:
    """The assembly tree: housing, the gimbal and camera sub-assemblies, the pitch connectors."""
    p = products()
    gimbal = Node("gimbal", children=[
        Node("gimbal_ring", p["gimbal_ring"]),
        Node("yaw_connector_a", p["yaw_connector"], placement=placement(translation=(0, 0, 36))),
        Node("yaw_connector_b", p["yaw_connector"], placement=placement(FLIP_X, (0, 0, -36)))])
    camera = Node("camera_assembly", children=[
        Node("camera", p["camera"]),
        Node("shaft_a", p["shaft"], placement=placement(translation=(0, 0, 20))),
        Node("shaft_b", p["shaft"], placement=placement(FLIP_X, (0, 0, -20)))])
    return Node("seeker", children=[
        Node("housing", p["housing"]), gimbal, camera,
        Node("pitch_connector_a", p["pitch_connector"], placement=placement(translation=(0, 42, 0))),
        Node("pitch_connector_b", p["pitch_connector"], placement=placement(FLIP_X, (0, -42, 0)))])


def main() -> None:
    write_step(HERE / "seeker.step", seeker_tree(), unit="MM")
    print(f"wrote {HERE / 'seeker.step'}")


if __name__ == "__main__":
    main()
