"""Where this node stands in a multi-node job: its rank, the node count, the master, from the
environment that the engine running it sets.

One `gpurent run --nodes auto` on every node; each finds (node_rank, nnodes, master_addr,
master_port, nproc_per_node) here and starts torchrun with that static rendezvous. The
variables, by engine (first match wins, in this order):

- SkyPilot: `SKYPILOT_NODE_IPS` (one IP a line, head first), `SKYPILOT_NODE_RANK`,
  `SKYPILOT_NUM_NODES`, `SKYPILOT_NUM_GPUS_PER_NODE` (docs.skypilot.co, "Distributed
  Multi-Node Jobs").
- dstack: `DSTACK_NODES_IPS` (one IP a line), `DSTACK_NODE_RANK`, `DSTACK_MASTER_NODE_IP`,
  `DSTACK_NODES_NUM`, `DSTACK_GPUS_PER_NODE` (dstack docs, "Distributed tasks"; release
  0.18.25 for `DSTACK_NODES_IPS`).
- Slurm: one `gpurent run` per task (`srun --ntasks-per-node=1` on real nodes): the task is the
  torchrun node, so `SLURM_PROCID` is the rank and `SLURM_STEP_NUM_TASKS` (else
  `SLURM_NTASKS`) the count; the master is the first host of `SLURM_STEP_NODELIST` (else
  `SLURM_JOB_NODELIST`, hostlist syntax expanded here); GPUs from `SLURM_GPUS_ON_NODE`; the
  port, unless `MASTER_PORT` is set, 20000 + job id mod 20000 so that two jobs sharing a host
  do not collide.
- Kubernetes (Kubeflow PyTorchJob, or the Indexed Job `gpurent deploy render` writes, which
  sets them from the downward API) and plain torchrun: `PET_NNODES`, `PET_NODE_RANK`,
  `PET_MASTER_ADDR`, `PET_MASTER_PORT`, `PET_NPROC_PER_NODE`, else `MASTER_ADDR`,
  `MASTER_PORT`, `WORLD_SIZE` (nodes), `NODE_RANK` (else `RANK`).

Nothing of those: one node, 127.0.0.1. Contradictions are one-line `InputError`s.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping

from gpurent.errors import InputError

DEFAULT_PORT = 29500
MAX_HOSTS = 100_000
MAX_NODES = 100_000


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Rendezvous:
    """This node's place in the job: `source` names the engine whose variables said so."""

    source: str
    node_rank: int
    nnodes: int
    master_addr: str
    master_port: int
    nproc_per_node: int
    job_id: str | None = None  # the engine's id for this run of the job, when it gives one


def expand_hostlist(text: str) -> list[str]:
    """Slurm's hostlist syntax: `node[01-03,07],login` -> node01 node02 node03 node07 login.

    Several bracket groups in one name multiply (`r[1-2]n[1-2]`); a range keeps the width of
    its first bound (`[08-10]` -> 08 09 10)."""
    hosts: list[str] = []
    for part in _split_top(text.strip()):
        hosts.extend(_expand_one(part, text))
        if len(hosts) > MAX_HOSTS:
            raise InputError(f"hostlist {text[:80]!r} expands to more than {MAX_HOSTS} hosts")
    if not hosts:
        raise InputError(f"hostlist {text[:80]!r} names no host")
    return hosts


def _split_top(text: str) -> list[str]:
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise InputError(f"hostlist {text[:80]!r}: nested '[' at position {i}")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise InputError(f"hostlist {text[:80]!r}: ']' without '[' at position {i}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise InputError(f"hostlist {text[:80]!r}: '[' not closed")
    parts.append(text[start:])
    return [p for p in (q.strip() for q in parts) if p]


_GROUP = re.compile(r"\[([^\]]*)\]")
_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def _expand_one(name: str, whole: str) -> list[str]:
    match = _GROUP.search(name)
    if match is None:
        return [name]
    prefix, rest = name[: match.start()], name[match.end() :]
    tails = _expand_one(rest, whole)
    out: list[str] = []
    for item in match.group(1).split(","):
        m = _RANGE.fullmatch(item.strip())
        if m is None:
            raise InputError(f"hostlist {whole[:80]!r}: {item!r} is not a number or a range a-b")
        lo_text, hi_text = m.group(1), m.group(2) or m.group(1)
        lo, hi = int(lo_text), int(hi_text)
        if hi < lo:
            raise InputError(f"hostlist {whole[:80]!r}: range {item!r} runs backwards")
        if (hi - lo + 1) * max(len(tails), 1) > MAX_HOSTS:
            raise InputError(f"hostlist {whole[:80]!r} expands to more than {MAX_HOSTS} hosts")
        width = len(lo_text)
        out.extend(f"{prefix}{n:0{width}d}{tail}" for n in range(lo, hi + 1) for tail in tails)
    return out


def _int(env: Mapping[str, str], name: str, *, least: int = 0, most: int = MAX_NODES) -> int:
    raw = env[name].strip()
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"${name}={raw[:40]!r} is not a whole number") from None
    if not least <= value <= most:
        raise InputError(f"${name}={value} is out of range ({least}..{most})")
    return value


def _opt_int(env: Mapping[str, str], *names: str, least: int = 0) -> int | None:
    for name in names:
        if env.get(name, "").strip():
            return _int(env, name, least=least)
    return None


def _ips(env: Mapping[str, str], name: str) -> list[str]:
    ips = [line.strip() for line in env[name].replace(",", "\n").splitlines() if line.strip()]
    if not ips:
        raise InputError(f"${name} is set but lists no node address")
    return ips


def _port(env: Mapping[str, str], name: str) -> int:
    return _int(env, name, least=1, most=65535)


@dataclasses.dataclass(frozen=True, slots=True)
class _Found:
    source: str
    node_rank: int
    nnodes: int
    master_addr: str
    master_port: int | None
    gpus_per_node: int | None
    job_id: str | None


def _check_rank(source: str, rank_var: str, rank: int, nnodes: int) -> None:
    if rank >= nnodes:
        raise InputError(
            f"{source}: ${rank_var}={rank} but the job has {nnodes} node(s) (ranks 0..{nnodes - 1})"
        )


def _skypilot(env: Mapping[str, str]) -> _Found:
    ips = _ips(env, "SKYPILOT_NODE_IPS")
    rank = _int(env, "SKYPILOT_NODE_RANK")
    nnodes = _opt_int(env, "SKYPILOT_NUM_NODES", least=1) or len(ips)
    if nnodes != len(ips):
        raise InputError(
            f"SkyPilot: $SKYPILOT_NUM_NODES={nnodes} but $SKYPILOT_NODE_IPS lists {len(ips)} nodes"
        )
    _check_rank("SkyPilot", "SKYPILOT_NODE_RANK", rank, nnodes)
    return _Found(
        "skypilot",
        rank,
        nnodes,
        ips[0],
        None,
        _opt_int(env, "SKYPILOT_NUM_GPUS_PER_NODE"),
        env.get("SKYPILOT_TASK_ID") or None,
    )


def _dstack(env: Mapping[str, str]) -> _Found:
    rank = _int(env, "DSTACK_NODE_RANK")
    ips = _ips(env, "DSTACK_NODES_IPS") if env.get("DSTACK_NODES_IPS", "").strip() else []
    master = env.get("DSTACK_MASTER_NODE_IP", "").strip() or (ips[0] if ips else "")
    if not master:
        raise InputError(
            "dstack: $DSTACK_NODE_RANK is set but neither $DSTACK_MASTER_NODE_IP nor "
            "$DSTACK_NODES_IPS is"
        )
    if ips and master != ips[0]:
        raise InputError(
            f"dstack: $DSTACK_MASTER_NODE_IP={master} is not the first of $DSTACK_NODES_IPS "
            f"({ips[0]})"
        )
    nnodes = _opt_int(env, "DSTACK_NODES_NUM", least=1) or len(ips)
    if nnodes < 1:
        raise InputError("dstack: neither $DSTACK_NODES_NUM nor $DSTACK_NODES_IPS gives the nodes")
    if ips and nnodes != len(ips):
        raise InputError(
            f"dstack: $DSTACK_NODES_NUM={nnodes} but $DSTACK_NODES_IPS lists {len(ips)} nodes"
        )
    _check_rank("dstack", "DSTACK_NODE_RANK", rank, nnodes)
    return _Found(
        "dstack",
        rank,
        nnodes,
        master,
        None,
        _opt_int(env, "DSTACK_GPUS_PER_NODE"),
        env.get("DSTACK_RUN_NAME") or None,
    )


def _slurm(env: Mapping[str, str]) -> _Found:
    rank = _int(env, "SLURM_PROCID")
    nnodes = _opt_int(env, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NNODES", least=1) or 1
    _check_rank("Slurm", "SLURM_PROCID", rank, nnodes)
    nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST") or ""
    master = expand_hostlist(nodelist)[0] if nodelist.strip() else "127.0.0.1"
    job = env.get("SLURM_JOB_ID", "").strip()
    port = None
    if job:
        job_num = _int(env, "SLURM_JOB_ID", most=2**63)
        port = 20000 + job_num % 20000
        job = f"slurm-{job_num}.{env.get('SLURM_RESTART_COUNT', '0').strip() or '0'}"
    return _Found(
        "slurm", rank, nnodes, master, port, _opt_int(env, "SLURM_GPUS_ON_NODE"), job or None
    )


def _torchrun(env: Mapping[str, str]) -> _Found:
    pet = bool(env.get("PET_NNODES", "").strip())
    if pet:
        raw = env["PET_NNODES"].strip()
        lo, _, hi = raw.partition(":")
        if hi and hi != lo:
            raise InputError(
                f"$PET_NNODES={raw!r} is an elastic range; gpurent run restarts whole jobs of a "
                "fixed size: give one number"
            )
        nnodes = _int({"PET_NNODES": lo}, "PET_NNODES", least=1)
    else:
        nnodes = _int(env, "WORLD_SIZE", least=1) if env.get("WORLD_SIZE", "").strip() else 1
    rank_var = next(
        (n for n in ("PET_NODE_RANK", "NODE_RANK", "RANK") if env.get(n, "").strip()), None
    )
    rank = _int(env, rank_var) if rank_var else 0
    if rank_var:
        _check_rank("torchrun", rank_var, rank, nnodes)
    master = (env.get("PET_MASTER_ADDR") or env.get("MASTER_ADDR") or "").strip()
    if nnodes > 1 and not master:
        raise InputError(
            f"{nnodes} nodes but no $MASTER_ADDR (or $PET_MASTER_ADDR): the address of node 0"
        )
    port_var = next((n for n in ("PET_MASTER_PORT", "MASTER_PORT") if env.get(n, "").strip()), "")
    return _Found(
        "torchrun",
        rank,
        nnodes,
        master or "127.0.0.1",
        _port(env, port_var) if port_var else None,
        _opt_int(env, "PET_NPROC_PER_NODE", "NPROC_PER_NODE", least=1),
        None,
    )


def _find(env: Mapping[str, str]) -> _Found | None:
    if env.get("SKYPILOT_NODE_RANK", "").strip() or env.get("SKYPILOT_NODE_IPS", "").strip():
        if not env.get("SKYPILOT_NODE_IPS", "").strip():
            raise InputError("SkyPilot: $SKYPILOT_NODE_RANK is set but $SKYPILOT_NODE_IPS is not")
        if not env.get("SKYPILOT_NODE_RANK", "").strip():
            raise InputError("SkyPilot: $SKYPILOT_NODE_IPS is set but $SKYPILOT_NODE_RANK is not")
        return _skypilot(env)
    if env.get("DSTACK_NODE_RANK", "").strip():
        return _dstack(env)
    if env.get("SLURM_PROCID", "").strip() and env.get("SLURM_JOB_ID", "").strip():
        return _slurm(env)
    keys = ("PET_NNODES", "MASTER_ADDR", "PET_MASTER_ADDR", "WORLD_SIZE", "NODE_RANK")
    if any(env.get(k, "").strip() for k in keys):
        return _torchrun(env)
    return None


def _local_gpus(env: Mapping[str, str]) -> int | None:
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is None or not visible.strip():
        return None
    return len([d for d in visible.split(",") if d.strip() and d.strip() != "-1"]) or None


def count_nvidia_gpus(proc_dir: str = "/proc/driver/nvidia/gpus") -> int | None:
    """The NVIDIA GPUs the driver lists (one folder each), or None without the driver."""
    try:
        return len(os.listdir(proc_dir)) or None
    except OSError:
        return None


def detect(
    env: Mapping[str, str],
    *,
    nodes: int | None = None,
    nproc_per_node: int | None = None,
    local_gpus: int | None = None,
) -> Rendezvous:
    """This node's rendezvous from `env`. `nodes` (None: auto) must agree with the engine's
    count; `nproc_per_node` (None: auto) defaults to the engine's GPUs per node, else the
    devices in $CUDA_VISIBLE_DEVICES, else `local_gpus` (what the driver lists, from
    `count_nvidia_gpus`), else 1 (a CPU process). $MASTER_PORT overrides the port.
    """
    found = _find(env)
    if found is None:
        if nodes is not None and nodes > 1:
            raise InputError(
                f"--nodes {nodes} but no engine's variables say this node's rank and the "
                "master's address (SkyPilot, dstack, Slurm, or MASTER_ADDR/NODE_RANK/WORLD_SIZE)"
            )
        found = _Found("single", 0, 1, "127.0.0.1", None, None, None)
    if nodes is not None and nodes != found.nnodes:
        raise InputError(
            f"--nodes {nodes} but the {found.source} environment says {found.nnodes} node(s); "
            "use --nodes auto or fix the job's node count"
        )
    port = found.master_port
    if env.get("MASTER_PORT", "").strip():
        port = _port(env, "MASTER_PORT")
    procs = nproc_per_node or found.gpus_per_node or _local_gpus(env) or local_gpus or 1
    return Rendezvous(
        source=found.source,
        node_rank=found.node_rank,
        nnodes=found.nnodes,
        master_addr=found.master_addr,
        master_port=port or DEFAULT_PORT,
        nproc_per_node=procs,
        job_id=(env.get("GPURENT_JOB_ID", "").strip() or found.job_id),
    )


__all__ = ["DEFAULT_PORT", "Rendezvous", "count_nvidia_gpus", "detect", "expand_hostlist"]
