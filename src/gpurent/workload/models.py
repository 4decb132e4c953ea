"""The named models of the zoo and how to look them up.

Fixed-shape models carry per-sample costs worked out from their reference architectures:

- resnet50: 25.6 M params; 4.1 GMACs = 8.2 GFLOPs forward at 224 px (He et al. 2016);
  ~9.3 M conv output values per image (sum of the stage feature maps: 112^2x64 stem,
  3x(64+64+256)x56^2, 4x(128+128+512)x28^2, 6x(256+256+1024)x14^2, 3x(512+512+2048)x7^2),
  x3 with BatchNorm and ReLU outputs = 28 M values.
- ssd: SSD300 with a ResNet-50 backbone (NVIDIA DeepLearningExamples v1.1): ~22 M params,
  ~20 GMACs = 40 GFLOPs at 300 px; feature maps ~(300/224)^2 x ResNet-50's plus the heads = 65 M.
- gnmt: GNMT v2 (NVIDIA DLE): 160 M params, 4+4 LSTM layers of 1024, 32 k vocabulary; per target
  token ~2x(8 layers x 8 x 1024^2) + 2x1024x32k = 200 MFLOPs; a WMT16 en-de sentence pair holds
  ~50 tokens (src+tgt), 25 on the decoder side; ~5 M activation values per pair.
- tacotron2: 28 M params; ~50 MFLOPs per mel frame (two 1024-unit decoder LSTMs + 5-layer
  512-channel postnet); an LJSpeech utterance ~570 frames (6.6 s at 86 frames/s); 20 k values
  stored per frame.
- waveglow: 87.9 M params, 12 flows x 8 WN layers of 512 channels on 16,000-sample segments
  squeezed by 8 (2,000 steps): ~176 MFLOPs per step = 352 GFLOPs per segment; ~196 k values per
  step.
- transformer-xl-base/large (NVIDIA DLE, WikiText-103): 16 layers h=410 (d_inner 2100, 10 heads),
  tgt_len 192 + mem 192; 18 layers h=1024 (d_inner 4096, 16 heads), tgt_len 128 + mem 128;
  forward FLOPs per token = 2 x non-embedding params + 4 L (tgt+mem) h + adaptive-softmax head.
- ncf: NeuMF on MovieLens-20M (factors 64, MLP 256-256-128-64): ~32 M embedding params,
  ~0.22 MFLOPs forward per sample, ~1 k values per sample.
- BERT, ViT and LLMs take their costs from their shapes (see `gpurent.workload.zoo`).
- Issue 18's families compute theirs from their shapes in their own modules: ViT-L/H as encoders,
  DiT (`diffusion`), T5 (`encdec`, the 6 N rule), 3D U-Net (`unet3d`), RetinaNet (`retinanet`),
  the SD-XL UNet (`sdxl`), FLUX.1-dev (`flux`); each entry's `source` names the paper or
  repository path and commit.
"""

from __future__ import annotations

import re

from gpurent.catalog.precision import Precision
from gpurent.errors import InputError, NotFoundError
from gpurent.workload.diffusion import (
    DIT_XL_2,
    dit_activation_values,
    dit_forward_flops,
    dit_params,
)
from gpurent.workload.encdec import (
    T5_BASE,
    T5_LARGE,
    T5_TOKENS,
    t5_activation_values,
    t5_forward_flops,
    t5_params,
)
from gpurent.workload.flux import (
    FLUX_DEV,
    flux_activation_values,
    flux_forward_flops,
    flux_params,
)
from gpurent.workload.retinanet import (
    retinanet_activation_values,
    retinanet_forward_flops,
    retinanet_params,
)
from gpurent.workload.sdxl import sdxl_activation_values, sdxl_forward_flops, sdxl_params
from gpurent.workload.spec import LlmShape, MlaShape
from gpurent.workload.unet3d import unet3d_activation_values, unet3d_forward_flops, unet3d_params
from gpurent.workload.zoo import EncoderShape, ModelInfo

_BERT_BASE = EncoderShape(layers=12, hidden=768, heads=12, ffn_hidden=3072, vocab=30522)
_BERT_LARGE = EncoderShape(layers=24, hidden=1024, heads=16, ffn_hidden=4096, vocab=30522)
_VIT_B = EncoderShape(layers=12, hidden=768, heads=12, ffn_hidden=3072, vocab=0)
# Dosovitskiy et al. 2021, Table 1 (Large: 24 x 1024, MLP 4096, 16 heads, 307 M; Huge:
# 32 x 1280, MLP 5120, 16 heads, 632 M); at 224 px, 196 patches of 16 px + [CLS] = 197 tokens,
# 256 patches of 14 px + [CLS] = 257.
_VIT_L = EncoderShape(layers=24, hidden=1024, heads=16, ffn_hidden=4096, vocab=0)
_VIT_H = EncoderShape(layers=32, hidden=1280, heads=16, ffn_hidden=5120, vocab=0)
_VIT_SOURCE = (
    "Dosovitskiy et al. 2021 Table 1 (shapes); per-image multiply-adds and parameters at 224 px: "
    "pytorch/vision torchvision/models/vision_transformer.py weight metadata (_ops, num_params)"
)


def _mpt(layers: int, hidden: int, heads: int) -> LlmShape:
    return LlmShape(layers=layers, hidden=hidden, heads=heads, vocab=50368)


def _gpt2(layers: int, hidden: int, heads: int) -> LlmShape:
    return LlmShape(layers=layers, hidden=hidden, heads=heads, vocab=50257)


def _opt(layers: int, hidden: int, heads: int) -> LlmShape:
    return LlmShape(layers=layers, hidden=hidden, heads=heads, vocab=50272)


def _moe(
    shape: LlmShape, *, experts: int, per_token: int, expert_ffn: int | None = None
) -> LlmShape:
    """`shape` with every layer's MLP made `experts` experts, `per_token` active."""
    from dataclasses import replace

    return replace(
        shape, experts=experts, experts_per_token=per_token, expert_ffn_hidden=expert_ffn
    )


def _llama(  # noqa: PLR0917 - a table row
    layers: int, hidden: int, heads: int, kv: int, ffn: int, vocab: int
) -> LlmShape:
    return LlmShape(
        layers=layers,
        hidden=hidden,
        heads=heads,
        vocab=vocab,
        kv_heads=kv,
        ffn_hidden=ffn,
        gated_mlp=True,
        tied_embeddings=False,
    )


def _gpt_oss(layers: int, experts: int) -> LlmShape:
    return LlmShape(
        layers=layers,
        hidden=2880,
        heads=64,
        vocab=201088,
        kv_heads=8,
        head_dim=64,
        ffn_hidden=2880,
        gated_mlp=True,
        tied_embeddings=False,
        experts=experts,
        experts_per_token=4,
        sliding_window=128,
        sliding_window_layers=layers // 2,
    )


LLM_SHAPES: dict[str, tuple[LlmShape, str]] = {
    "gpt2": (LlmShape(layers=12, hidden=768, heads=12, vocab=50257), "Radford et al. 2019 (124M)"),
    # GPT-2 sizes (Radford et al. 2019, Table 2; openai-community/gpt2-{medium,large,xl}
    # config.json: n_layer, n_embd, n_head, vocab 50257, FFN 4 x n_embd, tied output head)
    "gpt2-medium": (_gpt2(24, 1024, 16), "gpt2-medium config.json; Radford et al. 2019 (355M)"),
    "gpt2-large": (_gpt2(36, 1280, 20), "gpt2-large config.json; Radford et al. 2019 (774M)"),
    "gpt2-xl": (_gpt2(48, 1600, 25), "gpt2-xl config.json; Radford et al. 2019 (1.5B)"),
    # GPT-3 sizes (Brown et al. 2020, Table 2.1: n_layers, d_model, d_head; vocab 50257).
    # XL: the table's 24 heads of 128 would be 3,072 wide and 1.5B parameters; 16 heads of 128
    # (= d_model) give its stated 1.3B, as public re-implementations do
    "gpt3-xl": (_gpt2(24, 2048, 16), "Brown et al. 2020 Table 2.1 (GPT-3 XL, 1.3B)"),
    "gpt3-2.7b": (_gpt2(32, 2560, 32), "Brown et al. 2020 Table 2.1 (GPT-3 2.7B)"),
    # OPT (Zhang et al. 2022, Table 1; facebook/opt-* config.json: num_hidden_layers,
    # hidden_size, num_attention_heads, ffn_dim 4 x hidden, vocab 50272, ReLU MLP, tied head;
    # opt-350m's 512-wide embedding projection is left out, ~0.5M parameters)
    "opt-125m": (_opt(12, 768, 12), "facebook/opt-125m config.json; Zhang et al. 2022"),
    "opt-350m": (_opt(24, 1024, 16), "facebook/opt-350m config.json; Zhang et al. 2022"),
    "opt-1.3b": (_opt(24, 2048, 32), "facebook/opt-1.3b config.json; Zhang et al. 2022"),
    "opt-2.7b": (_opt(32, 2560, 32), "facebook/opt-2.7b config.json; Zhang et al. 2022"),
    "opt-6.7b": (_opt(32, 4096, 32), "facebook/opt-6.7b config.json; Zhang et al. 2022"),
    "opt-13b": (_opt(40, 5120, 40), "facebook/opt-13b config.json; Zhang et al. 2022"),
    "opt-30b": (_opt(48, 7168, 56), "facebook/opt-30b config.json; Zhang et al. 2022"),
    "opt-66b": (_opt(64, 9216, 72), "facebook/opt-66b config.json; Zhang et al. 2022"),
    "mpt-125m": (_mpt(12, 768, 12), "llm-foundry yamls/pretrain/mpt-125m.yaml"),
    "mpt-350m": (_mpt(24, 1024, 16), "llm-foundry mpt-350m.yaml"),
    "mpt-760m": (_mpt(24, 1536, 12), "llm-foundry mpt-760m.yaml"),
    "mpt-1b": (_mpt(24, 2048, 16), "llm-foundry mpt-1b.yaml"),
    "mpt-3b": (_mpt(32, 2560, 20), "llm-foundry mpt-3b.yaml"),
    "mpt-7b": (_mpt(32, 4096, 32), "llm-foundry mpt-7b.yaml"),
    "mpt-13b": (_mpt(40, 5120, 40), "llm-foundry mpt-13b.yaml"),
    "mpt-30b": (_mpt(48, 7168, 64), "llm-foundry mpt-30b.yaml"),
    "mpt-70b": (_mpt(80, 8192, 64), "llm-foundry mpt-70b.yaml"),
    "llama2-7b": (_llama(32, 4096, 32, 32, 11008, 32000), "Llama 2 config.json"),
    "llama2-13b": (_llama(40, 5120, 40, 40, 13824, 32000), "Llama 2 config.json"),
    "llama2-70b": (_llama(80, 8192, 64, 8, 28672, 32000), "Llama 2 config.json"),
    "llama3-8b": (_llama(32, 4096, 32, 8, 14336, 128256), "Llama 3 config.json"),
    "llama3-70b": (_llama(80, 8192, 64, 8, 28672, 128256), "Llama 3 config.json"),
    "llama3.1-405b": (_llama(126, 16384, 128, 8, 53248, 128256), "Llama 3.1 config.json"),
    "mistral-7b": (_llama(32, 4096, 32, 8, 14336, 32000), "Mistral 7B v0.1 config.json"),
    # mixture of experts (issue 18); FLOPs per token checked against each source's active count
    "mixtral-8x7b": (
        _moe(_llama(32, 4096, 32, 8, 14336, 32000), experts=8, per_token=2),
        "Mixtral 8x7B config.json (mistralai/Mixtral-8x7B-v0.1); Jiang et al. 2024, "
        "arXiv:2401.04088, and Mistral's announcement: 46.7B parameters, 12.9B per token",
    ),
    "qwen3-30b-a3b": (
        _moe(
            LlmShape(
                layers=48,
                hidden=2048,
                heads=32,
                vocab=151936,
                kv_heads=4,
                head_dim=128,
                ffn_hidden=6144,
                gated_mlp=True,
                tied_embeddings=False,
            ),
            experts=128,
            per_token=8,
            expert_ffn=768,
        ),
        "Qwen3-30B-A3B config.json and model card (Qwen/Qwen3-30B-A3B): 30.5B parameters "
        "(29.9B non-embedding), 3.3B activated",
    ),
    "qwen3-235b-a22b": (
        _moe(
            LlmShape(
                layers=94,
                hidden=4096,
                heads=64,
                vocab=151936,
                kv_heads=4,
                head_dim=128,
                ffn_hidden=12288,
                gated_mlp=True,
                tied_embeddings=False,
            ),
            experts=128,
            per_token=8,
            expert_ffn=1536,
        ),
        "Qwen3-235B-A22B config.json and model card (Qwen/Qwen3-235B-A22B): 235B parameters, "
        "22B activated",
    ),
    # gpt-oss: attention with biases and learned sinks (a few k values, left out); experts
    # stored in MXFP4 (quantization_config), counted here at the precision the run asks for
    "gpt-oss-120b": (
        _gpt_oss(36, 128),
        "gpt-oss-120b config.json (openai/gpt-oss-120b: 36 layers, hidden 2880, 128 experts top-4 "
        "of intermediate 2880, 64 query / 8 KV heads of head_dim 64, sliding_window 128 on "
        "every other layer, vocab 201088, untied) and OpenAI's gpt-oss model card "
        "(arXiv:2508.10925), parameter table: 116.8B parameters, 5.1B active (without the "
        "input embedding)",
    ),
    "gpt-oss-20b": (
        _gpt_oss(24, 32),
        "gpt-oss-20b config.json (openai/gpt-oss-20b: 24 layers, 32 experts top-4, otherwise as "
        "gpt-oss-120b) and the gpt-oss model card: 20.9B parameters, 3.6B active",
    ),
    # DeepSeek-V3 without its optional MTP module (num_nextn_predict_layers 1, 11.5B more)
    "deepseek-v3": (
        LlmShape(
            layers=61,
            hidden=7168,
            heads=128,
            vocab=129280,
            ffn_hidden=18432,  # the 3 dense layers' MLP (intermediate_size)
            gated_mlp=True,
            tied_embeddings=False,
            experts=256,
            experts_per_token=8,
            expert_ffn_hidden=2048,
            dense_layers=3,  # first_k_dense_replace
            shared_experts=1,
            mla=MlaShape(
                q_lora_rank=1536,
                kv_lora_rank=512,
                qk_nope_head_dim=128,
                qk_rope_head_dim=64,
                v_head_dim=128,
            ),
        ),
        "DeepSeek-V3 config.json (deepseek-ai/DeepSeek-V3: 61 layers, hidden 7168, 128 heads, MLA "
        "q_lora_rank 1536 / kv_lora_rank 512 / qk 128+64 / v 128, first_k_dense_replace 3 with "
        "intermediate 18432, 256 routed experts top-8 + 1 shared of 2048, vocab 129280) and "
        "its README_WEIGHTS.md; DeepSeek-AI 2024, arXiv:2412.19437, abstract: 671B "
        "parameters, 37B activated (36.6B without the input embedding); MTP module left out",
    ),
}


def _fixed(  # noqa: PLR0917 - a table row
    name: str,
    family: str,
    description: str,
    unit: str,
    batch: int,
    params: float,
    fwd_flops: float,
    act_values: float,
    units: float = 1.0,
) -> ModelInfo:
    return ModelInfo(
        name=name,
        family=family,
        description=description,
        throughput_unit=unit,
        default_batch_size=batch,
        params=params,
        fixed_forward_flops=fwd_flops,
        fixed_activation_values=act_values,
        fixed_units_per_sample=units,
        source="see gpurent.workload.models docstring",
    )


def _build() -> dict[str, ModelInfo]:
    zoo: dict[str, ModelInfo] = {}
    for m in (
        _fixed(
            "resnet50",
            "cnn",
            "ResNet-50 v1.5, ImageNet 224 px",
            "images/s",
            256,
            25.6e6,
            8.2e9,
            28e6,
        ),
        _fixed(
            "ssd", "cnn", "SSD300 (ResNet-50 backbone), COCO", "images/s", 128, 22e6, 40e9, 65e6
        ),
        _fixed(
            "gnmt",
            "rnn",
            "GNMT v2, WMT16 en-de",
            "tokens/s",
            256,
            160e6,
            25 * 200e6,
            5e6,
            units=50.0,
        ),
        _fixed(
            "tacotron2",
            "tts",
            "Tacotron 2, LJSpeech",
            "mel frames/s",
            128,
            28e6,
            570 * 50e6,
            570 * 20e3,
            units=570.0,
        ),
        _fixed(
            "waveglow",
            "tts",
            "WaveGlow, LJSpeech 16k-sample segments",
            "audio samples/s",
            16,
            87.9e6,
            352e9,
            2000 * 196e3,
            units=16000.0,
        ),
        _fixed(
            "transformer-xl-base",
            "rnn",
            "Transformer-XL base, WikiText-103 (tgt 192)",
            "tokens/s",
            32,
            151e6,
            192 * 103e6,
            192 * 266e3,
            units=192.0,
        ),
        _fixed(
            "transformer-xl-large",
            "rnn",
            "Transformer-XL large, WikiText-103 (tgt 128)",
            "tokens/s",
            16,
            257e6,
            128 * 512e6,
            128 * 18 * (1024 * 17 + 2.5 * 16 * 256),
            units=128.0,
        ),
        _fixed("ncf", "recsys", "NeuMF, MovieLens-20M", "samples/s", 1_000_000, 32e6, 0.22e6, 1e3),
    ):
        zoo[m.name] = m
    for name, enc, seq, batch, key, desc in (
        ("bert-base-squad", _BERT_BASE, 384, 32, "", "BERT-base, SQuAD v1.1 fine-tuning"),
        ("bert-large-squad", _BERT_LARGE, 384, 16, "", "BERT-large, SQuAD v1.1 fine-tuning"),
        (
            "bert-large-pretrain",
            _BERT_LARGE,
            128,
            64,
            "bert-large-squad",
            "BERT-large pre-training (phase 1 seq 128, phase 2 seq 512)",
        ),
        ("vit-b16", _VIT_B, 197, 128, "bert-base-squad", "ViT-B/16, ImageNet 224 px"),
        ("vit-l16", _VIT_L, 197, 64, "bert-large-squad", "ViT-L/16, ImageNet 224 px"),
        ("vit-h14", _VIT_H, 257, 32, "bert-large-squad", "ViT-H/14, ImageNet 224 px"),
    ):
        unit = "images/s" if name.startswith("vit") else "sequences/s"
        zoo[name] = ModelInfo(
            name=name,
            family="encoder",
            description=desc,
            throughput_unit=unit,
            default_batch_size=batch,
            default_seq_len=seq,
            encoder=enc,
            calibration_key=key,
            source=_VIT_SOURCE
            if name in {"vit-l16", "vit-h14"}
            else "Devlin et al. 2019; Dosovitskiy et al. 2021",
        )
    for name, t5, batch, size in (
        ("t5-base", T5_BASE, 16, "220 M"),
        ("t5-large", T5_LARGE, 8, "770 M"),
    ):
        zoo[name] = ModelInfo(
            name=name,
            family="encoder",  # bidirectional encoder + decoder; no sibling of its own
            description=f"{name.upper()} encoder-decoder, C4 span corruption ({T5_TOKENS} tokens)",
            throughput_unit="tokens/s",
            default_batch_size=batch,
            params=t5_params(t5),
            fixed_forward_flops=t5_forward_flops(t5, T5_TOKENS),
            fixed_activation_values=t5_activation_values(t5, T5_TOKENS),
            fixed_units_per_sample=float(T5_TOKENS),
            calibration_key="bert-large-squad",
            source=f"Raffel et al. 2020 (JMLR 21) shapes, Table 14 size {size}; training FLOPs "
            "per token by the 6 N rule (Kaplan et al. 2020); see gpurent.workload.encdec",
        )
    zoo["unet3d"] = ModelInfo(
        name="unet3d",
        family="cnn",
        description="3D U-Net (MLPerf image segmentation), KiTS19 128^3 patches",
        throughput_unit="samples/s",
        default_batch_size=2,
        params=unet3d_params(),
        fixed_forward_flops=unet3d_forward_flops(),
        fixed_activation_values=unet3d_activation_values(),
        source="mlcommons/training image_segmentation/pytorch/model/unet3d.py @ 7749e434 and "
        "layers.py @ 8bec066c; see gpurent.workload.unet3d",
    )
    zoo["retinanet-resnext50"] = ModelInfo(
        name="retinanet-resnext50",
        family="cnn",
        description="RetinaNet ResNeXt-50 32x4d FPN (MLPerf ssd), OpenImages 800 px",
        throughput_unit="images/s",
        default_batch_size=16,
        params=retinanet_params(),
        fixed_forward_flops=retinanet_forward_flops(),
        fixed_activation_values=retinanet_activation_values(),
        calibration_key="ssd",
        source="mlcommons/training single_stage_detector/ssd/model/retinanet.py @ 90ea96ea; "
        "Xie et al. 2017 Table 1; see gpurent.workload.retinanet",
    )
    zoo["sdxl-unet"] = ModelInfo(
        name="sdxl-unet",
        family="cnn",  # a convolutional UNet with transformer stacks; no sibling of its own
        description="SD-XL base UNet, one denoising step at 1024 px (128x128x4 latent)",
        throughput_unit="images/s",
        default_batch_size=4,
        params=sdxl_params(),
        fixed_forward_flops=sdxl_forward_flops(),
        fixed_activation_values=sdxl_activation_values(),
        source="Podell et al. 2023 (arXiv:2307.01952) section 2.1, Table 1: 2.6 B UNet "
        "parameters; see gpurent.workload.sdxl",
    )
    zoo["dit-xl2"] = ModelInfo(
        name="dit-xl2",
        family="encoder",  # a bidirectional transformer over latent patches
        description="DiT-XL/2 class-conditional diffusion, ImageNet 256 px (32x32x4 latent)",
        throughput_unit="images/s",
        default_batch_size=32,
        params=dit_params(DIT_XL_2),
        fixed_forward_flops=dit_forward_flops(DIT_XL_2),
        fixed_activation_values=dit_activation_values(DIT_XL_2),
        calibration_key="bert-large-squad",
        source="Peebles & Xie 2023 (arXiv:2212.09748) Table 1 shape, Table 4: 675 M params, "
        "118.6 Gflops (multiply-adds) per 256 px image; see gpurent.workload.diffusion",
    )
    zoo["flux-dev"] = ModelInfo(
        name="flux-dev",
        family="encoder",  # a bidirectional (MMDiT) transformer over latent patches + prompt
        description="FLUX.1-dev rectified-flow transformer, one denoising step at 1024 px "
        "(4096 image + 512 text tokens; T5-XXL, CLIP-L and VAE not counted)",
        throughput_unit="images/s",
        default_batch_size=1,
        params=flux_params(FLUX_DEV),
        fixed_forward_flops=flux_forward_flops(FLUX_DEV),
        fixed_activation_values=flux_activation_values(FLUX_DEV),
        calibration_key="bert-large-squad",
        source="black-forest-labs/FLUX.1-dev transformer/config.json (19 double + 38 single "
        "blocks, 24 heads x 128, in_channels 64, joint_attention_dim 4096, pooled 768, "
        "guidance_embeds) and model card (12 B parameters); black-forest-labs/flux "
        "FluxParams (mlp_ratio 4); see gpurent.workload.flux",
    )
    for name, (shape, src) in LLM_SHAPES.items():
        zoo[name] = ModelInfo(
            name=name,
            family="decoder-llm",
            description=f"decoder LLM {name}",
            throughput_unit="tokens/s",
            default_batch_size=4,
            default_seq_len=2048,
            llm=shape,
            source=src,
        )
    return zoo


MODELS: dict[str, ModelInfo] = _build()

_ALIASES = {
    "bert_base_squad": "bert-base-squad",
    "bert_large_squad": "bert-large-squad",
    "transformerxlbase": "transformer-xl-base",
    "transformerxllarge": "transformer-xl-large",
    "resnet-50": "resnet50",
    "vit-b-16": "vit-b16",
    "vit-l-16": "vit-l16",
    "vit-h-14": "vit-h14",
    "dit-xl/2": "dit-xl2",
    "dit-xl-2": "dit-xl2",
    "3d-unet": "unet3d",
    "retinanet": "retinanet-resnext50",
    "sdxl": "sdxl-unet",
    "unet-3d": "unet3d",
    "llama-2-7b": "llama2-7b",
    "llama-3-8b": "llama3-8b",
    "llama3.1-8b": "llama3-8b",
}

_SHAPE_RE = re.compile(r"^custom:(.*)$")


def list_models() -> tuple[str, ...]:
    """Names of every zoo model, zoo order."""
    return tuple(MODELS)


def custom_llm(shape: LlmShape, name: str = "custom") -> ModelInfo:
    """A decoder LLM of any shape."""
    for field, value in (
        ("layers", shape.layers),
        ("hidden", shape.hidden),
        ("heads", shape.heads),
        ("vocab", shape.vocab),
    ):
        if value <= 0:
            raise InputError(f"LLM shape: {field} must be positive, got {value}")
    if shape.hidden % shape.heads:
        raise InputError(
            f"LLM shape: hidden {shape.hidden} is not a multiple of heads {shape.heads}"
        )
    return ModelInfo(
        name=name,
        family="decoder-llm",
        description=f"decoder LLM L={shape.layers} h={shape.hidden} a={shape.heads}",
        throughput_unit="tokens/s",
        default_batch_size=4,
        default_seq_len=2048,
        llm=shape,
        source="user-given shape",
    )


def parse_shape(text: str) -> LlmShape:
    """`layers=32,hidden=4096,heads=32,vocab=32000[,kv_heads=8,ffn_hidden=14336,gated_mlp=1,untied=1]`."""
    fields: dict[str, int] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise InputError(f"model shape {text!r}: expected key=value pairs, got {part!r}")
        try:
            fields[key.strip()] = int(value)
        except ValueError:
            raise InputError(f"model shape {text!r}: {key.strip()} must be an integer") from None
    missing = {"layers", "hidden", "heads", "vocab"} - fields.keys()
    if missing:
        raise InputError(f"model shape {text!r}: missing {', '.join(sorted(missing))}")
    unknown = fields.keys() - {
        "layers",
        "hidden",
        "heads",
        "vocab",
        "kv_heads",
        "ffn_hidden",
        "gated_mlp",
        "untied",
    }
    if unknown:
        raise InputError(f"model shape {text!r}: unknown field(s) {', '.join(sorted(unknown))}")
    return LlmShape(
        layers=fields["layers"],
        hidden=fields["hidden"],
        heads=fields["heads"],
        vocab=fields["vocab"],
        kv_heads=fields.get("kv_heads"),
        ffn_hidden=fields.get("ffn_hidden"),
        gated_mlp=bool(fields.get("gated_mlp", 0)),
        tied_embeddings=not bool(fields.get("untied", 0)),
    )


def get_model(name: str) -> ModelInfo:
    """A zoo model by name (case-insensitive, Lambda task names accepted), or a custom LLM
    written `custom:layers=..,hidden=..,heads=..,vocab=..`; `NotFoundError` otherwise."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key in MODELS:
        return MODELS[key]
    match = _SHAPE_RE.match(key)
    if match:
        return custom_llm(parse_shape(match.group(1)), name=name.strip())
    raise NotFoundError("model", name, [*MODELS, "custom:layers=..,hidden=..,heads=..,vocab=.."])


def default_precision(model: ModelInfo) -> Precision:
    """The precision a job on `model` runs in when none is given, for `estimate` and `plan`
    alike: bf16 for LLMs (what llm-foundry and its peers train in), AMP for the rest (the
    reference scripts' mixed precision)."""
    return Precision.BF16 if model.is_llm else Precision.AMP
