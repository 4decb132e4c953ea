"""The CLI's shared parsers: durations (plan --deadline, monitor report --since) and comma lists."""

from __future__ import annotations

import pytest

from gpurent.cli.common import read_duration_s, split_list
from gpurent.cli.plan_cmds import parse_duration_s
from gpurent.errors import InputError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("3d", 3 * 86400),
        ("72h", 72 * 3600),
        ("90min", 5400),
        ("1.5w", 1.5 * 604800),
        ("3600s", 3600),
        ("2 hours", 7200),
        ("2", 7200),  # a bare number is hours for --deadline
        (" 30 M ", 1800),
    ],
)
def test_deadline_grammar(text: str, seconds: float) -> None:
    assert parse_duration_s(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "3 fortnights", "-2h", "0h", "1e3h"])
def test_bad_deadlines_are_one_line_input_errors(text: str) -> None:
    with pytest.raises(InputError, match="--deadline"):
        parse_duration_s(text)


def test_a_bare_number_is_not_a_duration_where_it_means_seconds_since_1970() -> None:
    assert read_duration_s("1764500000", bare_unit=None) is None
    assert read_duration_s("2h", bare_unit=None) == 7200
    assert read_duration_s("30m", bare_unit=None) == 1800
    assert read_duration_s("2026-11-30T12:00", bare_unit=None) is None


def test_split_list_takes_one_value_or_a_repeated_option() -> None:
    assert split_list(None) == ()
    assert split_list("a, b,,c ") == ("a", "b", "c")
    assert split_list(["a,b", " c", ""]) == ("a", "b", "c")
