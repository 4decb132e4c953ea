"""Diffusion transformers (DiT): parameters and FLOPs per image from the block shapes.

DiT (Peebles & Xie 2023, "Scalable Diffusion Models with Transformers", arXiv:2212.09748):
a latent of `latent_px` x `latent_px` x `latent_channels` (256 px images through the SD VAE's
8x downsampling: 32 x 32 x 4) is cut into `patch` x `patch` patches, giving
(latent_px / patch)^2 tokens. Each of `layers` blocks is a ViT block (attention 4 h^2, MLP
2 x h x 4h) plus an adaLN-Zero modulation MLP (h -> 6 h) that runs once per image on the
timestep + class embedding, not per token. The final layer has its own adaLN (h -> 2 h) and a
linear map of each token back to patch^2 x 2 x latent_channels values (noise and variance).

FLOPs here count 2 per multiply-add, like the rest of the zoo. The paper's "Gflops" (Table 4:
DiT-XL/2 118.6 at 256 px) count one per multiply-add (fvcore's convention), so gpurent's
forward FLOPs are twice the paper's figure.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class DitShape:
    """One DiT configuration (the paper's Table 1 plus its latent geometry)."""

    layers: int
    hidden: int
    heads: int
    patch: int
    latent_px: int = 32  # 256 px images / the VAE's 8x downsampling
    latent_channels: int = 4
    classes: int = 1000
    frequency_dim: int = 256  # sinusoidal timestep embedding width

    @property
    def tokens(self) -> int:
        """Image tokens per sample: the latent edge over the patch size, squared."""
        return (self.latent_px // self.patch) ** 2

    @property
    def patch_values(self) -> int:
        """Values of one input patch (patch^2 x latent channels)."""
        return self.patch * self.patch * self.latent_channels


def _block_token_macs(d: DitShape) -> int:
    """Weight multiply-adds per token of one block: QKV + output (4 h^2) and the MLP (8 h^2)."""
    return 12 * d.hidden * d.hidden


def dit_params(d: DitShape) -> float:
    """Weights (biases omitted): blocks with their adaLN, final layer, patch, timestep and class
    embeddings (the class table holds one extra row for classifier-free guidance)."""
    h = d.hidden
    blocks = d.layers * (_block_token_macs(d) + 6 * h * h)
    final = 2 * h * h + h * 2 * d.patch_values
    embed = d.patch_values * h + d.frequency_dim * h + h * h + (d.classes + 1) * h
    return float(blocks + final + embed)


def dit_forward_macs(d: DitShape) -> float:
    """Multiply-adds of one image's forward pass (the paper's "Gflops" x 1e9)."""
    s, h = d.tokens, d.hidden
    per_token = d.layers * (_block_token_macs(d) + 2 * s * h)  # + QK^T and PV over s keys
    per_token += d.patch_values * h + h * 2 * d.patch_values  # patch embed and final linear
    per_image = d.layers * 6 * h * h + 2 * h * h + d.frequency_dim * h + h * h  # adaLN, t-embed
    return float(s * per_token + per_image)


def dit_forward_flops(d: DitShape) -> float:
    """FLOPs of one image's forward pass, 2 per multiply-add."""
    return 2.0 * dit_forward_macs(d)


def dit_activation_values(d: DitShape) -> float:
    """Values kept for backward per image: Korthikanti et al. 2022's per-layer, per-token
    h x (17 + 2.5 a s / h) of a transformer block without fused attention."""
    s, h = d.tokens, d.hidden
    return float(s * d.layers * (17.0 * h + 2.5 * d.heads * s))


DIT_XL_2 = DitShape(layers=28, hidden=1152, heads=16, patch=2)
