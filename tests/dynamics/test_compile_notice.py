"""The one-line notice before numba compiles the kernels on the first use after install."""

import logging
import os

from mbcompose.dynamics import compiled, dispatch


def test_cache_is_cold_only_for_a_writable_cache_without_entry_points(tmp_path, monkeypatch):
    cache = tmp_path / "__pycache__"
    assert compiled.cache_is_cold(cache)               # not there yet, its parent writable
    cache.mkdir()
    (cache / "tree_kernels.crba-140.py311.nbi").write_bytes(b"")
    assert compiled.cache_is_cold(cache)               # other modules' files do not count
    (cache / "entry_kernels.rnea-46.py311.nbi").write_bytes(b"")
    assert not compiled.cache_is_cold(cache)
    assert compiled.cache_is_cold(cache, module="closed_kernels")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert not compiled.cache_is_cold()                # numba caches elsewhere: nothing known
    if os.geteuid() != 0:                              # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        assert not compiled.cache_is_cold(ro / "__pycache__")


class _Terminal:
    def __init__(self, tty):
        self.tty = tty

    def isatty(self):
        return self.tty

    def write(self, text):
        pass


def test_notice_only_on_a_terminal_with_a_cold_cache(monkeypatch, caplog):
    monkeypatch.setattr(dispatch, "cache_is_cold", lambda module="entry_kernels": True)
    for tty, expected in ((False, 0), (True, 1)):
        caplog.clear()
        monkeypatch.setattr(dispatch.sys, "stderr", _Terminal(tty))
        with caplog.at_level(logging.WARNING, logger=dispatch.log.name):
            dispatch._say_if_compiling("entry_kernels")
        assert len([r for r in caplog.records if "compiling the dynamics kernels" in r.message]) == expected
    monkeypatch.setattr(dispatch, "cache_is_cold", lambda module="entry_kernels": False)
    caplog.clear()
    dispatch._say_if_compiling("closed_kernels")
    assert not caplog.records
