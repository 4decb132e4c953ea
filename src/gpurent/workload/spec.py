"""Workload: what the user wants to run, as typed values.

A Workload names a model from the zoo (or gives an LLM shape), the task, the precision, the
per-GPU batch, the amount of work (dataset x epochs, or a token budget) and the memory savers and
parallel layout. Presets are ready-made Workloads; files (TOML/YAML) load into one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gpurent.catalog.precision import Precision
from gpurent.inputs.choices import parse_choice


class Task(StrEnum):
    """What the job does: training, full / LoRA / QLoRA fine-tuning, or inference."""

    TRAINING = "training"
    FINETUNE_FULL = "finetune-full"
    FINETUNE_LORA = "finetune-lora"
    FINETUNE_QLORA = "finetune-qlora"
    INFERENCE = "inference"

    @property
    def trains(self) -> bool:
        """Whether the task updates the weights (anything but inference)."""
        return self is not Task.INFERENCE

    @property
    def trains_adapters(self) -> bool:
        """Whether the task trains LoRA adapters on a frozen base (LoRA, QLoRA)."""
        return self in _ADAPTER_TASKS


_ADAPTER_TASKS = frozenset({Task.FINETUNE_LORA, Task.FINETUNE_QLORA})


class Optimizer(StrEnum):
    """The optimizer, which sets the bytes of optimizer state per parameter."""

    ADAMW = "adamw"
    SGD = "sgd"
    ADAFACTOR = "adafactor"
    ADAM_8BIT = "adam8bit"


class Sharding(StrEnum):
    """How training state is split across data-parallel ranks (ZeRO stages; FSDP = ZeRO-3)."""

    NONE = "none"
    ZERO1 = "zero1"  # optimizer states
    ZERO2 = "zero2"  # + gradients
    ZERO3 = "zero3"  # + weights (FSDP FULL_SHARD)
    # hybrid sharding (FSDP HYBRID_SHARD): ZeRO-3 inside a shard group of the data-parallel
    # ranks one node holds, plain replicas (gradient all-reduce) across the groups
    HSDP = "hsdp"

    @property
    def shards_weights(self) -> bool:
        """ZeRO-3 or HSDP: weights (and gradients and optimizer states) are sharded."""
        return self in (Sharding.ZERO3, Sharding.HSDP)


class Recompute(StrEnum):
    """Activation recomputation in backward (Korthikanti et al. 2022, "Reducing Activation
    Recomputation in Large Transformer Models"): `full` keeps each layer's input and recomputes
    the whole layer; `selective` recomputes only attention's core (scores, softmax, dropout);
    `mlp` recomputes each layer's MLP (a MoE layer's experts) from its input, as Megatron-LM's
    `--recompute-modules mlp` (NVIDIA's MLPerf v6.0 DeepSeek-V3 GB200 recipe sets
    `RECOMPUTE_MODULES="mlp"`); `none` keeps everything."""

    NONE = "none"
    SELECTIVE = "selective"
    MLP = "mlp"
    FULL = "full"


class Stack(StrEnum):
    """The software stack a non-LLM training estimate assumes (RESEARCH §2: the same GPU runs
    the same model up to 1.5x faster in NVIDIA's tuned examples than in Lambda's stock scripts,
    and Lambda's NGC 22.09 runs scale far worse across GPUs than its 24.03 ones).

    The first three run the DeepLearningExamples-derived PyTorch scripts; they differ in
    container and tuning. Decoder LLMs assume MosaicML llm-foundry (FSDP, FlashAttention) under
    all of them except `tuned`, MLPerf-grade code (NVIDIA's NeMo/Megatron MLPerf
    implementations), whose factors are fitted on MLPerf Training results."""

    NGC_22_09 = "ngc-22.09"  # Lambda v1: NGC pytorch:22.09, stock scripts, slow DDP all-reduce
    NGC_24 = "ngc-24"  # Lambda v2: NGC pytorch:24.x, stock scripts, link-bound all-reduce
    NVIDIA_DLE = "nvidia-dle"  # NVIDIA's tuned DeepLearningExamples (DALI, channels-last)
    # MLPerf-grade reference implementations (NVIDIA's and AMD's MLPerf Training code): fitted on
    # MLPerf Training results (benchmarks/fit_tuned_stack.py); the one stack LLMs also read
    TUNED = "tuned"

    @property
    def description(self) -> str:
        """One line naming the containers and scripts this stack stands for."""
        return _STACK_DESCRIPTIONS[self]

    @property
    def fuses_loss(self) -> bool:
        """Whether this stack's default cross-entropy is fused/chunked (the full logits never
        materialised): False for all three, as for stock PyTorch and MosaicML llm-foundry,
        which the LLM estimates assume (`nn.CrossEntropyLoss` or flash-attn's fused softmax
        kernel on the full logits tensor). `Workload.fused_loss` overrides it."""
        return False


class AttentionKernel(StrEnum):
    """The fused attention kernel of decoder-LLM training (docs/estimator.md, "The attention
    kernel"). `auto` is what the stack runs on the GPU: PyTorch's `scaled_dot_product_attention`
    (FlashAttention-2) under the default stacks, the architecture's fastest kernel under
    `tuned`. `fitted` is the kernel of the reference data the LLM constants were fitted on
    (MosaicML llm-foundry on A100s), the estimator's behaviour before this input existed."""

    AUTO = "auto"
    FITTED = "fitted"
    FA2 = "fa2"  # FlashAttention-2 (Dao 2023), PyTorch SDPA's flash backend
    FA3 = "fa3"  # FlashAttention-3 (Shah et al. 2024), Hopper only
    CUDNN = "cudnn"  # cuDNN fused attention (Transformer Engine, SDPA's cuDNN backend)
    FA4 = "fa4"  # FlashAttention-4 (Zadouri et al. 2026), Blackwell only


_STACK_DESCRIPTIONS = {
    Stack.NGC_22_09: "PyTorch NGC 22.09 container, Lambda's stock scripts (no DALI)",
    Stack.NGC_24: "PyTorch NGC 24.x container, Lambda's stock scripts (no DALI)",
    Stack.NVIDIA_DLE: "NVIDIA DeepLearningExamples, tuned (DALI, channels-last)",
    Stack.TUNED: (
        "MLPerf-grade reference code (NVIDIA/AMD MLPerf Training implementations: sequence "
        "packing, fused kernels, CUDA graphs, DALI), fitted on MLPerf Training results"
    ),
}


STACK_ALIASES: dict[str, Stack] = {
    "ngc-22": Stack.NGC_22_09,
    "22.09": Stack.NGC_22_09,
    "ngc22": Stack.NGC_22_09,
    "ngc-24.03": Stack.NGC_24,
    "24.03": Stack.NGC_24,
    "ngc24": Stack.NGC_24,
    "dle": Stack.NVIDIA_DLE,
    "mlperf": Stack.TUNED,
}
SHARDING_ALIASES: dict[str, Sharding] = {
    "fsdp": Sharding.ZERO3,
    "full_shard": Sharding.ZERO3,
    "hybrid_shard": Sharding.HSDP,
    "hybrid": Sharding.HSDP,
}
# true/false mean full/none, as the older `activation_checkpointing` flag
RECOMPUTE_ALIASES: dict[str, Recompute] = {
    **dict.fromkeys(("true", "yes", "1"), Recompute.FULL),
    **dict.fromkeys(("false", "no", "0"), Recompute.NONE),
}


def parse_task(value: str | Task, where: str | None = None) -> Task:
    """`Task` from its name (case-insensitive). Raises `NotFoundError` (an `InputError`) with
    "did you mean" and the choices."""
    return parse_choice(Task, value, what="task", where=where)


def parse_optimizer(value: str | Optimizer, where: str | None = None) -> Optimizer:
    """`Optimizer` from its name (case-insensitive); errors as `parse_task`."""
    return parse_choice(Optimizer, value, what="optimizer", where=where)


def parse_stack(value: str | Stack, where: str | None = None) -> Stack:
    """`Stack` from its name (case-insensitive; "ngc-22", "22.09", "ngc-24.03", "dle" accepted);
    errors as `parse_task`."""
    return parse_choice(Stack, value, what="software stack", where=where, aliases=STACK_ALIASES)


def parse_sharding(value: str | Sharding, where: str | None = None) -> Sharding:
    """`Sharding` from its name (case-insensitive; "fsdp" and "full_shard" mean zero3);
    errors as `parse_task`."""
    return parse_choice(Sharding, value, what="sharding", where=where, aliases=SHARDING_ALIASES)


def parse_recompute(value: str | Recompute, where: str | None = None) -> Recompute:
    """`Recompute` from its name (case-insensitive; true/false mean full/none, as the older
    `activation_checkpointing` flag); errors as `parse_task`."""
    return parse_choice(Recompute, value, what="recompute", where=where, aliases=RECOMPUTE_ALIASES)


@dataclass(frozen=True, slots=True, kw_only=True)
class MlaShape:
    """Multi-head latent attention (DeepSeek-V2/V3; DeepSeek-V3 technical report, arXiv:2412.19437,
    section 2.1.1): queries through a `q_lora_rank` bottleneck (0: a direct projection), keys and
    values from one `kv_lora_rank` latent plus a shared `qk_rope_head_dim` RoPE key. Each head
    scores with qk_nope + qk_rope dimensions and returns `v_head_dim` values; the KV cache holds
    only the latent and the RoPE key per token and layer."""

    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int

    @property
    def kv_cache_values_per_layer(self) -> int:
        """Values one token keeps in the KV cache per layer: latent + RoPE key."""
        return self.kv_lora_rank + self.qk_rope_head_dim


@dataclass(frozen=True, slots=True, kw_only=True)
class LlmShape:
    """A decoder-only transformer by shape. `kv_heads` < `heads` means grouped-query attention;
    `ffn_hidden` defaults to 4 x hidden (GPT) and is set explicitly for SwiGLU models (Llama)."""

    layers: int
    hidden: int
    heads: int
    vocab: int
    kv_heads: int | None = None
    ffn_hidden: int | None = None
    gated_mlp: bool = False  # SwiGLU: three FFN matrices instead of two
    tied_embeddings: bool = True  # False: a separate output head (Llama, Mistral)
    head_dim: int | None = None  # None: hidden / heads (Qwen3 MoE: 128 with hidden 2048)
    # mixture of experts: every layer's MLP is `experts` experts of `expert_ffn_hidden` (None:
    # ffn_hidden), `experts_per_token` of them active per token, plus a router (0: dense)
    experts: int = 0
    experts_per_token: int = 0
    expert_ffn_hidden: int | None = None
    # DeepSeekMoE: the first `dense_layers` layers keep a dense MLP of `ffn_hidden`, and each MoE
    # layer runs `shared_experts` experts of `expert_ffn_hidden` on every token besides the routed
    dense_layers: int = 0
    shared_experts: int = 0
    mla: MlaShape | None = None  # multi-head latent attention; None: (grouped-query) attention
    # sliding-window attention on `sliding_window_layers` of the layers (gpt-oss: every other
    # one, window 128): a query there sees at most `sliding_window` keys (0: none windowed)
    sliding_window: int = 0
    sliding_window_layers: int = 0

    @property
    def is_moe(self) -> bool:
        """Whether the model is a mixture of experts."""
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is experts (all of them but `dense_layers`; 0 for a dense model)."""
        return self.layers - self.dense_layers if self.is_moe else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """One job. `batch_size_per_gpu` is the micro-batch per GPU (samples or sequences).

    Layout: GPUs = tensor_parallel x context_parallel x pipeline_parallel x data parallel.
    `virtual_pipeline_stages` > 1 is Megatron's interleaved 1F1B schedule (model chunks per
    pipeline rank); `sequence_parallel` splits the activations outside the tensor-parallel GEMMs
    over the tensor-parallel ranks (None: on with tensor parallelism, as Megatron-LM and
    torchtitan run it and as the estimator always assumed); `context_parallel` splits each
    sequence over that many GPUs (ring attention). `recompute` is the activation
    recomputation; `activation_checkpointing` = true is the older spelling of
    `recompute = "full"` and the two always agree on full (`recompute_mode`). `fused_loss`
    says whether the cross-entropy is fused with the output layer and chunked over tokens
    (Liger-Kernel's FusedLinearCrossEntropy, torchtune's LinearCrossEntropyLoss), so the logits
    of all tokens never exist at once (None: the stack's default, `Stack.fuses_loss`).
    `fp32_upcast` (LoRA/QLoRA only) holds every unquantised parameter, activation and logit in
    fp32, as Hugging Face PEFT's QLoRA preparation does. `cpu_offload` keeps the optimizer
    states and the gradients in host memory and steps on the CPU (ZeRO-Offload, FSDP's
    CPUOffload); with weight sharding `offload_params` says whether the weight shards go too."""

    model: str  # a model-zoo name, or "custom" with `shape`
    task: Task = Task.TRAINING
    precision: Precision = Precision.AMP
    batch_size_per_gpu: int = 32
    seq_len: int | None = None  # tokens per sequence, where the model has sequences
    shape: LlmShape | None = None
    # Amount of work: dataset_samples x epochs, or token_budget tokens (LLMs), or requests.
    dataset_samples: int | None = None
    epochs: float | None = None
    token_budget: float | None = None
    # Inference: tokens generated per request (prompt = seq_len).
    output_tokens: int | None = None
    optimizer: Optimizer = Optimizer.ADAMW
    activation_checkpointing: bool = False
    sharding: Sharding = Sharding.NONE
    cpu_offload: bool = False
    # with cpu_offload and weight sharding (ZeRO-3/FSDP/HSDP): whether the weight shards live on
    # the host too (FSDP's CPUOffload, DeepSpeed's offload_param) or stay on the GPU (DeepSpeed's
    # offload_optimizer alone); None: on, as FSDP offloads them (`offloads_params`)
    offload_params: bool | None = None
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    virtual_pipeline_stages: int = 1
    sequence_parallel: bool | None = None  # None: on wherever tensor_parallel > 1
    context_parallel: int = 1
    # mixture of experts: each expert's weights live on 1 of `expert_parallel` GPUs of the
    # data-parallel (x context-parallel) ranks; tokens travel to them by all-to-all
    expert_parallel: int = 1
    recompute: Recompute = Recompute.NONE
    gradient_accumulation: int = 1
    lora_rank: int = 16
    fused_loss: bool | None = None  # None: the stack's default (`fused_loss_on`)
    # an adapter fine-tune run as PEFT's `prepare_model_for_kbit_training` leaves it (HF
    # transformers + bitsandbytes QLoRA): every parameter not stored quantised is fp32, so the
    # activations and logits are fp32 too (memory only; `gpurent.estimate.memory`)
    fp32_upcast: bool = False
    # decoder-LLM training's attention kernel (auto: the stack's own on that GPU)
    attention_kernel: AttentionKernel = AttentionKernel.AUTO
    # software stack of non-LLM training (LLMs: llm-foundry whatever this says)
    stack: Stack = Stack.NGC_24
    name: str = ""  # a label for reports (preset name or file stem)

    def __post_init__(self) -> None:
        # recompute = full and activation_checkpointing = true are one setting (older files and
        # flags say the latter): keep the bool true for full so every reader of either agrees
        if self.recompute is Recompute.FULL and not self.activation_checkpointing:
            object.__setattr__(self, "activation_checkpointing", True)

    @property
    def sequence_parallel_on(self) -> bool:
        """Whether the tensor-parallel ranks also split the activations outside their GEMMs:
        with tensor parallelism, unless `sequence_parallel` is false (None means the Megatron /
        torchtitan default, on)."""
        return self.tensor_parallel > 1 and self.sequence_parallel is not False

    @property
    def offloads_params(self) -> bool:
        """Whether the weight shards live in host memory: CPU offload with weight sharding,
        unless `offload_params` is false (the optimizer alone is offloaded)."""
        return (
            self.cpu_offload and self.sharding.shards_weights and self.offload_params is not False
        )

    @property
    def fused_loss_on(self) -> bool:
        """Whether the loss is fused/chunked: `fused_loss`, or the stack's default where None."""
        return self.stack.fuses_loss if self.fused_loss is None else self.fused_loss

    @property
    def recompute_mode(self) -> Recompute:
        """The recomputation in effect: full when `activation_checkpointing`, else `recompute`."""
        return Recompute.FULL if self.activation_checkpointing else self.recompute
