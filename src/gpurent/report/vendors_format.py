"""The `vendors score` report as plain sections (title, headers, rows, notes) that the terminal,
Markdown and HTML renderers share, so every format says the same thing line by line."""

from __future__ import annotations

from dataclasses import dataclass

from gpurent.vendors.evaluation import Evaluation
from gpurent.vendors.file import CRITERIA
from gpurent.vendors.scoring import VendorScore
from gpurent.vendors.sensitivity import WeightChange
from gpurent.vendors.weights import GUIDE_WEIGHTS


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    """One section of the vendor report: title, table and notes."""

    title: str
    headers: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    notes: tuple[str, ...] = ()
    highlight_first: bool = False


def score_text(score: float | None) -> str:
    """The score with one decimal, or "missing"."""
    return "missing" if score is None else f"{score:.1f}"


def title(ev: Evaluation) -> str:
    """The scorecard's title."""
    return f"Vendor scorecard: {ev.source}"


def header_lines(ev: Evaluation) -> tuple[str, ...]:
    """The lines under the title: top choice, weights and the reference job."""
    card = ev.scorecard
    weights = ", ".join(f"{c} {w:.0%}" for c, w in card.weights)
    guide = ", ".join(f"{c} {w:.0%}" for c, w in GUIDE_WEIGHTS)
    job = card.job
    lines = [
        f"Top choice: {card.top} ({card.vendors[0].total:.1f} / 100).",
        f"Weights: {weights} (from {card.weights_source}; the guide's: {guide}).",
        f"Reference job for the cost criterion: {job.gpus} GPUs x {job.hours:g} h, "
        f"{job.egress_gb:g} GB egress to {job.egress_to}, {job.storage_gb:g} GB storage, "
        f"{job.public_ips} public IP(s).",
        "Scores are 0-100 per criterion (functions in docs/vendors.md); a vendor's total is "
        "renormalised over the criteria it has evidence for.",
    ]
    lines += [f"warning: {w}" for w in card.warnings]
    return tuple(lines)


def ranking(ev: Evaluation) -> Section:
    """The ranking section: each vendor's total and score per criterion."""
    rows = []
    for v in ev.scorecard.vendors:
        rows.append(
            (
                str(v.rank),
                v.name,
                f"{v.total:.1f}",
                *(score_text(v.score(c)) for c in CRITERIA),
                f"{v.weight_covered:.0%}",
            )
        )
    return Section(
        title="Ranking (weighted sum)",
        headers=("rank", "vendor", "total", *CRITERIA, "weight with evidence"),
        rows=tuple(rows),
        highlight_first=True,
    )


def vendor_detail(v: VendorScore) -> Section:
    """One vendor's section: evidence, score and weighted contribution per criterion."""
    rows = []
    for c, contrib in zip(v.criteria, v.contributions, strict=True):
        rows.append(
            (
                c.criterion,
                c.evidence,
                score_text(c.score),
                f"{contrib.weight:.0%}",
                f"{contrib.effective_weight:.1%}" if c.score is not None else "-",
                f"{contrib.points:.1f}" if contrib.points is not None else "missing",
            )
        )
    notes = []
    if v.missing:
        notes.append(
            f"missing evidence: {', '.join(v.missing)}; the total {v.total:.1f} is over the "
            f"other criteria ({v.weight_covered:.0%} of the weight)"
        )
    return Section(
        title=f"{v.rank}. {v.name}: {v.total:.1f}",
        headers=("criterion", "evidence", "score", "weight", "effective weight", "points"),
        rows=tuple(rows),
        notes=tuple(notes),
    )


def cost_detail(v: VendorScore) -> Section:
    """One vendor's reference job cost, item by item (a note when no price was given)."""
    if v.cost_total_usd is None:
        return Section(title=f"{v.name}: reference job cost", notes=("no GPU-hour price given",))
    rows = tuple((i.item, f"${i.usd:,.2f}", i.basis, i.source) for i in v.cost_items)
    return Section(
        title=f"{v.name}: reference job cost ${v.cost_total_usd:,.2f}",
        headers=("item", "USD", "basis", "source"),
        rows=rows,
    )


def missing_section(ev: Evaluation) -> Section:
    """Notes on vendors with no evidence, and on what missing scores could change."""
    notes = [
        f"{v.name}: no evidence for any weighted criterion; its total 0 is no score, it is "
        "ranked last until evidence is given"
        for v in ev.scorecard.vendors
        if v.weight_covered == 0
    ]
    for w in ev.scorecard.what_if:
        tops = (
            "the top choice stays"
            if w.top_if_0 == w.top_if_100 == ev.scorecard.top
            else f"top choice then: {w.top_if_0} (at 0), {w.top_if_100} (at 100)"
        )
        notes.append(
            f"{w.vendor}: {', '.join(w.missing)} missing; ranked {w.rank} on the rest, "
            f"{w.rank_if_0} if it scored 0, {w.rank_if_100} if it scored 100; {tops}"
        )
    if not notes:
        notes.append("every vendor has evidence for every criterion")
    return Section(title="Missing evidence", notes=tuple(notes))


def _change_line(c: WeightChange, top: str) -> str:
    name = "L1 (sum of |changes|)" if c.norm == "L1" else "max-norm (largest single change)"
    if c.distance is None:
        return f"{name}: no weights change the top choice ({top} wins everywhere)"
    moved = ", ".join(f"{k} {w:.1%}" for k, w in c.weights)
    return f"{name}: {c.distance:.3f} lets {c.challenger} tie with {top}, at weights {moved}"


def sensitivity(ev: Evaluation) -> Section:
    """The sensitivity section: which weight changes would change the top choice."""
    top = ev.scorecard.top
    notes = [_change_line(c, top) for c in ev.changes]
    notes.append(
        "(a missing score is held at the vendor's own total for this analysis, so the base "
        "ranking is the scorecard's)"
    )
    if ev.region is not None:
        r = ev.region
        shares = ", ".join(f"{n} {s:.0%}" for n, s in r.share() if s > 0)
        notes.append(
            f"weight regions ({r.x_criterion} x {r.y_criterion}, the rest in proportion, "
            f"step {r.step:g}): {shares} of the slice"
        )
    return Section(title="Sensitivity of the top choice to the weights", notes=tuple(notes))


def topsis_section(ev: Evaluation) -> Section:
    """The TOPSIS section: the ranking by distance to the ideal, against the weighted one."""
    t = ev.topsis
    weighted = [v.name for v in ev.scorecard.vendors]
    rows = []
    for name in t.order:
        i = t.vendors.index(name)
        rows.append(
            (
                name,
                f"{t.closeness[i]:.3f}",
                str(t.order.index(name) + 1),
                str(weighted.index(name) + 1),
            )
        )
    notes = t.disagreements or ("TOPSIS and the weighted sum agree on the whole ranking",)
    return Section(
        title="TOPSIS (alternative ranking)",
        headers=("vendor", "closeness", "TOPSIS rank", "weighted-sum rank"),
        rows=tuple(rows),
        notes=tuple(notes),
    )


def checklist_section(ev: Evaluation) -> Section:
    """The checklist section: each vendor's statement on each guide point."""
    names = [v.name for v in ev.scorecard.vendors]
    rows = []
    for p in ev.checklist:
        by = {s.vendor: s for s in p.statements}
        rows.append((p.point, p.guide, *(f"{by[n].status.value}: {by[n].text}" for n in names)))
    notes = tuple(
        f"{p.point}: missing for {', '.join(p.missing)}" for p in ev.checklist if p.missing
    )
    return Section(
        title="Contract checklist (seed guide, section 7.2)",
        headers=("point", "the guide asks", *names),
        rows=tuple(rows),
        notes=notes,
    )


def sections(ev: Evaluation) -> tuple[Section, ...]:
    """Every section of the vendor report, in order."""
    out = [ranking(ev), missing_section(ev)]
    for v in ev.scorecard.vendors:
        out.append(vendor_detail(v))
        out.append(cost_detail(v))
    out += [sensitivity(ev), topsis_section(ev), checklist_section(ev)]
    return tuple(out)
