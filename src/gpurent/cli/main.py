"""The `gpurent` command: registers each verb group's module on one Typer app."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable

import typer

from gpurent import __version__
from gpurent.cli.common import OneLineErrorsGroup

_HELP = (
    "Plan, check and pay for rented GPU servers for deep learning.\n\n"
    "Start with `gpurent plan --preset llama-lora` to see what to rent for a job, "
    "`gpurent gpus` and `gpurent offers` to browse the bundled catalog, and "
    "`gpurent estimate` for how fast one configuration runs."
)

# Which module registers which top-level name, in the order `gpurent --help` lists them.
# A run names its command first, so `main` imports and builds only that module's commands:
# Typer turns every command's signature into click parameters up front, and building all
# 77 of them cost 0.16-0.21 s of every call (benchmarks/bench_cli_startup.py). The test suite
# checks this table against what each module's `register` really adds.
COMMAND_MODULES: dict[str, str] = {
    "plan": "plan_cmds",
    "estimate": "estimate_cmds",
    "calibrate": "estimate_cmds",
    "offers": "catalog_cmds",
    "gpus": "catalog_cmds",
    "catalog": "catalog_cmds",
    "pricing": "pricing_cmds",
    "spot": "spot_cmds",
    "bench": "bench_cmds",
    "monitor": "monitor_cmds",
    "run": "run_cmds",
    "fleet": "fleet_cmds",
    "deploy": "deploy_cmds",
    "vendors": "vendors_cmds",
    "serve": "serve_cmds",
}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpurent {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Plan, check and pay for rented GPU servers for deep learning."""


def _markdown_help(typer_app: typer.Typer) -> None:
    """Render every help text as Markdown: paragraphs reflow to the terminal's width (rich mode
    keeps the docstrings' hard line breaks, which wrap badly on 80 columns)."""
    typer_app.rich_markup_mode = "markdown"
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _markdown_help(group.typer_instance)


def build_app(modules: Iterable[str] | None = None) -> typer.Typer:
    """The `gpurent` Typer app with the commands of `modules` (names in `COMMAND_MODULES`'s
    values), or of every module when None."""
    wanted = list(dict.fromkeys(COMMAND_MODULES.values() if modules is None else modules))
    typer_app = typer.Typer(
        name="gpurent",
        help=_HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        cls=OneLineErrorsGroup,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    typer_app.callback()(_root)
    for module in wanted:
        importlib.import_module(f"gpurent.cli.{module}").register(typer_app)
    _markdown_help(typer_app)
    return typer_app


_FULL: list[typer.Typer] = []

app: typer.Typer  # bound by `__getattr__` on first use, not here
"""The whole `gpurent` Typer app, every verb group attached (what tests and embedders invoke)."""


def __getattr__(name: str) -> typer.Typer:
    """`app`: the whole `gpurent` Typer app, every verb group attached (built on first use)."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _FULL:
        _FULL.append(build_app())
    return _FULL[0]


def main() -> None:
    """Run the gpurent command line (the console script's entry point)."""
    first = sys.argv[1] if len(sys.argv) > 1 else ""
    if first == "--version":  # answered by the root callback: no command needs building
        build_app([])()
        return
    module = COMMAND_MODULES.get(first)
    (build_app([module]) if module is not None else __getattr__("app"))()
