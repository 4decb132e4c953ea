"""Public spot signals (see `base` for the model and the bucket rule): read, choose, rank.

`parse_signals(text, where, ...)` reads one file in one of `FORMATS` (detected when not given);
`select` picks the signal that applies to a provider/region/instance and ranks zones by them.
Pure: the CLI reads files and the clock and keeps the store.
"""

from __future__ import annotations

from datetime import datetime

from gpurent.errors import InputError
from gpurent.inputs.files import parse_json
from gpurent.spot.signals import aws_advisor, aws_sps, azure_eviction, spotlake
from gpurent.spot.signals.base import RATE_RULE, SignalKind, SpotSignal

FORMATS = (aws_sps.FORMAT, aws_advisor.FORMAT, spotlake.FORMAT, azure_eviction.FORMAT)
"""The signal file formats `spot signals import` reads."""

GCP_NOTE = (
    "GCP publishes no per-zone or per-region preemption rates; record your own trace with "
    "`gpurent spot probe` or use `plan`'s stated default"
)
"""Why no GCP signal exists, and what to do instead."""


def detect_format(text: str, where: str) -> str:
    """The format of a file's text, from its shape (JSON keys or CSV header)."""
    head = text.lstrip()[:1]
    if head in ("{", "["):
        doc = parse_json(text, where)
        if isinstance(doc, dict) and "SpotPlacementScores" in doc:
            return aws_sps.FORMAT
        if isinstance(doc, dict) and "spot_advisor" in doc:
            return aws_advisor.FORMAT
        rows = doc.get("data") if isinstance(doc, dict) else doc
        if (
            isinstance(rows, list)
            and rows
            and isinstance(rows[0], dict)
            and ("evictionRate" in rows[0] or "skuName" in rows[0])
        ):
            return azure_eviction.FORMAT
    else:
        first = text.splitlines()[0] if text.strip() else ""
        if spotlake.looks_like([c.strip() for c in first.split(",")]):
            return spotlake.FORMAT
    raise InputError(
        f"{where}: not a spot signal file gpurent knows; pass --format "
        f"({', '.join(FORMATS)}); formats in docs/spot.md"
    )


def parse_signals(
    text: str,
    where: str,
    *,
    fmt: str | None,
    as_of: datetime,
    instance: str | None = None,
    os_name: str = "Linux",
) -> tuple[SpotSignal, ...]:
    """The signals of one file. `as_of` dates files that carry no time (all but SpotLake)."""
    if fmt is not None and fmt.lower() == "gcp":
        raise InputError(GCP_NOTE)
    name = fmt.lower() if fmt is not None else detect_format(text, where)
    if name not in FORMATS:
        raise InputError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    if name == spotlake.FORMAT:
        out = spotlake.parse(text, where)
    else:
        doc = parse_json(text, where)
        if name == aws_sps.FORMAT:
            out = aws_sps.parse(doc, where, as_of=as_of, instance=instance)
        elif name == aws_advisor.FORMAT:
            out = aws_advisor.parse(doc, where, as_of=as_of, os_name=os_name)
        else:
            out = azure_eviction.parse(doc, where, as_of=as_of)
    if instance is not None:
        out = [s for s in out if s.instance == instance]
    if not out:
        raise InputError(f"{where}: no signal in the file (format {name}); nothing imported")
    return tuple(out)


__all__ = [
    "FORMATS",
    "GCP_NOTE",
    "RATE_RULE",
    "SignalKind",
    "SpotSignal",
    "detect_format",
    "parse_signals",
]
