"""Simple B-rep solids (boxes, cylinders, spheres, unions, cuts) in millimetres, for building parts
to write with :mod:`parsers.step.writer` (the samples' generator scripts and the tests use them).

OpenCascade's OCP (the ``cad`` extra) is imported when a solid is made, never at import time.
"""

from __future__ import annotations

import numpy as np

from .brep import require_ocp

__all__ = ["box", "cylinder", "sphere", "fuse", "cut"]


def box(lo, hi):
    """Axis-aligned box between the corners ``lo`` and ``hi`` (3,) mm."""
    require_ocp()
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeBox
    from OCP.gp import gp_Pnt

    return BRepPrimAPI_MakeBox(gp_Pnt(*map(float, lo)), gp_Pnt(*map(float, hi))).Shape()


def cylinder(radius, start, end):
    """Solid cylinder of ``radius`` mm from point ``start`` to point ``end`` (3,) mm."""
    require_ocp()
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeCylinder
    from OCP.gp import gp_Ax2, gp_Dir, gp_Pnt

    start, end = np.asarray(start, float), np.asarray(end, float)
    d = end - start
    return BRepPrimAPI_MakeCylinder(gp_Ax2(gp_Pnt(*start), gp_Dir(*d)), float(radius),
                                    float(np.linalg.norm(d))).Shape()


def sphere(radius, centre=(0.0, 0.0, 0.0)):
    """Solid sphere of ``radius`` mm about ``centre`` (3,) mm."""
    require_ocp()
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeSphere
    from OCP.gp import gp_Pnt

    return BRepPrimAPI_MakeSphere(gp_Pnt(*map(float, centre)), float(radius)).Shape()


def fuse(*shapes):
    """The union of ``shapes``."""
    require_ocp()
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Fuse

    out = shapes[0]
    for s in shapes[1:]:
        out = BRepAlgoAPI_Fuse(out, s).Shape()
    return out


def cut(shape, *tools):
    """``shape`` with every one of ``tools`` removed."""
    require_ocp()
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Cut

    for t in tools:
        shape = BRepAlgoAPI_Cut(shape, t).Shape()
    return shape
