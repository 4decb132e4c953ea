"""`gpurent plan --csv`: the ranked candidates, one row each, with the time and cost breakdown."""

from __future__ import annotations

import csv
import io

from gpurent.plan.result import Candidate, Plan

CSV_COLUMNS = (
    "rank",
    "provider",
    "instance_type",
    "region",
    "nodes",
    "gpus_per_node",
    "gpu_name",
    "pricing",
    "price_usd_per_hour",
    "layout",
    "time_s",
    "setup_s",
    "provisioning_s",
    "image_s",
    "dataset_s",
    "model_s",
    "output_s",
    "run_time_s",
    "compute_time_s",
    "total_usd",
    "compute_usd",
    "setup_usd",
    "spot_overhead_usd",
    "billing_rounding_usd",
    "storage_usd",
    "egress_usd",
    "term_hours",
    "availability_confidence",
    "availability_flag",
    "interruptions_per_hour",
    "as_of",
    "notes",
)


def _g(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def candidate_cells(c: Candidate) -> tuple[str, ...]:
    """The candidate's CSV cells, in the order of the CSV header."""
    s, k = c.setup, c.cost
    return (
        str(c.rank),
        c.provider,
        c.instance_type,
        c.region,
        str(c.nodes),
        str(c.gpus_per_node),
        c.gpu_name,
        c.pricing.value,
        _g(c.price_usd_per_hour),
        c.layout.label,
        _g(c.time_s),
        _g(s.total_s),
        _g(s.provisioning_s),
        _g(s.image_s),
        _g(s.dataset_s),
        _g(s.model_s),
        _g(s.output_s),
        _g(c.run_time_s),
        _g(c.compute_time_s),
        _g(k.total_usd),
        _g(k.compute_usd),
        _g(k.setup_usd),
        _g(k.spot_overhead_usd),
        _g(k.billing_rounding_usd),
        _g(k.storage_usd),
        _g(k.egress_usd),
        _g(c.term_hours),
        _g(c.availability.confidence),
        c.availability.flag,
        _g(c.spot.interruptions_per_hour) if c.spot else "",
        c.as_of,
        "; ".join(c.notes),
    )


_FORMULA_START = ("=", "+", "@", "\t", "\r")


def _safe(cell: str) -> str:
    """A text cell a spreadsheet will not run as a formula."""
    return "'" + cell if cell.startswith(_FORMULA_START) else cell


def render_csv(plan: Plan) -> str:
    """The ranked candidates (or the closest alternatives when nothing is feasible) as CSV."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in plan.top:
        writer.writerow([_safe(cell) for cell in candidate_cells(c)])
    return out.getvalue()
