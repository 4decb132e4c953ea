"""What CPU offload costs an LLM training step: PCIe transfers and the CPU Adam step (round 11).

With ZeRO-Offload (DeepSpeed `offload_optimizer`, Ren et al. 2021, "ZeRO-Offload: Democratizing
Billion-Scale Model Training", USENIX ATC '21, section 4) or FSDP's `CPUOffload`, the fp32 master
weights and the AdamW moments of each GPU's shard live in host memory and the optimizer runs on
the CPU. Each optimizer step, for the `shard_params` trainable parameters a GPU owns:

- its bf16 gradients go down over the GPU's PCIe link (2 B/param); ZeRO-Offload copies each
  gradient bucket as backward produces it, so this transfer hides behind backward (2/3 of the
  compute time) and only what backward cannot cover is exposed;
- the CPU updates master weights and both moments: reads the gradient (fp32, 4 B) and reads and
  writes master weight, first and second moment (3 x 8 B), and writes the bf16 copy (2 B):
  30 B/param of host DRAM traffic, plus the 4 B/param the two DMA transfers land in and leave
  from DRAM. CPU Adam is a streaming kernel with a few FLOPs per 30 B, so it is bound by host
  memory bandwidth (ZeRO-Offload's CPU-Adam is SIMD-vectorised and multi-threaded for that
  reason); every GPU of a node steps its shard on the same host, so the node's DRAM bandwidth is
  shared by all of them. This runs after backward and before the next forward (DeepSpeed's
  default; its "delayed parameter update" is off unless asked): exposed in full;
- the updated bf16 weights go back up (2 B/param), exposed in full.

With ZeRO-3/FSDP and offload the parameters live on the host too (as `memory.py` counts them):
each micro-batch every GPU fetches its bf16 shard over PCIe for forward and again for backward
(2 x 2 B/param), prefetched layer by layer like the FSDP all-gathers: hidden behind the compute
time at the same share (`LLM_COMM_OVERLAP` of the caller).

Assumptions (not fitted): each GPU has its own PCIe x16 link to the host (HGX/DGX boards and the
cloud servers built on them give each GPU one), at `CommCoeffs.pcie_efficiency` of its one-way
rate (`perf.PCIE_GBPS_BY_GEN`); the host reaches `HOST_DRAM_BYTES_PER_S` of DRAM bandwidth per
node: a 2-socket server with 8 DDR5-4800 channels per socket (Xeon Sapphire Rapids) has
2 x 8 x 38.4 = 614 GB/s peak, 12 channels per socket (EPYC Genoa) 922 GB/s; streaming kernels
realise roughly half to two thirds of peak across sockets (STREAM-class figures), and CPU Adam
also competes with the DMA engines and the data loader, so 300 GB/s per node is taken.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpurent.catalog.gpu import GpuSpec
from gpurent.estimate.constants import CommCoeffs
from gpurent.estimate.perf import PCIE_GBPS_BY_GEN
from gpurent.estimate.uncertainty import Interval, stretched_interval
from gpurent.units import BYTES_PER_GB

HOST_DRAM_BYTES_PER_S = 300e9  # achieved per node, see the module docstring
# What a rented host may really give CPU Adam, the range the estimate's interval carries on the
# CPU Adam part of the step (the estimator cannot see the host): high, half of a two-socket
# 12-channel DDR5-4800 EPYC Genoa's 922 GB/s peak; low, half of the assumed figure: a two-socket
# 8-channel DDR4-3200 host reaches about half its 410 GB/s peak, and threads not pinned to
# their rank's cores lose a further ~1.3x (DeepSpeed pull 7474: 3.08 -> 2.38 s per step from
# `--bind_cores_to_rank` alone, Qwen2.5-3B on 2 x A100). A stated range, not a fit.
HOST_DRAM_BYTES_PER_S_RANGE = (150e9, 450e9)
CPU_ADAM_DRAM_BYTES_PER_PARAM = 30.0 + 4.0  # AdamW on fp32 states + the DMA transfers' bytes
GRAD_DOWN_BYTES_PER_PARAM = 2.0  # bf16 gradients GPU -> host
WEIGHTS_UP_BYTES_PER_PARAM = 2.0  # updated bf16 weights host -> GPU
BACKWARD_SHARE = 2.0 / 3.0  # of the compute time: backward is 2x forward


@dataclass(frozen=True, slots=True, kw_only=True)
class OffloadTime:
    """Seconds of one training step spent on CPU offload, as it lands on the step."""

    grads_down_s: float  # per optimizer step, before overlap with backward
    cpu_adam_s: float  # per optimizer step, exposed
    weights_up_s: float  # per optimizer step, exposed
    params_fetch_s: float  # per micro-batch (ZeRO-3 offload), before overlap
    exposed_per_micro_batch_s: float  # what the step pays, optimizer part spread over grad_accum


def host_interval(interval: Interval, host_share: float) -> Interval:
    """`interval` widened where CPU Adam is `host_share` of the step: at the low end of
    `HOST_DRAM_BYTES_PER_S_RANGE` that part takes assumed / low times as long, at the high end
    assumed / high (the rest of the step as estimated)."""
    if host_share <= 0.0:
        return interval
    low_bps, high_bps = HOST_DRAM_BYTES_PER_S_RANGE
    return stretched_interval(
        interval,
        host_share,
        HOST_DRAM_BYTES_PER_S / low_bps,
        HOST_DRAM_BYTES_PER_S / high_bps,
        f"host memory {low_bps / 1e9:.0f}-{high_bps / 1e9:.0f} GB/s for CPU Adam on "
        f"{100 * min(1.0, host_share):.0f} % of the step",
    )


def host_link_bytes_per_s(gpu: GpuSpec, comm: CommCoeffs) -> float:
    """Achievable one-way bytes/s of one GPU's PCIe x16 link to the host."""
    return PCIE_GBPS_BY_GEN.get(gpu.pcie_gen, 31.5) * BYTES_PER_GB * comm.pcie_efficiency


def cpu_offload_time(
    gpu: GpuSpec,
    comm: CommCoeffs,
    *,
    shard_params: float,
    gpus_per_node: int,
    fetched_param_bytes: float,
    compute_s: float,
    overlap: float,
    grad_accum: int,
) -> OffloadTime:
    """The offload cost of one micro-batch step of `compute_s` seconds of GPU work.

    `shard_params`: trainable parameters whose optimizer state one GPU owns on the host;
    `gpus_per_node`: GPUs stepping their shards on the same host; `fetched_param_bytes`: bytes of
    parameters one GPU fetches from the host per pass (0 unless ZeRO-3/FSDP offloads them);
    `overlap`: the share of the compute that hides the parameter fetches."""
    link = host_link_bytes_per_s(gpu, comm)
    down = shard_params * GRAD_DOWN_BYTES_PER_PARAM / link
    up = shard_params * WEIGHTS_UP_BYTES_PER_PARAM / link
    adam = gpus_per_node * shard_params * CPU_ADAM_DRAM_BYTES_PER_PARAM / HOST_DRAM_BYTES_PER_S
    fetch = 2.0 * fetched_param_bytes / link
    per_step = max(0.0, down - BACKWARD_SHARE * compute_s) + adam + up
    exposed = per_step / max(1, grad_accum) + max(0.0, fetch - overlap * compute_s)
    return OffloadTime(
        grads_down_s=down,
        cpu_adam_s=adam,
        weights_up_s=up,
        params_fetch_s=fetch,
        exposed_per_micro_batch_s=exposed,
    )
