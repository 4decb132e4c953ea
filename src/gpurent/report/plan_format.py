"""Cell formatting shared by the plan renderers (terminal, Markdown, HTML): one wording."""

from __future__ import annotations

from gpurent.plan.result import Candidate, Explanation, Plan
from gpurent.units import format_duration, format_usd

TABLE_HEADERS = (
    "#",
    "provider",
    "instance",
    "region",
    "GPUs",
    "layout",
    "pricing",
    "time",
    "cost",
    "$/unit",
    "bottleneck",
    "notes",
)
PARETO_HEADERS = ("time", "cost", "GPUs", "offer", "pricing")
BREAKDOWN_TITLE = "Where the time and money go (sources: --json and the assumptions)"


def region_cell(c: Candidate) -> str:
    """The candidate's region, with how many more regions offer it at the same or more."""
    return f"{c.region} (+{c.also_in_regions})" if c.also_in_regions else c.region


def gpus_cell(c: Candidate) -> str:
    """The candidate's GPUs, e.g. "8x H100"."""
    return c.gpus_label


def small_usd(amount: float) -> str:
    """USD with two significant digits below a dollar ($0.0037), else `format_usd`."""
    if 0 < amount < 1:
        return f"${amount:.2g}"
    return format_usd(amount)


def unit_cost_cell(c: Candidate) -> str:
    """Cost per epoch where the workload has epochs, else per unit of work (1M tokens...)."""
    if c.cost_per_epoch_usd is not None:
        return f"{small_usd(c.cost_per_epoch_usd)}/epoch"
    return f"{small_usd(c.cost_per_unit_usd)}/{c.cost_unit}"


def duration_range(low_s: float, high_s: float) -> str:
    """ "4.3-6.1 h" (one unit when both ends share it), else "50.0 min-1.2 h"."""
    lo, hi = format_duration(low_s), format_duration(high_s)
    lo_num, _, lo_unit = lo.partition(" ")
    _, _, hi_unit = hi.partition(" ")
    return f"{lo_num}-{hi}" if lo_unit == hi_unit else f"{lo}-{hi}"


def usd_range(low: float, high: float) -> str:
    """ "$1,100-1,500": the second end without its dollar sign."""
    return f"{format_usd(low)}-{format_usd(high).lstrip('$')}"


def time_cell(c: Candidate) -> str:
    """The wall time and, on a second line, its 80% range."""
    return f"{format_duration(c.time_s)}\n({duration_range(c.time_low_s, c.time_high_s)})"


def cost_cell(c: Candidate) -> str:
    """The cost to finish and, on a second line, its 80% range."""
    return f"{format_usd(c.cost_usd)}\n({usd_range(c.cost_low_usd, c.cost_high_usd)})"


def pricing_cell(c: Candidate) -> str:
    """The pricing and its USD per hour, e.g. "spot $2.10/h"."""
    return f"{c.pricing.value} {format_usd(c.price_usd_per_hour)}/h"


def notes_cell(c: Candidate) -> str:
    """Short risk tags for table cells; the full notes are in the JSON and the explanation."""
    tags: list[str] = []
    if c.within_budget is False:
        tags.append("over budget")
    if c.meets_deadline is False:
        tags.append("misses deadline")
    if c.spot is not None and c.spot.expected_interruptions > 0:
        tags.append(
            f"~{c.spot.expected_interruptions:.1f} interruptions, +{(c.spot.slowdown - 1):.0%} time"
        )
    for note in c.notes:
        if note.startswith("spot:"):
            continue
        tags.append(note.split(":")[0] if ":" in note else note)
    return "; ".join(tags)


def candidate_row(c: Candidate) -> tuple[str, ...]:
    """The candidate's row of the plan table."""
    return (
        str(c.rank) if c.rank else "-",
        c.provider,
        c.instance_type + (f" x{c.nodes}" if c.nodes > 1 else ""),
        region_cell(c),
        gpus_cell(c),
        c.layout.label,
        pricing_cell(c),
        time_cell(c),
        cost_cell(c),
        unit_cost_cell(c),
        c.bottleneck.value,
        notes_cell(c),
    )


def pareto_row(c: Candidate) -> tuple[str, ...]:
    """The candidate's row of the time/cost Pareto table."""
    return (
        format_duration(c.time_s),
        format_usd(c.cost_usd),
        gpus_cell(c),
        f"{c.provider} {c.instance_type} {c.region}",
        c.pricing.value,
    )


def title(plan: Plan) -> str:
    """The plan's title: workload, model, task, precision, amount of work and scenario."""
    w = plan.workload
    scenario = f" [{plan.scenario} scenario]" if plan.scenario else ""
    return f"Plan for {w.name}: {w.model} {w.task}, {w.precision}, {w.work}{scenario}"


def stats_line(plan: Plan) -> str:
    """How many offers, configurations, estimates and candidates the planner looked at."""
    return (
        f"{plan.catalog_offers:,} offers in the catalog, {plan.offers_considered:,} met the "
        f"constraints; {plan.configurations:,} configurations, {plan.estimator_calls:,} "
        f"estimates, {plan.candidates_evaluated:,} priced candidates"
    )


def price_age_line(plan: Plan) -> str:
    """When the prices were dated, and a reminder to refresh them before renting."""
    if not plan.price_as_of:
        return "prices: date unknown; list prices, not live capacity; refresh before you rent"
    dated = " and ".join(plan.price_as_of)
    which = "each offer's date is in --json" if len(plan.price_as_of) > 1 else "all offers"
    return (
        f"prices dated {dated} ({which}): list prices, not live capacity; "
        "refresh (`gpurent catalog update`) before you rent"
    )


def top_heading(plan: Plan) -> str:
    """The heading of `plan.top`: a ranking, or the closest misses when nothing is feasible."""
    return "Ranked candidates" if plan.feasible else "Closest alternatives"


def explanation_sections(e: Explanation) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The recommendation's sections (name, lines) in the order every renderer shows them;
    a renderer skips the empty ones."""
    return (
        ("Why", e.why),
        ("Memory per GPU", e.memory),
        ("What limits it", e.limits),
        ("Risks", e.risks),
        ("Alternatives", tuple(t.summary for t in e.alternatives)),
        ("Scenario matrix", (e.matrix.summary,) if e.matrix else ()),
    )


def _d(seconds: float) -> str:
    return format_duration(seconds) if seconds >= 60 else f"{seconds:.0f} s"


def time_breakdown(c: Candidate) -> str:
    """'2.1 h = setup 2.3 min (provisioning 2.0 min, image 16 s) + run 2.0 h (...)'."""
    s = c.setup
    parts = [
        (name, secs)
        for name, secs in (
            ("provisioning", s.provisioning_s),
            ("image", s.image_s),
            ("dataset", s.dataset_s),
            ("model", s.model_s),
            ("output", s.output_s),
        )
        if secs > 0
    ]
    setup = ", ".join(
        f"{name} {_d(secs)}"
        + (" unbilled" if name == "provisioning" and not s.provisioning_billed else "")
        for name, secs in parts
    )
    run = f"run {_d(c.run_time_s)}"
    if c.spot is not None and c.run_time_s > c.compute_time_s:
        run += (
            f" (compute {_d(c.compute_time_s)} + spot overhead "
            f"{_d(c.run_time_s - c.compute_time_s)}, of which restores after "
            f"~{c.spot.expected_interruptions:.1f} interruptions {_d(c.spot.restart_time_s)})"
        )
    return f"time {_d(c.time_s)} = setup {_d(s.total_s)} ({setup or 'none'}) + {run}"


def _usd(amount: float) -> str:
    """`format_usd` down to a tenth of a cent, two significant digits below it, $0 for zero."""
    if amount == 0:
        return "$0"
    return format_usd(amount) if amount >= 0.001 else small_usd(amount)


def cost_breakdown_line(c: Candidate) -> str:
    """'$2.01 = compute $1.95 (of which setup $0.04, spot overhead $0.16) + storage ...'."""
    k = c.cost
    within = [
        f"{name} {_usd(usd)}"
        for name, usd in (
            ("setup", k.setup_usd),
            ("spot overhead", k.spot_overhead_usd),
            (
                "billing minimum/steps" if c.term_hours == 0 else "unused term",
                k.billing_rounding_usd,
            ),
        )
        if usd > 0.0005
    ]
    inner = f" (of which {', '.join(within)})" if within else ""
    return (
        f"cost {format_usd(k.total_usd)} = compute {format_usd(k.compute_usd)}{inner} + "
        f"storage {_usd(k.storage_usd)} + egress {_usd(k.egress_usd)}"
    )


def availability_line(c: Candidate) -> str | None:
    """The availability flag with the interruption rate assumed and its source."""
    a = c.availability
    parts = []
    if a.flag:
        parts.append(a.flag)
    if a.confidence is not None:
        parts.append(f"availability confidence {a.confidence:.2f}")
    if c.spot is not None:
        parts.append(
            f"{c.spot.interruptions_per_hour:.2g} interruptions/h assumed for the cluster "
            f"(from {c.spot_rate_source})"
        )
    return "; ".join(parts) if parts else None


def breakdown_lines(c: Candidate) -> tuple[str, ...]:
    """Where one candidate's time and money go, as lines for every renderer."""
    lines = [time_breakdown(c), cost_breakdown_line(c)]
    avail = availability_line(c)
    if avail:
        lines.append(avail)
    return tuple(lines)


def breakdown_sections(plan: Plan) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(heading, lines) per shown candidate: '#1 verda 1B200.30V FIN-03 (spot)'."""
    return tuple((f"#{c.rank or '-'} {c.label}", breakdown_lines(c)) for c in plan.top)
