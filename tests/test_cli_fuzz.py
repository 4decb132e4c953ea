"""Property-based CLI fuzz (issue 13, "keep it fixed"): every command that reads a number or a
file answers generated malformed input with exit 0 and a plausible answer, or one `error:` line
on stderr and exit 1/2/3; never a traceback. Cases: tests/cli_fuzz.py. Bounded: derandomized,
a few dozen examples per property, in-process (CliRunner); benchmarks/bench_reliability_fuzz.py
runs the same with many more."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import cli_fuzz as fz

FUZZ = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def work() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        fz.prepare(Path(tmp))
        yield Path(tmp)


@pytest.mark.parametrize("target", fz.NUMBER_TARGETS, ids=lambda t: t.name)
def test_numeric_flags(target: fz.NumberTarget, work: Path) -> None:
    @FUZZ
    @given(flag=st.sampled_from(target.flags), value=fz.number_texts())
    def check(flag: str, value: str) -> None:
        out = fz.invoke(target.args(flag, value, work))
        assert fz.problem(out) is None, fz.describe(out)

    check()


@pytest.mark.parametrize("target", fz.FILE_TARGETS, ids=lambda t: t.name)
def test_input_files(target: fz.FileTarget, work: Path) -> None:
    counter = iter(range(10**9))

    @FUZZ
    @given(content=fz.file_contents(target))
    def check(content: tuple[str, bytes | str]) -> None:
        path = fz.write_input(target, content, work, next(counter))
        out = fz.invoke(target.command(str(path)))
        assert fz.problem(out) is None, fz.describe(out)

    check()
