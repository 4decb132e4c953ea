"""The verdict: stated fractions, statuses, causes and advice (pure, no torch)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurent.bench.expect import (
    Expectation,
    build_expectations,
    pcie_gbps,
)
from gpurent.bench.result import ModelRun, Status
from gpurent.bench.verdict import judge, worst
from gpurent.catalog import find_gpu

H200 = find_gpu("H200")


def _row(bb, key: str, value: float, unit: str = "GB/s", hw=None, runs=()):
    hw = hw or bb.h200_hw
    ms = (bb.meas(key, value, unit),)
    exp = build_expectations(hw, find_gpu(hw.gpu_name) if hw.gpu_name else None, ms, runs)
    return next(r for r in judge(hw, ms, runs, exp) if r.check == key)


@pytest.mark.parametrize(
    ("tflops", "status"),
    [(795.0, Status.OK), (600.0, Status.OK), (550.0, Status.WARN), (400.0, Status.FAIL)],
)
def test_gpu_matmul_against_datasheet_dense_peak(bb, tflops: float, status: Status) -> None:
    row = _row(bb, "matmul.bf16", tflops, "TFLOP/s")
    assert row.expected == 989.0
    assert row.threshold == 0.6
    assert row.status is status
    assert row.fraction == pytest.approx(tflops / 989.0)
    assert "H200-SXM-141GB datasheet" in row.source
    if status is not Status.OK:
        assert "throttl" in row.cause and "nvidia-smi" in row.advice
    else:
        assert row.cause == row.advice == ""


def test_tf32_and_strict_fp32_use_their_own_peaks(bb) -> None:
    assert _row(bb, "matmul.tf32", 300.0, "TFLOP/s").expected == 494.7
    assert _row(bb, "matmul.strict-fp32", 50.0, "TFLOP/s").expected == 66.9


def test_hbm_copy_needs_three_quarters_of_datasheet(bb) -> None:
    ok = _row(bb, "membw.copy", 4100.0)
    bad = _row(bb, "membw.triad", 2000.0)
    assert ok.status is Status.OK and ok.expected == 4800.0 and ok.threshold == 0.75
    assert bad.status is Status.FAIL


def test_pinned_host_device_against_pcie5_x16(bb) -> None:
    row = _row(bb, "hostdev.h2d-pinned", 55.0)  # nvbandwidth's 8xH200 figure
    assert row.expected == pytest.approx(63.0, rel=1e-3)
    assert row.status is Status.OK
    assert _row(bb, "hostdev.d2h-pinned", 20.0).status is Status.FAIL
    assert _row(bb, "hostdev.h2d-pageable", 10.0).status is Status.INFO  # no rule for pageable


def test_downtrained_pcie_link_fails_with_advice(bb) -> None:
    hw = replace(bb.h200_hw, pcie_gen_current=4, pcie_width_current=16)
    rows = judge(hw, (), (), {})
    link = next(r for r in rows if r.check == "pcie.link")
    assert link.status is Status.FAIL
    assert link.measured == pytest.approx(pcie_gbps(4, 16))
    assert "gen4 x16" in link.source and "another machine" in link.advice
    narrow = replace(bb.h200_hw, pcie_width_current=8)
    assert next(r for r in judge(narrow, (), (), {}) if r.check == "pcie.link").status is (
        Status.FAIL
    )
    healthy = next(r for r in judge(bb.h200_hw, (), (), {}) if r.check == "pcie.link")
    assert healthy.status is Status.OK


def test_allreduce_against_unidirectional_nvlink(bb) -> None:
    row = _row(bb, "allreduce.busbw", 368.0)  # RESEARCH: H200 ring ~368 of 450
    assert row.expected == 450.0 and row.status is Status.OK
    assert _row(bb, "allreduce.busbw", 100.0).status is Status.FAIL
    single = replace(bb.h200_hw, gpu_count=1)
    assert _row(bb, "allreduce.busbw", 1.0, hw=single).status is Status.INFO


def test_cpu_matmul_must_reach_half_of_numpy(bb) -> None:
    ms = (bb.meas("matmul.fp32", 0.05, "TFLOP/s"), bb.meas("matmul.numpy-fp32", 0.2, "TFLOP/s"))
    rows = judge(bb.cpu_hw, ms, (), build_expectations(bb.cpu_hw, None, ms, ()))
    assert [r.check for r in rows] == ["matmul.fp32"]  # the reference itself is not judged
    assert rows[0].status is Status.FAIL and rows[0].threshold == 0.5
    assert "numpy BLAS" in rows[0].source
    assert "OMP_NUM_THREADS" in rows[0].advice  # CPU advice, not GPU advice
    ms_ok = (ms[0], bb.meas("matmul.numpy-fp32", 0.09, "TFLOP/s"))
    assert (
        judge(bb.cpu_hw, ms_ok, (), build_expectations(bb.cpu_hw, None, ms_ok, ()))[0].status
        is Status.OK
    )


def test_data_loader_must_keep_up_with_the_gpus(bb) -> None:
    runs = (bb.model_run(throughput=3000.0),)
    slow = _row(bb, "dataload.images", 5000.0, "images/s", runs=runs)
    assert slow.expected == 3000.0 * 8  # 8 GPUs to feed
    assert slow.status is Status.FAIL and "starve" in slow.cause
    assert _row(bb, "dataload.images", 30000.0, "images/s", runs=runs).status is Status.OK


def test_disk_floors_only_warn(bb) -> None:
    row = _row(bb, "disk.seq-read", 0.1)
    assert row.status is Status.WARN and "NVMe" in row.advice


def test_not_applicable_and_failed_measurements(bb) -> None:
    ms = (
        bb.meas("allreduce.busbw", None, detail="not applicable: one GPU"),
        bb.meas("disk.error", None, "", "failed: [Errno 28] No space left on device"),
    )
    rows = judge(bb.cpu_hw, ms, (), {})
    assert rows[0].status is Status.NA
    assert rows[1].status is Status.FAIL and "No space" in rows[1].cause
    assert worst(rows) is Status.FAIL


def test_model_expectation_is_injected(bb) -> None:
    calls = []

    def fake(run: ModelRun, gpu, n: int) -> Expectation:
        calls.append((run.model, gpu.name, n))
        return Expectation(value=2000.0, unit="images/s", source="fake estimator", threshold=0.7)

    runs = (bb.model_run(throughput=1000.0),)
    exp = build_expectations(bb.h200_hw, H200, (), runs, fake)
    row = next(r for r in judge(bb.h200_hw, (), runs, exp) if r.check == "model.resnet50")
    assert calls == [("resnet50", "H200-SXM-141GB", 1)]
    assert row.status is Status.FAIL and row.fraction == 0.5 and row.source == "fake estimator"
    without = next(
        r
        for r in judge(bb.h200_hw, (), runs, build_expectations(bb.h200_hw, H200, (), runs))
        if r.check == "model.resnet50"
    )
    assert without.status is Status.INFO


@given(
    expected=st.floats(1.0, 1e4),
    threshold=st.floats(0.1, 1.0),
    a=st.floats(0.0, 2.0),
    b=st.floats(0.0, 2.0),
)
def test_status_never_improves_as_the_figure_drops(bb, expected, threshold, a, b) -> None:
    from gpurent.bench.result import Measurement

    rank = {Status.FAIL: 0, Status.WARN: 1, Status.OK: 2}
    hw = bb.cpu_hw
    exp = {"membw.copy": Expectation(value=expected, unit="GB/s", source="s", threshold=threshold)}
    lo, hi = sorted((a * expected, b * expected))
    r_lo, r_hi = (
        judge(
            hw,
            (Measurement(key="membw.copy", benchmark="membw", value=v, unit="GB/s", detail=""),),
            (),
            exp,
        )[0]
        for v in (lo, hi)
    )
    assert rank[r_lo.status] <= rank[r_hi.status]
    assert (r_hi.status is Status.OK) == (hi / expected >= threshold)


def test_worst_orders_statuses(bb) -> None:
    assert worst(()) is Status.INFO
    rows = judge(
        bb.h200_hw,
        (bb.meas("membw.copy", 4500.0),),
        (),
        build_expectations(bb.h200_hw, H200, (bb.meas("membw.copy", 4500.0),), ()),
    )
    assert worst(rows) is Status.OK


def test_nvlink_bridge_beyond_a_pair_falls_back_to_pcie(bb) -> None:
    nvl = replace(bb.h200_hw, gpu_name="H200 NVL", gpu_catalog_name="H200-NVL-141GB")
    row = _row(bb, "allreduce.busbw", 40.0, hw=nvl)
    assert row.expected == pytest.approx(pcie_gbps(5, 16)) and row.threshold == 0.5
    assert "pairs only" in row.source and row.status is Status.OK
    pair = replace(nvl, gpu_count=2)
    assert _row(bb, "allreduce.busbw", 400.0, hw=pair).expected == 450.0
