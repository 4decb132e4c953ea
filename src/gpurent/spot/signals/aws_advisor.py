"""AWS Spot Instance Advisor: its public JSON (spot-bid-advisor.s3.amazonaws.com/
spot-advisor-data.json), the data behind the advisor web page.

Structure: "ranges" lists the interruption-frequency buckets, each {"index": 0, "label": "<5%",
"max": 5}; "spot_advisor" maps region -> OS ("Linux", "Windows") -> instance type ->
{"s": savings % over on-demand, "r": index of its bucket}. The frequency is the share of
instances AWS interrupted in the trailing month, per region (no zone). The file has no date:
its as-of time is the file's modification time unless `--as-of` is given.
"""

from __future__ import annotations

from datetime import datetime

from gpurent.spot.signals.base import (
    SignalKind,
    SpotSignal,
    bucket_midpoint_pct,
    field_error,
    need_number,
    need_str,
)

FORMAT = "aws-advisor"


def _ranges(doc: dict[str, object], where: str) -> dict[int, tuple[str, float]]:
    ranges = doc.get("ranges")
    if not isinstance(ranges, list) or not ranges:
        raise field_error(where, "ranges", "missing or empty; expected the bucket list")
    out = {}
    for i, r in enumerate(ranges):
        at = f"{where}: ranges[{i}]"
        index = int(need_number(r, "index", at, low=0, high=1000))
        label = need_str(r, "label", at)
        out[index] = (label, bucket_midpoint_pct(label, f"{at}: field 'label'"))
    return out


def parse(doc: object, where: str, *, as_of: datetime, os_name: str = "Linux") -> list[SpotSignal]:
    """One interruption-frequency signal per region and instance type for `os_name`."""
    if not isinstance(doc, dict):
        raise field_error(where, "spot_advisor", "missing; expected a JSON object")
    buckets = _ranges(doc, where)
    advisor = doc.get("spot_advisor")
    if not isinstance(advisor, dict):
        raise field_error(where, "spot_advisor", "missing or not an object of regions")
    out = []
    for region, by_os in advisor.items():
        if not isinstance(by_os, dict):
            raise field_error(where, f"spot_advisor.{region}", "expected an object of OS names")
        types = by_os.get(os_name, {})
        if not isinstance(types, dict):
            raise field_error(where, f"spot_advisor.{region}.{os_name}", "expected an object")
        for instance, stats in types.items():
            at = f"{where}: spot_advisor.{region}.{os_name}.{instance}"
            index = int(need_number(stats, "r", at, low=0, high=1000))
            if index not in buckets:
                raise field_error(at, "r", f"bucket index {index} is not in 'ranges'")
            label, mid = buckets[index]
            out.append(
                SpotSignal(
                    source=f"{FORMAT}:{where}",
                    as_of=as_of,
                    provider="aws",
                    region=str(region),
                    zone=None,
                    instance=str(instance),
                    kind=SignalKind.INTERRUPTION_PCT,
                    value=mid,
                    label=label,
                )
            )
    return out
