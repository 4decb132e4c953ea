"""`gpurent vendors sla` (availability and SLA credits from outages) and `gpurent vendors audit`
(a provider's bill against the catalog and the monitor's records)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from gpurent.cli.common import checked, cli_errors, console, print_json
from gpurent.errors import InputError
from gpurent.inputs import values

_MONTH = re.compile(r"^\s*(\d{4})-(\d{1,2})\s*$")


def register(vendors_app: typer.Typer) -> None:
    """Attach `sla` and `audit` to the `gpurent vendors` group."""
    vendors_app.command("sla")(sla_cmd)
    vendors_app.command("audit")(audit_cmd)


def _time_zone(name: str) -> Any:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    text = name.strip()
    if text.upper() in {"UTC", "Z"}:
        from datetime import UTC

        return UTC
    try:
        if not text or text.startswith(("/", ".")) or ".." in text:
            raise ValueError(text)
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InputError(
            f"--tz {name!r}: unknown time zone; give an IANA name such as Europe/Berlin, "
            "America/New_York or UTC"
        ) from None


def _month(text: str) -> tuple[int, int]:
    match = _MONTH.match(text)
    if not match or not 1 <= int(match.group(2)) <= 12 or int(match.group(1)) < 1971:
        raise InputError(f"--month {text!r}: give a calendar month as YYYY-MM, e.g. 2026-11")
    return int(match.group(1)), int(match.group(2))


@cli_errors
@checked(monthly_bill=values.non_negative, gap=values.positive)
def sla_cmd(
    *,
    outages: Annotated[
        Path | None,
        typer.Option(
            "--outages", help="Outage log CSV: start,end,resource,reason (ISO times, offsets)."
        ),
    ] = None,
    samples: Annotated[
        str | None,
        typer.Option(
            "--samples",
            help="The monitor's records (store file/URL or samples CSV/JSONL): lost GPUs, Xids "
            "and gaps count as downtime.",
        ),
    ] = None,
    terms: Annotated[Path, typer.Option("--terms", help="SLA terms TOML with [[tier]] tables.")],
    month: Annotated[
        str | None,
        typer.Option("--month", help="The month, YYYY-MM (default: every month with an outage)."),
    ] = None,
    tz: Annotated[str, typer.Option("--tz", help="Time zone the months are counted in.")] = "UTC",
    monthly_bill: Annotated[
        float | None,
        typer.Option("--monthly-bill", help="The month's bill in USD (default: the terms')."),
    ] = None,
    gap: Annotated[
        float | None,
        typer.Option("--gap", help="With --samples: seconds without a sample = host down."),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print Markdown.")] = False,
) -> None:
    """Monthly availability from an outage log or the monitor's records, and the credit owed.

    Example: gpurent vendors sla --outages outages.csv --terms sla.toml --month 2026-11
    --tz Europe/Berlin --monthly-bill 12000
    """
    from gpurent.report import vendors_sla as render
    from gpurent.vendors import outages as readers
    from gpurent.vendors.sla import sla_report

    if json_out and markdown:
        raise InputError("give --json or --markdown, not both")
    if outages is None and samples is None:
        raise InputError("give --outages FILE or --samples DB_OR_FILE (or both)")
    zone = _time_zone(tz)
    chosen = [_month(month)] if month is not None else None
    sla_terms = readers.read_terms(terms)
    found = list(readers.read_outages(outages)) if outages is not None else []
    if samples is not None:
        recorded = readers.load_samples(samples)
        found += readers.sample_outages(recorded, samples, gap_s=gap)
    months = sla_report(found, sla_terms, zone, months=chosen, monthly_bill_usd=monthly_bill)
    if not months:
        raise InputError("no outages in the inputs; give --month YYYY-MM to report a month anyway")
    if json_out:
        print_json(render.to_json(months))
    elif markdown:
        sys.stdout.write(render.to_markdown(months))
    else:
        _print_sla(months, render)


def _print_sla(months: Any, render: Any) -> None:
    from gpurent.report.tables import Column, fit_table

    columns = (
        Column("month"),
        Column("downtime"),
        Column("availability"),
        Column("tier met", priority=1),
        Column("credit"),
        Column("credit $"),
    )
    table, _ = fit_table(columns, render.terminal_rows(months), console.width)
    console.print(table)
    for m in months:
        if m.tier is not None:
            console.print()
            sys.stdout.flush()
            typer.echo(render.claim_text(m), nl=False)


@cli_errors
def audit_cmd() -> None:
    """Audit a bill (placeholder until the bill readers land)."""
    raise InputError("not yet")
