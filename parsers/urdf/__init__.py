"""URDF (ROS ``urdfdom``): ``read_urdf(path) -> Assembly``.

Modules: :mod:`.reader` (links, joints, the document pass), :mod:`.geometry` (origins, inertials,
shapes and mesh look-up), :mod:`.joints` (axes and limits), :mod:`.actuation` (transmissions, mimic).
"""

from .reader import read_urdf

__all__ = ["read_urdf"]
