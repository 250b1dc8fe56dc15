"""The native YAML assembly format (docs/assembly-format.md): ``read_yaml``, ``write_yaml``.

Modules: :mod:`.format` (the format's reader and writer, side by side), :mod:`.document`
(YAML loading with line numbers, bounded, and the ``Node`` that carries them).
"""

from .format import read_yaml, write_yaml

__all__ = ["read_yaml", "write_yaml"]
