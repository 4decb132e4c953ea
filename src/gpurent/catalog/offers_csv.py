"""Offers as CSV for spreadsheets and scripts (`gpurent offers --csv`).

RFC 4180 through the csv module: a header row, CRLF line ends, fields quoted where needed.
Units are in the column names; an empty cell means "not known" (or no spot market).
Pure: offers in, text out.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable

from gpurent.catalog.offer import Offer


def _opt(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


COLUMNS: tuple[tuple[str, Callable[[Offer], str]], ...] = (
    ("provider", lambda o: o.provider),
    ("instance_type", lambda o: o.instance_type),
    ("region", lambda o: o.region),
    ("gpu", lambda o: o.gpu_name),
    ("gpu_count", lambda o: str(o.gpu_count)),
    ("gpu_memory_gib", lambda o: f"{o.gpu_memory_gib:g}"),
    ("vcpus", lambda o: _opt(o.vcpus)),
    ("memory_gib", lambda o: _opt(o.memory_gib)),
    ("price_usd_per_hour", lambda o: _opt(o.price_usd_per_hour)),
    ("price_usd_per_gpu_hour", lambda o: _opt(o.price_usd_per_gpu_hour)),
    ("spot_price_usd_per_hour", lambda o: _opt(o.spot_price_usd_per_hour)),
    ("spot_price_usd_per_gpu_hour", lambda o: _opt(o.spot_price_usd_per_gpu_hour)),
    ("network_gbps", lambda o: _opt(o.network_gbps)),
    ("gpu_interconnect", lambda o: o.gpu_interconnect or ""),
    ("billing_granularity_s", lambda o: str(o.billing_granularity_s)),
    ("as_of", lambda o: o.as_of),
    ("source", lambda o: o.source),
)
"""(column name, cell of an offer), in output order."""


def offers_csv(offers: Iterable[Offer]) -> str:
    """The offers as RFC 4180 CSV text with a header row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(name for name, _ in COLUMNS)
    for offer in offers:
        writer.writerow(cell(offer) for _, cell in COLUMNS)
    return out.getvalue()
