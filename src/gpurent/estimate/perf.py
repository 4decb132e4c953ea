"""The time model: roofline features of one step, and the communication of multi-GPU steps.

Non-LLM models (one coefficient set per model and precision class, fitted across GPUs):

    step_s = a * F / P  +  b * D / W  +  e * D / R_sm  +  d * V / P_cuda  +  c_s
                                                          (a, b >= 1; d, e, c_s >= 0)

F = training FLOPs of the micro-batch (3x forward, +1 forward with checkpointing), P = the GPU's
dense peak for the precision (FLOP/s), D = bytes of activations written once plus 24 B/param of
weight, gradient and optimizer traffic, W = memory bandwidth (B/s), V = 1 % of F as nominal
non-tensor work (normalisation, activations, optimizer, indexing) on the CUDA cores, P_cuda =
the rate at which the SMs (AMD: compute units) issue it, 128 FLOP per SM-cycle x SM count x
clock (round 9,
`perf.cuda_rate_flops`; why an RTX 4090 with half an A100's bandwidth reaches 0.8x its
ResNet-50 speed, and why Hopper's doubled FP32 lanes do not triple it again), R_sm = SM count x
boost clock (the SM-side rate of memory-bound kernels; e = 0 where the fit finds no use for
it), c_s = a per-step time that no GPU spec explains (kernel launches, host work, data
pipeline). A sum, not a max: in these models
many small kernels alternate between compute and memory bound, so the times add (the Habitat and
NeuSight papers make the same observation per kernel). With a, b >= 1 the predicted throughput
never exceeds the roofline of the counted work.

Decoder LLMs (one coefficient set for all shapes, fitted on MosaicML's A100 runs):

    step_s = a_gemm * F_mm / P + a_attn * F_attn / P + k_mem * D_act / W + c_s

F_mm = 6 N T (8 N T with recomputation) of matmuls, F_attn = 6 L h s T (8 with recomputation)
of causal attention (the lower triangle only, `zoo.llm_attention_flops_per_token`; round 11),
D_act = Korthikanti's 34 s b h bytes per layer (FlashAttention). Because D_act/W does not shrink
with P, the model's MFU drops on GPUs whose FLOPs grew faster than their bandwidth, as measured
(RESEARCH §2: A100 51-56 %, H100 40-48 %).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpurent.catalog.gpu import GpuSpec
from gpurent.catalog.precision import Precision
from gpurent.estimate.constants import CommCoeffs
from gpurent.estimate.efficiency import realized_efficiency
from gpurent.units import BYTES_PER_GB, FLOPS_PER_TFLOP
from gpurent.workload.spec import Task
from gpurent.workload.zoo import (
    ModelInfo,
    llm_attention_flops_per_token,
    llm_matmul_params,
    llm_mlp_active_params,
)

WEIGHT_TRAFFIC_BYTES_PER_PARAM = 24.0  # fwd+bwd weight reads, AdamW read/write of w, g, m, v
VECTOR_SHARE = 0.01  # nominal share of FLOPs on CUDA cores; the fitted d scales it
# The A100-SXM4-80GB, where the per-GPU efficiency scaling is 1 (dense FLOP/s, B/s)
REF_PEAK_HALF_FLOPS = 312e12
REF_PEAK_FULL_FLOPS = 156e12  # TF32
REF_CUDA_FLOPS = 19.5e12
REF_BANDWIDTH_BPS = 2039e9
DERIVED_FP32_FLOPS_PER_SM_CYCLE = 256.0  # 128 FP32 lanes x FMA: SM-cycles of a spec without SMs
PCIE_GBPS_BY_GEN = {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}  # x16, one direction, GB/s


def peak_flops(gpu: GpuSpec, precision: Precision) -> float:
    """Dense peak in FLOP/s for `precision`."""
    return gpu.peak_tflops(precision) * FLOPS_PER_TFLOP


def bandwidth_bps(gpu: GpuSpec) -> float:
    """The GPU's memory bandwidth in bytes per second."""
    return gpu.memory_bandwidth_gbps * BYTES_PER_GB


def bytes_per_value(precision: Precision) -> int:
    """Activation bytes: AMP keeps fp16 activations, fp8 runs keep bf16 ones."""
    return 2 if precision.is_half else 4


def family_features(
    model: ModelInfo,
    gpu: GpuSpec,
    precision: Precision,
    batch: int,
    seq_len: int | None,
    *,
    checkpointing: bool = False,
    training: bool = True,
    peak_exponent: float = 0.0,
    bandwidth_exponent: float = 0.0,
    sm_cap_bytes_per_cycle: float = 0.0,
    cuda_flops_per_sm_cycle: float = 0.0,
) -> tuple[float, float, float, float]:
    """(tensor compute s, memory traffic s, CUDA-core work s, SM-side traffic s) of one step of
    `batch`, each at the GPU's peak rate for it times a GPU-dependent efficiency scale.

    SM-side traffic is the same bytes over SM count x boost clock (SM-cycles/s): the load/store
    issue, L2 and latency-hiding limit of the many small memory-bound kernels of CNN/BERT-class
    training, which grows with SMs x clock and not with HBM bandwidth (GH200 has 1.2x an H100's
    bandwidth, the same SMs and clock, and measures the same). With `sm_cap_bytes_per_cycle` > 0
    the memory traffic time uses min(bandwidth, cap x SM-cycles/s) instead of the bandwidth.
    Every GPU, NVIDIA or AMD, takes these terms (`sm_cycles_per_s`); each term is divided by
    the architecture's realized efficiency (`gpurent.estimate.efficiency`).

    The scale is (rate / A100's rate) ** exponent: with a positive exponent the achieved share of
    peak falls on faster GPUs (bigger kernels are needed to fill more, faster SMs; launch gaps
    and synchronisation cost a larger share of a shorter step), as measured (RESEARCH §2: H100
    1.76-2.05x an A100 on 3.2x the FLOPs). One exponent for all models, chosen by
    leave-one-architecture-out cross-validation on the reference data."""
    fwd = model.forward_flops(seq_len) * batch
    passes = (4.0 if checkpointing else 3.0) if training else 1.0
    acts = model.activation_values(seq_len) * batch * bytes_per_value(precision)
    weights = model.num_params * (WEIGHT_TRAFFIC_BYTES_PER_PARAM if training else 4.0)
    traffic = acts * (1.0 if training else 0.5) + weights
    flops = fwd * passes
    peak = peak_flops(gpu, precision)
    bw = bandwidth_bps(gpu)
    cuda = cuda_rate_flops(gpu, cuda_flops_per_sm_cycle)
    ref_peak = REF_PEAK_HALF_FLOPS if precision.is_half else REF_PEAK_FULL_FLOPS
    sm_rate = sm_cycles_per_s(gpu)
    eff_bw = bw
    if sm_cap_bytes_per_cycle > 0.0:
        eff_bw = min(bw, sm_cap_bytes_per_cycle * sm_rate)
    # the share of the datasheet rates this architecture's stack realizes (1 where the fitted
    # constants already describe it): every device term of the step scales with it
    eta = realized_efficiency(gpu).factor
    return (
        flops / peak * (peak / ref_peak) ** peak_exponent / eta,
        traffic / eff_bw * (eff_bw / REF_BANDWIDTH_BPS) ** bandwidth_exponent / eta,
        VECTOR_SHARE * flops / cuda * (cuda / REF_CUDA_FLOPS) ** peak_exponent / eta,
        traffic / sm_rate / eta,
    )


def sm_cycles_per_s(gpu: GpuSpec) -> float:
    """SM count x boost clock, the SM-side issue rate, for every GPU (round 10, issue 12).

    An AMD compute unit counts as one SM: a CDNA CU and an NVIDIA SM both issue 64 FP32 lanes
    per cycle (four SIMD16 units / four 16-lane partitions; the vendors' doubled FP32 figures
    count dual issue), each with its own L1 and shared memory (LDS). What differs between the
    vendors' software and hardware beyond the datasheet rates is the architecture's realized
    efficiency (`gpurent.estimate.efficiency`), not a different code path. A spec without an SM
    count or clock (a what-if spec; every bundled row has them) gets SM-cycles derived from its
    fp32 peak at 256 FLOP per SM-cycle (2 x 128 FP32 lanes, as on GA10x, Ada, Hopper, Blackwell
    and CDNA3/4; V100, T4 and A100 have 64 lanes and sourced rows; docs/estimator.md)."""
    sourced = gpu.sm_cycles_per_s
    if sourced is not None:
        return sourced
    return gpu.fp32_tflops * FLOPS_PER_TFLOP / DERIVED_FP32_FLOPS_PER_SM_CYCLE


def cuda_rate_flops(gpu: GpuSpec, flops_per_sm_cycle: float) -> float:
    """FLOP/s of the non-tensor work (normalisation, activations, optimizer, indexing).

    With `flops_per_sm_cycle` > 0: that many FLOP per SM-cycle (`sm_cycles_per_s`).
    Each SM issues 4 warp instructions (128 lanes) per cycle whatever its FP32 width; the doubled
    FP32 lanes of GA10x, Ada, Hopper and Blackwell (256 FLOP per SM-cycle on the datasheet, 128 on
    V100, T4 and A100) only pay off in pure-FMA code, while these kernels mix loads, integer and
    FP32 instructions. 128 equals the datasheet rate of V100 and A100, so the datasheet and this
    rate differ only on the dual-FP32 designs. Otherwise the datasheet fp32 peak."""
    if flops_per_sm_cycle > 0.0:
        return flops_per_sm_cycle * sm_cycles_per_s(gpu)
    return gpu.fp32_tflops * FLOPS_PER_TFLOP


def llm_training_features(
    model: ModelInfo,
    gpu: GpuSpec,
    precision: Precision,
    task: Task,
    *,
    batch: int,
    seq_len: int,
    checkpointing: bool,
    selective: bool = False,
    mlp_recompute: bool = False,
    model_parallel: int = 1,
) -> tuple[float, float, float, float]:
    """(matmul s, attention s, activation-traffic s, model FLOPs) per micro-batch per GPU, all at
    peak. Model FLOPs: 6 N + 6 L h s per token (causal attention, no recomputation counted;
    `zoo.llm_flops_per_token`), the convention of the MFU gpurent reports.

    Full recomputation (`checkpointing`) reruns every layer's forward: +2 N T matmul and +2 L h s
    T (causal) attention FLOPs. Selective recomputation (Korthikanti et al. 2022) reruns
    attention's core only (QK^T, softmax, dropout, x V): +2 L h s T attention FLOPs, a few per
    cent of the step (2 L h s / (6 N + 6 L h s): about 2 % of the FLOPs for an 8B model at seq
    4096, 4 % at 8192; more of the time, as attention runs at a lower efficiency, `a_attn`, than
    the GEMMs). Recomputing the MLP (`mlp_recompute`, Megatron's `--recompute-modules mlp`)
    reruns its forward GEMMs: +2 N_mlp T, N_mlp the MLP weights a token computes with
    (`zoo.llm_mlp_active_params`). `model_parallel` divides everything (tensor x pipeline x
    context parallel GPUs)."""
    assert model.llm is not None
    s = model.llm
    tokens = batch * seq_len
    n = llm_matmul_params(s)  # what a token multiplies with (no untied input embedding)
    lora = task.trains_adapters
    mm_factor = 4.0 if lora else 6.0  # LoRA: no weight gradients for the frozen base
    recompute = 2.0 if checkpointing else 0.0
    f_mm = (mm_factor + recompute) * n * tokens / model_parallel
    if mlp_recompute and not checkpointing:
        f_mm += 2.0 * llm_mlp_active_params(s) * tokens / model_parallel
    attn_fwd = llm_attention_flops_per_token(s, seq_len, training=False)  # causal: 2 L h s
    f_attn = (3.0 + (1.0 if checkpointing or selective else 0.0)) * attn_fwd * tokens
    f_attn /= model_parallel
    model_flops = (mm_factor * n + 3.0 * attn_fwd) * tokens / model_parallel
    act_bytes = 34.0 * seq_len * batch * s.hidden * s.layers / model_parallel
    if s.is_moe:
        # token dispatch: each MoE layer keeps a token's hidden state once per routed expert
        # (the experts' permuted input) and gets it back once per expert before the weighted
        # combine: 2 x k more values of h per token, at 2 bytes (Korthikanti's counting)
        act_bytes += (
            4.0 * s.experts_per_token * s.hidden * seq_len * batch * s.moe_layers / model_parallel
        )
    if checkpointing:
        act_bytes *= 1.5
    if task is Task.FINETUNE_QLORA:
        act_bytes += 3.0 * n * 2.0 / model_parallel  # dequantise the 4-bit base weights per pass
    p = peak_flops(gpu, precision)
    bw = bandwidth_bps(gpu)
    return f_mm / p, f_attn / p, act_bytes / bw, model_flops


def link_bandwidth_bps(
    gpu: GpuSpec, num_gpus: int, comm: CommCoeffs, interconnect: str | None
) -> float:
    """Achievable ring all-reduce bus bandwidth between GPUs of one node, B/s.

    `interconnect` overrides the spec: "nvlink" or "pcie". NVLink bridges join pairs only, so more
    than two bridged GPUs fall back to PCIe. GeForce cards lack peer-to-peer over PCIe.
    """
    if not uses_nvlink(gpu, num_gpus, interconnect) or gpu.interconnect_gbps is None:
        pcie = PCIE_GBPS_BY_GEN.get(gpu.pcie_gen, 31.5) * BYTES_PER_GB * comm.pcie_efficiency
        if is_geforce(gpu):
            pcie *= comm.no_p2p_factor
        return pcie
    return gpu.interconnect_gbps / 2.0 * BYTES_PER_GB * comm.nvlink_efficiency


def uses_nvlink(gpu: GpuSpec, num_gpus: int, interconnect: str | None) -> bool:
    """Whether `num_gpus` GPUs of one node talk over NVLink (see `link_bandwidth_bps`)."""
    kind = (interconnect or "").lower()
    if kind == "pcie" or gpu.interconnect_gbps is None:
        return False
    return kind == "nvlink" or "bridge" not in gpu.interconnect.lower() or num_gpus <= 2


def is_geforce(gpu: GpuSpec) -> bool:
    """Consumer cards (RTX 3090/4090/5090): no PCIe peer-to-peer in the driver."""
    name = gpu.name.upper()
    return name.startswith("RTX-") and name[4:5].isdigit()


# NCCL's own latency model for small all-reduces (LL protocol, ring), src/graph/tuning.cc:
# a base of 6.6 us plus 0.6 us per step over NVLink (1.0 us over PCIe), 2 (n - 1) steps.
# (Quoted in NVIDIA/nccl issue #1334; NVIDIA/nccl #1259 measures ~6 us on 2 H100s.)
# Across nodes: 6.6 us per step is the NET/Ring/Simple entry of the hwLat table of a NCCL 2.x
# src/graph/tuning.cc (large messages use the Simple protocol); plain Ethernet through TCP
# sockets has no NCCL table entry: 20 us per step is an assumption (a kernel TCP round trip
# inside a data centre), not a measurement.
NCCL_BASE_LATENCY_S = 6.6e-6
NCCL_STEP_LATENCY_S = {
    "nvlink": 0.6e-6,
    "nvl72": 0.6e-6,
    "pcie": 1.0e-6,
    "ib/roce": 6.6e-6,
    "ethernet": 20e-6,
}
# a network of at least this many Gbit/s per node is taken as RDMA (InfiniBand or RoCE); slower
# ones as plain Ethernet with NCCL's socket transport (the clouds' 10-50 Gbit/s VPC networks)
RDMA_MIN_GBPS = 100.0


@dataclass(frozen=True, slots=True)
class Link:
    """What a collective crosses: `kind` (nvlink, nvl72, pcie, ib/roce, ethernet), the bus
    bandwidth a ring achieves on it (B/s per GPU, or per node for the network legs) and NCCL's
    latency per algorithm step (s)."""

    kind: str
    bus_bytes_per_s: float
    step_latency_s: float


def intra_node_link(
    gpu: GpuSpec, group_gpus: int, comm: CommCoeffs, interconnect: str | None
) -> Link:
    """The link `group_gpus` GPUs of one node use (`link_bandwidth_bps`, `uses_nvlink`)."""
    kind = "nvlink" if uses_nvlink(gpu, group_gpus, interconnect) else "pcie"
    bw = link_bandwidth_bps(gpu, group_gpus, comm, interconnect)
    return Link(kind, bw, NCCL_STEP_LATENCY_S[kind])


def network_link(inter_node_gbps: float | None, comm: CommCoeffs) -> Link:
    """The network between nodes: `inter_node_gbps` Gbit/s per node (default from the
    constants) at `comm.inter_node_efficiency`; RDMA (IB/RoCE) from `RDMA_MIN_GBPS` up, else
    plain Ethernet."""
    gbps = inter_node_gbps if inter_node_gbps is not None else comm.default_inter_node_gbps
    kind = "ib/roce" if gbps >= RDMA_MIN_GBPS else "ethernet"
    return Link(
        kind, gbps / 8.0 * BYTES_PER_GB * comm.inter_node_efficiency, NCCL_STEP_LATENCY_S[kind]
    )


def in_scale_up_domain(gpu: GpuSpec, group_nodes: int, gpus_per_node: int) -> bool:
    """Whether a group spanning `group_nodes` nodes of `gpus_per_node` GPUs lies inside one
    scale-up domain (NVL72: a GB200/GB300 rack's 72 GPUs share NVLink across their nodes).
    Only a domain of more than `BOARD_DOMAIN_GPUS` spans nodes (8 or fewer is one HGX/OAM board,
    inside one machine: two 4-GPU nodes of B200s are two machines). Nodes are taken as packed
    into domains in order."""
    domain = spans_nodes_domain(gpu)
    return group_nodes > 1 and domain > gpus_per_node and group_nodes * gpus_per_node <= domain


BOARD_DOMAIN_GPUS = 8


def spans_nodes_domain(gpu: GpuSpec) -> int:
    """GPUs of the scale-up domain that reaches across nodes (NVL72: 72), else 1."""
    domain = gpu.scale_up_domain_gpus or 1
    return domain if domain > BOARD_DOMAIN_GPUS else 1


def ring_time_s(payload_bytes: float, ranks: int, link: Link, passes: float) -> float:
    """One collective among `ranks` on one `link` as NCCL runs it: `passes` ring passes (1: an
    all-gather or a reduce-scatter, 2: an all-reduce) of (n - 1) steps, each moving 1/n of
    `payload_bytes`: latency = base + passes (n - 1) x step latency, volume = passes (n - 1) / n
    x payload over the link's bus bandwidth. An all-reduce may instead take NCCL's tree
    (2 log2 n steps, about the same bus volume); the faster of the two is priced."""
    if ranks <= 1:
        return 0.0
    volume_s = passes * (ranks - 1) / ranks * payload_bytes / link.bus_bytes_per_s
    launches = max(1, math.ceil(passes))
    ring = launches * NCCL_BASE_LATENCY_S + passes * (ranks - 1) * link.step_latency_s
    latency = ring
    if passes == 2.0 and ranks > 2:
        latency = min(
            ring, NCCL_BASE_LATENCY_S + 2 * math.ceil(math.log2(ranks)) * link.step_latency_s
        )
    return latency + volume_s


def group_collective_time_s(
    payload_bytes: float,
    gpu: GpuSpec,
    ranks: int,
    *,
    group_nodes: int,
    gpus_per_node: int,
    comm: CommCoeffs,
    passes: float,
    inter_node_gbps: float | None,
    interconnect: str | None,
) -> float:
    """A collective among `ranks` GPUs spread over `group_nodes` nodes: one NVLink ring when
    the group lies inside a scale-up domain (`in_scale_up_domain`), else hierarchical as NCCL
    runs it, a ring inside each node (ranks / nodes GPUs) then one across the nodes, where each
    node's network moves passes x (nodes - 1) / nodes of the payload."""
    if ranks <= 1:
        return 0.0
    nodes = max(1, min(group_nodes, ranks))
    if in_scale_up_domain(gpu, nodes, gpus_per_node):
        link = Link("nvl72", gpu_link_bps(gpu, comm), NCCL_STEP_LATENCY_S["nvl72"])
        return ring_time_s(payload_bytes, ranks, link, passes)
    per_node = max(1, math.ceil(ranks / nodes))
    t = ring_time_s(
        payload_bytes, per_node, intra_node_link(gpu, per_node, comm, interconnect), passes
    )
    if nodes > 1:
        t += ring_time_s(payload_bytes, nodes, network_link(inter_node_gbps, comm), passes)
    return t


def gpu_link_bps(gpu: GpuSpec, comm: CommCoeffs) -> float:
    """Ring bus bandwidth of the GPU's own scale-up link (NVLink/xGMI), B/s; PCIe without one."""
    if gpu.interconnect_gbps is None:
        return PCIE_GBPS_BY_GEN.get(gpu.pcie_gen, 31.5) * BYTES_PER_GB * comm.pcie_efficiency
    return gpu.interconnect_gbps / 2.0 * BYTES_PER_GB * comm.nvlink_efficiency


def tp_allreduce_time_s(
    payload_bytes: float, gpu: GpuSpec, tp: int, comm: CommCoeffs, interconnect: str | None
) -> float:
    """One tensor-parallel all-reduce of activations among `tp` GPUs of a node: NCCL's
    small-message latency plus the ring's 2 (n - 1) / n x bytes over the link."""
    if tp <= 1:
        return 0.0
    link = intra_node_link(gpu, tp, comm, interconnect)
    latency = NCCL_BASE_LATENCY_S + 2 * (tp - 1) * link.step_latency_s
    return latency + 2.0 * (tp - 1) / tp * payload_bytes / link.bus_bytes_per_s


def allreduce_time_s(
    payload_bytes: float,
    gpu: GpuSpec,
    num_gpus: int,
    nodes: int,
    comm: CommCoeffs,
    *,
    inter_node_gbps: float | None,
    interconnect: str | None,
    factor: float = 2.0,
) -> float:
    """Seconds to all-reduce `payload_bytes` (factor 2: reduce-scatter + all-gather) across
    `num_gpus` GPUs on `nodes` nodes: a ring inside the node, then across nodes (hierarchical,
    as NCCL does); each leg moves factor x (n-1)/n of the payload."""
    if num_gpus <= 1:
        return 0.0
    per_node = max(1, math.ceil(num_gpus / max(1, nodes)))
    t = 0.0
    if per_node > 1:
        bw = link_bandwidth_bps(gpu, per_node, comm, interconnect)
        t += factor * (per_node - 1) / per_node * payload_bytes / bw
    if nodes > 1:
        gbps = inter_node_gbps if inter_node_gbps is not None else comm.default_inter_node_gbps
        node_bw = gbps / 8.0 * BYTES_PER_GB * comm.inter_node_efficiency
        t += factor * (nodes - 1) / nodes * payload_bytes / node_bw
    return t


def ddp_allreduce_time_s(
    grad_bytes: float,
    gpu: GpuSpec,
    num_gpus: int,
    nodes: int,
    comm: CommCoeffs,
    *,
    inter_node_gbps: float | None,
    interconnect: str | None,
) -> float:
    """The gradient all-reduce of one data-parallel (DDP) step: `allreduce_time_s`, its in-node
    leg never faster than `comm.ddp_bus_gbps_cap` GB/s of bus bandwidth (0: no cap)."""
    t = allreduce_time_s(
        grad_bytes,
        gpu,
        num_gpus,
        nodes,
        comm,
        inter_node_gbps=inter_node_gbps,
        interconnect=interconnect,
    )
    per_node = max(1, math.ceil(num_gpus / nodes))
    if comm.ddp_bus_gbps_cap > 0 and per_node > 1:
        cap_s = 2.0 * (per_node - 1) / per_node * grad_bytes / (comm.ddp_bus_gbps_cap * 1e9)
        in_node_s = allreduce_time_s(
            grad_bytes, gpu, per_node, 1, comm, inter_node_gbps=None, interconnect=interconnect
        )
        t += max(0.0, cap_s - in_node_s)
    return t
