"""Tables at 80 columns (`make demo` pipes stdout, so rich draws 80): no header or number split.

rich squeezes every column of a table wider than the terminal; `fit_table` must choose widths
that rich then draws as they are, so a header ("pricing") or a number ("85.3") never breaks.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import subprocess
import sys

import pytest
from rich import box
from rich.console import Console

from gpurent.report.tables import Column, fit_table

_NUMBER_END = re.compile(r"[0-9.,]$")
_NUMBER_START = re.compile(r"^[0-9.,%]")


def _table_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("└"))
    return lines[start : end + 1]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]


def _assert_readable(text: str, headers: tuple[str, ...]) -> None:
    table = _table_lines(text)
    assert all(len(line) <= 80 for line in table), "\n".join(table)
    head = [_cells(line) for line in table if line.startswith("┃")]
    shown = {c for row in head for c in row if c}
    assert shown, text
    assert shown <= set(headers), f"a header broke across lines: {shown - set(headers)}"
    body = [_cells(line) for line in table if line.startswith("│")]
    for above, below in itertools.pairwise(body):
        if below[0]:  # the rank column starts a new row: no continuation
            continue
        for a, b in zip(above, below, strict=True):
            split = _NUMBER_END.search(a) and _NUMBER_START.search(b)
            assert not split, f"a number broke across lines: {a!r} / {b!r}\n" + "\n".join(table)


@pytest.mark.parametrize("preset", ["llama-lora", "llm-inference"])
def test_plan_table_is_readable_at_80_columns(preset: str) -> None:
    env = dict(os.environ, COLUMNS="80", TERM="dumb")
    done = subprocess.run(
        [sys.executable, "-m", "gpurent", "plan", "--preset", preset],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    _assert_readable(done.stdout, ("#", "offer", "GPUs", "pricing", "time", "cost", "$/unit"))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"box": box.SIMPLE_HEAD},
        {"show_edge": False},
        {"pad_edge": False},
        {"box": None},
        {"collapse_padding": True},
    ],
    ids=["heavy", "simple-head", "no-edge", "no-pad-edge", "no-box", "collapse"],
)
def test_rich_draws_the_widths_fit_table_chose(options: dict[str, object]) -> None:
    columns = [Column(f"column{i}", justify="right" if i % 2 else "left") for i in range(7)]
    rows = [[f"{1234.5 + i * j:.1f} ({i}.25-{j}.75 h)" for j in range(7)] for i in range(5)]
    table, hidden = fit_table(columns, rows, 80, **options)
    assert hidden == ()
    buf = io.StringIO()
    Console(file=buf, width=80, color_system=None).print(table)
    text = buf.getvalue()
    for i in range(7):
        assert re.search(rf"\bcolumn{i}\b", text), text  # every header whole on one line
    for i in range(5):
        for j in range(7):
            assert f"{1234.5 + i * j:.1f}" in text, text  # every number whole on one line
    assert max(len(line) for line in text.splitlines()) <= 80
