"""MLPerf Training v5.1 Llama 3.1 8B pretraining rows on Blackwell and AMD GPUs.

The rows of the `tuned` stack's training split (`../mlperf_llm_pretrain_fit.csv`) that
`extract_fp8_mlperf.py --blackwell-amd-8b` adds from a v5.1 repository: `llama31_8b` on B200,
B300, GB200, GB300 and MI355X (Lambda's submissions and the Hopper ones, which are
validation rows of `fp8_moe.csv`, are left out). Each run's precision is established from
evidence, in this order, else the run is left out:

1. the NeMo configuration its logs print (`fp4: true` with `fp4_recipe: nvfp4` -> nvfp4;
   `fp8: true` -> fp8, or mxfp8 when `fp8_recipe: mxfp8`), the same in every result file;
2. the config file the log names (`:::DLPAL ... <config name>`), its sourced files read;
3. a config file named after the system, of its node count;
4. every 8B config file of the system's node count whose batch gives the logged global batch,
   if they agree (with the GPU of AMD's configs in their name);
   for AMD's implementation the precision is that of its `src/train.py` (FP8 "hybrid", hard
   coded; no FP4 path).

The layout is the one the log prints when it does (TP, PP, CP, micro-batch, distributed
optimizer), else that of the config file that gave the precision.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import extract_fp8_mlperf as base

BENCH = "llama31_8b"
GPUS = (
    (r"GB300", "GB300"),
    (r"GB200", "GB200"),
    (r"B300", "B300-288GB"),
    (r"B200", "B200-180GB"),
    (r"MI355X", "MI355X"),
)
LEFT_OUT_GPUS = ((r"MI350X", "MI350X is not in gpurent's GPU catalog"),)
HOPPER = re.compile(r"H100|H200")
PRINTED_KEYS = (
    "fp4",
    "fp4_recipe",
    "fp8",
    "fp8_recipe",
    "fp8_dot_product_attention",
    "activations_checkpoint_granularity",
    "virtual_pipeline_model_parallel_size",
)
PRINTED_RE = re.compile(r"^\s*\d+:\s+(" + "|".join(PRINTED_KEYS) + r"): (\S+)\s*$", re.M)
RECOMPUTE_RE = re.compile(r"recompute_granularity=([^,\s]+),")
DLPAL_RE = re.compile(r"^:::DLPAL \S+ \d+ \d+ \S+ \S+ ([\w.+-]+)'?\s*$", re.M)
SOURCE_RE = re.compile(r"^source \$\(dirname \$\{BASH_SOURCE\[0\]\}\)/(\S+\.sh)\s*$", re.M)
EXPORT_RE = re.compile(r"^export (\w+)=(\S*)", re.M)
NAME_NxG = re.compile(r"config_(.+?)_(\d+)x(\d+)x(\d+)")


def printed_config(log: str) -> dict[str, str]:
    """The NeMo model configuration keys a run prints (first of each), lower-cased."""
    out: dict[str, str] = {}
    for key, value in PRINTED_RE.findall(log[:2_000_000]):
        out.setdefault(key, value.lower())
    if (m := RECOMPUTE_RE.search(log[:2_000_000])) is not None:
        out["recompute_granularity"] = m.group(1)
    return out


def precision_printed(cfg: dict[str, str]) -> str | None:
    if cfg.get("fp4") == "true":
        return "nvfp4" if cfg.get("fp4_recipe") == "nvfp4" else None
    if cfg.get("fp8") == "true":
        return "mxfp8" if cfg.get("fp8_recipe") == "mxfp8" else "fp8"
    return None


def config_env(repo: Path, files: list[str], path: str, depth: int = 0) -> dict[str, str]:
    """The exports of a config file, its `source`d sibling files read in place (last wins).
    A sourced file missing from the config's folder is read from the submitter's only file
    of that name in this benchmark (University of Florida's `hpg.dgxb200x8` configs source
    the `config_common*.sh` of its `b200_nemo` folder)."""
    text = base.git(repo, "show", f"HEAD:{path}")
    env: dict[str, str] = {}
    folder = path.rsplit("/", 1)[0]
    bench = path.split(f"/{BENCH}/", 1)[0] + f"/{BENCH}/"
    pos = 0
    for m in SOURCE_RE.finditer(text):
        env.update(_exports(text[pos : m.start()]))
        sourced = f"{folder}/{m.group(1)}"
        if sourced not in files:
            same = [f for f in files if f.startswith(bench) and f.endswith(f"/{m.group(1)}")]
            sourced = same[0] if len(same) == 1 else sourced
        if depth < 3 and sourced in files:
            env.update(config_env(repo, files, sourced, depth + 1))
        pos = m.end()
    env.update(_exports(text[pos:]))
    return env


def _exports(text: str) -> dict[str, str]:
    return {k: v.strip("\"'") for k, v in EXPORT_RE.findall(text)}


def amd_train(repo: Path, path: str, env: dict[str, str]) -> str | None:
    """The `src/train.py` beside an AMD-implementation config (which exports GBS and MBS)."""
    if "GBS" not in env or "MBS" not in env:
        return None
    return base.git(repo, "show", f"HEAD:{path.rsplit('/', 1)[0]}/src/train.py")


def precision_of_config(repo: Path, path: str, env: dict[str, str]) -> str | None:
    if (train := amd_train(repo, path, env)) is not None:  # AMD: the precision is in train.py
        hybrid = 'model_config.fp8 = "hybrid"' in train
        return "fp8" if hybrid and "fp4" not in train.lower() else None
    if env.get("FP4", "").lower() in ("true", "1"):
        return "nvfp4" if env.get("FP4_RECIPE", "") == "nvfp4" else None
    if env.get("FP8", "").lower() in ("true", "1"):
        return "mxfp8" if env.get("FP8_RECIPE", "") == "mxfp8" else "fp8"
    return None


def _int(env: dict[str, str], *keys: str, default: int = 0) -> int:
    for k in keys:
        if env.get(k, "").isdigit():
            return int(env[k])
    return default


def config_layout(env: dict[str, str], n: int) -> tuple[int, int, int, int, int, bool, int]:
    """(tp, pp, cp, micro-batch, global batch, distributed optimizer, vp) of a config."""
    tp = _int(env, "TENSOR_MODEL_PARALLEL", "TP", default=1)
    pp = _int(env, "PIPELINE_MODEL_PARALLEL", "PP", default=1)
    cp = _int(env, "CONTEXT_PARALLEL", "CP", default=1)
    mbs = _int(env, "MICRO_BATCH_SIZE", "MBS", default=1)
    dp = max(1, n // (tp * pp * cp))
    gbs = _int(env, "GBS") or _int(env, "MINIBS") * dp
    dist = env.get("USE_DIST_OPTIMIZER", "").lower() in ("true", "1")
    vp = _int(env, "INTERLEAVED_PIPELINE")
    return tp, pp, cp, mbs, gbs, dist, vp


def candidates(
    repo: Path, files: list[str], org: str, acc: str, nodes: int, per_node: int, gbs: int
) -> list[tuple[str, dict[str, str]]]:
    """The 8B config files of the submitter with this node count and global batch."""
    out = []
    prefix = f"{org}/benchmarks/{BENCH}/"
    for f in files:
        name = f.rsplit("/", 1)[-1]
        if not (f.startswith(prefix) and name.startswith("config_") and name.endswith(".sh")):
            continue
        if "common" in name or "mounts" in name:
            continue
        env = config_env(repo, files, f)
        if env.get("MODEL_SIZE", env.get("SIZE", "")) != "8b":
            continue
        if _int(env, "DGXNNODES", "NNODES") != nodes or _int(env, "DGXNGPU", "GPUS_PER_NODE") != (
            per_node
        ):
            continue
        amd_tag = re.match(r"config_(MI3\d\dX)_", name)
        if (amd_tag is None) == ("AMD" in acc) or (amd_tag and amd_tag.group(1) not in acc):
            continue
        if config_layout(env, nodes * per_node)[4] != gbs:
            continue
        out.append((f, env))
    return out


def pick_config(
    repo: Path,
    cands: list[tuple[str, dict[str, str]]],
    system: str,
    named: set[str],
) -> tuple[tuple[str, dict[str, str]] | None, str | None, str]:
    """The config whose precision the run had: (config, precision, how) by the tiers above."""
    token = re.split(r"-\d+x|_", system)[0]
    tiers = (
        ("the config the log names", [c for c in cands if _stem(c[0]) in named]),
        (
            f"the config named after the system ({token})",
            [c for c in cands if token in _stem(c[0]).split("_")],
        ),
        ("every 8B config of this node count and global batch", cands),
    )
    for how, tier in tiers:
        if not tier:
            continue
        precs = {precision_of_config(repo, f, env) for f, env in tier}
        names = ", ".join(sorted(f.split(f"/{BENCH}/", 1)[1] for f, _ in tier))
        if len(precs) == 1 and None not in precs:
            return tier[0], precs.pop(), f"{how}: {names}"
        return None, None, f"{how} disagree or name no precision: {names}"
    return None, None, "no 8B config of this node count and global batch"


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removeprefix("config_").removesuffix(".sh")


def rows(repo: Path) -> tuple[list[dict[str, object]], list[str]]:
    """The v5.1 llama31_8b Blackwell/AMD rows of one repository, and the runs left out."""
    commit = base.git(repo, "rev-parse", "HEAD").strip()
    files = base.git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    pat = re.compile(rf"^([^/]+)/results/([^/]+)/{BENCH}/result_\d+\.txt$")
    groups: dict[tuple[str, str], list[str]] = {}
    for f in files:
        m = pat.match(f)
        if m and m.group(1) not in base.EXCLUDED_SUBMITTERS:
            groups.setdefault((m.group(1), m.group(2)), []).append(f)
    out: list[dict[str, object]] = []
    left: list[str] = []
    for (org, system), paths in sorted(groups.items()):
        try:
            info = json.loads(base.git(repo, "show", f"HEAD:{org}/systems/{system}.json"))
        except json.JSONDecodeError:
            left.append(f"{org}/{system}: no readable systems/{system}.json")
            continue
        acc = str(info.get("accelerator_model_name", ""))
        if HOPPER.search(acc):
            continue  # validation rows of fp8_moe.csv
        why_not = next((w for p, w in LEFT_OUT_GPUS if re.search(p, acc)), None)
        gpu = next((g for p, g in GPUS if re.search(p, acc)), None)
        if gpu is None:
            left.append(f"{org}/{system} ({acc}): {why_not or 'GPU not read'}")
            continue
        row, why = one_row(repo, files, commit, org, system, paths, info, gpu)
        if row is None:
            left.append(f"{org}/{system} ({acc}): {why}")
        else:
            out.append(row)
    return out, left


def one_row(
    repo: Path,
    files: list[str],
    commit: str,
    org: str,
    system: str,
    paths: list[str],
    info: dict[str, object],
    gpu: str,
) -> tuple[dict[str, object] | None, str]:
    acc = str(info.get("accelerator_model_name", ""))
    nodes = int(str(info["number_of_nodes"]).strip())
    per_node = int(str(info["accelerators_per_node"]).strip())
    n = nodes * per_node
    steps: list[float] = []
    rates: list[float] = []
    gbs_seen: set[int] = set()
    seq_seen: set[int] = set()
    printed_prec: list[str | None] = []
    named: set[str] = set()
    megatron: dict[str, str] = {}
    printed: dict[str, str] = {}
    for p in sorted(paths):
        log = base.git(repo, "show", f"HEAD:{p}")
        first = re.search(r'"time_ms": (\d+)', log)
        if first and int(first.group(1)) < base.PREVIOUS_ROUND_PUBLISHED_MS["5.1"]:
            continue  # a v5.0 log shipped again
        cfg = printed_config(log)
        printed = printed or cfg
        printed_prec.append(precision_printed(cfg))
        named.update(DLPAL_RE.findall(log))
        megatron = megatron or base.megatron_layout(log)
        st = base.values(log, "train_step_time")
        if len(st) >= 3:
            steps.append(statistics.median(st[1:]))
        tput = base.values(log, "throughput")  # samples/s (AMD's implementation logs this)
        if len(tput) >= 3:
            rates.append(statistics.median(tput[1:]))
        gbs_seen.update(int(x) for x in base.values(log, "global_batch_size"))
        seq_seen.update(int(x) for x in base.values(log, "max_sequence_length"))
    if (not steps and not rates) or len(gbs_seen) != 1 or len(seq_seen) != 1:
        return None, "no step time, or not one global batch and sequence length"
    gbs, seq = gbs_seen.pop(), seq_seen.pop()
    cands = candidates(repo, files, org, acc, nodes, per_node, gbs)
    picked, cfg_prec, cfg_how = pick_config(repo, cands, system, named)
    if printed_prec and None not in printed_prec and len(set(printed_prec)) == 1:
        precision: str | None = printed_prec[0]
        prec_how = (
            f"{precision}: every result file prints fp4: {printed.get('fp4')}, fp4_recipe: "
            f"{printed.get('fp4_recipe')}, fp8: {printed.get('fp8')}, fp8_recipe: "
            f"{printed.get('fp8_recipe')}"
        )
    else:
        precision = cfg_prec
        prec_how = f"{precision}: the logs print no precision; {cfg_how}"
        if precision is None:
            return None, f"precision not established ({cfg_how})"
    if steps:
        step = statistics.median(steps)
        how = (
            f"step time {step:.4f} s = median over {len(steps)} result files of the median "
            f"train_step_time (first dropped); tokens/s = global batch {gbs} x seq {seq} / step"
        )
    else:
        rate = statistics.median(rates)
        step = gbs / rate
        how = (
            f"{rate:.4f} samples/s = median over {len(rates)} result files of the median "
            f"tracked_stats throughput (first dropped); tokens/s = that x seq {seq}"
        )
    if {"tensor_model_parallel_size", "context_parallel_size"} <= megatron.keys():
        tp = int(megatron["tensor_model_parallel_size"])
        pp = int(megatron.get("pipeline_model_parallel_size", "1"))
        cp = int(megatron["context_parallel_size"])
        mbs = int(megatron.get("micro_batch_size", "1"))
        dist = megatron.get("use_distributed_optimizer") == "true"
        vp_s = printed.get("virtual_pipeline_model_parallel_size", "null")
        vp = int(vp_s) if vp_s.isdigit() else 0
        lay_how = "layout and distributed optimizer as the log prints them"
    elif picked is not None:
        tp, pp, cp, mbs, _, dist, vp = config_layout(picked[1], n)
        lay_how = f"layout from {picked[0].split(f'/{BENCH}/', 1)[1]}"
        if (train := amd_train(repo, picked[0], picked[1])) is not None:
            dist = "use_distributed_optimizer=True" in train
            lay_how += " (distributed optimizer: its src/train.py)"
    else:
        return None, f"no layout: the log prints none and {cfg_how}"
    if vp:
        return None, f"virtual pipeline {vp}: not read into this file's columns"
    dp = max(1, n // (tp * pp * cp))
    accum = max(1, gbs // (mbs * dp))
    recompute = (
        f"activations_checkpoint_granularity: {printed['activations_checkpoint_granularity']}, "
        f"recompute_granularity={printed.get('recompute_granularity', '?')} (no recompute)"
        if "activations_checkpoint_granularity" in printed
        else "the implementation sets no recompute"
    )
    tokens = gbs * seq / step
    shard = "zero1 (distributed optimizer)" if dist else "none"
    note = (
        f"MLPerf v5.1 {BENCH}; {nodes} x {per_node} {acc}; {how}; precision {prec_how}; "
        f"{lay_how}: TP {tp} PP {pp} CP {cp} (DP {dp}), micro-batch {mbs} x accumulation "
        f"{accum}, virtual pipeline none; sharding {shard}"
        f"; {recompute}; fp8 attention: {printed.get('fp8_dot_product_attention', 'not printed')}"
        f"; framework {info.get('framework', '?')}"
    )
    row: dict[str, object] = {
        "model": "llama3-8b",
        "gpu": gpu,
        "num_gpus": n,
        "nodes": nodes,
        "precision": precision,
        "batch_size": mbs,
        "seq_len": seq,
        "tp": tp,
        "pp": pp,
        "cp": cp,
        "ep": "",
        "sharding": "zero1" if dist else "",
        "grad_accum": accum,
        "task": "training",
        "lora_rank": "",
        "stack": "tuned",
        "validates": precision,
        "measured_throughput": f"{tokens:.0f}",
        "measured_unit": "tokens/s",
        "suite": "mlperf-v5.1",
        "source_repo": "mlcommons/training_results_v5.1",
        "source_path": f"{org}/results/{system}/{BENCH}/",
        "source_commit": commit,
        "note": note,
    }
    return row, ""
