"""The ``mbcompose`` command line: thin click commands that wire the stages.

Exit codes: 0 success, 2 bad input (one line ``error: FILE:LINE: message``),
1 internal error (one line with a hint; ``--verbose`` shows the traceback).
"""

from __future__ import annotations

import json
import logging
import sys
import traceback

import click

from parsers.errors import InputError

log = logging.getLogger("mbcompose")


class _Group(click.Group):
    """A click group that turns exceptions into one-line errors and exit codes."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:  # the one place where anything unexpected is caught
            if log.isEnabledFor(logging.DEBUG):
                traceback.print_exc()
            click.echo(f"internal error: {type(exc).__name__}: {exc} "
                       "(hint: rerun with --verbose for the traceback and report it)", err=True)
            sys.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mbcompose")
@click.option("-v", "--verbose", is_flag=True, help="Log progress and debugging details.")
@click.option("-q", "--quiet", is_flag=True, help="Log errors only.")
def main(verbose: bool, quiet: bool):
    """mbcompose: mechanical assemblies to multibody dynamics models.

    Reads an assembly (native YAML, URDF, SDFormat, MJCF), builds its system
    graph, lumps rigid parts into composite bodies, finds loops, and evaluates
    the dynamics on the resulting tree.
    """
    level = logging.DEBUG if verbose else logging.ERROR if quiet else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s: %(name)s: %(message)s", stream=sys.stderr)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="Output format.")
@click.option("--matrices", is_flag=True, help="Also print the incidence, cut-set and circuit matrices.")
def inspect(file: str, fmt: str, matrices: bool):
    """Print the bodies, joints, composites, loops and degrees of freedom of FILE.

    The tables follow seed 004 (Diaz-Calderon et al.): Table 1 (kinematic
    description, actuated joints marked *), Table 2 (composite bodies) and
    Table 3 (reduced kinematic description).
    """
    from parsers import read_assembly

    assembly = read_assembly(file)
    from composer import inspect as render
    from graph import analyse

    analysis = analyse(assembly)
    if fmt == "json":
        click.echo(json.dumps(render.render_json(analysis, matrices=matrices), indent=2))
    elif fmt == "markdown":
        click.echo(render.render_markdown(analysis, matrices=matrices), nl=False)
    else:
        click.echo(render.render_text(analysis, matrices=matrices), nl=False)
    for issue in analysis.errors:
        click.echo(f"error: {file}: {issue.message}", err=True)
    if analysis.errors:
        sys.exit(2)


@main.command("graph")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), required=True,
              help="Picture to write (.svg, .png or .pdf); with --stage both, '_extended'/'_reduced' "
                   "is added before the suffix.")
@click.option("--stage", type=click.Choice(["extended", "reduced", "both"]), default="both", show_default=True,
              help="Which system graph to draw (seed 004 Fig. 3: extended, Fig. 4: reduced).")
def graph_cmd(file: str, output: str, stage: str):
    """Draw the extended and/or reduced system graph of FILE (element labels e1.., legend)."""
    from pathlib import Path

    from graph import analyse
    from graph.draw import draw_system_graph
    from parsers import read_assembly

    out = Path(output)
    if out.suffix.lower() not in (".svg", ".png", ".pdf"):
        raise click.BadParameter(f"unsupported picture format {out.suffix!r} (use .svg, .png or .pdf)",
                                 param_hint="--output")
    analysis = analyse(read_assembly(file))
    stages = ("extended", "reduced") if stage == "both" else (stage,)
    for st in stages:
        path = out.with_name(f"{out.stem}_{st}{out.suffix}") if stage == "both" else out
        draw_system_graph(analysis, st, path)
        click.echo(str(path))
