"""A small, deterministic fake estimator and offer factory for planner unit tests.

The fake follows the real contract (`Estimate`) with simple, monotone physics: memory per GPU
shrinks with sharding / tensor / pipeline parallelism and recomputation, throughput grows with
GPUs and peak TFLOP/s, and nodes cost some scaling efficiency.
"""

from __future__ import annotations

from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.offer import Offer
from gpurent.estimate.result import Bottleneck, Estimate, MemoryBreakdown
from gpurent.units import BYTES_PER_GIB
from gpurent.workload.spec import LlmShape, Sharding, Task, Workload

CALLS: list[tuple[str, int, int]] = []


def params(workload: Workload) -> float:
    shape = workload.shape
    assert shape is not None
    return 12.0 * shape.layers * shape.hidden**2


def llm(params_b: float, *, task: Task = Task.TRAINING, tokens: float | None = 1e9) -> Workload:
    """A custom LLM of about `params_b` billion parameters."""
    hidden = 4096
    layers = max(1, round(params_b * 1e9 / (12 * hidden**2)))
    return Workload(
        model="custom",
        task=task,
        shape=LlmShape(layers=layers, hidden=hidden, heads=32, vocab=32000),
        batch_size_per_gpu=8,
        seq_len=2048,
        token_budget=tokens,
        name=f"llm-{params_b:g}b",
    )


def _fake_estimate(
    workload: Workload, gpu: GpuSpec, num_gpus: int, nodes: int, inter_node_gbps: float | None
) -> Estimate:
    CALLS.append((gpu.name, num_gpus, nodes))
    p = params(workload)
    tp, pp = workload.tensor_parallel, workload.pipeline_parallel
    dp = num_gpus // (tp * pp)
    split = tp * pp
    gib = 1.0 / BYTES_PER_GIB
    weights = 2 * p / split * gib
    if workload.task.trains:
        grads = 2 * p / split * gib
        opt = 12 * p / split * gib
        if workload.sharding in (Sharding.ZERO1, Sharding.ZERO2, Sharding.ZERO3):
            opt /= dp
        if workload.sharding in (Sharding.ZERO2, Sharding.ZERO3):
            grads /= dp
        if workload.sharding is Sharding.ZERO3:
            weights /= dp
        acts = workload.batch_size_per_gpu * 0.5 / tp
        if workload.activation_checkpointing:
            acts /= 5
        kv = 0.0
    else:
        grads = opt = acts = 0.0
        kv = workload.batch_size_per_gpu * 0.25 / tp
    memory = MemoryBreakdown(
        weights_gib=weights,
        gradients_gib=grads,
        optimizer_gib=opt,
        activations_gib=acts,
        kv_cache_gib=kv,
        overhead_gib=1.0,
        capacity_gib=gpu.memory_gib,
    )
    efficiency = 1.0 if nodes == 1 else 0.85 * min(1.0, (inter_node_gbps or 25) / 400) ** 0.05
    flops_per_token = (6 if workload.task.trains else 2) * p
    tokens_per_s = num_gpus * gpu.fp16_tflops * 1e12 * 0.4 / flops_per_token * efficiency
    step_s = workload.batch_size_per_gpu * (workload.seq_len or 1) * num_gpus / tokens_per_s
    ttf = workload.token_budget / tokens_per_s if workload.token_budget else None
    return Estimate(
        model=workload.model,
        gpu=gpu.name,
        num_gpus=num_gpus,
        nodes=nodes,
        precision=workload.precision.value,
        batch_size_per_gpu=workload.batch_size_per_gpu,
        seq_len=workload.seq_len,
        throughput=tokens_per_s,
        throughput_unit="tokens/s",
        samples_per_s=tokens_per_s / (workload.seq_len or 1),
        step_time_s=step_s,
        compute_time_s=step_s,
        memory_time_s=0.0,
        communication_time_s=0.0,
        scaling_efficiency=efficiency,
        memory=memory,
        bottleneck=Bottleneck.COMPUTE if memory.fits else Bottleneck.MEMORY_CAPACITY,
        mfu=0.4,
        time_to_finish_s=ttf,
        basis="roofline",
    )


class FakeEstimator:
    """The planner's estimator seam with the fake physics above; GPU specs from the catalog."""

    def __call__(
        self,
        workload: Workload,
        gpu: GpuSpec,
        num_gpus: int,
        nodes: int,
        inter_node_gbps: float | None,
    ) -> Estimate:
        return _fake_estimate(workload, gpu, num_gpus, nodes, inter_node_gbps)

    def find_gpu(self, name: str) -> GpuSpec | None:
        from gpurent.catalog import find_gpu

        return find_gpu(name)


fake_estimate = FakeEstimator()


def offer(
    gpu: str = "H100",
    count: int = 8,
    price: float | None = 30.0,
    *,
    spot: float | None = None,
    provider: str = "aws",
    region: str = "us-east-1",
    instance: str | None = None,
    network_gbps: float | None = None,
    memory_gib: float | None = None,
) -> Offer:
    from gpurent.catalog import get_gpu

    spec = get_gpu(gpu)
    return Offer(
        provider=provider,
        instance_type=instance or f"{spec.name.lower()}-x{count}",
        region=region,
        gpu_name=spec.name,
        gpu_count=count,
        gpu_memory_gib=memory_gib or spec.memory_gib,
        vcpus=None,
        memory_gib=None,
        price_usd_per_hour=price,
        spot_price_usd_per_hour=spot,
        network_gbps=network_gbps,
        gpu_interconnect=spec.interconnect if count > 1 else None,
        billing_granularity_s=1 if provider in ("aws", "gcp") else 60,
        as_of="2026-06",
    )
