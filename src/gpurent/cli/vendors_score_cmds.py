"""`gpurent vendors score FILE`: the guide's weighted provider scorecard, from evidence."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from gpurent.cli.common import cli_errors, console, err_console, print_json, split_list
from gpurent.cli.vendors_cmds import vendors_app
from gpurent.errors import InputError
from gpurent.inputs import files
from gpurent.textsafe import clean

if TYPE_CHECKING:  # the vendors room reads bench results: imported when the command runs
    from gpurent.vendors.evaluation import Evaluation


def _print_terminal(ev: Evaluation) -> None:
    from gpurent.report.vendors_format import header_lines, sections, title

    console.print(Text(clean(title(ev)), style="bold"))
    for line in header_lines(ev):
        console.print(Text(clean(line)), soft_wrap=True)
    for s in sections(ev):
        console.print()
        console.print(Text(clean(s.title), style="bold"))
        if s.headers:
            table = Table(show_lines=False)
            for h in s.headers:
                table.add_column(clean(h), overflow="fold")
            for i, row in enumerate(s.rows):
                style = "bold green" if s.highlight_first and i == 0 else None
                table.add_row(*(Text(clean(c)) for c in row), style=style)
            console.print(table)
        for note in s.notes:
            console.print(Text(clean(f"- {note}")), soft_wrap=True)


@vendors_app.command("score")
@cli_errors
def score(  # noqa: PLR0917 - typer maps parameters to options
    file: Annotated[Path, typer.Argument(help="The vendors file (TOML, or YAML as .yaml/.yml).")],
    weights: Annotated[
        str | None,
        typer.Option(
            "--weights",
            help="Criterion weights, e.g. hardware=0.3,network=0.25 (criteria: hardware, "
            "network, elasticity, cost, support). Unnamed criteria keep the guide's weight; a "
            "sum other than 1 is normalised with a warning.",
        ),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse weights that do not sum to 1.")
    ] = False,
    job: Annotated[
        str | None,
        typer.Option("--job", help="Reference job of the cost criterion: HOURSxGPUS, e.g. 100x8."),
    ] = None,
    egress_gb: Annotated[
        float | None, typer.Option("--egress-gb", help="Reference job's egress in GB.")
    ] = None,
    storage_gb: Annotated[
        float | None, typer.Option("--storage-gb", help="Reference job's storage in GB.")
    ] = None,
    slice_: Annotated[
        str | None,
        typer.Option(
            "--slice",
            help="The two criteria whose weights the region map varies (default: the two "
            "largest weights), e.g. hardware,cost.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print Markdown.")] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Write a self-contained HTML report here.")
    ] = None,
) -> None:
    """Rank GPU providers by the guide's weighted evaluation from the evidence in FILE: each
    criterion's raw evidence, score and weighted contribution, what missing evidence could
    change, how firm the top choice is against the weights, TOPSIS, and the contract checklist."""
    from gpurent.report.vendors_html import vendors_page
    from gpurent.report.vendors_markdown import render_markdown
    from gpurent.vendors.evaluation import evaluate
    from gpurent.vendors.file import load_vendors
    from gpurent.vendors.score_options import job_with, slice_pair
    from gpurent.vendors.weights import parse_weights

    if as_json and markdown:
        raise InputError("give at most one of --json and --markdown")
    doc = load_vendors(file)
    given = parse_weights(weights) if weights is not None else None
    pair = slice_pair(split_list(slice_), slice_) if slice_ is not None else None
    ev = evaluate(
        doc,
        weights=given,
        strict=strict,
        job=job_with(doc.job, job, egress_gb, storage_gb),
        slice_criteria=pair,
    )
    for warning in ev.scorecard.warnings:
        err_console.print(Text(clean(f"warning: {warning}"), style="yellow"), soft_wrap=True)
    if html is not None:
        files.write_text(html, vendors_page(ev))
        if not as_json and not markdown:
            err_console.print(Text(f"wrote {files.shown(html)}"), soft_wrap=True)
    if as_json:
        print_json(ev)
    elif markdown:
        typer.echo(render_markdown(ev), nl=False)
    elif html is None:
        _print_terminal(ev)
