"""mbcompose: mechanical assemblies to multibody dynamics models.

The installed package ``mbcompose`` gathers the repository's four folders as
subpackages (``pyproject.toml`` maps them; this file is the package itself):

- :mod:`mbcompose.parsers`: readers of YAML, URDF, SDFormat, MJCF (and STEP with
  the ``cad`` extra) into an ``Assembly``; exporters.
- :mod:`mbcompose.graph`: the extended system graph of seed 004, composites,
  reduction, loops, aggregation.
- :mod:`mbcompose.dynamics`: SKO models and the recursive algorithms of seeds
  000-003, constraint embedding, the operator workbench.
- :mod:`mbcompose.composer`: pipeline, CLI, reports and simulation.

``mbcompose.compose(path, **options)`` is the entry point; ``python -m mbcompose``
runs the command line.  Importing this package imports no subpackage until an
attribute needs it, and compiles nothing.
"""

from __future__ import annotations

import importlib

__all__ = ["compose", "composer", "dynamics", "graph", "parsers"]
__version__ = "0.1.0"

_SUBPACKAGES = {"composer", "dynamics", "graph", "parsers"}


def compose(path, **options):
    """Compose the assembly at ``path`` into a dynamics model.

    Same as :func:`mbcompose.composer.compose`: returns a ``Composition`` with
    ``.assembly``, the intermediate graphs and ``.model``.
    """
    from mbcompose.composer.compose import compose as _compose
    return _compose(path, **options)


def __getattr__(name):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
