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
    if not match or not 1 <= int(match.group(2)) <= 12 or not 1971 <= int(match.group(1)) <= 9998:
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


def _samples_by_resource(specs: list[str], bill: Any) -> dict[str, Any]:
    """`--samples [RESOURCE=]PATH` values as resource -> samples; a bare path belongs to the
    bill's only instance resource."""
    from gpurent.vendors.bills import LineKind
    from gpurent.vendors.outages import load_samples

    out: dict[str, Any] = {}
    for spec in specs:
        resource, sep, target = spec.partition("=")
        if not sep or "://" in resource or not resource.strip() or Path(spec).is_file():
            target, resource = spec, ""
        if not resource:
            names = sorted({b.resource for b in bill.lines if b.kind is LineKind.COMPUTE})
            names = [n for n in names if n]
            if len(names) != 1:
                raise InputError(
                    f"--samples {spec}: the bill has {len(names)} instance resources; name one "
                    "as --samples RESOURCE=PATH"
                )
            resource = names[0]
        out[resource.strip()] = load_samples(target.strip())
    return out


@cli_errors
@checked(tolerance=values.non_negative, idle_pct=values.percent)
def audit_cmd(
    *,
    bill: Annotated[Path, typer.Option("--bill", help="The bill export (CSV).")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format", help="auto, aws-cur, gcp or generic (date,resource,hours,amount)."
        ),
    ] = "auto",
    catalog: Annotated[
        Path | None,
        typer.Option("--catalog", help="Prices from this offers file (default: the catalog)."),
    ] = None,
    samples: Annotated[
        list[str] | None,
        typer.Option(
            "--samples",
            help="[RESOURCE=]PATH: the monitor's records of an instance (store or samples file).",
        ),
    ] = None,
    launches: Annotated[
        Path | None,
        typer.Option("--launches", help="CSV resource,market: how each instance was bought."),
    ] = None,
    provider: Annotated[
        str | None, typer.Option("--provider", help="A generic bill's provider (aws, gcp...).")
    ] = None,
    tolerance: Annotated[
        float, typer.Option("--tolerance", help="% over the catalog rate before a line is flagged.")
    ] = 5.0,
    idle_pct: Annotated[
        float, typer.Option("--idle-pct", help="A GPU at or below this activity % is idle.")
    ] = 5.0,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print Markdown.")] = False,
) -> None:
    """Audit a bill against the catalog's prices and the monitor's records.

    Example: gpurent vendors audit --bill cur.csv --samples i-0abc=gpu.db --launches runs.csv
    """
    from gpurent.catalog.sources import load_offers
    from gpurent.report import vendors_audit as render
    from gpurent.vendors.audit import SpotEvidence, audit
    from gpurent.vendors.bills import FORMATS, Market, read_bill, read_launches

    if json_out and markdown:
        raise InputError("give --json or --markdown, not both")
    if fmt not in ("auto", *FORMATS):
        raise InputError(f"--format {fmt!r}: give one of auto, {', '.join(FORMATS)}")
    read = read_bill(bill, fmt)
    recorded = _samples_by_resource(list(samples or []), read)
    spot: dict[str, SpotEvidence] = {}
    if launches is not None:
        for resource, (market, where) in read_launches(launches).items():
            if market is Market.SPOT:
                spot[resource] = SpotEvidence(resource=resource, evidence=where)
    report = audit(
        read,
        load_offers(catalog).offers,
        samples=recorded,
        spot=spot,
        tolerance_pct=tolerance,
        idle_activity_pct=idle_pct,
        provider=(provider or "").strip().lower(),
    )
    if json_out:
        print_json(render.to_json(report))
    elif markdown:
        sys.stdout.write(render.to_markdown(report))
    else:
        _print_audit(report, render)


def _print_audit(report: Any, render: Any) -> None:
    from gpurent.report.tables import Column, fit_table
    from gpurent.textsafe import cells

    columns = (
        Column("finding"),
        Column("resource"),
        Column("hours", priority=2, justify="right"),
        Column("billed", priority=1, justify="right"),
        Column("excess", justify="right"),
        Column("bill lines"),
        Column("detail", priority=3),
    )
    rows = [cells(*row) for row in render.terminal_rows(report)]
    typer.echo(render.summary(report))
    if rows:
        table, _ = fit_table(columns, rows, console.width)
        console.print(table)
    for note in report.notes:
        typer.echo(f"not checked: {note}")
