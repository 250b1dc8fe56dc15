"""SDFormat (1.6 and later, as gz-sim and Drake read it): ``read_sdf(path) -> Assembly``.

Modules: :mod:`.reader` (models, nested models, worlds), :mod:`.frames` (pose frame semantics),
:mod:`.include` (``<include>`` and ``model://``), :mod:`.link` (inertials and shapes),
:mod:`.joints` (joint types, axes, gearbox and screw couplings).
"""

from .reader import is_sdformat, read_sdf

__all__ = ["is_sdformat", "read_sdf"]
