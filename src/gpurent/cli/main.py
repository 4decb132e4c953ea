"""The `gpurent` command: registers each verb group's module on one Typer app."""

from __future__ import annotations

import typer

from gpurent import __version__
from gpurent.cli import (
    bench_cmds,
    catalog_cmds,
    deploy_cmds,
    estimate_cmds,
    fleet_cmds,
    monitor_cmds,
    plan_cmds,
    pricing_cmds,
    run_cmds,
    serve_cmds,
    spot_cmds,
    vendors_cmds,
)
from gpurent.cli.common import OneLineErrorsGroup

app = typer.Typer(
    name="gpurent",
    help=(
        "Plan, check and pay for rented GPU servers for deep learning.\n\n"
        "Start with `gpurent plan --preset llama-lora` to see what to rent for a job, "
        "`gpurent gpus` and `gpurent offers` to browse the bundled catalog, and "
        "`gpurent estimate` for how fast one configuration runs."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=OneLineErrorsGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
)
"""The `gpurent` Typer app; every verb group attaches to it."""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpurent {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Plan, check and pay for rented GPU servers for deep learning."""


for _module in (
    plan_cmds,
    estimate_cmds,
    catalog_cmds,
    pricing_cmds,
    spot_cmds,
    bench_cmds,
    monitor_cmds,
    run_cmds,
    fleet_cmds,
    deploy_cmds,
    vendors_cmds,
    serve_cmds,
):
    _module.register(app)


def _markdown_help(typer_app: typer.Typer) -> None:
    """Render every help text as Markdown: paragraphs reflow to the terminal's width (rich mode
    keeps the docstrings' hard line breaks, which wrap badly on 80 columns)."""
    typer_app.rich_markup_mode = "markdown"
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _markdown_help(group.typer_instance)


_markdown_help(app)


def main() -> None:
    """Run the gpurent command line (the console script's entry point)."""
    app()
