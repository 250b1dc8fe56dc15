"""Atomic outputs: complete files or none, inputs never overwritten."""

from pathlib import Path

import pytest

from mbcompose.composer.outputs import OutputSet, atomic_write, atomic_write_text
from mbcompose.parsers import InputError

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def test_atomic_write_text_creates_the_file_with_the_content(tmp_path):
    target = tmp_path / "sub" / "a.txt"
    with pytest.raises(InputError, match="output folder does not exist"):
        atomic_write_text(target, "hello")
    assert not target.parent.exists()
    atomic_write_text(target, "hello", create_dirs=True)
    assert target.read_text() == "hello"
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.txt"]


def test_a_failing_writer_leaves_neither_target_nor_temporary_file(tmp_path):
    target = tmp_path / "a.txt"

    def half_then_fail(p):
        p.write_text("half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        atomic_write(target, half_then_fail)
    assert list(tmp_path.iterdir()) == []


def test_a_failing_writer_keeps_the_previous_version(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        atomic_write(target, lambda p: (_ for _ in ()).throw(RuntimeError("x")))
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_output_set_publishes_all_files_only_at_the_end(tmp_path):
    with OutputSet() as out:
        out.add_text(tmp_path / "a.txt", "a")
        out.add_text(tmp_path / "b.txt", "b")
        assert not (tmp_path / "a.txt").exists()
    assert (tmp_path / "a.txt").read_text() == "a"
    assert (tmp_path / "b.txt").read_text() == "b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_an_exception_mid_run_discards_every_staged_file(tmp_path):
    with pytest.raises(KeyError):
        with OutputSet() as out:
            out.add_text(tmp_path / "a.txt", "a")
            raise KeyError("stage failed")
    assert list(tmp_path.iterdir()) == []


def test_inputs_are_never_overwritten(tmp_path):
    src = tmp_path / "in.yaml"
    src.write_text("bodies: []")
    with pytest.raises(InputError, match="refusing to overwrite the input"):
        atomic_write_text(src, "x", inputs=[src])
    assert src.read_text() == "bodies: []"


def test_an_output_folder_that_takes_no_file_fails_before_any_work(tmp_path):
    """A folder where no file can be created (procfs refuses new files, even to root) is found before
    the pipeline reads its input or the CLI simulates: exit 2, one line naming the folder."""
    import subprocess
    import sys

    if not Path("/proc/self").is_dir():
        pytest.skip("no procfs")
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(f"input: {SAMPLES / 'fourbar' / 'fourbar.yaml'}\noutputs:\n  directory: /proc/mbx\n"
                        "  simulation: {duration: 1000}\n")
    for args in (["run", str(pipeline)],
                 ["simulate", str(SAMPLES / "fourbar" / "fourbar.yaml"), "-o", "/proc/x.csv", "--duration", "1000"]):
        out = subprocess.run([sys.executable, "-P", "-m", "mbcompose", *args], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 2 and out.stderr.startswith("error: /proc: cannot write output"), out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
