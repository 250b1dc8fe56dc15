"""STEP assemblies through OpenCascade (the ``cad`` extra): ``read_step(path) -> Assembly``.

Modules: :mod:`.reader` (parts, densities, the assembly), :mod:`.brep` (the XCAF tree and exact
mass properties; the only module that imports OCP), :mod:`.solids` (closed solids of a part),
:mod:`.mating` (contacts between parts), :mod:`.freedom` (the motion a contact allows),
:mod:`.inference` (rigid groups and joints from contacts and rules), :mod:`.groups` (the
union-find of rigid groups), :mod:`.rules` (fasteners and servos by name and geometry),
:mod:`.wrapper` (the STEP wrapper YAML: declared joints, rigid groups, ignored parts),
:mod:`.joints_file` (``inspect --write-joints``), :mod:`.writer` (STEP files of test assemblies).  Importing this package does not import OCP.
"""

from .reader import read_step

__all__ = ["read_step"]
