"""The verdict of `gpurent bench serve` against what was expected (pure).

Expectations come from flags (`--expect-ttft-ms`: the median TTFT at the lowest level, the
unloaded one; `--expect-tok-s`: the peak output tokens/s over the levels) or from a serving
estimate's curve (`--expect FILE`, the JSON `gpurent estimate` writes for a serving workload):

    {"kind": "gpurent.estimate.serve",
     "curve": [{"concurrency": 1, "ttft_p50_ms": 30.0, "ttft_p99_ms": 45.0,
                "tpot_p50_ms": 9.0, "output_tok_s": 110.0, "requests_per_s": 0.9}, ...]}

(other keys are ignored; a metric may be missing or null). The document `gpurent estimate
--serve --json` writes is read too: it has no `kind` but a `workload` and a `curve` whose
figures are {value, low, high} (the value is compared) and are named `output_tokens_per_s` and
`request_rate_per_s`; rows without a concurrency are skipped. Each measured level is compared
with the curve interpolated linearly at its concurrency (rate mode: at its requests/s, latencies
only); levels outside the curve's range are not judged. ratio = measured / expected; a
higher-is-better figure passes when ratio >= min_ratio, a lower-is-better one (latencies) when
ratio <= 1 / min_ratio; otherwise it is "below" expectation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gpurent.bench.serve_config import Mode
from gpurent.bench.serve_result import LevelResult, ServeVerdictRow
from gpurent.errors import InputError
from gpurent.inputs import values as v

CURVE_KIND = "gpurent.estimate.serve"
MIN_RATIO = 0.8
METRICS = ("ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "output_tok_s", "requests_per_s")
LATENCIES = ("ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms")
UNITS = {
    "ttft_p50_ms": "ms",
    "ttft_p99_ms": "ms",
    "tpot_p50_ms": "ms",
    "output_tok_s": "tok/s",
    "requests_per_s": "req/s",
}
MAX_POINTS = 10_000


@dataclass(frozen=True, slots=True, kw_only=True)
class CurvePoint:
    """One point of an expected-latency curve: the concurrency and each metric's value."""

    concurrency: float
    values: Mapping[str, float]  # metric -> expected value (only those given)


# The names `gpurent estimate --serve --json` gives the same figures (servemodel branch).
ALIASES = {"output_tokens_per_s": "output_tok_s", "request_rate_per_s": "requests_per_s"}


def _is_estimate(doc: Any) -> bool:
    """The documented shape (kind gpurent.estimate.serve), or the `gpurent estimate --serve
    --json` document, which has no kind but a `workload` and a `curve`."""
    if not isinstance(doc, dict):
        return False
    if doc.get("kind") == CURVE_KIND:
        return True
    return "kind" not in doc and isinstance(doc.get("workload"), dict) and "curve" in doc


def _figure(raw: Any) -> Any:
    """A metric as a number, or as a figure {value, low, high} (its value)."""
    return raw.get("value") if isinstance(raw, dict) else raw


def _point(row: Any, at: str) -> CurvePoint | None:
    """One curve row; None for a row the estimate left without a concurrency (unbounded)."""
    if not isinstance(row, dict):
        raise InputError(f"{at} must be an object")
    if "concurrency" not in row:
        raise InputError(f"{at}: missing concurrency")
    if row["concurrency"] is None:
        return None
    conc = v.positive(row["concurrency"], f"{at}: concurrency")
    values: dict[str, float] = {}
    for key, raw in row.items():
        metric = ALIASES.get(key, key)
        value = _figure(raw)
        if metric in METRICS and value is not None:
            values[metric] = v.positive(value, f"{at}: {key}")
    if not values:
        raise InputError(f"{at}: no metric (needs one of {', '.join(METRICS)})")
    return CurvePoint(concurrency=conc, values=values)


def parse_curve(doc: Any, where: str) -> tuple[CurvePoint, ...]:
    """The curve of a serving-estimate JSON, validated; sorted by concurrency."""
    if not _is_estimate(doc):
        got = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(
            f"{where}: not a serving estimate (kind {got!r}, expected {CURVE_KIND!r}); "
            "write one with `gpurent estimate` for a serving workload and --json"
        )
    rows = doc.get("curve")
    if not isinstance(rows, list) or not rows:
        raise InputError(f"{where}: needs a non-empty list 'curve'")
    if len(rows) > MAX_POINTS:
        raise InputError(f"{where}: 'curve' has {len(rows)} points, at most {MAX_POINTS}")
    found = (_point(row, f"{where}: curve[{i}]") for i, row in enumerate(rows))
    points = sorted((p for p in found if p is not None), key=lambda p: p.concurrency)
    if not points:
        raise InputError(f"{where}: no curve point has a concurrency")
    if len({p.concurrency for p in points}) != len(points):
        raise InputError(f"{where}: 'curve' repeats a concurrency")
    return tuple(points)


def _interp(xs: Sequence[float], ys: Sequence[float], x: float) -> float | None:
    if not xs or x < xs[0] - 1e-9 or x > xs[-1] + 1e-9:
        return None
    for (x0, y0), (x1, y1) in itertools.pairwise(zip(xs, ys, strict=True)):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return ys[-1] if math.isclose(x, xs[-1]) else ys[0]


def expected_at(points: Sequence[CurvePoint], metric: str, x: float, key: str) -> float | None:
    """The curve's `metric` interpolated at `x`, where `key` is the abscissa (concurrency, or
    requests_per_s in rate mode)."""
    pairs = sorted(
        (p.concurrency if key == "concurrency" else p.values["requests_per_s"], p.values[metric])
        for p in points
        if metric in p.values and (key == "concurrency" or "requests_per_s" in p.values)
    )
    return _interp([a for a, _ in pairs], [b for _, b in pairs], x)


def _measured(level: LevelResult, metric: str) -> float | None:
    return {
        "ttft_p50_ms": level.ttft_ms.p50,
        "ttft_p99_ms": level.ttft_ms.p99,
        "tpot_p50_ms": level.tpot_ms.p50,
        "output_tok_s": level.output_tok_s if level.requests_ok else None,
        "requests_per_s": level.requests_per_s if level.requests_ok else None,
    }[metric]


def _row(  # noqa: PLR0917 - one verdict row's fields, in order
    check: str,
    level: float | None,
    measured: float,
    expected: float,
    unit: str,
    better: Literal["higher", "lower"],
    min_ratio: float,
    source: str,
) -> ServeVerdictRow:
    ratio = measured / expected
    ok = ratio >= min_ratio if better == "higher" else ratio <= 1.0 / min_ratio
    return ServeVerdictRow(
        check=check,
        level=level,
        measured=measured,
        expected=expected,
        unit=unit,
        ratio=ratio,
        better=better,
        min_ratio=min_ratio,
        status="pass" if ok else "below",
        source=source,
    )


def judge(
    levels: Sequence[LevelResult],
    mode: Mode,
    *,
    expect_ttft_ms: float | None = None,
    expect_tok_s: float | None = None,
    curve: Sequence[CurvePoint] = (),
    curve_source: str = "",
    min_ratio: float = MIN_RATIO,
) -> tuple[tuple[ServeVerdictRow, ...], tuple[str, ...]]:
    """Verdict rows, and notes on what could not be judged."""
    rows: list[ServeVerdictRow] = []
    notes: list[str] = []
    measured = [lv for lv in levels if lv.requests_ok]
    if (expect_ttft_ms is not None or expect_tok_s is not None or curve) and not measured:
        return (), ("no level had a successful request: nothing to judge",)
    if expect_ttft_ms is not None:
        first = measured[0]
        if first.ttft_ms.p50 is not None:
            rows.append(
                _row(
                    f"ttft_p50_ms@{first.level:g}",
                    first.level,
                    first.ttft_ms.p50,
                    expect_ttft_ms,
                    "ms",
                    "lower",
                    min_ratio,
                    "--expect-ttft-ms",
                )
            )
    if expect_tok_s is not None:
        peak = max(measured, key=lambda lv: lv.output_tok_s)
        rows.append(
            _row(
                "output_tok_s@peak",
                peak.level,
                peak.output_tok_s,
                expect_tok_s,
                "tok/s",
                "higher",
                min_ratio,
                "--expect-tok-s",
            )
        )
    key = "concurrency" if mode == "concurrency" else "requests_per_s"
    metrics = METRICS if mode == "concurrency" else LATENCIES
    outside: list[str] = []
    for lv in measured if curve else ():
        judged = False
        for metric in metrics:
            exp = expected_at(curve, metric, lv.level, key)
            got = _measured(lv, metric)
            if exp is None or got is None:
                continue
            judged = True
            better: Literal["higher", "lower"] = "lower" if metric in LATENCIES else "higher"
            unit = UNITS[metric]
            rows.append(
                _row(
                    f"{metric}@{lv.level:g}",
                    lv.level,
                    got,
                    exp,
                    unit,
                    better,
                    min_ratio,
                    curve_source,
                )
            )
        if not judged:
            outside.append(f"{lv.level:g}")
    if outside:
        notes.append(
            f"levels {', '.join(outside)} lie outside the expected curve's range: not judged"
        )
    return tuple(rows), tuple(notes)
