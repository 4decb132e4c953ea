"""`gpurent vendors score FILE`: the guide's weighted provider scorecard, from evidence."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from gpurent.cli.common import cli_errors, console, err_console, print_json, split_list
from gpurent.cli.vendors_cmds import vendors_app
from gpurent.errors import InputError
from gpurent.inputs import files
from gpurent.inputs import values as v
from gpurent.textsafe import clean

if TYPE_CHECKING:  # the vendors room reads bench results: imported when the command runs
    from gpurent.vendors.evaluation import Evaluation
    from gpurent.vendors.file import ReferenceJob

_JOB = re.compile(r"^\s*([0-9.eE+]+)\s*h?\s*[x*]\s*([0-9]+)\s*(?:gpus?)?\s*$", re.IGNORECASE)


def parse_job(text: str) -> tuple[float, int]:
    """`100x8` (100 hours on 8 GPUs; also `100h x 8`) as (hours, GPUs)."""
    match = _JOB.match(text)
    if not match:
        raise InputError(f"--job must be HOURSxGPUS, e.g. 100x8 (100 h on 8 GPUs), got {text!r}")
    hours = v.positive(match.group(1), "--job hours", most=1e6)
    gpus = v.positive_int(int(match.group(2)), "--job GPUs", most=1_000_000)
    return hours, gpus


def _job(
    base: ReferenceJob | None, job: str | None, egress_gb: float | None, storage_gb: float | None
) -> ReferenceJob | None:
    from gpurent.vendors.evaluation import DEFAULT_JOB
    from gpurent.vendors.file import ReferenceJob

    if job is None and egress_gb is None and storage_gb is None:
        return None
    ref = base or DEFAULT_JOB
    hours, gpus = parse_job(job) if job is not None else (ref.hours, ref.gpus)
    return ReferenceJob(
        hours=hours,
        gpus=gpus,
        egress_gb=ref.egress_gb if egress_gb is None else v.non_negative(egress_gb, "--egress-gb"),
        egress_to=ref.egress_to,
        storage_gb=(
            ref.storage_gb if storage_gb is None else v.non_negative(storage_gb, "--storage-gb")
        ),
        public_ips=ref.public_ips,
    )


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
    from gpurent.report.vendors_html import render_html
    from gpurent.report.vendors_markdown import render_markdown
    from gpurent.vendors.evaluation import evaluate
    from gpurent.vendors.file import load_vendors
    from gpurent.vendors.weights import parse_weights

    if as_json and markdown:
        raise InputError("give at most one of --json and --markdown")
    doc = load_vendors(file)
    given = parse_weights(weights) if weights is not None else None
    pair = None
    if slice_ is not None:
        items = split_list(slice_)
        if len(items) != 2:
            raise InputError(f"--slice takes two criteria, e.g. hardware,network; got {slice_!r}")
        pair = (items[0].lower(), items[1].lower())
    ev = evaluate(
        doc,
        weights=given,
        strict=strict,
        job=_job(doc.job, job, egress_gb, storage_gb),
        slice_criteria=pair,
    )
    for warning in ev.scorecard.warnings:
        err_console.print(Text(clean(f"warning: {warning}"), style="yellow"), soft_wrap=True)
    if html is not None:
        files.write_text(html, render_html(ev))
        if not as_json and not markdown:
            err_console.print(Text(f"wrote {files.shown(html)}"), soft_wrap=True)
    if as_json:
        print_json(ev)
    elif markdown:
        typer.echo(render_markdown(ev), nl=False)
    elif html is None:
        _print_terminal(ev)
