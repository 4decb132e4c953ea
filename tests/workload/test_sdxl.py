"""Issue 18: the SD-XL UNet's FLOPs per 1024 px denoising step, checked against PyTorch's FLOP
counter on a UNet built here from the SD-XL base layout (Podell et al. 2023, section 2.1) on
the meta device: an independent count of the same reading of the layout (no published
per-step figure was found)."""

from __future__ import annotations

from typing import Any

import pytest

from gpurent.workload import get_model

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional


class _Res(nn.Module):  # type: ignore[misc]
    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.n1, self.n2 = nn.GroupNorm(32, c_in), nn.GroupNorm(32, c_out)
        self.c1, self.c2 = (
            nn.Conv2d(c_in, c_out, 3, padding=1),
            nn.Conv2d(c_out, c_out, 3, padding=1),
        )
        self.t = nn.Linear(1280, c_out)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else None

    def forward(self, x: Any, emb: Any) -> Any:
        h = self.c1(F.silu(self.n1(x))) + self.t(F.silu(emb))[:, :, None, None]
        h = self.c2(F.silu(self.n2(h)))
        return h + (x if self.skip is None else self.skip(x))


def _attn(q: Any, k: Any, v: Any, heads: int) -> Any:
    b, n, c = q.shape
    q, k, v = (t.reshape(b, -1, heads, c // heads).transpose(1, 2) for t in (q, k, v))
    w = (q @ k.transpose(-1, -2)).softmax(-1)
    return (w @ v).transpose(1, 2).reshape(b, n, c)


class _Block(nn.Module):  # type: ignore[misc]
    def __init__(self, c: int) -> None:
        super().__init__()
        self.n1, self.n2, self.n3 = nn.LayerNorm(c), nn.LayerNorm(c), nn.LayerNorm(c)
        self.q1, self.k1, self.v1 = (nn.Linear(c, c, bias=False) for _ in range(3))
        self.o1 = nn.Linear(c, c)
        self.q2 = nn.Linear(c, c, bias=False)
        self.k2, self.v2 = nn.Linear(2048, c, bias=False), nn.Linear(2048, c, bias=False)
        self.o2 = nn.Linear(c, c)
        self.ff1, self.ff2 = nn.Linear(c, 8 * c), nn.Linear(4 * c, c)
        self.heads = c // 64

    def forward(self, x: Any, ctx: Any) -> Any:
        h = self.n1(x)
        x = x + self.o1(_attn(self.q1(h), self.k1(h), self.v1(h), self.heads))
        h = self.n2(x)
        x = x + self.o2(_attn(self.q2(h), self.k2(ctx), self.v2(ctx), self.heads))
        a, g = self.ff1(self.n3(x)).chunk(2, dim=-1)
        return x + self.ff2(a * F.gelu(g))


class _Transformer(nn.Module):  # type: ignore[misc]
    def __init__(self, c: int, depth: int) -> None:
        super().__init__()
        self.norm = nn.GroupNorm(32, c)
        self.proj_in, self.proj_out = nn.Linear(c, c), nn.Linear(c, c)
        self.blocks = nn.ModuleList(_Block(c) for _ in range(depth))

    def forward(self, x: Any, ctx: Any) -> Any:
        b, c, hgt, wid = x.shape
        h = self.proj_in(self.norm(x).flatten(2).transpose(1, 2))
        for blk in self.blocks:
            h = blk(h, ctx)
        return x + self.proj_out(h).transpose(1, 2).reshape(b, c, hgt, wid)


class _Unet(nn.Module):  # type: ignore[misc]
    widths = (320, 640, 1280)
    depths = (0, 2, 10)

    def __init__(self) -> None:
        super().__init__()
        self.time = nn.Sequential(nn.Linear(320, 1280), nn.SiLU(), nn.Linear(1280, 1280))
        self.add = nn.Sequential(nn.Linear(2816, 1280), nn.SiLU(), nn.Linear(1280, 1280))
        self.conv_in = nn.Conv2d(4, 320, 3, padding=1)
        self.down = nn.ModuleList()
        chans, c = [320], 320
        for lvl, (w, d) in enumerate(zip(self.widths, self.depths, strict=True)):
            for _ in range(2):
                self.down.append(nn.ModuleList([_Res(c, w), _Transformer(w, d) if d else None]))
                c = w
                chans.append(c)
            if lvl < 2:
                self.down.append(nn.Conv2d(c, c, 3, stride=2, padding=1))
                chans.append(c)
        self.mid = nn.ModuleList([_Res(c, c), _Transformer(c, 10), _Res(c, c)])
        self.up = nn.ModuleList()
        for lvl in (2, 1, 0):
            w, d = self.widths[lvl], self.depths[lvl]
            for _ in range(3):
                self.up.append(
                    nn.ModuleList([_Res(c + chans.pop(), w), _Transformer(w, d) if d else None])
                )
                c = w
            if lvl:
                self.up.append(nn.Conv2d(c, c, 3, padding=1))
        self.norm_out, self.conv_out = nn.GroupNorm(32, 320), nn.Conv2d(320, 4, 3, padding=1)

    def _run(self, m: Any, x: Any, emb: Any, ctx: Any, up: bool) -> Any:
        if isinstance(m, nn.Conv2d):
            return m(F.interpolate(x, scale_factor=2.0, mode="nearest") if up else x)
        x = m[0](x, emb)
        return x if m[1] is None else m[1](x, ctx)

    def forward(self, x: Any, t: Any, add: Any, ctx: Any) -> Any:
        emb = self.time(t) + self.add(add)
        x = self.conv_in(x)
        skips = [x]
        for m in self.down:
            x = self._run(m, x, emb, ctx, False)
            skips.append(x)
        x = self.mid[2](self.mid[1](self.mid[0](x, emb), ctx), emb)
        for m in self.up:
            if not isinstance(m, nn.Conv2d):
                x = torch.cat((x, skips.pop()), dim=1)
            x = self._run(m, x, emb, ctx, True)
        return self.conv_out(F.silu(self.norm_out(x)))


def test_sdxl_unet_matches_pytorchs_counts() -> None:
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device("meta"):
        net = _Unet()
        args = (
            torch.empty(1, 4, 128, 128),
            torch.empty(1, 320),
            torch.empty(1, 2816),
            torch.empty(1, 77, 2048),
        )
    params = sum(p.numel() for p in net.parameters())
    counter = FlopCounterMode(display=False)
    with counter:
        y = net(*args)
    assert tuple(y.shape) == (1, 4, 128, 128)
    unet = get_model("sdxl-unet")
    assert unet.num_params == pytest.approx(params, rel=0.02)
    assert unet.forward_flops() == pytest.approx(counter.get_total_flops(), rel=0.02)
