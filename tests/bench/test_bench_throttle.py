"""The bench's throttle test hook (GPURENT_BENCH_THROTTLE): it really slows the timed calls, the
result says it was on, and a bad value is one line, exit 2."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.bench.timing import THROTTLE_ENV, time_calls
from gpurent.cli.main import app


def test_a_factor_makes_every_timed_call_that_much_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    def work() -> None:
        time.sleep(0.01)

    monkeypatch.setenv(THROTTLE_ENV, "3")
    slow = time_calls(None, work, device="cpu", warmup=1, repeats=3)
    monkeypatch.delenv(THROTTLE_ENV)
    fast = time_calls(None, work, device="cpu", warmup=1, repeats=3)
    assert min(slow) >= 0.03
    assert max(fast) < min(slow)


def test_the_result_notes_the_hook(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    monkeypatch.setenv(THROTTLE_ENV, "2")
    out = tmp_path / "r.json"
    done = CliRunner().invoke(app, ["bench", "--quick", "--only", "membw", "--out", str(out)])
    assert done.exit_code == 0, done.output
    notes = json.loads(out.read_text())["notes"]
    assert any(n.startswith(f"{THROTTLE_ENV}=2: every timed CPU call was slowed") for n in notes)


@pytest.mark.parametrize("value", ["abc", "0.5", "nan", "1e9"])
def test_a_bad_value_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    pytest.importorskip("torch")
    monkeypatch.setenv(THROTTLE_ENV, value)
    done = CliRunner().invoke(app, ["bench", "--quick", "--only", "membw", "--out", "x.json"])
    assert done.exit_code == 2, done.output
    assert f"{THROTTLE_ENV}={value!r}: expected a number from 1 to 1000" in done.output
