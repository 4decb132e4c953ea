"""Commitment terms people buy, per provider, each with its real minimum and its source.

A term bills every hour of itself whether used or not, in whole terms: `billed_term_hours`
is the one rule `plan --pricing reserved` and `pricing compare` both use for how much of a
term a job pays for. A discount is given only where the provider publishes one; elsewhere the
committed price comes from the offer, `--committed` or `--commit-discount`.

Pure data, standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HOURS_PER_DAY = 24.0
HOURS_PER_WEEK = 168.0
HOURS_PER_MONTH = 730.0  # 8,760 h / 12, as gpurent.units
HOURS_PER_YEAR = 8760.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitmentTerm:
    """One way to commit: its name, the hours it bills at the least, a published discount."""

    provider: str
    name: str
    hours: float  # the shortest purchase, every hour billed
    discount: float | None  # fraction off on-demand where the provider publishes one
    source: str


COMMITMENT_TERMS: tuple[CommitmentTerm, ...] = (
    CommitmentTerm(
        provider="aws",
        name="EC2 Capacity Block for ML",
        hours=HOURS_PER_DAY,
        discount=None,
        source="docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-purchase.html: "
        "durations in 1-day increments up to 14 days, 7-day increments up to 182 days",
    ),
    CommitmentTerm(
        provider="aws",
        name="1-year Savings Plan / Reserved Instance",
        hours=HOURS_PER_YEAR,
        discount=None,
        source="aws.amazon.com/savingsplans/compute-pricing: 1- or 3-year terms",
    ),
    CommitmentTerm(
        provider="aws",
        name="3-year Savings Plan / Reserved Instance",
        hours=3 * HOURS_PER_YEAR,
        discount=None,
        source="aws.amazon.com/savingsplans/compute-pricing: 1- or 3-year terms",
    ),
    CommitmentTerm(
        provider="gcp",
        name="1-year committed use discount",
        hours=HOURS_PER_YEAR,
        discount=None,
        source="cloud.google.com/compute/docs/instances/committed-use-discounts-overview: "
        "1- or 3-year commitments",
    ),
    CommitmentTerm(
        provider="gcp",
        name="3-year committed use discount",
        hours=3 * HOURS_PER_YEAR,
        discount=None,
        source="cloud.google.com/compute/docs/instances/committed-use-discounts-overview: "
        "1- or 3-year commitments",
    ),
    CommitmentTerm(
        provider="azure",
        name="1-year reservation",
        hours=HOURS_PER_YEAR,
        discount=None,
        source="learn.microsoft.com/azure/cost-management-billing/reservations: 1- or 3-year terms",
    ),
    CommitmentTerm(
        provider="azure",
        name="3-year reservation",
        hours=3 * HOURS_PER_YEAR,
        discount=None,
        source="learn.microsoft.com/azure/cost-management-billing/reservations: 1- or 3-year terms",
    ),
    CommitmentTerm(
        provider="lambda",
        name="1-Click Cluster reservation",
        hours=HOURS_PER_WEEK,
        discount=None,
        source="docs.lambda.ai/public-cloud/billing: 1-Click Clusters billed in weekly increments",
    ),
    CommitmentTerm(
        provider="vast",
        name="1-month reserved (prepaid) instance",
        hours=HOURS_PER_MONTH,
        discount=0.2,
        source="docs.vast.ai/cli/reference/prepay-instance: default discount 0.2 for 1 month",
    ),
    CommitmentTerm(
        provider="vast",
        name="3-month reserved (prepaid) instance",
        hours=3 * HOURS_PER_MONTH,
        discount=0.3,
        source="docs.vast.ai/cli/reference/prepay-instance: default discount 0.3 for 3 months",
    ),
)

DEFAULT_TERM_HOURS = HOURS_PER_YEAR
DEFAULT_TERM_SOURCE = "assumed 12-month term (no term recorded for this provider)"


def terms_for(provider: str | None) -> tuple[CommitmentTerm, ...]:
    """The provider's terms, shortest first (empty when none is recorded)."""
    name = (provider or "").strip().lower()
    return tuple(sorted((t for t in COMMITMENT_TERMS if t.provider == name), key=lambda t: t.hours))


def shortest_term(provider: str | None) -> CommitmentTerm | None:
    """The provider's shortest commitment term, or None when it sells none."""
    terms = terms_for(provider)
    return terms[0] if terms else None


def term_for_hours(provider: str | None, hours: float) -> CommitmentTerm | None:
    """The provider's term of exactly `hours`, if it sells one."""
    return next((t for t in terms_for(provider) if math.isclose(t.hours, hours)), None)


def billed_term_hours(span_hours: float, term_hours: float) -> float:
    """Hours billed by whole terms of `term_hours` covering `span_hours` of calendar time."""
    if not math.isfinite(span_hours):
        return math.inf
    terms = max(1, math.ceil(span_hours / term_hours - 1e-9))
    return terms * term_hours
