"""The contract checklist: each contract point the guide lists, what each vendor states (pure).

The guide's contract points (seed guide, section 7.2): SLA credits when monthly availability
falls below 99.9%, the disk-wiping standard at lease end (e.g. NIST SP 800-88), and a hardware
upgrade path (e.g. V100 to A100); gpurent adds exit terms. A point is "meets" when the statement
covers the guide's ask, "stated" when something is stated that falls short or cannot be checked
mechanically, and "missing" when the vendors file says nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from gpurent.vendors.file import Provider

SLA_AVAILABILITY_PCT = 99.9


class PointStatus(StrEnum):
    """How a vendor answers a checklist point: meets it, states something, or says nothing."""

    MEETS = "meets"
    STATED = "stated"
    MISSING = "missing"


@dataclass(frozen=True, slots=True, kw_only=True)
class VendorStatement:
    """What one vendor states on one checklist point."""

    vendor: str
    status: PointStatus
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChecklistPoint:
    """One point of the guide's checklist and each vendor's statement on it."""

    point: str
    guide: str  # what the guide asks
    statements: tuple[VendorStatement, ...]

    @property
    def missing(self) -> tuple[str, ...]:
        """The vendors that say nothing on this point."""
        return tuple(s.vendor for s in self.statements if s.status is PointStatus.MISSING)


def _sla(p: Provider) -> VendorStatement:
    if not p.sla_tiers:
        return VendorStatement(vendor=p.name, status=PointStatus.MISSING, text="no SLA tiers")
    tiers = sorted(p.sla_tiers, key=lambda t: -t.below_pct)
    text = "; ".join(f"below {t.below_pct:g}%: {t.credit_pct:g}% credit" for t in tiers)
    ok = any(t.below_pct >= SLA_AVAILABILITY_PCT and t.credit_pct > 0 for t in tiers)
    if not ok:
        text += f" (no credit until availability is below {tiers[0].below_pct:g}%)"
    return VendorStatement(
        vendor=p.name,
        status=PointStatus.MEETS if ok else PointStatus.STATED,
        text=f"{text} ({p.sla_source})",
    )


def _text_point(vendor: str, text: str | None, meets: bool) -> VendorStatement:
    if text is None:
        return VendorStatement(vendor=vendor, status=PointStatus.MISSING, text="not stated")
    return VendorStatement(
        vendor=vendor, status=PointStatus.MEETS if meets else PointStatus.STATED, text=text
    )


def checklist(providers: Sequence[Provider]) -> tuple[ChecklistPoint, ...]:
    """The guide's checklist points with each provider's statements."""
    wipe = [
        _text_point(
            p.name,
            p.contract.data_destruction,
            "800-88" in (p.contract.data_destruction or "").replace(" ", ""),
        )
        for p in providers
    ]
    return (
        ChecklistPoint(
            point="SLA credits",
            guide=f"service credit when monthly availability is below {SLA_AVAILABILITY_PCT:g}%",
            statements=tuple(_sla(p) for p in providers),
        ),
        ChecklistPoint(
            point="data destruction",
            guide="disks wiped at lease end to a named standard (e.g. NIST SP 800-88)",
            statements=tuple(wipe),
        ),
        ChecklistPoint(
            point="upgrade path",
            guide="a window to move to newer hardware (e.g. V100 to A100)",
            statements=tuple(
                _text_point(p.name, p.contract.upgrade_path, False) for p in providers
            ),
        ),
        ChecklistPoint(
            point="exit terms",
            guide="(gpurent) notice, data export and fees when leaving",
            statements=tuple(_text_point(p.name, p.contract.exit_terms, False) for p in providers),
        ),
    )
