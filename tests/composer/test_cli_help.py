"""Help a user can read without the repository: installed docs, plain words in help texts."""

from pathlib import Path

from click.testing import CliRunner

from mbcompose.composer.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_docs_prints_the_installed_pages_equal_to_the_repository_docs():
    r = run("docs")
    assert r.exit_code == 0 and {"pipeline", "assembly", "limits"} <= set(r.output.split())
    for topic, page in (("pipeline", "pipeline-format.md"), ("assembly", "assembly-format.md")):
        r = run("docs", topic)
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")      # less the docs test's block markers
        assert r.exit_code == 0 and r.output == "".join(line for line in text.splitlines(keepends=True)
                                                        if not line.startswith("<!-- fragment: "))
    r = run("docs", "pipline")
    assert r.exit_code == 2 and "did you mean 'pipeline'" in r.output


def test_help_texts_point_to_installed_docs_and_explain_the_terms_once():
    assert "mbcompose docs pipeline" in run("run", "--help").output
    assert "docs/" not in run("run", "--help").output
    assert "composite body is a group of" in " ".join(run("inspect", "--help").output.split())
    assert "spatial operator" in run("graph", "--help").output
    for command in ("inspect", "convert", "simulate", "eval", "graph"):
        text = run(command, "--help").output
        assert "--base" in text and "--verbose" in text and "--quiet" in text, command
