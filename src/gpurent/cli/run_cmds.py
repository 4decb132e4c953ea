"""CLI verbs of the run room: `gpurent run [options] -- COMMAND...`."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import typer

from gpurent.cli.common import cli_errors, console
from gpurent.errors import InputError

_NOTICE_URL_ENV = {
    "aws": "GPURENT_AWS_METADATA_URL",
    "gcp": "GPURENT_GCP_METADATA_URL",
    "azure": "GPURENT_AZURE_METADATA_URL",
}


def _echo_human(record: dict[str, Any]) -> None:
    fields = " ".join(f"{k}={v}" for k, v in record.items() if k not in {"event", "time_unix_s"})
    color = {"health": "cyan", "notice": "yellow", "restart": "yellow", "rebuild": "red"}.get(
        record["event"], "bold"
    )
    console.print(f"[{color}]gpurent run[/] {record['event']}: {fields}", highlight=False)


def _echo_json(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record, separators=(",", ":")) + "\n")
    sys.stdout.flush()


@cli_errors
def run_command(
    ctx: typer.Context,
    checkpoint_dir: str = typer.Option(
        None,
        "--checkpoint-dir",
        help="Where the job checkpoints; passed as $GPURENT_CHECKPOINT_DIR.",
    ),
    health_interval: float = typer.Option(
        300.0, "--health-interval", help="Seconds between health checks."
    ),
    max_failures: int = typer.Option(
        3, "--max-failures", help="Consecutive failed attempts before the rebuild action."
    ),
    rebuild_cmd: str = typer.Option(None, "--rebuild-cmd", help="Shell command that rebuilds."),
    rebuild_webhook: str = typer.Option(
        None, "--rebuild-webhook", help="URL to POST a JSON rebuild request to."
    ),
    log_file: str = typer.Option(None, "--log", help="Append every event as JSON lines here."),
    hang_timeout: float = typer.Option(
        None, "--hang-timeout", help="Seconds without heartbeat progress that mean a hung job."
    ),
    heartbeat_file: str = typer.Option(
        None, "--heartbeat-file", help="File the job writes its step to ($GPURENT_HEARTBEAT_FILE)."
    ),
    notice: str = typer.Option(
        "auto", "--notice", help="Interruption notices to watch: aws, gcp, azure, auto, none."
    ),
    backoff: float = typer.Option(
        10.0, "--backoff", help="Base seconds between restarts (doubles each failure)."
    ),
    nproc_per_node: int = typer.Option(
        None, "--nproc-per-node", help="Run through torchrun with this many processes."
    ),
    endpoint: list[str] = typer.Option(
        [], "--endpoint", help="host:port or URL that must stay reachable (repeatable)."
    ),
    min_free_gib: float = typer.Option(
        1.0, "--min-free-gib", help="Fail the disk check below this free space (GiB)."
    ),
    poll: float = typer.Option(1.0, "--poll", help="Seconds between process/notice polls."),
    as_json: bool = typer.Option(False, "--json", help="Events as JSON lines on stdout."),
) -> None:
    """Supervise a training command: health checks, restarts from checkpoints, rebuilds.

    Example: gpurent run --checkpoint-dir ckpt --heartbeat-file hb --hang-timeout 600 -- python
    train.py. Exit code: 0 when the command succeeded, 75 when stopped by an interruption
    notice, 1 after the failure limit.
    """
    from gpurent.runtime import health, notices
    from gpurent.runtime.supervisor import EventLog, Supervisor, SupervisorConfig, torchrun_argv

    command = list(ctx.args)
    if not command:
        raise InputError("no command to run; put it after `--`: gpurent run -- python train.py")
    if max_failures < 1 or health_interval <= 0 or backoff < 0 or poll <= 0:
        raise InputError(
            "--max-failures must be >= 1, --health-interval and --poll > 0, --backoff >= 0"
        )
    if hang_timeout is not None and heartbeat_file is None:
        raise InputError(
            "--hang-timeout needs --heartbeat-file, the file the job writes its step to"
        )
    base_urls = {k: os.environ[v] for k, v in _NOTICE_URL_ENV.items() if v in os.environ}
    watchers: list[notices.NoticeWatcher] = notices.watchers_for(notice, base_urls=base_urls)
    sigterm = notices.SigtermWatcher().install()
    watchers.append(sigterm)
    monitor = notices.NoticeMonitor(watchers, lambda n: None)

    nvml = health.load_nvml()
    xids = health.XidTracker() if nvml is not None else None
    checks = [
        lambda: health.check_gpus(nvml, new_xids=xids.new_xids() if xids else ()),
        lambda: health.check_endpoints(endpoint),
    ]
    if checkpoint_dir and "://" not in checkpoint_dir:
        checks.append(
            lambda: health.check_disk(checkpoint_dir, fail_below_bytes=int(min_free_gib * 2**30))
        )
    config = SupervisorConfig(
        command=tuple(torchrun_argv(command, nproc_per_node)),
        checkpoint_dir=checkpoint_dir,
        heartbeat_file=heartbeat_file,
        health_interval_s=health_interval,
        hang_timeout_s=hang_timeout,
        max_failures=max_failures,
        backoff_base_s=backoff,
        poll_s=poll,
        rebuild_cmd=rebuild_cmd,
        rebuild_webhook=rebuild_webhook,
    )
    log = EventLog(log_file, echo=_echo_json if as_json else _echo_human)
    try:
        log.emit("watching", notices=[w.name for w in watchers])
        outcome = Supervisor(config, log=log, checks=checks, poll_notices=monitor.poll_once).run()
    finally:
        log.close()
        sigterm.uninstall()
    raise typer.Exit(outcome.cli_exit_code)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the root app."""
    app.command(
        "run",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )(run_command)
