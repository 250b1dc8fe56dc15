"""MJCF (MuJoCo XML), read as MuJoCo's compiler reads it: ``read_mjcf(path) -> Assembly``.

Modules: :mod:`.reader` (the body tree in MuJoCo's order), :mod:`.compiler` (``<compiler>``,
defaults and angle units), :mod:`.assets` and :mod:`.mesh` (mesh assets, MuJoCo's mesh inertia),
:mod:`.mass` (geom mass rules), :mod:`.fit` (primitive fits of meshes), :mod:`.shell` (shell
inertia), :mod:`.equality` (``connect``/``weld`` loops, joint and tendon couplings),
:mod:`.actuators`, :mod:`.tendons` (fixed and site-only spatial tendons as force elements), :mod:`.replicate` and :mod:`.attach` (written out before the walk).
"""

from .reader import read_mjcf

__all__ = ["read_mjcf"]
