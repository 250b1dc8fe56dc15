"""The compiled cache: keyed by the kernels' source, found warm by a fresh process; the one-line notice
before numba compiles the kernels in the process (the first use after an install or an edit of a kernel
module, without the CLI's background compilation: tests/dynamics/test_first_use.py)."""

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mbcompose.dynamics import compiled, dispatch


def test_the_cache_directory_is_named_after_the_source_of_every_kernel_module_and_numbas_version(tmp_path):
    source = Path(compiled.__file__).parent
    copy = tmp_path / "compiled"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
    tolerances = tmp_path / "tolerances.py"
    shutil.copy(compiled.CONSTANTS[0], tolerances)
    digest = compiled.source_hash(copy, constants=[tolerances])
    assert digest == compiled.source_hash(source) == compiled.CACHE_DIR.name
    for module in (copy / "tree_kernels.py", copy / "fields.py", copy / "layout.py", tolerances):
        text = module.read_text()                       # a kernel, its views, their tables, constants it reads
        module.write_text(text + "\n# an edit\n")
        assert compiled.source_hash(copy, constants=[tolerances]) != digest, module.name
        module.write_text(text)
    assert compiled.source_hash(copy, constants=[tolerances]) == digest
    assert compiled.source_hash(copy, numba_version="0.0.0", constants=[tolerances]) != digest


def test_the_cache_directory_follows_the_users_settings(tmp_path):
    assert compiled.cache_directory("abc", {"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "mbcompose" / "numba" / "abc"
    user = tmp_path / "numba-cache"
    assert compiled.cache_directory("abc", {"XDG_CACHE_HOME": str(tmp_path), "NUMBA_CACHE_DIR": str(user)}) == \
        user / "mbcompose-abc"
    assert compiled.cache_directory("abc", {}) == Path.home() / ".cache" / "mbcompose" / "numba" / "abc"


PROBE = """
import numba, numpy as np
from mbcompose.dynamics import compiled
from mbcompose.dynamics.compiled import spatial_kernels as sk
D = np.diag([2.0, 4.0]).reshape(1, 2, 2).copy()
assert abs(sk.invert_spd(D, 0, 2) - np.log(8.0)) < 1e-15
stats = sk.invert_spd.stats
print(compiled.CACHE_DIR, sum(stats.cache_hits.values()), sum(stats.cache_misses.values()),
      compiled.cache_is_cold(module="spatial_kernels"), repr(numba.core.config.CACHE_DIR))
"""


def run_probe(env):
    out = subprocess.run([sys.executable, "-P", "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    folder, hits, misses, cold, numba_dir = out.stdout.split()
    return Path(folder), int(hits), int(misses), cold == "True", numba_dir


def test_a_fresh_process_with_the_same_sources_finds_the_cache_warm_even_with_numba_imported_first(tmp_path):
    """numba is imported before the kernels (the probe's first line): their machine code still goes to
    the directory named after their source, numba's own setting is left as it was, and a second
    process loads the kernel from there instead of compiling it."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    expected = tmp_path / "mbcompose" / "numba" / compiled.CACHE_DIR.name
    first, second = run_probe(env), run_probe(env)
    assert first == (expected, 0, 1, False, "''")          # compiled, written, numba's own directory unset
    assert second == (expected, 1, 0, False, "''")         # loaded from the cache
    assert next(expected.rglob("spatial_kernels.invert_spd-*.nbi"), None) is not None
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "user")
    folder, hits, misses, cold, numba_dir = run_probe(env)
    assert folder == tmp_path / "user" / f"mbcompose-{compiled.CACHE_DIR.name}" and misses == 1
    assert numba_dir == repr(str(tmp_path / "user"))      # the user's setting, for other numba code


def test_cache_is_cold_until_the_cache_holds_the_module(tmp_path):
    cache = tmp_path / "hash"
    assert compiled.cache_is_cold(cache)               # not there yet, its parent writable
    other = cache / "compiled_0123"                    # another install's folder (numba's: one per source directory)
    other.mkdir(parents=True)
    (other / "entry_kernels.rnea-46.py311.nbi").write_bytes(b"")
    assert compiled.cache_is_cold(cache)               # another install's kernels do not count
    ours = compiled.install_folder(cache)
    ours.mkdir()
    (ours / "tree_kernels.crba-140.py311.nbi").write_bytes(b"")
    assert compiled.cache_is_cold(cache)               # other modules' files do not count
    (ours / "entry_kernels.rnea-46.py311.nbi").write_bytes(b"")
    assert not compiled.cache_is_cold(cache)
    assert compiled.cache_is_cold(cache, module="closed_kernels")
    if os.geteuid() != 0:                              # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        assert compiled.cache_is_cold(ro / "hash")     # nothing can be kept: every process compiles


def test_the_compile_notice_shows_whatever_stderr_is_and_only_with_a_cold_cache(monkeypatch, caplog):
    """Issue 27: the notice showed only on a terminal; a log file or a pipe got a minute of silence."""
    monkeypatch.setattr(dispatch, "cache_is_cold", lambda module="entry_kernels": True)
    with caplog.at_level(logging.WARNING, logger=dispatch.log.name):
        dispatch._say_if_compiling("entry_kernels")
    assert len([r for r in caplog.records if "compiling the dynamics kernels" in r.message]) == 1
    monkeypatch.setattr(dispatch, "cache_is_cold", lambda module="entry_kernels": False)
    caplog.clear()
    dispatch._say_if_compiling("closed_kernels")
    assert not caplog.records
