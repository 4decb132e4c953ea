"""One analysis of a price history (and optional availability traces), and its HTML page.

`analyse_history` ties the pieces together (step functions -> hour-of-week profiles -> the
weekday-evening test for price, and for availability when traces are given -> forecast
back-test); `gpurent.report.html.spot_history_page` draws it as a page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from gpurent.errors import InputError
from gpurent.spot.analytics.forecast import Backtest, backtest
from gpurent.spot.analytics.history import (
    PatternTest,
    PriceSeries,
    Profile,
    availability_profile,
    build_series,
    hour_group_test,
    is_business_hours,
    price_profile,
    weekday_evening_test,
)
from gpurent.spot.io.price_io import PriceRecord, load_price_history, records_from_traces
from gpurent.spot.io.trace import Trace


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryReport:
    """What `gpurent spot history` prints: coverage, profiles, tests, back-test."""

    series: int
    start: datetime
    end: datetime
    days_of_data: float
    price_profile: Profile
    price_evening: PatternTest
    availability_profile: Profile | None
    availability_evening: PatternTest | None
    availability_business_hours: PatternTest | None
    backtest: Backtest
    answer: str


def analyse_history(
    series: Sequence[PriceSeries],
    *,
    traces: Sequence[Trace] = (),
    utc_offset_hours: int = 0,
    evening_hours: tuple[int, int] = (17, 22),
    horizon_h: int = 1,
    nodes: int = 1,
) -> HistoryReport:
    """Profiles, weekday-evening tests and the forecast back-test for the given series."""
    if not series:
        raise InputError("no price series to analyse")
    start = min(s.times[0] for s in series)
    end = max(s.end for s in series)
    days = (end - start).total_seconds() / 86400.0
    prof = price_profile(series, utc_offset_hours=utc_offset_hours)
    price_test = weekday_evening_test(
        prof, quantity="price", days_of_data=days, evening_hours=evening_hours
    )
    avail = avail_eve = avail_biz = None
    if traces:
        avail = availability_profile(traces, utc_offset_hours=utc_offset_hours, nodes=nodes)
        trace_days = max(t.duration_hours for t in traces) / 24.0
        avail_eve = weekday_evening_test(
            avail, quantity="availability", days_of_data=trace_days, evening_hours=evening_hours
        )
        avail_biz = hour_group_test(
            avail,
            is_business_hours,
            group_name="weekday business hours (09-17)",
            quantity="availability",
            days_of_data=trace_days,
        )
    bt = backtest(series, horizon_h=horizon_h, warmup_h=min(24, max(1, int(days * 24) // 2)))
    answer = "Is spot cheapest on weekday evenings? " + price_test.verdict + "."
    if avail_biz is not None:
        answer += " Availability: " + avail_biz.verdict + "."
    return HistoryReport(
        series=len(series),
        start=start,
        end=end,
        days_of_data=days,
        price_profile=prof,
        price_evening=price_test,
        availability_profile=avail,
        availability_evening=avail_eve,
        availability_business_hours=avail_biz,
        backtest=bt,
        answer=answer,
    )


def parse_evening(text: str) -> tuple[int, int]:
    """`--evening START-END` hours, e.g. "17-22"."""
    try:
        a, b = (int(x) for x in text.split("-"))
    except ValueError:
        raise InputError(f"--evening {text!r}: write START-END hours, e.g. 17-22") from None
    return a, b


def history_from_files(
    files: Sequence[Path],
    traces: Sequence[Trace] = (),
    *,
    zones: Sequence[str] = (),
    instance_types: Sequence[str] = (),
    product: str = "Linux/UNIX",
    utc_offset_hours: int = 0,
    evening: str = "17-22",
    horizon_h: int = 1,
) -> HistoryReport:
    """`gpurent spot history`: the price history files' records (and the traces' per-tick
    prices, which also give the availability profile), filtered and analysed."""
    records: list[PriceRecord] = []
    for f in files:
        records.extend(load_price_history(f))
    records.extend(records_from_traces(traces))
    if not records:
        raise InputError("give a price history file, or --trace files with --prices")
    ends = [
        t.start_time + timedelta(hours=t.duration_hours) for t in traces if t.start_time is not None
    ]
    end = max(ends) if ends and not files else None  # files bring their own window end
    series = build_series(
        records,
        end=end,
        zones=zones,
        instance_types=instance_types,
        products=() if product == "all" else (product,) if files else (),
    )
    return analyse_history(
        series,
        traces=traces,
        utc_offset_hours=utc_offset_hours,
        evening_hours=parse_evening(evening),
        horizon_h=horizon_h,
    )
