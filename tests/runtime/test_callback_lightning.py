"""The Lightning callback: a tiny real LightningModule on CPU, stopped by a notice, resumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pl = pytest.importorskip(
    "lightning.pytorch", reason="the integrations extra (lightning) is not installed"
)

from gpurent.runtime import CheckpointManager  # noqa: E402
from gpurent.runtime.callbacks.lightning import GpurentCheckpoint  # noqa: E402

pytestmark = [
    # Lightning's own advice on a 2-core CPU run with an in-process dataloader.
    pytest.mark.filterwarnings("ignore:The 'train_dataloader' does not have many workers"),
    pytest.mark.filterwarnings("ignore:GPU available but not used"),
    # Lightning 2.6 vs torch 2.13: its pytree helper uses the deprecated LeafSpec.
    pytest.mark.filterwarnings(
        "ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated:FutureWarning"
    ),
]

BATCHES_PER_EPOCH = 4


class TinyModule(pl.LightningModule):
    """Linear -> dropout -> linear, AdamW and a StepLR stepped every step."""

    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(8, 16), torch.nn.Dropout(0.2), torch.nn.Linear(16, 1)
        )

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self) -> Any:
        opt = torch.optim.AdamW(self.parameters(), lr=0.05)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.7)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def _loader() -> Any:
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(4 * BATCHES_PER_EPOCH, 8, generator=gen)
    data = torch.utils.data.TensorDataset(x, x.sum(dim=1, keepdim=True))
    return torch.utils.data.DataLoader(data, batch_size=4, shuffle=True)


class StopAt(pl.Callback):
    """Plays the interruption notice: asks the manager to stop after `step` steps."""

    def __init__(self, manager: CheckpointManager, step: int) -> None:
        self.manager, self.step = manager, step

    def on_train_batch_start(self, trainer: Any, *args: Any) -> None:
        if trainer.global_step == self.step:
            self.manager.request_stop("test notice")


def _fit(callbacks: list[Any], max_steps: int) -> tuple[Any, Any]:
    torch.manual_seed(0)
    module = TinyModule()
    trainer = pl.Trainer(
        max_steps=max_steps,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=callbacks,
    )
    trainer.fit(module, train_dataloaders=_loader())
    return trainer, module


def _same_weights(a: Any, b: Any) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("async_save", [False, True])
def test_stopped_at_epoch_end_and_resumed_matches_an_uninterrupted_fit(
    tmp_path: Path, async_save: bool
) -> None:
    _, reference = _fit([], max_steps=12)

    mgr = CheckpointManager(tmp_path, interval=None, every_steps=3)
    cb = GpurentCheckpoint(mgr, async_save=async_save)
    trainer, _ = _fit([cb, StopAt(mgr, 2 * BATCHES_PER_EPOCH - 1)], max_steps=12)
    assert cb.stop_reason == "test notice"
    assert trainer.global_step == 2 * BATCHES_PER_EPOCH
    assert [c.step for c in mgr.committed()] == [8, 6, 3]

    resumed_cb = GpurentCheckpoint(tmp_path, interval=None, every_steps=3)
    trainer, resumed = _fit([resumed_cb], max_steps=12)
    assert resumed_cb.resumed_step == 8
    assert trainer.global_step == 12
    assert trainer.current_epoch == 3
    assert _same_weights(resumed, reference)
    assert resumed_cb.manager.committed()[0].step == 12  # the save at train end
