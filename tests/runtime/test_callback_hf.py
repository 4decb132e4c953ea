"""The Hugging Face Trainer callback: a 1-layer GPT-2 built from a config on CPU (no download),
stopped by a notice, resumed, compared with an uninterrupted run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip(
    "transformers", reason="the integrations extra (transformers) is not installed"
)
pytest.importorskip("accelerate", reason="the integrations extra (accelerate) is not installed")

from gpurent.runtime import CheckpointManager  # noqa: E402
from gpurent.runtime.callbacks.hf import GpurentTrainerCallback  # noqa: E402

MAX_STEPS = 6


class OneSample(torch.utils.data.Dataset):  # type: ignore[type-arg]
    """One fixed 16-token sequence: every step sees the same batch, so runs compare exactly."""

    def __init__(self) -> None:
        gen = torch.Generator().manual_seed(3)
        self.ids = torch.randint(0, 64, (16,), generator=gen)

    def __len__(self) -> int:
        return 1

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"input_ids": self.ids, "labels": self.ids}


class StopAt(transformers.TrainerCallback):  # type: ignore[misc]
    """Plays the interruption notice after `step` steps."""

    def __init__(self, manager: CheckpointManager, step: int) -> None:
        self.manager, self.step = manager, step

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == self.step - 1:
            self.manager.request_stop("test notice")


def _train(tmp_path: Path, callbacks: list[Any]) -> tuple[Any, Any]:
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=64, n_positions=32)
    model = transformers.GPT2LMHeadModel(config)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "hf-out"),
        max_steps=MAX_STEPS,
        per_device_train_batch_size=1,
        learning_rate=1e-2,
        lr_scheduler_type="linear",
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        logging_strategy="no",
        disable_tqdm=True,
    )
    trainer = transformers.Trainer(
        model=model, args=args, train_dataset=OneSample(), callbacks=callbacks
    )
    trainer.train()
    return trainer, model


def test_stopped_midway_and_resumed_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    _, reference = _train(tmp_path, [])

    mgr = CheckpointManager(tmp_path / "ckpt", interval=None, every_steps=2)
    cb = GpurentTrainerCallback(mgr)
    trainer, _ = _train(tmp_path, [cb, StopAt(mgr, 3)])
    assert cb.stop_reason == "test notice"
    assert trainer.state.global_step == 3
    assert [c.step for c in mgr.committed()] == [3, 2]

    resumed_cb = GpurentTrainerCallback(tmp_path / "ckpt", interval=None, every_steps=2)
    trainer, resumed = _train(tmp_path, [resumed_cb])
    assert resumed_cb.resumed_step == 3
    assert trainer.state.global_step == MAX_STEPS
    a, b = resumed.state_dict(), reference.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert resumed_cb.manager.committed()[0].step == MAX_STEPS
