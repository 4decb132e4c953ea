"""The prefill (TTFT) terms of the serving model (issue 19): the per-request first-token cost,
the occupancy curve of small prefill steps, the chunked-prefill overlap with the decode step's
weight read, and TTFT's monotonicity in the prompt length through every path."""

from __future__ import annotations

import dataclasses
import importlib
import math
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurent.catalog import get_gpu
from gpurent.estimate.serving import (
    EngineCoeffs,
    ServingConstants,
    load_serving_constants,
    operating_point,
    serving_curve,
)
from gpurent.workload.serving import Engine, LengthDistribution, ServingWorkload, WeightQuant

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
H100 = get_gpu("H100-SXM5-80GB")
A100 = get_gpu("A100-SXM4-80GB")
BASE = ServingWorkload(
    model="llama3-8b",
    prompt=LengthDistribution.fixed(512),
    output=LengthDistribution.fixed(128),
)


def _engine(k: ServingConstants, **changes: float) -> ServingConstants:
    coeffs: EngineCoeffs = dataclasses.replace(k.engines[Engine.VLLM], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(k, engines={**k.engines, Engine.VLLM: coeffs})


def _prompt(tokens: int) -> ServingWorkload:
    return dataclasses.replace(BASE, prompt=LengthDistribution.fixed(tokens))


def test_the_fitted_constants_carry_the_new_terms() -> None:
    k = load_serving_constants()
    assert k.prefill_half_tokens > 0
    for e in Engine:
        assert 0 < k.engines[e].first_token_s < 0.1


@pytest.mark.parametrize("clients", [1, 4])
def test_first_token_cost_is_added_once_per_request(clients: int) -> None:
    """The first-token cost moves every request's TTFT by exactly itself (closed loop, fixed
    lengths: the wave's requests each pay it once) and leaves the time per output token
    alone; at a low Poisson rate likewise."""
    k = load_serving_constants()
    zero, extra = _engine(k, first_token_s=0.0), _engine(k, first_token_s=0.010)
    a = serving_curve(BASE, H100, levels=(clients,), constants=zero).rows[0]
    b = serving_curve(BASE, H100, levels=(clients,), constants=extra).rows[0]
    assert b.ttft_p50_ms.value - a.ttft_p50_ms.value == pytest.approx(10.0, abs=1e-6)
    assert b.ttft_mean_ms.value - a.ttft_mean_ms.value == pytest.approx(10.0, abs=1e-6)
    assert b.tpot_p50_ms.value == pytest.approx(a.tpot_p50_ms.value)
    lo_a = operating_point(BASE, H100, request_rate_per_s=0.01, constants=zero)
    lo_b = operating_point(BASE, H100, request_rate_per_s=0.01, constants=extra)
    assert lo_b.ttft_p50_ms.value - lo_a.ttft_p50_ms.value == pytest.approx(10.0, rel=1e-3)


def test_small_prefill_steps_run_at_lower_occupancy() -> None:
    """Prefill time per prompt token falls as the step holds more tokens (the matmuls fill
    the GPU), and with no occupancy term (half tokens 0) a compute-bound short prompt is
    cheaper (a prompt so short that the step's weight read bounds it is not)."""
    k = load_serving_constants()
    per_token = [
        serving_curve(_prompt(p), A100, constants=k).prefill_ms.value / p for p in (16, 64, 256)
    ]
    assert per_token == sorted(per_token, reverse=True)
    flat = dataclasses.replace(k, prefill_half_tokens=0.0)
    short = _prompt(256)
    with_curve = serving_curve(short, A100, levels=(1,), constants=k).rows[0]
    without = serving_curve(short, A100, levels=(1,), constants=flat).rows[0]
    assert with_curve.ttft_p50_ms.value > without.ttft_p50_ms.value


def test_a_short_prefill_shares_the_decode_steps_weight_read() -> None:
    """Chunked prefill: a short prompt's matmuls run in the step that reads the weights for
    the decodes, so at a low rate its TTFT is less than a decode step plus its prefill
    compute run apart (`prefill_ms`), plus the per-request costs (at 0.01 req/s the engine is
    almost always idle: no running step to wait for)."""
    k = load_serving_constants()
    w = dataclasses.replace(_prompt(256), model="llama3-70b", weights=WeightQuant.FP8)
    c = k.engines[Engine.VLLM]
    curve = serving_curve(w, H100, 2, constants=k)
    point = operating_point(w, H100, 2, request_rate_per_s=0.01, constants=k)
    fixed_ms = (c.request_overhead_s + c.first_token_s) * 1e3
    assert point.ttft_p50_ms.value - fixed_ms < 0.9 * curve.prefill_ms.value


@settings(max_examples=30, deadline=None)
@given(
    prompt=st.integers(min_value=1, max_value=9000),
    rate=st.sampled_from([0.05, 0.2, 1.0]),
    gpu=st.sampled_from(["H100-SXM5-80GB", "A100-SXM4-80GB", "L4", "RTX-4090"]),
    chunk=st.sampled_from([512, 2048, 8192]),
)
def test_longer_prompts_never_get_a_lower_ttft(
    prompt: int, rate: float, gpu: str, chunk: int
) -> None:
    """For one request alone (closed loop of one) and through the open loop's queue, across
    chunk boundaries and the occupancy curve. (Inside a closed-loop wave of several fixed-length
    prompts the median request can finish earlier when the wave splits into one more chunk:
    first come first served chunking, as the engines do; that is not asserted.)"""
    g = get_gpu(gpu)
    w = dataclasses.replace(_prompt(prompt), chunk_tokens=chunk, max_num_seqs=64)
    longer = dataclasses.replace(w, prompt=LengthDistribution.fixed(prompt + max(1, prompt // 3)))
    k = load_serving_constants()
    a = serving_curve(w, g, levels=(1,), constants=k).rows
    b = serving_curve(longer, g, levels=(1,), constants=k).rows
    if a and b:
        assert b[0].ttft_p50_ms.value >= a[0].ttft_p50_ms.value * (1 - 1e-9)
    pa = operating_point(w, g, request_rate_per_s=rate, constants=k)
    pb = operating_point(longer, g, request_rate_per_s=rate, constants=k)
    if pa.stable and pb.stable:
        assert pb.ttft_p50_ms.value >= pa.ttft_p50_ms.value * (1 - 1e-9)


def _bench_module(name: str) -> Any:
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))


def test_held_out_prefill_error_stays_at_the_published_figure() -> None:
    """docs/benchmarks.md reports the held-out low-load TTFT MAPE (14.6 % over 9 rows with
    the per-source overhead offsets in the fit, session 9; 15.3 % before, 19.6 % in session
    7); a change to the prefill or queueing terms must not take it past the 15 % target."""
    serving_rows = _bench_module("serving_rows")
    k = load_serving_constants()
    held = [r for r in serving_rows.load_rows() if r.held_out and r.kind == "prefill"]
    assert len(held) >= 9
    assert serving_rows.mape(serving_rows.log_residuals(held, k)) <= 15.0


def test_source_offsets_are_centred_and_only_the_fit_sees_them() -> None:
    """The fit gives each server benchmark its own per-request overhead factor (its client,
    network and host); the shipped engines' overheads are the typical source's, so the
    factors' geometric mean is 1, and a prediction never reads them."""
    factors = load_serving_constants().provenance["source_request_factors"]
    assert len(factors) >= 3
    assert abs(statistics.fmean(math.log(f) for f in factors.values())) < 0.01
    assert min(factors.values()) < 1.0 < max(factors.values())


def test_a_source_factor_takes_up_what_the_engines_overhead_misses() -> None:
    """Halve vLLM's per-request overhead: the L4 source's fitted factor grows (its TTFT rows
    still need the overhead they measured), and a doubled overhead shrinks it."""
    fit_serving = _bench_module("fit_serving")
    serving_rows = _bench_module("serving_rows")
    rows = [r for r in serving_rows.load_rows() if r.source == "l4-qwen05b" and r.kind == "prefill"]
    k = load_serving_constants()
    o_req = k.engines[Engine.VLLM].request_overhead_s
    shipped = fit_serving._source_factors(rows, k)["l4-qwen05b"]
    halved = fit_serving._source_factors(rows, _engine(k, request_overhead_s=o_req / 2))
    doubled = fit_serving._source_factors(rows, _engine(k, request_overhead_s=o_req * 2))
    assert halved["l4-qwen05b"] > shipped > doubled["l4-qwen05b"]
