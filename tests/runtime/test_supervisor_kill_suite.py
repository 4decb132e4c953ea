"""Kill `gpurent run` in every state (starting, job running, backoff, stopping after a failed
health check, rebuild) with SIGKILL, SIGTERM, SIGHUP and SIGINT, then restart it: one job at a
time on the checkpoint directory, never a job process left behind (issue 13, "keep it fixed").

Here each state meets SIGKILL (the job is left behind on purpose) and one catchable signal, 10
scenarios run 5 at a time (they mostly wait); `benchmarks/bench_reliability_supervisor.py` runs
all 20 combinations, repeated."""

from __future__ import annotations

import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .supervisor_scenarios import STATES, job_processes, run_scenario

CATCHABLE = {
    "starting": signal.SIGTERM,
    "running": signal.SIGINT,  # Ctrl-C
    "backoff": signal.SIGHUP,
    "health": signal.SIGTERM,
    "rebuild": signal.SIGINT,
}


@pytest.mark.slow
def test_killing_the_supervisor_in_every_state_never_runs_two_jobs_or_leaves_one(
    tmp_path: Path,
) -> None:
    cases = [(state, sig) for state in STATES for sig in (signal.SIGKILL, CATCHABLE[state])]
    with ThreadPoolExecutor(max_workers=5) as pool:
        results = list(pool.map(lambda c: run_scenario(tmp_path, *c), cases))
    failed = [f"{r.state}/{r.signal}: {'; '.join(r.problems)}" for r in results if not r.held]
    assert not failed, "\n".join(failed)
    assert len(results) == 10 and all(r.reached for r in results if r.state != "starting")


def test_job_processes_finds_only_the_marked_ones() -> None:
    assert job_processes("no-such-marker") == []
