"""STEP assemblies through OpenCascade (the ``cad`` extra): ``read_step(path) -> Assembly``.

Modules: :mod:`.reader` (parts, densities, the assembly), :mod:`.brep` (the XCAF tree and exact
mass properties; the only module that imports OCP), :mod:`.solids` (closed solids of a part),
:mod:`.mating` (contacts between parts), :mod:`.freedom` (the motion a contact allows),
:mod:`.inference` (joints from contacts and rules), :mod:`.wrapper` (the STEP wrapper YAML),
:mod:`.writer` (STEP files of test assemblies).  Importing this package does not import OCP.
"""

from .reader import read_step

__all__ = ["read_step"]
