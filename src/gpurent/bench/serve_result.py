"""Result of `gpurent bench serve`: per-request records summarised per level (pure).

Per level: TTFT, inter-token latency (ITL), time per output token (TPOT) and end-to-end
latency as p50/p90/p99 over its successful requests, throughput (requests/s and output tokens/s
over the level's wall time: first request sent to last one finished), and errors by kind. The
saturation point is defined in `saturation_level`. JSON: `kind: "gpurent.bench.serve"`,
`schema_version: 1`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from gpurent.bench.serve_config import Mode, ServeConfig
from gpurent.estimate.serve_calibration import ServeMeasuredRow

KIND = "gpurent.bench.serve"
SCHEMA_VERSION = 1
# Error kinds a request can end with (docs/bench.md, "Serving endpoints").
ERROR_KINDS = (
    "http_4xx",  # counted per status: http_400, http_429, ...
    "http_5xx",
    "timeout",  # the request ran past --timeout
    "stall",  # no byte for --stall-timeout seconds
    "disconnect",  # the connection closed, or the stream ended, before `data: [DONE]`
    "connect",  # the connection could not be made
    "stream_error",  # the server sent an `error` chunk
    "bad_response",  # the body was not an OpenAI stream
)
StoppedBy = Literal["max_requests", "duration", "interrupted"]


@dataclass(slots=True)
class RequestRecord:
    """One request as the runner saw it (times in seconds from the request's send)."""

    ok: bool = False
    error: str | None = None  # an ERROR_KINDS name, or http_<status>
    ttft_s: float | None = None
    itl_s: list[float] = field(default_factory=list)
    e2e_s: float | None = None
    output_tokens: int = 0
    prompt_tokens: int | None = None
    tokens_from_usage: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Spread:
    """Percentiles of one latency over a level's samples (None when there were none)."""

    n: int
    p50: float | None
    p90: float | None
    p99: float | None
    mean: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class LevelResult:
    """One load level's outcome: requests sent, succeeded and failed, latencies and throughput."""

    level: float  # concurrency, or requests/s in rate mode
    mode: Mode
    requests_sent: int
    requests_ok: int
    requests_failed: int
    requests_cancelled: int  # in flight when the run was interrupted
    errors: Mapping[str, int]  # kind -> count
    duration_s: float
    ttft_ms: Spread
    itl_ms: Spread
    tpot_ms: Spread
    e2e_ms: Spread
    requests_per_s: float
    output_tok_s: float
    output_tokens: int
    prompt_tokens_mean: float | None  # from usage, when the server sent it
    tokens_counted: str  # "usage", "chunks" (one token per text chunk) or "mixed"
    stopped_by: StoppedBy


@dataclass(frozen=True, slots=True, kw_only=True)
class Saturation:
    """The level after which throughput stops rising (None: not reached), and why."""

    level: float | None
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeVerdictRow:
    """One expectation. `ratio` = measured / expected; `better` says which way is good:
    "higher" passes when ratio >= min_ratio, "lower" when ratio <= 1 / min_ratio."""

    check: str  # "ttft_p50_ms@1", "output_tok_s@peak", ...
    level: float | None
    measured: float
    expected: float
    unit: str
    ratio: float
    better: Literal["higher", "lower"]
    min_ratio: float
    status: Literal["pass", "below"]
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeResult:
    """A serving bench: its configuration, each load level's result and notes."""

    created_at: str
    url: str  # without user info or query (which may hold secrets)
    endpoint: str
    model: str
    mode: Mode
    prompt_tokens: str
    output_tokens: str
    max_requests: int
    duration_s: float
    timeout_s: float
    stall_timeout_s: float
    seed: int
    levels: tuple[LevelResult, ...]
    saturation: Saturation
    verdict: tuple[ServeVerdictRow, ...] = ()
    calibration_rows: tuple[ServeMeasuredRow, ...] = ()
    interrupted: bool = False
    wall_s: float = 0.0
    client_cpu_s: float = 0.0  # this process's CPU time over the run (user + system)
    notes: tuple[str, ...] = ()
    kind: str = KIND
    schema_version: int = SCHEMA_VERSION


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 100]."""
    n = len(sorted_values)
    if n == 1:
        return sorted_values[0]
    pos = (n - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def spread_ms(values_s: Sequence[float]) -> Spread:
    """Count, p50, p90, p99 and mean of durations in seconds, as milliseconds."""
    if not values_s:
        return Spread(n=0, p50=None, p90=None, p99=None, mean=None)
    ms = sorted(x * 1000.0 for x in values_s)
    return Spread(
        n=len(ms),
        p50=percentile(ms, 50),
        p90=percentile(ms, 90),
        p99=percentile(ms, 99),
        mean=sum(ms) / len(ms),
    )


def summarise_level(
    level: float,
    mode: Mode,
    records: Sequence[RequestRecord],
    *,
    duration_s: float,
    cancelled: int,
    stopped_by: StoppedBy,
) -> LevelResult:
    """The result of one load level from its request records."""
    ok = [r for r in records if r.ok]
    errors: dict[str, int] = {}
    for r in records:
        if not r.ok and r.error:
            errors[r.error] = errors.get(r.error, 0) + 1
    tokens = sum(r.output_tokens for r in ok)
    prompts = [r.prompt_tokens for r in ok if r.prompt_tokens is not None]
    from_usage = {r.tokens_from_usage for r in ok}
    counted = "mixed" if len(from_usage) > 1 else ("usage" if True in from_usage else "chunks")
    tpot = [
        (r.e2e_s - r.ttft_s) / (r.output_tokens - 1)
        for r in ok
        if r.e2e_s is not None and r.ttft_s is not None and r.output_tokens > 1
    ]
    wall = max(duration_s, 1e-9)
    return LevelResult(
        level=level,
        mode=mode,
        requests_sent=len(records) + cancelled,
        requests_ok=len(ok),
        requests_failed=len(records) - len(ok),
        requests_cancelled=cancelled,
        errors=dict(sorted(errors.items())),
        duration_s=duration_s,
        ttft_ms=spread_ms([r.ttft_s for r in ok if r.ttft_s is not None]),
        itl_ms=spread_ms([x for r in ok for x in r.itl_s]),
        tpot_ms=spread_ms(tpot),
        e2e_ms=spread_ms([r.e2e_s for r in ok if r.e2e_s is not None]),
        requests_per_s=len(ok) / wall,
        output_tok_s=tokens / wall,
        output_tokens=tokens,
        prompt_tokens_mean=sum(prompts) / len(prompts) if prompts else None,
        tokens_counted=counted,
        stopped_by=stopped_by,
    )


def saturation_level(levels: Sequence[LevelResult], min_gain: float) -> Saturation:
    """The saturation point: the first level L such that, going from L to the next level,
    output tokens/s rises by less than `min_gain` (a fraction: 0.10 = 10%) while the median
    end-to-end latency rises. Levels without a successful request are skipped."""
    usable = [lv for lv in levels if lv.requests_ok and lv.e2e_ms.p50 is not None]
    for a, b in itertools.pairwise(usable):
        assert a.e2e_ms.p50 is not None and b.e2e_ms.p50 is not None
        gain = b.output_tok_s / a.output_tok_s - 1.0 if a.output_tok_s > 0 else math.inf
        if gain < min_gain and b.e2e_ms.p50 > a.e2e_ms.p50:
            return Saturation(
                level=a.level,
                reason=(
                    f"from {a.level:g} to {b.level:g}: output tok/s {100 * gain:+.1f}% "
                    f"(< {100 * min_gain:g}%), p50 e2e {a.e2e_ms.p50:.0f} -> {b.e2e_ms.p50:.0f} ms"
                ),
            )
    if len(usable) < 2:
        return Saturation(level=None, reason="needs two levels with successful requests")
    return Saturation(
        level=None,
        reason=(
            f"not reached: output tok/s still rose by >= {100 * min_gain:g}% at every step "
            "(or latency did not rise); try higher levels"
        ),
    )


def shown_url(url: str) -> str:
    """`url` without user info and query, which may hold credentials."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def make_result(
    cfg: ServeConfig,
    levels: Sequence[LevelResult],
    *,
    created_at: str,
    interrupted: bool,
    wall_s: float,
    client_cpu_s: float,
    notes: Sequence[str] = (),
) -> ServeResult:
    """The serving bench's result from its levels, the URL shown without secrets."""
    return ServeResult(
        created_at=created_at,
        url=shown_url(cfg.url),
        endpoint=cfg.endpoint,
        model=cfg.model,
        mode=cfg.mode,
        prompt_tokens=str(cfg.prompt_tokens),
        output_tokens=str(cfg.output_tokens),
        max_requests=cfg.max_requests,
        duration_s=cfg.duration_s,
        timeout_s=cfg.timeout_s,
        stall_timeout_s=cfg.stall_timeout_s,
        seed=cfg.seed,
        levels=tuple(levels),
        saturation=saturation_level(levels, cfg.saturation_gain),
        interrupted=interrupted,
        wall_s=wall_s,
        client_cpu_s=client_cpu_s,
        notes=tuple(notes),
    )


def calibration_rows(
    result: ServeResult, *, gpu: str, engine: str, prompt_tokens_mean: float
) -> tuple[ServeMeasuredRow, ...]:
    """One serving measurement per level with successful requests (`--calibrate`).
    `prompt_tokens_mean` stands in where the server sent no usage."""
    rows = []
    for lv in result.levels:
        if not lv.requests_ok or lv.ttft_ms.p50 is None or lv.ttft_ms.p99 is None:
            continue
        rows.append(
            ServeMeasuredRow(
                gpu=gpu,
                model=result.model,
                engine=engine,
                mode=result.mode,
                level=lv.level,
                prompt_tokens_mean=lv.prompt_tokens_mean or prompt_tokens_mean,
                output_tokens_mean=lv.output_tokens / lv.requests_ok,
                requests_per_s=lv.requests_per_s,
                output_tok_s=lv.output_tok_s,
                ttft_p50_ms=lv.ttft_ms.p50,
                ttft_p99_ms=lv.ttft_ms.p99,
                tpot_p50_ms=lv.tpot_ms.p50,
                measured_at=result.created_at,
            )
        )
    return tuple(rows)


def result_to_dict(result: ServeResult) -> dict[str, Any]:
    """The JSON document (floats as they are; the CLI's encoder turns inf/NaN to null)."""
    return asdict(result)
