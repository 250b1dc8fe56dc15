"""Pipeline stages, configuration and the ``mbcompose`` command line.

``composer.compose(path, **options)`` is the Python entry point (see
:mod:`composer.compose`).
"""

from .compose import Composition, compose

__all__ = ["Composition", "compose"]
