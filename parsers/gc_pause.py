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

import contextlib
import gc


@contextlib.contextmanager
def paused_gc():
    """Disable the cyclic garbage collector inside the block (then restore its state)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
