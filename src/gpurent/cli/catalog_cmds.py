"""CLI of the catalog room: `gpurent gpus`, `gpurent offers`, `gpurent catalog update|import|info`.

Every command that prints prices also prints how old they are (`prices: ...`).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gpurent.catalog import all_gpus, find_gpu, get_gpu
from gpurent.catalog.freshness import STALE_AFTER_DAYS, SourceAge, age_days, is_stale
from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.offer import Offer
from gpurent.catalog.offers import BUNDLED_AS_OF, OfferTable, bundled_table
from gpurent.catalog.offers_csv import offers_csv
from gpurent.catalog.query import (
    GpuQuery,
    OfferQuery,
    OfferSort,
    resolve_gpu_filter,
    select_gpus,
    select_offers,
)
from gpurent.catalog.sources import (
    DEFAULT_CLOUDS,
    DEFAULT_URL_BASE,
    URL_ENV,
    FetchError,
    load_file,
    load_offers,
    read_meta,
    update_catalogs,
)
from gpurent.catalog.sources.gpuhunt import GPUHUNT_URL_ENV
from gpurent.catalog.sources.snapshot import catalog_dir, check_cloud_name
from gpurent.cli.common import (
    checked,
    cli_errors,
    console,
    err_console,
    print_json,
    split_list,
    to_jsonable,
)
from gpurent.errors import InputError, require
from gpurent.inputs import values as v
from gpurent.report.tables import Column, fit_table
from gpurent.textsafe import cells, clean
from gpurent.userdata import data_home, now_utc

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

SKIPPED_SHOWN = 5

gpus_app = typer.Typer(
    help=(
        "GPU datasheet facts: memory, bandwidth, dense TFLOPS per precision, interconnect.\n\n"
        "Example: `gpurent gpus --min-memory 80`, `gpurent gpus show h100-sxm`."
    ),
    no_args_is_help=False,
)
catalog_app = typer.Typer(
    help=(
        "Where prices come from: fetch fresh SkyPilot catalogs, check a catalog file, "
        "show sources and age.\n\nExample: `gpurent catalog update --clouds aws,gcp`."
    ),
    no_args_is_help=True,
)


def _num(value: float | None, fmt: str = "{:g}") -> str:
    return "-" if value is None else fmt.format(value)


def _usd(value: float | None) -> str:
    return "-" if value is None else f"{value:,.3f}" if value < 100 else f"{value:,.2f}"


def _warn_skipped(table: OfferTable) -> None:
    """Skipped rows on stderr: file:line: reason, the first few, then how many more."""
    for row in table.skipped[:SKIPPED_SHOWN]:
        err_console.print(
            f"[yellow]warning:[/] {escape(clean(f'{row.file}:{row.line}: skipped: {row.reason}'))}",
            highlight=False,
            soft_wrap=True,
        )
    more = len(table.skipped) - SKIPPED_SHOWN
    if more > 0:
        err_console.print(f"[yellow]warning:[/] ... and {more} more rows skipped", highlight=False)


def _age_line(table: OfferTable) -> str:
    return f"prices: {table.age or 'age unknown'}"


# ----------------------------------------------------------------------------- gpus


GPU_COLUMNS = (
    Column("GPU", wrap=False),
    Column("arch", priority=2),
    Column("GiB", justify="right"),
    Column("GB/s", priority=1, justify="right"),
    Column("fp32", priority=2, justify="right"),
    Column("tf32", priority=3, justify="right"),
    Column("fp16/bf16", justify="right"),
    Column("fp8", priority=1, justify="right"),
    Column("interconnect", priority=3),
    Column("PCIe", priority=4),
    Column("TDP W", priority=4),
    Column("conf.", priority=3),
)
"""The `gpus` table: the columns kept at any width first; the rest go by priority."""


def _gpu_row(g: GpuSpec) -> dict[str, Any]:
    return {**to_jsonable(g), "has_nvlink": g.has_nvlink}


@gpus_app.callback(invoke_without_command=True)
@cli_errors
@checked(min_memory=v.non_negative)
def gpus(  # noqa: PLR0917 - typer maps parameters to options
    ctx: typer.Context,
    min_memory: Annotated[
        float | None, typer.Option("--min-memory", help="Only GPUs with at least this many GiB.")
    ] = None,
    arch: Annotated[
        str | None, typer.Option("--arch", help="Architecture, e.g. Hopper, Ampere, Ada.")
    ] = None,
    vendor: Annotated[str | None, typer.Option("--vendor", help="nvidia or amd.")] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Substring of the name or an alias.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
) -> None:
    """List GPU specs (dense rates, no sparsity; GeForce tensor rates at fp32 accumulate)."""
    if ctx.invoked_subcommand is not None:
        return
    query = GpuQuery(min_memory_gib=min_memory, architecture=arch, vendor=vendor, name=name)
    specs = select_gpus(all_gpus(), query)
    if as_json:
        print_json({"count": len(specs), "gpus": [_gpu_row(g) for g in specs]})
        return
    if not specs:
        err_console.print("no GPU matches these filters; try `gpurent gpus` without filters")
        return
    rows = []
    for g in specs:
        link = g.interconnect + (f" {g.interconnect_gbps:g} GB/s" if g.interconnect_gbps else "")
        rows.append(
            cells(
                g.name,
                g.architecture,
                f"{g.memory_gib:g}",
                f"{g.memory_bandwidth_gbps:g}",
                f"{g.fp32_tflops:g}",
                _num(g.tf32_tflops),
                f"{g.fp16_tflops:g}" + ("" if g.bf16_supported else " (no bf16)"),
                _num(g.fp8_tflops),
                link,
                str(g.pcie_gen),
                f"{g.tdp_w:g}",
                g.confidence,
            )
        )
    table, _ = fit_table(
        GPU_COLUMNS,
        rows,
        console.width,
        title=f"{len(specs)} GPUs (dense TFLOPS)",
        header_style="bold",
        box=box.SIMPLE_HEAD,
    )
    console.print(table)


@gpus_app.command("show")
@cli_errors
def gpus_show(
    name: Annotated[str, typer.Argument(help="A GPU name or alias, e.g. 'H100' or 'RTX 4090'.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
) -> None:
    """Everything known about one GPU, with sources and notes.

    Example: `gpurent gpus show "NVIDIA H100 80GB HBM3"`.
    """
    g = get_gpu(name)
    if as_json:
        print_json(_gpu_row(g))
        return
    table = Table(title=clean(g.name), show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    for key, value in to_jsonable(g).items():
        shown = ", ".join(value) if isinstance(value, list) else value
        table.add_row(*cells(key, "-" if shown is None or shown == "" else str(shown)))
    console.print(table)


# ----------------------------------------------------------------------------- offers


def _offer_json(o: Offer, now: datetime) -> dict[str, Any]:
    return {
        **to_jsonable(o),
        "key": o.key,
        "price_usd_per_gpu_hour": o.price_usd_per_gpu_hour,
        "spot_price_usd_per_gpu_hour": o.spot_price_usd_per_gpu_hour,
        "price_age_days": age_days(o.as_of, now),
        "price_stale": is_stale(o.as_of, now),
    }


def _stale_note(shown: tuple[Offer, ...], now: datetime) -> str | None:
    """'stale: N of these prices are over 30 days old (dates ...)', or None when none is."""
    stale = sorted({o.as_of for o in shown if is_stale(o.as_of, now)})
    count = sum(1 for o in shown if is_stale(o.as_of, now))
    if not count:
        return None
    return (
        f"stale: {count} of these {len(shown)} prices are over {STALE_AFTER_DAYS} days old on "
        f"{now.date()} or undated ({'; '.join(stale)}); `gpurent catalog update` fetches fresh ones"
    )


def _short_gpu(name: str) -> str:
    """The shortest unspaced alias of a GPU (each alias resolves to one spec, so it is exact)."""
    spec = find_gpu(name)
    if spec is None:
        return name
    return min((a for a in (spec.name, *spec.aliases) if " " not in a), key=len)


def _offers_table(shown: tuple[Offer, ...], total: int) -> Table:
    """Offers as a table; vCPU and RAM columns only when the terminal is wide enough."""
    wide, narrow = console.width >= 140, console.width < 110
    title = f"{len(shown)} of {total} offers" if len(shown) < total else f"{total} offers"
    table = Table(title=title, header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("provider", overflow="fold", min_width=6)
    table.add_column("instance", overflow="fold", min_width=12)
    table.add_column("region", overflow="fold", min_width=9)
    table.add_column("GPUs", overflow="fold", min_width=10)
    numeric = [
        *([] if narrow else ["GiB/GPU"]),
        *(["vCPU", "RAM GiB"] if wide else []),
        "$/h",
        "$/GPU-h",
        "spot/h",
    ]
    for col in numeric:
        table.add_column(col, justify="right", no_wrap=True)
    for o in shown:
        host = [_num(o.vcpus), _num(o.memory_gib)] if wide else []
        table.add_row(
            *cells(
                o.provider,
                o.instance_type,
                o.region,
                f"{o.gpu_count}x {_short_gpu(o.gpu_name) if narrow else o.gpu_name}",
                *([] if narrow else [f"{o.gpu_memory_gib:g}"]),
                *host,
                _usd(o.price_usd_per_hour),
                _usd(o.price_usd_per_gpu_hour),
                _usd(o.spot_price_usd_per_hour),
            )
        )
    return table


@cli_errors
def offers(  # noqa: PLR0917 - typer maps parameters to options
    gpu: Annotated[
        list[str] | None,
        typer.Option("--gpu", help="GPU name or alias; several: 'H100,A100-80GB' or repeat."),
    ] = None,
    min_gpus: Annotated[int | None, typer.Option("--min-gpus", help="At least N GPUs.")] = None,
    provider: Annotated[
        list[str] | None, typer.Option("--provider", help="aws, gcp, lambda, ... (comma list).")
    ] = None,
    region: Annotated[
        str | None, typer.Option("--region", help="Region substring, e.g. us-east.")
    ] = None,
    max_price: Annotated[
        float | None,
        typer.Option("--max-price", help="Max $/h for the instance (spot $/h with --spot)."),
    ] = None,
    spot: Annotated[bool, typer.Option("--spot", help="Only offers with a spot price.")] = False,
    min_gpu_memory: Annotated[
        float | None, typer.Option("--min-gpu-memory", help="At least this many GiB per GPU.")
    ] = None,
    sort: Annotated[OfferSort, typer.Option("--sort", help="Sort order.")] = OfferSort.PRICE,
    limit: Annotated[int, typer.Option("--limit", help="Rows to show; 0 = all.")] = 25,
    catalog: Annotated[
        Path | None,
        typer.Option("--catalog", help="Read offers from this file (SkyPilot vms.csv or plain)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    as_csv: Annotated[
        bool, typer.Option("--csv", help="CSV on stdout (RFC 4180, header row, units in names).")
    ] = False,
) -> None:
    """List rentable GPU instances with prices, filtered and sorted; says how old prices are.

    Example: `gpurent offers --gpu h100,a100-80gb --min-gpus 8 --spot --sort gpu-price`.
    Prices are list prices per hour for the whole instance; $/GPU-h divides by the GPU count.
    """
    now = now_utc()
    table = load_offers(catalog, now=now)
    if catalog is not None:
        _warn_skipped(table)
    query = OfferQuery(
        gpus=resolve_gpu_filter(split_list(gpu), table.offers),
        min_gpus=min_gpus,
        providers=tuple(p.lower() for p in split_list(provider)),
        region=region,
        max_price_usd_per_hour=max_price,
        spot_only=spot,
        min_gpu_memory_gib=min_gpu_memory,
    )
    if as_json and as_csv:
        raise InputError("give --json or --csv, not both")
    matching = select_offers(table.offers, query, sort=sort)
    shown = select_offers(matching, OfferQuery(), sort=sort, limit=limit)
    if as_csv:
        typer.echo(offers_csv(shown), nl=False)
        return
    if as_json:
        print_json(
            {
                "age": table.age,
                "as_of": sorted({o.as_of for o in shown}),
                "source": table.source,
                "count": len(shown),
                "matching": len(matching),
                "offers": [_offer_json(o, now) for o in shown],
            }
        )
        return
    if not shown:
        err_console.print("no offer matches these filters; loosen them (see `gpurent offers -h`)")
    else:
        console.print(_offers_table(shown, len(matching)))
    console.print(_age_line(table), highlight=False, soft_wrap=True)
    note = _stale_note(shown, now)
    if note:
        console.print(Text(clean(note)), soft_wrap=True)


# ----------------------------------------------------------------------------- catalog


def _progress_bar() -> tuple[Progress, dict[str, TaskID]]:
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    progress = Progress(
        TextColumn("{task.description:>10}"),
        BarColumn(),
        DownloadColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,  # a log or pipe gets no bar (and no blank line)
    )
    return progress, {}


@catalog_app.command("update")
@cli_errors
def catalog_update(  # noqa: PLR0917 - typer maps parameters to options
    url_base: Annotated[
        str | None,
        typer.Option(
            "--url-base",
            help=f"Base URL holding <cloud>/vms.csv (default ${URL_ENV} or {DEFAULT_URL_BASE}).",
        ),
    ] = None,
    clouds: Annotated[
        str | None,
        typer.Option(
            "--clouds",
            help="Comma-separated clouds to fetch (default for skypilot: "
            f"{','.join(DEFAULT_CLOUDS)}; for gpuhunt: all its offline providers).",
        ),
    ] = None,
    source: Annotated[
        str,
        typer.Option(
            "--source",
            help="skypilot (SkyPilot's vms.csv files) or gpuhunt (dstack's gpuhunt catalogs, "
            f"through the gpuhunt package; its URL: --url-base or ${GPUHUNT_URL_ENV}).",
        ),
    ] = "skypilot",
    online: Annotated[
        str | None,
        typer.Option(
            "--online",
            help="gpuhunt only: online providers to query too (e.g. vastai), with your "
            "credentials from the environment where they need them.",
        ),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per request.")] = 30.0,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
) -> None:
    """Fetch fresh catalogs into your data directory (the bundled snapshot stays the fallback):
    SkyPilot's files (default) or gpuhunt's. A cloud that fails keeps its previous file.

    Example: `gpurent catalog update --clouds aws,gcp,lambda`, `gpurent catalog update --source
    gpuhunt`.
    """
    if timeout <= 0:
        raise InputError(f"--timeout must be > 0 s, got {timeout}")
    if source.lower() == "gpuhunt":
        _update_gpuhunt(url_base, clouds, online, timeout, as_json=as_json)
        return
    if source.lower() != "skypilot":
        raise InputError(f"--source: {source!r} is unknown; use skypilot or gpuhunt")
    if online:
        raise InputError("--online needs --source gpuhunt")
    base = url_base or os.environ.get(URL_ENV) or DEFAULT_URL_BASE
    names = [c.lower() for c in split_list(clouds if clouds is not None else DEFAULT_CLOUDS)]
    if not names:
        raise InputError("--clouds is empty; give e.g. --clouds aws,gcp")
    for name in names:
        check_cloud_name(name)
    home = data_home()
    progress, tasks = _progress_bar()

    def on_progress(cloud: str, done: int, total: int | None) -> None:
        if cloud not in tasks:
            tasks[cloud] = progress.add_task(cloud, total=total)
        progress.update(tasks[cloud], completed=done, total=total)

    with progress:
        result = update_catalogs(
            base, names, home, now=datetime.now(UTC), timeout_s=timeout, on_progress=on_progress
        )
    if as_json:
        print_json(
            {"stored": result.stored, "failed": dict(result.failed), "dir": catalog_dir(home)}
        )
    else:
        for meta in result.stored:
            console.print(
                f"{meta.cloud}: {meta.offers} GPU offers from {meta.rows} rows "
                f"({meta.skipped} malformed rows skipped), fetched {meta.fetched_at}",
                highlight=False,
                soft_wrap=True,
            )
    if result.failed and not result.stored:
        first = result.failed[0][1]
        more = f" (and {len(result.failed) - 1} more clouds)" if len(result.failed) > 1 else ""
        raise FetchError(f"no catalog fetched: {first}{more}; previous catalogs kept")
    for cloud, reason in result.failed:
        err_console.print(
            f"[bold red]error:[/] {cloud}: {reason}; previous file kept",
            highlight=False,
            soft_wrap=True,
        )
    if result.failed:
        raise typer.Exit(1)
    if not as_json:
        console.print(f"stored in {catalog_dir(home)}", highlight=False, soft_wrap=True)


def _update_gpuhunt(
    url_base: str | None, clouds: str | None, online: str | None, timeout: float, *, as_json: bool
) -> None:
    """`catalog update --source gpuhunt`: query, map, store; report per provider."""
    from gpurent.catalog.sources.gpuhunt import fetch_gpuhunt, store_gpuhunt

    require("gpuhunt", "catalog")
    internal: Any = require("gpuhunt._internal.catalog", "catalog")
    names = (
        [c.lower() for c in split_list(clouds)]
        if clouds is not None
        else list(internal.OFFLINE_PROVIDERS)
    )
    online_names = [c.lower() for c in split_list(online)]
    if not names and not online_names:
        raise InputError("--clouds is empty; give e.g. --clouds aws,lambdalabs")
    home = data_home()
    now = datetime.now(UTC)
    rows, meta = fetch_gpuhunt(names, now=now, url=url_base, online=online_names, timeout_s=timeout)
    path = store_gpuhunt(home, rows, meta)
    if as_json:
        print_json({"stored": meta, "file": path})
    else:
        for name, info in meta.providers.items():
            line = (  # the version comes from the server: no markup, no control characters
                f"gpuhunt {name}: {info['offers']} GPU offers (catalog {info['version']}), "
                f"fetched {meta.fetched_at}"
            )
            console.print(Text(clean(line)), soft_wrap=True)
    for name, reason in meta.failed.items():
        err_console.print(
            Text.assemble(("warning: ", "yellow"), clean(f"gpuhunt {name}: {reason}")),
            soft_wrap=True,
        )
    if not as_json:
        console.print(f"stored in {path}", highlight=False, soft_wrap=True)


@catalog_app.command("import")
@cli_errors
def catalog_import(
    file: Annotated[Path, typer.Argument(help="A SkyPilot vms.csv or a plain offers CSV.")],
    provider: Annotated[
        str | None,
        typer.Option("--provider", help="Cloud of a SkyPilot file (default: from its path)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
) -> None:
    """Check a catalog file: format, offers found, rows skipped and why.

    Example: `gpurent catalog import gcp/vms.csv`, then `gpurent offers --catalog gcp/vms.csv`.
    """
    table = load_file(file, provider=provider)
    if as_json:
        print_json(
            {
                "file": file,
                "format": table.format,
                "offers": len(table.offers),
                "skipped": table.skipped,
                "ignored_rows": table.ignored_rows,
                "notes": table.notes,
                "providers": sorted({o.provider for o in table.offers}),
                "gpus": sorted({o.gpu_name for o in table.offers}),
                "age": table.age,
            }
        )
        return
    _warn_skipped(table)
    console.print(
        f"{file}: {table.format} format, {len(table.offers)} GPU offers, {len(table.skipped)} rows "
        f"skipped, {table.ignored_rows} rows without a GPU",
        highlight=False,
        soft_wrap=True,
    )
    gpu_names = ", ".join(sorted({o.gpu_name for o in table.offers}))
    console.print(Text(clean(f"GPUs: {gpu_names}")))
    for note in table.notes:
        console.print(Text(clean(f"note: {note}")), soft_wrap=True)
    console.print(_age_line(table), highlight=False, soft_wrap=True)


def _source_ages(current: OfferTable, now: datetime) -> list[SourceAge]:
    """Each source of the offers in use: its price date, age and offer count (bundled rows by
    their date, so the 2023 rows show as their own, stale, source)."""
    groups: dict[tuple[str, str], int] = {}
    for o in current.offers:
        if o.source.startswith(("http://", "https://")) and "/catalog.zip" in o.source:
            name = f"gpuhunt {o.provider}"
        elif o.source.startswith(("http://", "https://")):
            name = f"skypilot {o.provider} (fetched)"
        elif o.source.endswith("_gpuhunt/offers.csv") or o.source.startswith("gpuhunt"):
            name = f"gpuhunt {o.provider}"
        else:
            name = "bundled snapshot" + (f" ({o.provider})" if o.as_of != BUNDLED_AS_OF else "")
        groups[(name, o.as_of)] = groups.get((name, o.as_of), 0) + 1
    return [
        SourceAge(
            source=name,
            as_of=as_of,
            age_days=age_days(as_of, now),
            offers=count,
            stale=is_stale(as_of, now),
        )
        for (name, as_of), count in sorted(groups.items())
    ]


@catalog_app.command("info")
@cli_errors
def catalog_info(
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
) -> None:
    """Where prices come from and how old they are: each source's price date, age in days and
    offer count (stale: over 30 days or of unknown date), fetched catalogs, bundled snapshot."""
    from gpurent.catalog.sources.gpuhunt import read_gpuhunt_meta

    home = data_home()
    now = now_utc()
    metas = read_meta(home)
    hunt = read_gpuhunt_meta(home)
    bundled = bundled_table()
    current = load_offers(home=home, now=now)
    ages = _source_ages(current, now)
    if as_json:
        print_json(
            {
                "age": current.age,
                "offers": len(current.offers),
                "now": now.isoformat(timespec="seconds"),
                "stale_after_days": STALE_AFTER_DAYS,
                "sources": ages,
                "data_dir": catalog_dir(home),
                "url_env": URL_ENV,
                "fetched": list(metas.values()),
                "gpuhunt": hunt,
                "bundled": {
                    "offers": len(bundled.offers),
                    "skipped": bundled.skipped,
                    "age": bundled.age,
                },
            }
        )
        return
    console.print(_age_line(current), highlight=False, soft_wrap=True)
    console.print(f"{len(current.offers)} offers in use", highlight=False)
    sources = Table(
        title=f"sources in use (stale: over {STALE_AFTER_DAYS} days old on {now.date()} or "
        "of unknown date)",
        header_style="bold",
        box=box.SIMPLE_HEAD,
    )
    for col in ("source", "prices as of", "age days", "offers", "stale"):
        sources.add_column(col, justify="right" if col in ("age days", "offers") else "left")
    for a in ages:
        sources.add_row(
            *cells(
                a.source,
                a.as_of,
                "?" if a.age_days is None else str(a.age_days),
                str(a.offers),
                "STALE" if a.stale else "",
            )
        )
    console.print(sources)
    if metas:
        table = Table(title=f"fetched catalogs in {catalog_dir(home)}", header_style="bold")
        for col in ("cloud", "fetched at", "offers", "rows", "skipped", "url"):
            table.add_column(col)
        for m in metas.values():
            table.add_row(
                *cells(m.cloud, m.fetched_at, str(m.offers), str(m.rows), str(m.skipped), m.url)
            )
        console.print(table)
    if hunt is not None:
        versions = ", ".join(f"{k} {v['version']}" for k, v in hunt.providers.items())
        console.print(
            Text(
                clean(
                    f"gpuhunt: {hunt.offers} offers from {hunt.url}, fetched {hunt.fetched_at} "
                    f"({versions})"
                )
            ),
            soft_wrap=True,
        )
    if not metas and hunt is None:
        console.print(
            f"no fetched catalog in {catalog_dir(home)}: run `gpurent catalog update` "
            f"(source: ${URL_ENV} or {DEFAULT_URL_BASE}) or `gpurent catalog update --source "
            "gpuhunt`",
            highlight=False,
            soft_wrap=True,
        )
    console.print(
        f"bundled snapshot: {len(bundled.offers)} offers ({len(bundled.skipped)} accelerator-only "
        f"rows not offers), {bundled.age}; see catalog/data/README.md",
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    """Attach `gpus`, `offers` and `catalog` to the root app."""
    app.add_typer(gpus_app, name="gpus")
    app.command("offers")(offers)
    app.add_typer(catalog_app, name="catalog")
