"""The ``mbcompose`` command line (click): :mod:`.commands` (one command per verb),
:mod:`.values` (option types and checks), :mod:`.evaluate` (``mbcompose eval``)."""

from .commands import main

__all__ = ["main"]
