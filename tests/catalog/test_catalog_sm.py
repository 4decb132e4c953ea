"""SM count and boost clock columns of the bundled GPU table (round 5 of the estimator)."""

from __future__ import annotations

import pytest

from gpurent.catalog import all_gpus, get_gpu
from gpurent.catalog.specs import _row_to_spec

# GPUs whose SM count or clock no public source gave us: no SM-side term, datasheet fp32 rate
UNSOURCED = {"A10G", "MI300X", "B300-288GB", "GB200", "GB300"}


def test_sourced_sm_figures_agree_with_the_fp32_peak() -> None:
    """fp32 peak = 2 x SMs x FP32 lanes per SM x clock, with 64 lanes (Volta, Turing, GA100) or
    128 (GA10x, Ada, Hopper, Blackwell): an independent check of every sourced pair."""
    checked = 0
    for g in all_gpus():
        if g.vendor != "nvidia" or g.sm_cycles_per_s is None:
            continue
        lanes = g.fp32_tflops * 1e12 / (2.0 * g.sm_cycles_per_s)
        assert min(abs(lanes - 64) / 64, abs(lanes - 128) / 128) < 0.03, (g.name, lanes)
        assert "SMs/clock:" in g.source, g.name
        checked += 1
    assert checked >= 20


def test_unsourced_rows_are_empty_not_guessed() -> None:
    for g in all_gpus():
        if g.name in UNSOURCED:
            assert g.sm_cycles_per_s is None, g.name
        else:
            assert g.sm_cycles_per_s is not None, g.name


def test_gh200_and_h100_sxm_share_the_sm_rate() -> None:
    assert get_gpu("GH200").sm_cycles_per_s == get_gpu("H100-SXM5-80GB").sm_cycles_per_s
    assert get_gpu("GH200").memory_bandwidth_gbps > get_gpu("H100-SXM5-80GB").memory_bandwidth_gbps


@pytest.mark.parametrize("extra", [{}, {"sm_count": "", "boost_clock_mhz": ""}])
def test_rows_without_sm_columns_still_load(extra: dict[str, str]) -> None:
    row = {
        "name": "X-1",
        "aliases": "",
        "vendor": "nvidia",
        "architecture": "Ampere",
        "form_factor": "PCIe",
        "memory_gib": "24",
        "memory_type": "GDDR6",
        "memory_bandwidth_gbps": "600",
        "fp32_tflops": "31",
        "tf32_tflops": "62",
        "fp16_tflops": "125",
        "bf16_supported": "yes",
        "fp8_tflops": "",
        "interconnect": "PCIe",
        "interconnect_gbps": "",
        "pcie_gen": "4",
        "tdp_w": "150",
        "confidence": "high",
        "source": "test",
    } | extra
    spec = _row_to_spec(row, 2)
    assert spec.sm_count is None and spec.boost_clock_mhz is None and spec.sm_cycles_per_s is None
