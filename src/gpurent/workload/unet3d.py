"""MLPerf's 3D U-Net (KiTS19 image segmentation): parameters and FLOPs from the layer list.

Shapes from the MLCommons training reference, mlcommons/training
image_segmentation/pytorch/model/unet3d.py (commit 7749e434) and model/layers.py (commit
8bec066c): filters 32, 64, 128, 256, 320; an input block of two 3x3x3 convolutions; four
downsampling blocks and a bottleneck (a stride-2 3x3x3 convolution, then a 3x3x3 one, each with
instance norm and ReLU); five upsampling blocks (a 2x2x2 stride-2 transposed convolution with
bias, concatenation with the skip, two 3x3x3 convolutions); a 1x1x1 output convolution to 3
classes. Training patches are 128^3 voxels of 1 channel.

FLOPs count 2 per multiply-add; a convolution costs output voxels x C_in x C_out x k^3
multiply-adds (a transposed one with stride = kernel: output voxels x C_in x C_out).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Conv3d:
    """One 3-D convolution: channels, kernel edge, output edge (voxels per side)."""

    c_in: int
    c_out: int
    kernel: int
    out_edge: int
    bias: bool = False
    norm: bool = True  # instance norm with affine weights after it
    transposed: bool = False  # stride = kernel: each input voxel feeds kernel^3 outputs once

    @property
    def macs(self) -> float:
        """A convolution: output voxels x C_in x C_out x k^3; a transposed one with stride =
        kernel: input voxels x C_in x C_out x k^3 = output voxels x C_in x C_out."""
        taps = 1 if self.transposed else self.kernel**3
        return float(self.out_edge**3 * self.c_in * self.c_out * taps)

    @property
    def params(self) -> float:
        """Parameters of the layer: weights, bias and norm scale and shift."""
        extra = (self.c_out if self.bias else 0) + (2 * self.c_out if self.norm else 0)
        return float(self.c_in * self.c_out * self.kernel**3 + extra)

    @property
    def output_values(self) -> float:
        """Values the layer outputs per sample."""
        return float(self.out_edge**3 * self.c_out)


def unet3d_layers(
    edge: int = 128,
    in_channels: int = 1,
    classes: int = 3,
    filters: tuple[int, ...] = (32, 64, 128, 256, 320),
) -> tuple[Conv3d, ...]:
    """Every convolution of the network, input to output."""
    layers = [Conv3d(c_in=in_channels, c_out=filters[0], kernel=3, out_edge=edge)]
    layers.append(Conv3d(c_in=filters[0], c_out=filters[0], kernel=3, out_edge=edge))
    # downsampling blocks, then the bottleneck (320 -> 320 once more)
    widths = [*filters, filters[-1]]
    e = edge
    for c_in, c_out in itertools.pairwise(widths):
        e //= 2
        layers.append(Conv3d(c_in=c_in, c_out=c_out, kernel=3, out_edge=e))
        layers.append(Conv3d(c_in=c_out, c_out=c_out, kernel=3, out_edge=e))
    for c_in, c_out in zip(widths[::-1][:-1], widths[::-1][1:], strict=True):
        e *= 2
        layers.append(
            Conv3d(
                c_in=c_in, c_out=c_out, kernel=2, out_edge=e, bias=True, norm=False, transposed=True
            )
        )
        layers.append(Conv3d(c_in=2 * c_out, c_out=c_out, kernel=3, out_edge=e))
        layers.append(Conv3d(c_in=c_out, c_out=c_out, kernel=3, out_edge=e))
    layers.append(
        Conv3d(c_in=filters[0], c_out=classes, kernel=1, out_edge=e, bias=True, norm=False)
    )
    return tuple(layers)


def unet3d_params(edge: int = 128) -> float:
    """Parameter count of the 3D U-Net for inputs of edge voxels per side."""
    return sum(c.params for c in unet3d_layers(edge))


def unet3d_forward_flops(edge: int = 128) -> float:
    """FLOPs of one patch's forward pass, 2 per multiply-add."""
    return 2.0 * sum(c.macs for c in unet3d_layers(edge))


def unet3d_activation_values(edge: int = 128) -> float:
    """Values kept for backward per patch: each normalised convolution's output, its norm and
    its ReLU (3 per output value); transposed convolutions and the output layer one each, plus
    the concatenated skip."""
    total = 0.0
    for c in unet3d_layers(edge):
        total += (3.0 if c.norm else 2.0) * c.output_values
    return total
