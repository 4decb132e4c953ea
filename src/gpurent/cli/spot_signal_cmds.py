"""`gpurent spot signals import|list`: public spot signals kept in the user data directory.

The store is one JSON file, `<data home>/spot/signals.json` (see userdata.py), a list of the
signals as `SpotSignal.as_json` writes them, the newest of each series (format, provider,
region, zone, instance, kind) only: a SpotLake archive's history is read, its latest row kept.
`plan` and `spot zones` read it through `load_signals`.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from gpurent.cli.common import cli_errors, console, err_console, print_json
from gpurent.errors import DataError
from gpurent.inputs import files
from gpurent.textsafe import cells
from gpurent.userdata import data_home

if TYPE_CHECKING:
    from collections.abc import Iterable

    from gpurent.catalog.offer import Offer
    from gpurent.cloud.spot_defaults import SignalRate
    from gpurent.spot.signals.base import SpotSignal

signals_app = typer.Typer(
    help="Public spot signals (AWS placement scores and Spot Instance Advisor, SpotLake, Azure "
    "eviction rates): import them, list them; `spot zones` and `plan` use them without traces.",
    no_args_is_help=True,
)

MAX_STORE_BYTES = 256 * 1024 * 1024


def store_path() -> Path:
    """Path of the stored spot signals file in the data home."""
    return data_home() / "spot" / "signals.json"


def load_signals() -> list[SpotSignal]:
    """The stored signals ([] when none were imported)."""
    from gpurent.spot.signals.select import signal_from_json

    path = store_path()
    if not path.exists():
        return []
    where = files.shown(path)
    text = files.read_text(path, limit_bytes=MAX_STORE_BYTES, error=DataError)
    doc = files.parse_json(text, where, error=DataError)
    if not isinstance(doc, list):
        raise DataError(f"{where}: expected a list of signals; delete the file and re-import")
    return [signal_from_json(d, f"{where}: [{i}]") for i, d in enumerate(doc)]


def _save(signals: list[SpotSignal]) -> None:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    files.write_text(tmp, json.dumps([s.as_json() for s in signals], indent=0))
    os.replace(tmp, path)


def now_utc() -> datetime:
    """The current time in UTC."""
    return datetime.now(UTC)


def signal_rates_for(offers: Iterable[Offer]) -> tuple[SignalRate, ...]:
    """Interruption rates from the stored signals for the offers' provider/region/instance,
    each with its source, bucket, as-of time and age (for `plan`'s assumptions)."""
    from gpurent.cloud.spot_defaults import SignalRate
    from gpurent.spot.signals.base import RATE_RULE
    from gpurent.spot.signals.select import age_text, interruption_rates

    signals = load_signals()
    if not signals:
        return ()
    wanted = {(o.provider.lower(), o.region.lower(), o.instance_type.lower()) for o in offers}
    now = now_utc()
    out = []
    for c in interruption_rates(signals):
        if (c.provider, c.region, c.instance) not in wanted:
            continue
        s = c.signal
        zones = f", worst of {c.zones} zone series" if c.zones > 1 else ""
        out.append(
            SignalRate(
                provider=c.provider,
                region=c.region,
                instance=c.instance,
                interruptions_per_hour=c.interruptions_per_hour,
                source=f"{s.source} '{s.label}' as of {s.as_of:%Y-%m-%d %H:%M} UTC "
                f"({age_text(s.as_of, now)}{zones})",
                rule=RATE_RULE,
            )
        )
    return tuple(out)


@signals_app.command("import")
@cli_errors
def import_cmd(
    *,
    file: Annotated[Path, typer.Argument(help="A signal file (formats in docs/spot.md).")],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="aws-sps, aws-advisor, spotlake or azure-eviction (default: from the content).",
            show_default=False,
        ),
    ] = None,
    instance: Annotated[
        str | None,
        typer.Option(
            help="Instance type (needed for placement scores when the file does not list "
            "InstanceTypes; else keep only this type).",
            show_default=False,
        ),
    ] = None,
    os_name: Annotated[
        str, typer.Option("--os", help="Spot Instance Advisor: the OS column to read.")
    ] = "Linux",
    as_of: Annotated[
        str | None,
        typer.Option(
            help="When the figures were true, for files without times (default: the file's "
            "modification time).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Read a signal file and add it to the store.

    Example: gpurent spot signals import spot-advisor-data.json
    """
    from gpurent.errors import InputError
    from gpurent.inputs.times import parse_time
    from gpurent.spot.signals import GCP_NOTE, parse_signals
    from gpurent.spot.signals.select import merge, newest

    if fmt is not None and fmt.strip().lower() == "gcp":
        raise InputError(GCP_NOTE)
    text = files.read_text(file)
    when = (
        parse_time(as_of, "--as-of")
        if as_of is not None
        else datetime.fromtimestamp(file.stat().st_mtime, tz=UTC)
    )
    new = parse_signals(
        text, files.shown(file), fmt=fmt, as_of=when, instance=instance, os_name=os_name
    )
    stored = newest(merge(load_signals(), new))
    _save(stored)
    kinds = sorted({s.kind.value for s in new})
    err_console.print(
        f"read {len(new)} signal(s) ({', '.join(kinds)}) from {files.shown(file)}; "
        f"{len(stored)} stored in {store_path()} (the newest of each series)",
        highlight=False,
        soft_wrap=True,
    )


@signals_app.command("list")
@cli_errors
def list_cmd(
    *,
    instance: Annotated[
        str | None, typer.Option(help="Only this instance type.", show_default=False)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The stored signals, newest of each series, with their age."""
    from gpurent.spot.signals.select import age_text, newest

    now = now_utc()
    shown = sorted(
        (s for s in newest(load_signals()) if instance is None or s.instance == instance),
        key=lambda s: (s.provider, s.instance, s.region, s.zone or "", s.kind.value),
    )
    if as_json:
        print_json(
            [
                {
                    **s.as_json(),
                    "age_s": (now - s.as_of).total_seconds(),
                    "interruptions_per_hour": s.interruptions_per_hour,
                }
                for s in shown
            ]
        )
        return
    if not shown:
        console.print("no spot signals stored; import one with `gpurent spot signals import FILE`")
        return
    table = Table(title=f"{len(shown)} spot signal(s) in {store_path()}")
    for col in ("provider", "instance", "region", "zone", "kind", "value", "as of", "age"):
        table.add_column(col, overflow="fold")
    for s in shown:
        table.add_row(
            *cells(
                s.provider,
                s.instance,
                s.region,
                s.zone or "-",
                s.kind.value,
                s.label,
                s.as_of.strftime("%Y-%m-%d %H:%M"),
                age_text(s.as_of, now),
            )
        )
    console.print(table)
