"""`estimate()`: how fast, how big and how costly one workload is on N GPUs of one kind.

`Estimator` is the estimator as one object (fitted constants, user calibration, GPU specs, its
own memo); `estimate()` is a one-shot convenience on the bundled constants and GPU table. Pure:
takes the workload, the GPU spec and the layout; returns a frozen `Estimate`. No I/O, no
module-level state (the edge builds the object: `gpurent.estimate.calibration_file.load_estimator`).
See docs/estimator.md for the method and its measured accuracy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.links import Interconnect, parse_estimated_link
from gpurent.catalog.precision import Precision
from gpurent.errors import DataError, InputError
from gpurent.estimate.attention import (
    FLASH_ATTENTION_ARCHITECTURES,
    attention_note,
    kernel_interval,
    kernel_peak_share,
    resolved_kernel,
)
from gpurent.estimate.constants import CommCoeffs, Constants, StackCoeffs, load_constants
from gpurent.estimate.efficiency import efficiency_note, realized_efficiency
from gpurent.estimate.measured import Calibration, best_match
from gpurent.estimate.memory import (
    DEFAULT_OUTPUT_TOKENS,
    data_parallel_degree,
    expert_parallel_share,
    fp8_frozen_base,
    frozen_base_bytes_per_param,
    lora_params,
    memory_breakdown,
    min_gpus_for_model_state,
    sharded_state_share,
    weights_bytes_for_inference,
    zero_shard_degree,
)
from gpurent.estimate.offload import (
    HOST_DRAM_BYTES_PER_S,
    OffloadTime,
    cpu_offload_time,
    host_interval,
)
from gpurent.estimate.perf import (
    NCCL_BASE_LATENCY_S,
    bandwidth_bps,
    bytes_per_value,
    ddp_allreduce_time_s,
    family_features,
    group_collective_time_s,
    in_scale_up_domain,
    intra_node_link,
    llm_training_features,
    network_link,
    peak_flops,
    spans_nodes_domain,
    tp_allreduce_time_s,
)
from gpurent.estimate.precisions import (
    FP8_GEMM_REALIZATION,
    Recipe,
    check_precision,
    llm_training_gemm_gain,
    low_float_gemm_gain,
    recipe_of,
)
from gpurent.estimate.result import Basis, Bottleneck, Estimate, MemoryBreakdown
from gpurent.estimate.uncertainty import (
    COVERAGE,
    WIDEN,
    Interval,
    IntervalTable,
    interval_for,
    load_intervals,
    widened_interval,
)
from gpurent.workload.models import custom_llm, get_model
from gpurent.workload.spec import LlmShape, Recompute, Sharding, Stack, Task, Workload
from gpurent.workload.zoo import (
    ModelInfo,
    llm_active_params,
    llm_attended_keys,
    llm_attention_width,
    llm_expert_params,
    llm_flops_per_token,
    llm_kv_cache_values,
    llm_matmul_params,
    llm_params,
)

LLM_COMM_OVERLAP = 0.9  # FSDP prefetch hides most gathers behind compute (MosaicML, torchtitan)
LLM_REFERENCE_GPU = "A100-SXM4-80GB"  # where the MosaicML LLM runs were measured
LLM_STACK = "MosaicML llm-foundry (FSDP, FlashAttention)"
TRANSFER_MODEL = "bert-large-squad"  # the transformer the Lambda cross-GPU fit knows best
TRANSFER_BATCH = 32


def transformer_speed_ratio(
    gpu: GpuSpec, precision: Precision, k: Constants, reference: GpuSpec
) -> float:
    """How much slower than the LLM reference GPU (`reference`, the A100-SXM4-80GB the MosaicML
    runs were measured on) a transformer trains on `gpu`, from the cross-GPU fit of BERT-large
    (10 GPUs, Volta to Ada): t(gpu) / t(reference).

    MosaicML's runs fix the LLM model's level on the A100 only; this ratio carries it to other
    GPUs with the method that was cross-validated across generations. It is why predicted MFU
    drops on GPUs whose FLOPs grew faster than their bandwidth (RESEARCH §2). Pure and uncached:
    an `Estimator` memoises it per (GPU spec, precision) for its own constants."""
    model = get_model(TRANSFER_MODEL)
    coeffs = k.family(model.key, precision.is_half)

    def step(g: GpuSpec) -> float:
        xc, xm, xv, xs = family_features(
            model,
            g,
            coeffs.feature_precision(precision),
            TRANSFER_BATCH,
            None,
            peak_exponent=k.peak_exponent,
            bandwidth_exponent=k.bandwidth_exponent,
            sm_cap_bytes_per_cycle=k.sm_cap_bytes_per_cycle,
            cuda_flops_per_sm_cycle=k.cuda_flops_per_sm_cycle,
        )
        return (
            roofline_s(coeffs.a * xc + coeffs.d * xv, coeffs.b * xm + coeffs.e * xs, k.roofline_p)
            + coeffs.c_s
            + coeffs.c_sample_s * TRANSFER_BATCH
        )

    return step(gpu) / step(reference)


def attention_speed_ratio(
    gpu: GpuSpec, reference: GpuSpec, precision: Precision, transfer_ratio: float
) -> float:
    """t(gpu) / t(reference) of the attention kernels of decoder-LLM training.

    Between two GPUs of `FLASH_ATTENTION_ARCHITECTURES` it is their tensor-peak ratio: the
    fused attention kernel of each generation realizes about the same share of its GPU's
    peak. FlashAttention-2 on an A100 runs causal attention at about half the 312 TFLOP/s peak
    (156-159 TFLOP/s at seq 4096: liangan1/GPU_travel `performance/flash-attn/README.md`);
    FlashAttention-3 on an H100 reaches up to 75 % of its peak in fp16 (PyTorch blog
    "FlashAttention-3", pytorch/pytorch.github.io `_posts/2024-07-11-flashattention-3.md`),
    where FlashAttention-2 reached 35 %. Blackwell is assumed to be like Hopper: no public
    figure was read. Any other GPU (Volta, Turing, AMD) keeps the BERT-large
    `transfer_ratio`, as before."""
    if (
        gpu.architecture in FLASH_ATTENTION_ARCHITECTURES
        and reference.architecture in FLASH_ATTENTION_ARCHITECTURES
    ):
        return peak_flops(reference, precision) / peak_flops(gpu, precision)
    return transfer_ratio


def _llm_attention_s(
    workload: Workload,
    gpu: GpuSpec,
    reference: GpuSpec,
    precision: Precision,
    *,
    x_attn: float,
    a_attn: float,
    ratio: float,
) -> float:
    """Decoder-LLM training's attention time per micro-batch, s: the kernel's share of this
    GPU's peak (`attention.kernel_peak_share`), or for the `fitted` kernel (and GPUs with no
    kernel share) the fitted a_attn moved by `attention_speed_ratio`."""
    kernel = resolved_kernel(workload.attention_kernel, gpu.architecture)
    share = kernel_peak_share(kernel, gpu.architecture)
    if share is None:
        return a_attn * x_attn * attention_speed_ratio(gpu, reference, precision, ratio)
    return x_attn * peak_flops(reference, precision) / peak_flops(gpu, precision) / share


def roofline_s(compute_s: float, memory_s: float, p: float) -> float:
    """Compute and memory time of one step combined as a p-norm, (t_c^p + t_m^p)^(1/p), s.

    p = 1 is the sum (kernels strictly alternate between compute and memory bound), p -> inf
    the max (each kernel overlaps both); p is fitted on the reference data."""
    if p == 1.0:
        return compute_s + memory_s
    hi = max(compute_s, memory_s)
    if hi <= 0.0:
        return 0.0
    lo = min(compute_s, memory_s)
    return hi * float((1.0 + (lo / hi) ** p) ** (1.0 / p))


def resolve_model(workload: Workload) -> ModelInfo:
    """The zoo entry for the workload (a custom LLM when it gives a shape)."""
    if workload.shape is not None:
        return custom_llm(workload.shape, name=workload.model or "custom")
    return get_model(workload.model)


_CHANGE_LAYOUT = (
    "(--tp/--pp/--cp, or tensor_parallel/pipeline_parallel/context_parallel in the workload file)"
)


def _validate_experts(workload: Workload, model: ModelInfo, dp_cp_ranks: int) -> None:
    """Expert parallelism: a MoE model, `ep` dividing its experts and the data-parallel x
    context-parallel ranks it is drawn from; else one line naming the numbers."""
    ep = workload.expert_parallel
    if ep == 1:
        return
    shape = model.llm
    if ep < 1:
        raise InputError(f"expert parallel must be >= 1, got ep {ep}")
    if shape is None or not shape.is_moe:
        raise InputError(
            f"expert parallel {ep} needs a mixture-of-experts model and {model.name} is dense: "
            "drop --ep (expert_parallel in the workload file)"
        )
    if shape.experts % ep:
        raise InputError(
            f"expert parallel {ep} does not divide {model.name}'s {shape.experts} experts: "
            f"use a divisor of {shape.experts} (--ep)"
        )
    if dp_cp_ranks % ep:
        raise InputError(
            f"expert parallel {ep} does not divide the {dp_cp_ranks} data-parallel x "
            f"context-parallel ranks (GPUs / (tensor x pipeline parallel)): use a divisor of "
            f"{dp_cp_ranks} (--ep)"
        )


def _validate_layout(
    workload: Workload, model: ModelInfo, num_gpus: int, nodes: int, gpu: GpuSpec
) -> None:
    """GPUs split evenly over the nodes, tensor x context x pipeline parallel divides the GPUs,
    tensor parallelism stays inside a node (it is priced on the node's own link) or inside an
    NVL72 scale-up domain, and divides the attention heads, no pipeline stage is empty, virtual
    stages need a pipeline and leave no chunk empty, sequence parallelism needs tensor parallelism,
    context parallelism divides the sequence: else one line naming the numbers."""
    tp, pp, cp = workload.tensor_parallel, workload.pipeline_parallel, workload.context_parallel
    vp = workload.virtual_pipeline_stages
    if min(tp, pp, cp, vp) < 1:
        raise InputError(
            f"tensor, pipeline and context parallel and virtual pipeline stages must be >= 1, "
            f"got tp {tp}, pp {pp}, cp {cp}, vp {vp}"
        )
    if num_gpus % nodes:
        raise InputError(
            f"{num_gpus} GPUs do not split evenly over {nodes} nodes: give a GPU count that is "
            f"a multiple of {nodes} (--gpus), or another number of nodes (--nodes)"
        )
    mp = tp * cp * pp
    if num_gpus % mp:
        names, nums = ("tensor x pipeline", f"{tp} x {pp}")
        if cp > 1:
            names, nums = ("tensor x context x pipeline", f"{tp} x {cp} x {pp}")
        raise InputError(
            f"{num_gpus} GPUs are not a multiple of {names} parallel = {nums} = {mp}: use a "
            f"multiple of {mp} GPUs or another layout {_CHANGE_LAYOUT}"
        )
    _validate_experts(workload, model, num_gpus // mp)
    per_node = num_gpus // nodes
    domain = spans_nodes_domain(gpu)
    in_domain = tp > per_node and tp % per_node == 0 and tp <= domain
    if per_node % tp and not in_domain:
        raise InputError(
            f"tensor parallel {tp} does not divide the {per_node} GPUs per node ({num_gpus} GPUs "
            f"over {nodes} nodes): tensor parallelism runs inside a node (or an NVL72 domain); "
            f"use a divisor of {per_node} and pipeline parallel across nodes {_CHANGE_LAYOUT}"
        )
    if vp > 1 and pp == 1:
        raise InputError(
            f"virtual pipeline stages {vp} need pipeline parallel > 1 (pp is 1): set --pp, or "
            "drop --vp (virtual_pipeline_stages in the workload file)"
        )
    ga = workload.gradient_accumulation
    if vp > 1 and ga % pp:
        raise InputError(
            f"the interleaved schedule ({vp} virtual stages) needs micro-batches per step "
            f"(gradient accumulation {ga}) to be a multiple of pipeline parallel {pp}, as "
            f"Megatron-LM requires: use --grad-accum {pp * max(1, -(-ga // pp))} or --vp 1"
        )
    if workload.offload_params is not None and not workload.cpu_offload:
        raise InputError(
            "offload_params says what CPU offload moves to the host, but cpu_offload is off: "
            "set --cpu-offload (cpu_offload in the workload file) or drop --offload-params"
        )
    if workload.offload_params and not workload.sharding.shards_weights:
        raise InputError(
            f"offload_params needs weight sharding (zero3, fsdp or hsdp), the sharding is "
            f"{workload.sharding.value}: weights that every GPU holds whole are not offloaded"
        )
    if workload.sequence_parallel and tp == 1:
        raise InputError(
            "sequence parallel needs tensor parallel > 1 (tp is 1): set --tp, or drop "
            "--sequence-parallel (sequence_parallel in the workload file)"
        )
    if cp > 1 and (model.llm is None or workload.task is Task.INFERENCE):
        raise InputError(
            f"context parallel {cp} is modelled for decoder-LLM training only ({model.name}, "
            f"{workload.task.value}): use --cp 1"
        )
    if model.llm is None:
        return
    if model.llm.heads % tp:
        raise InputError(
            f"tensor parallel {tp} does not divide {model.name}'s {model.llm.heads} attention "
            f"heads: use a divisor of {model.llm.heads} {_CHANGE_LAYOUT}"
        )
    if pp > model.llm.layers:
        raise InputError(
            f"pipeline parallel {pp} exceeds {model.name}'s {model.llm.layers} layers (a stage "
            f"would hold none): use at most {model.llm.layers} stages {_CHANGE_LAYOUT}"
        )
    # uneven chunks are fine (Megatron-LM's --pipeline-model-parallel-layout: NVIDIA's MLPerf
    # v6.0 DeepSeek-V3 recipe splits 61 layers into 16 chunks of 4 and 1), empty ones are not
    if vp > 1 and pp * vp > model.llm.layers:
        raise InputError(
            f"{model.name}'s {model.llm.layers} layers cannot fill pipeline x virtual stages "
            f"= {pp} x {vp} = {pp * vp} chunks (a chunk would hold no layer): use a vp of at "
            f"most {model.llm.layers // pp} (--vp, virtual_pipeline_stages)"
        )


def _validate(
    workload: Workload, model: ModelInfo, num_gpus: int, nodes: int, gpu: GpuSpec
) -> int | None:
    if num_gpus < 1:
        raise InputError(f"num_gpus must be >= 1, got {num_gpus}")
    if nodes < 1 or nodes > num_gpus:
        raise InputError(f"nodes must be between 1 and num_gpus ({num_gpus}), got {nodes}")
    if workload.batch_size_per_gpu < 1:
        raise InputError(f"batch size per GPU must be >= 1, got {workload.batch_size_per_gpu}")
    _validate_layout(workload, model, num_gpus, nodes, gpu)
    if workload.gradient_accumulation < 1:
        raise InputError("gradient_accumulation must be >= 1")
    seq = workload.seq_len if workload.seq_len is not None else model.default_seq_len
    if seq is not None and seq < 1:
        raise InputError(f"seq_len must be >= 1, got {seq}")
    cp = workload.context_parallel
    if cp > 1 and seq is not None and seq % cp:
        raise InputError(
            f"context parallel {cp} does not divide the sequence length {seq}: use a seq_len "
            f"that is a multiple of {cp} or another --cp"
        )
    if workload.seq_len is not None and not model.uses_seq_len:
        seq = None  # fixed-shape models ignore a sequence length
    return seq


def estimate(
    workload: Workload,
    gpu: GpuSpec,
    num_gpus: int = 1,
    *,
    nodes: int = 1,
    inter_node_gbps: float | None = None,
    intra_node_interconnect: Interconnect | None = None,
    measurements: Calibration | None = None,
    constants: Constants | None = None,
) -> Estimate:
    """One-shot convenience: `bundled_estimator(measurements, constants).estimate(...)`.

    Estimate `workload` on `num_gpus` GPUs `gpu` spread over `nodes` nodes. `inter_node_gbps` is
    the network bandwidth per node in Gbit/s (default from the constants, 100 Gbit/s);
    `intra_node_interconnect` (`Interconnect.NVLINK` or `.PCIE`) overrides the spec's link.
    `measurements` are user calibration rows: a matching one anchors the estimate ("measured").

    Each call builds a fresh `Estimator` (no state survives the call); code that asks for many
    estimates builds one `Estimator` and reuses it (its memo, one constants parse)."""
    return bundled_estimator(measurements, constants).estimate(
        workload,
        gpu,
        num_gpus,
        nodes=nodes,
        inter_node_gbps=inter_node_gbps,
        intra_node_interconnect=intra_node_interconnect,
    )


def bundled_estimator(
    calibration: Calibration | None = None, constants: Constants | None = None
) -> Estimator:
    """An `Estimator` on the bundled GPU table and (unless given) the bundled constants."""
    from gpurent.catalog.specs import all_gpus

    return Estimator(
        constants=constants if constants is not None else load_constants(),
        gpus=all_gpus(),
        calibration=calibration,
    )


_EstimateKey = tuple[Workload, GpuSpec, int, int, float | None, str | None]
_Sized = tuple[ModelInfo, int | None, MemoryBreakdown]  # what `_sized` returns


class Estimator:
    """The estimator as one object: the fitted constants, the user's calibration rows, the GPU
    specs it knows and its own memo of estimates.

    Build it once at the edge (`gpurent.estimate.calibration_file.load_estimator` reads the bundled
    constants, the bundled GPU table and the user's calibration) and hand the same object to
    everything that needs figures: `gpurent estimate`, the planner (it is the planner's
    `EstimatorFn`), bench verdicts. Nothing here reads files, the environment or a module-level
    cache: two Estimators with different calibrations never share a figure.

    Estimates are pure functions of their arguments and this object's state, so `estimate`
    memoises them (at most `max_cached`; the memo is cleared when full), as it does the
    per-GPU transformer speed ratio. Not thread-safe."""

    __slots__ = (
        "_by_name",
        "_calibration",
        "_constants",
        "_estimates",
        "_gpus",
        "_interval_memo",
        "_intervals",
        "_last_sized",
        "_max_cached",
        "_ratios",
        "_reference",
    )

    def __init__(
        self,
        *,
        constants: Constants,
        gpus: Iterable[GpuSpec],
        calibration: Calibration | None = None,
        max_cached: int = 65536,
        intervals: IntervalTable | None = None,
    ) -> None:
        """`max_cached` bounds the memo of estimates (0: no memo, each call computes afresh);
        `intervals`: the cross-validated error table (default: the bundled one)."""
        self._constants = constants
        self._intervals = intervals if intervals is not None else load_intervals()
        self._calibration = calibration if calibration is not None else Calibration(())
        self._gpus = tuple(gpus)
        self._by_name: dict[str, GpuSpec] | None = None  # built on the first `find_gpu`
        reference = next((g for g in self._gpus if g.name == LLM_REFERENCE_GPU), None)
        if reference is None:
            raise DataError(
                f"the estimator's GPU table lacks {LLM_REFERENCE_GPU}, the GPU its LLM "
                "constants were measured on; build it on the bundled table (catalog.all_gpus())"
            )
        self._reference = reference
        self._max_cached = max_cached
        self._estimates: dict[_EstimateKey, Estimate] = {}
        self._ratios: dict[tuple[GpuSpec, Precision], float] = {}
        # `base_interval` by its inputs (a handful of classes; looked up on every estimate)
        self._interval_memo: dict[tuple[str, str, bool, str, bool, bool], Interval] = {}
        # the last `sized` call: the planner's `memory_fits` then `estimate` of one layout
        self._last_sized: tuple[Workload, GpuSpec, int, int, _Sized] | None = None

    @property
    def constants(self) -> Constants:
        """The fitted model coefficients this estimator uses."""
        return self._constants

    @property
    def calibration(self) -> Calibration:
        """The user calibration (measured throughputs) this estimator applies."""
        return self._calibration

    @property
    def intervals(self) -> IntervalTable:
        """The table of prediction intervals this estimator attaches to each estimate."""
        return self._intervals

    def base_interval(
        self,
        *,
        basis: str,
        efficiency_basis: str,
        num_gpus: int,
        model_family: str,
        trains: bool,
        exact_measurement: bool,
    ) -> Interval:
        """`uncertainty.interval_for` on this estimator's table, memoised by its inputs."""
        key = (basis, efficiency_basis, num_gpus == 1, model_family, trains, exact_measurement)
        hit = self._interval_memo.get(key)
        if hit is None:
            hit = interval_for(
                self._intervals,
                basis=basis,
                efficiency_basis=efficiency_basis,
                num_gpus=num_gpus,
                model_family=model_family,
                trains=trains,
                exact_measurement=exact_measurement,
            )
            self._interval_memo[key] = hit
        return hit

    @property
    def gpus(self) -> tuple[GpuSpec, ...]:
        """Every GPU spec this estimator knows, in table order."""
        return self._gpus

    @property
    def reference_gpu(self) -> GpuSpec:
        """The GPU the LLM constants were measured on (`LLM_REFERENCE_GPU`)."""
        return self._reference

    def find_gpu(self, name: str) -> GpuSpec | None:
        """The spec named `name` (canonical name or alias, any case) in this estimator's table."""
        from gpurent.catalog.specs import normalize_name

        if self._by_name is None:
            index: dict[str, GpuSpec] = {}
            for spec in self._gpus:
                for key in (spec.name, *spec.aliases):
                    index.setdefault(normalize_name(key), spec)
            self._by_name = index
        return self._by_name.get(normalize_name(name))

    def with_calibration(self, calibration: Calibration | None) -> Estimator:
        """The same constants and GPUs with other calibration rows (and an empty memo)."""
        return Estimator(
            constants=self._constants,
            gpus=self._gpus,
            calibration=calibration,
            max_cached=self._max_cached,
            intervals=self._intervals,
        )

    def speed_ratio(self, gpu: GpuSpec, precision: Precision) -> float:
        """`transformer_speed_ratio` for this estimator's constants and reference GPU, memoised
        on the whole spec (a what-if spec may keep a catalog name)."""
        key = (gpu, precision)
        hit = self._ratios.get(key)
        if hit is None:
            hit = transformer_speed_ratio(gpu, precision, self._constants, self._reference)
            self._ratios[key] = hit  # bounded: one per distinct GPU spec and precision asked
        return hit

    def estimate(
        self,
        workload: Workload,
        gpu: GpuSpec,
        num_gpus: int = 1,
        *,
        nodes: int = 1,
        inter_node_gbps: float | None = None,
        intra_node_interconnect: Interconnect | None = None,
    ) -> Estimate:
        """Estimate `workload` on `num_gpus` GPUs `gpu` over `nodes` nodes (see `estimate`); a
        calibration row of this estimator for the same GPU, model and precision anchors it."""
        if intra_node_interconnect is not None:  # a name ("pcie") is read as the enum
            intra_node_interconnect = parse_estimated_link(intra_node_interconnect)
        key = (workload, gpu, num_gpus, nodes, inter_node_gbps, intra_node_interconnect)
        hit = self._estimates.get(key)
        if hit is not None:
            return hit
        est = _estimate(
            self,
            workload,
            gpu,
            num_gpus,
            nodes=nodes,
            inter_node_gbps=inter_node_gbps,
            interconnect=intra_node_interconnect,
            anchor=True,
        )
        if self._max_cached > 0:
            if len(self._estimates) >= self._max_cached:
                self._estimates.clear()
            self._estimates[key] = est
        return est

    def __call__(
        self,
        workload: Workload,
        gpu: GpuSpec,
        num_gpus: int,
        nodes: int,
        inter_node_gbps: float | None,
    ) -> Estimate:
        """The planner's `EstimatorFn` seam: `estimate` with positional nodes and network."""
        return self.estimate(workload, gpu, num_gpus, nodes=nodes, inter_node_gbps=inter_node_gbps)

    def memory_fits(self, workload: Workload, gpu: GpuSpec, num_gpus: int, nodes: int) -> bool:
        """Whether `estimate(workload, gpu, num_gpus, nodes=nodes)` fits in GPU memory, found
        without timing it (memory depends on neither the network nor the calibration); raises
        what `estimate` raises first for a layout it cannot model. The planner asks this
        before timing each layout it tries (`gpurent.plan.layouts.choose_layout`)."""
        return self.sized(workload, gpu, num_gpus, nodes)[2].fits

    def sized(self, workload: Workload, gpu: GpuSpec, num_gpus: int, nodes: int) -> _Sized:
        """`_sized` (model, sequence length, memory), remembered for the last arguments (the
        same objects): an estimate after `memory_fits` of one layout does not redo it."""
        last = self._last_sized
        if (
            last is not None
            and last[0] is workload
            and last[1] is gpu
            and last[2] == num_gpus
            and last[3] == nodes
        ):
            return last[4]
        sized = _sized(workload, gpu, num_gpus, nodes)
        self._last_sized = (workload, gpu, num_gpus, nodes, sized)
        return sized


def _sized(workload: Workload, gpu: GpuSpec, num_gpus: int, nodes: int) -> _Sized:
    """The model, sequence length and per-GPU memory of `workload` on `num_gpus` GPUs `gpu`
    over `nodes`, after the layout and precision checks: the start of every estimate, and all
    that decides whether it fits (`Estimator.memory_fits`)."""
    model = resolve_model(workload)
    seq = _validate(workload, model, num_gpus, nodes, gpu)
    check_precision(gpu, workload.precision)
    mem = memory_breakdown(
        workload, model, num_gpus, gpu.capacity_gib, gpus_per_node=num_gpus // nodes
    )
    return model, seq, mem


def _estimate(
    engine: Estimator,
    workload: Workload,
    gpu: GpuSpec,
    num_gpus: int,
    *,
    nodes: int,
    inter_node_gbps: float | None,
    interconnect: str | None,
    anchor: bool,
) -> Estimate:
    """The model behind `Estimator.estimate` (unmemoised); `anchor` applies the calibration."""
    intra_node_interconnect = interconnect
    k = engine.constants
    model, seq, mem = engine.sized(workload, gpu, num_gpus, nodes)
    p = workload.precision
    b = workload.batch_size_per_gpu
    notes: list[str] = []
    attention_share = 0.0  # decoder-LLM training: the attention kernel's share of the step
    host_share = 0.0  # decoder-LLM training with CPU offload: CPU Adam's share of the step
    if p is Precision.BF16 and not gpu.bf16_supported:
        kind = "bf16 tensor cores" if gpu.has_tensor_cores else "tensor cores and no bf16"
        notes.append(f"{gpu.name} has no {kind}: runs at the fp32 rate")
    elif p.is_half and not gpu.has_tensor_cores:
        note = (
            f"{gpu.name} has no tensor cores: half precision runs on its CUDA cores at "
            f"{gpu.fp16_tflops:g} TFLOPS, {gpu.fp16_tflops / gpu.fp32_tflops:.1f}x its fp32 rate"
        )
        if gpu.fp16_tflops <= gpu.fp32_tflops:  # fp16 math at 1:64 (GP102/GP104)
            note += (
                "; kernels that pick native fp16 math run far slower (users report AMP "
                "training 4x slower than fp32 on a P40): measure, or train in fp32"
            )
        notes.append(note)
    if gpu.confidence == "low":
        notes.append(f"{gpu.name}'s specs are low-confidence ({gpu.notes or gpu.source})")
    if (eff_note := efficiency_note(gpu)) is not None:
        notes.append(eff_note)

    if model.is_llm and workload.task is Task.INFERENCE:
        serve = _llm_inference(workload, model, gpu, seq, k, interconnect=intra_node_interconnect)
        t_c, t_m, t_comm, step = serve.compute_s, serve.memory_s, serve.comm_s, serve.request_s
        samples_per_step, mfu = serve.requests_per_step, serve.mfu
        # every data-parallel replica (tensor x pipeline GPUs) serves its own request batch
        samples_per_step *= data_parallel_degree(workload, num_gpus)
        units_per_sample = float(workload.output_tokens or DEFAULT_OUTPUT_TOKENS)
        scaling = 1.0
    elif model.is_llm:
        tr = _llm_training(
            workload,
            model,
            gpu,
            num_gpus=num_gpus,
            nodes=nodes,
            seq=seq or 2048,
            engine=engine,
            inter_node_gbps=inter_node_gbps,
            interconnect=intra_node_interconnect,
        )
        t_c, t_m, t_comm, step = tr.compute_s, tr.memory_s, tr.exposed_comm_s, tr.step_s
        mfu, scaling = tr.mfu, tr.scaling_efficiency
        attention_share, host_share = tr.attention_share, tr.host_share
        samples_per_step = float(b * data_parallel_degree(workload, num_gpus))
        units_per_sample = model.units_per_sample(seq)
    else:
        t_c, t_m, t_comm, step, scaling = _family(
            workload,
            model,
            gpu,
            num_gpus=num_gpus,
            nodes=nodes,
            seq=seq,
            k=k,
            inter_node_gbps=inter_node_gbps,
            interconnect=intra_node_interconnect,
        )
        samples_per_step = float(b * num_gpus)
        units_per_sample = model.units_per_sample(seq)
        mfu = None
        if p.is_half and k.family(model.key, True).half_at_full_rate:
            notes.append(
                f"{model.name}: its reference training script measured no faster with AMP than "
                "with FP32 on any GPU, so it is timed at the fp32 (TF32) rate"
            )

    if p.is_low_float and model.llm is not None and workload.task.trains:
        head = llm_output_layer_share(model.llm)
        notes.append(
            f"{p.value}: the GEMMs run x{low_float_gemm_gain(gpu, p):.2f} faster than in bf16 "
            f"({FP8_GEMM_REALIZATION:g} of the fp8/bf16 peak ratio), x"
            f"{llm_training_gemm_gain(gpu, p, head):.2f} with the output layer ({head:.1%} of "
            "the GEMM FLOPs) kept in bf16; attention, norms and the optimizer stay at bf16"
        )
    recipe = recipe_of(p)
    if recipe is not None and model.is_llm and workload.task.trains:
        step /= recipe.speedup_vs_fp8
        mfu = None if mfu is None else mfu * recipe.speedup_vs_fp8
        notes.append(
            f"{p.value}: x{recipe.speedup_vs_fp8:g} over the fp8 estimate ({recipe.source}); "
            "MFU against the fp8 peak"
        )
    elif recipe is not None:
        notes.append(f"{p.value}: timed as fp8 (its measurements are decoder-LLM training only)")
    samples_per_s = samples_per_step / step
    basis = Basis.CALIBRATED
    exact = False
    measurements = engine.calibration
    if anchor and len(measurements):
        rows = measurements.matches(gpu.name, model.name, p)
        if rows:
            ref = best_match(rows, num_gpus, b, seq)
            ref_wl = _replace_batch(workload, ref.batch_size, ref.seq_len or workload.seq_len)
            ref_est = _estimate(
                engine,
                ref_wl,
                gpu,
                ref.num_gpus,
                nodes=_anchor_nodes(nodes, ref.num_gpus),
                inter_node_gbps=inter_node_gbps,
                interconnect=intra_node_interconnect,
                anchor=False,
            )
            ratio = ref.throughput / ref_est.throughput
            exact = (ref.num_gpus, ref.batch_size) == (num_gpus, b) and ref.seq_len in (None, seq)
            samples_per_s *= ratio
            step /= ratio
            if mfu is not None:
                mfu *= ratio
            basis = Basis.MEASURED
            notes.append(
                f"anchored on your measurement ({ref.num_gpus}x {ref.gpu}, batch {ref.batch_size}: "
                f"{ref.throughput:g} {model.throughput_unit})"
            )
    if model.is_llm and workload.stack is Stack.TUNED:
        notes.append(f"software stack assumed: tuned ({Stack.TUNED.description})")
        tuned = k.stack(Stack.TUNED.value)
        if tuned is not None and workload.tensor_parallel > 1 and workload.task.trains:
            hidden = tp_hidden_share(tuned, gpu)
            notes.append(
                f"tensor-parallel collectives: {100 * hidden:.0f} % hidden behind the GEMMs "
                + (
                    "(the tuned stack's fitted share: NVIDIA's MLPerf recipes overlap them, "
                    "TP_COMM_OVERLAP=1)"
                    if gpu.vendor == "nvidia"
                    else "(AMD's MLPerf recipe does not overlap them)"
                )
            )
        stretch = cp_attention_stretch(tuned, workload.context_parallel)
        if stretch > 1.0 and workload.task.trains:
            notes.append(
                f"context parallel {workload.context_parallel}: attention takes x{stretch:.2f} "
                "(the tuned stack's fitted cost of Transformer Engine's ring: chunked kernels "
                "and merged partial softmaxes)"
            )
        if tuned is None or tuned_llm_key(workload.task) not in tuned.speed:
            notes.append(
                f"no MLPerf measurement of {workload.task.value} for the tuned stack: "
                f"{model.name} is timed as llm-foundry's"
            )
        elif tuned_llm_key(workload.task) == "llm" and model.llm is not None:
            size = llm_layer_params_per_gpu(workload, model.llm)
            notes.append(
                "tuned pretraining speed fitted on MLPerf GPT-3 175B, Llama 3.1 405B and Llama "
                "3.1 8B runs (FP8/NVFP4, 8-10,752 GPUs), smaller for smaller layers per GPU: "
                f"{size / 1e9:.2g}B active weights per layer per GPU here, "
                f"x{tuned.size_factor(size):.2f} of the large-layer speed"
                + (
                    "; MoE: that dense speed plus an expert-parallel cost fitted on MLPerf "
                    "v6.0 gpt-oss-20b and DeepSeek-V3 runs (docs/benchmarks.md)"
                    if model.llm.is_moe
                    else ""
                )
            )
    if model.is_llm:
        if workload.stack is not Stack.TUNED:
            notes.append(f"software stack assumed: {LLM_STACK}")
        if workload.task is not Task.INFERENCE:
            notes.append(attention_note(workload.attention_kernel, gpu.architecture))
        offload = _llm_offload(
            workload, model, gpu, num_gpus=num_gpus, nodes=nodes, k=k, compute_s=t_c + t_m
        )
        if offload is not None:
            notes.append(
                f"CPU offload priced: +{offload.exposed_per_micro_batch_s:.3g} s per step, "
                f"optimizer on the host (CPU Adam {offload.cpu_adam_s:.3g} s per optimizer "
                f"step; PCIe gen {gpu.pcie_gen} per GPU, {HOST_DRAM_BYTES_PER_S / 1e9:g} GB/s "
                "host memory per node assumed)"
            )
    else:
        st = workload.stack
        notes.append(f"software stack assumed: {st.value} ({st.description})")
        sk = k.stack(st.value)
        if sk is not None and sk.speed and model.key not in sk.speed:
            notes.append(f"no {st.value} measurement of {model.name}: its speed is the NGC one")

    bottleneck = _bottleneck(t_c, t_m, t_comm)
    if not mem.fits:
        bottleneck = Bottleneck.MEMORY_CAPACITY
        notes.append(
            f"does not fit: needs {mem.total_gib:.1f} GiB of {mem.capacity_gib:g} GiB "
            f"(short by {-mem.headroom_gib:.1f} GiB)"
        )
        least = min_gpus_for_model_state(workload, model, mem.capacity_gib)
        what = (
            "weights"
            if workload.task is Task.INFERENCE
            else "weights, gradients and optimizer states"
        )
        notes.append(
            f"the {what} alone at {workload.precision.value} need at least {least} x "
            f"{gpu.name} (fully sharded; activations and KV cache come on top)"
        )
    throughput = samples_per_s * units_per_sample
    eff_basis = realized_efficiency(gpu).basis
    interval = engine.base_interval(
        basis=basis,
        efficiency_basis=eff_basis,
        num_gpus=num_gpus,
        model_family=model.family,
        trains=workload.task.trains,
        exact_measurement=exact,
    )
    interval = _tuned_interval(workload, model, gpu, k, basis) or interval
    if attention_share > 0.0 and basis is not Basis.MEASURED:
        interval = kernel_interval(
            interval, workload.attention_kernel, gpu.architecture, attention_share
        )
    if host_share > 0.0 and basis is not Basis.MEASURED:
        interval = host_interval(interval, host_share)
    if recipe is not None and basis is not Basis.MEASURED:
        interval = _recipe_interval(interval, recipe)
    if model.llm is not None and model.llm.is_moe and basis is not Basis.MEASURED:
        interval = widened_interval(
            interval, WIDEN, f"x{WIDEN:g} width: mixture of experts, its speed fitted on dense runs"
        )
        if workload.expert_parallel > 1:
            notes.append(_expert_parallel_note(workload, k))
    return Estimate(
        model=model.name,
        gpu=gpu.name,
        num_gpus=num_gpus,
        nodes=nodes,
        precision=p,
        batch_size_per_gpu=b,
        seq_len=seq,
        throughput=throughput,
        throughput_unit=model.throughput_unit,
        samples_per_s=samples_per_s,
        step_time_s=step,
        compute_time_s=t_c,
        memory_time_s=t_m,
        communication_time_s=t_comm,
        scaling_efficiency=scaling,
        memory=mem,
        bottleneck=bottleneck,
        mfu=mfu,
        time_to_finish_s=_time_to_finish(workload, model, samples_per_s, throughput),
        basis=basis,
        notes=tuple(notes),
        efficiency_basis=eff_basis,
        interval_low=interval.low,
        interval_high=interval.high,
        interval_coverage=interval.coverage,
        interval_class=interval.label,
        fused_loss=workload.fused_loss_on,
    )


def _recipe_interval(interval: Interval, recipe: Recipe) -> Interval:
    """`interval` widened by the spread of the recipe's own measurements (or its assumed one)."""
    what = (
        f"{recipe.measurements} measurements" if recipe.measurements else "assumed, no measurement"
    )
    return Interval(
        low=min(1.0, interval.low * math.exp(recipe.log_low)),
        high=max(1.0, interval.high * math.exp(recipe.log_high)),
        coverage=interval.coverage,
        label=f"{interval.label}; {recipe.precision.value} spread ({what})",
    )


# the smallest layer (active weights per GPU, `llm_layer_params_per_gpu`) the tuned stack's
# `llm` (pretraining) speed and its size term were fitted on: Llama 3.1 8B at TP2, 0.125B
# (benchmarks/data/mlperf_llm_pretrain_fit.csv); below it, and for MoE models (none in the
# fit), the interval widens
TUNED_PRETRAIN_MIN_LAYER_PARAMS = 0.12e9


def _tuned_interval(
    workload: Workload, model: ModelInfo, gpu: GpuSpec, k: Constants, basis: str
) -> Interval | None:
    """The `tuned` stack's interval: the 10th-90th percentiles of its leave-one-MLPerf-round-
    out residuals for the model's speed key (None: another stack, no such residuals, or an
    estimate anchored on the user's measurement, which keeps its own interval)."""
    sk = tuned_llm_coeffs(workload, k) if workload.task.trains else None
    if sk is None or basis is Basis.MEASURED:
        return None
    base = tuned_llm_key(workload.task) if model.is_llm else model.key
    key = sk.speed_key(base, gpu.architecture)
    if key not in sk.intervals:
        key = base
        if key not in sk.intervals:
            return None
    lo, hi, rows = sk.intervals[key]
    interval = Interval(
        low=min(1.0, math.exp(lo)),
        high=max(1.0, math.exp(hi)),
        coverage=COVERAGE,
        label=f"tuned stack, {key}: leave-one-MLPerf-round-out residuals ({rows} rows)",
    )
    shape = model.llm
    if base == "llm" and shape is not None:
        if shape.is_moe:
            why = "no MoE run in the tuned pretraining fit"
        elif llm_layer_params_per_gpu(workload, shape) < TUNED_PRETRAIN_MIN_LAYER_PARAMS:
            why = "layers smaller per GPU than any in the tuned pretraining fit"
        else:
            return interval
        interval = widened_interval(interval, WIDEN, f"x{WIDEN:g} width: {why}")
    return interval


def _anchor_nodes(nodes: int, ref_gpus: int) -> int:
    """Nodes of the measured configuration's model estimate: as many as asked, at most its GPU
    count, and a divisor of it (the measured row does not say; GPUs split evenly over nodes)."""
    n = min(nodes, ref_gpus)
    while ref_gpus % n:
        n -= 1
    return n


def _replace_batch(workload: Workload, batch: int, seq: int | None) -> Workload:
    from dataclasses import replace

    return replace(workload, batch_size_per_gpu=batch, seq_len=seq)


def _bottleneck(t_c: float, t_m: float, t_comm: float) -> Bottleneck:
    if t_comm >= t_c and t_comm >= t_m:
        return Bottleneck.COMMUNICATION
    return Bottleneck.COMPUTE if t_c >= t_m else Bottleneck.MEMORY_BANDWIDTH


def _family(
    workload: Workload,
    model: ModelInfo,
    gpu: GpuSpec,
    *,
    num_gpus: int,
    nodes: int,
    seq: int | None,
    k: Constants,
    inter_node_gbps: float | None,
    interconnect: str | None,
) -> tuple[float, float, float, float, float]:
    """Non-LLM models: (compute s, memory s, exposed comm s, step s, scaling efficiency)."""
    p = workload.precision
    training = workload.task.trains
    coeffs = k.family(model.key, p.is_half)
    xc, xm, xv, xs = family_features(
        model,
        gpu,
        coeffs.feature_precision(p),
        workload.batch_size_per_gpu,
        seq,
        checkpointing=workload.activation_checkpointing and training,
        training=training,
        peak_exponent=k.peak_exponent,
        bandwidth_exponent=k.bandwidth_exponent,
        sm_cap_bytes_per_cycle=k.sm_cap_bytes_per_cycle,
        cuda_flops_per_sm_cycle=k.cuda_flops_per_sm_cycle,
    )
    t_c = coeffs.a * xc + coeffs.d * xv
    t_m = coeffs.b * xm + coeffs.e * xs
    # per-step launch/host work shrinks with the forward-only step; per-sample input work does not
    overhead = (coeffs.c_s if training else coeffs.c_s / 3.0) + coeffs.c_sample_s * (
        workload.batch_size_per_gpu
    )
    single = roofline_s(t_c, t_m, k.roofline_p) + overhead
    sk = k.stack(workload.stack.value)
    if sk is not None:
        single /= sk.speed_of(model.key, gpu.architecture)
    if num_gpus == 1 or not training:
        return t_c, t_m, 0.0, single, 1.0
    comm = sk.comm if sk is not None else k.comm
    if sk is not None and sk.scaling:
        comm_scale, sync = sk.scaling.get(model.key, sk.default_scaling)
        sync_s = sk.sync_s(sync, single, num_gpus)
    elif sk is not None:
        comm_scale, sync_s = 1.0, 0.0  # link-only scaling
    else:
        comm_scale, sync_s = coeffs.comm_scale, coeffs.sync_s
    # gradients all-reduced in the training precision's width: AMP scripts of the reference data
    # behave as if they reduce fp16 gradients (their multi-GPU loss is half the fp32 one's)
    grad_bytes = model.num_params * (2.0 if p.is_half else 4.0)
    if workload.task.trains_adapters:
        grad_bytes = lora_params(model, workload.lora_rank) * 4.0
    t_ar = ddp_allreduce_time_s(
        grad_bytes,
        gpu,
        num_gpus,
        nodes,
        comm,
        inter_node_gbps=inter_node_gbps,
        interconnect=interconnect,
    )
    t_ar /= workload.gradient_accumulation
    exposed = comm_scale * max(0.0, t_ar - comm.overlap * (2.0 / 3.0) * (t_c + t_m))
    exposed += sync_s
    sync = comm.sync_per_doubling ** math.log2(num_gpus)
    step = (single + exposed) / sync
    return t_c, t_m, exposed, step, single / step


@dataclass(frozen=True, slots=True)
class Collective:
    """One data-parallel collective of an LLM training step: `payload_bytes` (of one
    model-parallel shard) moved `factor` times, (n - 1) / n of it each time: 1 = an all-gather
    or a reduce-scatter, 2 = an all-reduce (both), 3 = ZeRO-3's two weight all-gathers and one
    gradient reduce-scatter. `per_micro_batch`: every micro-batch (ZeRO-3/FSDP gathers), else
    once per optimizer step (DDP/ZeRO-1/2 gradient all-reduce). `scope`: among which ranks,
    "dp" all the data-parallel (x context-parallel) ranks, "shard" HSDP's shard group (the
    ranks of one node), "replicas" one rank of each shard group (across nodes)."""

    what: str
    payload_bytes: float
    factor: float
    per_micro_batch: bool
    scope: str = "dp"


def llm_dp_collectives(
    workload: Workload, model: ModelInfo, shard_group: int = 1
) -> tuple[Collective, ...]:
    """The data-parallel collectives of one decoder-LLM training step (see docs/estimator.md).

    - ZeRO-3/FSDP, full training: weights (2 B/param) gathered in forward and in backward,
      gradients reduce-scattered: 3 x weights, every micro-batch.
    - ZeRO-3/FSDP, LoRA/QLoRA: the frozen base weights are sharded too, so they are still
      gathered twice per micro-batch (forward, and backward with reshard-after-forward; 2 B/param
      bf16, 0.53 B/param QLoRA storage), while only the adapter gradients are reduce-scattered:
      2 x base weights + 1 x adapter gradients, every micro-batch.
    - HSDP: the ZeRO-3 collectives inside the shard group of `shard_group` ranks, then the
      gradient shard (1 / shard_group of the trainable gradients) all-reduced across the
      replicas once per optimizer step.
    - DDP, ZeRO-1, ZeRO-2: the trainable gradients (all weights, or only the adapters) all-reduced
      (reduce-scatter + all-gather) once per optimizer step."""
    assert model.llm is not None
    # expert parallelism: a GPU's experts are gathered and reduced only among the ranks that
    # hold the same experts; per GPU that moves its share of the weights (dense: all of them)
    n = llm_params(model.llm) * expert_parallel_share(workload, model)
    mp = workload.tensor_parallel * workload.pipeline_parallel
    task = workload.task
    full = task in (Task.TRAINING, Task.FINETUNE_FULL)
    p = workload.precision
    grad_b = 2.0 if p in (Precision.BF16, Precision.FP16) or p.is_low_float else 4.0
    trainable = n if full else lora_params(model, workload.lora_rank)
    hsdp = workload.sharding is Sharding.HSDP
    within = "shard" if hsdp else "dp"
    across: tuple[Collective, ...] = ()
    if hsdp:
        across = (
            Collective(
                "gradient shard all-reduced across the replicas",
                trainable * grad_b / mp / max(1, shard_group),
                2.0,
                False,
                "replicas",
            ),
        )
    if workload.sharding.shards_weights and full:
        return (
            Collective(
                "weights gathered twice, gradients reduce-scattered",
                n * 2.0 / mp,
                3.0,
                True,
                within,
            ),
            *across,
        )
    if workload.sharding.shards_weights:
        return (
            Collective(
                "frozen base weights gathered in forward and backward",
                n * frozen_base_bytes_per_param(task, fp8_weights=fp8_frozen_base(workload)) / mp,
                2.0,
                True,
                within,
            ),
            Collective(
                "adapter gradients reduce-scattered", trainable * grad_b / mp, 1.0, True, within
            ),
            *across,
        )
    return (Collective("gradients all-reduced", trainable * grad_b / mp, 2.0, False),)


@dataclass(frozen=True, slots=True)
class DpGroup:
    """Where the data-parallel (x context-parallel) ranks of one model shard sit: `ranks` of
    them, `per_node` in each node (Megatron's rank order: tensor, context, data, pipeline, so
    the ranks of one tensor-parallel group are neighbours), over `group_nodes` nodes."""

    ranks: int
    per_node: int
    group_nodes: int

    @property
    def replicas(self) -> int:
        """HSDP's shard groups (one per node)."""
        return max(1, self.ranks // self.per_node)


def dp_group(workload: Workload, num_gpus: int, nodes: int) -> DpGroup:
    """The `DpGroup` of `workload` on `num_gpus` GPUs over `nodes` nodes."""
    ranks = data_parallel_degree(workload, num_gpus) * workload.context_parallel
    gpus_per_node = num_gpus // max(1, nodes)
    per_node = max(1, min(ranks, gpus_per_node // workload.tensor_parallel))
    return DpGroup(ranks, per_node, max(1, math.ceil(ranks / per_node)))


def llm_dp_traffic_bytes(workload: Workload, model: ModelInfo, num_gpus: int) -> float:
    """Bytes each GPU sends for data parallelism per micro-batch step on a ring of the ranks of
    each collective (all on one node): sum over `llm_dp_collectives` of factor x (n - 1) / n x
    payload (a once-per-optimizer-step collective spread over the gradient-accumulation
    steps)."""
    group = dp_group(workload, num_gpus, 1)
    if group.ranks <= 1:
        return 0.0
    ga = workload.gradient_accumulation
    total = 0.0
    for c in llm_dp_collectives(workload, model, group.per_node):
        n = group.ranks
        total += c.factor * (n - 1) / n * c.payload_bytes / (1 if c.per_micro_batch else ga)
    return total


def llm_dp_network_bytes(workload: Workload, model: ModelInfo, num_gpus: int, nodes: int) -> float:
    """Bytes each node's network carries for data parallelism per micro-batch step: a collective
    over the whole data-parallel group moves factor x (m - 1) / m of its payload through each of
    the m nodes it spans (NCCL's hierarchical rings); HSDP's replica all-reduce runs for each of
    the node's g shard ranks at once, g x its payload through the node's network; HSDP's shard
    collectives stay in the node."""
    group = dp_group(workload, num_gpus, nodes)
    if group.ranks <= 1:
        return 0.0
    ga = workload.gradient_accumulation
    total = 0.0
    for c in llm_dp_collectives(workload, model, group.per_node):
        if c.scope == "shard":
            continue
        m = group.replicas if c.scope == "replicas" else group.group_nodes
        payload = c.payload_bytes * (group.per_node if c.scope == "replicas" else 1)
        total += c.factor * (m - 1) / m * payload / (1 if c.per_micro_batch else ga)
    return total


def exposed_dp_per_micro_batch_s(cm: LlmComm, micro_batch_s: float, micro_batches: int) -> float:
    """Data-parallel seconds left on the critical path, per micro-batch, of a step of
    `micro_batches` micro-batches of `micro_batch_s` compute each. A collective run every
    micro-batch (ZeRO-3/FSDP) hides behind that micro-batch's compute (`LLM_COMM_OVERLAP` of
    it). One run once per optimizer step (DDP/ZeRO-1/2 gradients, HSDP's replicas) can hide only
    behind the one micro-batch whose backward produces the gradients it reduces (Megatron-LM's
    `overlap_grad_reduce` launches its buckets in the last micro-batch's backward; DDP's
    `no_sync` skips the earlier ones), so it competes with that micro-batch's own collectives
    and is not spread over the step: (m - 1) x max(0, dp - w) + max(0, dp + once - w), over m."""
    window = LLM_COMM_OVERLAP * micro_batch_s
    each = max(0.0, cm.dp_s - window)
    last = max(0.0, cm.dp_s + cm.dp_step_s - window)
    m = max(1, micro_batches)
    return ((m - 1) * each + last) / m


def pipeline_bubble_fraction(stages: int, micro_batches: int, virtual_stages: int = 1) -> float:
    """Share of a pipelined step that each GPU idles: (p - 1) / (v m + p - 1) for p stages,
    m micro-batches per optimizer step and v virtual stages (model chunks) per GPU; v = 1 is
    1F1B (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
    Using Megatron-LM", SC21, §2.2: the bubble is (p - 1) / m of the ideal time, (p - 1) / (v m)
    interleaved)."""
    if stages <= 1:
        return 0.0
    return (stages - 1) / (virtual_stages * micro_batches + stages - 1)


# Shares of each layout's communication that hide behind compute (stated assumptions, not fits):
# FSDP/ZeRO prefetch and DDP buckets hide most of the data-parallel traffic behind the forward
# and backward (`LLM_COMM_OVERLAP`); ring attention overlaps each KV block's transfer with the
# previous block's attention (`CP_COMM_OVERLAP` of the attention time); tensor-parallel
# collectives and pipeline sends sit on the critical path (0), except that the `tuned` stack on
# NVIDIA GPUs hides its fitted share of the tensor-parallel ones (`StackCoeffs.tp_comm_overlap`).
CP_COMM_OVERLAP = 1.0
TP_COMM_OVERLAP = 0.0
PP_COMM_OVERLAP = 0.0


def cp_attention_stretch(tuned: StackCoeffs | None, cp: int) -> float:
    """How much longer a layer's attention runs under context parallelism `cp`: the `tuned`
    stack's fitted 1 + `cp_attention_overhead` x (cp - 1) / cp (Transformer Engine's ring splits
    it into cp chunked kernel calls per pass and merges their partial softmaxes), 1 for cp = 1
    and for the other stacks (no measurement to fit)."""
    if tuned is None or cp <= 1:
        return 1.0
    return 1.0 + tuned.cp_attention_overhead * (cp - 1) / cp


def tp_hidden_share(tuned: StackCoeffs | None, gpu: GpuSpec) -> float:
    """The share of the tensor-parallel collectives an LLM training step hides: the `tuned`
    stack's fitted share on NVIDIA GPUs (their MLPerf recipes overlap them), else
    `TP_COMM_OVERLAP` (AMD's recipe and the default stacks keep them on the critical path)."""
    if tuned is not None and gpu.vendor == "nvidia":
        return tuned.tp_comm_overlap
    return TP_COMM_OVERLAP


@dataclass(frozen=True, slots=True)
class LlmComm:
    """Per-micro-batch communication seconds of one LLM training step, by layout."""

    dp_s: float  # data parallel run every micro-batch (ZeRO-3/FSDP gathers), before overlap
    tp_s: float  # tensor (and sequence) parallel
    pp_s: float  # pipeline point-to-point sends
    cp_s: float  # context parallel ring attention, before overlap
    ep_s: float = 0.0  # expert parallel all-to-all dispatch and combine (MoE), not overlapped
    # data parallel run once per optimizer step (DDP/ZeRO-1/2 gradients, HSDP's replica
    # all-reduce): the whole step's seconds, not spread over its micro-batches
    dp_step_s: float = 0.0


def llm_comm_times(
    workload: Workload,
    model: ModelInfo,
    gpu: GpuSpec,
    *,
    num_gpus: int,
    nodes: int,
    seq: int,
    comm: CommCoeffs,
    inter_node_gbps: float | None,
    interconnect: str | None,
) -> LlmComm:
    """The collectives of each layout, priced by `perf.group_collective_time_s` on the links
    they cross (see docs/estimator.md, "Communication per layout")."""
    assert model.llm is not None
    shape = model.llm
    b = workload.batch_size_per_gpu
    tp, pp, cp = workload.tensor_parallel, workload.pipeline_parallel, workload.context_parallel
    vp = workload.virtual_pipeline_stages
    per_node = num_gpus // nodes
    act_b = 2.0  # bf16 activations
    local_seq = seq // cp

    def on(ranks: int, group_nodes: int, payload: float, passes: float) -> float:
        return group_collective_time_s(
            payload,
            gpu,
            ranks,
            group_nodes=group_nodes,
            gpus_per_node=per_node,
            comm=comm,
            passes=passes,
            inter_node_gbps=inter_node_gbps,
            interconnect=interconnect,
        )

    group = dp_group(workload, num_gpus, nodes)
    dp_s = dp_step_s = 0.0
    if group.ranks > 1:
        for c in llm_dp_collectives(workload, model, group.per_node):
            if c.scope == "shard":
                t = on(group.per_node, 1, c.payload_bytes, c.factor)
            elif c.scope == "replicas":  # the node's g shard ranks share its network
                t = on(group.replicas, group.replicas, c.payload_bytes * group.per_node, c.factor)
            else:
                t = on(group.ranks, group.group_nodes, c.payload_bytes, c.factor)
            if c.per_micro_batch:
                dp_s += t
            else:
                dp_step_s += t
    layers_here = math.ceil(shape.layers / pp)
    tp_s = 0.0
    if tp > 1:
        # Megatron: 2 all-reduces of s b h activations per layer forward, 2 backward; with
        # sequence parallelism each becomes a reduce-scatter + an all-gather (same volume)
        act = local_seq * b * shape.hidden * act_b
        tp_nodes = max(1, tp // per_node)
        if workload.sequence_parallel_on:
            per = 2.0 * on(tp, tp_nodes, act, 1.0)
        elif tp_nodes == 1:
            per = tp_allreduce_time_s(act, gpu, tp, comm, interconnect)
        else:
            per = on(tp, tp_nodes, act, 2.0)
        tp_s = 4.0 * layers_here * per
    pp_s = 0.0
    if pp > 1:
        # each stage boundary sends a micro-batch's activations forward and their gradients
        # back; interleaving has v boundaries per GPU instead of one (Narayanan et al. 2021)
        # and the scatter/gather optimisation splits each send over the tp ranks
        payload = local_seq * b * shape.hidden * act_b / tp
        # stages are outermost in the rank order: on several nodes some stage boundary crosses
        # the network (or stays on NVLink inside an NVL72 domain), and the slowest one paces
        # the pipeline
        stage_gpus = num_gpus // pp
        if nodes > 1 and not in_scale_up_domain(gpu, nodes, per_node):
            link = network_link(inter_node_gbps, comm)
        else:
            link = intra_node_link(gpu, 2, comm, interconnect)
        # a point-to-point send: one step of base latency, the payload over the link (a node's
        # network is shared by its GPUs sending at once)
        share = min(per_node, stage_gpus) if link.kind in ("ib/roce", "ethernet") else 1
        one = NCCL_BASE_LATENCY_S + link.step_latency_s + payload * share / link.bus_bytes_per_s
        pp_s = 2.0 * vp * one
    cp_s = 0.0
    if cp > 1:
        # ring attention: per layer, cp - 1 steps passing a K and V block of seq / cp tokens in
        # forward, and K, V and their gradients in backward (3 x the forward bytes in all)
        kv = (shape.kv_heads or shape.heads) * (shape.hidden // shape.heads)
        block = 2.0 * local_seq * b * kv * act_b / tp
        cp_nodes = max(1, (tp * cp) // per_node)
        cp_s = 3.0 * layers_here * on(cp, cp_nodes, block * cp, 1.0)
    ep_s = 0.0
    ep = workload.expert_parallel
    if ep > 1 and shape.is_moe:
        # per MoE layer an all-to-all dispatches each token's hidden state to its k experts and
        # one combines the results, in forward and again in backward: 4 x tokens x k x h bf16
        # values, (ep - 1) / ep of them leaving the GPU (the expert group sits inside the
        # tensor-parallel x expert-parallel block of consecutive ranks)
        local = local_seq * b * shape.experts_per_token * shape.hidden * act_b / tp
        ep_nodes = max(1, (tp * ep) // per_node)
        moe_here = layers_here * shape.moe_layers / shape.layers  # DeepSeek: 58 of 61 layers
        ep_s = 4.0 * moe_here * on(ep, ep_nodes, local, 1.0)
    return LlmComm(dp_s=dp_s, tp_s=tp_s, pp_s=pp_s, cp_s=cp_s, ep_s=ep_s, dp_step_s=dp_step_s)


def _llm_offload(
    workload: Workload,
    model: ModelInfo,
    gpu: GpuSpec,
    *,
    num_gpus: int,
    nodes: int,
    k: Constants,
    compute_s: float,
) -> OffloadTime | None:
    """The CPU-offload time of a decoder-LLM training step of `compute_s` seconds of GPU work
    (`gpurent.estimate.offload`), None without offload. Each GPU owns the optimizer state of
    its shard of the trainable parameters (/ tensor x pipeline, and / data parallel when
    sharded); where the weight shards are offloaded too (`Workload.offloads_params`) it also
    fetches its shard of the weights for every pass."""
    if not (workload.cpu_offload and workload.task.trains):
        return None
    n = model.num_params
    task = workload.task
    full = task in (Task.TRAINING, Task.FINETUNE_FULL)
    trainable = n if full else lora_params(model, workload.lora_rank)
    shards = workload.tensor_parallel * workload.pipeline_parallel
    if workload.sharding is not Sharding.NONE:
        shards *= zero_shard_degree(workload, num_gpus, max(1, num_gpus // nodes))
    fetched = 0.0
    if workload.offloads_params:
        base = frozen_base_bytes_per_param(task, fp8_weights=fp8_frozen_base(workload))
        fetched = n * (2.0 if full else base) / shards
    return cpu_offload_time(
        gpu,
        k.comm,
        shard_params=trainable / shards,
        gpus_per_node=max(1, math.ceil(num_gpus / nodes)),
        fetched_param_bytes=fetched,
        compute_s=compute_s,
        overlap=LLM_COMM_OVERLAP,
        grad_accum=workload.gradient_accumulation,
    )


# Expert load imbalance (MoE with expert parallelism): the busiest expert rank's tokens over
# the mean, a stated factor, not fitted (no MoE training measurement was fitted)
MOE_LOAD_IMBALANCE = 1.1


def moe_imbalance_factor(workload: Workload, shape: LlmShape) -> float:
    """Matmul-time multiplier of a MoE model under expert parallelism: the experts' share of the
    active matmul FLOPs runs `MOE_LOAD_IMBALANCE` slower (the step waits for the busiest rank);
    1.0 for a dense model or ep 1 (each GPU then runs every expert on its own tokens)."""
    if workload.expert_parallel <= 1 or not shape.is_moe:
        return 1.0
    experts = shape.moe_layers * shape.experts_per_token * llm_expert_params(shape)
    share = experts / llm_matmul_params(shape)
    return 1.0 + (MOE_LOAD_IMBALANCE - 1.0) * share


def _expert_parallel_note(workload: Workload, k: Constants) -> str:
    """What the estimate assumed for expert parallelism: the default stack prices the
    all-to-all unhidden; the tuned stack adds its fitted costs (`moe_ep_overhead_s`)."""
    head = (
        f"expert parallel {workload.expert_parallel}: all-to-all dispatch and combine per MoE layer"
    )
    tuned = k.stack(Stack.TUNED.value) if workload.stack is Stack.TUNED else None
    if tuned is None:
        priced = "priced unhidden"
    else:
        per = "per step" if tuned.moe_ep_per_step else "per micro-batch"
        priced = (
            (
                "priced unhidden"
                if tuned.moe_ep_a2a_scale == 1.0
                else f"at {tuned.moe_ep_a2a_scale:.2g} of its byte price"
            )
            + ", plus "
            f"{tuned.moe_ep_layer_s * 1e3:.3g} ms per MoE layer {per}"
            + (
                f" and {tuned.moe_ep_token_s * 1e9:.3g} ns per routed token"
                if tuned.moe_ep_token_s > 0.0
                else ""
            )
            + " (fitted on MLPerf v6.0 MoE runs)"
        )
    return (
        f"{head} {priced}; expert load imbalance x{MOE_LOAD_IMBALANCE:g} assumed on the "
        "experts' matmuls"
    )


def moe_routed_tokens_per_gpu(workload: Workload, shape: LlmShape, seq: int) -> float:
    """Routed token copies one GPU sends to the experts per MoE layer per micro-batch: its
    tokens (`seq` / cp x the micro-batch, split over the tp ranks) x the top-k."""
    local = seq // workload.context_parallel * workload.batch_size_per_gpu
    return local * shape.experts_per_token / workload.tensor_parallel


def moe_ep_overhead_s(
    workload: Workload, shape: LlmShape, stack: StackCoeffs, *, seq: int, a2a_s: float
) -> float:
    """Seconds per micro-batch that expert parallelism costs on `stack` beyond the compute:
    over the MoE layers of one pipeline stage, `StackCoeffs.moe_ep_layer_s` fixed plus
    `moe_ep_token_s` per routed token copy (`moe_routed_tokens_per_gpu`), both spread over
    the step's micro-batches when `moe_ep_per_step` (paid once per step), and
    `moe_ep_a2a_scale` x `a2a_s`, the byte-priced all-to-all (`LlmComm.ep_s`); `a2a_s` (0.0)
    for a dense model or ep 1, where no token leaves its GPU."""
    if workload.expert_parallel <= 1 or not shape.is_moe:
        return a2a_s
    layers_here = math.ceil(shape.layers / workload.pipeline_parallel)
    moe_here = layers_here * shape.moe_layers / shape.layers
    per_layer = stack.moe_ep_layer_s + stack.moe_ep_token_s * moe_routed_tokens_per_gpu(
        workload, shape, seq
    )
    fixed = moe_here * per_layer
    if stack.moe_ep_per_step:
        fixed /= workload.gradient_accumulation
    return stack.moe_ep_a2a_scale * a2a_s + fixed


def tuned_llm_key(task: Task) -> str:
    """The `speed` key of the `tuned` stack for a decoder-LLM training task."""
    return "llm-lora" if task.trains_adapters else "llm"


def llm_output_layer_share(shape: LlmShape) -> float:
    """The output layer's (LM head's) share of a decoder LLM's training GEMM FLOPs: vocab x
    hidden over the weights a token multiplies with (`llm_matmul_params`, the count
    `llm_training_features` multiplies)."""
    return shape.vocab * shape.hidden / llm_matmul_params(shape)


def llm_layer_params_per_gpu(workload: Workload, shape: LlmShape) -> float:
    """Active weights of one decoder layer on one GPU: the active parameters (embeddings
    included) over the layers and the tensor-parallel degree (the size the tuned stack's
    pretraining speed depends on, `StackCoeffs.size_factor`)."""
    return llm_active_params(shape) / (shape.layers * workload.tensor_parallel)


def tuned_llm_speed(workload: Workload, shape: LlmShape, gpu: GpuSpec, tuned: StackCoeffs) -> float:
    """The tuned stack's speed for this decoder-LLM workload: the fitted factor of its task and
    architecture, for pretraining scaled by the layer size per GPU (`size_factor`)."""
    key = tuned_llm_key(workload.task)
    speed = tuned.speed_of(key, gpu.architecture)
    if key == "llm":
        speed *= tuned.size_factor(llm_layer_params_per_gpu(workload, shape))
    return speed


def tuned_llm_coeffs(workload: Workload, k: Constants) -> StackCoeffs | None:
    """The `tuned` stack's constants when `workload` asks for it (LLMs read no other stack)."""
    if workload.stack is not Stack.TUNED:
        return None
    return k.stack(Stack.TUNED.value)


class _LlmTraining(NamedTuple):
    """One decoder-LLM training step (per micro-batch)."""

    compute_s: float
    memory_s: float
    exposed_comm_s: float  # communication not hidden behind compute
    step_s: float  # with the pipeline bubble
    mfu: float
    scaling_efficiency: float  # single-GPU step time / this step time
    attention_share: float  # the attention kernel's share of the step
    host_share: float = 0.0  # CPU Adam's share of the step (CPU offload), host-DRAM bound


class _LlmInference(NamedTuple):
    """One batch of LLM requests on one replica: prefill, then decode token by token."""

    compute_s: float
    memory_s: float
    comm_s: float
    request_s: float  # the whole batch, prefill + every output token
    requests_per_step: float  # the batch of requests served together
    mfu: float


def _llm_training(
    workload: Workload,
    model: ModelInfo,
    gpu: GpuSpec,
    *,
    num_gpus: int,
    nodes: int,
    seq: int,
    engine: Estimator,
    inter_node_gbps: float | None,
    interconnect: str | None,
) -> _LlmTraining:
    """Decoder LLM training: one step's times, MFU and scaling."""
    assert model.llm is not None
    shape = model.llm
    p = workload.precision
    tp, pp, cp = workload.tensor_parallel, workload.pipeline_parallel, workload.context_parallel
    k = engine.constants
    c = k.llm
    ref = engine.reference_gpu
    mode = workload.recompute_mode
    # fp8 and narrower run the linear layers' GEMMs only in fp8 (precisions.py): every other
    # term is timed at bf16, the GEMMs divided by the realized fp8 gain
    half = Precision.BF16 if p.is_low_float else p
    gain = llm_training_gemm_gain(gpu, p, llm_output_layer_share(shape))
    x_mm, x_attn, x_mem, model_flops = llm_training_features(
        model,
        ref,
        half,
        workload.task,
        batch=workload.batch_size_per_gpu,
        seq_len=seq,
        checkpointing=mode is Recompute.FULL,
        selective=mode is Recompute.SELECTIVE,
        mlp_recompute=mode is Recompute.MLP,
        model_parallel=tp * pp * cp,
    )
    ratio = engine.speed_ratio(gpu, half)
    # never faster than the fitted matmul efficiency at this GPU's own peak (a GPU without
    # bf16 tensor cores, say, is far more compute bound than BERT's transfer ratio says)
    own_peak_s = (x_mm / gain + x_attn) * peak_flops(ref, half) / peak_flops(gpu, half)
    t_attn = _llm_attention_s(workload, gpu, ref, half, x_attn=x_attn, a_attn=c.a_attn, ratio=ratio)
    tuned = tuned_llm_coeffs(workload, k)
    t_attn *= cp_attention_stretch(tuned, workload.context_parallel)
    t_c = max(c.a_gemm * x_mm / gain * ratio + t_attn, c.a_gemm * own_peak_s)
    t_c *= moe_imbalance_factor(workload, shape)
    t_m = c.k_mem * x_mem * ratio
    ga = workload.gradient_accumulation
    n = llm_params(shape)
    # optimizer step: read/write weights, grads and AdamW states once per optimizer step, of
    # the parameters this GPU owns (as `memory_breakdown` counts them: 1 / ep of the experts,
    # and under ZeRO the dense part over every rank, the experts over zero / ep)
    zero = zero_shard_degree(workload, num_gpus, num_gpus // nodes)
    if workload.task in (Task.TRAINING, Task.FINETUNE_FULL):
        owned = n * expert_parallel_share(workload, model) / (tp * pp)
        if workload.sharding is not Sharding.NONE:
            owned *= sharded_state_share(workload, model, zero)
    else:
        owned = lora_params(model, workload.lora_rank) / (tp * pp)
        if workload.sharding is not Sharding.NONE:
            owned /= zero
    t_opt = 28.0 * owned / bandwidth_bps(gpu) / ga
    offload = _llm_offload(
        workload, model, gpu, num_gpus=num_gpus, nodes=nodes, k=k, compute_s=t_c + t_m
    )
    if offload is not None:  # the optimizer runs on the host instead
        t_opt = offload.exposed_per_micro_batch_s
    single = t_c + t_m + c.c_s * ratio + t_opt
    if tuned is not None:
        # MLPerf-grade code: its fitted speed shortens the GEMMs (fp8 recipes tuned per shape),
        # the fused memory-bound work and the per-step overhead (CUDA graphs); its attention is
        # the same FlashAttention/cuDNN kernel as the default stack's, so that term is kept.
        # Never faster than every FLOP at the datasheet peak.
        speed = tuned_llm_speed(workload, shape, gpu, tuned)
        at_peak_s = model_flops / peak_flops(gpu, p)
        single = max(t_attn + (single - t_attn) / speed, at_peak_s)
    cm = llm_comm_times(
        workload,
        model,
        gpu,
        num_gpus=num_gpus,
        nodes=nodes,
        seq=seq,
        comm=k.comm if tuned is None else tuned.comm,
        inter_node_gbps=inter_node_gbps,
        interconnect=interconnect,
    )
    exposed = exposed_dp_per_micro_batch_s(cm, t_c + t_m, ga)
    # ring attention hides behind the attention compute of the same layer
    exposed += max(0.0, cm.cp_s - CP_COMM_OVERLAP * t_c * x_attn / max(x_mm + x_attn, 1e-30))
    exposed += (1.0 - tp_hidden_share(tuned, gpu)) * cm.tp_s + (1.0 - PP_COMM_OVERLAP) * cm.pp_s
    if tuned is None:
        exposed += cm.ep_s  # on the critical path between the router and the experts
    else:  # the fitted share of it, and the fitted latency and per-token costs
        exposed += moe_ep_overhead_s(workload, shape, tuned, seq=seq, a2a_s=cm.ep_s)
    step = single + exposed
    # pipeline bubble: the step (per micro-batch) stretches by 1 / (1 - bubble share)
    step /= 1.0 - pipeline_bubble_fraction(pp, ga, workload.virtual_pipeline_stages)
    mfu = model_flops / (step * peak_flops(gpu, p))
    return _LlmTraining(
        compute_s=t_c,
        memory_s=t_m,
        exposed_comm_s=exposed,
        step_s=step,
        mfu=mfu,
        scaling_efficiency=single / step,
        attention_share=min(1.0, t_attn / max(single + exposed, 1e-30)),
        host_share=(
            0.0
            if offload is None
            else min(1.0, offload.cpu_adam_s / ga / max(single + exposed, 1e-30))
        ),
    )


def _llm_inference(
    workload: Workload,
    model: ModelInfo,
    gpu: GpuSpec,
    seq: int | None,
    k: Constants,
    *,
    interconnect: str | None = None,
) -> _LlmInference:
    """Prefill (compute bound) + decode (bandwidth bound: weights + KV cache per token step).

    With tensor parallelism every layer all-reduces its attention and MLP outputs (Megatron):
    2 x layers all-reduces of batch x hidden activations per decoded token (latency bound:
    NCCL's small-message latency, `perf.tp_allreduce_time_s`) and of batch x prompt x hidden
    in the prefill, on the critical path (not overlapped).

    Returns (compute s, memory s, comm s, time per request batch s, requests per batch, MFU);
    MFU here is the model FLOPs over the run divided by peak."""
    assert model.llm is not None
    shape = model.llm
    p = workload.precision
    b = workload.batch_size_per_gpu
    tp = workload.tensor_parallel * workload.pipeline_parallel
    prompt = seq or 512
    out = workload.output_tokens or DEFAULT_OUTPUT_TOKENS
    n = llm_params(shape)
    peak = peak_flops(gpu, p)
    bw = bandwidth_bps(gpu) * k.decode_bw_efficiency
    wbytes = weights_bytes_for_inference(model, p) / tp
    kv_bytes = bytes_per_value(p) / tp  # per cached value on one tensor-parallel rank
    # the prompt attends causally (`zoo.llm_flops_per_token`); each decoded token sees it all
    prefill_flops = llm_flops_per_token(shape, prompt, training=False) * prompt * b / tp
    t_prefill = k.llm.a_gemm * prefill_flops / peak + wbytes / bw
    avg_ctx = prompt + out / 2.0
    attended = llm_attended_keys(shape, avg_ctx)
    decode_flops = (2.0 * n + 4.0 * llm_attention_width(shape) * attended) * b / tp
    step_c = k.llm.a_gemm * decode_flops / peak
    step_m = (wbytes + llm_kv_cache_values(shape, avg_ctx) * kv_bytes * b) / bw
    act_bytes = bytes_per_value(p)
    tensor = workload.tensor_parallel
    per_layer = 2 * shape.layers
    comm_prefill = per_layer * tp_allreduce_time_s(
        b * prompt * shape.hidden * act_bytes, gpu, tensor, k.comm, interconnect
    )
    comm_token = per_layer * tp_allreduce_time_s(
        b * shape.hidden * act_bytes, gpu, tensor, k.comm, interconnect
    )
    t_decode = out * (max(step_c, step_m) + comm_token)
    total = t_prefill + comm_prefill + t_decode
    flops = prefill_flops + decode_flops * out
    t_comm = comm_prefill + out * comm_token
    return _LlmInference(
        compute_s=t_prefill + out * step_c,
        memory_s=out * step_m,
        comm_s=t_comm,
        request_s=total,
        requests_per_step=float(b),
        mfu=flops / (total * peak),
    )


def _time_to_finish(
    workload: Workload, model: ModelInfo, samples_per_s: float, throughput: float
) -> float | None:
    if samples_per_s <= 0:
        return None
    if workload.token_budget is not None and model.throughput_unit == "tokens/s":
        return workload.token_budget / throughput
    if workload.token_budget is not None and model.uses_seq_len:
        seq = workload.seq_len or model.default_seq_len or 1
        return workload.token_budget / seq / samples_per_s
    if workload.dataset_samples is not None:
        epochs = workload.epochs if workload.epochs is not None else 1.0
        return workload.dataset_samples * epochs / samples_per_s
    return None
