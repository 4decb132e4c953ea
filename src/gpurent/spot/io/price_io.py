"""Read spot price history: AWS `describe-spot-price-history` JSON and the public archive TSV.

Formats (detected from the content; `.zst` files are decompressed first, needing the `spot` extra):
- AWS API JSON: `{"SpotPriceHistory": [{"AvailabilityZone", "InstanceType",
  "ProductDescription", "SpotPrice" (string, $/h), "Timestamp"}], "NextToken"}`; a JSON list of
  such pages (several `aws ec2 describe-spot-price-history` calls) is accepted too.
- Archive TSV (ericpauley/aws-spot-price-history): `AZ-ID  InstanceType  ProductDescription
  SpotPrice  Timestamp`, tab-separated, no header (a header line is skipped if present).
Each record is one price change (AWS reports a price when it changes), so a series is a step
function: see `gpurent.spot.analytics.history`. Traces with a per-tick price become records
here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from gpurent.errors import DataError
from gpurent.inputs import values as checks
from gpurent.inputs.times import is_number, parse_time
from gpurent.spot.io.trace import Trace
from gpurent.spot.io.trace_io import parse_json, read_text

_AWS_FIELDS = ("AvailabilityZone", "InstanceType", "ProductDescription", "SpotPrice", "Timestamp")


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceRecord:
    """One spot price change: from `time` on, `zone`/`instance_type`/`product` costs this much."""

    zone: str
    instance_type: str
    product: str
    price_usd_per_hour: float
    time: datetime


def load_price_history(path: str | Path) -> list[PriceRecord]:
    """Price records from an AWS JSON or archive TSV(.zst) file; DataError on bad content."""
    p = Path(path)
    text = read_text(p, "a JSON or TSV price history")
    if not text.strip():
        raise DataError(f"{p}: empty file; give a price history with at least one record")
    if text.lstrip()[:1] in "{[":
        return parse_aws_json(text, str(p))
    return parse_archive_tsv(text, str(p))


def parse_price(cell: Any, where: str) -> float:
    """A spot price cell ($/h): a finite number >= 0, or `DataError` with the `inputs.values`
    message."""
    return checks.in_data_file(checks.non_negative, cell, f"{where}: price")


def parse_aws_json(text: str, source: str) -> list[PriceRecord]:
    """Records of one or several `describe-spot-price-history` pages."""
    raw = parse_json(text, source)
    pages = raw if isinstance(raw, list) else [raw]
    out: list[PriceRecord] = []
    for page_no, page in enumerate(pages):
        if not isinstance(page, Mapping) or not isinstance(page.get("SpotPriceHistory"), list):
            raise DataError(
                f"{source}: page {page_no + 1} has no 'SpotPriceHistory' list; give the output "
                "of `aws ec2 describe-spot-price-history`"
            )
        for i, item in enumerate(page["SpotPriceHistory"]):
            where = f"{source}: SpotPriceHistory[{i}]"
            if not isinstance(item, Mapping):
                raise DataError(f"{where} is not an object")
            missing = [k for k in _AWS_FIELDS if k not in item]
            if missing:
                raise DataError(f"{where} lacks {', '.join(missing)}")
            out.append(
                PriceRecord(
                    zone=str(item["AvailabilityZone"]),
                    instance_type=str(item["InstanceType"]),
                    product=str(item["ProductDescription"]),
                    price_usd_per_hour=parse_price(item["SpotPrice"], where),
                    time=parse_time(str(item["Timestamp"]), where),
                )
            )
    if not out:
        raise DataError(f"{source}: SpotPriceHistory is empty; no price records")
    return out


def parse_archive_tsv(text: str, source: str) -> list[PriceRecord]:
    """Records of the public archive's TSV: AZ-ID, InstanceType, ProductDescription, SpotPrice,
    Timestamp."""
    out: list[PriceRecord] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        cells = line.rstrip("\r\n").split("\t")
        if len(cells) != 5:
            raise DataError(
                f"{source}:{n}: expected 5 tab-separated fields (AZ-ID, InstanceType, "
                f"ProductDescription, SpotPrice, Timestamp), got {len(cells)}"
            )
        if n == 1 and not is_number(cells[3]):
            continue  # a header line
        where = f"{source}:{n}"
        out.append(
            PriceRecord(
                zone=cells[0].strip(),
                instance_type=cells[1].strip(),
                product=cells[2].strip(),
                price_usd_per_hour=parse_price(cells[3], where),
                time=parse_time(cells[4], where),
            )
        )
    if not out:
        raise DataError(f"{source}: no price records; give at least one data line")
    return out


def records_from_traces(traces: Iterable[Trace], instance_type: str = "trace") -> list[PriceRecord]:
    """Per-tick trace prices as change records (one per change; the first tick always)."""
    out: list[PriceRecord] = []
    for tr in traces:
        if tr.price_usd_per_hour is None:
            continue
        if tr.start_time is None:
            raise DataError(
                f"trace {tr.name!r} has prices but no start time; use a dated CSV trace"
            )
        last: float | None = None
        for i, price in enumerate(tr.price_usd_per_hour):
            if price != last:
                out.append(
                    PriceRecord(
                        zone=tr.name,
                        instance_type=instance_type,
                        product="Linux/UNIX",
                        price_usd_per_hour=price,
                        time=tr.start_time + timedelta(hours=i * tr.gap_hours),
                    )
                )
                last = price
    return out
