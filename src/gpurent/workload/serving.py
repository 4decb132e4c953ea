"""A serving workload: one model behind an inference engine, with its traffic and its SLOs.

`ServingWorkload` is what `gpurent estimate --serve` (and the planner's serving form) takes:
a zoo model, the weight quantization and KV-cache precision, the engine, the traffic (a Poisson
request rate or a fixed number of concurrent clients), the prompt and output length
distributions, the SLOs, the prefix-cache hit rate and optional speculative decoding. All of it
is frozen; `serving_from_mapping` validates a `[serve]` table of a TOML/YAML file (or the
`key=value` overrides of the CLI) through `gpurent.inputs.values`, one line per error.

A file's `[serve]` table, e.g.

    [serve]
    preset = "llama3-8b-chat"       # optional: start from a preset, override the rest
    model = "llama3-8b"
    weights = "fp8"                 # bf16 fp16 fp8 int8 awq-int4 gptq-int4 nvfp4
    kv_cache = "fp8"                # bf16 fp16 fp8 (default: the weights' 16-bit type)
    engine = "vllm"                 # vllm sglang tensorrt-llm tgi
    request_rate = 20.0             # req/s, Poisson arrivals (or concurrency = 64)
    prompt_tokens = "uniform 256-2048"   # or 1024, or "histogram lengths.csv"
    output_tokens = 256
    ttft_p99_ms = 500
    tpot_ms = 50
    prefix_cache_hit_rate = 0.3
    speculative_tokens = 3          # draft tokens per step; with acceptance_rate = 0.7
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from gpurent.errors import GpurentError, InputError, closest
from gpurent.inputs import files
from gpurent.inputs import values as v
from gpurent.inputs.choices import parse_choice


class Engine(StrEnum):
    """The serving engine: each has its own fitted efficiencies (`estimate.serving`)."""

    VLLM = "vllm"
    SGLANG = "sglang"
    TENSORRT_LLM = "tensorrt-llm"
    TGI = "tgi"


class WeightQuant(StrEnum):
    """How the served weights are stored and multiplied.

    bf16/fp16: 16-bit weights and math. fp8: W8A8 on fp8 tensor cores (Ada, Hopper, Blackwell,
    CDNA3). nvfp4: 4-bit weights with an fp8 scale per 16 values on Blackwell tensor cores.
    int8, awq-int4, gptq-int4: weight-only (W8A16, W4A16): the weights are read narrow and
    dequantized to 16 bits before the matmul, which runs at the 16-bit rate plus a dequant cost;
    every GPU runs them."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    AWQ_INT4 = "awq-int4"
    GPTQ_INT4 = "gptq-int4"
    NVFP4 = "nvfp4"

    @property
    def weight_only(self) -> bool:
        """Whether only the weights are quantized (activations stay 16-bit)."""
        return self in (WeightQuant.INT8, WeightQuant.AWQ_INT4, WeightQuant.GPTQ_INT4)

    @property
    def bytes_per_weight(self) -> float:
        """Bytes per quantized linear-layer weight, scales included: int4 with one 16-bit scale
        and zero per group of 128 (AWQ, GPTQ: 4 + 32/128 bits), NVFP4 with one fp8 scale per 16
        (4 + 8/16 bits), int8 and fp8 with per-channel scales (negligible)."""
        return _BYTES_PER_WEIGHT[self]


_BYTES_PER_WEIGHT = {
    WeightQuant.BF16: 2.0,
    WeightQuant.FP16: 2.0,
    WeightQuant.FP8: 1.0,
    WeightQuant.INT8: 1.0,
    WeightQuant.AWQ_INT4: (4 + 32 / 128) / 8,
    WeightQuant.GPTQ_INT4: (4 + 32 / 128) / 8,
    WeightQuant.NVFP4: (4 + 8 / 16) / 8,
}


class KvPrecision(StrEnum):
    """The KV cache's element type (fp8: one byte per value, e5m2/e4m3 as the engine picks)."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"

    @property
    def bytes_per_value(self) -> float:
        """Bytes per cached key or value: 1 at FP8, 2 at 16 bits."""
        return 1.0 if self is KvPrecision.FP8 else 2.0


_ENGINE_ALIASES = {
    "trt-llm": Engine.TENSORRT_LLM,
    "trtllm": Engine.TENSORRT_LLM,
    "tensorrt": Engine.TENSORRT_LLM,
    "tensorrt_llm": Engine.TENSORRT_LLM,
}
_WEIGHT_ALIASES = {
    "awq": WeightQuant.AWQ_INT4,
    "awq_int4": WeightQuant.AWQ_INT4,
    "gptq": WeightQuant.GPTQ_INT4,
    "gptq_int4": WeightQuant.GPTQ_INT4,
    "int4": WeightQuant.AWQ_INT4,
    "w4a16": WeightQuant.AWQ_INT4,
    "w8a16": WeightQuant.INT8,
    "w8a8-fp8": WeightQuant.FP8,
    "fp4": WeightQuant.NVFP4,
    "bfloat16": WeightQuant.BF16,
    "float16": WeightQuant.FP16,
}
_KV_ALIASES = {
    "fp8_e4m3": KvPrecision.FP8,
    "fp8_e5m2": KvPrecision.FP8,
    "bfloat16": KvPrecision.BF16,
    "float16": KvPrecision.FP16,
}


def parse_engine(value: object, where: str = "engine") -> Engine:
    """`Engine` by name or alias (`inputs.choices`: one line with "did you mean")."""
    return parse_choice(Engine, value, what="engine", where=where, aliases=_ENGINE_ALIASES)


def parse_weight_quant(value: object, where: str = "weights") -> WeightQuant:
    """The weight quantization named by value; InputError naming where if unknown."""
    return parse_choice(
        WeightQuant, value, what="weight quantization", where=where, aliases=_WEIGHT_ALIASES
    )


def parse_kv_precision(value: object, where: str = "kv_cache") -> KvPrecision:
    """The KV-cache precision named by value; InputError naming where if unknown."""
    return parse_choice(
        KvPrecision, value, what="KV-cache precision", where=where, aliases=_KV_ALIASES
    )


MAX_LENGTH_ROWS = 4096  # rows of a length histogram
UNIFORM_POINTS = 16  # a uniform lo-hi distribution as this many equally weighted points


@dataclass(frozen=True, slots=True, kw_only=True)
class LengthDistribution:
    """Token counts with weights (a histogram): `fixed`, `uniform(lo, hi)` or rows of a file.
    Weights are normalised to sum to 1; tokens are whole and >= 1."""

    rows: tuple[tuple[int, float], ...]  # (tokens, probability), tokens ascending
    label: str

    @staticmethod
    def fixed(tokens: int) -> LengthDistribution:
        """A distribution with every request at tokens tokens."""
        return LengthDistribution(rows=((tokens, 1.0),), label=str(tokens))

    @staticmethod
    def uniform(lo: int, hi: int) -> LengthDistribution:
        """Equal weight on `UNIFORM_POINTS` evenly spaced lengths from lo to hi (inclusive)."""
        if hi <= lo:
            return LengthDistribution.fixed(lo)
        n = min(UNIFORM_POINTS, hi - lo + 1)
        pts = sorted({round(lo + (hi - lo) * i / (n - 1)) for i in range(n)})
        return LengthDistribution(
            rows=tuple((p, 1.0 / len(pts)) for p in pts), label=f"uniform {lo}-{hi}"
        )

    @staticmethod
    def histogram(rows: list[tuple[int, float]], label: str) -> LengthDistribution:
        """A distribution from (tokens, weight) rows: equal lengths merged, weights summing to 1."""
        merged: dict[int, float] = {}
        for tokens, weight in rows:
            merged[tokens] = merged.get(tokens, 0.0) + weight
        total = sum(merged.values())
        return LengthDistribution(
            rows=tuple((t, w / total) for t, w in sorted(merged.items())), label=label
        )

    @property
    def mean(self) -> float:
        """Mean length in tokens."""
        return sum(t * w for t, w in self.rows)

    @property
    def max(self) -> int:
        """Longest length in tokens."""
        return self.rows[-1][0]

    @property
    def mean_square(self) -> float:
        """Mean of the squared length, in tokens squared."""
        return sum(t * t * w for t, w in self.rows)

    def quantile(self, q: float) -> int:
        """The smallest length whose cumulative weight reaches `q`."""
        acc = 0.0
        for tokens, weight in self.rows:
            acc += weight
            if acc >= q - 1e-12:
                return tokens
        return self.rows[-1][0]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingSlo:
    """Latency objectives (None: not asked). TTFT = time to first token; TPOT = time per output
    token after the first (inter-token latency), per request; e2e = the whole request."""

    ttft_p50_ms: float | None = None
    ttft_p99_ms: float | None = None
    tpot_ms: float | None = None  # per-request mean TPOT at the 99th percentile of requests
    e2e_p99_s: float | None = None

    @property
    def any(self) -> bool:
        """Whether any objective is set."""
        return any(x is not None for x in dataclasses.astuple(self))


@dataclass(frozen=True, slots=True, kw_only=True)
class Speculation:
    """Speculative decoding: `draft_tokens` proposed per step, each accepted with probability
    `acceptance_rate` (independently, as Leviathan et al. 2023 assume): a step then yields
    (1 - a^(k+1)) / (1 - a) tokens per sequence on average. `draft_cost_ratio` is one draft
    token's cost relative to one target decode step (EAGLE-style heads: a few %)."""

    draft_tokens: int
    acceptance_rate: float
    draft_cost_ratio: float = 0.05

    @property
    def tokens_per_step(self) -> float:
        """Tokens a step yields per sequence on average: (1 - a^(k+1)) / (1 - a)."""
        a, k = self.acceptance_rate, self.draft_tokens
        if a >= 1.0:
            return float(k + 1)
        return (1.0 - a ** (k + 1)) / (1.0 - a)


_DEFAULT_PROMPT = LengthDistribution.fixed(512)
_DEFAULT_OUTPUT = LengthDistribution.fixed(256)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingWorkload:
    """One model served by one engine. Traffic is `request_rate_per_s` (Poisson arrivals,
    open loop) or `concurrency` (that many clients, each sending its next request when the
    last one finished: closed loop, as `vllm bench serve --max-concurrency`); neither: only the
    curve. `max_num_seqs` caps the sequences one replica batches (the engine's
    `--max-num-seqs`); `chunk_tokens` is the prefill chunk (tokens per step, the engine's
    `--max-num-batched-tokens`); `gpu_memory_utilization` the share of GPU memory the engine
    takes (vLLM's default 0.9)."""

    model: str
    weights: WeightQuant = WeightQuant.BF16
    kv_cache: KvPrecision | None = None  # None: the weights' 16-bit type
    engine: Engine = Engine.VLLM
    prompt: LengthDistribution = _DEFAULT_PROMPT
    output: LengthDistribution = _DEFAULT_OUTPUT
    request_rate_per_s: float | None = None
    concurrency: int | None = None
    slo: ServingSlo = ServingSlo()
    prefix_cache_hit_rate: float = 0.0
    speculation: Speculation | None = None
    max_num_seqs: int = 256
    chunk_tokens: int = 8192
    gpu_memory_utilization: float = 0.9
    name: str = ""

    @property
    def kv_precision(self) -> KvPrecision:
        """The KV cache's precision: as given, else the weights' 16-bit type (BF16 unless FP16)."""
        if self.kv_cache is not None:
            return self.kv_cache
        return KvPrecision.FP16 if self.weights is WeightQuant.FP16 else KvPrecision.BF16


MAX_RATE = 1e6  # req/s
MAX_CONCURRENCY = 1_000_000
_NUMBERS: dict[str, v.Validator] = {
    "request_rate": v.bounded(v.positive, most=MAX_RATE),
    "concurrency": v.bounded(v.positive_int, most=MAX_CONCURRENCY),
    "ttft_p50_ms": v.bounded(v.positive, most=v.MAX_SECONDS * 1e3),
    "ttft_p99_ms": v.bounded(v.positive, most=v.MAX_SECONDS * 1e3),
    "tpot_ms": v.bounded(v.positive, most=v.MAX_SECONDS * 1e3),
    "e2e_p99_s": v.bounded(v.positive, most=v.MAX_SECONDS),
    "prefix_cache_hit_rate": v.fraction,
    "speculative_tokens": v.bounded(v.positive_int, most=64),
    "acceptance_rate": v.fraction,
    "tokens_per_step": v.bounded(v.positive, least=1.0, most=65.0),
    "draft_cost_ratio": v.bounded(v.non_negative, most=10.0),
    "max_num_seqs": v.bounded(v.positive_int, most=1_000_000),
    "chunk_tokens": v.bounded(v.positive_int, most=v.MAX_SEQ_LEN),
    "gpu_memory_utilization": v.bounded(v.positive, most=1.0),
}
_SLO_KEYS = ("ttft_p50_ms", "ttft_p99_ms", "tpot_ms", "e2e_p99_s")
_SPEC_KEYS = ("speculative_tokens", "acceptance_rate", "tokens_per_step", "draft_cost_ratio")
_FIELD_ALIASES = {
    "quantization": "weights",
    "quant": "weights",
    "kv_cache_dtype": "kv_cache",
    "rate": "request_rate",
    "request_rate_per_s": "request_rate",
    "prompt": "prompt_tokens",
    "input_tokens": "prompt_tokens",
    "output": "output_tokens",
    "itl_ms": "tpot_ms",
    "max_batched_tokens": "chunk_tokens",
}
KNOWN_FIELDS = (
    "preset",
    "model",
    "name",
    "weights",
    "kv_cache",
    "engine",
    "prompt_tokens",
    "output_tokens",
    *_NUMBERS,
)


def parse_lengths(value: object, where: str, *, base_dir: Path | None = None) -> LengthDistribution:
    """A length distribution from a number (fixed), "uniform LO-HI" (or [lo, hi]), or
    "histogram FILE" (a CSV of tokens,weight rows, relative to `base_dir`)."""
    check = v.bounded(v.positive_int, most=v.MAX_SEQ_LEN)
    if isinstance(value, list):
        if len(value) != 2:
            raise InputError(f"{where} as a list must be [lo, hi], got {len(value)} items")
        lo, hi = (int(check(x, where)) for x in value)  # type: ignore[call-overload]
        return _uniform(lo, hi, where)
    if isinstance(value, str):
        text = value.strip()
        head, _, rest = text.partition(" ")
        if head.lower() == "uniform":
            lo_text, sep, hi_text = rest.strip().partition("-")
            if not sep:
                raise InputError(f"{where} must be 'uniform LO-HI', got {value!r}")
            lo = int(check(lo_text.strip(), where))  # type: ignore[call-overload]
            hi = int(check(hi_text.strip(), where))  # type: ignore[call-overload]
            return _uniform(lo, hi, where)
        if head.lower() == "histogram":
            path = Path(rest.strip())
            if base_dir is not None and not path.is_absolute():
                path = base_dir / path
            return read_length_histogram(path)
    return LengthDistribution.fixed(int(check(value, where)))  # type: ignore[call-overload]


def _uniform(lo: int, hi: int, where: str) -> LengthDistribution:
    if hi < lo:
        raise InputError(f"{where}: uniform {lo}-{hi} has its high end below its low end")
    return LengthDistribution.uniform(lo, hi)


def read_length_histogram(path: Path) -> LengthDistribution:
    """Rows of (tokens, weight) from a CSV file with a `tokens,weight` header (edge: reads it)."""
    where = files.shown(path)
    text = files.read_text(path, limit_bytes=files.MAX_CONFIG_BYTES, what="length histogram")
    header, records = files.csv_records(text, where)
    if "tokens" not in header or "weight" not in header:
        raise InputError(f"{where}: a length histogram needs a header `tokens,weight`")
    if not records:
        raise InputError(f"{where}: the length histogram has no rows")
    if len(records) > MAX_LENGTH_ROWS:
        raise InputError(f"{where}: at most {MAX_LENGTH_ROWS} rows, got {len(records)}")
    rows = []
    for line, rec in records:
        tokens = v.bounded(v.positive_int, most=v.MAX_SEQ_LEN)(
            rec["tokens"], f"{where}:{line}: tokens"
        )
        weight = v.non_negative(rec["weight"], f"{where}:{line}: weight")
        rows.append((int(tokens), float(weight)))  # type: ignore[call-overload]
    if sum(w for _, w in rows) <= 0:
        raise InputError(f"{where}: the weights sum to 0")
    return LengthDistribution.histogram(rows, label=f"histogram {path.name}")


def serving_from_mapping(
    raw: Mapping[str, Any],
    where: str,
    *,
    base: ServingWorkload | None = None,
    base_dir: Path | None = None,
) -> ServingWorkload:
    """Validate a `[serve]` table (or CLI `key=value` overrides, as strings) into a
    ServingWorkload on top of `base` (or of `preset = ...`); every error names `where`."""
    from gpurent.workload.models import get_model
    from gpurent.workload.presets import serving_preset

    data = {_FIELD_ALIASES.get(str(k), str(k)): val for k, val in raw.items()}
    unknown = [k for k in data if k not in KNOWN_FIELDS]
    if unknown:
        near = closest(unknown[0], KNOWN_FIELDS)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise InputError(f"{where}: unknown serve field {unknown[0]!r}{hint}")
    try:
        if "preset" in data:
            base = serving_preset(str(data.pop("preset")))
    except GpurentError as exc:
        raise InputError(f"{where}: {exc.message}") from None
    fields: dict[str, Any] = {}
    numbers = {k: _NUMBERS[k](data[k], f"{where}: {k}") for k in _NUMBERS if k in data}
    if "model" in data:
        try:
            fields["model"] = get_model(str(data["model"])).name
        except GpurentError as exc:
            raise InputError(f"{where}: {exc.message}") from None
    if "name" in data:
        fields["name"] = str(data["name"])
    if "weights" in data:
        fields["weights"] = parse_weight_quant(data["weights"], f"{where}: weights")
    if "kv_cache" in data:
        fields["kv_cache"] = parse_kv_precision(data["kv_cache"], f"{where}: kv_cache")
    if "engine" in data:
        fields["engine"] = parse_engine(data["engine"], f"{where}: engine")
    if "prompt_tokens" in data:
        fields["prompt"] = parse_lengths(
            data["prompt_tokens"], f"{where}: prompt_tokens", base_dir=base_dir
        )
    if "output_tokens" in data:
        fields["output"] = parse_lengths(
            data["output_tokens"], f"{where}: output_tokens", base_dir=base_dir
        )
    if "request_rate" in numbers:
        fields["request_rate_per_s"] = numbers["request_rate"]
        fields["concurrency"] = None
    if "concurrency" in numbers:
        if "request_rate" in numbers:
            raise InputError(f"{where}: give request_rate or concurrency, not both")
        fields["concurrency"] = numbers["concurrency"]
        fields["request_rate_per_s"] = None
    for key in ("prefix_cache_hit_rate", "max_num_seqs", "chunk_tokens", "gpu_memory_utilization"):
        if key in numbers:
            fields[key] = numbers[key]
    prior = base.slo if base is not None else ServingSlo()
    slo: dict[str, Any] = {k: numbers[k] for k in _SLO_KEYS if k in numbers}
    if slo:
        fields["slo"] = dataclasses.replace(prior, **slo)
    spec = _speculation(numbers, base.speculation if base is not None else None, where)
    if spec is not None or any(k in numbers for k in _SPEC_KEYS):
        fields["speculation"] = spec
    if base is None:
        if "model" not in fields:
            raise InputError(f"{where}: needs a model (or a preset)")
        return ServingWorkload(**fields)
    return dataclasses.replace(base, **fields)


def _speculation(
    numbers: Mapping[str, Any], prior: Speculation | None, where: str
) -> Speculation | None:
    if not any(k in numbers for k in _SPEC_KEYS):
        return prior
    k = numbers.get("speculative_tokens", prior.draft_tokens if prior else None)
    if k is None:
        raise InputError(f"{where}: acceptance_rate/tokens_per_step need speculative_tokens")
    if "tokens_per_step" in numbers:
        if "acceptance_rate" in numbers:
            raise InputError(f"{where}: give acceptance_rate or tokens_per_step, not both")
        a = acceptance_for(float(numbers["tokens_per_step"]), int(k), where)
    else:
        a = numbers.get("acceptance_rate", prior.acceptance_rate if prior else None)
        if a is None:
            raise InputError(
                f"{where}: speculative_tokens needs acceptance_rate or tokens_per_step"
            )
    ratio = numbers.get("draft_cost_ratio", prior.draft_cost_ratio if prior else 0.05)
    return Speculation(draft_tokens=int(k), acceptance_rate=float(a), draft_cost_ratio=float(ratio))


def acceptance_for(tokens_per_step: float, draft_tokens: int, where: str) -> float:
    """The acceptance rate whose expected tokens per step is `tokens_per_step` (bisection)."""
    if tokens_per_step > draft_tokens + 1:
        raise InputError(
            f"{where}: tokens_per_step {tokens_per_step:g} exceeds speculative_tokens + 1 "
            f"= {draft_tokens + 1}"
        )
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2.0
        got = Speculation(draft_tokens=draft_tokens, acceptance_rate=mid).tokens_per_step
        lo, hi = (mid, hi) if got < tokens_per_step else (lo, mid)
    return (lo + hi) / 2.0


def load_serving(path: str | Path) -> ServingWorkload:
    """The `[serve]` table of a TOML (.toml) or YAML (.yaml/.yml) file (edge: reads it)."""
    p = Path(path)
    where = files.shown(p)
    raw: Any = files.read_toml_or_yaml(p, "workload file")
    table = raw.get("serve") if isinstance(raw, dict) else None
    if not isinstance(table, dict):
        raise InputError(f"{where}: no [serve] table (a serving workload lives under [serve])")
    wl = serving_from_mapping(table, f"{where}: [serve]", base_dir=p.parent)
    return wl if wl.name else dataclasses.replace(wl, name=p.stem)


def parse_overrides(items: list[str], where: str = "--set") -> dict[str, str]:
    """`key=value` strings (CLI) as a mapping for `serving_from_mapping`."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{where} {item!r} must be KEY=VALUE, e.g. request_rate=20")
        out[key.strip().replace("-", "_")] = value.strip()
    return out


__all__ = [
    "KNOWN_FIELDS",
    "Engine",
    "KvPrecision",
    "LengthDistribution",
    "ServingSlo",
    "ServingWorkload",
    "Speculation",
    "WeightQuant",
    "acceptance_for",
    "load_serving",
    "parse_engine",
    "parse_kv_precision",
    "parse_lengths",
    "parse_overrides",
    "parse_weight_quant",
    "read_length_histogram",
    "serving_from_mapping",
]
