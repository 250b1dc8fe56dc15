"""Writing a model and its exports: the native model file (YAML) and URDF, MJCF or SDFormat beside it,
with the meshes copied (or converted to STL) into ``assets/`` and referenced relatively
(:mod:`parsers.exporters.assets`), so that the output folder can be moved.  ``mbcompose convert`` and the
pipeline's ``outputs.exports`` both write through :func:`export_writers`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Mapping

from mbcompose.parsers.assembly import Assembly
from mbcompose.parsers.exporters import writer_for
from mbcompose.parsers.exporters.assets import plan_mesh_assets, relocated
from mbcompose.parsers.yaml import write_yaml

#: the native model file's suffixes
MODEL_SUFFIXES = (".yaml", ".yml")
#: export format -> file suffix of the pipeline's outputs (``STEM.mjcf.xml`` ...)
EXPORT_SUFFIXES = {"urdf": ".urdf", "mjcf": ".mjcf.xml", "sdf": ".sdf"}


def export_writers(assembly: Assembly, names: Iterable[str], directory: Path,
                   options: Mapping[str, dict] | None = None) -> dict[str, Callable[[Path], None]]:
    """``write(path)`` of each file of ``names`` (in ``directory``; the suffix chooses the writer: ``.yaml``
    the native model file, else :func:`parsers.exporters.writer_for`) and of the meshes they share, keyed by
    name in ``directory``.

    options : suffix -> keyword arguments of that exporter (``{".urdf": {"cut_loops": True}}``).
    A writer raises :class:`parsers.exporters.ExportError` when the format cannot hold the model.
    """
    options = options or {}
    assets = plan_mesh_assets(assembly)
    writers: dict[str, Callable[[Path], None]] = {}
    for name in names:
        suffix = Path(name).suffix.lower()
        if suffix in MODEL_SUFFIXES:
            text = write_yaml(relocated(assembly, assets, directory), directory)
            writers[name] = lambda p, t=text: p.write_text(t, encoding="utf-8")
        else:
            writer, extra = writer_for(suffix), options.get(suffix, {})
            writers[name] = lambda p, w=writer, o=extra: w(assembly, p, mesh_reference=assets.reference, **o)
    writers.update(assets.writers())
    return writers
