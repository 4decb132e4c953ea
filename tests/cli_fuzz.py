"""The CLI fuzz cases, shared by tests/test_cli_fuzz.py and benchmarks/bench_reliability_fuzz.py.

Every command that reads a file or a number, fed generated values: numbers (NaN, infinities,
huge, negative, zero, fractional, non-numeric text) for its numeric flags, and files that are
malformed CSV/JSON/TOML/YAML, non-UTF-8 bytes, structured files with fuzzed fields, or special
files (a device, a directory, a symlink loop, a 300-character name). The only allowed outcomes:
exit 0 with a plausible answer (JSON that parses, finite numbers, no negative cost, time or
throughput), or exactly one non-empty stderr line starting with "error:" and exit 1, 2 or 3.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from typer.testing import CliRunner

from gpurent.cli.main import app

# ----------------------------------------------------------------------------- outcomes


@dataclass(frozen=True)
class Outcome:
    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None


def invoke(args: list[str]) -> Outcome:
    r = CliRunner().invoke(app, args)
    exc = r.exception if not isinstance(r.exception, SystemExit) else None
    return Outcome(tuple(args), r.exit_code, r.stdout, r.stderr, exc)


def problem(out: Outcome) -> str | None:
    """Why `out` is not an allowed outcome, or None when it is."""
    if out.exception is not None:
        return f"raised {type(out.exception).__name__}: {out.exception}"
    if "Traceback" in out.stderr or "Traceback" in out.stdout:
        return "printed a traceback"
    if out.exit_code == 0:
        return _wrong_answer(out)
    lines = out.stderr.splitlines()
    if out.exit_code not in (1, 2, 3):
        return f"exit code {out.exit_code}"
    if out.exit_code == 3:  # infeasible: the plan explains on stdout; stderr may stay empty
        return None if len(lines) <= 1 else f"stderr has {len(lines)} lines"
    if len(lines) != 1 or not lines[0].startswith("error:") or not lines[0][6:].strip():
        return f"stderr is not one 'error:' line: {out.stderr[:300]!r}"
    return None


_NON_NEGATIVE_SUFFIXES = ("_usd", "usd_per_hour", "time_s", "_hours", "throughput", "_per_s")
_SIGNED = ("delta", "gap", "saving", "headroom", "diff", "change", "offset", "vs_")


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite JSON number {name}")


def _wrong_answer(out: Outcome) -> str | None:
    if "--json" not in out.args or not out.stdout.strip():
        return None
    try:
        docs = [json.loads(out.stdout, parse_constant=_reject_constant)]
    except ValueError:  # JSON lines (estimate --from-csv), or a non-finite number
        try:
            docs = [
                json.loads(line, parse_constant=_reject_constant)
                for line in out.stdout.splitlines()
                if line.strip()
            ]
        except ValueError as exc:
            return f"stdout is not finite JSON ({exc})"
    for doc in docs:
        bad = _negative(doc, "")
        if bad:
            return f"a negative quantity in the answer: {bad}"
        if isinstance(doc, dict) and doc.get("feasible") is True:
            best = doc.get("best") or {}
            if best.get("work_units") is not None and best.get("cost_per_unit_usd") is None:
                return "a feasible plan without a cost"
    return None


def _negative(node: Any, path: str) -> str | None:
    if isinstance(node, dict):
        for key, value in node.items():
            bad = _negative(value, f"{path}.{key}")
            if bad:
                return bad
    elif isinstance(node, list):
        for i, value in enumerate(node):
            bad = _negative(value, f"{path}[{i}]")
            if bad:
                return bad
    elif isinstance(node, int | float) and not isinstance(node, bool):
        key = path.rsplit(".", 1)[-1].split("[", maxsplit=1)[0]
        if node < 0 and key.endswith(_NON_NEGATIVE_SUFFIXES) and not any(s in key for s in _SIGNED):
            return f"{path} = {node}"
    return None


# ----------------------------------------------------------------------------- numbers

_NUMBER_TEXT = [
    "nan", "NaN", "inf", "-inf", "Infinity", "1e308", "-1e308", "1e999", "0", "-0", "-1",
    "0.5", "3.7", "1e-320", "abc", "", " ", "0x10", "1_000", "1e8", "9" * 30, "true",
]  # fmt: skip


def number_texts() -> st.SearchStrategy[str]:
    """Texts a user may type for a number: odd literals, floats of every size, integers."""
    return st.one_of(
        st.sampled_from(_NUMBER_TEXT),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.integers(min_value=-(10**20), max_value=10**20).map(str),
        st.integers(min_value=0, max_value=100).map(str),
    )


@dataclass(frozen=True)
class NumberTarget:
    name: str
    base: tuple[str, ...]
    flags: tuple[str, ...]
    tail: tuple[str, ...] = ()

    def args(self, flag: str, value: str, tmp: Path) -> list[str]:
        base = [a.replace("{tmp}", str(tmp)) for a in self.base]
        return [*base, f"{flag}={value}", *self.tail]


TRACE_CSV = "date,availability\n" + "".join(
    f"2023-01-01 {h:02d}:{m:02d}:00,{(h * 7 + m) % 3 != 0:d}\n" for h in range(20) for m in (0, 30)
)
SAMPLES_CSV = (
    "timestamp,gpu,sm_util_pct,gpu_busy_pct,memory_used_mib,memory_total_mib,power_w\n"
    + "".join(f"{1700000000 + i},0,{i % 100},{i % 100},1000,81920,300\n" for i in range(20))
)


def prepare(tmp: Path) -> None:
    """The valid files the number targets read."""
    (tmp / "trace.csv").write_text(TRACE_CSV)
    (tmp / "samples.csv").write_text(SAMPLES_CSV)


NUMBER_TARGETS = (
    NumberTarget(
        "plan",
        ("plan", "--preset", "llama-lora", "--json"),
        (
            "--tokens", "--epochs", "--batch-size", "--budget", "--max-gpus", "--max-nodes",
            "--min-gpu-memory", "--top", "--storage-gb", "--storage-usd-per-gb-month",
            "--egress-gb", "--egress-usd-per-gb", "--spot-interruptions-per-hour",
            "--checkpoint-s", "--restart-s", "--commit-discount", "--deadline",
        ),
    ),
    NumberTarget(
        "estimate",
        ("estimate", "--model", "resnet50", "--gpu", "H100", "--json"),
        ("--gpus", "--nodes", "--batch-size", "--seq-len", "--tp", "--pp", "--inter-node-gbps"),
    ),
    NumberTarget(
        "pricing",
        ("pricing", "compare", "--on-demand", "3", "--json"),
        (
            "--on-demand", "--spot", "--committed", "--commit-discount", "--commit-months",
            "--hours-per-day", "--days-per-month", "--months", "--mtti-hours",
            "--checkpoint-cost-s", "--restart-s",
        ),
    ),
    NumberTarget(
        "spot-interval",
        ("spot", "interval", "--mtti-hours", "6", "--json"),
        ("--checkpoint-cost-s", "--mtti-hours", "--restart-s", "--nodes"),
    ),
    NumberTarget(
        "spot-simulate",
        (
            "spot", "simulate", "--trace", "{tmp}/trace.csv", "--job-hours", "2",
            "--deadline-hours", "6", "--price-ratio", "3", "--starts", "3", "--json",
        ),
        ("--job-hours", "--deadline-hours", "--changeover-hours", "--price-ratio", "--nodes"),
    ),
    NumberTarget("bench-results", ("bench", "results", "--json"), ("--limit",)),
    NumberTarget(
        "spot-zones",
        ("spot", "zones", "{tmp}/trace.csv", "--json"),
        ("--size", "--nodes", "--top"),
    ),
    NumberTarget(
        "monitor",
        ("monitor", "--fake-gpus", "busy", "--duration", "0", "--json"),
        (
            "--interval", "--retention-days", "--idle-minutes", "--sm-util-low-pct",
            "--disk-util-high-pct", "--idle-pct", "--price-usd-per-hour",
        ),
    ),
    NumberTarget(
        "monitor-diagnose",
        ("monitor", "diagnose", "{tmp}/samples.csv", "--json"),
        ("--price-usd-per-hour", "--sm-util-low-pct", "--disk-util-high-pct", "--idle-pct"),
    ),
    NumberTarget(
        "run",  # the job is `true`: only flags whose size cannot make the supervisor wait
        ("run", "--notice", "none", "--json"),
        ("--max-failures", "--min-free-gib", "--health-interval", "--backoff"),
        ("--", "true"),
    ),
)  # fmt: skip


# ----------------------------------------------------------------------------- files

_CELL = st.one_of(
    st.sampled_from(["", "nan", "inf", "-1", "0", "3.7", "1e308", "true", "H100", "resnet50",
                     "amp", "bf16", "llama3-8b", "A100-SXM4-80GB", '"', "a,b", "\x00"]),
    number_texts(),
    st.text(string.printable, max_size=12),
)  # fmt: skip


def csv_texts(header: list[str]) -> st.SearchStrategy[str]:
    """CSV text: the expected header (sometimes mangled) and rows of fuzzed cells."""
    head = st.one_of(
        st.just(header),
        st.lists(st.sampled_from([*header, "x", ""]), min_size=0, max_size=len(header) + 2),
    )
    rows = st.lists(st.lists(_CELL, min_size=0, max_size=len(header) + 2), max_size=6)
    return st.builds(
        lambda h, rs: "\n".join(",".join(r) for r in [h, *rs]) + "\n",
        head,
        rows,
    )


_JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30), st.text(max_size=8),
)  # fmt: skip
JSON_VALUES = st.recursive(
    _JSON_LEAF,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)


def json_texts(keys: list[str]) -> st.SearchStrategy[str]:
    """JSON text: objects with the expected keys and fuzzed values, any JSON value, deep
    nesting, or broken JSON."""
    keyed = st.dictionaries(st.sampled_from(keys), JSON_VALUES, max_size=len(keys))
    return st.one_of(
        keyed.map(json.dumps),
        JSON_VALUES.map(json.dumps),
        st.integers(min_value=60, max_value=3000).map(lambda n: "[" * n + "]" * n),
        st.text(max_size=40).map(lambda t: "{" + t),
    )


_TOML_VALUE = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "-8", "0", "3.7", "true", '"abc"', "1e308", "[1, 2]",
                     "{a = 1}", '"llama3-8b"', '"bf16"', '"inference"', "9" * 40]),
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)  # fmt: skip
WORKLOAD_KEYS = [
    "preset", "model", "task", "precision", "batch_size", "seq_len", "epochs", "token_budget",
    "dataset_samples", "output_tokens", "tensor_parallel", "pipeline_parallel",
    "gradient_accumulation", "lora_rank", "sharding", "workload", "activation_checkpointing",
]  # fmt: skip


def toml_texts() -> st.SearchStrategy[str]:
    lines = st.lists(
        st.tuples(st.sampled_from(WORKLOAD_KEYS), _TOML_VALUE).map(lambda kv: f"{kv[0]} = {kv[1]}"),
        max_size=5,
        unique_by=lambda line: line.split(" ")[0],
    )
    return st.one_of(
        st.builds(lambda ls: 'preset = "llama-lora"\n' + "\n".join(ls) + "\n", lines),
        st.builds(lambda ls: "\n".join(ls) + "\n", lines),
        st.text(max_size=60),
    )


def yaml_texts() -> st.SearchStrategy[str]:
    pairs = st.dictionaries(st.sampled_from(WORKLOAD_KEYS), JSON_VALUES, max_size=5)
    return st.one_of(
        pairs.map(lambda d: "preset: llama-lora\n" + json.dumps(d)[1:-1].replace(", ", "\n")),
        pairs.map(json.dumps),  # JSON is YAML
        st.sampled_from(
            ["a: &x [*x]\n", "a: [1,\n", "- - - - -\n", "gpus: 5\n", "d: 2001-13-01\n"]
        ),
        st.integers(min_value=60, max_value=2000).map(lambda n: "[" * n + "]" * n),
        st.text(max_size=60),
    )


def byte_blobs() -> st.SearchStrategy[bytes]:
    """Bytes that are not UTF-8 (with some text around them)."""
    return st.builds(
        lambda a, b: a.encode() + b"\xff\xfe\xc3" + b,
        st.text(max_size=20),
        st.binary(max_size=40),
    )


SPECIAL = ("device", "directory", "symlink-loop", "long-name", "missing", "empty")


def special_path(kind: str, tmp: Path, suffix: str) -> Path:
    if kind == "device":
        return Path("/dev/zero")
    if kind == "directory":
        d = tmp / f"dir{suffix}"
        d.mkdir(exist_ok=True)
        return d
    if kind == "symlink-loop":
        p = tmp / f"loop{suffix}"
        if not p.is_symlink():
            p.symlink_to(p)
        return p
    if kind == "long-name":
        return tmp / ("n" * 300 + suffix)
    if kind == "empty":
        p = tmp / f"empty{suffix}"
        p.write_bytes(b"")
        return p
    return tmp / f"missing{suffix}"


@dataclass(frozen=True)
class FileTarget:
    """A command reading one file of `suffix`, and the structured text it expects."""

    name: str
    suffix: str
    command: Callable[[str], list[str]]
    texts: Callable[[], st.SearchStrategy[str]]


FILE_TARGETS = (
    FileTarget("workload-toml", ".toml", lambda p: ["plan", "--workload", p, "--json"], toml_texts),
    FileTarget(
        "workload-yaml",
        ".yaml",
        lambda p: ["estimate", "--workload", p, "--gpu", "H100", "--json"],
        yaml_texts,
    ),
    FileTarget(
        "from-csv",
        ".csv",
        lambda p: ["estimate", "--from-csv", p, "--json"],
        lambda: csv_texts(["model", "gpu", "num_gpus", "precision", "batch_size", "seq_len"]),
    ),
    FileTarget(
        "calibrate-csv",
        ".csv",
        lambda p: ["calibrate", "add", p, "--json"],
        lambda: csv_texts(["model", "gpu", "num_gpus", "precision", "batch_size", "throughput"]),
    ),
    FileTarget(
        "calibrate-json",
        ".json",
        lambda p: ["calibrate", "add", p, "--json"],
        lambda: json_texts(["calibration_rows"]),
    ),
    FileTarget(
        "diagnose-csv",
        ".csv",
        lambda p: ["monitor", "diagnose", p, "--json"],
        lambda: csv_texts(["timestamp", "gpu", "sm_util_pct", "gpu_busy_pct", "power_w"]),
    ),
    FileTarget(
        "diagnose-jsonl",
        ".jsonl",
        lambda p: ["monitor", "diagnose", p, "--json"],
        lambda: json_texts(["timestamp", "gpu", "sm_util_pct", "power_w"]),
    ),
    FileTarget(
        "spot-trace-csv",
        ".csv",
        lambda p: [
            "spot",
            "simulate",
            "--trace",
            p,
            "--job-hours",
            "1",
            "--deadline-hours",
            "2",
            "--price-ratio",
            "3",
            "--starts",
            "2",
            "--json",
        ],
        lambda: csv_texts(["date", "availability", "price"]),
    ),
    FileTarget(
        "spot-trace-json",
        ".json",
        lambda p: ["spot", "interval", p, "--json"],
        lambda: json_texts(["metadata", "data", "gap_seconds"]),
    ),
    FileTarget(
        "spot-signals-json",
        ".json",
        lambda p: ["spot", "signals", "import", p],
        lambda: json_texts(
            ["SpotPlacementScores", "InstanceTypes", "ranges", "spot_advisor", "data", "Score"]
        ),
    ),
    FileTarget(
        "spot-signals-spotlake",
        ".csv",
        lambda p: ["spot", "signals", "import", p],
        lambda: csv_texts(["Time", "InstanceType", "Region", "AZ", "SPS", "IF", "SpotPrice"]),
    ),
    FileTarget(
        "scenario-yaml",
        ".yaml",
        lambda p: ["monitor", "--fake-gpus", p, "--duration", "0", "--json"],
        yaml_texts,
    ),
    FileTarget(
        "catalog-csv",
        ".csv",
        lambda p: ["offers", "--catalog", p, "--json"],
        lambda: csv_texts(
            ["provider", "instance_type", "region", "gpu_name", "gpu_count", "price_usd_per_hour"]
        ),
    ),
    FileTarget(
        "bench-json",
        ".json",
        lambda p: ["bench", "compare", p, p, "--json"],
        lambda: json_texts(["schema_version", "results", "host", "gpus"]),
    ),
)


def file_contents(target: FileTarget) -> st.SearchStrategy[tuple[str, bytes | str]]:
    """("text", str) | ("bytes", bytes) | ("special", kind) for one file target."""
    return st.one_of(
        target.texts().map(lambda t: ("text", t)),
        byte_blobs().map(lambda b: ("bytes", b)),
        st.sampled_from(SPECIAL).map(lambda k: ("special", k)),
    )


def write_input(target: FileTarget, content: tuple[str, bytes | str], tmp: Path, n: int) -> Path:
    kind, value = content
    if kind == "special":
        return special_path(str(value), tmp, target.suffix)
    path = tmp / f"in{n}{target.suffix}"
    if isinstance(value, bytes):
        path.write_bytes(value)
    else:
        path.write_text(value, encoding="utf-8")
    return path


def describe(out: Outcome) -> str:
    return f"{' '.join(out.args)[:300]} -> exit {out.exit_code}: {problem(out)}"


__all__ = [
    "FILE_TARGETS",
    "NUMBER_TARGETS",
    "FileTarget",
    "NumberTarget",
    "Outcome",
    "describe",
    "file_contents",
    "invoke",
    "number_texts",
    "prepare",
    "problem",
    "write_input",
]
