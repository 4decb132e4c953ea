"""Azure spot eviction rates: the Azure Resource Graph `SpotResources` table, as JSON.

Query (Azure CLI, `az graph query -q ...`):
  SpotResources | where type =~ 'microsoft.compute/skuspotevictionrate/location'
  | project skuName = tostring(sku.name), location, evictionRate = tostring(properties.evictionRate)
The answer is {"data": [{"skuName": "Standard_NC24ads_A100_v4", "location": "eastus",
"evictionRate": "0-5"}, ...]} (a bare list of those rows is read too). Buckets are "0-5", "5-10",
"10-15", "15-20" and "20+" percent, per region. Azure does not state the window; gpurent reads the
bucket like AWS's trailing month (see base.RATE_RULE) and says so.

GCP publishes no per-zone or per-region preemption rates (only the 24 h limit of preemptible
VMs and that Spot VMs may be preempted at any time), so there is no GCP importer.
"""

from __future__ import annotations

from datetime import datetime

from gpurent.spot.signals.base import (
    SignalKind,
    SpotSignal,
    bucket_midpoint_pct,
    field_error,
    need_str,
)

FORMAT = "azure-eviction"


def parse(doc: object, where: str, *, as_of: datetime) -> list[SpotSignal]:
    """Eviction-rate signals from the Resource Graph answer doc; InputError naming where if bad."""
    rows = doc.get("data") if isinstance(doc, dict) else doc
    if not isinstance(rows, list):
        raise field_error(where, "data", "missing or not a list of rows")
    out = []
    for i, row in enumerate(rows):
        at = f"{where}: data[{i}]"
        label = need_str(row, "evictionRate", at)
        out.append(
            SpotSignal(
                source=f"{FORMAT}:{where}",
                as_of=as_of,
                provider="azure",
                region=need_str(row, "location", at).lower(),
                zone=None,
                instance=need_str(row, "skuName", at),
                kind=SignalKind.INTERRUPTION_PCT,
                value=bucket_midpoint_pct(label, f"{at}: field 'evictionRate'"),
                label=label if label.endswith("%") else f"{label}%",
            )
        )
    return out
