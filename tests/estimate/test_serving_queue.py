"""TTFT under load (issue 19, item 1): the queueing term. A closed loop of C clients waits
for the prefills queued ahead by mean-value analysis (at most C - 1 of them); an open loop
waits in an M/G/1 queue of prefills (Pollaczek-Khinchine); a prompt longer than the
chunked-prefill budget spreads over several steps; a closed loop with fixed lengths moves in
waves. Invariants: TTFT never falls as clients or the rate grow, one client alone has the
low-load TTFT, bad load values are one-line errors."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from gpurent.catalog import get_gpu
from gpurent.errors import InputError
from gpurent.estimate.serving import (
    estimate_serving,
    load_serving_constants,
    max_load_meeting_slo,
    operating_point,
    saturation_point,
    serving_curve,
    serving_memory,
)
from gpurent.workload.serving import LengthDistribution, ServingWorkload, parse_lengths

K = load_serving_constants()
FIXED = ServingWorkload(
    model="llama3-8b",
    prompt=LengthDistribution.fixed(1024),
    output=LengthDistribution.fixed(256),
)
SPREAD = dataclasses.replace(
    FIXED,
    prompt=parse_lengths("uniform 128-2048", "p"),
    output=parse_lengths("uniform 64-512", "o"),
)
CASES = [
    (FIXED, "L4"),
    (SPREAD, "L4"),
    (FIXED, "H100-SXM5-80GB"),
    (SPREAD, "A100-SXM4-80GB"),
    (dataclasses.replace(FIXED, prompt=LengthDistribution.fixed(6000), chunk_tokens=2048), "L40S"),
    (dataclasses.replace(SPREAD, model="mistral-7b", chunk_tokens=512), "RTX-4090"),
]


def _ids(case: tuple[ServingWorkload, str]) -> str:
    w, gpu = case
    return f"{gpu}-{w.prompt.mean:.0f}-{len(w.prompt.rows)}-{w.chunk_tokens}"


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_ttft_never_falls_as_clients_grow(case: tuple[ServingWorkload, str]) -> None:
    """Across every level up to twice what the replica holds: through the wave's chunk
    boundaries and past the max concurrency, where the clients left over wait for a slot."""
    w, gpu = case
    g = get_gpu(gpu)
    cap = serving_memory(w, g, constants=K).max_concurrency
    assert cap >= 2
    levels = tuple(sorted({*range(1, min(cap, 40) + 1), cap - 1, cap, cap + 1, 2 * cap}))
    rows = serving_curve(w, g, levels=levels, constants=K).rows
    for name in ("ttft_mean_ms", "ttft_p50_ms", "ttft_p99_ms"):
        values = [getattr(p, name).value for p in rows]
        assert all(b >= a * (1 - 1e-9) for a, b in itertools.pairwise(values)), (
            name,
            list(zip(levels, values, strict=True)),
        )


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_ttft_never_falls_as_the_rate_grows(case: tuple[ServingWorkload, str]) -> None:
    w, gpu = case
    g = get_gpu(gpu)
    x_sat = saturation_point(w, g, constants=K).request_rate_per_s.value
    points = [
        operating_point(w, g, request_rate_per_s=f * x_sat, constants=K)
        for f in (0.0, 1e-4, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97, 0.999)
    ]
    assert all(p.stable for p in points)
    for name in ("ttft_mean_ms", "ttft_p50_ms", "ttft_p99_ms"):
        values = [getattr(p, name).value for p in points]
        assert all(b >= a * (1 - 1e-9) for a, b in itertools.pairwise(values)), name


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_one_client_has_the_low_load_ttft(case: tuple[ServingWorkload, str]) -> None:
    """One client alone waits for nobody: no queue, no running step to finish. Its TTFT is
    the open loop's as the rate vanishes (within the one decoding sequence the open loop's
    step counts)."""
    w, gpu = case
    g = get_gpu(gpu)
    one = serving_curve(w, g, levels=(1,), constants=K).rows[0]
    idle = operating_point(w, g, request_rate_per_s=1e-9, constants=K)
    assert one.ttft_mean_ms.value == pytest.approx(idle.ttft_mean_ms.value, rel=0.01)
    assert one.ttft_p50_ms.value == pytest.approx(idle.ttft_p50_ms.value, rel=0.01)


def test_a_closed_loop_queues_at_most_the_clients_ahead() -> None:
    """With long prompts the prefills are the bottleneck: a client waits for more prefills
    as clients are added, never for more than the C - 1 ahead of it (mean-value analysis of
    the finite-source queue), and the rate flattens at what the prefills allow."""
    w = dataclasses.replace(SPREAD, prompt=parse_lengths("uniform 6000-8000", "p"))
    w = dataclasses.replace(w, output=parse_lengths("uniform 8-16", "o"), max_num_seqs=64)
    g = get_gpu("H100-SXM5-80GB")
    assert serving_memory(w, g, constants=K).max_concurrency >= 16  # no slot wait here
    rows = serving_curve(w, g, levels=(1, 2, 8, 16), constants=K).rows
    alone = rows[0].ttft_mean_ms.value
    waits = [p.ttft_mean_ms.value - alone for p in rows[1:]]
    assert 0 < waits[0] < waits[1] < waits[2]
    for p, wait in zip(rows[1:], waits, strict=True):
        assert wait <= (p.concurrency - 1) * alone
    r8, r16 = rows[2].request_rate_per_s.value, rows[3].request_rate_per_s.value
    assert r8 < r16 < 1.15 * r8


def test_a_prompt_over_the_chunk_budget_pays_a_step_per_chunk() -> None:
    """A 6000-token prompt in 512-token chunks spreads over 12 engine steps next to the
    decodes: each step reads the weights its chunk's matmuls overlap, but pays the rest of a
    decode step (the KV read, the per-step overhead), so it waits at least 11 more per-step
    overheads than in one 8192-token chunk."""
    g = get_gpu("A100-SXM4-80GB")
    w = dataclasses.replace(FIXED, prompt=LengthDistribution.fixed(6000))
    small = dataclasses.replace(w, chunk_tokens=512)
    rate = 0.3 * saturation_point(w, g, constants=K).request_rate_per_s.value
    big_p = operating_point(w, g, request_rate_per_s=rate, constants=K)
    small_p = operating_point(small, g, request_rate_per_s=rate, constants=K)
    o_step_ms = K.engines[w.engine].step_overhead_s * 1e3
    assert small_p.ttft_p50_ms.value - big_p.ttft_p50_ms.value >= 11 * o_step_ms


@pytest.mark.parametrize("levels", [(0,), (-3,), (1, 0)])
def test_clients_below_one_are_one_line(levels: tuple[int, ...]) -> None:
    with pytest.raises(InputError) as err:
        serving_curve(FIXED, get_gpu("L4"), levels=levels, constants=K)
    assert "\n" not in str(err.value) and ">= 1" in str(err.value)


@pytest.mark.parametrize("rate", [-1.0, math.nan, math.inf])
def test_a_bad_request_rate_is_one_line(rate: float) -> None:
    with pytest.raises(InputError) as err:
        operating_point(FIXED, get_gpu("L4"), request_rate_per_s=rate, constants=K)
    assert "\n" not in str(err.value) and "req/s" in str(err.value)


def test_zero_replicas_is_one_line() -> None:
    g = get_gpu("L4")
    for call in (
        lambda: operating_point(FIXED, g, request_rate_per_s=1.0, replicas=0, constants=K),
        lambda: max_load_meeting_slo(FIXED, g, replicas=0, constants=K),
        lambda: estimate_serving(FIXED, g, replicas=0, constants=K),
    ):
        with pytest.raises(InputError) as err:
            call()
        assert "\n" not in str(err.value) and "replica" in str(err.value)


def test_past_the_budget_the_waiting_queue_takes_the_excess() -> None:
    """Once the prefills fill every step's chunked-prefill budget, a step cannot grow longer
    than the decodes plus one full chunk: the rate stops, the time per output token stops,
    and each client more waits one more request's worth in the queue (Little's law, the
    closed network's asymptote R = C / X - Z)."""
    w = dataclasses.replace(SPREAD, prompt=parse_lengths("uniform 6000-8000", "p"))
    w = dataclasses.replace(w, output=parse_lengths("uniform 8-16", "o"), max_num_seqs=64)
    g = get_gpu("H100-SXM5-80GB")
    a, b = serving_curve(w, g, levels=(32, 48), constants=K).rows
    x = b.request_rate_per_s.value
    assert x < 1.01 * a.request_rate_per_s.value
    assert b.tpot_p50_ms.value == pytest.approx(a.tpot_p50_ms.value, rel=0.02)
    per_client_ms = (b.ttft_mean_ms.value - a.ttft_mean_ms.value) / 16
    assert per_client_ms == pytest.approx(1e3 / x, rel=0.05)


def test_a_smaller_budget_admits_fewer_long_prompts() -> None:
    """The open loop's highest stable rate: 512-token chunks put a 6000-token prompt over
    12 steps that each pay the decode step, so fewer such requests per second fit than in
    8192-token chunks."""
    g = get_gpu("A100-SXM4-80GB")
    w = dataclasses.replace(FIXED, prompt=LengthDistribution.fixed(6000))
    big = saturation_point(w, g, constants=K).request_rate_per_s.value
    small_w = dataclasses.replace(w, chunk_tokens=512)
    small = saturation_point(small_w, g, constants=K).request_rate_per_s.value
    assert small < big
    over = operating_point(small_w, g, request_rate_per_s=1.01 * small, constants=K)
    assert not over.stable and math.isinf(over.ttft_p50_ms.value)
