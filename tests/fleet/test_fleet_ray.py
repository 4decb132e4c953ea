"""`gpurent fleet bench|health|allreduce` against a real local Ray cluster: a head and two worker
nodes on this machine (ray.cluster_utils.Cluster starts the same gcs_server and raylet processes
as `ray start`, and stops exactly those), each with 1 CPU and a 100 MB object store.

Worker node w2 runs with GPURENT_BENCH_THROTTLE=4 in its raylet's environment, the bench's
documented test hook: every timed call on that node really takes 4x as long, so the fleet must
name w2 as the node to replace. Without ray the tests skip; with CI=true they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
THROTTLED = "fleet_w2"
HANDLED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _need_ray() -> None:
    try:
        import ray.cluster_utils  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "ray is not installed: CI must run the fleet tests (pip install '.[fleet]')"
            )
        pytest.skip("ray is not installed (pip install 'gpurent[fleet]')")


def gpurent(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("RAY_ADDRESS", None)
    return subprocess.run(
        [sys.executable, "-m", "gpurent", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


@contextlib.contextmanager
def local_cluster(*, throttled_worker: bool = True) -> Iterator[str]:
    """A head (and two workers) on this machine; on exit, no trace of Ray in this process.

    Ray's head node installs a SIGTERM handler in the process that starts it (ray/_private/
    node.py: it kills the node's processes, then sys.exit(1)) and keeps it after the cluster is
    gone: a later SIGTERM in the same pytest process then raised SystemExit from node.py inside
    an unrelated test (tests/test_cli_inputs.py). So the handlers are put back as they were."""
    _need_ray()
    import ray
    from ray.cluster_utils import Cluster

    saved = {sig: signal.getsignal(sig) for sig in HANDLED}
    small: dict[str, Any] = {"num_cpus": 1, "object_store_memory": 100_000_000}
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("PYTHONPATH", str(ROOT / "src"))  # the nodes' workers import this gpurent
            c = Cluster(
                initialize_head=True,
                head_node_args={
                    **small,
                    "include_dashboard": False,
                    "resources": {"fleet_head": 1},
                },
            )
            try:
                if throttled_worker:
                    c.add_node(**small, resources={"fleet_w1": 1})
                    c.add_node(
                        **small,
                        resources={THROTTLED: 1},
                        env_vars={"GPURENT_BENCH_THROTTLE": "4"},
                    )
                c.wait_for_nodes()
                yield c.address
            finally:
                c.shutdown()
    finally:
        if ray.is_initialized():
            ray.shutdown()
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with local_cluster() as address:
        yield address


@pytest.mark.slow
def test_fleet_bench_ranks_the_nodes_and_names_the_throttled_one(cluster: str) -> None:
    done = gpurent(
        "fleet", "bench", "--address", cluster, "--json",
        "--only", "matmul,membw", "--max-seconds", "5", "--sizes-mib", "1", "--repeats", "3",
        "--one-at-a-time",  # the three "nodes" share this machine's cores
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)  # nothing but the JSON on stdout
    nodes = {n["node"]: n for n in data["nodes"]}
    assert len(nodes) == 3
    slow = next(n for n in data["nodes"] if THROTTLED in n["labels"])
    assert data["to_replace"] == [slow["node"]]
    assert slow["rank"] == 3
    metrics = {o["metric"] for o in data["outliers"] if o["node"] == slow["node"]}
    assert "matmul.fp32" in metrics, [(n["labels"], n["figures"]) for n in data["nodes"]]
    assert all(o["node"] == slow["node"] for o in data["outliers"])
    for n in data["nodes"]:  # every node ran the real bench and the health checks
        assert n["error"] is None
        assert n["figures"]["matmul.fp32"] > 0
        assert {h["check"] for h in n["health"]} == {"gpu", "disk", "network"}
    assert len(data["pairs"]) == 3  # a ring of pairs over 3 nodes
    assert all(p["device"] == "cpu" and p["busbw_gbps"] > 0 for p in data["pairs"])
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: 1 of 3 nodes to replace: {slow['node']} (")


@pytest.mark.slow
def test_fleet_health_runs_on_every_node(cluster: str) -> None:
    done = gpurent("fleet", "health", "--address", cluster, "--min-free-gib", "1e6")
    assert done.returncode == 1  # no node has a million GiB free: every disk check fails
    assert "fleet health: 3 nodes" in done.stdout
    assert done.stdout.count("no NVML: skipped") == 3
    assert done.stdout.count("fail") == 3
    assert done.stdout.count("no endpoints configured") == 3
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: 3 of 3 nodes failed a health check: ")


@pytest.mark.slow
def test_fleet_allreduce_reports_algbw_and_busbw_per_size(cluster: str) -> None:
    done = gpurent(
        "fleet", "allreduce", "--address", cluster, "--json", "--sizes-mib", "1,4", "--repeats", "3"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["backend"], data["world_size"]) == ("gloo", 3)
    assert [s["size_mib"] for s in data["sizes"]] == [1.0, 4.0]
    _check_bandwidths(data)


@pytest.mark.slow
def test_bench_allreduce_nodes_is_the_fleet_all_reduce(cluster: str) -> None:
    done = gpurent("bench", "--allreduce", "--nodes", "--address", cluster, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["backend"], data["world_size"]) == ("gloo", 3)
    assert [s["size_mib"] for s in data["sizes"]] == [1.0, 8.0, 64.0]  # the CPU default sizes
    _check_bandwidths(data)


def test_bench_nodes_needs_allreduce_and_an_address() -> None:
    without = gpurent("bench", "--nodes", "--address", "127.0.0.1:1")
    assert without.returncode == 2
    assert without.stderr.strip() == (
        "error: --nodes measures the all-reduce across nodes: give it with --allreduce"
    )
    env_free = gpurent("bench", "--allreduce", "--nodes")
    assert env_free.returncode == 2
    assert "--nodes needs the Ray cluster: pass --address" in env_free.stderr
    both = gpurent("bench", "--allreduce", "--only", "matmul")
    assert both.returncode == 2
    assert both.stderr.strip() == "error: --allreduce with --only matmul: give one of them"


def _check_bandwidths(data: dict[str, Any]) -> None:
    for s in data["sizes"]:
        assert s["busbw_gbps"] == pytest.approx(s["algbw_gbps"] * 2 * 2 / 3)
        assert s["algbw_gbps"] == pytest.approx(s["size_mib"] * 2**20 / s["time_s"] / 1e9)


def test_no_cluster_at_the_address_is_one_line() -> None:
    _need_ray()
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nobody listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = gpurent("fleet", "bench", "--address", f"127.0.0.1:{port}", timeout=30)
    assert done.returncode == 1
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: no Ray cluster answers at 127.0.0.1:{port}")


def test_something_else_at_the_address_is_one_line() -> None:
    _need_ray()
    import http.server
    import threading

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        address = f"127.0.0.1:{server.server_address[1]}"
        done = gpurent("fleet", "health", "--address", address, timeout=30)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "answers, but not as a Ray head" in line


@pytest.mark.slow
def test_a_cluster_leaves_no_signal_handler_behind() -> None:
    before = {sig: signal.getsignal(sig) for sig in HANDLED}
    with local_cluster(throttled_worker=False):
        during = signal.getsignal(signal.SIGTERM)
    import ray

    assert during is not before[signal.SIGTERM]  # Ray did install one: the check can fail
    assert {sig: signal.getsignal(sig) for sig in HANDLED} == before
    assert not ray.is_initialized()
