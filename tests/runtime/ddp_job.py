"""A tiny data-parallel torch job for the multi-node tests (gloo, CPU, one process per node).

Each rank trains the same linear model on its own deterministic batches; gradients are
all-reduced (sum, then divided by the world size), SGD with momentum steps, and every rank
saves its own checkpoint (model and optimizer) every 2 steps into $GPURENT_CHECKPOINT_DIR
(a rank-R folder in it when a node runs several ranks) through the project's
CheckpointManager, which honours the step the nodes agreed on. At the end
each rank writes its parameters and where it resumed from to $JOB_RESULT_DIR/rank-R.json.

$JOB_STALL_AT=S: in generation 1, rank 1 writes $JOB_RESULT_DIR/stalled and sleeps before
saving step S (rank 0 has saved it), so that the test can kill that node mid-step.
`reference(steps)` is the same training in one process, without torch.distributed.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch

WORLD = 2
LR = 0.05


def _batch(step: int, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(8, 4, generator=gen)
    return x, x.sum(dim=1, keepdim=True) * 0.5 + 1.0


def _model() -> tuple[torch.nn.Linear, torch.optim.SGD]:
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    return model, torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)


def _grads(model: torch.nn.Linear, step: int, rank: int) -> list[torch.Tensor]:
    model.zero_grad()
    x, y = _batch(step, rank)
    ((model(x) - y) ** 2).mean().backward()
    return [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]


def _params(model: torch.nn.Linear) -> list[list[float]]:
    return [p.detach().flatten().tolist() for p in model.parameters()]


def reference(steps: int) -> list[list[float]]:
    """The uninterrupted training, in one process: the same sums in the same order."""
    model, opt = _model()
    for step in range(1, steps + 1):
        per_rank = [_grads(model, step, rank) for rank in range(WORLD)]
        for p, g0, g1 in zip(model.parameters(), *per_rank, strict=True):
            p.grad = (g0 + g1) / WORLD
        opt.step()
    return _params(model)


def main() -> int:
    import torch.distributed as dist

    from gpurent.runtime import CheckpointManager

    steps = int(sys.argv[1])
    out = Path(os.environ["JOB_RESULT_DIR"])
    stall_at = int(os.environ.get("JOB_STALL_AT", "0"))
    # a dead peer must fail the collective within seconds, not gloo's default 30 minutes
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
    rank = dist.get_rank()
    model, opt = _model()
    live: dict[str, Any] = {"model": model, "opt": opt}
    ckpt = Path(os.environ["GPURENT_CHECKPOINT_DIR"])
    if int(os.environ.get("LOCAL_WORLD_SIZE", "1")) > 1:  # several ranks on this node
        ckpt = ckpt / f"rank-{rank}"
    mgr = CheckpointManager(ckpt, every_steps=2, interval=None)
    loaded = mgr.load_latest(into=live)
    step = loaded[0] if loaded else 0
    resumed = step
    generation = os.environ.get("GPURENT_JOB_GENERATION", "")
    while step < steps:
        step += 1
        for p in model.parameters():
            p.grad = None
        grads = _grads(model, step, rank)
        for p, g in zip(model.parameters(), grads, strict=True):
            dist.all_reduce(g, op=dist.ReduceOp.SUM)
            p.grad = g / WORLD
        opt.step()
        if mgr.should_save(step):
            if stall_at == step and rank == 1 and generation == "1":
                (out / "stalled").write_text(f"{step}\n")
                time.sleep(120)  # the test kills this node here
            mgr.save(live, step)
    record = {"rank": rank, "params": _params(model), "resumed_from": resumed, "gen": generation}
    (out / f"rank-{rank}.json").write_text(json.dumps(record))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
