from __future__ import annotations

from pathlib import Path

from gpurent.monitor.fake_nvml import FakeNvml
from gpurent.monitor.probes import NvmlProbe
from gpurent.monitor.scenarios import SCENARIOS

from .conftest import Clock, host_probe, run_probe, write_proc


def test_busy_h100_reads_gpm_and_tags_sources(clock: Clock) -> None:
    samples, notes = run_probe(SCENARIOS["busy"], clock, steps=3)
    assert notes == []
    first, last = samples[0].gpus[0], samples[-1].gpus[0]
    assert len(samples[-1].gpus) == 8
    assert first.sm_util_pct is None  # GPM needs two samples
    assert last.sm_util_pct == 82.0 and last.source_of("sm_util_pct") == "nvml-gpm"
    assert last.gpu_busy_pct == 100.0 and last.source_of("gpu_busy_pct") == "nvml"
    assert last.memory_used_mib == 71000.0 and last.power_w == 610.0
    assert last.pcie_gen == last.pcie_gen_max == 5
    assert abs((last.pcie_rx_mb_per_s or 0) - 2500.0) < 1e-6  # MiB/s from GPM back to MB/s
    assert last.processes[0].pid == 4242


def test_ampere_without_gpm_never_fills_sm_util(clock: Clock) -> None:
    samples, notes = run_probe(SCENARIOS["ampere"], clock, steps=3)
    assert any("no GPM" in n for n in notes)
    for s in samples:
        for g in s.gpus:
            assert g.sm_util_pct is None
            assert g.gpu_busy_pct == 100.0
    # PCIe throughput falls back to the NVML counter (KB/s -> MB/s)
    assert samples[-1].gpus[0].pcie_rx_mb_per_s == 2500.0
    assert samples[-1].gpus[0].source_of("pcie_rx_mb_per_s") == "nvml"


def test_not_supported_and_no_permission_are_said_once(clock: Clock) -> None:
    scenario = {
        "gpus": [
            {
                "name": "X",
                "gpm": False,
                "unsupported": ["ecc", "power"],
                "no_permission": ["processes"],
            }
        ]
    }
    samples, notes = run_probe(scenario, clock, steps=4)
    assert sum("ECC counters: not supported" in n for n in notes) == 1
    assert sum("processes: no permission" in n for n in notes) == 1
    g = samples[-1].gpus[0]
    assert g.ecc_uncorrected is None and g.power_w is None and g.temperature_c == 35.0


def test_gpu_lost_mid_run_keeps_other_gpus_and_reports_xid(clock: Clock) -> None:
    samples, notes = run_probe(SCENARIOS["lost"], clock, steps=5)
    assert [g.lost for g in samples[0].gpus] == [False, False]
    assert [g.lost for g in samples[-1].gpus] == [False, True]
    assert samples[-1].gpus[0].gpu_busy_pct == 100.0
    assert any("lost" in n for n in notes)
    assert any(79 in g.xids for s in samples for g in s.gpus if g.index == 1)


def test_no_driver_leaves_probe_without_gpus(clock: Clock) -> None:
    probe = NvmlProbe(FakeNvml(SCENARIOS["no-driver"], clock=clock), clock=clock)
    notes = probe.open()
    assert not probe.available and probe.gpu_count == 0
    assert "Driver Not Loaded" in notes[0]


def test_host_probe_computes_rates_from_fake_proc(tmp_path: Path, clock: Clock) -> None:
    root = tmp_path / "proc"
    # user nice system idle iowait irq softirq steal
    write_proc(root, cpu=(100, 0, 100, 700, 100, 0, 0, 0), disk_ms=0, sectors=0, rx=0)
    probe = host_probe(root, clock)
    first, _ = probe.read()
    assert first.cpu_util_pct is None and first.memory_total_gib == 16.0
    assert first.memory_used_gib == 8.0
    clock.t += 2.0
    write_proc(
        root, cpu=(200, 0, 200, 1300, 300, 0, 0, 0), disk_ms=1500, sectors=4_000_000, rx=10_000_000
    )
    second, notes = probe.read()
    assert notes == []
    # delta total 1000 jiffies: busy 200, iowait 200
    assert second.cpu_util_pct == 20.0 and second.iowait_pct == 20.0
    assert [d.device for d in second.disks] == ["nvme0n1", "sda"]  # no partition, no loop
    assert second.disk_util_pct == 75.0  # 1500 ms busy over 2 s
    assert second.disk_read_mb_per_s == 4_000_000 * 512 / 2 / 1e6
    assert second.net_rx_mb_per_s == 5.0  # lo excluded
    assert dict(second.sources)["disk_util_pct"] == "procfs"


def test_host_probe_unreadable_file_is_a_note(tmp_path: Path, clock: Clock) -> None:
    root = tmp_path / "proc"
    write_proc(root, cpu=(1, 0, 1, 1, 0, 0, 0, 0), disk_ms=0, sectors=0, rx=0)
    (root / "diskstats").unlink()
    probe = host_probe(root, clock)
    _, notes = probe.read()
    clock.t += 1
    sample, notes2 = probe.read()
    assert any("diskstats" in n for n in notes) and notes2 == []
    assert sample.disk_util_pct is None
