"""One NVML seam (`gpurent.nvml`): the monitor and runtime rooms share its reads, thresholds and
Xid table, and nothing else in src/ imports pynvml or defines the table."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from gpurent import nvml
from gpurent.monitor.fake_nvml import FakeNvml
from gpurent.monitor.probes.nvml import NvmlProbe
from gpurent.monitor.rules import FindingKind, Severity, Thresholds, diagnose
from gpurent.monitor.sample import GpuSample, HostSample, Sample
from gpurent.monitor.scenarios import SCENARIOS
from gpurent.runtime.health import Status, check_gpus

SRC = Path(nvml.__file__).parent


def _xid_severity_in_rules(xid: int) -> Severity:
    window = [
        Sample(
            timestamp_s=float(i),
            host=HostSample(),
            gpus=(GpuSample(index=0, sm_util_pct=90.0, xids=(xid,)),),
        )
        for i in range(3)
    ]
    (finding,) = [f for f in diagnose(window).findings if f.kind is FindingKind.XID]
    return finding.severity


def test_rules_and_health_classify_every_xid_alike() -> None:
    gpu_free = FakeNvml({"gpus": []})
    gpu_free.nvmlInit()
    for xid in range(256):
        health = check_gpus(gpu_free, new_xids=[xid]).status
        rules = _xid_severity_in_rules(xid)
        application = nvml.is_application_xid(xid)
        assert health is (Status.WARN if application else Status.FAIL), xid
        assert rules is (Severity.WARNING if application else Severity.CRITICAL), xid
    assert {x for x in range(256) if nvml.is_application_xid(x)} == {13, 31, 43, 45, 68}


def _defines(tree: ast.Module, name: str) -> bool:
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        for node in ast.walk(tree)
    )


def _imports_pynvml(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "pynvml" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "pynvml":
            return True
    return False


def test_xid_table_and_pynvml_import_live_in_the_seam_only() -> None:
    defining, importing = set(), set()
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(SRC).as_posix()
        if _defines(tree, "APPLICATION_XIDS"):
            defining.add(rel)
        if _imports_pynvml(tree):
            importing.add(rel)
    assert defining == {"nvml.py"}
    assert importing == {"nvml.py"}


def test_health_and_rules_share_the_temperature_threshold() -> None:
    default = inspect.signature(check_gpus).parameters["temp_warn_c"].default
    assert default == Thresholds().temperature_high_c == nvml.TEMP_WARN_C


def test_health_and_probe_read_the_monitor_stand_in_alike() -> None:
    probe_nvml = FakeNvml(SCENARIOS["throttled"], clock=lambda: 0.0)
    probe = NvmlProbe(probe_nvml, clock=lambda: 0.0)
    probe.open()
    (sample,), _notes = probe.read()
    probe.close()
    health_nvml = FakeNvml(SCENARIOS["throttled"], clock=lambda: 0.0)
    health_nvml.nvmlInit()
    result = check_gpus(health_nvml, expected_count=1)
    assert sample.throttle_reasons is not None and sample.temperature_c is not None
    throttled = bool(sample.throttle_reasons & nvml.THROTTLE_WARN_MASK)
    hot = sample.temperature_c > nvml.TEMP_WARN_C
    assert throttled or hot  # the scenario is one the health check must flag
    assert result.status is Status.WARN
    assert (f"clock event reasons {sample.throttle_reasons:#x}" in result.reason) is throttled
    assert (f"at {sample.temperature_c:.0f} C" in result.reason) is hot
