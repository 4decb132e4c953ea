"""Long `spot simulate` runs show progress (issue 13 item 19): every policy reports each run as
it finishes, and on a terminal the CLI draws a progress bar on stderr (never in pipes or tests,
where stderr stays one line or empty)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from tests.conftest import run_cli

from gpurent.spot.io.trace import align_zones
from gpurent.spot.io.trace_io import load_traces
from gpurent.spot.sim.evaluate import run_policy
from gpurent.spot.sim.job_market import JobSpec, build_market, run_starts
from gpurent.spot.sim.policies import ONLINE_POLICIES, OPTIMAL

ARGS = ["--job-hours", "1", "--deadline-hours", "2", "--price-ratio", "3", "--starts", "20"]


def _trace(write_csv) -> Path:
    return write_csv("z1", [1 if (i // 7) % 3 else 0 for i in range(200)])


@pytest.mark.parametrize("policy", [*ONLINE_POLICIES, OPTIMAL])
def test_every_policy_reports_every_run(write_csv, policy: str) -> None:
    traces, _ = load_traces([_trace(write_csv)])
    market = build_market(align_zones(traces), nodes=1, price_ratio=3.0)
    job = JobSpec(job_hours=1.0, deadline_hours=2.0, changeover_hours=0.1, nodes=1)
    starts = run_starts(market, job, 20)
    done: list[int] = []
    summary = run_policy(policy, market, job, starts, done.append)
    assert sum(done) == len(starts) == summary.runs


def test_a_terminal_gets_a_progress_bar(write_csv, monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.StringIO()
    terminal = Console(file=buf, force_terminal=True, width=100)
    monkeypatch.setattr("gpurent.cli.spot_cmds.err_console", terminal)
    code, out, _ = run_cli("spot", "simulate", "--trace", str(_trace(write_csv)), *ARGS, "--json")
    assert code == 0 and '"runs": 20' in out
    assert "simulating" in buf.getvalue()


def test_no_progress_bar_in_a_pipe(write_csv) -> None:
    code, _, err = run_cli("spot", "simulate", "--trace", str(_trace(write_csv)), *ARGS, "--json")
    assert code == 0 and "simulating" not in err
