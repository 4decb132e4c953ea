"""A plain PyTorch training loop that survives kills, preemptions and restarts (CPU, seconds).

    python examples/train_loop.py                      # run; kill it any time and rerun
    gpurent run --checkpoint-dir ckpt --heartbeat-file hb --hang-timeout 120 -- \
        python examples/train_loop.py                  # supervised: restarts are automatic

It resumes from the newest valid checkpoint in $GPURENT_CHECKPOINT_DIR (default ./ckpt), saves
asynchronously every 20 steps (and every 15 minutes), and on SIGTERM or a cloud preemption
notice finishes the in-flight save and exits cleanly.
"""

from __future__ import annotations

import os
import sys

import torch

from gpurent.runtime import CheckpointManager, capture_rng, set_rng
from gpurent.runtime.notices import SigtermWatcher, watch_notices, watchers_for

STEPS = 300


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Deterministic data per step, so a resumed run sees exactly the batches it would have."""
    gen = torch.Generator().manual_seed(step)
    x = torch.randn(64, 16, generator=gen)
    return x, x @ torch.arange(16.0).unsqueeze(1) + 0.1 * torch.randn(64, 1, generator=gen)


def main() -> int:
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS)
    live = {"model": model, "optimizer": opt, "scheduler": sched}

    mgr = CheckpointManager(os.environ.get("GPURENT_CHECKPOINT_DIR", "ckpt"), every_steps=20)
    watchers = [*watchers_for(os.environ.get("GPURENT_NOTICE", "none")), SigtermWatcher().install()]
    monitor = watch_notices(mgr, watchers, poll_s=1.0)
    heartbeat = os.environ.get("GPURENT_HEARTBEAT_FILE")

    step, last_loss = 0, float("nan")
    loaded = mgr.load_latest(into=live)
    if loaded is not None:
        step, state = loaded
        set_rng(state["rng"])
        last_loss = state["loss"]
        print(f"resumed at step {step}")
    try:
        while step < STEPS and not mgr.stop_requested:
            x, y = batch(step)
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if heartbeat:
                with open(heartbeat, "w") as fh:
                    fh.write(f"{step}\n")
            if mgr.should_save(step):
                last_loss = loss.item()  # a GPU sync: only when saving
                if mgr.stop_requested:
                    mgr.save_for_exit({**live, "rng": capture_rng(), "loss": last_loss}, step)
                else:
                    mgr.save_async({**live, "rng": capture_rng(), "loss": last_loss}, step)
        if step >= STEPS:
            if loaded is None or loaded[0] < STEPS:  # a rerun after the end has nothing new
                last_loss = loss.item()
                mgr.save({**live, "rng": capture_rng(), "loss": last_loss}, step)
            print(f"done: step {step}, loss {last_loss:.4f}")
    finally:
        monitor.stop()
        mgr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
