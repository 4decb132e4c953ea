"""Spot price forecasts, back-tested against the naive last value.

Each step-function series is sampled on the hour (the price in force at each whole hour). At
every origin t (after `warmup_h` hours, hourly) each method predicts the price `horizon_h`
hours later from the samples up to t, and the absolute error against the sampled truth is kept
(rolling origin: a method never sees the future). Methods:
- `last`: the last value (the naive baseline every other method must beat);
- `ewma`: exponentially weighted mean of past hourly samples (alpha = `EWMA_ALPHA`), which wins
  when prices revert to a level;
- `weekly`: the price at the same hour one week before the target (needs > 1 week of data),
  which wins only if there is a weekly pattern.
MAE is pooled over series and origins, in $/h and relative to the true price. The forecast
for each series uses the method with the lowest pooled MAE.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from gpurent.errors import InputError
from gpurent.spot.analytics.history import HOURS_PER_WEEK, PriceSeries

EWMA_ALPHA = 0.3
METHODS = ("last", "ewma", "weekly")


@dataclass(frozen=True, slots=True, kw_only=True)
class MethodScore:
    """Back-test error of one method: MAE in $/h, mean relative error, and forecasts scored."""

    method: str
    mae_usd_per_hour: float | None
    mean_relative_error: float | None
    forecasts: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SeriesForecast:
    """The chosen method's forecast of one series, `horizon_h` after its last hour."""

    label: str
    last_usd_per_hour: float
    forecast_usd_per_hour: float
    at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Backtest:
    """Pooled back-test scores, the best method, and per-series forecasts."""

    horizon_h: int
    warmup_h: int
    scores: tuple[MethodScore, ...]
    best_method: str
    improvement_over_last: float | None
    forecasts: tuple[SeriesForecast, ...]


def hourly_samples(series: PriceSeries) -> tuple[datetime, list[float]]:
    """The price in force at each whole hour from the first record's next hour to `end`."""
    first = series.times[0].replace(minute=0, second=0, microsecond=0)
    if first < series.times[0]:
        first += timedelta(hours=1)
    values: list[float] = []
    t = first
    i = 0
    current = series.prices_usd_per_hour[0]
    while t <= series.end:
        while i < len(series.times) and series.times[i] <= t:
            current = series.prices_usd_per_hour[i]
            i += 1
        values.append(current)
        t += timedelta(hours=1)
    return first, values


def _predict(method: str, past: Sequence[float], ewma: float, target: int) -> float | None:
    if method == "last":
        return past[-1]
    if method == "ewma":
        return ewma
    back = target - HOURS_PER_WEEK
    return past[back] if 0 <= back < len(past) else None


def backtest(series: Sequence[PriceSeries], *, horizon_h: int = 1, warmup_h: int = 24) -> Backtest:
    """Rolling-origin back-test of all methods over all series; see the module docstring."""
    if horizon_h < 1:
        raise InputError(f"--horizon must be >= 1 hour, got {horizon_h}")
    if warmup_h < 1:
        raise InputError(f"warm-up must be >= 1 hour, got {warmup_h}")
    abs_err = dict.fromkeys(METHODS, 0.0)
    rel_err = dict.fromkeys(METHODS, 0.0)
    counts = dict.fromkeys(METHODS, 0)
    sampled = []
    for s in series:
        start, xs = hourly_samples(s)
        sampled.append((s, start, xs))
        if not xs:
            continue
        ewma = xs[0]
        smoothed = [ewma]
        for x in xs[1:]:
            ewma = EWMA_ALPHA * x + (1 - EWMA_ALPHA) * ewma
            smoothed.append(ewma)
        for origin in range(min(warmup_h, len(xs)) - 1, len(xs) - horizon_h):
            target = origin + horizon_h
            truth = xs[target]
            past = xs[: origin + 1]
            for m in METHODS:
                guess = _predict(m, past, smoothed[origin], target)
                if guess is None:
                    continue
                abs_err[m] += abs(guess - truth)
                rel_err[m] += abs(guess - truth) / truth if truth > 0 else 0.0
                counts[m] += 1
    scores = tuple(
        MethodScore(
            method=m,
            mae_usd_per_hour=abs_err[m] / counts[m] if counts[m] else None,
            mean_relative_error=rel_err[m] / counts[m] if counts[m] else None,
            forecasts=counts[m],
        )
        for m in METHODS
    )
    scored = [s for s in scores if s.mae_usd_per_hour is not None]
    best = (
        min(scored, key=lambda s: (s.mae_usd_per_hour or 0.0, s.method != "last")).method
        if scored
        else "last"
    )
    base = scores[0].mae_usd_per_hour
    best_mae = next(s.mae_usd_per_hour for s in scores if s.method == best)
    improvement = None
    if base is not None and best_mae is not None and base > 0:
        improvement = 1.0 - best_mae / base
    forecasts = []
    for s, start, xs in sampled:
        if not xs:
            continue
        ew = xs[0]
        for x in xs[1:]:
            ew = EWMA_ALPHA * x + (1 - EWMA_ALPHA) * ew
        target = len(xs) - 1 + horizon_h
        guess = _predict(best, xs, ew, target)
        forecasts.append(
            SeriesForecast(
                label=s.label,
                last_usd_per_hour=xs[-1],
                forecast_usd_per_hour=xs[-1] if guess is None or math.isnan(guess) else guess,
                at=start + timedelta(hours=target),
            )
        )
    return Backtest(
        horizon_h=horizon_h,
        warmup_h=warmup_h,
        scores=scores,
        best_method=best,
        improvement_over_last=improvement,
        forecasts=tuple(forecasts),
    )
