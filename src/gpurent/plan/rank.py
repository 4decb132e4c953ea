"""Ranking candidate rows by objective, the time-vs-cost Pareto front, and constraint checks.

Rows are named tuples (see `enumerate.Row`) so that ranking hundreds of thousands of them stays
fast; objects are built only for the few that are shown. A plan reads only the head of the
ranking (the top N distinct candidates, the best on-demand one), so `RankedRows` keeps the rows
in a heap and pops only as many as are read.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from gpurent.plan.constraints import Constraints, Objective, PricingModel
from gpurent.plan.enumerate import Row
from gpurent.units import format_duration, format_usd

RowKey = Callable[[Row], Any] | None  # None: the rows' natural order (cost, then time)


def objective_key(objective: Objective, work_per_usd: Callable[[Row], float]) -> RowKey:
    """Sort key (ascending = better) for `objective`; ties broken by the other axis."""
    if objective is Objective.FASTEST:
        return itemgetter(1, 0)
    if objective is Objective.THROUGHPUT_PER_DOLLAR:
        return lambda r: (-work_per_usd(r), r.cost_usd)
    return None  # CHEAPEST, and DEADLINE once filtered: rows sort natively by (cost, time)


def risk_key(
    objective: Objective,
    cost_high: Callable[[Row], float],
    wall_high: Callable[[Row], float],
    work_per_usd_low: Callable[[Row], float],
) -> Callable[[Row], Any]:
    """Sort key for `--risk p90`: `objective` on the pessimistic end of each row's 80% range
    (its 90th-percentile cost and wall time, its work per dollar at the low throughput bound)."""
    if objective is Objective.FASTEST:
        return lambda r: (wall_high(r), cost_high(r))
    if objective is Objective.THROUGHPUT_PER_DOLLAR:
        return lambda r: (-work_per_usd_low(r), cost_high(r))
    return lambda r: (cost_high(r), wall_high(r))


def pareto_front(rows: Iterable[Row]) -> list[Row]:
    """Rows not dominated in (wall time, cost): none other is at least as fast and as cheap and
    strictly better in one. Returned fastest first (and so most expensive first)."""
    front: list[Row] = []
    best_cost = float("inf")
    for row in sorted(rows, key=itemgetter(1, 0)):
        if row.cost_usd < best_cost:
            front.append(row)
            best_cost = row.cost_usd
    return front


def distinct(rows: Iterable[Row], identity: Callable[[Row], object], limit: int) -> list[Row]:
    """The first `limit` rows with distinct `identity` (the best of each, as `rows` are ranked)."""
    picked: list[Row] = []
    seen: set[object] = set()
    for row in rows:
        ident = identity(row)
        if ident in seen:
            continue
        seen.add(ident)
        picked.append(row)
        if len(picked) == limit:
            break
    return picked


POP_SEARCH = 8192  # rows `RankedRows.first` pops before it scans the rest


class RankedRows:
    """`rows` in the order `sorted(rows, key=key)` gives, computed only as far as it is read: the
    rows (or, with a key, `(key, index)` pairs, so that ties keep their input order as in a
    stable sort) are heapified (linear) and popped one by one as a reader asks for them."""

    __slots__ = ("_heap", "_keyed", "_prefix", "_rows")

    def __init__(self, rows: list[Row], key: RowKey) -> None:
        self._rows = rows
        self._keyed = key is not None
        # rows compare natively and no two are equal (offer and context indexes differ)
        self._heap: list[Any] = (
            list(rows) if key is None else list(zip(map(key, rows), range(len(rows)), strict=True))
        )
        heapq.heapify(self._heap)
        self._prefix: list[Row] = []  # the rows popped so far, in rank order

    def __len__(self) -> int:
        return len(self._rows)

    def _row(self, item: Any) -> Row:
        return self._rows[item[1]] if self._keyed else item  # type: ignore[no-any-return]

    def _pop(self) -> Row:
        row = self._row(heapq.heappop(self._heap))
        self._prefix.append(row)
        return row

    def __iter__(self) -> Iterator[Row]:
        yield from self._prefix[:]  # a copy: another reader may pop meanwhile
        done = len(self._prefix)
        while done < len(self._rows):
            while len(self._prefix) <= done:
                self._pop()
            yield self._prefix[done]
            done += 1

    def first(self, wanted: Callable[[Row], bool]) -> Row | None:
        """The best row for which `wanted` is true: among the rows popped so far, else among the
        next POP_SEARCH rows popped, else in one pass over the rest."""
        hit = next((r for r in self._prefix if wanted(r)), None)
        if hit is not None:
            return hit
        for _ in range(min(POP_SEARCH, len(self._heap))):
            row = self._pop()
            if wanted(row):
                return row
        rest = [item for item in self._heap if wanted(self._row(item))]
        return self._row(min(rest)) if rest else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Ranking:
    """Rows meeting every constraint, ranked; or, when none does, the closest and why not."""

    feasible: bool
    # all rows meeting the constraints, best first (or the closest misses)
    ranked: RankedRows | list[Row]
    reasons: tuple[str, ...]

    def first(self, wanted: Callable[[Row], bool]) -> Row | None:
        """The best ranked row for which `wanted` is true, None if there is none."""
        if isinstance(self.ranked, RankedRows):
            return self.ranked.first(wanted)
        return next((r for r in self.ranked if wanted(r)), None)


NodesOf = Callable[[Row], int]  # how many instances a row rents


def priced_within(rows: Iterable[Row], constraints: Constraints, nodes: NodesOf) -> list[Row]:
    """Rows under the price caps (per instance, per cluster) on the price paid."""
    if (
        constraints.max_price_usd_per_hour is None
        and constraints.max_cluster_price_usd_per_hour is None
    ):
        return list(rows)
    return [r for r in rows if constraints.price_allowed(r.price_usd_per_hour, nodes(r))]


def within(rows: Iterable[Row], constraints: Constraints, nodes: NodesOf) -> list[Row]:
    """Rows meeting the price caps, the deadline and the budget."""
    deadline, budget = constraints.deadline_s, constraints.budget_usd
    return [
        r
        for r in priced_within(rows, constraints, nodes)
        if (deadline is None or r.wall_s <= deadline) and (budget is None or r.cost_usd <= budget)
    ]


def _price_cap_miss(
    rows: Sequence[Row], constraints: Constraints, nodes: NodesOf, describe: Callable[[Row], str]
) -> Ranking:
    """No row under the price caps: the cap that failed, with the rows by what they pay."""
    per, cluster = constraints.max_price_usd_per_hour, constraints.max_cluster_price_usd_per_hour
    if per is not None and all(r.price_usd_per_hour > per for r in rows):
        closest = sorted(rows, key=lambda r: (r.price_usd_per_hour, r.cost_usd))
        what = f"{format_usd(per)}/h per instance (--max-price-per-hour)"
        paid = f"{format_usd(closest[0].price_usd_per_hour)}/h"
    else:
        assert cluster is not None
        closest = sorted(rows, key=lambda r: (r.price_usd_per_hour * nodes(r), r.cost_usd))
        what = f"{format_usd(cluster)}/h for all its nodes (--max-cluster-price-per-hour)"
        paid = f"{format_usd(closest[0].price_usd_per_hour * nodes(closest[0]))}/h"
    first = closest[0]
    spot = "" if PricingModel.SPOT in constraints.pricing else " or allow spot (--pricing spot)"
    reason = (
        f"no candidate costs at most {what}: the cheapest, {describe(first)}, costs {paid} "
        f"({format_usd(first.cost_usd)} in all, {format_duration(first.wall_s)}); "
        f"raise the cap{spot}"
    )
    return Ranking(feasible=False, ranked=closest, reasons=(reason,))


def rank_rows(
    rows: Sequence[Row],
    constraints: Constraints,
    key: RowKey,
    describe: Callable[[Row], str],
    nodes: NodesOf,
) -> Ranking:
    """Filter by the price caps, the deadline and the budget, then sort by `key`. Infeasible:
    say which limit failed, with the nearest candidates ranked by the limit they miss."""
    deadline = constraints.deadline_s
    budget = constraints.budget_usd
    capped = priced_within(rows, constraints, nodes)
    if rows and not capped:
        return _price_cap_miss(rows, constraints, nodes, describe)
    rows = capped
    on_time = list(rows) if deadline is None else [r for r in rows if r.wall_s <= deadline]
    ok = on_time if budget is None else [r for r in on_time if r.cost_usd <= budget]
    if ok:
        return Ranking(feasible=True, ranked=RankedRows(ok, key), reasons=())
    reasons: list[str] = []
    if not rows:
        return Ranking(feasible=False, ranked=[], reasons=())
    if deadline is not None and not on_time:
        fastest = min(rows, key=lambda r: (r.wall_s, r.cost_usd))
        reasons.append(
            f"no candidate finishes within the deadline of {format_duration(deadline)}: the "
            f"fastest, {describe(fastest)}, takes {format_duration(fastest.wall_s)} and costs "
            f"{format_usd(fastest.cost_usd)}; raise --max-gpus/--max-nodes or relax the deadline"
        )
        closest = sorted(rows, key=itemgetter(1, 0))
    else:
        assert budget is not None
        cheapest = min(on_time, key=lambda r: (r.cost_usd, r.wall_s))
        on_time_text = " that meet the deadline" if deadline is not None else ""
        reasons.append(
            f"no candidate{on_time_text} fits the budget of {format_usd(budget)}: the cheapest, "
            f"{describe(cheapest)}, costs {format_usd(cheapest.cost_usd)} and takes "
            f"{format_duration(cheapest.wall_s)}"
        )
        closest = sorted(on_time)
    return Ranking(feasible=False, ranked=closest, reasons=tuple(reasons))
