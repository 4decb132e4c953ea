"""The lazily ranked rows read exactly as the full sort would, ties included (issue 15: a plan
over 50,000 offers ranks its ~250,000 rows without sorting them all)."""

from __future__ import annotations

from itertools import islice
from operator import itemgetter

from hypothesis import given
from hypothesis import strategies as st

from gpurent.plan.enumerate import Row
from gpurent.plan.rank import POP_SEARCH, RankedRows, RowKey

costs = st.sampled_from([1.0, 2.0, 2.5, 3.0])  # few values: many ties on each axis


@st.composite
def row_lists(draw: st.DrawFn) -> list[Row]:
    pairs = draw(st.lists(st.tuples(costs, costs, costs), max_size=60))
    return [(c, w, i, i % 7, p) for i, (c, w, p) in enumerate(pairs)]


def _sorted(rows: list[Row], key: RowKey) -> list[Row]:
    return sorted(rows) if key is None else sorted(rows, key=key)


KEYS: list[RowKey] = [None, itemgetter(1, 0), lambda r: (-r[4], r[0]), lambda r: r[3]]


@given(row_lists(), st.sampled_from(KEYS), st.integers(0, 70))
def test_iteration_is_the_stable_sort(rows: list[Row], key: RowKey, head: int) -> None:
    ranked = RankedRows(rows, key)
    expected = _sorted(rows, key)
    assert list(islice(ranked, head)) == expected[:head]  # a partial read first
    assert list(ranked) == expected  # a second reader sees the popped rows, then the rest
    assert len(ranked) == len(rows)


@given(row_lists(), st.sampled_from(KEYS), st.integers(0, 6), st.integers(0, 70))
def test_first_is_the_first_match_in_rank_order(
    rows: list[Row],
    key: RowKey,
    context: int,
    head: int,
) -> None:
    ranked = RankedRows(rows, key)
    list(islice(ranked, head))
    expected = next((r for r in _sorted(rows, key) if r[3] == context), None)
    assert ranked.first(lambda r: r[3] == context) == expected


def test_first_past_the_pop_search_scans_the_rest() -> None:
    n = POP_SEARCH + 500
    rows = [(float(i % 97), float(i), i, 0 if i < n - 3 else 1, 1.0) for i in range(n)]
    ranked = RankedRows(rows, None)
    want = min(r for r in rows if r[3] == 1)
    assert ranked.first(lambda r: r[3] == 1) == want
    assert list(ranked) == sorted(rows)
