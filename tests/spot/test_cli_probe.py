"""`gpurent spot probe` with a fake acquire command and a fake clock: bounded, read back."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.conftest import run_cli

import gpurent.cli.spot_probe_cmds as probe_cmds


class FakeClock:
    def __init__(self) -> None:
        self.t = datetime(2026, 11, 1, tzinfo=UTC)
        self.slept: list[float] = []

    def now(self) -> datetime:
        return self.t

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.t += timedelta(seconds=s)


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    c = FakeClock()
    monkeypatch.setattr(probe_cmds, "CLOCK", c.now)
    monkeypatch.setattr(probe_cmds, "SLEEP", c.sleep)
    return c


def fake_acquire(tmp_path: Path) -> Path:
    """Zone a always gets capacity; zone b every third call; each call is logged."""
    log = tmp_path / "calls.log"
    script = tmp_path / "acquire.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$GPURENT_ZONE" >> {log}\n'
        '[ "$GPURENT_ZONE" = a ] && exit 0\n'
        f'n=$(grep -c "^b$" {log})\n'
        "[ $((n % 3)) -eq 0 ] && exit 0\n"
        "exit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_probe_writes_a_trace_that_simulate_reads(tmp_path: Path, clock: FakeClock) -> None:
    script = fake_acquire(tmp_path)
    out = tmp_path / "trace.csv"
    code, _, err = run_cli(
        "spot", "probe", "--command", str(script), "--zone", "a", "--zone", "b",
        "--interval", "600", "--max-attempts", "6", "--max-duration", "86400", "-o", str(out),
    )  # fmt: skip
    assert code == 0, err
    lines = out.read_text().splitlines()
    assert lines[0] == "time,zone,requested,created"
    assert len(lines) == 1 + 6 * 2
    rows = [line.split(",") for line in lines[1:]]
    assert [r[3] for r in rows if r[1] == "a"] == ["1"] * 6
    assert [r[3] for r in rows if r[1] == "b"] == ["0", "0", "1", "0", "0", "1"]
    assert clock.slept == [600.0] * 5
    assert (tmp_path / "calls.log").read_text().split() == ["a", "b"] * 6
    assert "stopped by --max-attempts" in err
    code, sim, err = run_cli(
        "spot", "simulate", "--trace", str(out), "--job-hours", "0.2",
        "--deadline-hours", "0.5", "--price-ratio", "3", "--policy", "greedy", "--starts", "1",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(sim)["runs"] == 1


def test_probe_stops_at_max_duration(tmp_path: Path, clock: FakeClock) -> None:
    script = fake_acquire(tmp_path)
    out = tmp_path / "trace.csv"
    code, _, err = run_cli(
        "spot", "probe", "--command", str(script), "--zone", "a", "--interval", "600",
        "--max-attempts", "1000", "--max-duration", "1800", "-o", str(out),
    )  # fmt: skip
    assert code == 0, err
    assert len(out.read_text().splitlines()) == 1 + 3  # rounds at 0, 600 and 1200 s
    assert "stopped by --max-duration" in err


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--interval", "0"), ("--max-attempts", "0"), ("--max-duration", "-5"), ("--zone", "a,b")],
)
def test_probe_bad_bounds_are_exit_2(
    tmp_path: Path, clock: FakeClock, flag: str, value: str
) -> None:
    args = {"--interval": "60", "--max-attempts": "2", "--max-duration": "600", "--zone": "a"}
    args[flag] = value
    flat = [x for kv in args.items() for x in kv]
    code, _, err = run_cli("spot", "probe", "--command", "true", *flat, "-o", str(tmp_path / "t"))
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()


def test_a_round_that_overruns_starts_the_next_at_once() -> None:
    from gpurent.spot.io.probe import ProbeLimits, run_probe

    clock = FakeClock()

    def slow_attempt(zone: str) -> bool:
        clock.t += timedelta(seconds=400)  # two zones x 400 s > the 600 s interval
        return zone == "a"

    result = run_probe(
        ["a", "b"],
        slow_attempt,
        ProbeLimits(interval_s=600, max_attempts=3, max_duration_s=10_000),
        now=clock.now,
        sleep=clock.sleep,
    )
    assert clock.slept == []
    starts = sorted({r.time for r in result.rows})
    assert [(t - starts[0]).total_seconds() for t in starts] == [0, 800, 1600]
    assert result.stopped_by == "max-attempts"
    assert [r.created for r in result.rows] == [1, 0] * 3
