"""Issue 18: RetinaNet-ResNeXt50 at 800 px (MLPerf's "ssd"). Its per-image FLOPs are checked
against PyTorch's FLOP counter and parameter count on a network built here from the MLCommons
reference's description (mlcommons/training single_stage_detector/ssd/model/retinanet.py
@ 90ea96ea; ResNeXt-50 32x4d, frozen batch norms left out), on the meta device."""

from __future__ import annotations

from typing import Any

import pytest

from gpurent.workload import get_model

torch = pytest.importorskip("torch")
nn = torch.nn


class _Bottleneck(nn.Module):  # type: ignore[misc]
    def __init__(self, c_in: int, width: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(c_in, width, 1, bias=False),
            nn.ReLU(),
            nn.Conv2d(width, width, 3, stride=stride, padding=1, groups=32, bias=False),
            nn.ReLU(),
            nn.Conv2d(width, c_out, 1, bias=False),
        )
        self.skip = None
        if stride != 1 or c_in != c_out:
            self.skip = nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False)

    def forward(self, x: Any) -> Any:
        return torch.relu(self.body(x) + (x if self.skip is None else self.skip(x)))


def _head(out: int) -> Any:
    layers: list[Any] = []
    for _ in range(4):
        layers += [nn.Conv2d(256, 256, 3, padding=1), nn.ReLU()]
    return nn.Sequential(*layers, nn.Conv2d(256, out, 3, padding=1))


class _RetinaNet(nn.Module):  # type: ignore[misc]
    def __init__(self, classes: int = 264, anchors: int = 9) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        stages, c_in = [], 64
        for i, blocks in enumerate((3, 4, 6, 3)):
            width, c_out = 128 * 2**i, 256 * 2**i
            stage = [_Bottleneck(c_in, width, c_out, 2 if i else 1)]
            stage += [_Bottleneck(c_out, width, c_out, 1) for _ in range(blocks - 1)]
            stages.append(nn.Sequential(*stage))
            c_in = c_out
        self.stages = nn.ModuleList(stages)
        self.lateral = nn.ModuleList(nn.Conv2d(c, 256, 1) for c in (512, 1024, 2048))
        self.smooth = nn.ModuleList(nn.Conv2d(256, 256, 3, padding=1) for _ in range(3))
        self.p6 = nn.Conv2d(256, 256, 3, stride=2, padding=1)
        self.p7 = nn.Conv2d(256, 256, 3, stride=2, padding=1)
        self.cls = _head(anchors * classes)
        self.box = _head(anchors * 4)

    def forward(self, x: Any) -> list[Any]:
        x = self.stem(x)
        feats = []
        for s in self.stages:
            x = s(x)
            feats.append(x)
        inner = [lat(f) for lat, f in zip(self.lateral, feats[1:], strict=True)]
        for i in (1, 0):  # top-down pathway
            up = nn.functional.interpolate(inner[i + 1], size=inner[i].shape[-2:], mode="nearest")
            inner[i] = inner[i] + up
        levels = [sm(f) for sm, f in zip(self.smooth, inner, strict=True)]
        levels.append(self.p6(levels[-1]))
        levels.append(self.p7(torch.relu(levels[-1])))
        return [h(p) for p in levels for h in (self.cls, self.box)]


def test_retinanet_matches_pytorchs_counts() -> None:
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device("meta"):
        net = _RetinaNet()
        x = torch.empty(1, 3, 800, 800)
    params = sum(p.numel() for p in net.parameters())
    counter = FlopCounterMode(display=False)
    with counter:
        outs = net(x)
    assert [tuple(o.shape[-2:]) for o in outs[::2]] == [
        (100, 100),
        (50, 50),
        (25, 25),
        (13, 13),
        (7, 7),
    ]
    model = get_model("retinanet-resnext50")
    assert model.num_params == pytest.approx(params, rel=0.02)
    assert model.forward_flops() == pytest.approx(counter.get_total_flops(), rel=0.02)
    assert "mlcommons/training" in model.source
