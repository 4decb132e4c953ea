"""CLI verbs of the run room: `gpurent run [options] -- COMMAND...`."""

from __future__ import annotations

import json
import math
import queue
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpurent.cli.common import checked, cli_errors, console, fail
from gpurent.errors import InputError
from gpurent.inputs import values as v

if TYPE_CHECKING:
    from gpurent.runtime.health import HealthResult
    from gpurent.runtime.joblock import RunLock
    from gpurent.runtime.jobsync import JobSync
    from gpurent.runtime.notices import NoticeWatcher, SigtermWatcher
    from gpurent.runtime.rendezvous import Rendezvous
    from gpurent.runtime.supervisor import EventLog, Outcome, SupervisorConfig


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
@checked(
    health_interval=v.bounded(v.positive, most=v.MAX_SECONDS),
    max_failures=v.bounded(v.positive_int, most=100),
    hang_timeout=v.bounded(v.positive, most=v.MAX_SECONDS),
    backoff=v.bounded(v.non_negative, most=86_400),
    sync_timeout=v.bounded(v.positive, most=v.MAX_SECONDS),
    min_free_gib=v.non_negative,
    poll=v.bounded(v.positive, most=3600),
)
def run_command(  # noqa: PLR0917 (typer: one parameter per option)
    ctx: typer.Context,
    checkpoint_dir: Annotated[
        str | None,
        typer.Option(help="Where the job checkpoints; passed as $GPURENT_CHECKPOINT_DIR."),
    ] = None,
    health_interval: Annotated[float, typer.Option(help="Seconds between health checks.")] = 300.0,
    max_failures: Annotated[
        int, typer.Option(help="Consecutive failed attempts before the rebuild action.")
    ] = 3,
    rebuild_cmd: Annotated[str | None, typer.Option(help="Shell command that rebuilds.")] = None,
    rebuild_webhook: Annotated[
        str | None, typer.Option(help="URL to POST a JSON rebuild request to.")
    ] = None,
    log_file: Annotated[
        str | None, typer.Option("--log", help="Append every event as JSON lines here.")
    ] = None,
    hang_timeout: Annotated[
        float | None,
        typer.Option(help="Seconds without heartbeat progress that mean a hung job."),
    ] = None,
    heartbeat_file: Annotated[
        str | None,
        typer.Option(help="File the job writes its step to ($GPURENT_HEARTBEAT_FILE)."),
    ] = None,
    notice: Annotated[
        str, typer.Option(help="Interruption notices to watch: aws, gcp, azure, auto, none.")
    ] = "auto",
    backoff: Annotated[
        float, typer.Option(help="Base seconds between restarts (doubles each failure).")
    ] = 10.0,
    nproc_per_node: Annotated[
        str | None,
        typer.Option(help="Run through torchrun with N processes per node, or auto (GPUs)."),
    ] = None,
    nodes: Annotated[
        str | None,
        typer.Option(
            help="Multi-node: auto (the engine's variables: SkyPilot, dstack, Slurm, torchrun) "
            "or N, checked against them; one gpurent run per node."
        ),
    ] = None,
    sync_dir: Annotated[
        str | None,
        typer.Option(
            help="Directory every node sees, for whole-job restarts "
            "(default CHECKPOINT_DIR/.gpurent-job/JOB_ID)."
        ),
    ] = None,
    sync_timeout: Annotated[
        float, typer.Option(help="Seconds to wait for every node to join an attempt.")
    ] = 600.0,
    endpoint: Annotated[
        list[str] | None,
        typer.Option(help="host:port or URL that must stay reachable (repeatable)."),
    ] = None,
    min_free_gib: Annotated[
        float, typer.Option(help="Fail the disk check below this free space (GiB).")
    ] = 1.0,
    poll: Annotated[float, typer.Option(help="Seconds between process/notice polls.")] = 1.0,
    grace: Annotated[
        float, typer.Option(help="Seconds between SIGTERM and SIGKILL when stopping the job.")
    ] = 30.0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Events as JSON lines on stdout.")
    ] = False,
) -> None:
    """Supervise a training command: health checks, restarts from checkpoints, rebuilds.

    Example: gpurent run --checkpoint-dir ckpt --heartbeat-file hb --hang-timeout 600 -- python
    train.py. Exit code: 0 when the command succeeded, 75 when stopped by an interruption
    notice or a signal (SIGTERM, SIGINT, SIGHUP: forwarded to the job), 1 after the failure
    limit (the message names the rule that fired), 2 bad input. One supervisor per
    --checkpoint-dir (a lock); a job left behind by a killed supervisor is stopped first.
    """
    from gpurent.cloud.metadata import base_urls_from_env
    from gpurent.runtime import health, joblock, notices
    from gpurent.runtime.supervisor import EventLog, SupervisorConfig, torchrun_argv

    command = list(ctx.args)
    if not command:
        raise InputError("no command to run; put it after `--`: gpurent run -- python train.py")
    if max_failures < 1 or health_interval <= 0 or backoff < 0 or poll <= 0:
        raise InputError(
            "--max-failures must be >= 1, --health-interval and --poll > 0, --backoff >= 0"
        )
    if not (math.isfinite(grace) and grace >= 0):
        raise InputError(f"--grace must be a finite number of seconds >= 0, got {grace}")
    if hang_timeout is not None and heartbeat_file is None:
        raise InputError(
            "--hang-timeout needs --heartbeat-file, the file the job writes its step to"
        )
    # From here on SIGTERM, SIGINT and SIGHUP are notices (forwarded to the job's process group,
    # never a traceback); one that comes before the job starts stops the run before it starts.
    signals = notices.SigtermWatcher().install((signal.SIGTERM, signal.SIGINT, signal.SIGHUP))
    try:
        rdzv = _rendezvous(nodes, nproc_per_node)
        sync = _job_sync(rdzv, checkpoint_dir, sync_dir, sync_timeout)
        procs = None
        if rdzv is None and nproc_per_node is not None:
            procs = _count(nproc_per_node, "--nproc-per-node")
        config = SupervisorConfig(
            command=tuple(torchrun_argv(command, procs if rdzv is None else None, rdzv)),
            checkpoint_dir=checkpoint_dir,
            heartbeat_file=heartbeat_file,
            health_interval_s=health_interval,
            hang_timeout_s=hang_timeout,
            max_failures=max_failures,
            backoff_base_s=backoff,
            poll_s=poll,
            term_grace_s=grace,
            rebuild_cmd=rebuild_cmd,
            rebuild_webhook=rebuild_webhook,
        )
        watchers = notices.watchers_for(notice, base_urls=base_urls_from_env())
        checks = _health_checks(health, endpoint or [], checkpoint_dir, min_free_gib)
        local = checkpoint_dir if _is_local(checkpoint_dir) else None
        if local and rdzv is not None and rdzv.nnodes > 1:  # nodes may share the directory
            local = str(Path(local) / f".gpurent-node-{rdzv.node_rank}")
        lock = joblock.RunLock(local) if local else None
        log = EventLog(log_file, echo=_echo_json if as_json else _echo_human)
        if rdzv is not None:
            log.emit(
                "rendezvous",
                source=rdzv.source,
                node=rdzv.node_rank,
                nnodes=rdzv.nnodes,
                master=f"{rdzv.master_addr}:{rdzv.master_port}",
                nproc_per_node=rdzv.nproc_per_node,
                sync_dir=None if sync is None else str(sync.directory),
            )
        outcome = _supervise(
            config, log, signals=signals, watchers=watchers, checks=checks, lock=lock, sync=sync
        )
    finally:
        signals.uninstall()
    if outcome.status in {"gave_up", "rebuilt"}:
        what = "gave up" if outcome.status == "gave_up" else "ran the rebuild action"
        raise fail(
            f"{what} after {outcome.attempts} attempts (rule {outcome.rule}: {outcome.reason})",
            outcome.cli_exit_code,
        )
    raise typer.Exit(outcome.cli_exit_code)


def _count(raw: str, flag: str) -> int:
    most = 1024 if flag == "--nproc-per-node" else 100_000
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"{flag} must be auto or a whole number, got {raw[:40]!r}") from None
    if not 1 <= value <= most:
        raise InputError(f"{flag} must be between 1 and {most}, got {value}")
    return value


def _rendezvous(nodes: str | None, nproc_per_node: str | None) -> Rendezvous | None:
    """This node's rendezvous when --nodes was given (or --nproc-per-node auto), else None."""
    import os

    from gpurent.runtime import rendezvous

    auto_procs = nproc_per_node is not None and nproc_per_node.strip().lower() == "auto"
    if nodes is None and not auto_procs:
        return None
    wanted = None if nodes is None or nodes.strip().lower() == "auto" else _count(nodes, "--nodes")
    procs = (
        None if nproc_per_node is None or auto_procs else _count(nproc_per_node, "--nproc-per-node")
    )
    gpus = rendezvous.count_nvidia_gpus()
    if nodes is None:  # --nproc-per-node auto alone: one node, as many processes as GPUs
        try:
            per_node = rendezvous.detect(os.environ, local_gpus=gpus).nproc_per_node
        except InputError:  # stray multi-node variables do not matter on one node
            visible = {k: v for k, v in os.environ.items() if k == "CUDA_VISIBLE_DEVICES"}
            per_node = rendezvous.detect(visible, local_gpus=gpus).nproc_per_node
        return rendezvous.detect({}, nodes=1, nproc_per_node=per_node)
    return rendezvous.detect(os.environ, nodes=wanted, nproc_per_node=procs, local_gpus=gpus)


def _job_sync(
    rdzv: Rendezvous | None, checkpoint_dir: str | None, sync_dir: str | None, timeout_s: float
) -> JobSync | None:
    """The whole-job restart directory of a multi-node run; None on one node."""
    from gpurent.runtime.jobsync import JobSync

    if rdzv is None or rdzv.nnodes == 1:
        if sync_dir is not None:
            raise InputError(
                "--sync-dir is for multi-node runs (--nodes), and this run has one node"
            )
        return None
    if sync_dir is None:
        if not _is_local(checkpoint_dir):
            raise InputError(
                "a multi-node run needs --sync-dir, a directory every node sees, when "
                "--checkpoint-dir is missing or a URL"
            )
        job = rdzv.job_id or f"{rdzv.master_addr}-{rdzv.master_port}"
        sync_dir = str(Path(str(checkpoint_dir)) / ".gpurent-job" / _safe_name(job))
    return JobSync(sync_dir, node_rank=rdzv.node_rank, nnodes=rdzv.nnodes, timeout_s=timeout_s)


def _safe_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)[:100] or "job"


def _is_local(checkpoint_dir: str | None) -> bool:
    return bool(checkpoint_dir) and "://" not in str(checkpoint_dir)


def _health_checks(
    health: Any, endpoints: list[str], checkpoint_dir: str | None, min_free_gib: float
) -> list[Callable[[], HealthResult]]:
    nvml = health.load_nvml()
    xids = health.XidTracker() if nvml is not None else None
    checks: list[Callable[[], HealthResult]] = [
        lambda: health.check_gpus(nvml, new_xids=xids.new_xids() if xids else ()),
        lambda: health.check_endpoints(endpoints),
    ]
    if checkpoint_dir and _is_local(checkpoint_dir):
        checks.append(
            lambda: health.check_disk(checkpoint_dir, fail_below_bytes=int(min_free_gib * 2**30))
        )
    return checks


def _supervise(
    config: SupervisorConfig,
    log: EventLog,
    *,
    signals: SigtermWatcher,
    watchers: list[NoticeWatcher],
    checks: list[Callable[[], HealthResult]],
    lock: RunLock | None,
    sync: JobSync | None = None,
) -> Outcome:
    """Run the supervisor: notices on their own thread, the lock held, orphans reaped."""
    from gpurent.runtime import joblock, notices
    from gpurent.runtime.supervisor import Supervisor

    pending: queue.SimpleQueue[notices.Notice] = queue.SimpleQueue()
    # metadata polls run on their own thread: a slow or junk-answering server never delays
    # noticing that the job exited
    monitor = notices.NoticeMonitor(watchers, pending.put, poll_s=config.poll_s)

    def poll_notices() -> list[notices.Notice]:
        out: list[notices.Notice] = []
        while not pending.empty():
            out.append(pending.get_nowait())
        if (received := signals.poll()) is not None:
            out.append(received)
        return out

    reap = None
    try:
        if lock is not None:
            lock.acquire()
        reap = joblock.reap_any if joblock.become_subreaper() else None
        log.emit("watching", notices=[*(w.name for w in watchers), "signals"])
        monitor.start()
        supervisor = Supervisor(
            config,
            log=log,
            checks=checks,
            poll_notices=poll_notices,
            lock=lock,
            reap=reap,
            sync=sync,
        )
        return supervisor.run()
    finally:
        monitor.stop(timeout_s=0.5)
        if reap is not None:
            reap()
            joblock.become_subreaper(False)
        if lock is not None:
            lock.release()
        log.close()


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the root app."""
    app.command(
        "run",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )(run_command)
