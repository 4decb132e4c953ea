"""POST /api/pricing/compare: on-demand vs spot vs committed, the document of
`gpurent pricing compare --json`. The body's fields are the command's flags, by the same names
(prices in USD per hour: `on_demand` for --on-demand)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from gpurent.catalog.sources import load_offers
from gpurent.inputs import values as v
from gpurent.pricing.compare_doc import CompareInputs, compare_document
from gpurent.report.jsonable import to_jsonable
from gpurent.server.params import check, required

router = APIRouter(prefix="/api", tags=["pricing"])
TEXT = 1000  # longest text field accepted (an offer key, a hybrid schedule)


class CompareRequest(BaseModel):
    """What `gpurent pricing compare` takes as flags, by the same names."""

    model_config = ConfigDict(extra="forbid")

    offer: str | None = Field(None, max_length=TEXT, description="provider/instance/region.")
    on_demand: float | None = Field(None, description="On-demand $/h (overrides the offer).")
    spot: float | None = Field(None, description="Spot $/h (overrides the offer).")
    committed: float | None = Field(None, description="Committed (reserved) $/h.")
    commit_discount: float | None = Field(None, description="Committed discount, e.g. 0.35.")
    commit_months: int = Field(12, description="Length of one commitment term, months.")
    commit_term: str | None = Field(None, max_length=TEXT, description="1d, 1w, 1mo, 1y, 3y.")
    hours_per_day: float = Field(24.0, description="Hours of use per day.")
    days_per_month: float = Field(30.0, description="Days of use per month.")
    months: float = Field(12.0, description="Months of use.")
    mtti_hours: float | None = Field(None, description="Spot mean time to interruption, h.")
    advisor_band: str | None = Field(None, max_length=TEXT, description="AWS Advisor band.")
    checkpoint_cost_s: float = Field(60.0, description="Seconds lost per checkpoint.")
    restart_s: float | None = Field(None, description="Seconds from interruption to resumed.")
    hybrid: str | None = Field(None, max_length=TEXT, description="NAME:HOURS:INSTANCE,...")
    storage_gb: float = Field(0.0, description="Disk kept for the whole period, GB.")


def _inputs(req: CompareRequest) -> CompareInputs:
    """The request checked with the validators of the CLI's flags."""
    return CompareInputs(
        offer_key=req.offer,
        on_demand_usd_per_hour=check(req.on_demand, "on_demand", v.positive),
        spot_usd_per_hour=check(req.spot, "spot", v.positive),
        committed_usd_per_hour=check(req.committed, "committed", v.positive),
        commit_discount=check(req.commit_discount, "commit_discount", v.fraction),
        commit_months=required(
            req.commit_months, "commit_months", v.bounded(v.positive_int, most=1200)
        ),
        commit_term=req.commit_term,
        hours_per_day=required(req.hours_per_day, "hours_per_day", v.bounded(v.positive, most=24)),
        days_per_month=required(
            req.days_per_month, "days_per_month", v.bounded(v.positive, most=31)
        ),
        months=required(req.months, "months", v.bounded(v.positive, most=1200)),
        mtti_hours=check(req.mtti_hours, "mtti_hours", v.bounded(v.positive, most=v.MAX_HOURS)),
        advisor_band=req.advisor_band,
        checkpoint_cost_s=required(
            req.checkpoint_cost_s,
            "checkpoint_cost_s",
            v.bounded(v.non_negative, most=v.MAX_SECONDS),
        ),
        restart_s=check(req.restart_s, "restart_s", v.bounded(v.non_negative, most=v.MAX_SECONDS)),
        hybrid=req.hybrid,
        storage_gb=required(req.storage_gb, "storage_gb", v.non_negative),
    )


@router.post(
    "/pricing/compare",
    summary="On-demand vs spot vs committed (as `gpurent pricing compare --json`)",
)
def pricing_compare(req: CompareRequest) -> Any:
    """The payment options compared, the document `gpurent pricing compare --json` prints."""
    doc = compare_document(_inputs(req), load_offers().offers)
    return to_jsonable(doc.as_json())
