"""Write ``fourbar.step``: the planar four-bar of samples/fourbar as a CAD assembly of links and pins.

Millimetres, AP214, steel (7.85 g/cm^3 in the file).  The pivots are those of
samples/fourbar (x-z plane, axes along y): A = (0, 0), B = (0, 90),
C = (200, 240), D = (300, 0).  The links are bars 20 mm wide and 10 mm thick in
layers along y: base y 0..10, crank and rocker y 12..22, coupler y 24..34.
Each pivot is one instance of the product ``pin``: a peg r 4 pressed into the
lower link (press fit), a collar r 7 spacing the links by 2 mm, a shaft r 4 in a
hole r 4.2 of the upper link (bearing, clearance 0.2) and a head r 7 on top, so
the pin and the upper link touch on both faces (planar contacts) and in the
bore: a revolute about y.  Links never touch each other.  Run::

    python samples/fourbar_cad/make_step.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mbcompose.parsers.step.solids import box, cut, cylinder, fuse
from mbcompose.parsers.step.writer import Node, Product, write_step

HERE = Path(__file__).resolve().parent
STEEL = 7850.0
A, B, C, D = (0.0, 0.0), (0.0, 90.0), (200.0, 240.0), (300.0, 0.0)     # (x, z) of the pivots, mm
BORE, PEG = 4.2, 4.0


def along_y(radius, y0, y1, x=0.0, z=0.0):
    return cylinder(radius, (x, y0, z), (x, y1, z))


def bar(length, y0, hole0, hole1):
    """A bar along its local x from pivot 0 (x = 0) to pivot 1 (x = length), 20 wide, 10 thick."""
    shape = box((-10, y0, -10), (length + 10, y0 + 10, 10))
    for x, r in ((0.0, hole0), (length, hole1)):
        shape = cut(shape, along_y(r, y0 - 1, y0 + 11, x=x))
    return shape


def pin():
    """Peg y -10..0 (in the lower link), collar 0..2, shaft 2..12 (in the upper link), head 12..15."""
    return fuse(along_y(PEG, -10, 0), along_y(7, 0, 2), along_y(PEG, 2, 12), along_y(7, 12, 15))


def placed(origin, towards=None, y=0.0) -> np.ndarray:
    """Placement putting local x from ``origin`` towards ``towards`` (x-z plane), local origin at height y."""
    m = np.eye(4)
    if towards is not None:
        d = np.array([towards[0] - origin[0], 0.0, towards[1] - origin[1]])
        d /= np.linalg.norm(d)
        m[:3, 0], m[:3, 1] = d, [0.0, 1.0, 0.0]
        m[:3, 2] = np.cross(d, [0.0, 1.0, 0.0])
    m[:3, 3] = [origin[0], y, origin[1]]
    return m


def fourbar_tree() -> Node:
    def length(p, q):
        return float(np.hypot(q[0] - p[0], q[1] - p[1]))
    steel = dict(density=STEEL)
    base = Product("base", bar(length(A, D), 0, PEG, PEG), color=(0.4, 0.4, 0.45), **steel)
    crank = Product("crank", bar(length(A, B), 12, BORE, PEG), color=(0.8, 0.3, 0.2), **steel)
    rocker = Product("rocker", bar(length(D, C), 12, BORE, PEG), color=(0.2, 0.6, 0.3), **steel)
    coupler = Product("coupler", bar(length(B, C), 24, BORE, BORE), color=(0.2, 0.35, 0.8), **steel)
    p = Product("pin", pin(), color=(0.7, 0.7, 0.7), **steel)
    return Node("fourbar", children=[
        Node("base", base, placement=placed(A, D)),
        Node("crank", crank, placement=placed(A, B)),
        Node("coupler", coupler, placement=placed(B, C)),
        Node("rocker", rocker, placement=placed(D, C)),
        Node("pins", children=[
            Node("pin_a", p, placement=placed(A, y=10)), Node("pin_b", p, placement=placed(B, y=22)),
            Node("pin_c", p, placement=placed(C, y=22)), Node("pin_d", p, placement=placed(D, y=10))])])


def main() -> None:
    write_step(HERE / "fourbar.step", fourbar_tree(), unit="MM")
    print(f"wrote {HERE / 'fourbar.step'}")


if __name__ == "__main__":
    main()
