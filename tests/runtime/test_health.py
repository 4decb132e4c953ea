"""Health checks: a fake NVML module, disk, network, process and progress."""

from __future__ import annotations

import socket
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from gpurent.runtime.health import (
    ProgressTracker,
    Status,
    XidTracker,
    check_disk,
    check_endpoints,
    check_gpus,
    check_process,
    parse_xids,
    worst,
)


class NVMLError(Exception):
    pass


def fake_nvml(
    temps: list[float], ecc: list[int], reasons: list[int], ecc_supported: bool = True
) -> Any:
    def total_ecc(handle: int, kind: int, counter: int) -> int:
        assert (kind, counter) == (1, 0)
        if not ecc_supported:
            raise NVMLError("not supported")
        return ecc[handle]

    return SimpleNamespace(
        NVMLError=NVMLError,
        NVML_TEMPERATURE_GPU=0,
        NVML_MEMORY_ERROR_TYPE_UNCORRECTED=1,
        NVML_VOLATILE_ECC=0,
        nvmlDeviceGetCount=lambda: len(temps),
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetTemperature=lambda h, sensor: temps[h],
        nvmlDeviceGetTotalEccErrors=total_ecc,
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: reasons[h],
    )


def test_no_nvml_is_skipped_not_failed() -> None:
    result = check_gpus(None)
    assert result.status is Status.OK and "no NVML: skipped" in result.reason


def test_healthy_gpus() -> None:
    result = check_gpus(fake_nvml([60, 61], [0, 0], [0x1, 0]), expected_count=2)
    assert result.status is Status.OK and "2 GPUs" in result.reason


def test_missing_gpu_and_ecc_fail_hot_and_throttled_warn() -> None:
    assert check_gpus(fake_nvml([60], [0], [0]), expected_count=8).status is Status.FAIL
    ecc = check_gpus(fake_nvml([60, 60], [0, 3], [0, 0]))
    assert ecc.status is Status.FAIL and "GPU 1 has 3 uncorrected ECC" in ecc.reason
    hot = check_gpus(fake_nvml([90], [0], [0x40]))
    assert hot.status is Status.WARN and "90 C" in hot.reason and "0x40" in hot.reason
    geforce = check_gpus(fake_nvml([50], [0], [0], ecc_supported=False))
    assert geforce.status is Status.OK


def test_xids_application_warn_others_fail() -> None:
    log = "NVRM: Xid (PCI:0000:3b:00): 13, pid=1\nfoo\nNVRM: Xid (PCI:0000:3b:00): 79, pid=2\n"
    assert parse_xids(log) == [13, 79]
    assert check_gpus(fake_nvml([50], [0], [0]), new_xids=[13]).status is Status.WARN
    assert check_gpus(fake_nvml([50], [0], [0]), new_xids=[79]).status is Status.FAIL


def test_xid_tracker_reports_only_new_lines() -> None:
    text = ["NVRM: Xid (PCI:0): 79, old\n"]
    tracker = XidTracker(lambda: "".join(text))
    assert tracker.new_xids() == []
    text.append("NVRM: Xid (PCI:0): 48, new\n")
    assert tracker.new_xids() == [48]
    assert tracker.new_xids() == []
    assert XidTracker(lambda: None).new_xids() == []


def test_disk(tmp_path: Path) -> None:
    assert check_disk(tmp_path / "not-yet", fail_below_bytes=1).status is Status.OK
    assert check_disk(tmp_path, fail_below_bytes=2**62).status is Status.FAIL
    warn = check_disk(tmp_path, fail_below_bytes=1, warn_below_bytes=2**62)
    assert warn.status is Status.WARN and "GiB free" in warn.reason


def test_endpoints_real_sockets() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        up = check_endpoints([f"127.0.0.1:{port}", f"http://127.0.0.1:{port}/x"], timeout_s=1.0)
        assert up.status is Status.OK
    down = check_endpoints(["127.0.0.1:9"], timeout_s=1.0)
    assert down.status is Status.FAIL and "127.0.0.1:9" in down.reason
    assert check_endpoints([]).status is Status.OK


def test_process() -> None:
    running = SimpleNamespace(pid=5, poll=lambda: None)
    crashed = SimpleNamespace(pid=5, poll=lambda: 137)
    assert check_process(running).status is Status.OK
    assert check_process(crashed).status is Status.FAIL


def test_progress_detects_a_hang(tmp_path: Path) -> None:
    now = [0.0]
    hb = tmp_path / "hb"
    tracker = ProgressTracker(hb, hang_timeout_s=60.0, clock=lambda: now[0])
    now[0] = 30.0
    assert tracker.check().status is Status.OK  # slow start tolerated
    hb.write_text("10\n")
    assert tracker.check().status is Status.OK and tracker.best_step == 10
    now[0] = 89.0
    assert tracker.check().status is Status.OK
    now[0] = 91.0
    hung = tracker.check()
    assert hung.status is Status.FAIL and "no heartbeat for 61 s" in hung.reason
    hb.write_text("11\n")
    assert tracker.check().status is Status.OK and tracker.best_step == 11


def test_worst() -> None:
    assert worst([]) is Status.OK
    results = [check_gpus(None), check_disk("/", fail_below_bytes=2**62)]
    assert worst(results) is Status.FAIL
