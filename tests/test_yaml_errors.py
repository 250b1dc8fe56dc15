"""Malformed YAML assemblies: one-line error with file and line, exit code 2, nothing written.

Each file in tests/data/malformed/ starts with ``# expect: LINE: TEXT``: the
line the error must point at and a fragment of the message.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mbcompose.composer.cli.commands import main
from mbcompose.parsers import InputError, read_assembly

DATA = Path(__file__).parent / "data" / "malformed"
CASES = sorted(DATA.glob("*.yaml"))


def expectation(path: Path) -> tuple[int, str]:
    first = path.read_text().splitlines()[0]
    m = re.match(r"# expect: (\d+): (.+)", first)
    assert m, f"{path.name} lacks its '# expect: LINE: TEXT' header"
    return int(m.group(1)), m.group(2)


def test_there_are_at_least_fifteen_distinct_malformed_files():
    assert len(CASES) >= 15


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_reader_raises_input_error_at_the_right_line(path):
    line, fragment = expectation(path)
    with pytest.raises(InputError) as info:
        read_assembly(path)
    assert info.value.file == str(path)
    assert info.value.line == line, str(info.value)
    assert fragment in info.value.message


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_cli_prints_one_line_exits_2_and_writes_nothing(path, tmp_path):
    line, fragment = expectation(path)
    work = tmp_path / "work"
    shutil.copytree(DATA, work)
    before = sorted(p.name for p in work.rglob("*"))
    target = work / path.name
    result = CliRunner().invoke(main, ["inspect", str(target)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines() if hasattr(result, "stderr") else result.output.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {target}:{line}: "), lines[0]
    assert fragment in lines[0]
    assert "Traceback" not in result.output
    assert sorted(p.name for p in work.rglob("*")) == before


def test_real_process_exit_code_and_single_line(tmp_path):
    path = DATA / "unknown_body_in_joint.yaml"
    exe = shutil.which("mbcompose") or str(Path(sys.executable).parent / "mbcompose")
    proc = subprocess.run([exe, "inspect", str(path)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip() == f"error: {path}:9: joints[0].secondary: unknown body 'arm' in joint 'j1'"
    assert os.listdir(tmp_path) == []


def test_missing_file_is_a_one_line_error(tmp_path):
    result = CliRunner().invoke(main, ["inspect", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert "file not found" in result.output
