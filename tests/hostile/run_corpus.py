"""Run corpus cases in one process: ``python run_corpus.py CORPUS_DIR [FIRST LAST]``.

Each case runs the ``mbcompose`` command line in-process (``main(argv)``,
exit status from SystemExit) inside its folder, with stdout and stderr
captured, a 10 s alarm, and a snapshot of the case folder and of
``CORPUS_DIR/outside`` before and after.  One JSON object per case is printed:
name, status, stderr, seconds, peak RSS so far (MiB), and the files created,
changed or deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import signal
import stat
import sys
import time
from pathlib import Path


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def snapshot(folder: Path) -> dict[str, str]:
    """relative path -> kind and content hash (links and special files are not followed)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                if st.st_size > 50_000_000:
                    sig = f"big:{st.st_size}:{st.st_mtime_ns}"
                else:
                    sig = "file:" + hashlib.sha1(p.read_bytes()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                sig = "link:" + os.readlink(p)
            else:
                sig = f"mode:{stat.S_IFMT(st.st_mode)}"
            out[str(p.relative_to(folder))] = sig
    return out


def run_case(case: dict, root: Path) -> dict:
    from mbcompose.composer.cli.commands import main

    folder = root / "cases" / case["name"]
    before = snapshot(folder), snapshot(root / "outside")
    out, err = io.StringIO(), io.StringIO()
    for h in list(logging.getLogger().handlers):
        logging.getLogger().removeHandler(h)
    cwd = os.getcwd()
    os.chdir(folder)
    status = None
    t0 = time.perf_counter()
    signal.alarm(10)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(case["argv"], prog_name="mbcompose")
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
    except _Timeout:
        status = "timeout"
    finally:
        signal.alarm(0)
        os.chdir(cwd)
    seconds = time.perf_counter() - t0
    after = snapshot(folder), snapshot(root / "outside")
    changed = sorted({k for a, b in zip(before, after) for k in set(a) | set(b) if a.get(k) != b.get(k)})
    rss = _peak_mib()
    return {"name": case["name"], "status": status, "stderr": err.getvalue(), "seconds": seconds,
            "rss_mib": rss, "changed": changed}



def _peak_mib() -> float:
    """This process's peak resident memory (``VmHWM``); ``ru_maxrss`` would carry over the peak of the
    pytest process that started it (Linux keeps it through vfork and exec)."""
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024

def main(argv: list[str]) -> None:
    root = Path(argv[0]).resolve()
    cases = json.loads((root / "cases.json").read_text(encoding="utf-8"))
    if len(argv) == 3:
        cases = cases[int(argv[1]):int(argv[2])]
    signal.signal(signal.SIGALRM, _alarm)
    import mbcompose.composer.cli.commands  # noqa: F401  (imports are not counted in the first case's time)

    for case in cases:
        print(json.dumps(run_case(case, root)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
