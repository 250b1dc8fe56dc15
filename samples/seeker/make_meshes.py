"""Generate the part meshes of the missile seeker sample (seed 004, Fig. 2, Table 1).

Each part is a closed, watertight solid made with ``trimesh.creation`` and
written as a binary STL in millimetres, in the part's own body frame; the
body poses and the joints are in ``seeker.yaml``.  Run from anywhere::

    python samples/seeker/make_meshes.py

Layout of the assembled seeker (assembly frame, mm, reference configuration):
x is the boresight (forward), the gimbal centre is the origin, the pitch axis
is the y axis and the yaw axis is the z axis.

=================  ==========================================  ==================
part               shape (body frame)                          body frame origin
=================  ==========================================  ==================
housing            tube r 62..70, length 100, along body z     0; body z = x
gimbal_ring        ring r 44..50, width 12, along body z       0; body z = x
pitch_connector_*  block 16 x 12 x 16                          (0, +-56, 0)
yaw_connector_*    block 12 x 12 x 8                           (0, 0, +-40)
shaft_*            cylinder r 4, length 16, along body z       (0, 0, +-28)
camera             lens cylinder r 20, x -15..25 (along x)     0
                   + electronics box 15 x 30 x 30, x -30..-15
=================  ==========================================  ==================

Attachment points: housing/pitch connector at y = +-62 (tube bore), pitch
connector/ring at y = +-50 (pitch axis), ring/yaw connector at z = +-44 (ring
bore), yaw connector/shaft at z = +-36 (yaw axis), shaft/camera at z = +-20
(lens barrel).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh

HERE = Path(__file__).resolve().parent
MESH_DIR = HERE / "meshes"

#: circle subdivisions of the round parts
SECTIONS = 64

#: rotation taking the shape's z axis onto the body x axis (R = Ry(90 deg))
Z_TO_X = trimesh.transformations.rotation_matrix(np.pi / 2.0, [0.0, 1.0, 0.0])


def part_meshes() -> dict[str, trimesh.Trimesh]:
    """The nine parts, each in its body frame, millimetres."""
    housing = trimesh.creation.annulus(r_min=62.0, r_max=70.0, height=100.0, sections=SECTIONS)
    ring = trimesh.creation.annulus(r_min=44.0, r_max=50.0, height=12.0, sections=SECTIONS)
    pitch_connector = trimesh.creation.box(extents=[16.0, 12.0, 16.0])
    yaw_connector = trimesh.creation.box(extents=[12.0, 12.0, 8.0])
    shaft = trimesh.creation.cylinder(radius=4.0, height=16.0, sections=SECTIONS)
    # lens barrel along x, x in [-15, 25]; electronics box behind it, x in [-30, -15].
    # The two solids touch along the plane x = -15 without overlapping, so their
    # concatenation is a closed solid whose volume is the sum of the two.
    lens = trimesh.creation.cylinder(radius=20.0, height=40.0, sections=SECTIONS)
    lens.apply_transform(Z_TO_X)
    lens.apply_translation([5.0, 0.0, 0.0])
    box = trimesh.creation.box(extents=[15.0, 30.0, 30.0])
    box.apply_translation([-22.5, 0.0, 0.0])
    camera = trimesh.util.concatenate([lens, box])
    return {
        "housing": housing,
        "gimbal_ring": ring,
        "camera": camera,
        "pitch_connector_a": pitch_connector,
        "pitch_connector_b": pitch_connector.copy(),
        "yaw_connector_a": yaw_connector,
        "yaw_connector_b": yaw_connector.copy(),
        "shaft_a": shaft,
        "shaft_b": shaft.copy(),
    }


def main() -> None:
    MESH_DIR.mkdir(exist_ok=True)
    for name, mesh in part_meshes().items():
        if not mesh.is_watertight or not mesh.volume > 0.0:
            raise RuntimeError(f"{name}: mesh is not a closed solid")
        mesh.export(MESH_DIR / f"{name}.stl")


if __name__ == "__main__":
    main()
