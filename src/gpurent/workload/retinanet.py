"""RetinaNet with a ResNeXt-50 32x4d FPN backbone at 800 x 800 px (MLPerf Training's "ssd"
benchmark on its 264-class OpenImages subset): parameters and FLOPs from the layer list.

Shapes from the MLCommons training reference, mlcommons/training
single_stage_detector/ssd/model/retinanet.py @ 90ea96ea (`retinanet_resnext50_32x4d_fpn`:
FPN on ResNet stages 2-4, `LastLevelP6P7(256, 256)`, 9 anchors per location, heads of four
3x3 256-channel convolutions with bias before the class and box convolutions) and ResNeXt-50
32x4d (Xie et al. 2017, Table 1: stages of 3, 4, 6, 3 bottlenecks, 32 groups of width 4 x
2^stage, stride on the grouped 3x3). The backbone's batch norms are frozen (buffers, not
parameters) and not counted.

FLOPs count 2 per multiply-add: output pixels x C_in / groups x C_out x k^2 per convolution.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Conv2d:
    """One 2-D convolution, with the edge of its (square) output."""

    c_in: int
    c_out: int
    kernel: int
    out_edge: int
    groups: int = 1
    bias: bool = False
    repeats: int = 1  # shared weights applied this many times (heads over pyramid levels)

    @property
    def macs(self) -> float:
        """Multiply-accumulates of the layer over all its repeats, per sample."""
        per = self.out_edge**2 * self.c_in // self.groups * self.c_out * self.kernel**2
        return float(per * self.repeats)

    @property
    def params(self) -> float:
        """Parameters of the layer (weights plus bias), counted once."""
        return float(
            self.c_in // self.groups * self.c_out * self.kernel**2 + self.bias * self.c_out
        )

    @property
    def output_values(self) -> float:
        """Values the layer outputs over all its repeats, per sample."""
        return float(self.out_edge**2 * self.c_out * self.repeats)


def _conv_out(edge: int, stride: int) -> int:
    return (edge - 1) // stride + 1  # "same" padding


def resnext50_layers(edge: int) -> tuple[list[Conv2d], list[tuple[int, int]]]:
    """Backbone convolutions and the (channels, edge) of each stage's output."""
    e = _conv_out(edge, 2)
    layers = [Conv2d(c_in=3, c_out=64, kernel=7, out_edge=e)]
    e = _conv_out(e, 2)  # max pool
    c_in, stages = 64, []
    for i, blocks in enumerate((3, 4, 6, 3)):
        width, c_out = 128 * 2**i, 256 * 2**i
        for b in range(blocks):
            stride = 2 if (b == 0 and i > 0) else 1
            e_out = _conv_out(e, stride)
            layers.append(Conv2d(c_in=c_in, c_out=width, kernel=1, out_edge=e))
            layers.append(Conv2d(c_in=width, c_out=width, kernel=3, out_edge=e_out, groups=32))
            layers.append(Conv2d(c_in=width, c_out=c_out, kernel=1, out_edge=e_out))
            if b == 0:
                layers.append(Conv2d(c_in=c_in, c_out=c_out, kernel=1, out_edge=e_out))
            c_in, e = c_out, e_out
        stages.append((c_out, e))
    return layers, stages


def retinanet_layers(edge: int = 800, classes: int = 264, anchors: int = 9) -> tuple[Conv2d, ...]:
    """Every convolution: backbone, FPN (P3-P5 laterals and outputs, P6, P7), both heads."""
    layers, stages = resnext50_layers(edge)
    edges = []
    for c, e in stages[1:]:  # C3, C4, C5
        layers.append(Conv2d(c_in=c, c_out=256, kernel=1, out_edge=e, bias=True))
        layers.append(Conv2d(c_in=256, c_out=256, kernel=3, out_edge=e, bias=True))
        edges.append(e)
    for _ in range(2):  # P6 from P5, P7 from P6
        edges.append(_conv_out(edges[-1], 2))
        layers.append(Conv2d(c_in=256, c_out=256, kernel=3, out_edge=edges[-1], bias=True))
    for out in (anchors * classes, anchors * 4):  # classification and box heads
        for e in edges:
            head = [Conv2d(c_in=256, c_out=256, kernel=3, out_edge=e, bias=True)] * 4
            head.append(Conv2d(c_in=256, c_out=out, kernel=3, out_edge=e, bias=True))
            layers.extend(head)
    return tuple(layers)


def retinanet_params(edge: int = 800) -> float:
    """Weights; head weights are shared across the five levels, so counted once."""
    convs = retinanet_layers(edge)
    n_backbone_fpn = len(convs) - 2 * 5 * 5
    shared = (
        convs[n_backbone_fpn : n_backbone_fpn + 5]
        + convs[n_backbone_fpn + 25 : n_backbone_fpn + 30]
    )
    return sum(c.params for c in convs[:n_backbone_fpn]) + sum(c.params for c in shared)


def retinanet_forward_flops(edge: int = 800) -> float:
    """FLOPs of one image's forward pass through the network (losses, anchors, NMS excluded)."""
    return 2.0 * sum(c.macs for c in retinanet_layers(edge))


def retinanet_activation_values(edge: int = 800) -> float:
    """Values kept for backward per image: each convolution's output and its activation (the
    frozen norms fold into the convolutions)."""
    return 2.0 * sum(c.output_values for c in retinanet_layers(edge))
