"""What `gpurent vendors netcheck` measured, and its JSON document (`gpurent.vendors.netcheck`).

Pure: percentiles, compliance and the document's shape. The JSON keys are fixed (schema version
1); the vendors scorecard reads them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

KIND = "gpurent.vendors.netcheck"
SCHEMA_VERSION = 1


def percentile(values: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0..100) by linear interpolation between the closest ranks (the
    'linear' method of numpy and of Hyndman & Fan's type 7)."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    value = ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
    return min(max(value, ordered[low]), ordered[high])  # no rounding past the two ranks


@dataclass(frozen=True, slots=True)
class LatencyUs:
    """A latency distribution in microseconds; p90 is None where the tool gives no samples."""

    p50: float
    p90: float | None
    p99: float
    samples: int

    @classmethod
    def of(cls, samples_us: Sequence[float]) -> LatencyUs:
        """The distribution of samples_us: p50, p90, p99 and the sample count."""
        return cls(
            p50=percentile(samples_us, 50),
            p90=percentile(samples_us, 90),
            p99=percentile(samples_us, 99),
            samples=len(samples_us),
        )

    def to_dict(self) -> dict[str, Any]:
        """The distribution as a JSON-ready dict."""
        return {"p50": self.p50, "p90": self.p90, "p99": self.p99, "samples": self.samples}


@dataclass(frozen=True, slots=True)
class RdmaResult:
    """perftest's figures: `ib_write_lat` (one-way: half the round trip, as perftest reports it)
    and `ib_write_bw` (average bandwidth)."""

    latency_us: LatencyUs
    bandwidth_gbit_s: float

    def to_dict(self) -> dict[str, Any]:
        """The RDMA figures as a JSON-ready dict."""
        return {"latency_us": self.latency_us.to_dict(), "bandwidth_gbit_s": self.bandwidth_gbit_s}


def compliance(samples_gbit_s: Sequence[float], target_gbit_s: float | None) -> float | None:
    """Share of the throughput samples at or above the target (None without a target)."""
    if target_gbit_s is None or not samples_gbit_s:
        return None
    return sum(1 for s in samples_gbit_s if s >= target_gbit_s) / len(samples_gbit_s)


@dataclass(frozen=True, slots=True)
class NetcheckResult:
    """One run against one peer. `samples_gbit_s` are the per-interval throughputs (all
    streams together) that compliance counts; `rdma_note` says why RDMA was not measured."""

    peer: str
    latency_us: LatencyUs
    throughput_gbit_s: float
    samples_gbit_s: tuple[float, ...]
    interval_s: float
    streams: int
    target_gbit_s: float | None
    rdma: RdmaResult | None
    rdma_note: str

    @property
    def compliance(self) -> float | None:
        """Share of throughput samples at or above the target rate, or None without a target."""
        return compliance(self.samples_gbit_s, self.target_gbit_s)

    def to_dict(self) -> dict[str, Any]:
        """The result document (keys fixed by schema version 1)."""
        return netcheck_document(
            peer=self.peer,
            latency_us=self.latency_us,
            throughput_gbit_s=self.throughput_gbit_s,
            streams=self.streams,
            target_gbit_s=self.target_gbit_s,
            compliance=self.compliance,
            rdma=self.rdma,
        )


def netcheck_document(
    *,
    peer: str,
    latency_us: LatencyUs,
    throughput_gbit_s: float,
    streams: int,
    target_gbit_s: float | None,
    compliance: float | None,
    rdma: RdmaResult | None,
    note: str | None = None,
) -> dict[str, Any]:
    """The netcheck result document (keys fixed by schema version 1), from a run or from stated
    figures (`vendors.stated_evidence`); `note`, when given, says where the figures come from."""
    doc: dict[str, Any] = {
        "kind": KIND,
        "schema_version": SCHEMA_VERSION,
        "peer": peer,
        "latency_us": latency_us.to_dict(),
        "throughput_gbit_s": throughput_gbit_s,
        "streams": streams,
        "target_gbit_s": target_gbit_s,
        "compliance": compliance,
        "rdma": rdma.to_dict() if rdma else None,
    }
    if note is not None:
        doc["note"] = note
    return doc
