"""Notice watchers against local servers that answer like the documented metadata endpoints."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpurent.errors import InputError
from gpurent.runtime import CheckpointManager
from gpurent.runtime.notices import (
    AwsWatcher,
    AzureWatcher,
    GcpWatcher,
    NoticeMonitor,
    SigtermWatcher,
    watch_notices,
    watchers_for,
)

from .metadata_server import MetadataState, metadata_server


@pytest.fixture()
def server() -> Iterator[tuple[str, MetadataState]]:
    with metadata_server() as s:
        yield s


def test_aws_uses_imdsv2_token_then_instance_action(server: tuple[str, MetadataState]) -> None:
    url, state = server
    watcher = AwsWatcher(url)
    assert watcher.poll() is None
    state.aws_action = {"action": "terminate", "time": "2026-11-30T12:00:00Z"}
    notice = watcher.poll()
    assert notice is not None and notice.kind == "spot-terminate" and notice.grace_s == 120.0
    assert notice.terminating and "2026-11-30T12:00:00Z" in notice.detail
    assert state.requests.count(("PUT", "/latest/api/token")) == 1  # token cached


def test_aws_rebalance_is_a_hint_not_a_stop(server: tuple[str, MetadataState]) -> None:
    url, state = server
    state.aws_rebalance = {"noticeTime": "2026-11-30T11:58:00Z"}
    notice = AwsWatcher(url).poll()
    assert notice is not None and notice.kind == "rebalance" and not notice.terminating


def test_aws_refetches_an_expired_token(server: tuple[str, MetadataState]) -> None:
    url, state = server
    watcher = AwsWatcher(url)
    watcher.poll()
    state.token = "rotated"
    state.aws_action = {"action": "stop", "time": "t"}
    notice = watcher.poll()
    assert notice is not None and notice.kind == "spot-stop"


def test_gcp_preempted(server: tuple[str, MetadataState]) -> None:
    url, state = server
    watcher = GcpWatcher(url)
    assert watcher.poll() is None
    state.gcp_preempted = True
    notice = watcher.poll()
    assert notice is not None and notice.provider == "gcp" and notice.grace_s == 30.0


def test_azure_preempt_event_only(server: tuple[str, MetadataState]) -> None:
    url, state = server
    watcher = AzureWatcher(url)
    state.azure_events = [{"EventId": "a", "EventType": "Freeze", "NotBefore": "x"}]
    assert watcher.poll() is None
    state.azure_events.append({"EventId": "b", "EventType": "Preempt", "NotBefore": "soon"})
    notice = watcher.poll()
    assert notice is not None and notice.kind == "preempt" and "event b" in notice.detail


def test_sigterm_watcher_restores_previous_handler() -> None:
    before = signal.getsignal(signal.SIGTERM)
    watcher = SigtermWatcher().install()
    try:
        assert watcher.poll() is None
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        notice = watcher.poll()
        assert notice is not None and notice.kind == "sigterm"
    finally:
        watcher.uninstall()
    assert signal.getsignal(signal.SIGTERM) == before


def test_auto_detects_the_answering_provider(server: tuple[str, MetadataState]) -> None:
    url, _ = server
    dead = "http://127.0.0.1:9"  # discard port: connection refused
    found = watchers_for("auto", base_urls={"aws": dead, "gcp": url, "azure": url})
    assert [w.name for w in found] == ["gcp"]
    assert watchers_for("none") == []
    with pytest.raises(InputError, match="--notice"):
        watchers_for("oracle")


def test_monitor_reports_each_notice_once_and_survives_unreachable(
    server: tuple[str, MetadataState],
) -> None:
    url, state = server
    seen = []
    monitor = NoticeMonitor([AwsWatcher("http://127.0.0.1:9"), GcpWatcher(url)], seen.append)
    assert monitor.poll_once() == []
    state.gcp_preempted = True
    assert len(monitor.poll_once()) == 1
    assert monitor.poll_once() == []
    assert [n.provider for n in seen] == ["gcp"]


def test_notice_makes_the_loop_save_and_stop(
    server: tuple[str, MetadataState], tmp_path: Path
) -> None:
    url, state = server
    mgr = CheckpointManager(tmp_path)
    monitor = watch_notices(mgr, [GcpWatcher(url)], poll_s=0.02)
    try:
        step = 0
        deadline = time.monotonic() + 5.0
        while not mgr.stop_requested and time.monotonic() < deadline:
            step += 1
            if step == 10:
                state.gcp_preempted = True
            if mgr.should_save(step):
                mgr.save_for_exit({"step": step}, step)
            time.sleep(0.005)
        assert mgr.should_save(step)
        mgr.save_for_exit({"step": step}, step)
    finally:
        monitor.stop()
    loaded = CheckpointManager(tmp_path).load_latest()
    assert loaded is not None and loaded[0] == step >= 10
    assert mgr.stop_reason is not None and mgr.stop_reason.startswith("gcp preempted")
