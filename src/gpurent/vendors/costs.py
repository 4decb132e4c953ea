"""The reference job's cost at one provider, hidden costs included, each rate with its source
(pure): compute billed by the provider's steps and minimum (`gpurent.pricing.costs.billed_hours`
with the `gpurent.cloud.billing` rule), egress, storage and public IPs."""

from __future__ import annotations

from dataclasses import dataclass

from gpurent.cloud.billing import BillingRule, EgressTo, billing_rule
from gpurent.pricing.costs import billed_hours
from gpurent.units import HOURS_PER_MONTH
from gpurent.vendors.file import Provider, ReferenceJob


@dataclass(frozen=True, slots=True, kw_only=True)
class CostItem:
    """One item of the reference job's cost: USD, the arithmetic and where the rate came from."""

    item: str  # "compute", "egress", "storage", "public IPs"
    usd: float
    basis: str  # the arithmetic, e.g. "8 GPUs x 100 h billed x $3.93/GPU-h"
    source: str  # "vendors file", the billing table's source, or "not stated"


def _egress_rate(provider: Provider, rule: BillingRule, dest: str) -> tuple[float, str]:
    stated = dict(provider.hidden.egress_usd_per_gb)
    if dest in stated:
        return stated[dest], "vendors file"
    return rule.egress_rate(
        EgressTo(dest)
    ), f"gpurent.cloud.billing {rule.provider}: {rule.egress_source}"


def job_cost(provider: Provider, job: ReferenceJob) -> tuple[CostItem, ...] | None:
    """The reference job's cost items at this provider; None without a GPU-hour price."""
    if provider.gpu_usd_per_hour is None:
        return None
    rule = billing_rule(provider.catalog_provider)
    rule_source = f"gpurent.cloud.billing {rule.provider}"
    if provider.hidden.minimum_billing_h is not None:
        minimum_s = round(provider.hidden.minimum_billing_h * 3600)
        min_source = "vendors file (minimum billing)"
    else:
        minimum_s = rule.minimum_s
        min_source = f"{rule_source}: {rule.billing_source}"
    hours = billed_hours(job.hours * 3600.0, rule.step_s, minimum_s)
    compute = provider.gpu_usd_per_hour * job.gpus * hours
    items = [
        CostItem(
            item="compute",
            usd=compute,
            basis=f"{job.gpus} GPUs x {hours:g} h billed x ${provider.gpu_usd_per_hour:g}/GPU-h",
            source=f"price: vendors file; billing steps: {min_source}",
        )
    ]
    rate, source = _egress_rate(provider, rule, job.egress_to)
    items.append(
        CostItem(
            item=f"egress ({job.egress_to})",
            usd=job.egress_gb * rate,
            basis=f"{job.egress_gb:g} GB x ${rate:g}/GB",
            source=source,
        )
    )
    if provider.hidden.storage_usd_per_gb_month is not None:
        storage_rate, storage_source = provider.hidden.storage_usd_per_gb_month, "vendors file"
    else:
        storage_rate = rule.storage_usd_per_gb_month
        storage_source = f"{rule_source}: {rule.storage_source}"
    items.append(
        CostItem(
            item="storage",
            usd=job.storage_gb * storage_rate * job.hours / HOURS_PER_MONTH,
            basis=(
                f"{job.storage_gb:g} GB x ${storage_rate:g}/GB-month x {job.hours:g} h "
                f"/ {HOURS_PER_MONTH:g} h"
            ),
            source=storage_source,
        )
    )
    if provider.hidden.ip_usd_per_hour is not None:
        items.append(
            CostItem(
                item="public IPs",
                usd=provider.hidden.ip_usd_per_hour * job.public_ips * job.hours,
                basis=(
                    f"{job.public_ips} x {job.hours:g} h x ${provider.hidden.ip_usd_per_hour:g}/h"
                ),
                source="vendors file",
            )
        )
    else:
        items.append(
            CostItem(
                item="public IPs",
                usd=0.0,
                basis="not stated: counted as $0",
                source="not stated in the vendors file; ask the vendor",
            )
        )
    return tuple(items)
