"""A pause of Python's cyclic garbage collector while a model is built.

Reading and composing a robot creates tens of thousands of small objects that
live on (XML elements, poses, joints, graph elements).  Each few hundred new
objects the collector scans the young ones, and every so often everything
alive: on the robots of ``benchmarks/parsers.py`` that was a quarter of
``compose``'s time.  These objects hold no reference cycles, so reference
counting frees whatever becomes garbage and memory does not grow while the
collector waits; it runs again, as before, when the block ends.
"""

from __future__ import annotations

import gc


class paused_gc:
    """Disable the cyclic garbage collector inside the ``with`` block (then restore its state).

    A class rather than a ``contextlib.contextmanager`` generator: entering and leaving cost two
    plain calls, no generator and no wrapper objects (``compose`` enters it, and the URDF reader
    inside it again, once per file).  Nested blocks restore only what they changed: the
    outermost one that found the collector enabled enables it again.
    """

    __slots__ = ("_was_enabled",)

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info) -> None:
        if self._was_enabled:
            gc.enable()
