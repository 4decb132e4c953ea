"""A plan candidate as what the deploy renderers need: the frozen `DeploySpec`.

`spec_from_plan` reads the `gpurent plan --json` document (schema version 1,
docs/plan-json-schema.md) as a mapping; it does no I/O. Values the plan does not carry (the
job's command, the checkpoint directory, the job's requirements) come from `DeployOptions`,
whose defaults are stated in docs/deploy.md and in each rendered file's header.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpurent.errors import InputError

SCHEMA_VERSION = "1"
DEFAULT_COMMAND = "python train.py"
DEFAULT_CHECKPOINT_DIR = "/checkpoints"
DEFAULT_STORAGE_GB_PER_NODE = 200.0  # the planner's default (pricing.costs), stated in docs
# Time limits: the plan's expected wall time (which already includes the spot overhead) plus
# this fraction plus a fixed allowance for set-up (image pull, pip install, first checkpoint
# load). A job that runs out of time is killed, so the margin errs long; docs/deploy.md.
WALL_TIME_MARGIN = 0.25
WALL_TIME_SETUP_S = 1800.0
# dstack's max_price: the plan's price per instance plus this fraction, so that a small price
# move between the catalog's date and the launch does not block the run.
PRICE_MARGIN = 0.10


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:_-]*")


def one_line(text: str) -> str:
    """`text` with every control character (newlines too) replaced by a space."""
    return _CONTROL.sub(" ", text)


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """One offer a job may run on (the chosen candidate, or a fallback from the plan's top)."""

    rank: int
    provider: str
    instance_type: str
    region: str
    gpu_name: str
    gpus_per_node: int
    spot: bool
    price_usd_per_hour: float  # per instance, as charged under its pricing model


@dataclass(frozen=True, slots=True, kw_only=True)
class DeploySpec:
    """Everything a renderer writes, with where it came from.

    `candidate_index` is the 1-based position in the plan's `top` list (`--candidate N`).
    A spec may also be built directly (e.g. a CPU-only Slurm job in tests: `gpus_per_node=0`,
    `procs_per_node=2`)."""

    source: str  # the plan file's name, or "plan" for `gpurent plan --emit`
    candidate_index: int
    workload_name: str
    model: str
    provider: str
    instance_type: str
    region: str
    zone: str | None = None
    gpu_name: str
    gpu_architecture: str | None = None  # from the catalog, e.g. "Hopper"; None: not a known GPU
    gpu_short_name: str  # the engines' name for the GPU, e.g. "H100"
    gpu_memory_gib: float
    gpus_per_node: int
    nodes: int
    procs_per_node: int  # processes torchrun starts per node (the GPUs, or given for CPU jobs)
    spot: bool
    price_usd_per_hour: float  # per instance
    inter_node_gbps: float | None = None
    wall_time_s: float | None = None  # the plan's expected time to finish; None: not given
    checkpoint_interval_s: float | None = None
    storage_gb_per_node: float = DEFAULT_STORAGE_GB_PER_NODE
    checkpoint_dir: str = DEFAULT_CHECKPOINT_DIR
    command: str = DEFAULT_COMMAND
    command_given: bool = False
    requirements: tuple[str, ...] = ()
    fallbacks: tuple[Placement, ...] = field(default=())  # other top candidates, same shape
    hosts: tuple[str, ...] = ()  # fixed host addresses (torchrun, Ansible inventory)
    name: str = "gpurent-job"

    @property
    def num_gpus(self) -> int:
        """Total GPUs across all nodes."""
        return self.gpus_per_node * self.nodes

    @property
    def multi_node(self) -> bool:
        """Whether the run spans more than one node."""
        return self.nodes > 1

    @property
    def pricing(self) -> str:
        """The pricing as text: "spot" or "on-demand"."""
        return "spot" if self.spot else "on-demand"

    @property
    def placement(self) -> Placement:
        """The candidate as a runtime placement: rank, provider, instance, region, GPUs, pricing."""
        return Placement(
            rank=self.candidate_index,
            provider=self.provider,
            instance_type=self.instance_type,
            region=self.region,
            gpu_name=self.gpu_name,
            gpus_per_node=self.gpus_per_node,
            spot=self.spot,
            price_usd_per_hour=self.price_usd_per_hour,
        )

    def provenance(self) -> str:
        """One line: which plan candidate this came from (it goes into comments of shell
        scripts: control characters from the plan file are dropped, so it stays one line)."""
        where = f"{self.provider} {self.instance_type} in {self.region}"
        return one_line(
            f"plan candidate {self.candidate_index} of {self.source}: {where}, "
            f"{self.nodes} x {self.gpus_per_node} {self.gpu_name}, {self.pricing}, "
            f"${self.price_usd_per_hour:.2f}/h per instance, workload {self.workload_name}"
        )

    def time_limit_s(self) -> float | None:
        """The wall time with the stated margin, whole minutes; None without a wall time."""
        if self.wall_time_s is None:
            return None
        padded = self.wall_time_s * (1.0 + WALL_TIME_MARGIN) + WALL_TIME_SETUP_S
        return float(math.ceil(padded / 60.0) * 60)

    def max_price_usd_per_hour(self) -> float:
        """The plan's price in USD per hour plus the stated margin, to the cent."""
        return round(self.price_usd_per_hour * (1.0 + PRICE_MARGIN), 2)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployOptions:
    """What the plan does not say about the job (None: the default, stated in the output)."""

    candidate: int | None = None  # 1-based in `top`; None: the plan's best
    command: str | None = None
    checkpoint_dir: str | None = None
    requirements: tuple[str, ...] = ()
    storage_gb_per_node: float | None = None
    zone: str | None = None
    name: str | None = None
    procs_per_node: int | None = None
    hosts: tuple[str, ...] = ()
    source: str = "plan"


def _get(doc: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = doc.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise InputError(
            f"{where}: field {key!r} is missing or not a {_kind(kind)}; regenerate "
            "the file with `gpurent plan --json`"
        )
    return value


def _kind(kind: type | tuple[type, ...]) -> str:
    names = {
        str: "string",
        int: "integer",
        float: "number",
        bool: "boolean",
        list: "list",
        dict: "object",
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _placement(c: Mapping[str, Any], where: str) -> Placement:
    return Placement(
        rank=_get(c, "rank", int, where),
        provider=_get(c, "provider", str, where),
        instance_type=_get(c, "instance_type", str, where),
        region=_get(c, "region", str, where),
        gpu_name=_get(c, "gpu_name", str, where),
        gpus_per_node=_get(c, "gpus_per_node", int, where),
        spot=_get(c, "pricing", str, where) == "spot",
        price_usd_per_hour=float(_get(c, "price_usd_per_hour", (int, float), where)),
    )


def _storage(doc: Mapping[str, Any], options: DeployOptions) -> float:
    """--storage-gb, else the plan's `storage_gb_per_node` (optional field), else the default."""
    if options.storage_gb_per_node is not None:
        return options.storage_gb_per_node
    given = doc.get("storage_gb_per_node")
    if isinstance(given, int | float) and not isinstance(given, bool) and given > 0:
        return float(given)
    return DEFAULT_STORAGE_GB_PER_NODE


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


_SAFE_NAME = re.compile(r"[^a-z0-9-]+")


def job_name(workload_name: str) -> str:
    """A name every engine accepts (lowercase letters, digits, dashes; starts with a letter)."""
    slug = _SAFE_NAME.sub("-", workload_name.lower()).strip("-")[:40].strip("-")
    return f"gpurent-{slug}" if slug else "gpurent-job"


def gpu_short_name(name: str, aliases: Sequence[str]) -> str:
    """The engines' short GPU name: the first of the canonical name and its aliases that is
    letters and digits alone once a memory suffix is dropped ("A100-SXM4-80GB" -> "A100")."""
    for candidate in (name, *aliases):
        bare = re.sub(r"[- ]?\d+GB$", "", candidate)
        if re.fullmatch(r"[A-Za-z0-9]+", bare):
            return bare
    return re.sub(r"[^A-Za-z0-9]", "", name)


def spec_from_plan(doc: Any, options: DeployOptions = DeployOptions()) -> DeploySpec:
    """The candidate `options.candidate` (1-based in `top`; default the best) of a plan
    document, as a DeploySpec. A document of another schema version, an infeasible plan
    without --candidate, or a candidate number out of range: InputError (one line)."""
    from gpurent.catalog import find_gpu

    where = options.source
    if not isinstance(doc, Mapping):
        raise InputError(f"{where}: not a gpurent plan document (expected a JSON object)")
    version = doc.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputError(
            f"{where}: plan schema version {version!r}, this gpurent reads version "
            f"{SCHEMA_VERSION!r}; regenerate it with this gpurent's `gpurent plan --json`"
        )
    top = _get(doc, "top", list, where)
    if not top:
        raise InputError(f"{where}: the plan has no candidates; nothing to render")
    if options.candidate is None:
        if not doc.get("feasible", False):
            raise InputError(
                f"{where}: the plan is infeasible (nothing meets its constraints); choose one "
                f"of its closest alternatives with --candidate 1..{len(top)}"
            )
        index = 1
    else:
        index = options.candidate
        if not 1 <= index <= len(top):
            raise InputError(
                f"--candidate {index}: the plan has {len(top)} candidate(s); give 1..{len(top)}"
            )
    cwhere = f"{where}: top[{index - 1}]"
    c = top[index - 1]
    if not isinstance(c, Mapping):
        raise InputError(f"{cwhere}: not an object; regenerate the file with `gpurent plan`")
    chosen = _placement(c, cwhere)
    nodes = _get(c, "nodes", int, cwhere)
    if chosen.gpus_per_node < 1 or nodes < 1:
        raise InputError(f"{cwhere}: gpus_per_node and nodes must be >= 1")
    workload = _mapping(doc.get("workload"))
    wname = str(workload.get("name") or "job")
    work_given = bool(workload.get("work_given", False))
    time_s = c.get("time_s")
    spot = _mapping(c.get("spot"))
    interval = spot.get("checkpoint_interval_s") if spot else None
    gib = c.get("gpu_memory_gib")
    gpu = find_gpu(chosen.gpu_name)
    for host in options.hosts:
        if not _HOST.fullmatch(host):
            raise InputError(
                f"--hosts: {host!r} is not a host name or address (letters, digits, . : _ -)"
            )
    fallbacks = []
    for i, other in enumerate(top):
        if i == index - 1 or not isinstance(other, Mapping):
            continue
        if other.get("nodes") != nodes:  # an engine's task has one node count
            continue
        fallbacks.append(_placement(other, f"{where}: top[{i}]"))
    return DeploySpec(
        source=where,
        candidate_index=index,
        workload_name=wname,
        model=str(workload.get("model") or ""),
        provider=chosen.provider,
        instance_type=chosen.instance_type,
        region=chosen.region,
        zone=options.zone,
        gpu_name=chosen.gpu_name,
        gpu_architecture=gpu.architecture if gpu else None,
        gpu_short_name=gpu_short_name(chosen.gpu_name, gpu.aliases if gpu else ()),
        gpu_memory_gib=float(gib) if isinstance(gib, int | float) else 0.0,
        gpus_per_node=chosen.gpus_per_node,
        nodes=nodes,
        procs_per_node=options.procs_per_node or chosen.gpus_per_node,
        spot=chosen.spot,
        price_usd_per_hour=chosen.price_usd_per_hour,
        inter_node_gbps=(
            float(c["inter_node_gbps"])
            if isinstance(c.get("inter_node_gbps"), int | float)
            else None
        ),
        wall_time_s=float(time_s) if work_given and isinstance(time_s, int | float) else None,
        checkpoint_interval_s=float(interval) if isinstance(interval, int | float) else None,
        storage_gb_per_node=_storage(doc, options),
        checkpoint_dir=options.checkpoint_dir or DEFAULT_CHECKPOINT_DIR,
        command=options.command or DEFAULT_COMMAND,
        command_given=options.command is not None,
        requirements=options.requirements,
        fallbacks=tuple(fallbacks),
        hosts=options.hosts,
        name=options.name or job_name(wname),
    )
