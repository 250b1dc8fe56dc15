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

First use (:func:`cache_is_ready`, :func:`compile_in_background`): a process that finds the cache
without :data:`READY` (the marker the last step of a complete fill writes) can run the numpy reference
and leave the compilation to one detached process (:func:`warm_up`, started at most once at a time:
the lock file :data:`LOCK` in the cache folder, created exclusively, names its owner's pid).  That
process compiles the kernel modules of :data:`MODULES` into the cache (numba writes each file by an
atomic rename) and then writes :data:`READY`, so a reader never takes a half-filled cache for a
ready one; a failed compilation is logged to ``compile.log`` beside the lock and leaves no marker.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

__all__ = ["CACHE_DIR", "CONSTANTS", "MODULES", "READY", "LOCK", "source_hash", "cache_directory", "cache_is_cold",
           "install_folder", "cache_is_ready", "compile_in_background", "compiling", "warm_up"]

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
    (``cache``, default :data:`CACHE_DIR`) holds nothing of ``module`` for this install yet (``entry_kernels``: the tree
    kernels; ``closed_kernels``: the closed chains'), or cannot be written (then every process
    compiles).  The first use after an install or an edit of a kernel module compiles: about a
    minute of CPU (see the README).  Imports no numba."""
    cache = CACHE_DIR if cache is None else Path(cache)
    if not writable(cache):
        return True
    folder = install_folder(cache)
    return not folder.is_dir() or next(folder.glob(f"{module}.*.nbi"), None) is None


def writable(folder: Path) -> bool:
    """True when ``folder`` exists and can be written, or can be created (its nearest existing
    ancestor can be written)."""
    for parent in (folder, *folder.parents):
        if parent.exists():
            return parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)
    return False


#: the kernel modules :func:`warm_up` fills the cache with: the tree entries, the tree's fixed-step
#: simulator and the closed chains' forward dynamics (compiled for its one signature on import); the
#: closed chains' loop closure and fixed-step loop (``closure_kernels``) compile on their first call
MODULES = ("entry_kernels", "simulate_kernels", "closed_kernels")
#: the folder of this install's kernel modules, as numba's cache locator spells it (absolute, not resolved)
_SOURCE_FOLDER = os.path.dirname(os.path.abspath(__file__))
#: file of the cache folder written (atomically, last) when :func:`warm_up` has compiled every module of
#: this install: numba keeps each install's machine code apart (:func:`install_folder`), so the marker is
#: per install too (a second venv or clone of the same version finds no marker and compiles in the
#: background with its notice instead of in the foreground without one)
READY = "ready-" + hashlib.sha1(_SOURCE_FOLDER.encode()).hexdigest()[:12]


def install_folder(cache: Path | None = None) -> Path:
    """numba's folder for this install's kernels inside ``cache`` (default :data:`CACHE_DIR`): numba's
    cache locator names it ``<source folder name>_<SHA-1 of the source folder's absolute path>``
    (``numba.core.caching._CacheLocator.get_suitable_cache_subpath``)."""
    cache = CACHE_DIR if cache is None else Path(cache)
    return cache / f"{os.path.basename(_SOURCE_FOLDER)}_{hashlib.sha1(_SOURCE_FOLDER.encode()).hexdigest()}"
#: lock file of the cache folder while a background compilation runs (its content: the owner's pid)
LOCK = "compile.lock"
#: a lock older than this (s) is stale whatever its pid says (a compilation takes minutes, not an hour)
LOCK_STALE = 3600.0


def cache_is_ready(cache: Path | None = None) -> bool:
    """True when :func:`warm_up` completed in ``cache`` (default :data:`CACHE_DIR`): every kernel a
    command calls loads from the cache.  Imports no numba."""
    return ((CACHE_DIR if cache is None else Path(cache)) / READY).is_file()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def compiling(cache: Path | None = None) -> bool:
    """True while a background compilation holds the lock of ``cache`` (a live pid, younger than
    :data:`LOCK_STALE`); a stale lock is removed."""
    lock = (CACHE_DIR if cache is None else Path(cache)) / LOCK
    try:
        pid, age = int(lock.read_text().strip() or 0), time.time() - lock.stat().st_mtime
    except (OSError, ValueError):
        return lock.exists()          # being written this instant: taken
    if (pid and _alive(pid) and age < LOCK_STALE) or (not pid and age < 60.0):   # no pid yet: being started
        return True
    lock.unlink(missing_ok=True)
    return False


def _take_lock(cache: Path) -> int | None:
    """Create the lock of ``cache`` exclusively (O_EXCL: of two processes one wins); its descriptor or None."""
    if compiling(cache):
        return None
    try:
        cache.mkdir(parents=True, exist_ok=True)
        return os.open(cache / LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError:
        return None


def compile_in_background(cache: Path | None = None) -> bool:
    """Start :func:`warm_up` in a detached process (its own session, no terminal, stdin and stdout
    closed; stderr to ``compile.log`` in the cache folder) unless the cache is ready, cannot be
    written, or another compilation holds its lock.  True when one was started.  Imports no numba."""
    cache = CACHE_DIR if cache is None else Path(cache)
    if cache_is_ready(cache) or not writable(cache):
        return False
    fd = _take_lock(cache)
    if fd is None:
        return False
    try:
        with open(cache / "compile.log", "ab") as err:
            child = subprocess.Popen([sys.executable, "-P", "-c", f"from {__name__} import _main; _main()", str(cache)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                     start_new_session=True, close_fds=True, env=_child_environment(cache))
        os.write(fd, str(child.pid).encode())
    except OSError as exc:
        log.warning("could not start the background compilation of the dynamics kernels: %s", exc)
        os.close(fd)
        (cache / LOCK).unlink(missing_ok=True)
        return False
    os.close(fd)
    return True


def _child_environment(cache: Path) -> dict:
    """The environment of the background compilation: this one, the kernels' cache pinned to ``cache``
    (the child computes the same folder from the same sources and checks it), no process backend."""
    env = dict(os.environ)
    env.pop("MBCOMPOSE_BACKEND", None)
    return env


def warm_up() -> None:
    """Compile (or load) the kernels of :data:`MODULES` for the argument types the public functions
    pass (on a small tree with every joint kind, one configuration and a batch, the fixed-step
    simulator with a joint stop): what the commands call on trees."""
    import importlib

    import numpy as np

    from .. import dispatch
    from ..joints import JOINTS
    from ..model import BodySpec, build_model
    from . import api, simulate_api

    dyn = importlib.import_module(__name__.rsplit(".", 1)[0])      # mbcompose.dynamics

    with dispatch.backend("compiled"):
        # a free root, then one joint of every other type with its own motion model (JOINTS' moves_as)
        kinds = ("free", *(t for t, j in JOINTS.items() if j.nv and j.moves_as == t and t != "free"))
        eye = np.eye(3)
        bodies = [BodySpec(f"b{k}", k - 1, kind, f"j{k}", eye, np.array([0, 0, 0.1]), 1.0, np.array([0, 0, 0.05]),
                           0.01 * eye, axis=(0, 1, 0), axis2=(1, 0, 0) if kind == "universal" else None)
                  for k, kind in enumerate(kinds)]
        m = build_model(bodies)
        q, v = m.neutral(), np.full(m.nv, 0.1)
        qb, vb = np.tile(q, (3, 1)), np.tile(v, (3, 1))
        for x, y in ((q, v), (qb, vb)):
            dyn.inverse_dynamics(m, x, y, y), dyn.forward_dynamics(m, x, y, y), dyn.mass_matrix(m, x)
            dyn.bias_forces(m, x, y), dyn.gravity_forces(m, x), dyn.mass_matrix_inverse(m, x)
            dyn.mass_matrix_logdet(m, x), dyn.mass_matrix_det(m, x), dyn.jacobian(m, x, m.n_bodies - 1)
        api.body_poses(m, q)
        lower, upper = np.full(m.nv, -np.inf), np.full(m.nv, np.inf)
        lower[6], upper[6] = -0.5, 0.5
        for method in ("rk4", "euler"):
            simulate_api.simulate_fixed_step(m, q, v, 1e-3, 2, method, lower=lower, upper=upper)
    importlib.import_module(f"{__name__}.closed_kernels")        # its one signature compiles on import


def _main() -> None:
    """The background compilation (:func:`compile_in_background`): :func:`warm_up`, then the
    :data:`READY` marker written by an atomic rename; the lock removed whatever happens; a failure
    logged to ``compile.log`` (stderr) and exit status 1, never a marker."""
    cache = Path(sys.argv[1])
    logging.basicConfig(format="%(asctime)s mbcompose background compile: %(message)s")
    status = 1
    try:
        if cache != CACHE_DIR:
            raise RuntimeError(f"the sources changed since the compilation was asked for ({cache} != {CACHE_DIR})")
        started = time.perf_counter()
        warm_up()
        marker = cache / f"{READY}.{os.getpid()}"
        marker.write_text(f"compiled in {time.perf_counter() - started:.1f} s\n")
        os.replace(marker, cache / READY)
        status = 0
    except BaseException:           # noqa: BLE001 -- the whole failure goes to the log, never to a user's run
        log.exception("compiling the dynamics kernels failed; the commands keep using the numpy path")
    finally:
        (cache / LOCK).unlink(missing_ok=True)
    sys.exit(status)
