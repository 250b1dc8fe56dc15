"""Compiled (numba) backend of the rigid-body tree algorithms.

``layout`` flattens an ``SKOModel`` into arrays once and holds the ``Data`` work
arrays; ``spatial_kernels``, ``tree_kernels`` (RNEA, CRBA, ABA), ``factor_kernels``
(innovations factors, M^-1, log det M, kinematics, Jacobians) and ``entry_kernels``
(the entry points, ``prange`` batches) are the kernels; ``api`` checks arguments and dispatches single
configurations and batches.  The public functions of :mod:`mbcompose.dynamics` call
``api``; the numpy modules (:mod:`dynamics.rnea` ...) stay the reference.

Importing this package compiles nothing; numba compiles each kernel on its first call
(``cache=True``: later processes load the machine code from the on-disk cache).
``simulate_kernels`` runs a whole fixed-step simulation (RK4 on the joint groups or
semi-implicit Euler) in one kernel.  ``closed_kernels`` and ``closed_api`` are the forward
dynamics of constraint-embedded closed chains (the ``embedded`` row of the dispatch table);
``closure_kernels`` their loop closure (Newton), velocity completion and fixed-step loop.

Development note: numba checks only the source file of the function it was asked to
compile (here ``entry_kernels.py``) against its cache, not the modules that function
calls.  After editing ``spatial_kernels``, ``tree_kernels``, ``factor_kernels``,
``simulate_kernels``, ``entry_kernels`` (which ``closed_kernels`` calls) or ``closed_kernels``
(which ``closure_kernels`` calls) in a checkout, delete
``dynamics/compiled/__pycache__/*.nb[ic]`` (an install writes every file anew, so it does
not keep stale machine code).
"""

import os
from pathlib import Path

from .layout import Data, FlatModel, flat_model

__all__ = ["Data", "FlatModel", "flat_model", "cache_is_cold"]


def cache_is_cold(cache: Path | None = None, module: str = "entry_kernels") -> bool:
    """True when numba's on-disk cache beside these modules (``__pycache__``, or ``cache``) can be
    written and holds nothing of ``module`` yet (``entry_kernels``: the tree kernels;
    ``closed_kernels``: the closed chains'): the next call compiles (the first use after install,
    about a minute of CPU, see the README).  False when it holds some, and when numba keeps its
    cache elsewhere (``NUMBA_CACHE_DIR``, a read-only install): then nothing is known.
    Imports no numba."""
    if cache is None:
        if os.environ.get("NUMBA_CACHE_DIR"):
            return False
        cache = Path(__file__).parent / "__pycache__"
    if not os.access(cache if cache.is_dir() else cache.parent, os.W_OK):
        return False
    return not cache.is_dir() or next(cache.glob(f"{module}.*.nbi"), None) is None
