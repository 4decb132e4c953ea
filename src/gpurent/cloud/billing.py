"""How each provider bills, as the provider writes it: the table plan and pricing share.

Per provider: the billing step and minimum billed time of an instance, block storage per
GB-month (and whether it is charged while the instance is stopped), egress per GB by
destination, and how long an instance takes from the request to a shell (provisioning) and
whether that time is billed. Every row says where each figure comes from; figures without a
public source are labelled "assumed". Providers without a row use `OTHERS`.

Pure data, standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class EgressTo(Enum):
    """Where data moved out of the instance goes."""

    INTERNET = "internet"
    REGION = "region"  # another region of the same provider
    ZONE = "zone"  # another zone of the same region


@dataclass(frozen=True, slots=True, kw_only=True)
class BillingRule:
    """One provider's billing rules and provisioning time, with their sources."""

    provider: str  # "others" for the row used by every provider without its own
    step_s: int  # instance time is billed in steps of this many seconds
    minimum_s: int  # and at least this long per launch
    billing_source: str
    storage_usd_per_gb_month: float
    storage_while_stopped: bool  # a stopped instance's disk is still charged
    storage_source: str
    egress_usd_per_gb: tuple[tuple[EgressTo, float], ...]
    egress_source: str
    provisioning_s: float  # request -> a shell on the instance
    provisioning_billed: bool  # whether the instance is billed while it provisions
    provisioning_source: str

    def egress_rate(self, to: EgressTo) -> float:
        """Egress price in USD per GB to the destination to."""
        for where, rate in self.egress_usd_per_gb:  # three pairs: no dict built per call
            if where is to:
                return rate
        raise KeyError(to)

    def billed_s(self, seconds: float) -> float:
        """Seconds billed for one launch running `seconds`: at least the minimum, in steps."""
        step = max(1, self.step_s)
        steps = -(-max(seconds, float(self.minimum_s)) // step)
        return steps * step


def _egress(internet: float, region: float, zone: float) -> tuple[tuple[EgressTo, float], ...]:
    return ((EgressTo.INTERNET, internet), (EgressTo.REGION, region), (EgressTo.ZONE, zone))


_CLOUD_BOOT = (
    "assumed 120 s: general-purpose EC2 instances boot in about 40 s (depot.dev/blog/"
    "faster-ec2-boot-time, 2024; martysweet.co.uk/ec2-launch-times, 2023); a GPU instance "
    "with its driver and a deep-learning image takes longer, and no public GPU figure was found"
)

OTHERS = BillingRule(
    provider="others",
    step_s=60,
    minimum_s=60,
    billing_source="assumed: per-minute billing (no rule recorded for this provider)",
    storage_usd_per_gb_month=0.10,
    storage_while_stopped=True,
    storage_source="assumed $0.10/GB-month, charged while stopped (no price recorded)",
    egress_usd_per_gb=_egress(0.09, 0.02, 0.01),
    egress_source="assumed: the AWS rates (no price recorded for this provider)",
    provisioning_s=300.0,
    provisioning_billed=False,
    provisioning_source="assumed 300 s (no public figure)",
)

BILLING_RULES: dict[str, BillingRule] = {
    "aws": BillingRule(
        provider="aws",
        step_s=1,
        minimum_s=60,
        billing_source="aws.amazon.com/ec2/pricing/on-demand: per-second billing for Linux, "
        "60 s minimum; billed from the 'running' state (EC2 User Guide, instance lifecycle)",
        storage_usd_per_gb_month=0.08,
        storage_while_stopped=True,
        storage_source="aws.amazon.com/ebs/pricing: gp3 $0.08/GB-month (us-east-1); EBS "
        "volumes are charged while the instance is stopped",
        egress_usd_per_gb=_egress(0.09, 0.02, 0.01),
        egress_source="aws.amazon.com/ec2/pricing/on-demand (data transfer): internet $0.09/GB "
        "first 10 TB/month, another region $0.02/GB, another zone $0.01/GB",
        provisioning_s=120.0,
        provisioning_billed=False,
        provisioning_source=_CLOUD_BOOT,
    ),
    "gcp": BillingRule(
        provider="gcp",
        step_s=1,
        minimum_s=60,
        billing_source="cloud.google.com/compute/vm-instance-pricing: per-second billing, "
        "1-minute minimum",
        storage_usd_per_gb_month=0.10,
        storage_while_stopped=True,
        storage_source="cloud.google.com/compute/disks-image-pricing: pd-balanced "
        "$0.10/GB-month (us-central1); disks are charged while the VM is stopped",
        egress_usd_per_gb=_egress(0.12, 0.02, 0.01),
        egress_source="cloud.google.com/vpc/network-pricing: premium tier internet ~$0.12/GB "
        "(first TB), between regions $0.02/GB, between zones $0.01/GB",
        provisioning_s=120.0,
        provisioning_billed=False,
        provisioning_source=_CLOUD_BOOT,
    ),
    "azure": BillingRule(
        provider="azure",
        step_s=1,
        minimum_s=1,
        billing_source="azure.microsoft.com/pricing/details/virtual-machines/linux: "
        "pay as you go, by the second",
        storage_usd_per_gb_month=0.10,
        storage_while_stopped=True,
        storage_source="assumed $0.10/GB-month for a managed disk (sizes are priced per tier, "
        "not per GB); managed disks are charged while the VM is deallocated",
        egress_usd_per_gb=_egress(0.087, 0.02, 0.01),
        egress_source="azure.microsoft.com/pricing/details/bandwidth: internet ~$0.087/GB "
        "(first 10 TB), between regions ~$0.02/GB, between zones ~$0.01/GB",
        provisioning_s=120.0,
        provisioning_billed=False,
        provisioning_source=_CLOUD_BOOT,
    ),
    "lambda": BillingRule(
        provider="lambda",
        step_s=60,
        minimum_s=60,
        billing_source="docs.lambda.ai/public-cloud/billing: on-demand instances billed in "
        "one-minute increments, from when the instance passes health checks",
        storage_usd_per_gb_month=0.20,
        storage_while_stopped=True,
        storage_source="docs.lambda.ai/public-cloud/billing: filesystems $0.20/GiB-month in "
        "one-hour increments, billed while they exist, mounted or not",
        egress_usd_per_gb=_egress(0.0, 0.0, 0.0),
        egress_source="docs.lambda.ai/public-cloud/billing: no charge for ingress or egress",
        provisioning_s=300.0,
        provisioning_billed=False,
        provisioning_source="assumed 300 s (no public figure); not billed: billing begins "
        "when the instance passes health checks (docs.lambda.ai/public-cloud/billing)",
    ),
    "runpod": BillingRule(
        provider="runpod",
        step_s=1,
        minimum_s=1,
        billing_source="docs.runpod.io/accounts-billing/billing: compute and storage billed "
        "per second",
        storage_usd_per_gb_month=0.10,
        storage_while_stopped=True,
        storage_source="runpod.io/pricing: volume disk $0.10/GB-month on a running pod "
        "($0.20 idle); stopped pods keep accruing storage (docs.runpod.io billing)",
        egress_usd_per_gb=_egress(0.0, 0.0, 0.0),
        egress_source="docs.runpod.io/accounts-billing/billing: no fees for data transfer",
        provisioning_s=60.0,
        provisioning_billed=False,
        provisioning_source="assumed 60 s to start a container on a host (no public figure)",
    ),
    "vast": BillingRule(
        provider="vast",
        step_s=1,
        minimum_s=1,
        billing_source="vast.ai/pricing: per-second billing",
        storage_usd_per_gb_month=0.10,
        storage_while_stopped=True,
        storage_source="assumed $0.10/GB-month: each host sets its own disk price, charged "
        "while the instance is stopped (vast.ai docs, instance storage)",
        egress_usd_per_gb=_egress(0.02, 0.02, 0.02),
        egress_source="assumed $0.02/GB: each host sets its own bandwidth price",
        provisioning_s=60.0,
        provisioning_billed=False,
        provisioning_source="assumed 60 s to start a container on a host (no public figure)",
    ),
}


def billing_rule(provider: str | None) -> BillingRule:
    """The rules for `provider` (case-insensitive); `OTHERS` when it has no row."""
    if provider is None:
        return OTHERS
    return BILLING_RULES.get(provider.strip().lower(), OTHERS)
