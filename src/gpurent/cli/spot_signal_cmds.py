"""`gpurent spot signals import|list`: public spot signals kept in the user data directory.

The store (one JSON file in the user data directory, the newest of each series) is read and
written by `gpurent.plan.signal_store`, which `plan`, `spot zones` and the server share: a
SpotLake archive's history is read, its latest row kept.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from gpurent.cli.common import cli_errors, console, err_console, print_json
from gpurent.inputs import files
from gpurent.plan.signal_store import load_signals, save_signals, store_path
from gpurent.textsafe import cells

signals_app = typer.Typer(
    help="Public spot signals (AWS placement scores and Spot Instance Advisor, SpotLake, Azure "
    "eviction rates): import them, list them; `spot zones` and `plan` use them without traces.",
    no_args_is_help=True,
)


def now_utc() -> datetime:
    """The current time in UTC (the age of stored signals is measured from it)."""
    return datetime.now(UTC)


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
    save_signals(stored)
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
