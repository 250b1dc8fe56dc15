"""Compiled (numba) backend of the rigid-body tree algorithms and of constraint-embedded closed chains.

``layout`` flattens an ``SKOModel`` into two packed arrays once and holds the ``Data`` work
array, every array a table of named fields (field -> shape, written once); ``fields`` gives the
kernels those fields as named tuples (``m.parent``, ``w.P``), ``spatial_kernels``,
``tree_kernels`` (RNEA, CRBA, ABA), ``factor_kernels`` (innovations factors, M^-1, log det M,
kinematics, Jacobians) and ``entry_kernels`` (the entry points, ``prange`` batches) are the
kernels; ``api`` checks arguments and dispatches single configurations and batches.  The public
functions of :mod:`mbcompose.dynamics` call ``api``; the numpy modules (:mod:`dynamics.rnea` ...)
stay the reference.  ``simulate_kernels`` runs a whole fixed-step simulation in one kernel.
``closed_layout``, ``closed_kernels`` and ``closed_api`` are the forward dynamics of
constraint-embedded closed chains (the ``embedded`` row of the dispatch table);
``closure_kernels`` their loop closure (Newton), velocity completion and fixed-step loop.
``jit`` is the one module that uses numba beyond its documented decorator options.

Importing this package imports no numba and compiles nothing; numba compiles each kernel on its
first call and keeps the machine code in an on-disk cache for later processes.  That cache is
keyed by the kernels' source: its directory, :data:`CACHE_DIR`, is named after a hash of every
``dynamics/compiled/*.py`` module, of ``dynamics/tolerances.py`` (constants the kernels read) and
of numba's version (numba itself checks only the source file of the function it compiles, not the
modules that function calls), so an edited kernel module can never load machine code compiled
from its old text.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["CACHE_DIR", "CONSTANTS", "source_hash", "cache_directory", "cache_is_cold"]

log = logging.getLogger(__name__)


#: modules outside this package whose constants the kernels read when numba compiles them (numba
#: freezes a global into the machine code): part of the cache's key
CONSTANTS = (Path(__file__).parent.parent / "tolerances.py",)


def source_hash(folder: Path | None = None, numba_version: str | None = None, constants=CONSTANTS) -> str:
    """16 hex digits of the SHA-256 of every ``*.py`` module of ``folder`` (default: this package) and of
    the ``constants`` modules (default :data:`CONSTANTS`), name and text, and of numba's version (read
    from its installed metadata: imports no numba)."""
    folder = Path(__file__).parent if folder is None else Path(folder)
    if numba_version is None:
        try:
            numba_version = metadata.version("numba")
        except metadata.PackageNotFoundError:
            numba_version = "unknown"
    h = hashlib.sha256(f"numba {numba_version}\n".encode())
    for path in [*sorted(folder.glob("*.py")), *map(Path, constants)]:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_directory(digest: str | None = None, environ=None) -> Path:
    """Where numba keeps the machine code of these kernels: ``$NUMBA_CACHE_DIR/mbcompose-<hash>`` when
    the user set ``NUMBA_CACHE_DIR``, else ``<user cache dir>/mbcompose/numba/<hash>`` (the user cache
    dir: ``$XDG_CACHE_HOME``, else ``~/.cache``; ``%LOCALAPPDATA%`` on Windows); ``<hash>`` is
    :func:`source_hash`."""
    environ = os.environ if environ is None else environ
    digest = source_hash() if digest is None else digest
    if environ.get("NUMBA_CACHE_DIR"):
        return Path(environ["NUMBA_CACHE_DIR"]) / f"mbcompose-{digest}"
    if sys.platform == "win32" and environ.get("LOCALAPPDATA"):
        root = Path(environ["LOCALAPPDATA"])
    else:
        root = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "mbcompose" / "numba" / digest


#: the directory of numba's on-disk cache for the kernels of this package (see :func:`cache_directory`);
#: :mod:`dynamics.compiled.jit` points numba at it for these kernels only, whether or not numba was
#: imported before this package.
CACHE_DIR = cache_directory()


def cache_is_cold(cache: Path | None = None, module: str = "entry_kernels") -> bool:
    """True when the next call of a kernel of ``module`` compiles it: numba's cache for these kernels
    (``cache``, default :data:`CACHE_DIR`) holds nothing of ``module`` yet (``entry_kernels``: the tree
    kernels; ``closed_kernels``: the closed chains'), or cannot be written (then every process
    compiles).  The first use after an install or an edit of a kernel module compiles: about a
    minute of CPU (see the README).  Imports no numba."""
    cache = CACHE_DIR if cache is None else Path(cache)
    if not writable(cache):
        return True
    return not cache.is_dir() or next(cache.rglob(f"{module}.*.nbi"), None) is None


def writable(folder: Path) -> bool:
    """True when ``folder`` exists and can be written, or can be created (its nearest existing
    ancestor can be written)."""
    for parent in (folder, *folder.parents):
        if parent.exists():
            return parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)
    return False
