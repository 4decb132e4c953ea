"""Whole-job restarts: the sync directory's generations, and the supervisor following its peers.

The peer (node 1) is played by files written into the directory at the moments a real peer
would write them; the supervisor of node 0 runs under a fake clock with fake processes."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from gpurent.runtime import CheckpointManager
from gpurent.runtime.jobsync import ENV_RESUME_STEP, Agreement, JobSync, PeersMissingError
from gpurent.runtime.supervisor import EventLog, Supervisor, SupervisorConfig

from .test_supervisor import FakeClock, FakeProc


def _peer_entry(sync_dir: Path, gen: int, step: int | None, rank: int = 1) -> None:
    folder = sync_dir / f"gen-{gen:06d}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"node-{rank}.json").write_text(json.dumps({"rank": rank, "step": step}))


def _peer_marker(sync_dir: Path, gen: int, kind: str, rank: int = 1) -> None:
    (sync_dir / f"gen-{gen:06d}" / f"{kind}-{rank}").write_text("0\n")


def test_agreement_is_the_smallest_step_and_none_when_a_node_has_none() -> None:
    assert Agreement(generation=1, steps=(40, 30, 50)).resume_step == 30
    assert Agreement(generation=1, steps=(40, None)).resume_step is None


def test_a_node_that_comes_back_marks_its_unfinished_generation_failed(tmp_path: Path) -> None:
    _peer_entry(tmp_path, 1, 10, rank=0)  # node 0's previous supervisor was in generation 1
    _peer_entry(tmp_path, 1, 10, rank=1)
    _peer_entry(tmp_path, 2, 12, rank=1)  # node 1 already waits in generation 2
    sync = JobSync(tmp_path, node_rank=0, nnodes=2, timeout_s=5)
    agreed = sync.begin(12)
    assert agreed == Agreement(generation=2, steps=(12, 12))
    assert (tmp_path / "gen-000001" / "failed-0").exists()  # node 1 would restart too


def test_a_finished_run_in_the_same_directory_is_not_joined(tmp_path: Path) -> None:
    for rank in (0, 1):
        _peer_entry(tmp_path, 3, 8, rank=rank)
        _peer_marker(tmp_path, 3, "done", rank=rank)
    _peer_entry(tmp_path, 4, 8, rank=1)
    assert JobSync(tmp_path, node_rank=0, nnodes=2).begin(8) == Agreement(
        generation=4, steps=(8, 8)
    )
    assert not (tmp_path / "gen-000003" / "failed-0").exists()


def test_missing_node_times_out_naming_it(tmp_path: Path) -> None:
    clock = FakeClock()
    sync = JobSync(tmp_path, node_rank=0, nnodes=3, timeout_s=30, clock=clock, sleep=clock.sleep)
    _peer_entry(tmp_path, 1, 5, rank=2)
    with pytest.raises(PeersMissingError, match=r"node\(s\) \[1\] did not join generation 1"):
        sync.begin(5)


def test_a_node_that_already_finished_is_not_waited_for(tmp_path: Path) -> None:
    for rank in (0, 1):
        _peer_entry(tmp_path, 1, 0, rank=rank)
    _peer_marker(tmp_path, 1, "done", rank=1)
    _peer_marker(tmp_path, 1, "failed", rank=0)
    sync = JobSync(tmp_path, node_rank=0, nnodes=2, timeout_s=600)
    with pytest.raises(PeersMissingError, match=r"node\(s\) \[1\] finished the job"):
        sync.begin(0)


class PeerSpawner:
    """Spawns fake jobs; on each spawn node 1 does what `peer_does[i]` says in that generation
    and joins the next one."""

    def __init__(
        self, clock: FakeClock, sync_dir: Path, plan: Sequence[tuple[str, int, float | None]]
    ) -> None:
        self.clock, self.sync_dir, self.plan = clock, sync_dir, list(plan)
        self.envs: list[Mapping[str, str]] = []
        self.procs: list[FakeProc] = []

    def __call__(self, argv: Sequence[str], env: Mapping[str, str]) -> FakeProc:
        peer_does, code, runtime_s = self.plan[len(self.procs)]
        gen = len(self.procs) + 1
        if peer_does:
            _peer_marker(self.sync_dir, gen, peer_does)
        _peer_entry(self.sync_dir, gen + 1, 4)
        proc = FakeProc(self.clock, code, runtime_s, pid=200 + gen)
        self.procs.append(proc)
        self.envs.append(env)
        return proc


def _node0(
    tmp_path: Path, plan: Sequence[tuple[str, int, float | None]], **config: object
) -> tuple[Supervisor, PeerSpawner]:
    clock = FakeClock()
    sync_dir = tmp_path / "sync"
    _peer_entry(sync_dir, 1, 6)
    spawner = PeerSpawner(clock, sync_dir, plan)
    sync = JobSync(sync_dir, node_rank=0, nnodes=2, clock=clock, sleep=clock.sleep)
    cfg = SupervisorConfig(command=("train",), poll_s=1.0, backoff_base_s=1.0, **config)  # type: ignore[arg-type]
    sup = Supervisor(
        cfg, log=EventLog(wall_clock=clock), spawner=spawner, clock=clock, sleep=clock.sleep,
        base_env={}, sync=sync,
    )  # fmt: skip
    return sup, spawner


def _kinds(sup: Supervisor) -> list[str]:
    return [e["event"] for e in sup.log.events]


def test_peer_failure_restarts_this_node_without_counting_against_it(tmp_path: Path) -> None:
    # node 1 fails in generations 1 and 2; node 0's job runs until stopped; a limit of 2 own
    # failures is never reached because a peer's failure is not this node's
    plan = [("failed", 0, None), ("failed", 0, None), ("", 0, 5.0)]
    sup, spawner = _node0(tmp_path, plan, max_failures=2)
    outcome = sup.run()
    assert outcome.status == "succeeded" and outcome.attempts == 3
    assert [p.signals for p in spawner.procs] == [["TERM"], ["TERM"], []]
    agreed = [e for e in sup.log.events if e["event"] == "agreed"]
    assert [(e["generation"], e["steps"], e["resume_step"]) for e in agreed] == [
        (1, [None, 6], None), (2, [None, 4], None), (3, [None, 4], None),
    ]  # fmt: skip
    assert [env[ENV_RESUME_STEP] for env in spawner.envs] == ["none", "none", "none"]
    exits = [e["stopped_for"] for e in sup.log.events if e["event"] == "exit"]
    assert exits == ["peer_failed", "peer_failed", None]
    assert (tmp_path / "sync" / "gen-000003" / "done-0").exists()


@pytest.mark.parametrize(
    ("kind", "status", "exit_code"), [("interrupted", "interrupted", 75), ("gave_up", "gave_up", 1)]
)
def test_peer_interruption_or_give_up_stops_the_whole_job(
    tmp_path: Path, kind: str, status: str, exit_code: int
) -> None:
    sup, spawner = _node0(tmp_path, [(kind, 0, None)])
    outcome = sup.run()
    assert (outcome.status, outcome.cli_exit_code, outcome.attempts) == (status, exit_code, 1)
    assert spawner.procs[0].signals == ["TERM"]
    if kind == "gave_up":
        assert outcome.rule == "peer_gave_up"


def test_own_failure_is_marked_for_the_peers(tmp_path: Path) -> None:
    sup, _ = _node0(tmp_path, [("", 3, 120.0)], max_failures=1)
    assert sup.run().status == "gave_up"
    names = {p.name for p in (tmp_path / "sync" / "gen-000001").iterdir()}
    assert {"failed-0", "gave_up-0"} <= names


def test_load_latest_stops_at_the_agreed_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mgr = CheckpointManager(tmp_path, interval=None, keep_last=5)
    for step in (2, 4, 6):
        mgr.save({"step": step}, step)
    monkeypatch.setenv(ENV_RESUME_STEP, "4")
    again = CheckpointManager(tmp_path, interval=None, keep_last=5)
    loaded = again.load_latest()
    assert loaded is not None and loaded[0] == 4 and loaded[1]["step"] == 4
    assert "every node" in again.last_skipped[0].reason
    again.save({"step": 5}, 5)  # the newer step 6 is moved aside, not deleted
    assert [c.step for c in again.committed()] == [5, 4, 2]
    monkeypatch.setenv(ENV_RESUME_STEP, "none")
    assert CheckpointManager(tmp_path, interval=None).load_latest() is None
    assert CheckpointManager(tmp_path, interval=None).load_latest(at_most_step=2) is not None
