"""SpotLake-style archives: price, placement score and interruption frequency over time.

SpotLake (Lee et al., IISWC'22; github.com/ddps-lab/spotlake) publishes AWS spot data collected
every 10 minutes as CSV with the columns Time, InstanceType, Region, AZ, SPS, IF, OndemandPrice,
SpotPrice, Savings (column names as in its public archive and its readers, e.g.
JanPrzystal/Spot-Pricing-Aware-Scheduler opendc-trace PriceColumns.kt). `IF` is the Spot
Instance Advisor's bucket, written either as the label ("<5%", "5-10%") or as SpotLake's score
3.0 (<5%), 2.5 (5-10%), 2.0 (10-15%), 1.5 (15-20%), 1.0 (>20%). Every non-blank cell of SPS,
IF, SpotPrice and OndemandPrice becomes one signal at that row's Time; blank cells are skipped.
A `Provider` column is optional (default aws).
"""

from __future__ import annotations

import math
from dataclasses import replace

from gpurent.errors import DataError, InputError
from gpurent.inputs.files import csv_records
from gpurent.inputs.times import parse_time
from gpurent.spot.signals.base import SignalKind, SpotSignal, bucket_midpoint_pct, field_error

FORMAT = "spotlake"

REQUIRED = ("Time", "InstanceType", "Region", "AZ")
IF_SCORES = {3.0: "<5%", 2.5: "5-10%", 2.0: "10-15%", 1.5: "15-20%", 1.0: ">20%"}


def looks_like(header: list[str]) -> bool:
    """Whether a CSV header is SpotLake's (has InstanceType and AZ columns)."""
    return all(c in header for c in ("InstanceType", "AZ"))


def _number(cell: str, where: str, field: str, low: float, high: float) -> float:
    try:
        x = float(cell)
    except ValueError:
        x = math.nan
    if not (math.isfinite(x) and low <= x <= high):
        raise field_error(where, field, f"expected a number in [{low:g}, {high:g}], got {cell!r}")
    return x


def _interruption(cell: str, where: str) -> tuple[float, str]:
    try:
        score = float(cell)
    except ValueError:
        return bucket_midpoint_pct(cell, f"{where}: field 'IF'"), cell
    if score not in IF_SCORES:
        raise field_error(
            where, "IF", f"{cell!r} is neither a bucket label nor one of 3.0, 2.5, 2.0, 1.5, 1.0"
        )
    label = IF_SCORES[score]
    return bucket_midpoint_pct(label, where), label


def _as(base: SpotSignal, kind: SignalKind, value: float, label: str) -> SpotSignal:
    return replace(base, kind=kind, value=value, label=label)


def parse(text: str, where: str) -> list[SpotSignal]:
    """Signals from a SpotLake CSV export; InputError naming where and the line if bad."""
    header, rows = csv_records(text, where)
    for col in REQUIRED:
        if col not in header:
            raise field_error(where, col, f"column missing; need {', '.join(REQUIRED)}")
    out = []
    for line, row in rows:
        at = f"{where}:{line}"
        try:
            when = parse_time(row["Time"], f"{at}: field 'Time'")
        except DataError as exc:
            raise InputError(exc.message) from None
        for col in ("InstanceType", "Region"):
            if not row[col].strip():
                raise field_error(at, col, "blank")
        base = SpotSignal(
            source=f"{FORMAT}:{where}",
            as_of=when,
            provider=(row.get("Provider") or "").strip().lower() or "aws",
            region=row["Region"].strip(),
            zone=row["AZ"].strip() or None,
            instance=row["InstanceType"].strip(),
            kind=SignalKind.SPOT_PRICE,
            value=0.0,
            label="",
        )
        cells = {c: (row.get(c) or "").strip() for c in ("SPS", "IF", "SpotPrice", "OndemandPrice")}
        if cells["SPS"]:
            sps = _number(cells["SPS"], at, "SPS", 1, 10)
            out.append(_as(base, SignalKind.PLACEMENT_SCORE, sps, f"score {sps:g}/10"))
        if cells["IF"]:
            mid, label = _interruption(cells["IF"], at)
            out.append(_as(base, SignalKind.INTERRUPTION_PCT, mid, label))
        for col, kind in (
            ("SpotPrice", SignalKind.SPOT_PRICE),
            ("OndemandPrice", SignalKind.ON_DEMAND_PRICE),
        ):
            if cells[col]:
                price = _number(cells[col], at, col, 0, 1e6)
                out.append(_as(base, kind, price, f"${price:g}/h"))
    return out
