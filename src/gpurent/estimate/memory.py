"""Memory per GPU: weights, gradients, optimizer states, activations, KV cache, overhead.

Bytes per parameter (RESEARCH §2; ZeRO paper, Rajbhandari et al. 2020):

- fp32/tf32/AMP training keeps fp32 weights (4 B) and fp32 gradients (4 B); AdamW adds two fp32
  moments (8 B): 16 B/param. Pure bf16/fp16/fp8 training keeps 2 B weights and 2 B gradients and
  puts an fp32 master copy (4 B) with the optimizer: again 16 B/param.
- Optimizers: AdamW 8 B/param, 8-bit Adam 2 B/param (Dettmers et al. 2022), SGD with momentum
  4 B/param, Adafactor ~0.1 B/param (factored second moment, no first moment).
- LoRA: frozen base weights at 2 B/param (QLoRA: NF4, 0.5 B + ~0.03 B of quantisation
  constants, on the linear layers only: the token embedding, an untied output head and the
  norms stay 16-bit, `unquantized_params`; each matmul dequantises one weight matrix to bf16,
  the largest of them counted with the weights, `dequantized_weight_bytes`); only adapter
  parameters (rank r on every attention and MLP matrix) get gradients and AdamW states.
  `Workload.fp32_upcast` (Hugging Face PEFT's `prepare_model_for_kbit_training` casts every
  16-bit parameter to fp32) holds those unquantised parameters in fp32 (a LoRA's whole base),
  and with them the residual stream: activations at 4 B per value, logits fp32 (8 B with the
  copy the loss reads).
- Sharding: ZeRO-1 divides optimizer states by the data-parallel degree, ZeRO-2 also gradients,
  ZeRO-3/FSDP also weights; tensor x pipeline parallelism divides all three. CPU offload moves
  the optimizer states and the gradients to host memory (ZeRO-Offload, Ren et al. 2021, sends
  each gradient bucket down as backward produces it and steps on the CPU; FSDP's CPUOffload
  keeps gradients on the host too), leaving one layer's gradients in flight; with weight
  sharding also the weight shards unless `offload_params` is false (DeepSpeed's
  `offload_optimizer` without `offload_param`).
- Activations (decoder LLMs, `llm_layer_activation_values`): the tensors one transformer layer
  keeps for backward with FlashAttention/SDPA (no s^2 scores), counted from the shape: per token
  6 h (two norm inputs and outputs, q, attention output; q and output heads x head_dim where
  that differs from h) + 2 kv (k, v) + 4 ffn (gate, up, act(gate), product; 3 ffn on the tuned
  stack, whose fused SwiGLU recomputes act(gate): `GATED_MLP_SAVED_FUSED`; 2 ffn for a plain
  MLP; MoE: ffn of the experts_per_token routed + shared experts; multi-head latent attention:
  q and k of qk_nope + qk_rope, v and output of v_head_dim per head, and its latents), x bytes
  per value x micro-batch x seq, times a
  fitted scale: `ACTIVATION_SCALE` for full training, `ADAPTER_ACTIVATION_SCALE` for LoRA/QLoRA.
  The tuned stack's fp8 LoRA (the MLPerf recipe) is counted instead by
  `frozen_base_lora_layer_activation_bytes` (no input of a frozen GEMM; attention and the SwiGLU
  input in fp8) at `ACTIVATION_SCALE`, the physical scale.
  The scale multiplies only this approximate per-layer count (every layer without
  checkpointing, the one recomputed layer with it); the checkpointed layer inputs and the
  logits are exact counts and stay unscaled. GPT-2 shapes give 16 h values (32 h bytes),
  Korthikanti et al. count 34 h bytes with dropout masks. Tensor parallelism is assumed to run
  with sequence parallelism (Megatron-LM `--sequence-parallel`, torchtitan's TP plan), so every
  activation, the checkpointed layer inputs included, is divided by tp. With checkpointing each
  layer keeps only its input (h values per token) and one layer is recomputed at a time (its
  full activations). Pipeline stages hold their share of layers; 1F1B keeps up to `pp`
  micro-batches in flight on the first stage. Other models: the zoo's stored values (all of
  them approximate, so scaled), 30 % of them with checkpointing (~1/sqrt(depth), Chen et al.
  2016).
- Logits (`logits_bytes`): seq x micro-batch x vocab x 6 B (bf16 logits + the fp32 copy the loss
  reads), divided by tp (vocab-parallel output layer). A fused/chunked loss
  (`Workload.fused_loss_on`: Liger-Kernel's FusedLinearCrossEntropy, torchtune's
  LinearCrossEntropyLoss) holds one chunk of logits (Liger's chunk rule,
  `fused_loss_chunk_tokens`) plus the output layer's input gradient (tokens x hidden).
- FSDP/ZeRO-3 gathers each layer's full weights before use: the layer being computed and the
  one prefetched (2 x one layer's weights) plus one layer's unsharded gradients before the
  reduce-scatter are counted with the weights. A LoRA's frozen layers are gathered in the bytes
  they are stored in (NF4 for a QLoRA, fp8 for the tuned stack's base) and have no gradients.
- Layouts: ZeRO shards over data x context-parallel ranks (HSDP: over the data-parallel ranks of
  one node); context parallelism keeps seq / cp tokens of activations per rank; tensor
  parallelism without sequence parallelism keeps 10/34 of each layer's activations replicated
  (Korthikanti et al. 2022); pipeline stages' peak is the first stage's in-flight micro-batches
  (`pipeline_in_flight`) or the last stage's logits, whichever is larger.
- KV cache (inference): 2 x layers x kv_heads x head_dim x (prompt + output) x batch x 2 B
  (4 B for fp32 runs); multi-head latent attention (DeepSeek-V3) caches layers x
  (kv_lora_rank + qk_rope_head_dim) values per token instead, and a sliding-window layer
  (gpt-oss) at most its window of tokens (`zoo.llm_kv_cache_values`).
- Overhead: 0.8 GiB CUDA context + workspace, plus a share of the rest for the caching
  allocator (reserved minus allocated): `FRAGMENTATION` for training, `INFERENCE_FRAGMENTATION`
  (8 %, assumed) for serving. The two activation scales and `FRAGMENTATION` are fitted on
  published measured peaks (benchmarks/data/memory_peaks.csv, fit rows only;
  `python benchmarks/bench_memory_peaks.py --fit`).
"""

from __future__ import annotations

import math
from dataclasses import replace

from gpurent.catalog.precision import Precision
from gpurent.estimate.perf import bytes_per_value
from gpurent.estimate.result import MemoryBreakdown
from gpurent.units import BYTES_PER_GIB
from gpurent.workload.spec import Optimizer, Recompute, Sharding, Stack, Task, Workload
from gpurent.workload.zoo import (
    ModelInfo,
    llm_expert_params_total,
    llm_kv_cache_values,
    llm_layer_params,
)

CONTEXT_OVERHEAD_GIB = 0.8
DEFAULT_OUTPUT_TOKENS = 256  # generated per request when the workload does not say (inference)
# The scales multiply only the per-layer activation count of the layer(s) held in full, never
# the exact checkpointed layer inputs or the logits. The adapter scale is fitted on the fit rows
# of benchmarks/data/memory_peaks.csv (bench_memory_peaks.py --fit): 1.40 while a QLoRA's fp32
# upcast, unquantised embeddings and gathered NF4 layers went uncounted, 1.00 (the physical
# count) since session 14 counts them; no allowed row measures full training (the torchtitan
# rows were removed: that project's measurements are held out), so the full-training scale is
# the physical count, 1.0, not fitted.
FRAGMENTATION = 0.0  # training: held, not fitted (bench_memory_peaks.py, docs/estimator.md)
ACTIVATION_SCALE = 1.0
ADAPTER_ACTIVATION_SCALE = 1.0
INFERENCE_FRAGMENTATION = 0.08  # inference: an assumption (typical PyTorch figure), not fitted
LOGIT_BYTES = 6.0  # per logit: bf16 logits + the fp32 copy the cross-entropy reads
ZERO3_GATHERED_LAYERS = 2  # FSDP: the layer in use and the prefetched one, unsharded
# A QLoRA's linear layers compute in bf16: bitsandbytes (`matmul_4bit` -> `dequantize_4bit`) and
# torchao's NF4 tensor (`LinearNF4`: `weight.to(input.dtype)`, torchao/dtypes/nf4tensor.py @
# 05980129) dequantise one weight matrix to the compute dtype per
# matmul, in forward, in the checkpointed recompute and in backward; the largest such matrix
# exists beside everything else at the peak.
DEQUANT_BYTES = 2.0
FP32_BYTES = 4.0  # `Workload.fp32_upcast`: unquantised parameters, activations and logits
_OPT_BYTES = {
    Optimizer.ADAMW: 8.0,
    Optimizer.ADAM_8BIT: 2.0,
    Optimizer.SGD: 4.0,
    Optimizer.ADAFACTOR: 0.1,
}


def lora_params(model: ModelInfo, rank: int) -> float:
    """Adapter parameters: rank x (d_in + d_out) on every attention and MLP matrix."""
    if model.llm is None:
        return model.num_params * 0.01  # non-LLM: ~1 % adapters (rough)
    s = model.llm
    h = s.hidden
    kv = (s.kv_heads or s.heads) * (h // s.heads)
    ffn = s.ffn_hidden or 4 * h
    per_layer = (h + h) * 2 + (h + kv) * 2  # q, o; k, v
    per_layer += (h + ffn) * (3 if s.gated_mlp else 2)
    return float(rank * per_layer * s.layers)


def frozen_base_bytes_per_param(task: Task, *, fp8_weights: bool = False) -> float:
    """Bytes per parameter of the frozen base weights of a LoRA (bf16) or QLoRA (NF4 storage plus
    its quantisation constants) fine-tune: what each GPU holds and what ZeRO-3/FSDP gathers.
    `fp8_weights`: the base is stored in fp8 (1 B), as the MLPerf LoRA implementations do
    (`fp8_frozen_base`)."""
    if task is Task.FINETUNE_QLORA:
        return 0.53
    return 1.0 if fp8_weights else 2.0


def unquantized_params(model: ModelInfo) -> float:
    """Parameters a QLoRA leaves unquantised: the token embedding (an `nn.Embedding`, which
    neither bitsandbytes nor torchao's NF4 replaces), the untied output head (transformers keeps
    it out of the 4-bit conversion, `get_keys_to_not_convert`; torchtune builds it as a plain
    `nn.Linear`) and the norms (2 per layer and the final one). 0 for a non-LLM."""
    s = model.llm
    if s is None:
        return 0.0
    embedding = s.vocab * s.hidden * (1 if s.tied_embeddings else 2)
    return float(embedding + (2 * s.layers + 1) * s.hidden)


def fp32_upcast_on(workload: Workload) -> bool:
    """Whether `Workload.fp32_upcast` applies: adapter fine-tunes only (a full fine-tune's
    precision already says what its weights and activations are)."""
    return workload.fp32_upcast and workload.task.trains_adapters


def frozen_base_bytes(workload: Workload, model: ModelInfo) -> float:
    """Bytes of a LoRA's or QLoRA's whole frozen base on one GPU before any sharding. QLoRA:
    the quantised linear weights at `frozen_base_bytes_per_param`, the `unquantized_params` at
    2 B, or 4 B with `fp32_upcast` (PEFT's `prepare_model_for_kbit_training` casts every
    fp16/bf16 parameter to fp32: huggingface/peft src/peft/utils/other.py @ 012c0d5a). LoRA: 2 B
    per parameter (fp8 base: 1 B), 4 B with `fp32_upcast`."""
    n = model.num_params
    task = workload.task
    if task is Task.FINETUNE_QLORA:
        kept = min(n, unquantized_params(model))
        wide = FP32_BYTES if fp32_upcast_on(workload) else 2.0
        return (n - kept) * frozen_base_bytes_per_param(task) + kept * wide
    if fp32_upcast_on(workload):
        return n * FP32_BYTES
    return n * frozen_base_bytes_per_param(task, fp8_weights=fp8_frozen_base(workload))


def dequantized_weight_bytes(workload: Workload, model: ModelInfo) -> float:
    """A QLoRA's transient bf16 copy of the largest weight matrix of one layer (`DEQUANT_BYTES`
    per value; split by tp like the weight): what dequantisation adds at the peak. 0 for every
    other task and for non-LLMs."""
    s = model.llm
    if workload.task is not Task.FINETUNE_QLORA or s is None:
        return 0.0
    h = s.hidden
    head_dim = s.head_dim or h // s.heads
    ffn = s.expert_ffn_hidden if s.is_moe and s.expert_ffn_hidden else (s.ffn_hidden or 4 * h)
    largest = max(h * s.heads * head_dim, h * ffn)
    return largest * DEQUANT_BYTES / workload.tensor_parallel


def fp8_frozen_base(workload: Workload) -> bool:
    """Whether a LoRA keeps its frozen base weights in fp8: the `tuned` stack (NVIDIA's MLPerf
    Llama 2 70B LoRA code stores them in FP8; validation README) in an fp8-or-narrower run."""
    return workload.stack is Stack.TUNED and workload.precision.is_low_float


def expert_parallel_share(workload: Workload, model: ModelInfo) -> float:
    """The share of a model's parameters one GPU holds under expert parallelism: the non-expert
    weights whole, the experts' over `expert_parallel` GPUs (1.0 for a dense model or ep 1)."""
    ep = workload.expert_parallel
    if ep <= 1 or model.llm is None or not model.llm.is_moe:
        return 1.0
    experts = llm_expert_params_total(model.llm) / model.num_params
    return 1.0 - experts * (1.0 - 1.0 / ep)


def sharded_state_share(workload: Workload, model: ModelInfo, zero: int) -> float:
    """The share of its (already expert-parallel) parameter state one GPU keeps when ZeRO/FSDP
    shards it over `zero` ranks. A dense model keeps 1 / zero. Under expert parallelism the
    experts are sharded only over the expert-data-parallel group, zero / ep ranks (Megatron's
    `expert_data_parallel_size` = world / (expert tp x ep x pp), NVIDIA/Megatron-LM
    megatron/core/parallel_state.py @ 00caa53a; the expert tensor parallelism taken equal to
    tp, as this module divides the experts by tp): their share is 1 / (zero / ep), not 1 / zero."""
    ep = workload.expert_parallel
    if ep <= 1 or model.llm is None or not model.llm.is_moe or zero <= 1:
        return 1.0 / max(zero, 1)
    e = llm_expert_params_total(model.llm) / model.num_params
    dense, experts = 1.0 - e, e / ep
    expert_zero = max(1, zero // ep)
    return (dense / zero + experts / expert_zero) / (dense + experts)


def data_parallel_degree(workload: Workload, num_gpus: int) -> int:
    """Model replicas: GPUs / (tensor x pipeline x context parallel)."""
    mp = workload.tensor_parallel * workload.pipeline_parallel * workload.context_parallel
    return max(1, num_gpus // mp)


def zero_shard_degree(workload: Workload, num_gpus: int, gpus_per_node: int | None) -> int:
    """Ranks ZeRO/FSDP shards the training state over: the data-parallel ranks times the
    context-parallel ones (they hold the same weights; Megatron's distributed optimizer and
    torchtitan's FSDP shard over both); HSDP only over the shard group, the ranks of those one
    node holds (`gpus_per_node` None: all GPUs on one node)."""
    ranks = data_parallel_degree(workload, num_gpus) * workload.context_parallel
    if workload.sharding is Sharding.HSDP:
        per_node = gpus_per_node if gpus_per_node is not None else num_gpus
        return max(1, min(ranks, per_node // workload.tensor_parallel))
    return ranks


# Korthikanti et al. 2022, Table 2: of a layer's 34 s b h activation bytes, 10 s b h (layer
# norms, dropouts, the residual input) lie outside the tensor-parallel GEMM regions and are
# replicated on every tensor-parallel rank unless sequence parallelism splits them.
TP_REPLICATED_SHARE = 10.0 / 34.0


def pipeline_in_flight(workload: Workload) -> float:
    """Micro-batches whose activations the first pipeline stage holds at its peak: 1F1B keeps
    min(pp, m) in flight (Narayanan et al. 2021, SC21, §2.2); the interleaved schedule with v
    model chunks per rank holds (1 + (pp - 1) / (pp v)) times that (Korthikanti et al. 2022,
    §4.2.3)."""
    pp, vp = workload.pipeline_parallel, workload.virtual_pipeline_stages
    if pp <= 1:
        return 1.0
    return min(pp, workload.gradient_accumulation) * (1.0 + (pp - 1) / (pp * vp) if vp > 1 else 1.0)


def memory_breakdown(
    workload: Workload,
    model: ModelInfo,
    num_gpus: int,
    capacity_gib: float,
    *,
    gpus_per_node: int | None = None,
    activation_scale: float = ACTIVATION_SCALE,
    adapter_activation_scale: float = ADAPTER_ACTIVATION_SCALE,
    fragmentation: float | None = None,
) -> MemoryBreakdown:
    """Per-GPU memory of `workload` on `num_gpus` GPUs with `capacity_gib` each
    (`gpus_per_node`: HSDP's shard group; None: one node).

    `activation_scale` (full training), `adapter_activation_scale` (LoRA, QLoRA) and
    `fragmentation` (training jobs) default to the fitted values; the
    memory benchmark passes others to fit them. Inference keeps INFERENCE_FRAGMENTATION."""
    p = workload.precision
    n = model.num_params
    mp = workload.tensor_parallel * workload.pipeline_parallel
    half_store = p in (Precision.BF16, Precision.FP16) or p.is_low_float
    task = workload.task
    b = workload.batch_size_per_gpu
    seq = workload.seq_len or model.default_seq_len
    act_bytes_per_value = 4 if fp32_upcast_on(workload) else bytes_per_value(p)
    kv_cache = 0.0
    activations = 0.0

    if task is Task.INFERENCE:
        weights = weights_bytes_for_inference(model, p)
        grads = 0.0
        optim = 0.0
        if model.llm is not None:
            s = model.llm
            tokens = (seq or 0) + (workload.output_tokens or DEFAULT_OUTPUT_TOKENS)
            kv_bytes = bytes_per_value(p)  # fp32 runs keep an fp32 cache; fp8 a 16-bit one
            kv_cache = llm_kv_cache_values(s, tokens) * b * kv_bytes
            kv_cache /= mp
            activations = 4.0 * (seq or 0) * b * max(s.hidden, (s.ffn_hidden or 4 * s.hidden))
        else:
            activations = model.activation_values(seq) * b * act_bytes_per_value * 0.1
        weights *= expert_parallel_share(workload, model)
        weights /= mp
    else:
        if task.trains_adapters:
            trainable = lora_params(model, workload.lora_rank)
            weights = frozen_base_bytes(workload, model) + trainable * 4.0
            grads = trainable * 4.0
            optim = trainable * _OPT_BYTES[workload.optimizer]
        else:
            weights = n * (2.0 if half_store else 4.0)
            grads = n * (2.0 if half_store else 4.0)
            master = 4.0 if half_store else 0.0
            optim = n * (_OPT_BYTES[workload.optimizer] + master)
        # expert parallelism: each GPU holds 1 / ep of the experts (and their gradients and
        # optimizer states; a LoRA's adapters are counted whole)
        share = expert_parallel_share(workload, model)
        weights *= share
        if not task.trains_adapters:
            grads *= share
            optim *= share
        weights /= mp
        grads /= mp
        optim /= mp
        zero = zero_shard_degree(workload, num_gpus, gpus_per_node)
        # what one GPU keeps of a state ZeRO shards: the dense part over `zero` ranks, the
        # experts' (already 1 / ep) over the expert-data-parallel ranks only
        kept = sharded_state_share(workload, model, zero)
        state_kept = 1.0 / zero if task.trains_adapters else kept
        if workload.sharding is not Sharding.NONE:
            optim *= state_kept
        if workload.sharding is not Sharding.NONE and workload.sharding is not Sharding.ZERO1:
            grads *= state_kept
        if workload.sharding.shards_weights:
            weights *= kept
        if workload.cpu_offload:
            # ZeRO-Offload and FSDP's CPUOffload keep the optimizer states and the gradients on
            # the host: each gradient bucket goes down as backward produces it (the time model's
            # `grads_down_s`); one layer's gradients are in flight on the GPU
            optim = 0.0
            grads = (
                0.0
                if workload.sharding.shards_weights
                else _layer_grad_bytes(workload, model, half_store)
            )
            if workload.offloads_params:
                weights = 0.0
        if workload.sharding.shards_weights and zero > 1:
            weights += _zero3_gathered_bytes(workload, model, half_store)
        weights += dequantized_weight_bytes(workload, model)
        # the tuned stack's fp8 LoRA is an exact count of saved tensors, like full training's:
        # the physical scale, not the one fitted on stock-PyTorch LoRA peaks
        scale = (
            adapter_activation_scale
            if task.trains_adapters and _frozen_layer_bytes(workload, model) is None
            else activation_scale
        )
        # context parallelism: each rank keeps the activations of seq / cp tokens
        seq_cp = seq // workload.context_parallel if seq is not None else None
        activations = _training_activations(
            workload, model, seq_cp, b, act_bytes_per_value, scale=scale
        )

    if fragmentation is None:
        fragmentation = INFERENCE_FRAGMENTATION if task is Task.INFERENCE else FRAGMENTATION
    tensors = weights + grads + optim + activations + kv_cache
    overhead = CONTEXT_OVERHEAD_GIB * BYTES_PER_GIB + fragmentation * tensors
    return MemoryBreakdown(
        weights_gib=weights / BYTES_PER_GIB,
        gradients_gib=grads / BYTES_PER_GIB,
        optimizer_gib=optim / BYTES_PER_GIB,
        activations_gib=activations / BYTES_PER_GIB,
        kv_cache_gib=kv_cache / BYTES_PER_GIB,
        overhead_gib=overhead / BYTES_PER_GIB,
        capacity_gib=capacity_gib,
    )


# A gated MLP's intermediates per ffn channel and token that backward finds saved. Eager PyTorch
# autograd (HF's LlamaMLP: down(silu(gate(x)) * up(x))) saves four: gate's output (SiLU's
# input), SiLU's output and up's output (the product's two inputs) and the product (the down
# projection's input, for its weight gradient). Megatron-core's fused SwiGLU, which the tuned
# stack's NeMo recipes run, saves only its input (gate and up, concatenated) and recomputes the
# SiLU in backward (`SwiGLUFunction.forward`: `ctx.save_for_backward(input_for_backward)`;
# `swiglu_back` recomputes `torch.sigmoid(y_1)`, NVIDIA/Megatron-LM
# megatron/core/fusions/fused_bias_swiglu.py @ 00caa53af30912914981c86f39db123961678bbd), so
# with the product kept by the down projection it holds three.
GATED_MLP_SAVED_EAGER = 4.0
GATED_MLP_SAVED_FUSED = 3.0


def llm_mlp_activation_values(model: ModelInfo, *, fused_swiglu: bool = False) -> float:
    """Values one decoder layer's MLP keeps for backward per token beyond its input: its
    intermediates (a gated MLP: gate, up, activation and product, 4 ffn, or 3 ffn where the
    stack fuses the SwiGLU (`fused_swiglu`: the tuned stack, `GATED_MLP_SAVED_FUSED`); else 2 ffn;
    MoE: of the `experts_per_token` routed and the shared experts a token visits)."""
    s = model.llm
    if s is None:
        raise ValueError(f"{model.name} is not a decoder LLM")
    ffn = float(s.ffn_hidden or 4 * s.hidden)
    if s.is_moe:  # the intermediates of the routed and shared experts a token runs through
        ffn = (s.experts_per_token + s.shared_experts) * (s.expert_ffn_hidden or ffn)
    if not s.gated_mlp:
        return 2.0 * ffn
    return (GATED_MLP_SAVED_FUSED if fused_swiglu else GATED_MLP_SAVED_EAGER) * ffn


def fuses_swiglu(workload: Workload) -> bool:
    """Whether the workload's stack runs a fused SwiGLU that recomputes its SiLU in backward
    (the tuned stack: Megatron-core's `SwiGLUFunction`, see `GATED_MLP_SAVED_FUSED`)."""
    return workload.stack is Stack.TUNED


def llm_layer_activation_values(model: ModelInfo, *, fused_swiglu: bool = False) -> float:
    """Values one decoder layer keeps for backward per token (FlashAttention, no dropout):
    norms' inputs and outputs (4 h), q, k, v and the attention output by their head widths
    (multi-head latent attention: its query and KV latents too), and the MLP's intermediates
    (`llm_mlp_activation_values`, with `fused_swiglu` as there)."""
    s = model.llm
    if s is None:
        raise ValueError(f"{model.name} is not a decoder LLM")
    h = s.hidden
    mlp = llm_mlp_activation_values(model, fused_swiglu=fused_swiglu)
    if s.mla is not None:  # q and k of qk_nope + qk_rope, v and the output of v_head_dim
        m = s.mla
        qk, v = s.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim), s.heads * m.v_head_dim
        latents = m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim
        return 4.0 * h + 2.0 * qk + 2.0 * v + latents + mlp
    head_dim = s.head_dim or h // s.heads
    q = s.heads * head_dim
    kv = (s.kv_heads or s.heads) * head_dim
    return 4.0 * h + 2.0 * q + 2.0 * kv + mlp


# The MLPerf LoRA recipe of the tuned stack (NVIDIA's NeMo/Transformer Engine code): adapters on
# the attention's two projections only (`target_modules: [attention]`, printed in the run's
# configuration, e.g. mlcommons/training_results_v5.0 Dell/results/1xXE9680Lx8H200-SXM-141GB/
# llama2_70b_lora/result_0.txt), attention in fp8 (`FP8_DPA=1`) and the SwiGLU input stored in fp8
# (`FP8_ACT=1`, `activation_func_fp8_input_store`) as the v5.0 `config_common.sh` and the TP1 CP1
# configs set them. Bytes per saved value:
FP8_STORED_BYTES = 1.0  # attention q, k, v, output and the MLP's activation input
RESIDUAL_STREAM_BYTES = 2.0  # norm inputs and adapter inputs stay bf16


def frozen_base_lora_layer_activation_bytes(model: ModelInfo) -> float | None:
    """Bytes one decoder layer keeps per token for backward in the tuned stack's fp8 LoRA
    (`fp8_frozen_base`), counted from what each op needs for its input gradient: a frozen GEMM
    needs only its weight, not its input (no weight gradient), so of the per-layer tensors of
    `llm_layer_activation_values` only these remain: the two norms' inputs, the two adapters'
    inputs (the first norm's output, the attention output after the adapter dropout), the
    attention's q, k, v and output, and the gated MLP's input (gate and up; the activation
    output and the product fed only the frozen down projection). None for shapes this count
    does not cover (mixture-of-experts, multi-head latent attention): the general count applies."""
    s = model.llm
    if s is None or s.is_moe or s.mla is not None:
        return None
    h = s.hidden
    head_dim = s.head_dim or h // s.heads
    q = s.heads * head_dim
    kv = (s.kv_heads or s.heads) * head_dim
    ffn = float(s.ffn_hidden or 4 * h)
    mlp_input = (2.0 if s.gated_mlp else 1.0) * ffn
    residual = 4.0 * h * RESIDUAL_STREAM_BYTES
    return residual + (2.0 * q + 2.0 * kv + mlp_input) * FP8_STORED_BYTES


def _frozen_layer_bytes(workload: Workload, model: ModelInfo) -> float | None:
    """`frozen_base_lora_layer_activation_bytes` where it prices this run's layers (a LoRA of
    the tuned stack with its base in fp8, on a shape that count covers), else None."""
    if workload.task is not Task.FINETUNE_LORA or not fp8_frozen_base(workload):
        return None
    return frozen_base_lora_layer_activation_bytes(model)


def _layer_grad_bytes(workload: Workload, model: ModelInfo, half_store: bool) -> float:
    """One decoder layer's full gradients per GPU (/ tensor x pipeline parallelism): what a
    CPU-offloaded run holds of its gradients while the bucket goes to the host (0 for a LoRA,
    whose adapters' gradients are counted with the weights, and for non-LLM models)."""
    if model.llm is None or workload.task.trains_adapters:
        return 0.0
    layer = llm_layer_params(model.llm) / (workload.tensor_parallel * workload.pipeline_parallel)
    return layer * (2.0 if half_store else 4.0)


def _zero3_gathered_bytes(workload: Workload, model: ModelInfo, half_store: bool) -> float:
    """FSDP's unsharded buffers: ZERO3_GATHERED_LAYERS layers' full weights and one layer's
    full gradients, per GPU (divided by tensor x pipeline parallelism). A LoRA's or QLoRA's
    frozen layers are gathered in the bytes they are stored in, without gradients."""
    if model.llm is None:
        return 0.0
    layer = llm_layer_params(model.llm) / (workload.tensor_parallel * workload.pipeline_parallel)
    value = 2.0 if half_store else 4.0
    if workload.task.trains_adapters:
        # the base is gathered as stored: NF4 (bitsandbytes' packed storage, torchao's NF4
        # tensor all-gathers its quantised data and scalers, `NF4Tensor.fsdp_pre_all_gather`,
        # torchao/dtypes/nf4tensor.py @ 05980129), fp8, bf16, or fp32 when upcast
        value = frozen_base_bytes_per_param(workload.task, fp8_weights=fp8_frozen_base(workload))
        if fp32_upcast_on(workload) and workload.task is Task.FINETUNE_LORA:
            value = FP32_BYTES
    return ZERO3_GATHERED_LAYERS * layer * value + _layer_grad_bytes(workload, model, half_store)


def fused_loss_chunk_tokens(tokens: int, vocab: int, hidden: int) -> int:
    """Tokens per chunk of a fused linear cross-entropy: Liger-Kernel's rule
    (`src/liger_kernel/ops/fused_linear_cross_entropy.py`, commit ead96b61: chunk_size =
    next_power_of_2(ceil(BT / ceil(V / H)))), which sizes a chunk's logits like the hidden
    states it comes from; never more than `tokens`."""
    inc = -(-vocab // hidden)
    per = -(-tokens // inc)
    return min(tokens, 1 << max(0, per - 1).bit_length())


def logits_bytes(workload: Workload, model: ModelInfo, tokens: int, bytes_per_value: int) -> float:
    """Bytes the loss holds at its peak for `tokens` tokens (one micro-batch on one rank),
    divided by tp (vocab-parallel output layer). Materialised: every token's logits at
    LOGIT_BYTES. Fused/chunked (`Workload.fused_loss_on`): one chunk's logits
    (`fused_loss_chunk_tokens`) at LOGIT_BYTES plus the gradient of the output layer's input
    (tokens x hidden), which the kernel computes in forward and keeps for backward; never more
    than the materialised figure (one chunk holding every token is the unfused loss)."""
    s = model.llm
    if s is None:
        raise ValueError(f"{model.name} is not a decoder LLM")
    tp = workload.tensor_parallel
    # fp32 logits (`fp32_upcast`: the output head is fp32) plus the fp32 copy the loss reads
    per_logit = LOGIT_BYTES + (FP32_BYTES - 2.0) if fp32_upcast_on(workload) else LOGIT_BYTES
    full = tokens * s.vocab * per_logit / tp
    if not workload.fused_loss_on:
        return full
    chunk = fused_loss_chunk_tokens(tokens, s.vocab, s.hidden)
    fused = chunk * s.vocab * per_logit / tp + tokens * s.hidden * bytes_per_value / tp
    return min(full, fused)


def _training_activations(
    workload: Workload,
    model: ModelInfo,
    seq: int | None,
    b: int,
    bytes_per_value: int,
    *,
    scale: float,
) -> float:
    """Activation bytes per GPU. `scale` multiplies only the approximate part, the per-layer
    count of the layer(s) held in full (`llm_layer_activation_values`); the checkpointed layer
    inputs (h values per token per layer) and the logits are exact counts and stay unscaled."""
    tp, pp = workload.tensor_parallel, workload.pipeline_parallel
    if model.llm is not None:
        s = model.llm
        seq_len = seq or 2048
        layers = math.ceil(s.layers / pp)
        tokens = seq_len * b
        # tensor parallelism with sequence parallelism: every activation is split over tp
        frozen = _frozen_layer_bytes(workload, model)
        if frozen is not None:
            full_layer = scale * tokens * frozen / tp
        else:
            per_token = llm_layer_activation_values(model, fused_swiglu=fuses_swiglu(workload))
            full_layer = scale * tokens * per_token * bytes_per_value / tp
        logits = logits_bytes(workload, model, tokens, bytes_per_value)
        if workload.activation_checkpointing:
            acts = layers * tokens * s.hidden * bytes_per_value / tp + full_layer
        elif workload.recompute_mode is Recompute.MLP and frozen is None:
            # each layer drops its MLP intermediates; one layer's come back while it recomputes
            per_token_mlp = llm_mlp_activation_values(model, fused_swiglu=fuses_swiglu(workload))
            mlp = scale * tokens * per_token_mlp * bytes_per_value / tp
            acts = layers * (full_layer - mlp) + mlp
        else:
            acts = layers * full_layer
        if tp > 1 and not workload.sequence_parallel_on:
            acts *= 1.0 + (tp - 1) * TP_REPLICATED_SHARE
        # pipeline: the first stage holds `pipeline_in_flight` micro-batches, the last one a
        # single micro-batch and the logits; the peak is the larger of the two stages
        if pp > 1:
            return max(acts * pipeline_in_flight(workload), acts + logits)
        return acts + logits
    values = (
        model.fused_attention_activation_values(seq)
        if workload.stack is Stack.TUNED
        else model.activation_values(seq)
    )
    acts = scale * values * b * bytes_per_value / tp
    if workload.activation_checkpointing:
        acts *= 0.3
    return acts


def min_gpus_for_model_state(workload: Workload, model: ModelInfo, capacity_gib: float) -> int:
    """The fewest GPUs of `capacity_gib` that can hold the model at all: its served weights
    (inference), or its weights, gradients and optimizer states fully sharded (ZeRO-3 over every
    GPU; training), each GPU keeping its CUDA context. Activations, the KV cache, gathered
    layers and fragmentation come on top, so a real layout needs at least this many."""
    if workload.task is Task.INFERENCE:
        state = weights_bytes_for_inference(model, workload.precision)
    else:
        flat = replace(
            workload,
            sharding=Sharding.ZERO3,
            tensor_parallel=1,
            pipeline_parallel=1,
            context_parallel=1,
            expert_parallel=1,
            cpu_offload=False,
        )
        m = memory_breakdown(flat, model, 1, capacity_gib, fragmentation=0.0)
        state = (m.weights_gib + m.gradients_gib + m.optimizer_gib) * BYTES_PER_GIB
    usable = (capacity_gib - CONTEXT_OVERHEAD_GIB) * BYTES_PER_GIB
    return max(1, math.ceil(state / usable)) if usable > 0 else 0


def weights_bytes_for_inference(model: ModelInfo, precision: Precision) -> float:
    """Bytes of the served weights: 1 B/param in fp8 (every fp8 recipe, MXFP8 and, counting
    its higher-precision copies conservatively, NVFP4), 2 B in a 16-bit precision, else 4 B."""
    return model.num_params * (1.0 if precision.is_low_float else 2.0 if precision.is_half else 4.0)


__all__ = [
    "ACTIVATION_SCALE",
    "ADAPTER_ACTIVATION_SCALE",
    "DEFAULT_OUTPUT_TOKENS",
    "FRAGMENTATION",
    "GATED_MLP_SAVED_EAGER",
    "GATED_MLP_SAVED_FUSED",
    "data_parallel_degree",
    "dequantized_weight_bytes",
    "expert_parallel_share",
    "fp8_frozen_base",
    "fp32_upcast_on",
    "frozen_base_bytes",
    "frozen_base_bytes_per_param",
    "frozen_base_lora_layer_activation_bytes",
    "fused_loss_chunk_tokens",
    "fuses_swiglu",
    "llm_layer_activation_values",
    "llm_mlp_activation_values",
    "logits_bytes",
    "lora_params",
    "memory_breakdown",
    "min_gpus_for_model_state",
    "pipeline_in_flight",
    "sharded_state_share",
    "unquantized_params",
    "zero_shard_degree",
]
