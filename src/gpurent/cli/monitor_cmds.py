"""`gpurent monitor`: live utilisation, waste and diagnosis; `report` and `diagnose` over records.

Start-up stays light: sqlalchemy, psutil, NVML and the monitor modules are imported inside the
command functions.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from gpurent.cli.common import (
    cli_errors,
    console,
    err_console,
    print_json,
    print_json_line,
    read_duration_s,
)
from gpurent.cli.monitor_store_cmds import store_app
from gpurent.errors import DataError, InputError, require
from gpurent.inputs import files
from gpurent.textsafe import cells, clean

if TYPE_CHECKING:
    from gpurent.monitor.cost import InstancePrice
    from gpurent.monitor.instance import DetectedInstance
    from gpurent.monitor.rules import Thresholds

monitor_app = typer.Typer(
    help=(
        "Watch GPU and host utilisation, money spent and wasted, and diagnose why GPUs wait.\n\n"
        "Examples:\n\n"
        "  gpurent monitor --instance p5.48xlarge --record ~/gpu.db\n\n"
        "  gpurent monitor --exporter --port 9400          (Prometheus /metrics)\n\n"
        "  gpurent monitor --fake-gpus demo --duration 10 --json   (no GPU needed)\n\n"
        "  gpurent monitor report --db ~/gpu.db --html report.html\n\n"
        "  gpurent monitor diagnose samples.csv\n\n"
        "  gpurent monitor store upgrade --db ~/gpu.db   (migrate an older store)"
    ),
    no_args_is_help=False,
)
monitor_app.add_typer(store_app, name="store")


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the root app."""
    app.add_typer(monitor_app, name="monitor")


def _print_notes(notes: list[str]) -> None:
    """`note: ...` lines on stderr; the text is escaped (an extra's `[monitor]` is no markup)."""
    for note in notes:
        err_console.print(f"[yellow]note:[/] {escape(clean(note))}", highlight=False)


def _thresholds(sm_util_low_pct: float, disk_util_high_pct: float, idle_pct: float) -> Thresholds:
    from gpurent.monitor.rules import Thresholds

    for flag, value in (
        ("--sm-util-low-pct", sm_util_low_pct),
        ("--disk-util-high-pct", disk_util_high_pct),
        ("--idle-pct", idle_pct),
    ):
        if not 0 <= value <= 100:
            raise InputError(f"{flag} must be between 0 and 100, got {value}")
    return Thresholds(
        sm_util_low_pct=sm_util_low_pct,
        disk_util_high_pct=disk_util_high_pct,
        idle_activity_pct=idle_pct,
    )


AUTO = "auto"
NOT_DETECTED = (
    "could not detect the instance type from AWS, GCP or Azure metadata (not a cloud VM?); "
    "give --instance TYPE or --price-usd-per-hour"
)


def _detect(provider: str | None, region: str | None) -> DetectedInstance:
    """`--instance auto`: the instance from the cloud's metadata service, said once on stderr."""
    from gpurent.cloud.metadata import base_urls_from_env
    from gpurent.monitor.instance import detect_instance

    if provider or region:
        raise InputError(
            "--instance auto detects the provider and region; drop --provider/--region, "
            "or name the instance"
        )
    detected = detect_instance(base_urls=base_urls_from_env())
    if detected is None:
        raise InputError(NOT_DETECTED)
    err_console.print(
        f"instance: {escape(clean(detected.describe()))}", highlight=False, soft_wrap=True
    )
    return detected


def _price_detected(detected: DetectedInstance, price_usd_per_hour: float | None) -> InstancePrice:
    from gpurent.catalog.sources import load_offers
    from gpurent.monitor.cost import InstancePrice
    from gpurent.monitor.instance import price_detected

    if price_usd_per_hour is not None:  # the given price wins; the catalog only counts GPUs
        try:
            gpu_count = price_detected(load_offers().offers, detected).gpu_count
        except InputError:
            gpu_count = None
        return InstancePrice.given(price_usd_per_hour, gpu_count)
    return price_detected(load_offers().offers, detected)


def _price(
    instance: str | None, provider: str | None, region: str | None, price_usd_per_hour: float | None
) -> InstancePrice | None:
    from gpurent.monitor.cost import InstancePrice, price_from_catalog

    if instance is not None and instance.strip().lower() == AUTO:
        raise InputError(
            "--instance auto works only with the live monitor (a recorded file may come from "
            "another machine); give --instance TYPE or --price-usd-per-hour"
        )
    if instance is None:
        if price_usd_per_hour is not None:
            return InstancePrice.given(price_usd_per_hour)
        if provider or region:
            raise InputError("--provider/--region need --instance TYPE")
        return None
    from gpurent.catalog.sources import load_offers

    # fetched catalogs (`gpurent catalog update`) + the bundled snapshot, as `plan` prices
    offers = load_offers().offers
    catalog = price_from_catalog(offers, instance, provider=provider, region=region)
    if price_usd_per_hour is None:
        return catalog
    return InstancePrice.given(price_usd_per_hour, catalog.gpu_count)  # the GPU count stays


SM_LOW = typer.Option(
    70.0, "--sm-util-low-pct", help="Flag GPUs whose SM utilisation is below this."
)
DISK_HIGH = typer.Option(60.0, "--disk-util-high-pct", help="Flag disks busier than this %util.")
IDLE_PCT = typer.Option(5.0, "--idle-pct", help="A GPU at or below this activity % is idle.")
INSTANCE = typer.Option(
    None,
    "--instance",
    help="Instance type to price from the catalog, e.g. p5.48xlarge (no `auto` here: the "
    "records may come from another machine).",
)
INSTANCE_LIVE = typer.Option(
    None,
    "--instance",
    help="Instance type to price from the catalog, e.g. p5.48xlarge, or `auto`: detect it "
    "(and its provider and region) from the AWS, GCP or Azure metadata service.",
)
PROVIDER = typer.Option(None, "--provider", help="Provider of --instance (aws, gcp, azure, ...).")
REGION = typer.Option(None, "--region", help="Region of --instance (default: the cheapest).")
PRICE = typer.Option(None, "--price-usd-per-hour", help="Instance price instead of the catalog's.")


@monitor_app.callback(invoke_without_command=True)
@cli_errors
def monitor(
    ctx: typer.Context,
    *,
    interval_s: float = typer.Option(1.0, "--interval", help="Seconds between samples."),
    duration_s: float | None = typer.Option(
        None, "--duration", help="Stop after this many seconds."
    ),
    record: str | None = typer.Option(
        None, "--record", help="Record samples to a SQLite file path or a SQLAlchemy URL."
    ),
    retention_days: float = typer.Option(30.0, "--retention-days", help="Delete older records."),
    exporter: bool = typer.Option(
        False, "--exporter", help="Serve Prometheus metrics at /metrics."
    ),
    port: int = typer.Option(9400, "--port", help="Exporter port (0: any free port)."),
    listen: str = typer.Option(
        "127.0.0.1",
        "--listen",
        help="Exporter address (default loopback only; any other needs --token or "
        "--insecure-public).",
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="GPURENT_EXPORTER_TOKEN",
        show_envvar=True,
        help="Bearer token scrapers must send (Authorization: Bearer TOKEN); "
        "16+ characters, e.g. `openssl rand -hex 16`.",
    ),
    insecure_public: bool = typer.Option(
        False,
        "--insecure-public",
        help="Serve a non-loopback --listen address without a token (anyone who can connect "
        "reads the hostname and the cost).",
    ),
    instance: str | None = INSTANCE_LIVE,
    provider: str | None = PROVIDER,
    region: str | None = REGION,
    price_usd_per_hour: float | None = PRICE,
    idle_action: str | None = typer.Option(
        None, "--idle-action", help="Shell command to run after --idle-minutes of idle GPUs."
    ),
    idle_minutes: float = typer.Option(
        30.0, "--idle-minutes", help="Idle minutes before the action."
    ),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="With --duration: a JSON summary at the end; without: a JSON line per row.",
    ),
    fake_gpus: str | None = typer.Option(
        None,
        "--fake-gpus",
        help="Demo: stand-in GPUs from a built-in scenario (busy, idle, "
        "starved, throttled, pcie-downtrained, ampere, lost, no-driver, demo) or a YAML/JSON file.",
    ),
    proc_root: str = typer.Option("/proc", "--proc-root", hidden=True),
    push: str | None = typer.Option(
        None,
        "--push",
        help="Send the samples to a `gpurent serve` at this URL every few seconds "
        "(e.g. http://10.0.0.5:8000); needs the machine's token.",
    ),
    push_token: str | None = typer.Option(
        None,
        "--push-token",
        envvar="GPURENT_PUSH_TOKEN",
        show_envvar=True,
        show_default=False,
        help="The machine token POST /api/machines returned (prefer the variable: a flag "
        "shows in the process list).",
    ),
    machine: str | None = typer.Option(
        None,
        "--machine",
        help="This machine's registered name: the server checks the push token is its token; "
        "also the `machine` label of the exporter's cost metrics.",
    ),
    job: str | None = typer.Option(
        None, "--job", help="Job label of the exporter's cost metrics (budget alert rules)."
    ),
    project: str | None = typer.Option(
        None, "--project", help="Project label of the exporter's cost metrics."
    ),
    sm_util_low_pct: float = SM_LOW,
    disk_util_high_pct: float = DISK_HIGH,
    idle_pct: float = IDLE_PCT,
) -> None:
    """Watch the GPUs and the host live (default), record, export, push to a server, and meter
    the cost."""
    if ctx.invoked_subcommand is not None:
        return
    if not interval_s > 0:
        raise InputError(f"--interval must be positive, got {interval_s}")
    if duration_s is not None and not duration_s >= 0:
        raise InputError(f"--duration must be >= 0, got {duration_s}")
    if idle_action is not None and not idle_minutes > 0:
        raise InputError(f"--idle-minutes must be positive, got {idle_minutes}")
    if not 0 <= port <= 65535:
        raise InputError(f"--port must be 0..65535, got {port}")
    from gpurent.monitor.recorder import check_retention_days

    check_retention_days(retention_days)
    if exporter:
        require("prometheus_client", "monitor")
        from gpurent.monitor.exporter import check_listen

        check_listen(listen, token=token or None, insecure_public=insecure_public)
    thresholds = _thresholds(sm_util_low_pct, disk_util_high_pct, idle_pct)
    labels = _cost_labels(machine, job, project)
    pusher = _pusher(push, push_token, machine)
    detected = None
    if instance is not None and instance.strip().lower() == AUTO:
        detected = _detect(provider, region)
        price: InstancePrice | None = _price_detected(detected, price_usd_per_hour)
    else:
        price = _price(instance, provider, region, price_usd_per_hour)
    session = _build_session(
        fake_gpus=fake_gpus,
        proc_root=proc_root,
        thresholds=thresholds,
        price=price,
        record=record,
        retention_days=retention_days,
        idle_action=idle_action,
        idle_minutes=idle_minutes,
    )
    session.pusher = pusher
    session.cost_labels = labels
    _print_notes(session.open())
    server = None
    if exporter:
        from gpurent.monitor.exporter import Exporter

        try:
            server = Exporter(
                port=port, host=listen, token=token or None, insecure_public=insecure_public
            ).start()
        except OSError as exc:
            session.close()
            raise InputError(f"--port {port}: cannot listen on {listen} ({exc.strerror})") from None
        session.exporter = server
        shown = f"[{listen}]" if ":" in listen else listen
        auth = " (Authorization: Bearer token required)" if token else ""
        err_console.print(
            f"exporter: http://{escape(shown)}:{server.port}/metrics{auth}", highlight=False
        )
    try:
        _run(session, interval_s, duration_s, json_out)
    finally:
        _print_notes(session.close())
        if server is not None:
            server.stop()
    if json_out and duration_s is not None:
        print_json(_summary(session, detected))


def _cost_labels(
    machine: str | None, job: str | None, project: str | None
) -> tuple[tuple[str, str], ...]:
    """The exporter's cost labels from --machine/--job/--project (none when none is given)."""
    from gpurent.monitor.budget import check_name

    given = {"--machine": machine, "--job": job, "--project": project}
    for flag, value in given.items():
        if value is not None:
            check_name(value, flag)
    if job is None and project is None and machine is None:
        return ()
    return (
        ("machine", machine or ""),
        ("gpurent_job", job or ""),
        ("gpurent_project", project or ""),
    )


def _pusher(url: str | None, token: str | None, machine: str | None) -> Any:
    """The push client for --push, or None; the URL and the token are checked here."""
    if url is None:
        return None
    from gpurent.monitor.push import Pusher

    if not url.lower().startswith(("http://", "https://")):
        raise InputError(f"--push {url!r}: give the server's http(s) URL, e.g. http://host:8000")
    if not token:
        raise InputError(
            "--push needs the machine's token: set $GPURENT_PUSH_TOKEN (or --push-token) to the "
            "token POST /api/machines returned"
        )
    return Pusher(url, machine=machine, token=token)


def _build_session(
    *,
    fake_gpus: str | None,
    proc_root: str,
    thresholds: Thresholds,
    price: InstancePrice | None,
    record: str | None,
    retention_days: float,
    idle_action: str | None,
    idle_minutes: float,
) -> Any:
    from gpurent.monitor.exporter import hostname
    from gpurent.monitor.idle import IdleWatcher
    from gpurent.monitor.probes import HostProbe, NvmlProbe
    from gpurent.monitor.session import MonitorSession

    nvml: Any
    if fake_gpus is not None:
        from gpurent.monitor.fake_nvml import FakeNvml
        from gpurent.monitor.scenarios import load_scenario

        try:
            nvml = FakeNvml(load_scenario(fake_gpus))
        except (ValueError, TypeError) as exc:
            raise DataError(f"--fake-gpus {fake_gpus}: {exc}") from None
    else:
        from gpurent.monitor.probes.nvml import load_nvml

        nvml = load_nvml()
        if nvml is None:
            _print_notes(
                [
                    "nvidia-ml-py is not installed (pip install 'gpurent[monitor]'): "
                    "host metrics only"
                ]
            )
    try:
        import psutil

        psutil_module: Any = psutil
    except ImportError:
        psutil_module = None
    recorder = None
    if record is not None:
        from gpurent.monitor.recorder import Recorder

        recorder = Recorder(record, retention_s=retention_days * 86400.0)
    return MonitorSession(
        nvml=NvmlProbe(nvml) if nvml is not None else None,
        host=HostProbe(proc_root=Path(proc_root), psutil_module=psutil_module),
        thresholds=thresholds,
        price=price,
        recorder=recorder,
        hostname=hostname(),
        idle_watcher=IdleWatcher(idle_action, idle_minutes, thresholds=thresholds)
        if idle_action
        else None,
    )


def _run(session: Any, interval_s: float, duration_s: float | None, json_out: bool) -> None:
    from gpurent.monitor.sample import to_rows

    if json_out:

        def on_json(sample: Any, notes: list[str]) -> None:
            _print_notes(notes)
            if duration_s is None:
                for row in to_rows(sample):
                    print_json_line(row)

        session.run(interval_s=interval_s, duration_s=duration_s, on_sample=on_json)
        return
    from rich.live import Live

    from gpurent.report.monitor_live import render

    with Live(console=console, auto_refresh=False, transient=False) as live:

        def on_live(sample: Any, notes: list[str]) -> None:
            _print_notes(notes)
            live.update(render(sample, session.diagnosis(), session.cost()), refresh=True)

        session.run(interval_s=interval_s, duration_s=duration_s, on_sample=on_live)


def _summary(session: Any, detected: DetectedInstance | None = None) -> dict[str, Any]:
    last = session.state.last_sample
    return {
        "samples": session.state.samples_taken,
        "gpus": len(last.gpus) if last is not None else 0,
        "diagnosis": session.diagnosis(),
        "cost": session.cost(),
        "detected_instance": detected,  # `--instance auto` only
        "idle_actions": session.state.idle_events,
        "notes": session.state.notes,
        "recorded_rows": session.recorder.written_rows if session.recorder is not None else None,
        "retention_deleted_rows": session.recorder.retention_deleted_rows
        if session.recorder is not None
        else None,
    }


def _parse_time(flag: str, value: str | None, latest_s: float | None) -> float | None:
    """ISO 8601 (naive means UTC, as the report prints), Unix seconds, or a duration (30m, 2h,
    1d) before the newest record."""
    from gpurent.inputs.times import parse_time

    if value is None:
        return None
    text = value.strip()
    before_s = read_duration_s(text, bare_unit=None)  # a bare number is Unix seconds here
    if before_s is not None:
        return None if latest_s is None else latest_s - before_s
    try:
        return parse_time(text, flag).timestamp()
    except (DataError, ValueError, OverflowError):  # also nan/inf seconds
        raise InputError(
            f"{flag} {value!r}: give an ISO time (2026-11-30T12:00, UTC unless it says), Unix "
            "seconds, or a duration before the newest record (30m, 2h, 1d)"
        ) from None


@monitor_app.command("report")
@cli_errors
def report_cmd(
    *,
    db: str = typer.Option(..., "--db", help="The recorded store: SQLite path or SQLAlchemy URL."),
    since: str | None = typer.Option(
        None, "--since", help="ISO time (UTC unless it says), Unix s, or 2h (before the end)."
    ),
    until: str | None = typer.Option(
        None, "--until", help="ISO time (UTC unless it says) or Unix s."
    ),
    html_file: str | None = typer.Option(None, "--html", help="Write an HTML report here."),
    markdown: bool = typer.Option(False, "--markdown", help="Print Markdown."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    instance: str | None = INSTANCE,
    provider: str | None = PROVIDER,
    region: str | None = REGION,
    price_usd_per_hour: float | None = PRICE,
    sm_util_low_pct: float = SM_LOW,
    disk_util_high_pct: float = DISK_HIGH,
    idle_pct: float = IDLE_PCT,
) -> None:
    """Findings, utilisation timelines and cost over a recorded window.

    Example: gpurent monitor report --db ~/gpu.db --since 2h --html report.html
    """
    from gpurent.monitor.sample import from_rows
    from gpurent.store import open_engine, select_rows  # names the extra if it is missing
    from gpurent.store.db import without_password
    from gpurent.store.samples import time_range

    sa: Any = require("sqlalchemy", "monitor")

    if "://" not in db and not Path(db).expanduser().is_file():
        raise InputError(
            f"--db {db}: no such file; record one with `gpurent monitor --record {db}`"
        )
    thresholds = _thresholds(sm_util_low_pct, disk_util_high_pct, idle_pct)
    price = _price(instance, provider, region, price_usd_per_hour)
    engine = open_engine(db, read_only=True)
    try:
        with engine.connect() as conn:
            _, latest = time_range(conn)
            rows = select_rows(
                conn,
                since_s=_parse_time("--since", since, latest),
                until_s=_parse_time("--until", until, latest),
            )
    except sa.exc.SQLAlchemyError as exc:
        raise DataError(
            f"--db {without_password(db)}: not a gpurent monitor store "
            f"({without_password(str(exc).splitlines()[0])})"
        ) from None
    finally:
        engine.dispose()
    if not rows:
        raise DataError(f"--db {without_password(db)}: no samples in the requested window")
    _emit(
        samples=from_rows(rows),
        thresholds=thresholds,
        price=price,
        html_file=html_file,
        markdown=markdown,
        json_out=json_out,
    )


def _emit(
    *,
    samples: list[Any],
    thresholds: Thresholds,
    price: InstancePrice | None,
    html_file: str | None,
    markdown: bool,
    json_out: bool,
) -> None:
    from gpurent.monitor.cost import meter
    from gpurent.monitor.report import Report, to_markdown
    from gpurent.monitor.rules import diagnose
    from gpurent.report.html import monitor_page

    report = Report(
        diagnosis=diagnose(samples, thresholds),
        cost=meter(samples, price, thresholds) if price is not None else None,
    )
    if html_file is not None:
        files.write_text(html_file, monitor_page(report, samples, thresholds))
        err_console.print(f"wrote {html_file}", highlight=False)
    if json_out:
        print_json(report)
    elif markdown:
        sys.stdout.write(to_markdown(report))
    elif html_file is None:
        _print_findings(report)


def _print_findings(report: Any) -> None:
    from gpurent.report.tables import Column, fit_table

    d = report.diagnosis
    rows = [
        (
            str(g.index),
            *cells(g.name),
            "-" if g.mean_activity_pct is None else f"{g.mean_activity_pct:.0f}%",
            g.activity_source,
            "-" if g.mean_busy_pct is None else f"{g.mean_busy_pct:.0f}%",
            "-" if g.peak_mem_copy_util_pct is None else f"{g.peak_mem_copy_util_pct:.0f}%",
            f"{g.idle_share:.0%}",
        )
        for g in d.gpus
    ]
    columns = (
        Column("GPU"),
        Column("name", priority=1),
        Column("activity"),
        Column("source", priority=2),
        Column("busy", priority=1),
        Column("peak mem-copy", priority=3),
        Column("idle"),
    )
    table, _ = fit_table(columns, rows, console.width, title=f"{d.samples} samples")
    console.print(table)
    if report.cost is not None:
        c = report.cost
        console.print(
            f"cost: spent ${c.spent_usd:.2f}, idle waste ${c.idle_wasted_usd:.2f}, under-use "
            f"waste ${c.underused_wasted_usd:.2f} ({c.wasted_share:.0%}); "
            f"${c.projected_monthly_usd:,.0f}/month ({escape(clean(c.label))})",
            highlight=False,
        )
    if not d.findings:
        console.print("no findings: the GPUs were used well in this window")
    for f in d.findings:
        summary = escape(clean(f.summary))
        console.print(f"[bold]{f.severity.value} {f.kind.value}[/]: {summary}", highlight=False)
        for e in f.evidence:
            console.print(f"    evidence: {escape(clean(e))}", highlight=False)
        console.print(f"    advice: {escape(clean(f.advice))}", highlight=False)


@monitor_app.command("diagnose")
@cli_errors
def diagnose_cmd(
    file: str = typer.Argument(..., help="Recorded samples: CSV with a header, or JSON lines."),
    *,
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    markdown: bool = typer.Option(False, "--markdown", help="Print Markdown."),
    html_file: str | None = typer.Option(None, "--html", help="Write an HTML report here."),
    instance: str | None = INSTANCE,
    provider: str | None = PROVIDER,
    region: str | None = REGION,
    price_usd_per_hour: float | None = PRICE,
    sm_util_low_pct: float = SM_LOW,
    disk_util_high_pct: float = DISK_HIGH,
    idle_pct: float = IDLE_PCT,
) -> None:
    """Diagnose a recorded file of samples (columns: docs/monitor.md).

    Example: gpurent monitor diagnose samples.csv --instance p4d.24xlarge
    """
    from gpurent.monitor.sample_files import read_samples

    thresholds = _thresholds(sm_util_low_pct, disk_util_high_pct, idle_pct)
    price = _price(instance, provider, region, price_usd_per_hour)
    samples = read_samples(Path(file))
    _emit(
        samples=samples,
        thresholds=thresholds,
        price=price,
        html_file=html_file,
        markdown=markdown,
        json_out=json_out,
    )
