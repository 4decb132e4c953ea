"""The model zoo: each model's parameters, FLOPs and memory traffic per sample, from its shape.

Every cost here is derived from the architecture (layer counts and widths from the model's paper
or reference implementation), not from measurements; the estimator's fitted efficiencies turn
them into time. Conventions:

- `forward_flops(seq_len)` counts multiply-adds as 2 FLOPs for one sample's forward pass.
  Training costs 3x forward (backward = 2x forward), +1 forward with activation recomputation.
- `activation_values(seq_len)` counts the values kept for the backward pass per sample
  (feature maps, per-layer transformer activations). Times bytes per value it is both the
  activation memory and (times a fitted traffic factor) the DRAM traffic of the
  memory-bound kernels (normalisation, activations, softmax, optimizer excluded).
- Transformers use Korthikanti et al. 2022 ("Reducing activation recomputation"): per layer and
  token, h x (17 + 2.5 a s / h) values without FlashAttention (the 34 sbh + 5 a s^2 b bytes of
  the paper at 2 bytes/value); FlashAttention drops the 2.5 a s / h score term. Forward FLOPs per
  token: 2 x (parameters) + attention. Attention over the full s x s scores and values is
  4 x L x s x h per token (QK^T and PV, 2 FLOPs per multiply-add); a causal decoder computes only
  the lower triangle, half of it, 2 x L x s x h (`llm_attention_flops_per_token`). Encoders (BERT,
  ViT) attend both ways and keep the full count.
- `units_per_sample`: how many of the customary throughput unit one sample holds (tokens per
  GNMT sentence pair, mel frames per Tacotron 2 utterance, audio samples per WaveGlow segment).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from gpurent.workload.spec import LlmShape


@dataclass(frozen=True, slots=True, kw_only=True)
class EncoderShape:
    """A bidirectional transformer encoder (BERT, ViT)."""

    layers: int
    hidden: int
    heads: int
    ffn_hidden: int
    vocab: int  # 0 for ViT (patch embedding instead)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelInfo:
    """One zoo model. Fixed-shape models give constant per-sample costs; transformers give a
    shape and their costs follow `seq_len`."""

    name: str
    family: str  # "cnn", "encoder", "rnn", "tts", "recsys", "decoder-llm"
    description: str
    throughput_unit: str
    default_batch_size: int
    default_seq_len: int | None = None
    params: float = 0.0  # fixed-shape models; shapes compute their own
    fixed_forward_flops: float = 0.0  # per sample, fixed-shape models
    fixed_activation_values: float = 0.0  # per sample, fixed-shape models
    fixed_units_per_sample: float = 1.0
    encoder: EncoderShape | None = None
    llm: LlmShape | None = None
    calibration_key: str = ""  # which fitted coefficient set applies ("" = own name)
    source: str = ""

    @property
    def is_llm(self) -> bool:
        """Whether the model is a decoder LLM with a known shape."""
        return self.llm is not None

    @property
    def key(self) -> str:
        """The model's key in the calibration constants (its name unless set)."""
        return self.calibration_key or self.name

    @property
    def uses_seq_len(self) -> bool:
        """Whether the model's cost depends on the sequence length (encoders and LLMs)."""
        return self.encoder is not None or self.llm is not None

    @property
    def num_params(self) -> float:
        """Parameter count: from the LLM or encoder shape when known, else the listed figure."""
        if self.llm is not None:
            return llm_params(self.llm)
        if self.encoder is not None:
            e = self.encoder
            return e.layers * _encoder_layer_params(e) + e.vocab * e.hidden
        return self.params

    def forward_flops(self, seq_len: int | None = None) -> float:
        """FLOPs of one sample's forward pass (2 per multiply-add)."""
        return _costs(self, seq_len or self.default_seq_len or 0)[0]

    def activation_values(self, seq_len: int | None = None, *, flash: bool = True) -> float:
        """Values stored for backward per sample (LLMs: with FlashAttention when `flash`)."""
        c = _costs(self, seq_len or self.default_seq_len or 0)
        return c[1] if (flash or self.llm is None) else c[2]

    def fused_attention_activation_values(self, seq_len: int | None = None) -> float:
        """Values stored for backward per sample when attention runs as one fused kernel that
        keeps no s x s score, softmax or dropout tensor (FlashAttention; the fused multi-head
        attention of NVIDIA's MLPerf BERT): encoders drop their 2.5 a s / h term per layer and
        value (Korthikanti et al. 2022's 5 a s / h bytes at 2 B); other models as
        `activation_values`."""
        if self.encoder is None:
            return self.activation_values(seq_len)
        e = self.encoder
        return float((seq_len or self.default_seq_len or 0) * e.layers * e.hidden * 17.0)

    def units_per_sample(self, seq_len: int | None = None) -> float:
        """Throughput units per sample: tokens per sequence for token-counted models."""
        if self.llm is not None:
            return float(seq_len or self.default_seq_len or 1)
        return self.fixed_units_per_sample


def _encoder_layer_params(e: EncoderShape) -> float:
    return 4 * e.hidden * e.hidden + 2 * e.hidden * e.ffn_hidden


def llm_attention_params(shape: LlmShape) -> float:
    """Attention weights of one decoder layer: Q and O (heads x head_dim), K and V (kv_heads);
    with multi-head latent attention (`LlmShape.mla`) the down- and up-projections of the query
    and of the KV latent, the RoPE key and O (heads x v_head_dim)."""
    h = shape.hidden
    if shape.mla is not None:
        m = shape.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        q = (
            (h * m.q_lora_rank + m.q_lora_rank * shape.heads * qk)
            if m.q_lora_rank
            else h * (shape.heads * qk)
        )
        kv = h * (m.kv_lora_rank + m.qk_rope_head_dim)
        kv += m.kv_lora_rank * shape.heads * (m.qk_nope_head_dim + m.v_head_dim)
        return float(q + kv + shape.heads * m.v_head_dim * h)
    head_dim = shape.head_dim or h // shape.heads
    q = shape.heads * shape.head_dim if shape.head_dim else h
    kv = (shape.kv_heads or shape.heads) * head_dim
    return 2 * h * q + 2 * h * kv


def llm_attention_width(shape: LlmShape) -> int:
    """The width h in the attention-score and -value FLOPs (QK^T + PV = 2 x 2 x h per query and
    key): `hidden`, or with multi-head latent attention heads x (qk head dim + v head dim) / 2
    (DeepSeek-V3: 128 x (192 + 128) / 2 = 20480). GQA models whose heads x head_dim differs
    from `hidden` (Qwen3 MoE, gpt-oss) keep `hidden`, an approximation."""
    if shape.mla is None:
        return shape.hidden
    m = shape.mla
    return shape.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) // 2


def llm_kv_cache_values_per_token(shape: LlmShape) -> float:
    """Values one token keeps in the KV cache over all layers: K and V of every KV head
    (2 x layers x kv_heads x head_dim), or with multi-head latent attention the latent and RoPE
    key, layers x (kv_lora_rank + qk_rope_head_dim)."""
    if shape.mla is not None:
        return float(shape.layers * shape.mla.kv_cache_values_per_layer)
    head_dim = shape.head_dim or shape.hidden // shape.heads
    return 2.0 * shape.layers * (shape.kv_heads or shape.heads) * head_dim


def _windowed_layers(shape: LlmShape) -> int:
    return shape.sliding_window_layers if shape.sliding_window > 0 else 0


def llm_kv_cache_values(shape: LlmShape, tokens: float) -> float:
    """Values the KV cache holds for one sequence of `tokens` tokens: every full-attention layer
    keeps all of them, a sliding-window layer at most `sliding_window`."""
    per_layer = llm_kv_cache_values_per_token(shape) / shape.layers
    windowed = _windowed_layers(shape)
    kept = (shape.layers - windowed) * tokens + windowed * min(tokens, shape.sliding_window)
    return per_layer * kept


def llm_attended_keys(shape: LlmShape, context: float) -> float:
    """Keys one query at position `context` attends to, summed over the layers (decode)."""
    windowed = _windowed_layers(shape)
    return (shape.layers - windowed) * context + windowed * min(context, shape.sliding_window)


def _mean_causal_keys(shape: LlmShape, seq_len: int) -> float:
    """Keys a query attends to on average over a causal sequence, summed over the layers: s / 2
    per full layer; a window-w layer min(i + 1, w) averaged, w - w^2 / (2 s) when s > w."""
    windowed = _windowed_layers(shape)
    w = shape.sliding_window
    window_keys = seq_len / 2.0 if seq_len <= w else w - w * w / (2.0 * seq_len)
    return (shape.layers - windowed) * seq_len / 2.0 + windowed * window_keys


def llm_expert_params(shape: LlmShape) -> float:
    """Weights of one expert's MLP (0 for a dense model)."""
    if not shape.is_moe:
        return 0.0
    ffn = shape.expert_ffn_hidden or shape.ffn_hidden or 4 * shape.hidden
    return float((3 if shape.gated_mlp else 2) * shape.hidden * ffn)


def _dense_mlp_params(shape: LlmShape) -> float:
    ffn = shape.ffn_hidden or 4 * shape.hidden
    return float((3 if shape.gated_mlp else 2) * shape.hidden * ffn)


def llm_layer_params(shape: LlmShape) -> float:
    """Weights of one decoder layer: attention (Q, O full; K, V by kv_heads) + MLP (MoE: every
    routed expert, the router and the shared experts; a model's largest layer)."""
    h = shape.hidden
    if shape.is_moe:
        experts = shape.experts * (llm_expert_params(shape) + h)
        return (
            llm_attention_params(shape) + experts + shape.shared_experts * llm_expert_params(shape)
        )
    return llm_attention_params(shape) + _dense_mlp_params(shape)


def _dense_layers_params(shape: LlmShape) -> float:
    """Weights of the dense-MLP layers that open a DeepSeekMoE model (0 without them)."""
    if not shape.is_moe:
        return 0.0
    return shape.dense_layers * (llm_attention_params(shape) + _dense_mlp_params(shape))


def _embedding_params(shape: LlmShape) -> float:
    return float(shape.vocab * shape.hidden * (1 if shape.tied_embeddings else 2))


def llm_params(shape: LlmShape) -> float:
    """Total parameters: layers + token embedding (+ the output head when untied)."""
    layers = shape.moe_layers if shape.is_moe else shape.layers
    return layers * llm_layer_params(shape) + _dense_layers_params(shape) + _embedding_params(shape)


def llm_expert_params_total(shape: LlmShape) -> float:
    """Weights of all routed experts of all layers (what expert parallelism splits; shared
    experts stay on every GPU; 0 when dense)."""
    return shape.moe_layers * shape.experts * llm_expert_params(shape)


def llm_active_params(shape: LlmShape) -> float:
    """Parameters one token computes with: a dense model's all; a MoE model's attention,
    router, `experts_per_token` routed and the shared experts per MoE layer, the dense layers
    and the embeddings (the convention of Mixtral's 12.9B and Qwen3-30B-A3B's 3.3B "active"
    counts; DeepSeek-V3's 36.6B and gpt-oss-120b's 5.13B leave out the input embedding)."""
    if not shape.is_moe:
        return llm_params(shape)
    per_layer = llm_attention_params(shape) + shape.experts * shape.hidden
    per_layer += (shape.experts_per_token + shape.shared_experts) * llm_expert_params(shape)
    return shape.moe_layers * per_layer + _dense_layers_params(shape) + _embedding_params(shape)


def llm_matmul_params(shape: LlmShape) -> float:
    """Weights a token multiplies with: the active parameters less the input embedding of an
    untied model, which is a table lookup, not a matrix product. A tied model's one embedding
    matrix is the output layer's weight, so it counts once either way. (Megatron-LM's FLOPs
    formula in Narayanan et al. 2021, 96 B s l h^2 (1 + s / 6h + V / 16lh), counts the same:
    the layers and one vocab x hidden output GEMM; the 6 N of Kaplan et al. 2020 leaves out
    the embeddings altogether.) For an
    untied Llama 3 8B the input embedding is 6.5 % of its 8.03B parameters, for gpt-oss-20b
    about 16 % of its active ones."""
    untied_input = 0.0 if shape.tied_embeddings else float(shape.vocab * shape.hidden)
    return llm_active_params(shape) - untied_input


def llm_mlp_active_params(shape: LlmShape) -> float:
    """MLP weights one token computes with, over all layers: a dense model's every MLP; a MoE
    model's `experts_per_token` routed and its shared experts per MoE layer plus the MLPs of its
    dense layers (what recomputing the MLP, Megatron's `--recompute-modules mlp`, reruns)."""
    if not shape.is_moe:
        return shape.layers * _dense_mlp_params(shape)
    per_layer = (shape.experts_per_token + shape.shared_experts) * llm_expert_params(shape)
    return shape.moe_layers * per_layer + shape.dense_layers * _dense_mlp_params(shape)


def llm_attention_flops_per_token(shape: LlmShape, seq_len: int, *, training: bool = True) -> float:
    """Attention-score and -value FLOPs per token of a causal decoder: 2 x L x s x h forward
    (x 3 for training), half of the full 4 x L x s x h.

    Token i attends to i + 1 keys, so QK^T and PV of a sequence cost 2 x 2 x h x s (s + 1) / 2
    per layer, ~2 L h s per token. FlashAttention-2 (Dao 2023, arXiv:2307.08691, section 3.1.1 on
    causal masking) skips the key blocks above the diagonal, about half of them, and its
    benchmarks (section 4.1) count causal attention as half of the non-causal 4 s^2 d heads
    forward FLOPs; every current LLM stack runs such a kernel. Sliding-window layers (gpt-oss)
    count the keys inside their window (`_mean_causal_keys`); multi-head latent attention its
    own width (`llm_attention_width`). PaLM's appendix B MFU formula
    (6 N + 12 L h s, Chowdhery et al. 2022) counts the full square; it is not used here."""
    fwd = 4.0 * llm_attention_width(shape) * _mean_causal_keys(shape, seq_len)
    return 3.0 * fwd if training else fwd


def llm_flops_per_token(shape: LlmShape, seq_len: int, *, training: bool = True) -> float:
    """Model FLOPs per token with causal attention: 6 N + 6 L h s for training (forward
    2 N + 2 L h s, backward twice that), N = the weights a token multiplies with
    (`llm_matmul_params`: the active parameters with the output layer, without an untied input
    embedding, which is a lookup). This is the convention of
    every figure gpurent reports, MFU included (the
    FlashAttention-2 count; PaLM's appendix B and MosaicML's 6 N + 12 L h s count the full
    s x s square and give a higher MFU at long context: at s = 8192, +12 % for llama3-8b)."""
    n = llm_matmul_params(shape)
    return (6.0 if training else 2.0) * n + llm_attention_flops_per_token(
        shape, seq_len, training=training
    )


@cache
def _costs(model: ModelInfo, seq_len: int) -> tuple[float, float, float]:
    """(forward FLOPs, activation values with FlashAttention, without) per sample."""
    if model.llm is not None:
        s = model.llm
        fwd_tok = llm_flops_per_token(s, seq_len, training=False)
        base = s.hidden * 17.0
        score = 2.5 * s.heads * seq_len
        logits = s.vocab * 2.0  # fp32 logits for the loss (2 values' worth at 2 bytes)
        flash = seq_len * (s.layers * base + logits)
        plain = seq_len * (s.layers * (base + score) + logits)
        return fwd_tok * seq_len, flash, plain
    if model.encoder is not None:
        e = model.encoder
        tok = 2 * e.layers * _encoder_layer_params(e) + 4 * e.layers * seq_len * e.hidden
        head = 2 * e.hidden * e.vocab * 0.15 if e.vocab else 0.0  # MLM head on 15% of tokens
        acts = e.layers * e.hidden * (17.0 + 2.5 * e.heads * seq_len / e.hidden)
        return seq_len * (tok + head), seq_len * acts, seq_len * acts
    return model.fixed_forward_flops, model.fixed_activation_values, model.fixed_activation_values
