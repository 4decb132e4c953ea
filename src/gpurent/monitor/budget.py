"""Budgets on a job's or a project's machines: checked values, thresholds crossed, the state
shown, the webhook's JSON and the Prometheus alerting rules. Pure (no I/O, no clock).

The rules are over the exporter's `gpurent_cost_spent_usd`, labelled by `gpurent monitor --job
J --project P --machine M` with `gpurent_job`, `gpurent_project` and `machine` (not `job`, which
Prometheus sets to the scrape job's name). That gauge counts from the monitor's start, so the
rules see the money of the monitors running now; the server's own alerts count the whole stored
history.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gpurent.errors import InputError

SCOPES = ("job", "project")
DEFAULT_THRESHOLDS = (0.5, 0.8, 1.0)
MAX_THRESHOLDS = 10
MAX_LIMIT_USD = 1e12
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
NAME_HELP = "1-128 characters: letters, digits and . _ : - (starting with a letter or digit)"
SPENT_METRIC = "gpurent_cost_spent_usd"
LABEL_OF_SCOPE = {"job": "gpurent_job", "project": "gpurent_project"}


def check_name(value: str, where: str) -> str:
    """A machine, job, project or budget name: `NAME_HELP` (safe in a PromQL label value, a
    URL and a log line)."""
    if not NAME_RE.fullmatch(value):
        raise InputError(f"{where} {value[:40]!r} is not a valid name; use {NAME_HELP}")
    return value


def check_scope(value: str) -> str:
    """`job` or `project`."""
    if value not in SCOPES:
        raise InputError(f"scope must be 'job' or 'project', got {value[:20]!r}")
    return value


def check_limit(value: float) -> float:
    """A positive, finite budget in USD."""
    if not (math.isfinite(value) and 0 < value <= MAX_LIMIT_USD):
        raise InputError(
            f"limit_usd must be a positive number up to {MAX_LIMIT_USD:g}, got {value}"
        )
    return value


def check_thresholds(values: Sequence[float]) -> tuple[float, ...]:
    """1-10 distinct shares of the limit in (0, 10], sorted (1.0 is the limit itself)."""
    if not 1 <= len(values) <= MAX_THRESHOLDS:
        raise InputError(
            f"thresholds: give 1-{MAX_THRESHOLDS} shares of the limit, e.g. [0.5, 0.8, 1]"
        )
    for t in values:
        if not (math.isfinite(t) and 0 < t <= 10):
            raise InputError(f"thresholds: each must be a share of the limit in (0, 10], got {t}")
    unique = tuple(sorted(set(values)))
    if len(unique) != len(values):
        raise InputError("thresholds: each share may be given once")
    return unique


def check_webhook_url(value: str) -> str:
    """'' (no webhook) or an http(s) URL of at most 2,048 characters without spaces."""
    if value == "":
        return value
    if len(value) > 2048 or not re.fullmatch(r"https?://[^\s/]+\S*", value, flags=re.IGNORECASE):
        raise InputError(
            "webhook_url must be an http:// or https:// URL (2,048 characters at most)"
        )
    return value


def crossed(
    thresholds: Iterable[float], limit_usd: float, spend_usd: float, fired: Iterable[float]
) -> list[float]:
    """The thresholds that `spend_usd` reached and that have not fired yet, lowest first."""
    done = set(fired)
    return [t for t in sorted(thresholds) if spend_usd >= t * limit_usd and t not in done]


def state(thresholds: Sequence[float], limit_usd: float, spend_usd: float) -> str:
    """`ok` below every threshold, `exceeded` at or over the limit, else `warning`."""
    if spend_usd >= limit_usd:
        return "exceeded"
    if any(spend_usd >= t * limit_usd for t in thresholds):
        return "warning"
    return "ok"


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetRule:
    """What one alerting rule needs: the budget's scope, name, limit and thresholds."""

    scope: str
    name: str
    limit_usd: float
    thresholds: tuple[float, ...]


def webhook_payload(
    rule: BudgetRule, *, threshold: float, spend_usd: float, fired_s: float
) -> dict[str, Any]:
    """The JSON a budget's webhook receives when `threshold` is crossed."""
    return {
        "event": "gpurent.budget.threshold",
        "budget": {"scope": rule.scope, "name": rule.name},
        "threshold": threshold,
        "spend_usd": round(spend_usd, 6),
        "limit_usd": rule.limit_usd,
        "fired_s": fired_s,
    }


def _quoted(text: str) -> str:
    """A PromQL string literal (the names are checked to need no escaping but the quotes)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def alert_rules(rules: Iterable[BudgetRule], *, for_s: int = 60) -> dict[str, Any]:
    """Prometheus alerting rules (the document a rules file holds) for each budget threshold."""
    items: list[dict[str, Any]] = []
    for r in rules:
        label = LABEL_OF_SCOPE[r.scope]
        spent = f"sum({SPENT_METRIC}{{{label}={_quoted(r.name)}}})"
        for t in r.thresholds:
            at_usd = t * r.limit_usd
            items.append(
                {
                    "alert": "GpurentBudgetThreshold",
                    "expr": f"{spent} >= {at_usd:.10g}",
                    "for": f"{for_s}s",
                    "labels": {
                        "severity": "critical" if t >= 1.0 else "warning",
                        "gpurent_scope": r.scope,
                        "gpurent_budget": r.name,
                        "threshold": f"{t:g}",
                    },
                    "annotations": {
                        "summary": f'{r.scope} {r.name} spent {{{{ $value | printf "%.2f" }}}} '
                        f"USD, over {t:.0%} of its {r.limit_usd:g} USD budget",
                    },
                }
            )
    return {"groups": [{"name": "gpurent-budgets", "rules": items}]}
