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

    monkeypatch.setenv(THROTTLE_ENV, "20")
    slow = time_calls(None, work, device="cpu", warmup=1, repeats=3)
    monkeypatch.delenv(THROTTLE_ENV)
    fast = time_calls(None, work, device="cpu", warmup=1, repeats=3)
    assert min(slow) >= 0.2  # sleep never returns early: 20 x at least 10 ms
    # a 10 ms sleep overran to 30 ms on a loaded machine (factor 3 failed); 20x leaves 190 ms
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


def test_the_numpy_reference_matmul_is_slowed_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fleet compares matmul.numpy-fp32 across nodes like every other figure: a throttled
    # node that ran numpy at full speed left that figure to machine noise, and the fleet named
    # whichever healthy node the noise put lowest. The hook's sleeps are counted, not timed
    # (numpy's BLAS threads make 128^3 timings swing 10x on a loaded 2-core machine).
    pytest.importorskip("numpy")
    from gpurent.bench.matmul import numpy_matmul_tflops

    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    monkeypatch.setenv(THROTTLE_ENV, "4")
    assert numpy_matmul_tflops(64, repeats=3) > 0
    assert len(slept) == 3 and all(s > 0 for s in slept), slept  # one per timed call
