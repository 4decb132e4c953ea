"""The one module that calls Ray: connect to a cluster, list its live nodes, and run one task
per node pinned to it (NodeAffinitySchedulingStrategy, not soft), asking for the node's GPUs
where it has them.

Ray is imported lazily (the `fleet` extra). An address is checked before Ray sees it: a
malformed one is an InputError (exit 2); one where nothing listens, or something that does not
speak gRPC, is a DeviceError (exit 1) within `PROBE_TIMEOUT_S`, instead of Ray's own retry loop
of minutes.
"""

from __future__ import annotations

import logging
import re
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpurent.errors import DeviceError, InputError, require
from gpurent.fleet import node as on_node

PROBE_TIMEOUT_S = 3.0
_ADDRESS = re.compile(r"^(?:ray://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.\-]+):(\d{1,5})$")
_BUILTIN_RESOURCES = ("CPU", "GPU", "memory", "object_store_memory")
# HTTP/2 client connection preface and an empty SETTINGS frame (RFC 9113, section 3.4)
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_H2_SETTINGS = 0x04


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """A live node of the cluster. `labels` are its custom resources (how users name nodes)."""

    node_id: str
    address: str
    cpus: float
    gpus: float
    labels: tuple[str, ...]
    is_head: bool = False

    @property
    def short(self) -> str:
        """The node ID's first 12 characters, for display."""
        return self.node_id[:12]


def parse_address(address: str) -> tuple[str, int] | None:
    """(host, port) of `host:port` or `ray://host:port`; None for `auto` (Ray finds the
    cluster this machine belongs to). InputError otherwise."""
    text = address.strip()
    if text == "auto":
        return None
    match = _ADDRESS.match(text)
    if match is None or not 1 <= int(match.group(2)) <= 65535:
        raise InputError(
            f"--address {address!r}: expected HOST:PORT of the Ray head (e.g. 10.0.0.1:6379), "
            "ray://HOST:PORT or auto"
        )
    return match.group(1).strip("[]"), int(match.group(2))


def _speaks_grpc(sock: socket.socket) -> bool:
    """Whether the peer answers an HTTP/2 client preface with a SETTINGS frame, as every gRPC
    server (Ray's GCS and Ray Client among them) does."""
    sock.sendall(_H2_PREFACE)
    head = b""
    while len(head) < 9:
        chunk = sock.recv(9 - len(head))
        if not chunk:
            return False
        head += chunk
    return head[3] == _H2_SETTINGS


def probe(address: str, where: tuple[str, int]) -> None:
    """DeviceError unless a gRPC server answers at `where` within `PROBE_TIMEOUT_S` (Ray itself
    retries for minutes against a port that is closed or serves something else)."""
    hint = "start one with `ray start --head` or pass the head node's HOST:PORT"
    try:
        with socket.create_connection(where, timeout=PROBE_TIMEOUT_S) as sock:
            grpc = _speaks_grpc(sock)
    except TimeoutError:
        grpc = False
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DeviceError(f"no Ray cluster answers at {address} ({reason}); {hint}") from None
    if not grpc:
        raise DeviceError(f"{address} answers, but not as a Ray head (no gRPC); {hint}")


def connect(address: str) -> Any:
    """Ray, connected to the cluster at `address` (quietly: nothing on stdout)."""
    where = parse_address(address)
    ray: Any = require("ray", "fleet")
    if where is not None:
        probe(address, where)
    try:
        ray.init(
            address=address.strip(),
            logging_level=logging.ERROR,
            log_to_driver=False,
            configure_logging=True,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DeviceError(f"cannot join the Ray cluster at {address}: {first}") from None
    return ray


def alive_nodes(ray: Any) -> list[Node]:
    """The cluster's live nodes, head first, then by node id."""
    nodes = []
    for info in ray.nodes():
        if not info.get("Alive"):
            continue
        res = info.get("Resources", {})
        labels = tuple(
            sorted(k for k in res if k not in _BUILTIN_RESOURCES and not k.startswith("node:"))
        )
        nodes.append(
            Node(
                node_id=str(info["NodeID"]),
                address=str(info.get("NodeManagerAddress", "")),
                cpus=float(res.get("CPU", 0.0)),
                gpus=float(res.get("GPU", 0.0)),
                labels=labels,
                is_head="node:__internal_head__" in res,
            )
        )
    if not nodes:
        raise DeviceError("the Ray cluster has no live node")
    return sorted(nodes, key=lambda n: (not n.is_head, n.node_id))


Claim = tuple[float, float]  # (CPUs, GPUs) a task asks of its node


def _pinned(ray: Any, fn: Callable[..., Any], node: Node, claim: Claim) -> Any:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return ray.remote(fn).options(
        num_cpus=claim[0],
        num_gpus=claim[1],
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node.node_id, soft=False),
        max_retries=0,
    )


def run_on(
    ray: Any,
    calls: Sequence[tuple[Node, Callable[..., Any], dict[str, Any], Claim]],
    timeout_s: float,
) -> list[tuple[Any, str | None]]:
    """Run each (node, fn, keyword arguments, claim) as one task pinned to its node, all at once;
    per call the value and None, or None and a one-line error (a failed task, or no answer by the
    timeout)."""
    refs = [_pinned(ray, fn, node, claim).remote(**kwargs) for node, fn, kwargs, claim in calls]
    deadline = time.monotonic() + timeout_s
    out: list[tuple[Any, str | None]] = []
    for (node, _, _, _), ref in zip(calls, refs, strict=True):
        left = max(0.1, deadline - time.monotonic())
        try:
            out.append((ray.get(ref, timeout=left), None))
        except ray.exceptions.GetTimeoutError:
            ray.cancel(ref, force=True)
            out.append((None, f"no answer from node {node.short} within {timeout_s:.0f} s"))
        except ray.exceptions.RayError as exc:
            lines = [line for line in str(exc).strip().splitlines() if line.strip()]
            out.append((None, f"node {node.short}: {lines[-1] if lines else type(exc).__name__}"))
    return out


def bench_nodes(
    ray: Any,
    nodes: Sequence[Node],
    *,
    bench_args: list[str],
    timeout_s: float,
    min_free_gib: float,
    one_at_a_time: bool = False,
) -> list[tuple[Any, str | None]]:
    """`gpurent bench --quick` and the health checks on every node, holding the whole node (all
    its CPUs and GPUs: nothing else of the cluster's runs there meanwhile, and Ray sets the
    task's thread count, OMP_NUM_THREADS, to the node's CPUs); all nodes at once, or (with
    `one_at_a_time`) one after another, so that nodes sharing a host do not slow each other."""
    kwargs = {"bench_args": bench_args, "timeout_s": timeout_s, "min_free_gib": min_free_gib}
    calls = [(n, on_node.bench_here, kwargs, (n.cpus, n.gpus)) for n in nodes]
    if one_at_a_time:
        return [answer for call in calls for answer in run_on(ray, [call], timeout_s + 30.0)]
    return run_on(ray, calls, timeout_s + 30.0)


def health_nodes(
    ray: Any,
    nodes: Sequence[Node],
    *,
    path: str,
    min_free_gib: float,
    endpoints: list[str],
    timeout_s: float,
) -> list[tuple[Any, str | None]]:
    """The runtime's health checks on every node. They claim no CPU and no GPU, so they run
    beside a job that holds the node (NVML sees every GPU whatever Ray makes visible)."""
    kwargs = {"path": path, "min_free_gib": min_free_gib, "endpoints": endpoints}
    calls = [(n, on_node.health_here, kwargs, (0.0, 0.0)) for n in nodes]
    return run_on(ray, calls, timeout_s)


def allreduce_nodes(
    ray: Any,
    nodes: Sequence[Node],
    *,
    sizes_mib: list[float],
    repeats: int,
    timeout_s: float,
) -> tuple[str, list[dict[str, float]]]:
    """One all-reduce process per node (NCCL on one GPU each when every node has a GPU, gloo on
    the CPU otherwise); the device and every rank's medians. DeviceError if a rank fails."""
    if len(nodes) < 2:
        raise DeviceError("all-reduce across nodes needs at least 2 live nodes")
    device = "cuda" if all(n.gpus >= 1 for n in nodes) else "cpu"
    free_port: tuple[Node, Callable[..., Any], dict[str, Any], Claim] = (
        nodes[0],
        on_node.free_port_here,
        {},
        (0.0, 0.0),
    )
    ((port, error),) = run_on(ray, [free_port], timeout_s)
    if error is not None:
        raise DeviceError(f"all-reduce rendezvous: {error}")
    init = f"tcp://{nodes[0].address}:{port}"
    gpus = 1.0 if device == "cuda" else 0.0
    calls: list[tuple[Node, Callable[..., Any], dict[str, Any], Claim]] = [
        (
            n,
            on_node.allreduce_here,
            {
                "rank": r,
                "world_size": len(nodes),
                "init_method": init,
                "device": device,
                "sizes_mib": sizes_mib,
                "repeats": repeats,
                "timeout_s": timeout_s,
            },
            (min(1.0, n.cpus), gpus),
        )
        for r, n in enumerate(nodes)
    ]
    results = run_on(ray, calls, timeout_s + 10.0)
    errors = [e for _, e in results if e is not None]
    if errors:
        raise DeviceError(f"all-reduce across {len(nodes)} nodes failed: {errors[0]}")
    return device, [value for value, _ in results]
