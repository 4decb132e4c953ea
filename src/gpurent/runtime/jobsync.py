"""Whole-job restarts for multi-node `gpurent run`, through a directory every node sees.

Why files and not a TCP store on the master: the checkpoints already need storage that every
node reaches (or each node keeps its own and only the step numbers must agree), a file survives
the master's supervisor dying, and a node that comes back finds where the job stands without
anyone serving it. The directory (`--sync-dir`, default `CHECKPOINT_DIR/.gpurent-job/JOB_ID`)
holds one folder per generation, one generation per whole-job attempt:

    gen-000002/node-0.json   {"rank": 0, "step": 40, ...}  node 0's newest verified step
    gen-000002/node-1.json   {"rank": 1, "step": 30, ...}
    gen-000002/failed-1      node 1's attempt failed: every node stops and starts gen 3
    gen-000002/interrupted-0 node 0 got an interruption notice: every node stops (exit 75)
    gen-000002/gave_up-1     node 1 hit its failure limit: every node gives up
    gen-000002/done-0        node 0's job exited 0

Each node, before each attempt, writes its newest verified checkpoint step and waits until
every node has; the job then resumes from the smallest (`GPURENT_RESUME_STEP`, which
`CheckpointManager.load_latest` honours), the newest that every node can load. A node that
finds its own entry in a generation it did not finish (its supervisor was killed and started
again) marks that generation failed, so the peers still in it restart too, and joins the next.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import time
from collections.abc import Callable
from pathlib import Path

from gpurent.errors import GpurentError

ENV_RESUME_STEP = "GPURENT_RESUME_STEP"
ENV_NODE_RANK = "GPURENT_NODE_RANK"
ENV_NNODES = "GPURENT_NNODES"
ENV_GENERATION = "GPURENT_JOB_GENERATION"
MARKERS = ("failed", "interrupted", "gave_up", "done")
_GEN = re.compile(r"gen-(\d{6,})")


class PeersMissingError(GpurentError):
    """Not every node reported within the timeout."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Agreement:
    """What the nodes agreed for one generation: `steps[rank]` is each node's newest verified
    step (None: it has none), `resume_step` the smallest (None: start from scratch)."""

    generation: int
    steps: tuple[int | None, ...]

    @property
    def resume_step(self) -> int | None:
        """The step to resume from: the smallest node's newest step, None if any node has none."""
        if any(s is None for s in self.steps):
            return None
        return min(s for s in self.steps if s is not None)


@dataclasses.dataclass(frozen=True, slots=True)
class PeerEvent:
    """A peer's marker seen by this node: its kind and the peer's rank."""

    kind: str  # one of MARKERS but "done"
    rank: int


class JobSync:
    """One node's view of the sync directory."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        node_rank: int,
        nnodes: int,
        timeout_s: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = Path(directory)
        self.node_rank = node_rank
        self.nnodes = nnodes
        self.timeout_s = timeout_s
        self._clock = clock
        self._sleep = sleep
        self._wall_clock = wall_clock
        self.generation: int | None = None

    def _gen_dir(self, generation: int) -> Path:
        return self.directory / f"gen-{generation:06d}"

    def _generations(self) -> list[int]:
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        return sorted(int(m.group(1)) for n in names if (m := _GEN.fullmatch(n)))

    def _names(self, generation: int) -> set[str]:
        try:
            return set(os.listdir(self._gen_dir(generation)))
        except FileNotFoundError:
            return set()

    def _next_generation(self) -> int:
        """1 + the newest generation that ended (a marker) or that this rank was in; a
        generation this rank was in without a marker of its own is marked failed first."""
        newest = 0
        for gen in self._generations():
            names = self._names(gen)
            mine = f"node-{self.node_rank}.json" in names
            ended = any(n.split("-")[0] in {"failed", "interrupted", "gave_up"} for n in names)
            if mine and not any(f"{m}-{self.node_rank}" in names for m in MARKERS):
                self._write_marker(gen, "failed")
                ended = True
            if mine or ended:
                newest = gen
        return newest + 1

    def _write_marker(self, generation: int, kind: str) -> None:
        path = self._gen_dir(generation) / f"{kind}-{self.node_rank}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{self._wall_clock():.3f}\n", encoding="ascii")

    def mark(self, kind: str) -> None:
        """Record how this node's attempt in the current generation ended."""
        if kind not in MARKERS:
            raise ValueError(kind)
        if self.generation is not None:
            self._write_marker(self.generation, kind)

    def begin(
        self,
        own_step: int | None,
        *,
        poll_s: float = 0.5,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> Agreement | None:
        """Enter the next generation with this node's newest verified step and wait for every
        node's; None when `should_stop` said so while waiting."""
        gen = self._next_generation()
        self.generation = gen
        folder = self._gen_dir(gen)
        folder.mkdir(parents=True, exist_ok=True)
        entry = {
            "rank": self.node_rank,
            "step": own_step,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "time_unix_s": round(self._wall_clock(), 3),
        }
        tmp = folder / f".node-{self.node_rank}.json.{os.getpid()}"
        tmp.write_text(json.dumps(entry), encoding="utf-8")
        os.replace(tmp, folder / f"node-{self.node_rank}.json")
        deadline = self._clock() + self.timeout_s
        while True:
            steps = self._steps(gen)
            if steps is not None:
                return Agreement(generation=gen, steps=steps)
            if should_stop():
                return None
            names = self._names(gen)
            missing = [r for r in range(self.nnodes) if f"node-{r}.json" not in names]
            before = self._names(gen - 1) if gen > 1 else set()
            finished = [r for r in missing if f"done-{r}" in before]
            if finished:
                raise PeersMissingError(
                    f"node(s) {finished} finished the job in generation {gen - 1} and will "
                    "not join a restart; the job's ranks ended differently, check its log"
                )
            if self._clock() >= deadline:
                raise PeersMissingError(
                    f"node(s) {missing} did not join generation {gen} in {folder} within "
                    f"{self.timeout_s:g} s; start gpurent run on every node (same --sync-dir)"
                )
            self._sleep(poll_s)

    def _steps(self, gen: int) -> tuple[int | None, ...] | None:
        steps: list[int | None] = []
        for rank in range(self.nnodes):
            path = self._gen_dir(gen) / f"node-{rank}.json"
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                return None
            except (OSError, ValueError):
                return None  # being replaced; read again on the next poll
            step = data.get("step") if isinstance(data, dict) else None
            steps.append(step if isinstance(step, int) and step >= 0 else None)
        return tuple(steps)

    def peer_event(self) -> PeerEvent | None:
        """The first failure, interruption or give-up another node recorded in the current
        generation (give-ups first, then interruptions, then failures)."""
        if self.generation is None:
            return None
        names = self._names(self.generation)
        for kind in ("gave_up", "interrupted", "failed"):
            for name in sorted(names):
                head, _, rank = name.partition("-")
                if head == kind and rank.isdigit() and int(rank) != self.node_rank:
                    return PeerEvent(kind=kind, rank=int(rank))
        return None


__all__ = [
    "ENV_GENERATION",
    "ENV_NNODES",
    "ENV_NODE_RANK",
    "ENV_RESUME_STEP",
    "Agreement",
    "JobSync",
    "PeerEvent",
    "PeersMissingError",
]
