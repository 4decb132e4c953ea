"""Encoder-decoder transformers (T5): parameters from the shape, FLOPs by the 6 N rule.

T5 (Raffel et al. 2020, JMLR 21, "Exploring the Limits of Transfer Learning...", section 3.7
and Table 14's sizes; shapes as released: base 12 + 12 layers, d_model 768, d_ff 3072, 12 heads
of 64; large 24 + 24, 1024, 4096, 16 heads of 64; vocabulary 32,128, one embedding shared by the
encoder, the decoder and the output layer, no biases).

Rule (stated, not measured): training costs 6 N FLOPs per token (Kaplan et al. 2020,
arXiv:2001.08361, section 2.1: 2 N forward, 4 N backward), N = all parameters, over the
sample's tokens; the forward pass is its third, 2 N per token. The attention-score term and the
split of tokens between encoder and decoder are left out, as the rule leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class T5Shape:
    """One T5 configuration."""

    layers: int  # per stack: the encoder and the decoder each have this many
    hidden: int
    heads: int
    head_dim: int
    ffn_hidden: int
    vocab: int = 32128
    relative_buckets: int = 32


def t5_params(t: T5Shape) -> float:
    """Weights: encoder layers (self-attention, MLP, 2 norms), decoder layers (self- and
    cross-attention, MLP, 3 norms), final norms, relative position biases, shared embedding."""
    inner = t.heads * t.head_dim
    attn = 4 * t.hidden * inner
    mlp = 2 * t.hidden * t.ffn_hidden
    enc = t.layers * (attn + mlp + 2 * t.hidden) + t.hidden
    dec = t.layers * (2 * attn + mlp + 3 * t.hidden) + t.hidden
    rel = 2 * t.relative_buckets * t.heads
    return float(enc + dec + rel + t.vocab * t.hidden)


def t5_training_flops_per_token(t: T5Shape) -> float:
    """The 6 N rule."""
    return 6.0 * t5_params(t)


def t5_forward_flops(t: T5Shape, tokens: int) -> float:
    """Forward FLOPs of one sample of `tokens` tokens: 2 N per token (the rule's forward)."""
    return t5_training_flops_per_token(t) / 3.0 * tokens


def t5_activation_values(t: T5Shape, tokens: int) -> float:
    """Values kept for backward per sample: Korthikanti et al. 2022's h x (17 + 2.5 a s / h) per
    layer and token on both stacks (the decoder's cross-attention counted as one more layer's
    worth on half of them)."""
    per_layer = tokens * (17.0 * t.hidden + 2.5 * t.heads * tokens)
    return 2.5 * t.layers * per_layer


T5_BASE = T5Shape(layers=12, hidden=768, heads=12, head_dim=64, ffn_hidden=3072)
T5_LARGE = T5Shape(layers=24, hidden=1024, heads=16, head_dim=64, ffn_hidden=4096)
T5_TOKENS = 512  # C4 span-corruption inputs per sample (Raffel et al. section 3.1.2)
