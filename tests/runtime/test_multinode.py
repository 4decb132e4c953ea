"""Two "nodes" as two `gpurent run` process trees on 127.0.0.1 (gloo, CPU): whole-job restarts
from the newest checkpoint that every node can load, after one node is killed mid-step."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import free_port

pytest.importorskip("torch", reason="the multi-node test trains a tiny torch model")
psutil = pytest.importorskip("psutil", reason="psutil finds the processes of a node to kill")

JOB = str(Path(__file__).with_name("ddp_job.py"))
STEPS = 10


def _start_node(rank: int, tmp: Path, port: int, extra: dict[str, str]) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "WORLD_SIZE": "2",
        "NODE_RANK": str(rank),
        "JOB_RESULT_DIR": str(tmp),
        "OMP_NUM_THREADS": "1",
        **extra,
    }
    argv = [
        sys.executable, "-m", "gpurent", "run",
        "--nodes", "auto", "--nproc-per-node", "1",
        "--checkpoint-dir", str(tmp / f"ckpt-node{rank}"),
        "--sync-dir", str(tmp / "sync"), "--sync-timeout", "60",
        "--backoff", "0.2", "--poll", "0.1", "--grace", "2", "--notice", "none",
        "--json", "--log", str(tmp / f"events-node{rank}.jsonl"),
        "--", sys.executable, JOB, str(STEPS),
    ]  # fmt: skip
    with open(tmp / f"out-node{rank}.txt", "ab") as out:
        return subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL a node: its supervisor and everything under it (torchrun, the worker)."""
    root = psutil.Process(proc.pid)
    victims = [root, *root.children(recursive=True)]
    for p in victims:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


def _events(tmp: Path, rank: int) -> list[dict[str, Any]]:
    path = tmp / f"events-node{rank}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _wait(procs: list[subprocess.Popen[bytes]], deadline: float) -> list[int]:
    codes: list[int] = []
    for proc in procs:
        try:
            codes.append(proc.wait(timeout=max(deadline - time.monotonic(), 1)))
        except subprocess.TimeoutExpired:
            for p in procs:
                _kill_tree(p) if p.poll() is None else None
            pytest.fail("the two-node job did not finish in time")
    return codes


def _outputs(tmp: Path) -> str:
    return "\n".join((tmp / f"out-node{r}.txt").read_text()[-3000:] for r in (0, 1))


@pytest.mark.slow
def test_node_killed_mid_step_restarts_whole_job_from_common_step(tmp_path: Path) -> None:
    from .ddp_job import reference

    deadline = time.monotonic() + 150  # about 45 s on 2 loaded cores
    port = free_port()
    extra = {"JOB_STALL_AT": "6"}
    nodes = [_start_node(r, tmp_path, port, extra) for r in (0, 1)]
    stalled = tmp_path / "stalled"
    while not stalled.exists():
        assert time.monotonic() < deadline, _outputs(tmp_path)
        assert nodes[0].poll() is None and nodes[1].poll() is None, _outputs(tmp_path)
        time.sleep(0.1)
    _kill_tree(nodes[1])  # node 1 dies mid-step: node 0 has saved step 6, node 1 only step 4
    nodes[1] = _start_node(1, tmp_path, port, extra)  # the engine brings the node back
    codes = _wait(nodes, deadline)
    assert codes == [0, 0], _outputs(tmp_path)

    agreed = [e for e in _events(tmp_path, 0) if e["event"] == "agreed"]
    assert [e["generation"] for e in agreed] == [1, 2]
    assert agreed[1]["steps"] == [6, 4] and agreed[1]["resume_step"] == 4
    expected = reference(STEPS)
    for rank in (0, 1):
        result = json.loads((tmp_path / f"rank-{rank}.json").read_text())
        assert result["resumed_from"] == 4 and result["gen"] == "2"
        assert result["params"] == expected  # bit for bit: the same sums in the same order
