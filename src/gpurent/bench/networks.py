"""The benchmark models, written with torch.nn here (no torchvision: its PyPI build does not
import beside every torch), and their full-size (GPU) and scaled-down (CPU) configurations.

- resnet50: ResNet-50 v1.5 (He et al. 2016; stride on the 3x3 conv), bottleneck stages
  [3, 4, 6, 3], widths 64-2048, 224 px, 1000 classes; CPU: one block per stage, width 16, 64 px.
- bert-large: BERT-large encoder (Devlin et al. 2019): 24 layers, hidden 1024, 16 heads, FFN
  4096, vocab 30522, post-LayerNorm, masked-LM head on every token; seq 128 (pre-training phase
  1, the zoo's `bert-large-pretrain`); CPU: 2 layers, hidden 128.
- gpt-decoder: a GPT-style decoder with MPT-1B's shape (llm-foundry mpt-1b.yaml: 24 layers,
  hidden 2048, 16 heads, FFN 4 x hidden, vocab 50368), pre-LayerNorm, causal attention, seq 2048;
  ALiBi/rotary position terms are left out (negligible FLOPs); CPU: 2 layers, hidden 128.
Attention uses `scaled_dot_product_attention` (flash kernels on GPU), as current stacks do.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelConfig:
    """One benchmark model at one size. `calibration_name` is the estimator zoo's name."""

    name: str
    calibration_name: str
    throughput_unit: str  # "images/s" | "sequences/s" | "tokens/s"
    batch_size: int
    seq_len: int | None  # tokens per sequence; None for images
    image_px: int = 224
    blocks: tuple[int, ...] = (3, 4, 6, 3)
    width: int = 64
    layers: int = 24
    hidden: int = 1024
    heads: int = 16
    vocab: int = 30522
    classes: int = 1000

    def describe(self) -> str:
        """The model's shape in one line: blocks and width for ResNet-50, else layers and heads."""
        if self.name == "resnet50":
            return f"blocks {list(self.blocks)}, width {self.width}, {self.image_px} px"
        return f"{self.layers} layers, hidden {self.hidden}, {self.heads} heads, seq {self.seq_len}"


FULL: dict[str, ModelConfig] = {
    "resnet50": ModelConfig(
        name="resnet50",
        calibration_name="resnet50",
        throughput_unit="images/s",
        batch_size=256,
        seq_len=None,
    ),
    "bert-large": ModelConfig(
        name="bert-large",
        calibration_name="bert-large-pretrain",
        throughput_unit="sequences/s",
        batch_size=64,
        seq_len=128,
    ),
    "gpt-decoder": ModelConfig(
        name="gpt-decoder",
        calibration_name="mpt-1b",
        throughput_unit="tokens/s",
        batch_size=4,
        seq_len=2048,
        layers=24,
        hidden=2048,
        heads=16,
        vocab=50368,
    ),
}

_CPU_SMALL_SIZES: dict[str, dict[str, Any]] = {
    "resnet50": {
        "batch_size": 8,
        "image_px": 64,
        "blocks": (1, 1, 1, 1),
        "width": 16,
        "classes": 100,
    },
    "bert-large": {
        "batch_size": 8,
        "seq_len": 64,
        "layers": 2,
        "hidden": 128,
        "heads": 4,
        "vocab": 2000,
    },
    "gpt-decoder": {
        "batch_size": 4,
        "seq_len": 128,
        "layers": 2,
        "hidden": 128,
        "heads": 4,
        "vocab": 2000,
    },
}


# The same networks, shrunk to run on a CPU in seconds (the smoke sizes).
CPU_SMALL: dict[str, ModelConfig] = {
    name: replace(FULL[name], **sizes) for name, sizes in _CPU_SMALL_SIZES.items()
}

MODEL_NAMES = tuple(FULL)


def build(torch: Any, cfg: ModelConfig) -> Any:
    """The nn.Module for `cfg` (classes are defined on first use, so torch stays lazy)."""
    nn = torch.nn
    f = torch.nn.functional
    module: Any = nn.Module  # torch is untyped here (lazy import): subclass through Any

    class Bottleneck(module):  # type: ignore[misc]
        def __init__(self, cin: int, mid: int, stride: int) -> None:
            super().__init__()
            cout = mid * 4
            self.body = nn.Sequential(
                nn.Conv2d(cin, mid, 1, bias=False),
                nn.BatchNorm2d(mid),
                nn.ReLU(inplace=True),
                nn.Conv2d(mid, mid, 3, stride, 1, bias=False),
                nn.BatchNorm2d(mid),
                nn.ReLU(inplace=True),
                nn.Conv2d(mid, cout, 1, bias=False),
                nn.BatchNorm2d(cout),
            )
            self.skip = (
                nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                if stride != 1 or cin != cout
                else nn.Identity()
            )

        def forward(self, x: Any) -> Any:
            return f.relu(self.body(x) + self.skip(x))

    class ResNet(module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            w = cfg.width
            layers: list[Any] = [
                nn.Conv2d(3, w, 7, 2, 3, bias=False),
                nn.BatchNorm2d(w),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(3, 2, 1),
            ]
            cin = w
            for stage, count in enumerate(cfg.blocks):
                mid = w * 2**stage
                for i in range(count):
                    layers.append(Bottleneck(cin, mid, 2 if i == 0 and stage > 0 else 1))
                    cin = mid * 4
            self.features = nn.Sequential(*layers)
            self.head = nn.Linear(cin, cfg.classes)

        def forward(self, x: Any) -> Any:
            return self.head(torch.flatten(f.adaptive_avg_pool2d(self.features(x), 1), 1))

    class Block(module):  # type: ignore[misc]
        def __init__(self, causal: bool) -> None:
            super().__init__()
            h = cfg.hidden
            self.causal = causal
            self.qkv = nn.Linear(h, 3 * h)
            self.proj = nn.Linear(h, h)
            self.ffn = nn.Sequential(nn.Linear(h, 4 * h), nn.GELU(), nn.Linear(4 * h, h))
            self.norm1 = nn.LayerNorm(h)
            self.norm2 = nn.LayerNorm(h)

        def attend(self, x: Any) -> Any:
            b, s, h = x.shape
            q, k, v = self.qkv(x).view(b, s, 3, cfg.heads, h // cfg.heads).unbind(2)
            y = f.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=self.causal
            )
            return self.proj(y.transpose(1, 2).reshape(b, s, h))

        def forward(self, x: Any) -> Any:
            if self.causal:  # GPT: pre-norm
                x = x + self.attend(self.norm1(x))
                return x + self.ffn(self.norm2(x))
            x = self.norm1(x + self.attend(x))  # BERT: post-norm
            return self.norm2(x + self.ffn(x))

    class Transformer(module):  # type: ignore[misc]
        def __init__(self, causal: bool) -> None:
            super().__init__()
            self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
            self.pos = nn.Embedding(cfg.seq_len or 1, cfg.hidden) if not causal else None
            self.blocks = nn.ModuleList(Block(causal) for _ in range(cfg.layers))
            self.norm = nn.LayerNorm(cfg.hidden)
            self.head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)

        def forward(self, tokens: Any) -> Any:
            x = self.embed(tokens)
            if self.pos is not None:
                x = x + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
            for block in self.blocks:
                x = block(x)
            return self.head(self.norm(x))

    if cfg.name == "resnet50":
        return ResNet()
    return Transformer(causal=cfg.name == "gpt-decoder")


def synthetic_batch(torch: Any, cfg: ModelConfig, device: str) -> tuple[Any, Any]:
    """Random inputs and targets of one batch, on `device` (seeded)."""
    gen = torch.Generator(device="cpu").manual_seed(0)
    if cfg.name == "resnet50":
        x = torch.randn(cfg.batch_size, 3, cfg.image_px, cfg.image_px, generator=gen)
        y = torch.randint(0, cfg.classes, (cfg.batch_size,), generator=gen)
    else:
        seq = cfg.seq_len or 1
        x = torch.randint(0, cfg.vocab, (cfg.batch_size, seq), generator=gen)
        y = torch.randint(0, cfg.vocab, (cfg.batch_size, seq), generator=gen)
    return x.to(device), y.to(device)


def samples_to_throughput(cfg: ModelConfig, samples_per_s: float) -> float:
    """Samples/s in the model's throughput unit (tokens/s for the decoder)."""
    if cfg.throughput_unit == "tokens/s":
        return samples_per_s * (cfg.seq_len or 1)
    return samples_per_s
