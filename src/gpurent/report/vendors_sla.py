"""`gpurent vendors sla` rendered: the claim text for a support ticket, Markdown, a terminal
table and the JSON document. Data is cleaned of control characters before it is shown."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from gpurent.textsafe import clean
from gpurent.vendors.sla import EvidenceRow, MonthlySla


def duration(seconds: float) -> str:
    """`1 h 23 min 5 s` style; whole seconds (fractions shown only under a minute)."""
    if seconds < 60:
        return f"{seconds:g} s"
    total = round(seconds)
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    parts = [f"{h} h" if h else "", f"{m} min" if m else "", f"{s} s" if s else ""]
    return " ".join(p for p in parts if p)


def _t(t: datetime) -> str:
    return t.isoformat(timespec="seconds")


def _money(usd: float | None) -> str:
    return "-" if usd is None else f"${usd:,.2f}"


def _tier_text(m: MonthlySla) -> str:
    if m.tier is None:
        return "no tier met"
    return f"< {m.tier.below_pct:g}%: {m.tier.credit_pct:g}%"


def claim_text(m: MonthlySla) -> str:
    """What a user pastes into a support ticket: the month, the figures, the evidence rows."""
    terms = f" under {clean(m.terms_name)}" if m.terms_name else ""
    lines = [
        f"SLA credit request for {m.month} ({m.time_zone}){terms}",
        "",
        f"Measured period: {_t(m.start)} to {_t(m.end)} ({duration(m.period_s)}).",
        f"Downtime: {duration(m.downtime_s)} ({m.downtime_s:g} s), merged across resources "
        "so overlapping outages count once.",
        f"Monthly availability: {m.availability_pct:.4f}%.",
    ]
    if m.tier is None:
        lines.append("No credit tier is met; nothing is owed for this month.")
    else:
        amount = (
            f" = {_money(m.credit_usd)} of the {_money(m.monthly_bill_usd)} monthly bill"
            if m.credit_usd is not None
            else " (the monthly bill amount was not given)"
        )
        lines.append(
            f"Credit owed: {m.credit_pct:g}% (availability below {m.tier.below_pct:g}%){amount}."
        )
    lines += ["", "Evidence (times in the month's time zone, clipped to the month):"]
    lines += [f"- {_row_line(r)}" for r in m.rows] or ["- no outages recorded in this month"]
    if m.excluded_s:
        lines.append(
            f"Excluded by the terms and not counted: {duration(m.excluded_s)} "
            "(marked 'excluded' above)."
        )
    return "\n".join(lines) + "\n"


def _row_line(r: EvidenceRow) -> str:
    note = " [excluded]" if r.excluded else ""
    reason = f", {clean(r.reason)}" if r.reason else ""
    return (
        f"{_t(r.start)} to {_t(r.end)} ({duration(r.duration_s)}): {clean(r.resource)}"
        f"{reason}{note} [{clean(r.evidence)}]"
    )


def _cell(text: str) -> str:
    return clean(text).replace("|", "\\|")


def to_markdown(months: Sequence[MonthlySla]) -> str:
    """The monthly SLA availability and credits as a Markdown document."""
    out = [
        "# SLA availability and credits",
        "",
        "| month | time zone | downtime | availability | tier met | credit | credit $ |",
        "|---|---|---:|---:|---|---:|---:|",
    ]
    for m in months:
        out.append(
            f"| {m.month} | {m.time_zone} | {duration(m.downtime_s)} | "
            f"{m.availability_pct:.4f}% | {_tier_text(m)} | {m.credit_pct:g}% | "
            f"{_money(m.credit_usd)} |"
        )
    for m in months:
        out += [
            "",
            f"## {m.month}",
            "",
            "| start | end | duration | resource | reason | evidence |",
            "|---|---|---:|---|---|---|",
        ]
        for r in m.rows:
            reason = _cell(r.reason) + (" (excluded)" if r.excluded else "")
            out.append(
                f"| {_t(r.start)} | {_t(r.end)} | {duration(r.duration_s)} | "
                f"{_cell(r.resource)} | {reason} | {_cell(r.evidence)} |"
            )
        out += ["", "Claim text:", "", "```text", claim_text(m).rstrip("\n"), "```"]
    return "\n".join(out) + "\n"


def to_json(months: Sequence[MonthlySla]) -> dict[str, Any]:
    """The JSON document: each month's figures, evidence rows and claim text."""
    return {
        "months": [
            {
                "month": m.month,
                "time_zone": m.time_zone,
                "start": _t(m.start),
                "end": _t(m.end),
                "period_s": m.period_s,
                "downtime_s": m.downtime_s,
                "excluded_s": m.excluded_s,
                "availability_pct": m.availability_pct,
                "tier": None
                if m.tier is None
                else {"below_pct": m.tier.below_pct, "credit_pct": m.tier.credit_pct},
                "credit_pct": m.credit_pct,
                "monthly_bill_usd": m.monthly_bill_usd,
                "credit_usd": m.credit_usd,
                "resources": [{"resource": n, "downtime_s": s} for n, s in m.resources],
                "evidence": [
                    {
                        "start": _t(r.start),
                        "end": _t(r.end),
                        "duration_s": r.duration_s,
                        "resource": r.resource,
                        "reason": r.reason,
                        "evidence": r.evidence,
                        "excluded": r.excluded,
                    }
                    for r in m.rows
                ],
                "claim": claim_text(m),
            }
            for m in months
        ]
    }


def terminal_rows(months: Sequence[MonthlySla]) -> list[tuple[str, ...]]:
    """One row per month for the terminal table (month, downtime, availability, tier, credit)."""
    return [
        (
            m.month,
            duration(m.downtime_s),
            f"{m.availability_pct:.4f}%",
            _tier_text(m),
            f"{m.credit_pct:g}%",
            _money(m.credit_usd),
        )
        for m in months
    ]
