"""Flux.1 (Black Forest Labs): parameters and FLOPs per image from the MMDiT block shapes.

FLUX.1-dev is a 12 B rectified-flow transformer (black-forest-labs/FLUX.1-dev,
transformer/config.json: num_layers 19, num_single_layers 38, num_attention_heads 24 x
attention_head_dim 128 = hidden 3072, in_channels 64, joint_attention_dim 4096,
pooled_projection_dim 768, guidance_embeds true; the flux reference code's FluxParams: mlp_ratio
4, qkv_bias). A 1024 px image passes the VAE's 8x downsampling to a 128 x 128 x 16 latent,
packed into 2 x 2 patches: 4096 image tokens of 64 values; the T5-XXL prompt adds 512 text
tokens. The frozen text encoders (T5-XXL, CLIP-L) and the VAE are not counted: they run once
per prompt or image, not per denoising step.

- A double-stream block keeps separate weights for image and text tokens: per stream an adaLN
  modulation (h -> 6 h, once per image), QKV (h -> 3 h), an output projection (h x h) and an
  MLP (h -> 4 h -> h), 12 h^2 multiply-adds per token; attention runs jointly over all
  image + text tokens.
- A single-stream block runs one linear (h -> 3 h + 4 h: QKV and the MLP's up-projection) and
  one (5 h -> h: attention output and MLP output concatenated) on every token, 12 h^2 per
  token, plus its modulation (h -> 3 h).
- Attention: QK^T and PV over s = 4608 keys, 2 x s x h multiply-adds per token and block.

FLOPs count 2 per multiply-add, like the rest of the zoo; biases and norm scales are left out.
Training (rectified flow) runs one forward and backward per image at a sampled timestep, so one
sample costs one denoising step, as the SD-XL and DiT entries count it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class FluxShape:
    """One Flux configuration and its token geometry."""

    double_blocks: int
    single_blocks: int
    hidden: int
    heads: int
    mlp_ratio: int = 4
    in_channels: int = 64  # 16 latent channels x a 2 x 2 patch
    text_dim: int = 4096  # T5-XXL hidden size (joint_attention_dim)
    pooled_dim: int = 768  # CLIP-L pooled embedding (pooled_projection_dim)
    frequency_dim: int = 256  # sinusoidal timestep (and guidance) embedding width
    guidance_embed: bool = True  # FLUX.1-dev is guidance-distilled: a guidance embedder
    image_tokens: int = 4096  # 1024 px: (1024 / 8 / 2)^2
    text_tokens: int = 512  # T5 max_sequence_length of the FLUX.1-dev pipeline

    @property
    def tokens(self) -> int:
        """Tokens per sample in the joint attention: image tokens plus text tokens."""
        return self.image_tokens + self.text_tokens


def _token_block_macs(f: FluxShape) -> int:
    """Weight multiply-adds per token of either block kind: (3 + 1 + 2 x mlp_ratio) h^2."""
    return (4 + 2 * f.mlp_ratio) * f.hidden * f.hidden


def _embedder_params(f: FluxShape) -> int:
    """Timestep, guidance and pooled-text MLPs (in -> h -> h each)."""
    h = f.hidden
    time = f.frequency_dim * h + h * h
    guidance = time if f.guidance_embed else 0
    return time + guidance + f.pooled_dim * h + h * h


def flux_params(f: FluxShape) -> float:
    """Weights of the transformer (biases and norm scales omitted)."""
    h = f.hidden
    double = f.double_blocks * 2 * (6 * h * h + _token_block_macs(f))
    single = f.single_blocks * (3 * h * h + _token_block_macs(f))
    io = f.in_channels * h + f.text_dim * h + 2 * h * h + h * f.in_channels
    return float(double + single + io + _embedder_params(f))


def flux_forward_macs(f: FluxShape) -> float:
    """Multiply-adds of one image's forward pass (one denoising step)."""
    h, s = f.hidden, f.tokens
    blocks = f.double_blocks + f.single_blocks
    per_token = blocks * (_token_block_macs(f) + 2 * s * h)
    io = f.image_tokens * 2 * f.in_channels * h + f.text_tokens * f.text_dim * h
    per_image = (f.double_blocks * 12 + f.single_blocks * 3 + 2) * h * h + _embedder_params(f)
    return float(s * per_token + io + per_image)


def flux_forward_flops(f: FluxShape) -> float:
    """FLOPs of one image's forward pass, 2 per multiply-add."""
    return 2.0 * flux_forward_macs(f)


def flux_activation_values(f: FluxShape) -> float:
    """Values kept for backward per image: Korthikanti et al. 2022's 17 h per token and block
    with fused attention (no s x s scores kept: diffusers' Flux attention runs PyTorch's
    scaled_dot_product_attention)."""
    return float(f.tokens * (f.double_blocks + f.single_blocks) * 17.0 * f.hidden)


FLUX_DEV = FluxShape(double_blocks=19, single_blocks=38, hidden=3072, heads=24)
