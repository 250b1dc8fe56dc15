"""Every code block of README.md and docs/ runs in a test as written, or is marked as a fragment (issue 27,
must-show 4: docs that fail verbatim).

A block is one of:

* run by another test: README's ``python`` blocks (``test_readme_examples.py``), the ``yaml`` examples of
  ``docs/pipeline-format.md`` and the first of ``docs/assembly-format.md`` (``test_docs_examples.py``),
  ``docs/workbench.md``'s ``python`` blocks (``dynamics/test_workbench_core.py``);
* run here: the ``python`` blocks of the other pages, in order, in one namespace per page, from the
  repository's root (the paths in them are the repository's); the blocks of ``mbcompose`` command lines,
  each line through the CLI in a folder where ``samples/`` is the repository's, exit code 0 and the files
  the line's comment names written;
* a fragment: the line before its opening fence is ``<!-- fragment: why -->`` (invisible in a rendered page;
  ``mbcompose docs`` drops it).  Fragments are still checked where they can be: a synopsis of
  ``mbcompose`` commands against each command's ``--help`` (every command and option it names exists), the
  benchmark list against the scripts, the set-up block against ``.ci/run``, the forces section of the
  assembly format appended to its first example, the limits example's keys against the limit names.

A new block that none of these covers fails :func:`test_every_block_is_run_or_marked_as_a_fragment`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from mbcompose.composer.cli.commands import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))

#: (page, language) of blocks another test runs: that test
RUN_ELSEWHERE = {("README.md", "python"): "tests/test_readme_examples.py",
                 ("docs/pipeline-format.md", "yaml"): "tests/test_docs_examples.py",
                 ("docs/assembly-format.md", "yaml"): "tests/test_docs_examples.py",
                 ("docs/workbench.md", "python"): "tests/dynamics/test_workbench_core.py"}


@dataclass(frozen=True)
class Block:
    page: str
    line: int              # of the opening fence, 1-based
    lang: str
    text: str
    fragment: str | None   # the marker's reason, None when the block is meant to run

    def __str__(self):
        return f"{self.page}:{self.line} ({self.lang or 'plain'})"


def blocks(page: str) -> list[Block]:
    """The fenced blocks of ``page`` in order."""
    lines = (ROOT / page).read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = next(k for k in range(i + 1, len(lines)) if lines[k].startswith("```"))
            marker = re.fullmatch(r"<!-- fragment: (.+) -->", lines[i - 1].strip()) if i else None
            out.append(Block(page, i + 1, lines[i][3:].strip(), "\n".join(lines[i + 1:j]) + "\n",
                             marker.group(1) if marker else None))
            i = j
        i += 1
    return out


ALL = [b for page in PAGES for b in blocks(page)]


def is_command_block(b: Block) -> bool:
    code = [ln for ln in b.text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return b.lang in ("", "bash", "sh") and bool(code) and all(ln.startswith("mbcompose ") for ln in code)


def test_every_block_is_run_or_marked_as_a_fragment():
    unhandled = [str(b) for b in ALL if b.fragment is None and (b.page, b.lang) not in RUN_ELSEWHERE
                 and b.lang != "python" and not is_command_block(b)]
    assert not unhandled, f"code blocks neither run by a test nor marked '<!-- fragment: why -->': {unhandled}"
    assert len(ALL) >= 25 and sum(b.fragment is None for b in ALL) >= 10      # the parser finds them


def test_the_tests_that_run_blocks_elsewhere_exist():
    for (page, lang), test in RUN_ELSEWHERE.items():
        assert any(b.page == page and b.lang == lang for b in ALL), (page, lang)
        assert page.split("/")[-1] in (ROOT / test).read_text(encoding="utf-8"), test


# -- python blocks --------------------------------------------------------------------------------------------

PYTHON_PAGES = sorted({b.page for b in ALL if b.lang == "python" and b.fragment is None
                       and (b.page, "python") not in RUN_ELSEWHERE})


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_the_python_blocks_of_a_page_run_as_written(page, monkeypatch):
    if page == "docs/codegen.md":
        from mbcompose.dynamics.codegen import CodegenUnavailable, compiler
        try:
            compiler()
            import cffi  # noqa: F401
        except (CodegenUnavailable, ImportError) as exc:
            pytest.skip(f"the codegen backend is unavailable: {exc}")
    monkeypatch.chdir(ROOT)
    ns: dict = {}
    code = "\n".join(b.text for b in ALL if b.page == page and b.lang == "python" and b.fragment is None)
    exec(compile(code, page, "exec"), ns)
    if page == "docs/codegen.md":     # the generated C against the numpy path, as its comment promises
        import numpy as np
        from mbcompose import dynamics
        np.testing.assert_allclose(ns["qdd"], dynamics.forward_dynamics(ns["model"], ns["q"], ns["v"], ns["tau"]),
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ns["M"], dynamics.mass_matrix(ns["model"], ns["q"]), rtol=1e-10, atol=1e-15)


# -- command blocks -------------------------------------------------------------------------------------------

COMMAND_LINES = [(b, ln) for b in ALL if b.fragment is None and is_command_block(b)
                 for ln in b.text.splitlines() if ln.startswith("mbcompose ")]


@pytest.mark.slow
@pytest.mark.parametrize("block,line", COMMAND_LINES, ids=[f"{b}:{ln.split('#')[0].strip()}" for b, ln in
                                                           COMMAND_LINES])
def test_each_command_line_of_the_docs_runs_and_writes_what_it_says(block, line, tmp_path, monkeypatch):
    (tmp_path / "samples").symlink_to(ROOT / "samples", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    command, _, comment = line.partition("  #")
    args = shlex.split(command)[1:]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, (str(block), line, r.output)
    for name in re.findall(r"\bout/[\w./]+\.\w+", comment):
        assert (tmp_path / name.rstrip(".")).is_file(), (line, name)
    for out in (a for k, a in enumerate(args) if k and args[k - 1] == "-o" and "." in Path(a).name):
        assert (tmp_path / out).is_file(), (line, out)


# -- fragments, checked where they can be ---------------------------------------------------------------------

def synopsis_commands(text: str) -> dict[str, set[str]]:
    """{command: options} of a synopsis block (continuation lines belong to the command above)."""
    out: dict[str, set[str]] = {}
    command = None
    for ln in text.splitlines():
        code = ln.split("  #")[0]
        if ln.startswith("mbcompose "):
            words = code.split()
            command = words[1] if len(words) > 1 and not words[1].startswith("-") else ""
            out.setdefault(command, set())
        if command is not None:
            out[command] |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", code))
    return out


SYNOPSES = [b for b in ALL if b.fragment and "synopsis" in b.fragment]


@pytest.mark.parametrize("block", SYNOPSES, ids=str)
def test_a_synopsis_names_only_commands_and_options_that_exist(block):
    commands = synopsis_commands(block.text)
    assert commands, str(block)
    for command, options in commands.items():
        r = CliRunner().invoke(main, [*([command] if command else []), "--help"])
        assert r.exit_code == 0, (str(block), command, r.output)
        missing = sorted(o for o in options if o not in r.output)
        assert not missing, f"{block}: 'mbcompose {command} --help' has no {missing}"


def test_the_setup_block_is_what_ci_runs():
    [setup] = [b for b in ALL if b.page == "README.md" and b.lang == "bash"]
    first, second = setup.text.strip().splitlines()
    assert "mbcompose run samples/seeker/pipeline.yaml" in first and (ROOT / "samples/seeker/pipeline.yaml").is_file()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci == second, (ci, second)


def test_the_benchmark_list_names_scripts_and_options_that_exist():
    [bench] = [b for b in ALL if b.fragment and "benchmarks" in b.fragment]
    lines = [ln for ln in bench.text.splitlines() if ln.startswith("python3 benchmarks/")]
    assert len(lines) >= 8
    for ln in lines:
        script = ROOT / ln.split()[1]
        assert script.is_file(), ln
        for option in re.findall(r"--[a-z][a-z0-9-]*", ln.split("  #")[0]):
            assert f'"{option}"' in script.read_text(encoding="utf-8"), (ln, option)


def test_the_forces_section_reads_appended_to_the_first_assembly_example(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    from mbcompose import parsers

    yamls = [b for b in ALL if b.page == "docs/assembly-format.md" and b.lang == "yaml"]
    first, forces = yamls[0], next(b for b in yamls if b.text.startswith("forces:"))
    mesh = re.search(r"mesh: (\S+)", first.text).group(1)
    (tmp_path / mesh).parent.mkdir(parents=True, exist_ok=True)
    trimesh.creation.box(extents=(20.0, 10.0, 10.0)).export(tmp_path / mesh)
    path = tmp_path / "demo.yaml"
    path.write_text(first.text + forces.text)
    a = parsers.read_assembly(path)
    declared = [e["name"] for e in yaml.safe_load(forces.text)["forces"]]
    assert sorted(e.name for e in (*a.forces, *a.springs)) == sorted(declared)


def test_the_limits_example_names_real_limits(tmp_path):
    """The example as a pipeline's key (its input swapped for the seeker: big_robot.urdf is not bundled)."""
    from mbcompose.composer.config import load_pipeline
    from mbcompose.parsers.limits import LIMIT_NAMES

    [example] = [b for b in ALL if b.page == "docs/limits.md" and b.lang == "yaml"]
    path = tmp_path / "pipeline.yaml"
    path.write_text(re.sub(r"(?m)^input: .*$", f"input: {ROOT / 'samples/seeker/seeker.yaml'}", example.text))
    limits = load_pipeline(path).limits
    values = re.search(r"limits: \{(.*)\}", example.text).group(1)
    for item in values.split(","):
        name, value = (x.strip() for x in item.split(":"))
        assert name in LIMIT_NAMES and getattr(limits, name) == float(value), (name, value)


def test_the_docs_command_prints_a_page_without_its_markers():
    r = CliRunner().invoke(main, ["docs", "codegen"])
    assert r.exit_code == 0 and "```c" in r.output and "<!--" not in r.output


def test_no_block_is_left_open():
    for page in PAGES:
        fences = [ln for ln in (ROOT / page).read_text(encoding="utf-8").split("\n") if ln.startswith("```")]
        assert len(fences) % 2 == 0, page

