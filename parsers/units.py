"""Is a model's scale plausible for its units?  Warnings that name the likely unit slip.

An assembly is in SI units once read.  A file whose lengths were written in millimetres but read
as metres (a YAML file without ``units:``, a mesh exported in mm) comes out a thousand times too
large and, with a density, a billion times too heavy; gravity written in m/s^2 in a millimetre
file is a thousandth of Earth's.  Neither is an error (the numbers may be meant), so each gets one
warning naming what was found and the unit that would make it ordinary.
"""

from __future__ import annotations

import logging
import math

import numpy as np

log = logging.getLogger(__name__)

#: |g| (m/s^2) outside this range is not a planet's surface gravity (the Moon 1.62, Jupiter 24.8)
PLAUSIBLE_GRAVITY = (1.0, 30.0)
#: a model heavier than this (kg) or wider than this (m) is taken for a unit slip before a machine
HEAVIEST, WIDEST = 1e6, 500.0


def extent(assembly) -> float:
    """The largest distance (m) between two of the bodies' origins, centres of mass and joint origins:
    the length of the diagonal of the box that holds them all."""
    if len(assembly.bodies) + len(assembly.joints) < 2:
        return 0.0
    s = assembly.body_stacks
    com = s.com if s.rotation is None else (s.rotation @ s.com[:, :, None]).reshape(-1, 3)
    pts = np.concatenate((s.translation, com + s.translation, assembly.joint_origins))
    return math.hypot(*(np.maximum.reduce(pts, axis=0) - np.minimum.reduce(pts, axis=0)).tolist())


def _likely_unit(size: float) -> str | None:
    """The length unit that would make ``size`` (m, as read) an ordinary machine's (1 cm - 20 m)."""
    from .yaml.format import LENGTH_UNITS    # the units a file may declare, smallest first (mm before cm)

    for name, metres in sorted(LENGTH_UNITS.items(), key=lambda item: item[1]):
        if metres < 1.0 and 0.01 <= size * metres <= 20.0:
            return name
    return None


def scale_warnings(assembly) -> list[str]:
    """Messages for a gravity or a size and mass implausible in SI units (see the module docstring)."""
    out = []
    g = math.hypot(*assembly.gravity.tolist())
    if g and not PLAUSIBLE_GRAVITY[0] <= g <= PLAUSIBLE_GRAVITY[1]:
        ratio = g / 9.81
        out.append(f"gravity is {g:.4g} m/s^2, {ratio:.3g} times Earth's: if the file's lengths are not in "
                   f"metres, write gravity in the file's length unit (Earth's is 9810 in mm, 981 in cm)")
    size, mass = extent(assembly), assembly.total_mass
    if size > WIDEST or mass > HEAVIEST:
        unit = _likely_unit(size)
        hint = (f": are its lengths in {unit}? (declare the unit: YAML 'units: {{length: {unit}}}', a mesh's "
                f"'scale')" if unit else "")
        out.append(f"the model spans {size:.4g} m and weighs {mass:.4g} kg{hint}")
    return out


def warn_scale(assembly, file) -> None:
    """Log :func:`scale_warnings` of ``assembly`` read from ``file``."""
    for message in scale_warnings(assembly):     # each its own template: the CLI groups repeats by template
        log.warning("%s: " + message.replace("%", "%%"), file)
