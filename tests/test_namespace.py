"""The installed package: one top-level import name, independent of the working directory."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

SEEKER = Path(__file__).resolve().parents[1] / "samples" / "seeker" / "seeker.yaml"
FOLDERS = ("composer", "parsers", "graph", "dynamics")


def _run(code_or_args, cwd):
    args = ["-c", code_or_args] if isinstance(code_or_args, str) else code_or_args
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_distribution_installs_only_the_mbcompose_top_level_name():
    top = importlib.metadata.distribution("mbcompose").read_text("top_level.txt")
    assert top.split() == ["mbcompose"]


def test_modules_named_like_the_folders_in_the_working_directory_change_nothing(tmp_path):
    for name in FOLDERS:
        (tmp_path / f"{name}.py").write_text(f"raise SystemExit('the user module {name}.py was imported')\n")
    out = _run(f"import mbcompose; c = mbcompose.compose({str(SEEKER)!r}); print(c.model.nv)", tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2"]


def test_python_dash_m_mbcompose_runs_the_command_line(tmp_path):
    out = _run(["-m", "mbcompose", "--help"], tmp_path)
    assert out.returncode == 0, out.stderr
    for command in ("run", "convert", "inspect", "graph", "simulate", "eval"):
        assert command in out.stdout


def test_import_mbcompose_loads_no_subpackage_and_compiles_nothing(tmp_path):
    code = ("import sys, mbcompose; "
            "print(sorted(m for m in sys.modules if m.startswith(('mbcompose.', 'numba'))))")
    out = _run(code, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_composing_a_tree_imports_no_numba(tmp_path):
    """numba is imported on first use of a compiled kernel, not by building a model (the CLI's start-up and the
    compose benchmark pay for it otherwise)."""
    code = ("import sys, mbcompose; c = mbcompose.compose(%r); c.joint_properties; "
            "print(sorted(m for m in sys.modules if m.startswith('numba')))" % str(SEEKER))
    out = _run(code, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
