"""The LLM serving model: one replica of `tensor_parallel` GPUs running a continuous-batching
engine (pure: values in, frozen results out). docs/serving.md has the equations and sources.

Per engine step (one iteration of the scheduler) with `B` sequences decoding at mean context
`c` and `T` prefill tokens (chunked prefill: a prompt enters as chunks of at most
`chunk_tokens - B` tokens per step, next to the decodes):

    step_s = max(M / (W e_bw), F_dec / (P e_pf))
             + max(0, F_pf / (P e_pf occ) - weights / (W e_bw)) + 2 L x allreduce + o_s

M = weight bytes read (the linear layers in their quantized width, the 16-bit output head;
a mixture of experts reads only the experts its batch touches) + B c KV bytes, per GPU;
F_dec = B (2 N_active + 4 L h_q c) / tp the decode FLOPs, F_pf the prefill FLOPs of the chunk
(2 N_active per new token + causal attention 2 L h_q (s^2 - s_cached^2) per prompt, the
quadratic term, at the occupancy T / (T + T_half) of the step's T prompt tokens); P the
GPU's dense peak at the math precision (fp8 / NVFP4 times a fitted low-precision factor;
weight-only int8/int4 divide it by a dequant factor), W its memory bandwidth (both from
`GpuSpec` for every GPU); e_bw, e_pf, o_s the engine's fitted decode bandwidth efficiency,
prefill compute efficiency and per-step overhead (`data/serving_constants.json`,
`benchmarks/fit_serving.py`). The all-reduce is the estimator's tensor-parallel one
(`perf.tp_allreduce_time_s`) plus a fitted extra, twice per layer, in decode and prefill.

Steady state (a fluid model): with arrivals X req/s each needing t_pf of prefill compute, the
share u = X t_pf of GPU time goes to prefill, so decode advances 1 / step steps per second of
the rest: TPOT = step(B) / ((1 - u) tau) (tau = tokens per step: 1, or speculative
decoding's (1 - a^(k+1)) / (1 - a)), and Little's law closes it: B = X O TPOT. Open loop
(Poisson at rate X): solved for B by bisection; closed loop (C clients): solved for X with
X (mean TTFT + O TPOT) = C. A replica holds at most `max_concurrency` sequences: the engine's
`max_num_seqs` or what the paged KV cache (blocks of 16 tokens, in the memory left after
weights, activations and the runtime at `gpu_memory_utilization`) holds at the mean request
length (prompt + output); beyond it the load is unstable.

A prompt's chunk runs in the step that reads the weights for the decodes, so its matmuls
overlap that read (chunked prefill); every request's TTFT adds the engine's first-token cost
(scheduling, sampling, detokenising) and, in a server, its per-request overhead.

Queueing (TTFT under load): a new request waits for the running step if one runs (half a
step times the chance that one does: never for one client alone), the prefills ahead of it
and its own prefill service S (its chunks, one engine step each, beyond the weight read they
overlap). Open loop: an M/G/1 queue of prefills, the Pollaczek-Khinchine mean
X E[S^2] / (2 (1 - rho)) with an exponential tail P(W > t) = rho exp(-t rho / E[W])
(Kingman's heavy-traffic form). Closed loop: mean-value analysis of the finite-source queue
(Reiser and Lavenberg 1980; the residual E[S^2] / (2 E[S]) for the customer in service), so
a client never waits for more than the C - 1 ahead of it. The chunked-prefill budget bounds
a step at the decodes plus chunk_tokens - B prompt tokens: a load whose prefills need longer
steps is unstable in the open loop, and a closed loop past it keeps its rate and TPOT while
the waiting queue takes the excess (Little's law). TPOT's spread comes from the prefills
that land during a request's decode (compound Poisson: mean m E[t_pf], variance
m E[t_pf^2], m = X O TPOT); the batch size's own fluctuation is not modelled.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.precision import Precision
from gpurent.errors import DataError, InputError
from gpurent.estimate.constants import CommCoeffs, load_constants
from gpurent.estimate.efficiency import realized_efficiency
from gpurent.estimate.perf import bandwidth_bps, peak_flops, tp_allreduce_time_s
from gpurent.units import BYTES_PER_GIB
from gpurent.workload.models import get_model
from gpurent.workload.serving import (
    Engine,
    KvPrecision,
    LengthDistribution,
    ServingSlo,
    ServingWorkload,
    WeightQuant,
)
from gpurent.workload.spec import LlmShape
from gpurent.workload.zoo import llm_active_params, llm_expert_params, llm_params

BLOCK_TOKENS = 16  # paged KV cache block (vLLM's default block size)
# Halvings of every bisection's bracket: 2^-17 < 1e-5 of its width, far below the model's own
# error (>= 5 %); the searches nest (a rate's state solves for the batch), so each halving
# more costs every serving plan about 6 % (32 and 36 were used before, at twice the cost).
_HALVINGS = 17
Z_99 = 2.3263  # standard normal 99th percentile
_FILE = "serving_constants.json"


# ---------------------------------------------------------------------------------- constants


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineCoeffs:
    """One engine's efficiencies (shared by every GPU and model)."""

    prefill_efficiency: float  # share of dense peak the prefill (and decode) matmuls realise
    decode_bw_efficiency: float  # share of memory bandwidth decode's weight + KV reads realise
    step_overhead_s: float  # per step: scheduler, sampling, kernel launches
    request_overhead_s: float  # per request, on its TTFT: the server's HTTP and tokenization
    # per request, on its TTFT, in a server and in an engine-level run alike: scheduling the
    # prompt, sampling the first token and detokenising it (fitted on every engine's rows)
    first_token_s: float
    basis: str  # "fitted on N rows" or "assumed: ..."


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingConstants:
    """The serving model's fitted coefficients: per-engine rates, overheads, dequant factors."""

    engines: Mapping[Engine, EngineCoeffs]
    dequant_factor: Mapping[WeightQuant, float]  # weight-only: matmul time x this
    runtime_overhead_gib: float  # CUDA context, CUDA graphs, NCCL buffers per GPU
    # per tensor-parallel all-reduce beyond NCCL's modelled latency and volume (kernel launch,
    # the engine's custom all-reduce, GEMMs split tp ways running less efficiently), fitted
    tp_allreduce_extra_s: float
    # per layer and prefill chunk: the context phase's own kernels (attention over the chunk,
    # normalisation, rotary embedding) beyond its FLOPs, fitted; what short prompts pay
    prefill_layer_s: float
    # prefill matmuls at low occupancy: a step of T prompt tokens realises
    # e_pf x T / (T + prefill_half_tokens) of the peak (small prompts fill few tiles of the
    # GPU), one curve for every GPU, fitted
    prefill_half_tokens: float
    # 8- and 4-bit float tensor-core matmuls (fp8, NVFP4) realise this share of what the
    # engine's efficiency realises at 16 bits (activation quantisation and scaling kernels;
    # the doubled peak is held back by power and clocks), fitted
    low_precision_factor: float
    # 80 % intervals: log(measured / predicted) 10th and 90th percentiles, per figure kind
    latency_log_interval: tuple[float, float]  # TPOT and step times
    ttft_log_interval: tuple[float, float]  # TTFT (queueing included) and e2e
    throughput_log_interval: tuple[float, float]
    comm: CommCoeffs  # the estimator's link coefficients (`perf.tp_allreduce_time_s`)
    provenance: Mapping[str, Any] = field(default_factory=dict)


def parse_serving_constants(raw: Mapping[str, Any], *, comm: CommCoeffs) -> ServingConstants:
    """The serving constants parsed from the bundled file's mapping; InputError on a bad entry."""
    try:
        engines = {
            Engine(name): EngineCoeffs(
                prefill_efficiency=float(e["prefill_efficiency"]),
                decode_bw_efficiency=float(e["decode_bw_efficiency"]),
                step_overhead_s=float(e["step_overhead_s"]),
                request_overhead_s=float(e["request_overhead_s"]),
                first_token_s=float(e.get("first_token_s", 0.0)),
                basis=str(e["basis"]),
            )
            for name, e in raw["engines"].items()
        }
        return ServingConstants(
            engines=engines,
            dequant_factor={WeightQuant(k): float(x) for k, x in raw["dequant_factor"].items()},
            runtime_overhead_gib=float(raw["runtime_overhead_gib"]),
            tp_allreduce_extra_s=float(raw["tp_allreduce_extra_s"]),
            prefill_layer_s=float(raw["prefill_layer_s"]),
            prefill_half_tokens=float(raw.get("prefill_half_tokens", 0.0)),
            low_precision_factor=float(raw.get("low_precision_factor", 1.0)),
            latency_log_interval=(
                float(raw["intervals"]["latency"][0]),
                float(raw["intervals"]["latency"][1]),
            ),
            ttft_log_interval=(
                float(raw["intervals"]["ttft"][0]),
                float(raw["intervals"]["ttft"][1]),
            ),
            throughput_log_interval=(
                float(raw["intervals"]["throughput"][0]),
                float(raw["intervals"]["throughput"][1]),
            ),
            comm=comm,
            provenance=dict(raw.get("provenance", {})),
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise DataError(f"{_FILE}: malformed ({exc}): rerun benchmarks/fit_serving.py") from None


def load_serving_constants() -> ServingConstants:
    """The bundled, fitted constants (`benchmarks/fit_serving.py` writes them) with the
    estimator's communication coefficients. Read on every call (the core keeps no module
    state): load once and pass `constants=` where many estimates are made (the planner)."""
    text = resources.files("gpurent.estimate.data").joinpath(_FILE).read_text(encoding="utf-8")
    return parse_serving_constants(json.loads(text), comm=load_constants().comm)


# ------------------------------------------------------------------------------ result types


@dataclass(frozen=True, slots=True, kw_only=True)
class Figure:
    """A point estimate with its 80 % interval (low <= value <= high)."""

    value: float
    low: float
    high: float

    @staticmethod
    def of(value: float, log_interval: tuple[float, float]) -> Figure:
        """A figure for value with its interval from a (low, high) interval in log space."""
        lo, hi = log_interval
        if not math.isfinite(value):
            return Figure(value=value, low=value, high=value)
        return Figure(
            value=value,
            low=value * min(1.0, math.exp(lo)),
            high=value * max(1.0, math.exp(hi)),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingMemory:
    """Per GPU of one replica, GiB (KV per token in bytes)."""

    capacity_gib: float  # what the engine may take: usable memory x gpu_memory_utilization
    weights_gib: float
    activations_gib: float  # peak of one step: the prefill chunk's intermediates, the logits
    runtime_gib: float  # CUDA context, graphs, communication buffers (assumed)
    kv_cache_gib: float  # what is left for the paged KV cache (<= 0: does not fit)
    kv_bytes_per_token: float
    kv_precision: KvPrecision
    kv_tokens: int  # KV cache capacity in tokens (whole blocks)
    kv_at_max_concurrency_gib: float
    tokens_per_request: float  # mean prompt + output
    max_concurrency: int  # sequences one replica holds: max_num_seqs or the KV cache's limit
    limited_by: str  # "kv-cache" | "max-num-seqs"

    @property
    def fits(self) -> bool:
        """Whether one replica holds at least one KV block and one sequence."""
        return self.kv_tokens >= BLOCK_TOKENS and self.max_concurrency >= 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingPoint:
    """One operating point of one replica (closed loop at `concurrency` or open loop at
    `request_rate_per_s`); latencies in ms (e2e in s). `stable` false: the load exceeds what
    the replica sustains (latencies infinite)."""

    concurrency: float  # clients (closed loop) or mean requests in the system (open loop)
    request_rate_per_s: Figure
    output_tokens_per_s: Figure
    batch: float  # mean sequences decoding per step
    ttft_mean_ms: Figure
    ttft_p50_ms: Figure
    ttft_p99_ms: Figure
    tpot_p50_ms: Figure
    tpot_p99_ms: Figure
    e2e_p99_s: Figure
    stable: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingCurve:
    """The throughput-latency curve of one replica: closed-loop points at rising concurrency
    (1, 2, 4, ... and the replica's max concurrency)."""

    workload: ServingWorkload
    gpu: str
    tensor_parallel: int
    memory: ServingMemory
    rows: tuple[ServingPoint, ...]
    prefill_ms: Figure  # one mean prompt alone (concurrency 1, no queueing)
    decode_step_ms: Figure  # one decode step at batch 1, mean context
    engine_basis: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SloLoad:
    """The highest Poisson request rate the `replicas` replicas sustain with every SLO met;
    `limiting` names the SLO that binds there ("capacity": none binds before saturation).
    `met` is false when not even a vanishing load meets the SLOs: then `miss` says by how much
    the closest point (load -> 0) misses the limiting one (its value / the target)."""

    request_rate_per_s: Figure  # total over the replicas
    per_replica_rate_per_s: float
    replicas: int
    limiting: str
    met: bool
    at: ServingPoint  # one replica's point at that rate
    miss: float = 1.0


# ------------------------------------------------------------------------------------ checks


def _math_precision(quant: WeightQuant, gpu: GpuSpec) -> Precision:
    """The matmuls' precision: fp8 / nvfp4 tensor cores, else 16 bits (fp16 where the GPU has
    no bf16, as the engines' `dtype=auto` picks)."""
    if quant is WeightQuant.FP8:
        return Precision.FP8
    if quant is WeightQuant.NVFP4:
        return Precision.NVFP4
    if quant is WeightQuant.FP16 or not gpu.bf16_supported:
        return Precision.FP16
    return Precision.BF16


def kv_precision_on(workload: ServingWorkload, gpu: GpuSpec) -> KvPrecision:
    """The KV cache's type: the workload's, else the activations' 16-bit type on `gpu`."""
    if workload.kv_cache is not None:
        return workload.kv_cache
    if workload.weights is WeightQuant.FP16 or not gpu.bf16_supported:
        return KvPrecision.FP16
    return KvPrecision.BF16


def _quant_problem(gpu: GpuSpec, quant: WeightQuant) -> str | None:
    if quant is WeightQuant.BF16 and not gpu.bf16_supported:
        return f"{gpu.name} ({gpu.architecture}) has no bf16 support (it needs Ampere or later)"
    if quant is WeightQuant.FP8 and gpu.fp8_tflops is None:
        return (
            f"{gpu.name} ({gpu.architecture}) has no fp8 tensor cores (fp8 needs Ada, Hopper, "
            "Blackwell or CDNA3)"
        )
    if quant is WeightQuant.NVFP4 and gpu.architecture != "Blackwell":
        return f"nvfp4 needs Blackwell tensor cores and {gpu.name} is {gpu.architecture}"
    return None


def supported_quants(gpu: GpuSpec) -> tuple[WeightQuant, ...]:
    """The weight quantizations `gpu` runs."""
    return tuple(q for q in WeightQuant if _quant_problem(gpu, q) is None)


def check_serving(workload: ServingWorkload, gpu: GpuSpec, tensor_parallel: int) -> LlmShape:
    """The model's shape, or one InputError line: not a decoder LLM, a quantization the GPU
    cannot run (naming what it supports), a KV precision without 16-bit support, a tensor
    parallel degree that does not divide the heads."""
    model = get_model(workload.model)
    if model.llm is None:
        raise InputError(
            f"serving needs a decoder LLM: {model.name} is a {model.family} model "
            "(see `gpurent estimate --list-models`)"
        )
    problem = _quant_problem(gpu, workload.weights)
    if problem is not None:
        ok = ", ".join(q.value for q in supported_quants(gpu))
        raise InputError(
            f"{workload.weights.value} weights on {gpu.name}: {problem}; {gpu.name} supports {ok}"
        )
    if workload.kv_cache is KvPrecision.BF16 and not gpu.bf16_supported:
        raise InputError(
            f"bf16 KV cache on {gpu.name}: {gpu.name} ({gpu.architecture}) has no bf16; "
            "use kv_cache = fp16 or fp8"
        )
    shape = model.llm
    if shape.heads % tensor_parallel:
        raise InputError(
            f"tensor parallel {tensor_parallel} does not divide {model.name}'s "
            f"{shape.heads} attention heads"
        )
    return shape


# ------------------------------------------------------------------------------------- model


@dataclass(frozen=True, slots=True)
class _Replica:
    """Everything the step-time formula needs, per GPU of one replica."""

    shape: LlmShape
    tp: int
    gpu: GpuSpec
    coeffs: EngineCoeffs
    peak: float  # effective FLOP/s for matmuls (dequant cost applied)
    bw: float  # B/s
    dense_read_bytes: float  # per step, everything but the experts
    expert_bytes: float  # all experts' weights (MoE; 0 dense)
    kv_per_token: float  # bytes per GPU
    flops_per_token: float  # 2 N_active + head, per GPU
    attn_flops_coeff: float  # 2 L h_q / tp (x context or s^2 terms)
    allreduce_bytes_per_token: float
    tau: float  # tokens per step per sequence (speculative decoding)
    verify_tokens: int  # tokens each sequence runs per step (1, or k + 1)
    draft_ratio: float
    chunk_tokens: int
    allreduce_extra_s: float  # per all-reduce (0 without tensor parallelism)
    eff_bw: float  # bw x the engine's decode bandwidth efficiency, B/s
    eff_peak: float  # peak x the engine's prefill efficiency, FLOP/s
    comm_fixed_s: float  # per decode step: 2 L x (all-reduce latency + extra)
    comm_per_token_s: float  # per decode step and token: 2 L x the all-reduce's volume time
    prefill_chunk_s: float  # per prefill chunk: L x the fitted per-layer prefill time
    prefill_half_tokens: float  # tokens per step at which prefill runs at half its efficiency
    comm: CommCoeffs


def _replica(
    workload: ServingWorkload, gpu: GpuSpec, tp: int, k: ServingConstants
) -> tuple[_Replica, ServingMemory]:
    shape = check_serving(workload, gpu, tp)
    coeffs = k.engines[workload.engine]
    q = workload.weights
    head_dim = shape.head_dim or shape.hidden // shape.heads
    h_q = shape.heads * head_dim
    emb_in = shape.vocab * shape.hidden
    emb_out = 0 if shape.tied_embeddings else shape.vocab * shape.hidden
    total = llm_params(shape)
    active = llm_active_params(shape)
    linear_total = total - emb_in - emb_out
    weights = (linear_total * q.bytes_per_weight + (emb_in + emb_out) * 2.0) / tp
    experts = shape.layers * shape.experts * llm_expert_params(shape) if shape.is_moe else 0.0
    dense_linear = (active - emb_in - emb_out) - (
        shape.layers * shape.experts_per_token * llm_expert_params(shape)
    )
    head = shape.vocab * shape.hidden
    dense_read = (dense_linear * q.bytes_per_weight + head * 2.0) / tp
    kv_heads = shape.kv_heads or shape.heads
    kv_per_token = (
        2.0
        * shape.layers
        * max(1.0, kv_heads / tp)
        * head_dim
        * kv_precision_on(workload, gpu).bytes_per_value
    )
    # the architecture's realized share of its datasheet rates (1 for NVIDIA; fitted for
    # CDNA on MLPerf Training, `estimate.efficiency`): the one rule every GPU goes through
    realized = realized_efficiency(gpu).factor
    math_precision = _math_precision(q, gpu)
    peak = peak_flops(gpu, math_precision) * realized
    if math_precision in (Precision.FP8, Precision.NVFP4):
        peak *= k.low_precision_factor
    if q.weight_only:
        peak /= k.dequant_factor.get(q, 1.0)
    spec = workload.speculation
    ar_bytes = shape.hidden * 2.0
    layers2 = 2 * shape.layers
    extra = k.tp_allreduce_extra_s if tp > 1 else 0.0
    one = tp_allreduce_time_s(ar_bytes, gpu, tp, k.comm, None)
    two = tp_allreduce_time_s(2.0 * ar_bytes, gpu, tp, k.comm, None)
    r = _Replica(
        shape=shape,
        tp=tp,
        gpu=gpu,
        coeffs=coeffs,
        peak=peak,
        bw=bandwidth_bps(gpu) * realized,
        dense_read_bytes=dense_read,
        expert_bytes=experts * q.bytes_per_weight / tp,
        kv_per_token=kv_per_token,
        flops_per_token=2.0 * (active - emb_in) / tp,
        attn_flops_coeff=2.0 * shape.layers * h_q / tp,
        allreduce_bytes_per_token=ar_bytes,
        tau=spec.tokens_per_step if spec else 1.0,
        verify_tokens=spec.draft_tokens + 1 if spec else 1,
        draft_ratio=spec.draft_cost_ratio * spec.draft_tokens if spec else 0.0,
        chunk_tokens=workload.chunk_tokens,
        allreduce_extra_s=extra,
        eff_bw=bandwidth_bps(gpu) * realized * coeffs.decode_bw_efficiency,
        eff_peak=peak * coeffs.prefill_efficiency,
        comm_fixed_s=layers2 * (2.0 * one - two + extra),
        comm_per_token_s=layers2 * (two - one),
        prefill_chunk_s=shape.layers * k.prefill_layer_s,
        prefill_half_tokens=k.prefill_half_tokens,
        comm=k.comm,
    )
    return r, _memory(workload, gpu, shape, r, weights, k)


def _memory(  # noqa: PLR0917 - internal, every argument needed
    workload: ServingWorkload,
    gpu: GpuSpec,
    shape: LlmShape,
    r: _Replica,
    weights: float,
    k: ServingConstants,
) -> ServingMemory:
    capacity = gpu.capacity_gib * workload.gpu_memory_utilization
    ffn = shape.expert_ffn_hidden or shape.ffn_hidden or 4 * shape.hidden
    chunk = workload.chunk_tokens
    # the profiled peak of one step: a chunk's gate/up intermediates and residual stream in
    # 16 bits, and fp32 logits of every running sequence
    acts = chunk * (2.0 * ffn / r.tp + 4.0 * shape.hidden) * 2.0
    acts += workload.max_num_seqs * shape.vocab * 4.0 / r.tp
    runtime = k.runtime_overhead_gib
    kv_gib = capacity - weights / BYTES_PER_GIB - acts / BYTES_PER_GIB - runtime
    kv_tokens = max(0, int(kv_gib * BYTES_PER_GIB / r.kv_per_token) // BLOCK_TOKENS * BLOCK_TOKENS)
    per_request = workload.prompt.mean + workload.output.mean
    blocks = math.ceil(per_request / BLOCK_TOKENS) * BLOCK_TOKENS
    by_kv = kv_tokens // blocks
    limited = "kv-cache" if by_kv < workload.max_num_seqs else "max-num-seqs"
    conc = min(by_kv, workload.max_num_seqs)
    return ServingMemory(
        capacity_gib=capacity,
        weights_gib=weights / BYTES_PER_GIB,
        activations_gib=acts / BYTES_PER_GIB,
        runtime_gib=runtime,
        kv_cache_gib=kv_gib,
        kv_bytes_per_token=r.kv_per_token,
        kv_precision=kv_precision_on(workload, gpu),
        kv_tokens=kv_tokens,
        kv_at_max_concurrency_gib=conc * per_request * r.kv_per_token / BYTES_PER_GIB,
        tokens_per_request=per_request,
        max_concurrency=conc,
        limited_by=limited,
    )


def _decode_step_s(r: _Replica, batch: float, context: float) -> float:
    """One step of `batch` sequences decoding at mean `context` (no prefill tokens)."""
    if r.shape.is_moe and batch > 0:
        share = 1.0 - (1.0 - r.shape.experts_per_token / r.shape.experts) ** batch
    else:
        share = 0.0
    read = r.dense_read_bytes + r.expert_bytes * share + batch * context * r.kv_per_token
    t_mem = read / r.eff_bw
    tokens = batch * r.verify_tokens
    t_c = tokens * (r.flops_per_token + 2.0 * r.attn_flops_coeff * context) / r.eff_peak
    # the all-reduce is affine in its payload (`perf.tp_allreduce_time_s`): its two
    # coefficients were taken once per replica
    comm = r.comm_fixed_s + max(tokens, 1.0) * r.comm_per_token_s
    t = (t_mem if t_mem > t_c else t_c) + comm + r.coeffs.step_overhead_s
    return float(t * (1.0 + r.draft_ratio))


def _occupancy(r: _Replica, step_tokens: float) -> float:
    """The share of the prefill efficiency a step of `step_tokens` prompt tokens realises:
    T / (T + T_half), rising to 1 as the matmuls fill the GPU."""
    half = r.prefill_half_tokens
    return step_tokens / (step_tokens + half) if half > 0 and step_tokens > 0 else 1.0


def _prefill_compute_s(
    r: _Replica,
    prompt: float,
    cached: float,
    batch_tokens: float | None = None,
    *,
    matmuls_only: bool = False,
) -> float:
    """Extra step time of a prompt's new tokens: linear layers + causal attention over the
    whole prompt (the cached prefix is attended to but not recomputed) + their all-reduces.
    The matmuls run at the occupancy of the step's prompt tokens: this prompt's new tokens,
    or `batch_tokens` when prompts are prefilled together (a wave, a static batch), at most
    a chunk. The all-reduces pay the same fitted extra as decode's; `matmuls_only`: the
    compute alone (what overlaps a step's weight read)."""
    new = max(0.0, prompt - cached)
    flops = new * r.flops_per_token + r.attn_flops_coeff * (prompt * prompt - cached * cached)
    chunks = max(1, math.ceil(new / max(1, r.chunk_tokens)))
    step_tokens = min(float(r.chunk_tokens), batch_tokens if batch_tokens is not None else new)
    eff = r.peak * r.coeffs.prefill_efficiency * _occupancy(r, step_tokens)
    if matmuls_only:
        return flops / eff
    one = tp_allreduce_time_s(
        min(new, r.chunk_tokens) * r.allreduce_bytes_per_token, r.gpu, r.tp, r.comm, None
    )
    comm = chunks * 2 * r.shape.layers * (one + r.allreduce_extra_s)
    return flops / eff + comm + chunks * r.prefill_chunk_s


@dataclass(frozen=True, slots=True)
class _Prefill:
    """Per-request prefill moments over the prompt distribution."""

    mean_s: float
    mean_sq_s: float
    by_length: tuple[tuple[int, float, float], ...]  # (prompt tokens, probability, t_pf s)
    matmul_s: Mapping[int, float]  # prompt tokens -> its prefill's matmul time, s
    matmul_mean_s: float  # over the prompt distribution


def _prefill(r: _Replica, workload: ServingWorkload) -> _Prefill:
    h = workload.prefix_cache_hit_rate
    rows = tuple((p, w, _prefill_compute_s(r, float(p), h * p)) for p, w in workload.prompt.rows)
    matmul = {
        p: _prefill_compute_s(r, float(p), h * p, matmuls_only=True)
        for p, _ in workload.prompt.rows
    }
    return _Prefill(
        mean_s=sum(w * t for _, w, t in rows),
        mean_sq_s=sum(w * t * t for _, w, t in rows),
        by_length=rows,
        matmul_s=matmul,
        matmul_mean_s=sum(w * matmul[p] for p, w in workload.prompt.rows),
    )


def _quantile_prompt(dist: LengthDistribution, q: float) -> int:
    return dist.quantile(q)


@dataclass(frozen=True, slots=True)
class _State:
    rate: float
    batch: float
    step_s: float
    tpot_s: float
    stable: bool


def _state(r: _Replica, workload: ServingWorkload, pf: _Prefill, rate: float, cap: int) -> _State:
    """Solve B = X O TPOT(B), TPOT = step(B) / ((1 - u) tau), u = X t_pf."""
    out = workload.output.mean
    ctx = workload.prompt.mean + out / 2.0
    u = rate * pf.mean_s
    if u >= 1.0:
        return _State(rate, float(cap), math.inf, math.inf, False)

    def tpot(b: float) -> float:
        return _decode_step_s(r, b, ctx) / ((1.0 - u) * r.tau)

    def gap(b: float) -> float:
        return rate * out * tpot(b) - b

    if rate <= 0:
        return _State(0.0, 0.0, _decode_step_s(r, 1.0, ctx), tpot(1.0), True)
    if gap(float(cap)) > 0:
        return _State(rate, float(cap), _decode_step_s(r, cap, ctx), tpot(cap), False)
    lo, hi = 0.0, float(cap)
    for _ in range(_HALVINGS):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
    b = max(hi, 1.0)
    step = _decode_step_s(r, b, ctx)
    # the chunked-prefill budget: a step holds the decodes and at most chunk - B prompt
    # tokens, so a step lasts at most the decode step plus a full chunk's prefill; when the
    # prefills would need longer steps than that, the prompts arrive faster than the budget
    # admits them and the waiting queue grows without bound
    if step / (1.0 - u) > _full_step_s(r, workload, pf, b, step):
        return _State(rate, hi, step, tpot(b), False)
    return _State(rate, hi, step, tpot(b), True)


def _full_step_s(
    r: _Replica, workload: ServingWorkload, pf: _Prefill, batch: float, step_s: float
) -> float:
    """The longest step the budget allows: `batch` decodes and `chunk_tokens - batch` prompt
    tokens at the mean prompt's prefill time per token (its matmuls overlapping the step's
    weight read, as in `_point`'s service)."""
    room = r.chunk_tokens - batch
    new = workload.prompt.mean * (1.0 - workload.prefix_cache_hit_rate)
    if room <= 0 or new <= 0:
        return step_s
    weights_s = r.dense_read_bytes / r.eff_bw
    share = room / new  # prompts' worth in a full chunk
    return step_s + share * pf.mean_s - min(share * pf.matmul_mean_s, weights_s)


def _closed_wait(clients: int, es: float, es2: float, think_s: float) -> tuple[float, float]:
    """Mean prefill-queue wait and the prefill server's utilisation for `clients` closed-loop
    clients: mean-value analysis of the finite-source queue (Reiser and Lavenberg 1980; one
    FCFS station, the prefill service S with moments es, es2, and a delay station of
    `think_s`, the rest of a request's cycle). An arrival sees the network with one client
    fewer (the arrival theorem); with a non-exponential service the customer in service adds
    its residual E[S^2] / (2 E[S]) instead of a whole S (the usual MVA correction for
    FCFS with general service). One client never waits."""
    if clients <= 1 or es <= 0:
        return 0.0, 0.0
    residual = es2 / (2.0 * es)
    q = u = 0.0
    resp = es
    for n in range(1, clients + 1):
        resp = es + (q - u) * es + u * residual
        x = n / (resp + think_s)
        q, u = x * resp, x * es
    return max(0.0, resp - es), min(u, 1.0)


def _point(
    r: _Replica,
    workload: ServingWorkload,
    pf: _Prefill,
    st: _State,
    k: ServingConstants,
    *,
    clients: int | None,
    slot_wait_s: float = 0.0,
) -> ServingPoint:
    lat, thr = k.latency_log_interval, k.throughput_log_interval
    out = workload.output.mean
    if not st.stable:
        inf = Figure(value=math.inf, low=math.inf, high=math.inf)
        rate = Figure.of(st.rate, thr)
        return ServingPoint(
            concurrency=float(clients) if clients else math.inf,
            request_rate_per_s=rate,
            output_tokens_per_s=Figure.of(st.rate * out, thr),
            batch=st.batch,
            ttft_mean_ms=inf,
            ttft_p50_ms=inf,
            ttft_p99_ms=inf,
            tpot_p50_ms=inf,
            tpot_p99_ms=inf,
            e2e_p99_s=inf,
            stable=False,
        )
    x = st.rate

    # M/G/1 prefill queue: service = the request's own prefill, one engine step per chunk;
    # a chunk's matmuls share the step's weight read with the decodes (chunked prefill), so
    # only the compute beyond that read adds to the steps
    weights_s = r.dense_read_bytes / r.eff_bw

    def service(prompt: int, t_pf: float) -> float:
        new = prompt * (1.0 - workload.prefix_cache_hit_rate)
        room = max(1.0, r.chunk_tokens - st.batch)
        n = max(1, math.ceil(new / room))
        hidden = min(pf.matmul_s.get(prompt, 0.0), n * weights_s)
        return t_pf - hidden + n * st.step_s

    s_rows = [(w, service(p, t)) for p, w, t in pf.by_length]
    es = sum(w * s for w, s in s_rows)
    es2 = sum(w * s * s for w, s in s_rows)
    rho = min(x * es, 0.999999)
    overhead = r.coeffs.request_overhead_s + r.coeffs.first_token_s
    # a new request waits for the running step to end only if one runs: in a closed loop the
    # other C - 1 clients are in the engine (the arrival theorem); in the open loop the
    # requests in the engine are a Poisson count (M/G/infinity) of mean B + X E[S]
    if clients is None:
        w_mean = x * es2 / (2.0 * (1.0 - rho)) if x > 0 else 0.0
        busy = 1.0 - math.exp(-(st.batch + x * es))
    else:
        busy = 1.0 if clients > 1 else 0.0
        think = out * st.tpot_s + busy * st.step_s / 2.0 + overhead
        w_mean, util = _closed_wait(clients, es, es2, think)
        rho = min(util, 0.999999)
    residual_step = busy * st.step_s / 2.0

    def wait(q: float) -> float:
        if rho <= 0 or w_mean <= 0 or 1.0 - q >= rho:
            return 0.0
        return (w_mean / rho) * math.log(rho / (1.0 - q))

    def ttft(q: float) -> float:
        p = _quantile_prompt(workload.prompt, q)
        t_pf = next(t for pp, _, t in pf.by_length if pp == p)
        return residual_step + wait(q) + service(p, t_pf) + slot_wait_s + overhead

    ttft_mean = residual_step + w_mean + es + slot_wait_s + overhead

    # TPOT spread: prefills landing during a request's decode (compound Poisson)
    m = x * out * st.tpot_s
    base = st.step_s / r.tau

    def tpot(z: float) -> float:
        extra = (m * pf.mean_s + z * math.sqrt(m * pf.mean_sq_s)) / max(out, 1.0)
        return base + max(0.0, extra) / r.tau

    t99 = ttft(0.99)
    tp99 = tpot(Z_99)
    e2e = t99 + workload.output.quantile(0.99) * tp99
    conc = float(clients) if clients is not None else x * (ttft(0.5) + out * st.tpot_s)
    return ServingPoint(
        concurrency=conc,
        request_rate_per_s=Figure.of(x, thr),
        output_tokens_per_s=Figure.of(x * out, thr),
        batch=st.batch,
        ttft_mean_ms=Figure.of(ttft_mean * 1e3, k.ttft_log_interval),
        ttft_p50_ms=Figure.of(ttft(0.5) * 1e3, k.ttft_log_interval),
        ttft_p99_ms=Figure.of(t99 * 1e3, k.ttft_log_interval),
        tpot_p50_ms=Figure.of(tpot(0.0) * 1e3, lat),
        tpot_p99_ms=Figure.of(tp99 * 1e3, lat),
        e2e_p99_s=Figure.of(e2e, k.ttft_log_interval),
    )


def _saturation_rate(r: _Replica, workload: ServingWorkload, pf: _Prefill, cap: int) -> float:
    """The largest stable Poisson rate of one replica (bisection on stability)."""
    hi = 1.0 / max(pf.mean_s, 1e-12)
    lo = 0.0
    for _ in range(_HALVINGS):
        mid = (lo + hi) / 2.0
        st = _state(r, workload, pf, mid, cap)
        lo, hi = (mid, hi) if st.stable else (lo, mid)
    return lo


def _closed_loop(  # noqa: PLR0917 - internal, every argument needed
    r: _Replica,
    workload: ServingWorkload,
    pf: _Prefill,
    clients: int,
    cap: int,
    k: ServingConstants,
    x_sat: float | None = None,
) -> ServingPoint:
    """`clients` closed-loop clients: the rate X with X x E2E(X) = clients (bisection), the
    clients beyond what the replica holds waiting for a slot (Little's law). With one prompt
    and one output length (a benchmark's fixed lengths) and room for every client, the
    clients move in lock-step instead (`_lockstep`)."""
    if len(workload.prompt.rows) == 1 and len(workload.output.rows) == 1:
        wave = _lockstep(r, workload, pf, min(clients, cap), k)
        if clients <= cap:
            return wave
        # the clients beyond the replica's room wait for a slot: the wave of `cap` keeps
        # its rate, the rest queue in front of it (Little's law)
        return _with_slot_wait(wave, (clients - cap) / wave.request_rate_per_s.value, clients, k)
    out = workload.output.mean
    if x_sat is None:
        x_sat = _saturation_rate(r, workload, pf, cap)

    def in_system(x: float) -> float:
        st = _state(r, workload, pf, x, cap)
        if not st.stable:
            return math.inf
        p = _point(r, workload, pf, st, k, clients=clients)
        return x * (p.ttft_mean_ms.value / 1e3 + out * st.tpot_s)  # Little: means

    lo, hi = 0.0, x_sat
    for _ in range(_HALVINGS):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if in_system(mid) < clients else (lo, mid)
    x = lo
    st = _state(r, workload, pf, x, cap)
    if not st.stable or x <= 0:
        st = _state(r, workload, pf, x * 0.999, cap)
    held = in_system(x)
    slot_wait = (clients - held) / x if math.isfinite(held) and held < clients and x > 0 else 0.0
    # only a shortfall of more than 1 % is a slot wait (the bisection's own tolerance)
    slot_wait = slot_wait if clients - held > 0.01 * clients else 0.0
    return _point(r, workload, pf, st, k, clients=clients, slot_wait_s=slot_wait)


def _with_slot_wait(
    p: ServingPoint, wait_s: float, clients: int, k: ServingConstants
) -> ServingPoint:
    """`p` with every request's TTFT (and end-to-end) longer by `wait_s`, at `clients`."""
    t = k.ttft_log_interval
    return replace(
        p,
        concurrency=float(clients),
        ttft_mean_ms=Figure.of(p.ttft_mean_ms.value + wait_s * 1e3, t),
        ttft_p50_ms=Figure.of(p.ttft_p50_ms.value + wait_s * 1e3, t),
        ttft_p99_ms=Figure.of(p.ttft_p99_ms.value + wait_s * 1e3, t),
        e2e_p99_s=Figure.of(p.e2e_p99_s.value + wait_s, t),
    )


def _lockstep(
    r: _Replica, workload: ServingWorkload, pf: _Prefill, clients: int, k: ServingConstants
) -> ServingPoint:
    """Closed loop with fixed lengths: requests that start together finish together, so the
    `clients` requests travel as one wave. Their prompts are prefilled first come first
    served in chunks of `chunk_tokens` (request i's first token at the end of the chunk
    holding its last prompt token), then all decode together for O - 1 steps (a request that
    finished its prefill early decodes next to the later chunks, which its TPOT carries).
    Each chunk is one engine step: the decode step of the requests already prefilled, plus
    the chunk's share of the wave's prefill beyond the weight read it overlaps (the service
    of `_point`), so one client's TTFT is the open loop's at a vanishing rate."""
    lat, thr = k.latency_log_interval, k.throughput_log_interval
    prompt, out = workload.prompt.rows[0][0], max(1, workload.output.rows[0][0])
    new = prompt * (1.0 - workload.prefix_cache_hit_rate)
    chunk = max(1, r.chunk_tokens)
    total = clients * new
    n_chunks = max(1, math.ceil(total / chunk))
    weights_s = r.dense_read_bytes / r.eff_bw
    ctx = prompt + out / 2.0
    # the wave's prompts share each chunk: its matmuls run at the chunk's occupancy
    wave_pf = _prefill_compute_s(r, prompt, prompt - new, batch_tokens=total)
    wave_mm = _prefill_compute_s(r, prompt, prompt - new, batch_tokens=total, matmuls_only=True)

    def chunk_of(i: int) -> int:  # 1-based request -> the chunk that ends its prefill
        return max(1, min(n_chunks, math.ceil(i * new / chunk - 1e-9)))

    times = []
    for j in range(1, n_chunks + 1):
        share = (min(total, j * chunk) - (j - 1) * chunk) / max(new, 1e-9)  # prompts' worth
        decoding = sum(1 for i in range(1, clients + 1) if chunk_of(i) < j)
        hidden = min(share * wave_mm, weights_s)
        times.append(_decode_step_s(r, float(decoding), ctx) + share * wave_pf - hidden)
    done = list(itertools.accumulate(times))
    step = _decode_step_s(r, float(clients), ctx) / r.tau
    overhead = r.coeffs.request_overhead_s + r.coeffs.first_token_s

    def ttft(i: int) -> float:
        return done[chunk_of(i) - 1] + overhead

    def tpot(i: int) -> float:
        if out <= 1:
            return step
        return step + (done[-1] - done[chunk_of(i) - 1]) / (out - 1)

    cycle = done[-1] + (out - 1) * step + overhead
    x = clients / cycle
    mean_ttft = sum(ttft(i) for i in range(1, clients + 1)) / clients
    p50, p99 = max(1, math.ceil(0.5 * clients)), max(1, math.ceil(0.99 * clients))
    return ServingPoint(
        concurrency=float(clients),
        request_rate_per_s=Figure.of(x, thr),
        output_tokens_per_s=Figure.of(x * out, thr),
        batch=float(clients),
        ttft_mean_ms=Figure.of(mean_ttft * 1e3, k.ttft_log_interval),
        ttft_p50_ms=Figure.of(ttft(p50) * 1e3, k.ttft_log_interval),
        ttft_p99_ms=Figure.of(ttft(p99) * 1e3, k.ttft_log_interval),
        tpot_p50_ms=Figure.of(tpot(p50) * 1e3, lat),
        tpot_p99_ms=Figure.of(tpot(1) * 1e3, lat),
        e2e_p99_s=Figure.of(cycle, k.ttft_log_interval),
    )


def _check_load(
    *, levels: tuple[int, ...] = (), rate: float | None = None, replicas: int = 1
) -> None:
    """One InputError line for a load the model cannot take: clients below 1, a request rate
    that is negative or not finite, fewer than one replica."""
    bad = [c for c in levels if not isinstance(c, int) or c < 1]
    if bad:
        raise InputError(f"concurrency {bad[0]!r}: closed-loop clients must be whole numbers >= 1")
    if rate is not None and not (math.isfinite(rate) and rate >= 0):
        raise InputError(f"request rate {rate!r} req/s: it must be a finite number >= 0")
    if not isinstance(replicas, int) or replicas < 1:
        raise InputError(f"replicas {replicas!r}: a fleet needs at least 1 replica")


def _levels(max_concurrency: int) -> tuple[int, ...]:
    levels = [1]
    while levels[-1] * 2 < max_concurrency:
        levels.append(levels[-1] * 2)
    if max_concurrency > levels[-1]:
        levels.append(max_concurrency)
    return tuple(levels)


def serving_memory(
    workload: ServingWorkload,
    gpu: GpuSpec,
    tensor_parallel: int = 1,
    constants: ServingConstants | None = None,
) -> ServingMemory:
    """Memory per GPU of one replica (raises InputError for a quantization the GPU lacks)."""
    return _replica(workload, gpu, tensor_parallel, constants or load_serving_constants())[1]


def serving_curve(
    workload: ServingWorkload,
    gpu: GpuSpec,
    tensor_parallel: int = 1,
    *,
    levels: tuple[int, ...] | None = None,
    constants: ServingConstants | None = None,
) -> ServingCurve:
    """The throughput-latency curve of one replica of `tensor_parallel` GPUs. A replica that
    cannot hold one request (weights + activations fill the memory) has no rows."""
    _check_load(levels=levels or ())
    k = constants or load_serving_constants()
    r, mem = _replica(workload, gpu, tensor_parallel, k)
    pf = _prefill(r, workload)
    lat = k.latency_log_interval
    ctx = workload.prompt.mean + workload.output.mean / 2.0
    rows: tuple[ServingPoint, ...] = ()
    if mem.fits:
        chosen = levels or _levels(mem.max_concurrency)
        cap = mem.max_concurrency
        x_sat = _saturation_rate(r, workload, pf, cap)
        rows = tuple(_closed_loop(r, workload, pf, c, cap, k, x_sat) for c in chosen)
    alone = _prefill_compute_s(
        r, workload.prompt.mean, workload.prefix_cache_hit_rate * workload.prompt.mean
    )
    step1 = _decode_step_s(r, 1.0, ctx)
    notes = []
    if not mem.fits:
        notes.append(
            f"does not fit: weights {mem.weights_gib:.1f} GiB + activations "
            f"{mem.activations_gib:.1f} GiB + runtime {mem.runtime_gib:.1f} GiB leave no KV "
            f"cache in {mem.capacity_gib:.1f} GiB per GPU (more GPUs per replica, or a narrower "
            "quantization)"
        )
    return ServingCurve(
        workload=workload,
        gpu=gpu.name,
        tensor_parallel=tensor_parallel,
        memory=mem,
        rows=rows,
        prefill_ms=Figure.of((alone + step1) * 1e3, k.ttft_log_interval),
        decode_step_ms=Figure.of(step1 * 1e3, lat),
        engine_basis=r.coeffs.basis,
        notes=tuple(notes),
    )


def saturation_point(
    workload: ServingWorkload,
    gpu: GpuSpec,
    tensor_parallel: int = 1,
    *,
    constants: ServingConstants | None = None,
) -> ServingPoint:
    """One replica at its highest stable Poisson rate (an offline run with every request
    queued: the engine's maximum throughput); latencies there are the queue's, not usable."""
    k = constants or load_serving_constants()
    r, mem = _replica(workload, gpu, tensor_parallel, k)
    pf = _prefill(r, workload)
    if not mem.fits:
        return _point(r, workload, pf, _State(0.0, 0.0, math.inf, math.inf, False), k, clients=None)
    x = _saturation_rate(r, workload, pf, mem.max_concurrency)
    return _point(r, workload, pf, _state(r, workload, pf, x, mem.max_concurrency), k, clients=None)


def _slo_misses(p: ServingPoint, slo: ServingSlo) -> list[tuple[str, float]]:
    """(SLO name, value / target) of every SLO given."""
    pairs = [
        ("ttft_p50_ms", p.ttft_p50_ms.value, slo.ttft_p50_ms),
        ("ttft_p99_ms", p.ttft_p99_ms.value, slo.ttft_p99_ms),
        ("tpot_ms", p.tpot_p99_ms.value, slo.tpot_ms),
        ("e2e_p99_s", p.e2e_p99_s.value, slo.e2e_p99_s),
    ]
    return [(name, value / target) for name, value, target in pairs if target is not None]


def operating_point(
    workload: ServingWorkload,
    gpu: GpuSpec,
    tensor_parallel: int = 1,
    *,
    request_rate_per_s: float,
    replicas: int = 1,
    constants: ServingConstants | None = None,
) -> ServingPoint:
    """One replica's point when `replicas` replicas share a Poisson rate (random routing:
    each sees a Poisson rate / replicas)."""
    _check_load(rate=request_rate_per_s, replicas=replicas)
    k = constants or load_serving_constants()
    r, mem = _replica(workload, gpu, tensor_parallel, k)
    pf = _prefill(r, workload)
    cap = max(mem.max_concurrency, 0)
    st = (
        _state(r, workload, pf, request_rate_per_s / replicas, cap)
        if cap
        else _State(request_rate_per_s / replicas, 0.0, math.inf, math.inf, False)
    )
    return _point(r, workload, pf, st, k, clients=None)


def max_load_meeting_slo(
    workload: ServingWorkload,
    gpu: GpuSpec,
    tensor_parallel: int = 1,
    *,
    replicas: int = 1,
    constants: ServingConstants | None = None,
) -> SloLoad:
    """The highest Poisson request rate `replicas` replicas of `tensor_parallel` GPUs sustain
    with every SLO of `workload.slo` met (each latency grows with the rate, so bisection)."""
    _check_load(replicas=replicas)
    k = constants or load_serving_constants()
    r, mem = _replica(workload, gpu, tensor_parallel, k)
    pf = _prefill(r, workload)
    thr = k.throughput_log_interval
    cap = mem.max_concurrency
    if not mem.fits:
        st = _State(0.0, 0.0, math.inf, math.inf, False)
        p = _point(r, workload, pf, st, k, clients=None)
        return SloLoad(
            request_rate_per_s=Figure.of(0.0, thr),
            per_replica_rate_per_s=0.0,
            replicas=replicas,
            limiting="memory",
            met=False,
            at=p,
            miss=math.inf,
        )
    x_sat = _saturation_rate(r, workload, pf, cap)
    slo = workload.slo

    def ok(x: float) -> bool:
        st = _state(r, workload, pf, x, cap)
        if not st.stable:
            return False
        return all(
            ratio <= 1.0
            for _, ratio in _slo_misses(_point(r, workload, pf, st, k, clients=None), slo)
        )

    tiny = x_sat * 1e-6
    if slo.any and not ok(tiny):
        p = _point(r, workload, pf, _state(r, workload, pf, tiny, cap), k, clients=None)
        name, ratio = max(_slo_misses(p, slo), key=lambda t: t[1])
        return SloLoad(
            request_rate_per_s=Figure.of(0.0, thr),
            per_replica_rate_per_s=0.0,
            replicas=replicas,
            limiting=name,
            met=False,
            at=p,
            miss=ratio,
        )
    lo, hi = tiny, x_sat
    for _ in range(_HALVINGS):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    x = lo
    p = _point(r, workload, pf, _state(r, workload, pf, x, cap), k, clients=None)
    # the SLO that binds: the one closest to its target at the highest rate met
    misses = _slo_misses(p, slo)
    limiting = "capacity"
    if misses:
        name, ratio = max(misses, key=lambda t: t[1])
        if ratio > 0.98:
            limiting = name
    return SloLoad(
        request_rate_per_s=Figure.of(x * replicas, thr),
        per_replica_rate_per_s=x,
        replicas=replicas,
        limiting=limiting,
        met=True,
        at=p,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingEstimate:
    """Everything `gpurent estimate --serve` shows: one replica's curve, the highest load the
    `replicas` replicas sustain within the SLOs, and, when the workload asks for a rate, the
    point at that rate (split over the replicas) and the replicas that rate needs."""

    curve: ServingCurve
    replicas: int
    load: SloLoad
    requested: ServingPoint | None  # one replica's point at the asked rate / replicas, or
    # at the asked concurrency (clients spread evenly, rounded up, over the replicas)
    replicas_needed: int | None  # for the asked rate within the SLOs (None: no rate asked,
    # or no load meets them)


def estimate_serving(
    workload: ServingWorkload,
    gpu: GpuSpec,
    tensor_parallel: int = 1,
    *,
    replicas: int = 1,
    constants: ServingConstants | None = None,
) -> ServingEstimate:
    """The serving estimate of `replicas` replicas of `tensor_parallel` GPUs each."""
    _check_load(replicas=replicas)
    k = constants or load_serving_constants()
    curve = serving_curve(workload, gpu, tensor_parallel, constants=k)
    load = max_load_meeting_slo(workload, gpu, tensor_parallel, replicas=replicas, constants=k)
    requested = None
    needed = None
    rate = workload.request_rate_per_s
    if rate is not None and curve.memory.fits:
        requested = operating_point(
            workload, gpu, tensor_parallel, request_rate_per_s=rate, replicas=replicas, constants=k
        )
        if load.met and load.per_replica_rate_per_s > 0:
            needed = max(1, math.ceil(rate / load.per_replica_rate_per_s * (1 - 1e-9)))
    clients = workload.concurrency
    if clients is not None and curve.memory.fits:
        per_replica = max(1, math.ceil(clients / replicas))
        requested = serving_curve(
            workload, gpu, tensor_parallel, levels=(per_replica,), constants=k
        ).rows[0]
    return ServingEstimate(
        curve=curve, replicas=replicas, load=load, requested=requested, replicas_needed=needed
    )


__all__ = [
    "BLOCK_TOKENS",
    "EngineCoeffs",
    "Figure",
    "ServingConstants",
    "ServingCurve",
    "ServingEstimate",
    "ServingMemory",
    "ServingPoint",
    "SloLoad",
    "check_serving",
    "estimate_serving",
    "kv_precision_on",
    "load_serving_constants",
    "max_load_meeting_slo",
    "operating_point",
    "parse_serving_constants",
    "saturation_point",
    "serving_curve",
    "serving_memory",
    "supported_quants",
]
