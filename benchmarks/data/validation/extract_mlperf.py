"""Build `mlperf_throughput.csv` from MLPerf Training result logs (v3.0, v3.1, v4.1, v5.0 only).

MLPerf Training v4.0 is held out by the project's external reviewers and must not be read: this
script refuses a repository whose name says v4.0. Each argument is a local git directory of one
`mlcommons/training_results_vX.Y` repository (a bare clone is enough: files are read with
`git show`). For every submitted system and benchmark that maps to a zoo model
(`resnet` -> resnet50, `bert` -> bert-large-pretrain at seq 512, `llama2_70b_lora` -> llama2-70b
LoRA at seq 8192) it takes, per result file, the median of the logged `tracked_stats`
throughput values (the first one, which includes warm-up, is dropped), then the median over the
result files, and writes one CSV row in `gpurent estimate --from-csv` format.

    python benchmarks/data/validation/extract_mlperf.py REPO_DIR... > mlperf_throughput.csv

Nothing here is fitted; the rows validate a future `tuned` software stack (see README.md).
"""

from __future__ import annotations

import csv
import json
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

COLUMNS = (
    "model",
    "gpu",
    "num_gpus",
    "nodes",
    "precision",
    "batch_size",
    "seq_len",
    "activation_checkpointing",
    "sharding",
    "tp",
    "pp",
    "cp",
    "sp",
    "grad_accum",
    "task",
    "lora_rank",
    "stack",
    "measured_throughput",
    "measured_unit",
    "suite",
    "source_repo",
    "source_path",
    "source_commit",
    "note",
)

# MLPerf benchmark -> (zoo model, seq_len, unit, samples-to-unit factor, precision, task)
BENCHMARKS = {
    "resnet": ("resnet50", "", "images/s", 1, "amp", "training"),
    "bert": ("bert-large-pretrain", "512", "sequences/s", 1, "amp", "training"),
    "llama2_70b_lora": ("llama2-70b", "8192", "tokens/s", 8192, "fp8", "finetune-lora"),
}

# accelerator_model_name patterns (first match wins) -> gpurent catalog name; None = skip.
GPU_PATTERNS: tuple[tuple[str, str | None], ...] = (
    (r"GB200", "GB200"),
    (r"B200", "B200-180GB"),
    (r"GH200", "GH200-96GB"),
    (r"H200.*NVL", "H200-NVL-141GB"),
    (r"H200", "H200-SXM-141GB"),
    (r"H100 NVL", "H100-NVL-94GB"),
    (r"H100.*96GB", None),  # not in the catalog
    (r"H100.*PCI", "H100-PCIe-80GB"),
    (r"H100", "H100-SXM5-80GB"),
    (r"A100.*PCI.*80", "A100-PCIe-80GB"),
    (r"A100.*SXM.*80", "A100-SXM4-80GB"),
    (r"A100.*40", "A100-SXM4-40GB"),
    (r"MI300X", "MI300X"),
    (r"L40S", "L40S"),
    (r"L40", "L40"),
    (r"\bL4\b", "L4"),
    (r"A10G", "A10G"),
    (r"A40", "A40"),
    (r"RTX 4090", "RTX-4090"),
    (r"RTX A5000", "RTX-A5000"),
)


# Lambda's Hopper/Blackwell figures are held out (lambdal/deeplearning-benchmark); its MLPerf
# submissions are a different source, but they are left out too so that no Lambda B200 figure
# enters the validation set by another door.
EXCLUDED_SUBMITTERS = frozenset({"Lambda"})


@dataclass(frozen=True, slots=True)
class Repo:
    path: Path
    name: str  # training_results_vX.Y
    version: str  # X.Y
    commit: str


def git(repo: Path, *args: str, check: bool = True) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=check
    )
    return out.stdout


def open_repo(path: Path) -> Repo:
    url = git(path, "config", "--get", "remote.origin.url", check=False).strip() or str(path)
    m = re.search(r"training_results_v(\d+\.\d+)", url + " " + str(path))
    if not m:
        sys.exit(f"error: {path}: not a training_results_vX.Y repository")
    if m.group(1) == "4.0":
        sys.exit(f"error: {path}: MLPerf Training v4.0 is held out; it must not be read")
    commit = git(path, "rev-parse", "HEAD").strip()
    return Repo(
        path=path, name=f"training_results_v{m.group(1)}", version=m.group(1), commit=commit
    )


def gpu_name(accelerator: str) -> str | None:
    for pattern, name in GPU_PATTERNS:
        if re.search(pattern, accelerator):
            return name
    return None


def tracked_throughput(log: str) -> list[float]:
    values = []
    for line in log.splitlines():
        if '"tracked_stats"' not in line:
            continue
        rec = json.loads(line.split(":::MLLOG", 1)[1])
        v = rec.get("value", {})
        if isinstance(v, dict) and isinstance(v.get("throughput"), int | float):
            values.append(float(v["throughput"]))
    return values


def logged(log: str, key: str) -> float | None:
    for line in log.splitlines():
        if f'"key": "{key}"' in line:
            v = json.loads(line.split(":::MLLOG", 1)[1]).get("value")
            if isinstance(v, int | float):
                return float(v)
    return None


CONFIG_RE = re.compile(
    r"^([^/]+)/benchmarks?/([^/]+)/implementations/([^/]+)/(?:configs/)?config_([^/]*)\.sh$"
)
SHAPE_RE = re.compile(r"(\d+)x(\d+)x(\d+)(?:xtp\d+pp\d+cp\d+)?")
EXPORT_RE = re.compile(r"^\s*export\s+([A-Za-z0-9_]+)=(\S*)", re.M)
SOURCE_RE = re.compile(r"^\s*(?:source|\.)\s+(.*?\.sh)\b", re.M)
# keys of the NeMo configuration a run prints at its start ("Experiment configuration")
LOG_KEYS = {
    "tensor_model_parallel_size": "TP",
    "pipeline_model_parallel_size": "PP",
    "context_parallel_size": "CP",
    "micro_batch_size": "MBS",
    "sequence_parallel": "SP",
    "activations_checkpoint_granularity": "RECOMPUTE",
    "fp8_params": "FP8_PARAMS",
    "cpu_offloading": "CPU_OFFLOAD",
}
LOG_KEY_RE = re.compile(r"^(?:\d+: )?\s{2,4}([a-z0-9_]+): (\S+)\s*$")


@dataclass(frozen=True, slots=True)
class Config:
    """One submitter's config file of a benchmark: its path, the shape it runs (nodes, GPUs
    per node: `DGXNNODES`/`DGXNGPU`, else the `<N>x<G>` of its name) and its variables."""

    path: str
    shape: tuple[int, int | None] | None
    vars: dict[str, str]

    @property
    def token(self) -> str:
        """The system part of the file name, lower case (`config_<token>_<N>x<G>...`)."""
        name = self.path.rsplit("/", 1)[1].removeprefix("config_").removesuffix(".sh").lower()
        return SHAPE_RE.split(name)[0].rstrip("_")

    @property
    def layout(self) -> tuple[str, ...]:
        return tuple(self.vars.get(k, "") for k in ("TP", "PP", "CP", "MINIBS", "MBS"))


def configs_of(repo: Repo, files: list[str]) -> dict[tuple[str, str], list[Config]]:
    """(submitter, benchmark) -> its config files (not `config_common*`/`config_mounts`) of the
    benchmarks in LAYOUT_BENCHMARKS, each with the variables it and what it sources export."""
    fset = frozenset(files)
    out: dict[tuple[str, str], list[Config]] = {}
    for f in files:
        m = CONFIG_RE.match(f)
        if not m or m.group(2) not in LAYOUT_BENCHMARKS:
            continue
        name = m.group(4).lower()
        if "common" in name or "mounts" in name:
            continue
        vars_ = config_vars(repo, f, fset)
        nn, ng = _int(vars_, "DGXNNODES"), _int(vars_, "DGXNGPU")
        sm = SHAPE_RE.search(name)
        if nn:  # a file that sets DGXNNODES but not DGXNGPU runs that many nodes of any size
            shape: tuple[int, int | None] | None = (nn, ng)
        else:
            shape = (int(sm.group(1)), int(sm.group(2))) if sm else None
        out.setdefault((m.group(1), m.group(2)), []).append(Config(f, shape, vars_))
    return out


GPU_TOKENS = ("gb300", "gb200", "b300", "b200", "h200", "h100", "mi355x", "mi325x", "mi300x")


def layout_for(
    cands: list[Config],
    system: str,
    accelerator: str,
    nodes: int,
    per_node: int,
    ran: str | None = None,
) -> tuple[Config, str] | None:
    """The config file this system ran and how it was found, from the submitter's own files
    only, in this order: the one the log names (`ran`, the `DGXSYSTEM` of its `:::DLPAL`
    line); one in the implementation folder named like the system; one whose file name carries
    the system's name; the submitter's only layout of this shape. Within a step, several
    candidates are narrowed to those naming the system's GPU model (`config_DGXH200_...` for an
    H200); a step whose candidates still disagree on the layout gives nothing (None: no guess)."""
    fit = [c for c in cands if c.shape and c.shape[0] == nodes and c.shape[1] in (None, per_node)]
    sys_l = system.lower()
    acc = accelerator.lower().replace(" ", "")
    gpu_tok = next((t for t in GPU_TOKENS if t in acc), None)
    steps: list[tuple[str, list[Config]]] = [
        (
            "the config the log names",
            [c for c in fit if ran and c.path.endswith(f"/config_{ran}.sh")],
        ),
        (
            "the config in the system's implementation folder",
            [c for c in fit if c.path.split("/")[4] == system],
        ),
        ("the config named for the system", [c for c in fit if c.token and c.token in sys_l]),
        ("the submitter's only config of this shape", fit),
    ]
    for how, group in steps:
        if not group:
            continue
        if len({c.layout for c in group}) > 1 and gpu_tok is not None:
            group = [c for c in group if gpu_tok in c.token] or group
        if len({c.layout for c in group}) == 1:  # cite the system's own folder's copy first
            return min(group, key=lambda c: c.path.split("/")[4] != system), how
        return None
    return None


def _parse_exports(text: str) -> dict[str, str]:
    out = {}
    for key, raw in EXPORT_RE.findall(text):
        value = raw.strip("'\"")
        m = re.fullmatch(r"\$\{[A-Za-z0-9_]+:-([^}]*)\}", value)
        out[key] = m.group(1) if m else value
    return out


def config_vars(repo: Repo, path: str, files: frozenset[str]) -> dict[str, str]:
    """The variables a config file exports, over those of the `config_common*.sh` it sources
    (looked up beside it, in its `configs/` folder or one folder up)."""
    text = git(repo.path, "show", f"HEAD:{path}", check=False)
    out: dict[str, str] = {}
    folder = path.rsplit("/", 1)[0]
    for src in SOURCE_RE.findall(text):
        name = src.rsplit("/", 1)[-1]
        for cand in (
            f"{folder}/{name}",
            f"{folder}/configs/{name}",
            f"{folder.rsplit('/', 1)[0]}/{name}",
        ):
            if cand in files and cand != path:
                out.update(_parse_exports(git(repo.path, "show", f"HEAD:{cand}", check=False)))
                break
    out.update(_parse_exports(text))
    return out


def log_vars(log: str) -> dict[str, str]:
    """The layout keys of the NeMo configuration a run prints (`LOG_KEYS`), as config names."""
    out: dict[str, str] = {}
    for line in log.splitlines()[:4000]:
        m = LOG_KEY_RE.match(line)
        if m and m.group(1) in LOG_KEYS and LOG_KEYS[m.group(1)] not in out:
            out[LOG_KEYS[m.group(1)]] = m.group(2)
        if "optim:" in line:
            out.setdefault("_optim", "")
        elif "_optim" in out and not out["_optim"] and re.search(r"\bname: (\S+)", line):
            out["_optim"] = re.search(r"\bname: (\S+)", line).group(1)  # type: ignore[union-attr]
    return out


def dlpal_config(log: str) -> str | None:
    """The config the run sourced, from its `:::DLPAL ... <DGXSYSTEM>` line."""
    m = re.search(r"^:::DLPAL .* (\S+)\s*$", log, re.M)
    return m.group(1) if m else None


def name_vars(name: str) -> dict[str, str]:
    """TP, PP, CP from a config name `<system>_<N>x<G>x<MINIBS>xtp<T>pp<P>cp<C>`, for a run whose
    config file is not in the repository; the micro-batch only where MINIBS is 1 (it cannot be
    more than the batch per data-parallel rank), else nothing."""
    m = re.search(r"(\d+)x(\d+)x(\d+)xtp(\d+)pp(\d+)cp(\d+)$", name)
    if m is None or m.group(3) != "1":
        return {}
    return {"TP": m.group(4), "PP": m.group(5), "CP": m.group(6), "MBS": "1", "_name": name}


def _int(vars_: dict[str, str], key: str) -> int | None:
    v = vars_.get(key, "").strip().lower()
    if v in ("true", "false"):
        return int(v == "true")
    return int(v) if v.isdigit() else None


# benchmarks whose layout (TP, PP, CP, micro-batch) is read from the submission
LAYOUT_BENCHMARKS = frozenset({"llama2_70b_lora"})


def layout_of(
    picked: tuple[Config, str] | None,
    printed: dict[str, str],
    n: int,
    gbs: int,
) -> tuple[dict[str, str], int, str] | None:
    """(layout columns, micro-batch, note) from the configuration the run printed (`printed`,
    which wins: it is what ran) over the config file `cfg` it sourced; None when neither
    states TP and CP. The accumulation is global batch / (micro-batch x data-parallel ranks)."""
    vars_ = picked[0].vars if picked else {}
    merged = {**vars_, **{k: v for k, v in printed.items() if v not in ("null", "")}}
    t, c = _int(merged, "TP"), _int(merged, "CP")
    if t is None or c is None:
        return None
    p_ = _int(merged, "PP") or 1
    mbs = _int(merged, "MBS") or 1
    dp = max(1, n // (t * p_ * c))
    accum = max(1, gbs // (mbs * dp))
    sp = _int(merged, "SP")
    lay = {
        "tp": str(t),
        "pp": str(p_),
        "cp": str(c),
        "sp": "" if sp is None or t == 1 else ("true" if sp else "false"),
        "grad_accum": str(accum),
        # Megatron's distributed optimizer (ZeRO-1), where the run printed it
        "sharding": "zero1" if printed.get("_optim") == "mcore_distributed_optim" else "",
    }
    where = []
    if printed.get("_name"):
        where.append(f"the config name {printed['_name']} in the result log's :::DLPAL line")
    elif printed.get("TP"):
        where.append("the configuration printed in the result log")
    if picked:
        cfg, how = picked
        where.append(f"the config file {cfg.path} ({how}; with the files it sources)")
    extras = [f"{k}={merged[k]}" for k in ("MINIBS", "FP8_ACT", "FP8_DPA") if k in merged]
    note = (
        f"micro-batch {mbs}, TP {t} PP {p_} CP {c}"
        + (f" SP {merged['SP']}" if "SP" in merged else "")
        + f", gradient accumulation {accum} (global {gbs} / (micro-batch x {dp} data-parallel"
        " ranks))"
        + (f", {' '.join(extras)}" if extras else "")
        + (", activation recompute " + merged["RECOMPUTE"] if merged.get("RECOMPUTE") else "")
        + (", distributed optimizer" if lay["sharding"] else "")
        + f" from {' and '.join(where)}"
    )
    return lay, mbs, note


def rows_for(repo: Repo) -> list[dict[str, str]]:
    files = git(repo.path, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    pat = re.compile(r"^([^/]+)/results/([^/]+)/([^/]+)/result_\d+\.txt$")
    groups: dict[tuple[str, str, str], list[str]] = {}
    for f in files:
        m = pat.match(f)
        if m and m.group(3) in BENCHMARKS and m.group(1) not in EXCLUDED_SUBMITTERS:
            groups.setdefault((m.group(1), m.group(2), m.group(3)), []).append(f)
    configs = configs_of(repo, files)
    out = []
    for (org, system, bench), paths in sorted(groups.items()):
        try:
            sysinfo = json.loads(git(repo.path, "show", f"HEAD:{org}/systems/{system}.json"))
        except (subprocess.CalledProcessError, json.JSONDecodeError):
            continue
        gpu = gpu_name(str(sysinfo.get("accelerator_model_name", "")))
        if gpu is None:
            continue
        try:
            nodes = int(str(sysinfo["number_of_nodes"]).strip())
            per_node = int(str(sysinfo["accelerators_per_node"]).strip())
        except (KeyError, ValueError):
            continue
        n = nodes * per_node
        medians, local_batches, global_batches = [], set(), set()
        ran: set[str] = set()
        printed: dict[str, str] = {}
        for p in sorted(paths):
            log = git(repo.path, "show", f"HEAD:{p}", check=False)  # "" if not in the snapshot
            tp = tracked_throughput(log)
            if len(tp) >= 2:
                medians.append(statistics.median(tp[1:]))
            elif tp:
                medians.append(tp[0])
            gb = logged(log, "global_batch_size")
            lb = logged(log, "d_batch_size")
            if gb:
                global_batches.add(int(gb))
            if lb:
                local_batches.add(int(lb))
            if bench in LAYOUT_BENCHMARKS:
                if (cfg_name := dlpal_config(log)) is not None:
                    ran.add(cfg_name)
                printed = printed or log_vars(log)
        if not medians or len(global_batches) != 1:
            continue
        gbs = global_batches.pop()
        if len(local_batches) == 1:
            local = local_batches.pop()
            batch_note = f"local batch {local} as logged (d_batch_size), global {gbs}"
        else:
            local = max(1, gbs // n)
            batch_note = f"local batch = global {gbs} / {n} GPUs"
        model, seq, unit, factor, precision, task = BENCHMARKS[bench]
        lay = {"tp": "", "pp": "", "cp": "", "sp": "", "grad_accum": "", "sharding": ""}
        if bench in LAYOUT_BENCHMARKS:
            named = next(iter(ran)) if len(ran) == 1 else None
            picked = layout_for(
                configs.get((org, bench), []),
                system,
                str(sysinfo.get("accelerator_model_name", "")),
                nodes,
                per_node,
                named,
            )
            cfg = picked[0].path if picked else None
            if cfg is None and not printed.get("TP") and named is not None:
                printed = {**printed, **name_vars(named)}  # the config's name; no file of it
            found = layout_of(picked, printed, n, gbs)
            if found is not None:
                lay, local, batch_note = found
        value = statistics.median(medians) * factor
        conv = f" x {factor} tokens per sample" if factor != 1 else ""
        out.append(
            {
                "model": model,
                "gpu": gpu,
                "num_gpus": str(n),
                "nodes": str(nodes),
                "precision": precision,
                "batch_size": str(local),
                "seq_len": seq,
                "activation_checkpointing": "",
                "sharding": lay["sharding"],
                "tp": lay["tp"],
                "pp": lay["pp"],
                "cp": lay["cp"],
                "sp": lay["sp"],
                "grad_accum": lay["grad_accum"],
                "task": task,
                "lora_rank": "16" if task == "finetune-lora" else "",
                "stack": "tuned",
                "measured_throughput": f"{value:.1f}",
                "measured_unit": unit,
                "suite": f"mlperf-v{repo.version}",
                "source_repo": f"mlcommons/{repo.name}",
                "source_path": f"{org}/results/{system}/{bench}/",
                "source_commit": repo.commit,
                "note": (
                    f"median over {len(medians)} result files of the median tracked_stats "
                    f"throughput (first value dropped){conv}; {nodes} x {per_node} "
                    f"{sysinfo.get('accelerator_model_name')}; {batch_note}; "
                    f"framework {sysinfo.get('framework', '?')}"
                ),
            }
        )
    return out


def main(argv: list[str]) -> int:
    if not argv:
        sys.exit(__doc__)
    w = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
    w.writeheader()
    seen: set[tuple[str, ...]] = set()
    for arg in argv:
        for row in rows_for(open_repo(Path(arg))):
            # A later round's repository re-ships some earlier logs unchanged: keep the first.
            key = tuple(row[c] for c in ("model", "gpu", "num_gpus", "measured_throughput"))
            if key not in seen:
                seen.add(key)
                w.writerow(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
