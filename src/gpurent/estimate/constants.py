"""The fitted constants of the time model, read from `estimate/data/calibration.json`.

That file is written by `benchmarks/fit_estimator.py` from the measured tables and records its
provenance (source files, commits, fit command, date). Nothing here reads the reference data.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from gpurent.catalog.precision import Precision
from gpurent.errors import DataError

_FILE = "calibration.json"
TUNED_FILE = "tuned_stack.json"  # the `tuned` stack (benchmarks/fit_tuned_stack.py)


@dataclass(frozen=True, slots=True, kw_only=True)
class FamilyCoeffs:
    """step_time_s = a x tensor_s + b x traffic_s + e x sm_traffic_s + d x cuda_core_s + c_s
    + c_sample_s x batch (a, b >= 1; e >= 0; the last two do not speed up with the GPU:
    per-step launch and host work, and per-sample host work such as decoding and augmenting
    inputs).

    On n > 1 GPUs of one node the step grows by comm_scale x (exposed gradient all-reduce s)
    + sync_s: comm_scale says how much of the all-reduce this model's training script exposes
    (0 when its throughput does not depend on the gradient bytes at all), sync_s a per-step
    multi-GPU cost that no byte count explains (stragglers of variable-length batches, per-rank
    host work). Both are fitted per model on the multi-GPU rows, comm_scale regularised toward
    the value pooled over all models."""

    a: float
    b: float
    c_s: float
    d: float = 0.0
    c_sample_s: float = 0.0
    comm_scale: float = 1.0
    sync_s: float = 0.0
    e: float = 0.0  # x SM-side traffic s (bytes over SM count x clock; perf.family_features)
    half_at_full_rate: bool = False
    """The model's AMP runs measured at its fp32/TF32 speed on every reference GPU (AMP never
    reached the fp16 tensor-core path in that training script: WaveGlow and Tacotron 2 in the
    Lambda suite, AMP / FP32 = 0.99-1.08 on 10 GPUs), so its half-precision rows are timed at
    the fp32 (TF32) rates. Set by the fit from the reference data, never by hand."""

    def feature_precision(self, precision: Precision) -> Precision:
        """The precision whose rates time this model's step (see `half_at_full_rate`)."""
        return Precision.FP32 if self.half_at_full_rate and precision.is_half else precision


@dataclass(frozen=True, slots=True, kw_only=True)
class LlmCoeffs:
    """Decoder-LLM training: a_gemm, a_attn scale the time of matmul and attention FLOPs at peak,
    k_mem the time of activation traffic at peak bandwidth, c_s a per-micro-batch overhead."""

    a_gemm: float
    a_attn: float
    k_mem: float
    c_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CommCoeffs:
    """Gradient all-reduce: achievable share of link bandwidth, how much hides behind backward,
    and a per-doubling synchronisation loss fitted on multi-GPU rows."""

    nvlink_efficiency: float  # ring bus bandwidth / unidirectional NVLink (RESEARCH §6: ~0.8)
    pcie_efficiency: float  # of the x16 link's one-way bandwidth, with P2P
    no_p2p_factor: float  # GeForce cards without P2P: all-reduce through host memory
    overlap: float  # share of backward time that hides communication
    sync_per_doubling: float  # throughput kept per doubling of GPUs beyond comm (<= 1)
    default_inter_node_gbps: float  # Gbit/s per node when the caller gives none
    inter_node_efficiency: float
    # data-parallel (DDP) all-reduce of the non-LLM training scripts: achieved bus bandwidth
    # never above this, GB/s, whatever the link (0: no cap). Lambda's NGC runs reach 2-15 GB/s
    # on NVLink and PCIe alike; the LLM (FSDP) path does not use it.
    ddp_bus_gbps_cap: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class StackCoeffs:
    """What one software stack (`gpurent.workload.Stack`) changes in a non-LLM training estimate.

    `comm`: the data-parallel communication constants measured on that stack; `scaling`: per
    model key (comm_scale, sync_s) of the n-GPU step (see `FamilyCoeffs`), `default_scaling` for
    models without multi-GPU rows; empty `scaling` means the link-only model (comm_scale 1,
    sync_s 0). `speed`: per model key, single-GPU throughput relative to the stack the roofline
    terms were fitted on (Lambda's NGC containers; 1.0 where no measurement says otherwise).

    `sync_relative`: the second `scaling` value is a share of the one-GPU step per doubling of
    GPUs (sync = share x one-GPU step x log2 n: stragglers cost in proportion to the step they
    straggle on, and each level of the reduction waits for its slowest member) instead of
    seconds per step."""

    description: str
    comm: CommCoeffs
    scaling: dict[str, tuple[float, float]] = field(default_factory=dict)
    default_scaling: tuple[float, float] = (1.0, 0.0)
    speed: dict[str, float] = field(default_factory=dict)
    sync_relative: bool = False
    # per `speed` key: (log_low, log_high, rows) of log(measured / predicted) on the stack's
    # own out-of-fit validation (the `tuned` stack: leave-one-MLPerf-round-out), or none
    intervals: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    # decoder-LLM pretraining only (the `llm` speed key): the speed shrinks for layers smaller
    # than `size_ref_params` active weights per GPU (a layer's active parameters / tp) as
    # (size / ref) ** `size_exponent`; 0 for either: no size dependence
    size_ref_params: float = 0.0
    size_exponent: float = 0.0
    # decoder-LLM training on NVIDIA GPUs: the share of the tensor-parallel collectives that
    # hides behind the GEMMs they feed (Transformer Engine's userbuffers, `ub_tp_comm_overlap`,
    # which NVIDIA's MLPerf configs switch on with TP_COMM_OVERLAP=1; AMD's MI300X config sets
    # it False, so AMD GPUs keep all of it); 0: every collective on the critical path
    tp_comm_overlap: float = 0.0
    # decoder-LLM training with context parallelism (cp > 1): the attention kernel's time is
    # stretched by 1 + `cp_attention_overhead` x (cp - 1) / cp (the ring splits each layer's
    # attention into cp chunked kernel calls and merges their partial softmaxes); fitted on the
    # MLPerf rows with cp > 1, 0: the attention as without context parallelism
    cp_attention_overhead: float = 0.0
    # MoE under expert parallelism (ep > 1), per MoE layer per micro-batch (forward + backward),
    # fitted on benchmarks/data/mlperf_moe_fit.csv by benchmarks/fit_moe_ep_overhead.py (which
    # picks the form by leave-one-row-out; the terms it leaves out stay neutral):
    # `moe_ep_layer_s` fixed seconds (dispatch/combine kernel and routing-metadata latency, the
    # grouped-GEMM launches), `moe_ep_token_s` seconds per routed token copy a GPU holds
    # (permutation, unpermutation, padding: tokens x top-k / tp), and `moe_ep_a2a_scale`, the
    # share of the byte-priced all-to-all left on the critical path (1: all of it; below 1: the
    # recipe overlaps or outruns the byte price); 0, 0 and 1 where nothing was fitted.
    # `moe_ep_per_step`: the fixed and per-token costs are paid once per step, not once per
    # micro-batch (with several micro-batches per step the recipe's expert-parallel overlap
    # hides them behind another micro-batch's compute)
    moe_ep_layer_s: float = 0.0
    moe_ep_token_s: float = 0.0
    moe_ep_a2a_scale: float = 1.0
    moe_ep_per_step: bool = False

    def speed_key(self, key: str, architecture: str) -> str:
        """The `speed` (and `intervals`) key for model key `key` on `architecture`: its own
        factor "KEY@ARCH" where the stack fitted one, else the pooled "KEY"."""
        own = f"{key}@{architecture}"
        return own if own in self.speed else key

    def speed_of(self, key: str, architecture: str) -> float:
        """One-GPU speed relative to the roofline's stack (1.0 where nothing was measured)."""
        return self.speed.get(self.speed_key(key, architecture), 1.0)

    def size_factor(self, layer_params_per_gpu: float) -> float:
        """The share of the `llm` speed a model realizes whose layers hold
        `layer_params_per_gpu` active weights per GPU: 1 at or above `size_ref_params`, else
        (size / ref) ** `size_exponent` (1 where no size dependence was fitted)."""
        if self.size_ref_params <= 0.0 or self.size_exponent == 0.0:
            return 1.0
        return float(min(1.0, layer_params_per_gpu / self.size_ref_params) ** self.size_exponent)

    def sync_s(self, sync: float, single_step_s: float, num_gpus: int) -> float:
        """Seconds of per-step synchronisation for the `scaling` value `sync`."""
        if self.sync_relative:
            return sync * single_step_s * math.log2(num_gpus)
        return sync


@dataclass(frozen=True, slots=True, kw_only=True)
class Constants:
    """The throughput model's fitted coefficients, as loaded from the bundled constants file."""

    families: dict[str, dict[str, FamilyCoeffs]]  # model key -> "half" | "full" -> coeffs
    default_family: dict[str, FamilyCoeffs]
    llm: LlmCoeffs
    comm: CommCoeffs
    decode_bw_efficiency: float  # inference decode: achieved share of HBM bandwidth (assumed)
    # achieved share of peak FLOPs (bandwidth) ~ (peak / A100's peak) ** -exponent: one shared
    # exponent for all models, chosen by cross-validation (see perf.family_features)
    peak_exponent: float = 0.0
    bandwidth_exponent: float = 0.0
    provenance: dict[str, Any] = field(default_factory=dict)
    # software stack name -> its constants; a stack missing here uses `comm` and the families'
    # own comm_scale/sync_s (calibration files written before stacks existed)
    stacks: dict[str, StackCoeffs] = field(default_factory=dict)
    # compute and memory times combine as (t_c^p + t_m^p)^(1/p): 1 = sum, large = max
    roofline_p: float = 1.0
    # bytes per SM-cycle capping the memory rate: traffic moves at min(bandwidth, cap x SM count
    # x clock); 0 = no cap (see perf.family_features)
    sm_cap_bytes_per_cycle: float = 0.0
    # FLOP per SM-cycle of the non-tensor (CUDA-core) work; 0 = the GPU's datasheet fp32 peak
    # (see perf.cuda_rate_flops)
    cuda_flops_per_sm_cycle: float = 0.0

    def stack(self, name: str) -> StackCoeffs | None:
        """The constants of software stack `name`, or None when the file has none for it."""
        return self.stacks.get(name)

    def family(self, key: str, half: bool) -> FamilyCoeffs:
        """Coefficients of model family key at half or full precision (default if unknown)."""
        cls = "half" if half else "full"
        table = self.families.get(key, self.default_family)
        return table.get(cls) or self.default_family[cls]


def _coeffs(d: dict[str, Any]) -> FamilyCoeffs:
    return FamilyCoeffs(
        a=float(d["a"]),
        b=float(d["b"]),
        c_s=float(d["c_s"]),
        d=float(d.get("d", 0.0)),
        c_sample_s=float(d.get("c_sample_s", 0.0)),
        comm_scale=float(d.get("comm_scale", 1.0)),
        sync_s=float(d.get("sync_s", 0.0)),
        e=float(d.get("e", 0.0)),
        half_at_full_rate=bool(d.get("half_at_full_rate", False)),
    )


def _stack(d: dict[str, Any]) -> StackCoeffs:
    relative = bool(d.get("sync_relative", False))
    sync = "sync_share_per_doubling" if relative else "sync_s"
    default = d.get("default_scaling", {})
    return StackCoeffs(
        description=str(d.get("description", "")),
        comm=CommCoeffs(**{k: float(v) for k, v in d["comm"].items()}),
        scaling={
            k: (float(v["comm_scale"]), float(v[sync])) for k, v in d.get("scaling", {}).items()
        },
        default_scaling=(float(default.get("comm_scale", 1.0)), float(default.get(sync, 0.0))),
        speed={k: float(v) for k, v in d.get("speed", {}).items()},
        sync_relative=relative,
        intervals={
            k: (float(v["log_low"]), float(v["log_high"]), int(v["rows"]))
            for k, v in d.get("intervals", {}).items()
        },
        size_ref_params=float(d.get("llm_size", {}).get("ref_layer_params_per_gpu", 0.0)),
        size_exponent=float(d.get("llm_size", {}).get("exponent", 0.0)),
        tp_comm_overlap=float(d.get("tp_comm_overlap", 0.0)),
        cp_attention_overhead=float(d.get("cp_attention_overhead", 0.0)),
        moe_ep_layer_s=float(d.get("moe_ep", {}).get("layer_s", 0.0)),
        moe_ep_token_s=float(d.get("moe_ep", {}).get("token_s", 0.0)),
        moe_ep_a2a_scale=float(d.get("moe_ep", {}).get("a2a_scale", 1.0)),
        moe_ep_per_step=bool(d.get("moe_ep", {}).get("per_step", False)),
    )


def parse_constants(raw: dict[str, Any]) -> Constants:
    """Build `Constants` from the JSON document (raises DataError on a malformed one)."""
    try:
        return Constants(
            families={
                k: {cls: _coeffs(v) for cls, v in classes.items()}
                for k, classes in raw["families"].items()
            },
            default_family={cls: _coeffs(v) for cls, v in raw["default_family"].items()},
            llm=LlmCoeffs(**{k: float(v) for k, v in raw["llm"].items()}),
            comm=CommCoeffs(**{k: float(v) for k, v in raw["comm"].items()}),
            decode_bw_efficiency=float(raw["decode_bw_efficiency"]),
            provenance=dict(raw.get("provenance", {})),
            peak_exponent=float(raw.get("gpu_scaling", {}).get("peak_exponent", 0.0)),
            bandwidth_exponent=float(raw.get("gpu_scaling", {}).get("bandwidth_exponent", 0.0)),
            stacks={k: _stack(v) for k, v in raw.get("stacks", {}).items()},
            roofline_p=float(raw.get("roofline_p", 1.0)),
            sm_cap_bytes_per_cycle=float(raw.get("sm_cap_bytes_per_cycle", 0.0)),
            cuda_flops_per_sm_cycle=float(raw.get("cuda_flops_per_sm_cycle", 0.0)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{_FILE}: malformed estimator constants ({exc!r}); refit them") from None


def load_constants() -> Constants:
    """The bundled fitted constants, parsed afresh on each call (no module-level cache: the
    edge builds one `Estimator` and it holds them)."""
    data = resources.files("gpurent.estimate.data")
    raw = json.loads(data.joinpath(_FILE).read_text(encoding="utf-8"))
    # the `tuned` stack is fitted apart (benchmarks/fit_tuned_stack.py, on MLPerf Training
    # results) and kept in its own file, so refitting the reference constants keeps it
    tuned = data.joinpath(TUNED_FILE)
    if tuned.is_file():
        raw.setdefault("stacks", {})["tuned"] = json.loads(tuned.read_text(encoding="utf-8"))
    return parse_constants(raw)
