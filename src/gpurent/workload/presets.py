"""Presets for the guide's scenarios, with realistic amounts of work.

- resnet50-imagenet: ResNet-50 on ImageNet-1k (1,281,167 images) for 90 epochs, AMP, batch 256
  per GPU (the MLPerf/NVIDIA recipe length).
- bert-large-pretrain: BERT-large phase 1 (seq 128): 7,038 steps x 65,536 sequences in NVIDIA's
  LAMB recipe = 461 M sequences, AMP, batch 64 per GPU.
- llama-lora: Llama 3 8B LoRA (rank 16) fine-tuning on a 100 M-token budget, bf16, seq 2048,
  micro-batch 4, activation checkpointing.
- llm-inference: Llama 3 8B serving in bf16: 512-token prompts, 256 generated tokens, batch 16,
  100,000 requests.

Serving presets (`serving_preset`, for `gpurent estimate --serve`): chat traffic, prompts
uniform 128-2048 tokens and answers uniform 64-512 (a chat turn with history), vLLM, SLOs
p99 time to first token 500 ms (70B: 1 s) and 50 ms per output token:
- llama3-8b-chat: Llama 3 8B in bf16 at 20 req/s;
- llama3-70b-chat: Llama 3 70B in fp8 weights and KV cache at 10 req/s.
"""

from __future__ import annotations

from gpurent.catalog.precision import Precision
from gpurent.errors import NotFoundError
from gpurent.workload.serving import (
    KvPrecision,
    LengthDistribution,
    ServingSlo,
    ServingWorkload,
    WeightQuant,
)
from gpurent.workload.spec import Task, Workload

_PRESETS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            model="resnet50",
            task=Task.TRAINING,
            precision=Precision.AMP,
            batch_size_per_gpu=256,
            dataset_samples=1_281_167,
            epochs=90,
            name="resnet50-imagenet",
        ),
        Workload(
            model="bert-large-pretrain",
            task=Task.TRAINING,
            precision=Precision.AMP,
            batch_size_per_gpu=64,
            seq_len=128,
            dataset_samples=7038 * 65536,
            epochs=1,
            name="bert-large-pretrain",
        ),
        Workload(
            model="llama3-8b",
            task=Task.FINETUNE_LORA,
            precision=Precision.BF16,
            batch_size_per_gpu=4,
            seq_len=2048,
            token_budget=100e6,
            activation_checkpointing=True,
            lora_rank=16,
            name="llama-lora",
        ),
        Workload(
            model="llama3-8b",
            task=Task.INFERENCE,
            precision=Precision.BF16,
            batch_size_per_gpu=16,
            seq_len=512,
            output_tokens=256,
            dataset_samples=100_000,
            name="llm-inference",
        ),
    )
}


def list_presets() -> tuple[str, ...]:
    """The preset names, in the order `--list-presets` shows them."""
    return tuple(_PRESETS)


def preset(name: str) -> Workload:
    """A preset Workload by name (Workloads are frozen, so one shared object is safe);
    `NotFoundError` lists the known ones."""
    try:
        return _PRESETS[name.strip().lower()]
    except KeyError:
        raise NotFoundError("preset", name, _PRESETS) from None


_CHAT_PROMPT = LengthDistribution.uniform(128, 2048)
_CHAT_OUTPUT = LengthDistribution.uniform(64, 512)
_SERVING_PRESETS: dict[str, ServingWorkload] = {
    w.name: w
    for w in (
        ServingWorkload(
            model="llama3-8b",
            weights=WeightQuant.BF16,
            prompt=_CHAT_PROMPT,
            output=_CHAT_OUTPUT,
            request_rate_per_s=20.0,
            slo=ServingSlo(ttft_p99_ms=500.0, tpot_ms=50.0),
            name="llama3-8b-chat",
        ),
        ServingWorkload(
            model="llama3-70b",
            weights=WeightQuant.FP8,
            kv_cache=KvPrecision.FP8,
            prompt=_CHAT_PROMPT,
            output=_CHAT_OUTPUT,
            request_rate_per_s=10.0,
            slo=ServingSlo(ttft_p99_ms=1000.0, tpot_ms=50.0),
            name="llama3-70b-chat",
        ),
    )
}


def list_serving_presets() -> tuple[str, ...]:
    """Names of the bundled serving presets."""
    return tuple(_SERVING_PRESETS)


def serving_preset(name: str) -> ServingWorkload:
    """A serving preset by name; `NotFoundError` lists the closest."""
    try:
        return _SERVING_PRESETS[name.strip().lower()]
    except KeyError:
        raise NotFoundError("serving preset", name, _SERVING_PRESETS) from None
