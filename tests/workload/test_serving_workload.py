"""The serving workload (issue 19): fields from a [serve] table or CLI overrides, length
distributions, speculative decoding, presets; every bad value one InputError line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpurent.errors import InputError, NotFoundError
from gpurent.workload.presets import list_serving_presets, serving_preset
from gpurent.workload.serving import (
    Engine,
    LengthDistribution,
    Speculation,
    WeightQuant,
    acceptance_for,
    load_serving,
    parse_lengths,
    parse_overrides,
    parse_weight_quant,
    serving_from_mapping,
)


def test_lengths_fixed_uniform_and_histogram(tmp_path: Path) -> None:
    assert parse_lengths(512, "x").rows == ((512, 1.0),)
    uni = parse_lengths("uniform 100-400", "x")
    assert uni.mean == pytest.approx(250) and uni.max == 400 and len(uni.rows) == 16
    assert parse_lengths([10, 12], "x").mean == pytest.approx(11)
    (tmp_path / "h.csv").write_text("tokens,weight\n100,1\n300,1\n300,2\n", encoding="utf-8")
    hist = parse_lengths("histogram h.csv", "x", base_dir=tmp_path)
    assert hist.rows == ((100, 0.25), (300, 0.75)) and hist.quantile(0.5) == 300


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("0", ">= 1"),
        ("uniform 9-3", "below its low end"),
        ("uniform 9", "uniform LO-HI"),
        ("lots", "must be a number"),
    ],
)
def test_bad_lengths_are_one_line(text: str, needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        parse_lengths(text, "prompt_tokens")


def test_a_bad_histogram_file_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "h.csv").write_text("tokens,weight\n100,1\n-5,1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"h\.csv:3: tokens"):
        parse_lengths("histogram h.csv", "x", base_dir=tmp_path)
    (tmp_path / "z.csv").write_text("tokens,weight\n100,0\n", encoding="utf-8")
    with pytest.raises(InputError, match="sum to 0"):
        parse_lengths("histogram z.csv", "x", base_dir=tmp_path)


def test_overrides_build_on_a_preset() -> None:
    base = serving_preset("llama3-8b-chat")
    wl = serving_from_mapping(
        parse_overrides(["engine=trt-llm", "quant=fp8", "concurrency=32", "tpot_ms=30"]),
        "--set",
        base=base,
    )
    assert wl.engine is Engine.TENSORRT_LLM and wl.weights is WeightQuant.FP8
    assert wl.concurrency == 32 and wl.request_rate_per_s is None  # one traffic form at a time
    assert wl.slo.tpot_ms == 30 and wl.slo.ttft_p99_ms == base.slo.ttft_p99_ms


def test_speculation_from_tokens_per_step() -> None:
    wl = serving_from_mapping(
        {"model": "llama3-8b", "speculative_tokens": 4, "tokens_per_step": 3.0}, "x"
    )
    assert wl.speculation is not None
    assert wl.speculation.tokens_per_step == pytest.approx(3.0, rel=1e-6)
    assert Speculation(draft_tokens=2, acceptance_rate=1.0).tokens_per_step == 3.0
    with pytest.raises(InputError, match="exceeds"):
        acceptance_for(6.0, 4, "x")
    with pytest.raises(InputError, match="needs acceptance_rate"):
        serving_from_mapping({"model": "llama3-8b", "speculative_tokens": 4}, "x")


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"model": "llama3-8b", "request_rate": 1, "concurrency": 2}, "not both"),
        ({"model": "llama3-8b", "prefix_cache_hit_rate": 1.5}, "between 0 and 1"),
        ({"model": "llama3-8b", "weights": "int3"}, "unknown weight quantization 'int3'"),
        ({"model": "llama3-9b"}, "did you mean"),
        ({"engine": "vllm"}, "needs a model"),
        ({"model": "llama3-8b", "ttft_p99": 1}, "did you mean ttft_p99_ms"),
    ],
)
def test_bad_fields_are_one_line(fields: dict[str, object], needle: str) -> None:
    with pytest.raises(InputError, match=needle) as err:
        serving_from_mapping(fields, "w.toml: [serve]")
    assert str(err.value).startswith("w.toml: [serve]") and "\n" not in str(err.value)


def test_quantization_aliases() -> None:
    assert parse_weight_quant("AWQ") is WeightQuant.AWQ_INT4
    assert parse_weight_quant("fp4") is WeightQuant.NVFP4
    assert WeightQuant.AWQ_INT4.bytes_per_weight == pytest.approx(4.25 / 8)


def test_file_needs_a_serve_table(tmp_path: Path) -> None:
    f = tmp_path / "job.toml"
    f.write_text('model = "llama3-8b"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"no \[serve\] table"):
        load_serving(f)
    f.write_text('[serve]\npreset = "llama3-70b-chat"\nrequest_rate = 3\n', encoding="utf-8")
    wl = load_serving(f)
    assert wl.model == "llama3-70b" and wl.request_rate_per_s == 3 and wl.name == "llama3-70b-chat"


def test_presets() -> None:
    assert set(list_serving_presets()) >= {"llama3-8b-chat", "llama3-70b-chat"}
    chat = serving_preset("LLAMA3-8B-CHAT")
    assert chat.prompt == LengthDistribution.uniform(128, 2048)
    with pytest.raises(NotFoundError, match="did you mean"):
        serving_preset("llama3-8b-chta")
