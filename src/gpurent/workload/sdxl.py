"""The SD-XL base UNet (Podell et al. 2023, arXiv:2307.01952, section 2.1 and Table 1: 2.6 B
UNet parameters; transformer depths 0, 2, 10 at 320, 640, 1280 channels, 2048-wide text context)
at 1024 px (a 128 x 128 x 4 latent), one denoising step: parameters and FLOPs from the shapes.

Layout (as released in the SD-XL base 1.0 UNet configuration): two ResNet blocks per down level
(a stride-2 3x3 convolution between levels), a middle of ResNet, transformer stack, ResNet, and
three ResNet blocks per up level on the concatenated skips (nearest upsampling + 3x3 convolution
between levels). ResNet block: GroupNorm, 3x3 conv, time projection (1280 -> C), GroupNorm,
3x3 conv, 1x1 shortcut when the width changes. Transformer stack: GroupNorm, linear in, `depth`
blocks of self-attention, cross-attention on 77 text tokens and a GEGLU MLP (C -> 8C, 4C -> C),
linear out. Conditioning: timestep MLP 320 -> 1280 -> 1280, size/crop/pooled-text MLP
2816 -> 1280 -> 1280.

FLOPs count 2 per multiply-add; attention scores and values cost 2 x tokens x keys x C
multiply-adds per layer. Normalisations and activations are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class _Tally:
    params: float = 0.0
    macs: float = 0.0
    values: float = 0.0  # outputs of the counted layers (activation estimate)

    def conv(self, c_in: int, c_out: int, k: int, edge: int) -> None:
        self.params += c_in * c_out * k * k + c_out
        self.macs += edge * edge * c_in * c_out * k * k
        self.values += edge * edge * c_out

    def linear(self, d_in: int, d_out: int, rows: int, *, bias: bool = True) -> None:
        self.params += d_in * d_out + (d_out if bias else 0)
        self.macs += rows * d_in * d_out
        self.values += rows * d_out

    def norm(self, c: int) -> None:
        self.params += 2 * c


@dataclass(frozen=True, slots=True, kw_only=True)
class SdxlShape:
    """The UNet's widths, transformer depths per level and conditioning sizes."""

    latent_edge: int = 128  # 1024 px / 8
    widths: tuple[int, ...] = (320, 640, 1280)
    depths: tuple[int, ...] = (0, 2, 10)
    context_dim: int = 2048
    context_tokens: int = 77
    time_dim: int = 1280
    add_dim: int = 2816  # pooled text 1280 + 6 size/crop values x 256
    in_channels: int = 4


def _resnet(t: _Tally, c_in: int, c_out: int, edge: int, time_dim: int) -> None:
    t.norm(c_in)
    t.conv(c_in, c_out, 3, edge)
    t.linear(time_dim, c_out, 1)
    t.norm(c_out)
    t.conv(c_out, c_out, 3, edge)
    if c_in != c_out:
        t.conv(c_in, c_out, 1, edge)


def _transformer(t: _Tally, s: SdxlShape, c: int, edge: int, depth: int) -> None:
    n = edge * edge
    t.norm(c)
    t.linear(c, c, n)
    for _ in range(depth):
        t.norm(c)
        for _ in range(3):
            t.linear(c, c, n, bias=False)  # q, k, v
        t.macs += 2 * n * n * c  # QK^T and PV
        t.linear(c, c, n)  # out
        t.norm(c)
        t.linear(c, c, n, bias=False)  # q
        for _ in range(2):
            t.linear(s.context_dim, c, s.context_tokens, bias=False)  # k, v of the text
        t.macs += 2 * n * s.context_tokens * c
        t.linear(c, c, n)
        t.norm(c)
        t.linear(c, 8 * c, n)  # GEGLU
        t.linear(4 * c, c, n)
    t.linear(c, c, n)


def _tally(s: SdxlShape) -> _Tally:
    t = _Tally()
    t.linear(s.widths[0], s.time_dim, 1)
    t.linear(s.time_dim, s.time_dim, 1)
    t.linear(s.add_dim, s.time_dim, 1)
    t.linear(s.time_dim, s.time_dim, 1)
    edge = s.latent_edge
    t.conv(s.in_channels, s.widths[0], 3, edge)
    skips, c = [s.widths[0]], s.widths[0]
    for level, (w, depth) in enumerate(zip(s.widths, s.depths, strict=True)):
        for _ in range(2):
            _resnet(t, c, w, edge, s.time_dim)
            if depth:
                _transformer(t, s, w, edge, depth)
            c = w
            skips.append(c)
        if level < len(s.widths) - 1:
            edge //= 2
            t.conv(c, c, 3, edge)
            skips.append(c)
    _resnet(t, c, c, edge, s.time_dim)
    _transformer(t, s, c, edge, s.depths[-1])
    _resnet(t, c, c, edge, s.time_dim)
    for level in reversed(range(len(s.widths))):
        w, depth = s.widths[level], s.depths[level]
        for _ in range(3):
            _resnet(t, c + skips.pop(), w, edge, s.time_dim)
            if depth:
                _transformer(t, s, w, edge, depth)
            c = w
        if level:
            edge *= 2
            t.conv(c, c, 3, edge)
    t.norm(c)
    t.conv(c, s.in_channels, 3, edge)
    return t


SDXL_BASE = SdxlShape()


def sdxl_params(s: SdxlShape = SDXL_BASE) -> float:
    """Parameter count of the SDXL UNet of shape s."""
    return _tally(s).params


def sdxl_forward_flops(s: SdxlShape = SDXL_BASE) -> float:
    """FLOPs of one UNet evaluation (one denoising step, one image), 2 per multiply-add."""
    return 2.0 * _tally(s).macs


def sdxl_activation_values(s: SdxlShape = SDXL_BASE) -> float:
    """Values kept for backward per image: the counted layers' outputs, x2 for the norms and
    activations around them."""
    return 2.0 * _tally(s).values
