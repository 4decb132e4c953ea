"""Issue 18: MLPerf's 3D U-Net. No paper states its FLOPs per 128^3 patch, so the zoo's count
(from `gpurent.workload.unet3d`'s layer list) is checked against PyTorch's own FLOP counter and
parameter count on a network built here, block by block, from the MLCommons reference's
description (mlcommons/training image_segmentation/pytorch/model/unet3d.py @ 7749e434,
layers.py @ 8bec066c), on the meta device (no memory, no compute)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from gpurent.workload import get_model

torch = pytest.importorskip("torch")
nn = torch.nn


def _block(c_in: int, c_out: int, stride: int = 1) -> Any:
    return nn.Sequential(
        nn.Conv3d(c_in, c_out, 3, stride=stride, padding=1, bias=False),
        nn.InstanceNorm3d(c_out, affine=True),
        nn.ReLU(),
    )


class _Up(nn.Module):  # type: ignore[misc]
    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.up = nn.ConvTranspose3d(c_in, c_out, 2, stride=2, bias=True)
        self.convs = nn.Sequential(_block(2 * c_out, c_out), _block(c_out, c_out))

    def forward(self, x: Any, skip: Any) -> Any:
        return self.convs(torch.cat((self.up(x), skip), dim=1))


class _Unet3d(nn.Module):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        f = [32, 64, 128, 256, 320]
        self.inp = nn.Sequential(_block(1, 32), _block(32, 32))
        downs = [(a, b) for a, b in itertools.pairwise(f)] + [(320, 320)]
        self.down = nn.ModuleList(nn.Sequential(_block(a, b, 2), _block(b, b)) for a, b in downs)
        ups = [(320, 320)] + [(a, b) for a, b in zip(f[::-1][:-1], f[::-1][1:], strict=True)]
        self.up = nn.ModuleList(_Up(a, b) for a, b in ups)
        self.out = nn.Conv3d(32, 3, 1, bias=True)

    def forward(self, x: Any) -> Any:
        x = self.inp(x)
        skips = [x]
        for d in self.down:
            x = d(x)
            skips.append(x)
        skips.pop()  # the bottleneck's output is not a skip
        for u, s in zip(self.up, reversed(skips), strict=True):
            x = u(x, s)
        return self.out(x)


def test_unet3d_matches_pytorchs_counts() -> None:
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device("meta"):
        net = _Unet3d()
        x = torch.empty(1, 1, 128, 128, 128)
    params = sum(p.numel() for p in net.parameters())
    counter = FlopCounterMode(display=False)
    with counter:
        y = net(x)
    assert tuple(y.shape) == (1, 3, 128, 128, 128)
    model = get_model("unet3d")
    assert model.num_params == pytest.approx(params, rel=0.02)
    # torch counts 2 FLOPs per multiply-add, as the zoo does
    assert model.forward_flops() == pytest.approx(counter.get_total_flops(), rel=0.02)
    assert "mlcommons/training" in model.source
