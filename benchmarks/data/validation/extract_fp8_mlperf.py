"""fp8 rows of `fp8_moe.csv` from MLPerf Training v4.1 and v5.1 result logs.

v4.1 (mlcommons/training_results_v4.1): GPT-3 175B pretraining (`gpt3`, seq 2048) on every
NVIDIA GPU; FP8 by the submissions' own `config_fp8.sh` (and no FP4 recipe existed before
v5.1). The logs give `train_step_timing in s`; layouts come from the config file name
`config_<system>_<N>x<G>x<MINIBS>x<TP>x<PP>_mbs<M>[...].sh`, the gradient accumulation from the
logged `gradient_accumulation_steps`. GPT-3 is given as a custom shape (96 layers, hidden 12288,
96 heads, vocab 50257; Brown et al. 2020, Table 2.1).

v5.1: MLPerf Training v5.1 (mlcommons/training_results_v5.1) logs `tracked_stats` with a
`train_step_time` (seconds per optimizer step of `global_batch_size` sequences of
`max_sequence_length` tokens) for its LLM benchmarks. This script turns the Hopper (H100/H200)
submissions of `llama31_8b` (pretraining), `llama31_405b` (pretraining) and `llama2_70b_lora`
into rows: tokens/s = global batch x sequence length / step time, with the step time the median
over result files of the median logged value (the first value of a file, which includes
warm-up, dropped). Only Hopper rows are kept because on Hopper the low precision of NVIDIA's
NeMo and the submitters' derived recipes can only be FP8 (no FP4 tensor cores), while v5.1
Blackwell submissions mix FP8 and NVFP4 recipes that the logs do not name.

Layouts come from the submitter's config file name `config_<system>_<N>x<G>x<B>xtp<T>pp<P>
cp<C>[...].sh` when exactly one matches the system's node count (B: sequences per data-parallel
rank per step; with PP > 1 the micro-batch is read as 1 and B as the gradient accumulation).
The tuned stack is fitted on v3.0, v3.1 and v5.0 only, so the rows are out of sample for
`--stack tuned`.

    python benchmarks/data/validation/extract_fp8_mlperf.py V41_GIT_DIR V51_GIT_DIR > rows.csv

With `--blackwell-amd-8b` a v5.1 repository gives instead its `llama31_8b` rows on Blackwell
(B200, B300, GB200, GB300) and AMD (MI355X) GPUs, for the tuned stack's training split, each
run's precision (fp8 or nvfp4) established from its logs or configs (mlperf_8b_rows.py):

    python benchmarks/data/validation/extract_fp8_mlperf.py V30 V31 V50 V51 --blackwell-amd-8b \
        > benchmarks/data/mlperf_llm_pretrain_fit.csv

With `--v60-moe` each argument is instead a local copy of one MLPerf Training v6.0 submitter's
tree (Richardyu114/training_results_v6.0 cannot be fetched as a git directory) and gives its
gpt_oss_20b rows for the MoE training split (mlperf_moe_rows.py; NVIDIA, CoreWeave and Lambda
refused):

    python benchmarks/data/validation/extract_fp8_mlperf.py --v60-moe DIR/Supermicro ...

MLPerf Training v4.0 is held out and refused (as in extract_mlperf.py); a log older than the
publication of the round before (v4.0: 2024-06-12; v5.0: 2025-06-04) is dropped as a re-run
of that round's submission (for v4.1 that keeps every v4.0 figure out).
"""

from __future__ import annotations

import csv
import json
import re
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import extract_mlperf as lora_layouts

COLUMNS = [
    "model",
    "gpu",
    "num_gpus",
    "nodes",
    "precision",
    "batch_size",
    "seq_len",
    "tp",
    "pp",
    "cp",
    "ep",
    "sharding",
    "vp",
    "recompute",
    "grad_accum",
    "task",
    "lora_rank",
    "stack",
    "validates",
    "measured_throughput",
    "measured_unit",
    "suite",
    "source_repo",
    "source_path",
    "source_commit",
    "note",
]
GPT3_175B = "custom:layers=96,hidden=12288,heads=96,vocab=50257"
BENCHMARKS = {  # round -> MLPerf name -> (zoo model, task)
    "5.1": {
        "llama31_8b": ("llama3-8b", "training"),
        "llama31_405b": ("llama3.1-405b", "training"),
        "llama2_70b_lora": ("llama2-70b", "finetune-lora"),
    },
    "4.1": {"gpt3": (GPT3_175B, "training")},
    # the tuned stack's training split (benchmarks/data/mlperf_llm_pretrain_fit.csv)
    "3.0": {"gpt3": (GPT3_175B, "training")},
    "3.1": {"gpt3": (GPT3_175B, "training")},
    "5.0": {"llama31_405b": ("llama3.1-405b", "training")},
}
FP8_WHY = {
    "5.1": "Hopper has no lower training precision",
    "5.0": "no FP4 training recipe before v5.1; NeMo's Llama 3.1 405B recipe is FP8",
    "4.1": "the implementation sources config_fp8.sh",
    "3.1": "NeMo's GPT-3 recipe is FP8 (TransformerEngine) on H100",
    "3.0": "NeMo's GPT-3 recipe is FP8 (TransformerEngine) on H100",
}
# before v5.1 no FP4 training recipe existed: Blackwell rows are FP8 too
BLACKWELL_FP8 = ((r"GB200", "GB200"), (r"B200", "B200-180GB"))
HOPPER = (
    (r"H200.*NVL", "H200-NVL-141GB"),
    (r"H200", "H200-SXM-141GB"),
    (r"H100", "H100-SXM5-80GB"),
)
CONFIG_41 = re.compile(r"config_[^/]*?(\d+)x(\d+)x(\d+)x(\d+)x(\d+)_mbs(\d+)[^/]*\.sh$")
CONFIG_RE = re.compile(r"config_[^/]*?(\d+)x(\d+)x(\d+)xtp(\d+)pp(\d+)cp(\d+)[^/]*\.sh$")
# 2025-06-04, when MLPerf Training v5.0 was published: a v5.1 log older than this is a re-run
# of a v5.0 (fitted) submission, so it is left out.
PREVIOUS_ROUND_PUBLISHED_MS = {
    "5.1": 1_749_000_000_000,  # v5.0, 2025-06-04
    "5.0": 1_731_456_000_000,  # v4.1, 2024-11-13
    "4.1": 1_718_150_400_000,  # v4.0 (held out), 2024-06-12
    "3.1": 1_687_824_000_000,  # v3.0, 2023-06-27
    "3.0": 1_667_952_000_000,  # v2.1, 2022-11-09
}
EXCLUDED_SUBMITTERS = frozenset({"Lambda"})  # Lambda's Hopper/Blackwell rows are held out


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    return out.stdout


DIST_OPT = re.compile(r"USE_DIST_OPTIMIZER=(True|1)\b")


# A NeMo run that names its distributed optimizer (optimizer states sharded over data
# parallel): Apex's `distributed_fused_adam` as a Hydra override, or Megatron's in the config.
LOGGED_DIST_OPT = re.compile(
    r"(?:optim@model\.optim=|^\S*\s+name: )(distributed_fused_adam|mcore_distributed_optim)\b",
    re.M,
)


MEGATRON_KEYS = (
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "context_parallel_size",
    "micro_batch_size",
    "use_distributed_optimizer",
)
MEGATRON_RE = re.compile(r"^\s*\d+:\s+(" + "|".join(MEGATRON_KEYS) + r"): (\S+)\s*$", re.M)


def megatron_layout(log: str) -> dict[str, str]:
    """The layout keys of the Megatron/NeMo configuration a run prints (first of each)."""
    out: dict[str, str] = {}
    for key, value in MEGATRON_RE.findall(log[:2_000_000]):
        out.setdefault(key, value.lower())
    return out


def dist_optimizer(repo: Path, files: list[str], org: str, bench: str) -> tuple[str, str]:
    """`zero1` when the submitter's own implementation turns on Megatron's distributed
    optimizer (optimizer states sharded over data parallel) in a `config_common*.sh`."""
    prefix = f"{org}/benchmarks/{bench}/implementations/"
    for f in files:
        name = f.rsplit("/", 1)[-1]
        wanted = f.startswith(prefix) and name.startswith("config_common") and name.endswith(".sh")
        if wanted and DIST_OPT.search(git(repo, "show", f"HEAD:{f}")):
            return "zero1", f"sharding zero1: USE_DIST_OPTIMIZER=True in {f}"
    return "", "sharding not stated in the submitter's config_common*.sh: left empty"


_LORA_CONFIGS: dict[tuple[str, str], dict[tuple[str, str], list[lora_layouts.Config]]] = {}


def lora_rows_layout(
    repo: Path,
    version: str,
    files: list[str],
    org: str,
    system: str,
    accelerator: str,
    nodes: int,
    per_node: int,
) -> Callable[[set[str], dict[str, str], int], tuple[dict[str, str], int, str] | None]:
    """The Llama 2 70B LoRA layout reader of extract_mlperf.py for one system: a function of
    the config names its logs give, the configuration they print and the global batch."""
    commit = git(repo, "rev-parse", "HEAD").strip()
    r = lora_layouts.Repo(
        path=repo, name=f"training_results_v{version}", version=version, commit=commit
    )
    key = (str(repo), commit)
    if key not in _LORA_CONFIGS:
        _LORA_CONFIGS[key] = lora_layouts.configs_of(r, files)
    cands = _LORA_CONFIGS[key].get((org, "llama2_70b_lora"), [])

    def read(
        ran: set[str], printed: dict[str, str], gbs: int
    ) -> tuple[dict[str, str], int, str] | None:
        named = next(iter(ran)) if len(ran) == 1 else None
        picked = lora_layouts.layout_for(cands, system, accelerator, nodes, per_node, named)
        if picked is None and not printed.get("TP") and named is not None:
            printed = {**printed, **lora_layouts.name_vars(named)}
        return lora_layouts.layout_of(picked, printed, nodes * per_node, gbs)

    return read


INTERLEAVED = re.compile(r"^\s*export\s+INTERLEAVED_PIPELINE=(\d+)", re.M)
SOURCED = re.compile(r"^\s*source\s+\$\(dirname \$\{BASH_SOURCE\[0\]\}\)/(\S+\.sh)", re.M)
YAML_VP = re.compile(
    r"virtual_pipeline_model_parallel_size:\s*\$\{oc\.decode:\$\{oc\.env:INTERLEAVED_PIPELINE,(\d+)\}\}"
)


def interleaved_stages(repo: Path, config: str) -> tuple[int, str]:
    """Virtual pipeline stages of a run whose layout came from `config` (a path in the repo):
    `INTERLEAVED_PIPELINE` as the config file or a file it sources sets it, else the default
    of the implementation's `conf/custom.yaml` (`virtual_pipeline_model_parallel_size:
    ${oc.decode:${oc.env:INTERLEAVED_PIPELINE,N}}`), else 1. With the file that said it."""
    folder = config.rsplit("/", 1)[0]
    queue, seen = [config], set()
    while queue:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        text = git(repo, "show", f"HEAD:{path}")
        if (m := INTERLEAVED.search(text)) is not None:
            return int(m.group(1)), f"INTERLEAVED_PIPELINE={m.group(1)} in {path}"
        queue += [f"{folder}/{name}" for name in SOURCED.findall(text)]
    yaml = f"{folder}/conf/custom.yaml"
    if (m := YAML_VP.search(git(repo, "show", f"HEAD:{yaml}"))) is not None:
        return int(
            m.group(1)
        ), f"virtual_pipeline_model_parallel_size default {m.group(1)} in {yaml}"
    return 1, f"no INTERLEAVED_PIPELINE in {config}, the files it sources or {yaml}"


def values(log: str, key: str) -> list[float]:
    out = []
    for line in log.splitlines():
        if ":::MLLOG" not in line or f'"{key}"' not in line:
            continue
        rec = json.loads(line.split(":::MLLOG", 1)[1])
        v = rec.get("value")
        if rec.get("key") == key and isinstance(v, int | float):
            out.append(float(v))
        elif isinstance(v, dict) and isinstance(v.get(key), int | float):
            out.append(float(v[key]))
    return out


def main(argv: list[str]) -> int:
    blackwell_amd_8b = "--blackwell-amd-8b" in argv
    v60_moe = "--v60-moe" in argv
    repos = [a for a in argv if a not in ("--blackwell-amd-8b", "--v60-moe")]
    if not repos or any(a.startswith("-") for a in repos):
        sys.exit(__doc__)
    w = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n", restval="")
    w.writeheader()
    for arg in repos:
        repo = Path(arg)
        if v60_moe:
            import mlperf_moe_rows  # the MoE training split's v6.0 rows (its docstring)

            rows, left_out = mlperf_moe_rows.rows(repo)
            for why in left_out:
                print(f"left out: {why}", file=sys.stderr)
        elif blackwell_amd_8b and "training_results_v5.1" in (
            git(repo, "config", "--get", "remote.origin.url") + " " + str(repo)
        ):
            import mlperf_8b_rows  # the training split's v5.1 Llama 3.1 8B rows (its docstring)

            rows, left_out = mlperf_8b_rows.rows(repo)
            for why in left_out:
                print(f"left out: {why}", file=sys.stderr)
        else:
            rows = rows_for(repo)
        for row in rows:
            w.writerow(row)
    return 0


def rows_for(repo: Path) -> list[dict[str, object]]:
    """The fp8 rows of one results repository (v4.1 or v5.1)."""
    name = git(repo, "config", "--get", "remote.origin.url") + " " + str(repo)
    m_round = re.search(r"training_results_v(\d+\.\d+)", name)
    if m_round is None:
        sys.exit(f"error: {repo}: not a training_results_vX.Y repository")
    version = m_round.group(1)
    if version == "4.0":
        sys.exit(f"error: {repo}: MLPerf Training v4.0 is held out; it must not be read")
    if version not in BENCHMARKS:
        sys.exit(f"error: {repo}: only v3.0, v3.1, v4.1, v5.0 and v5.1 are read")
    benchmarks = BENCHMARKS[version]
    gpus = HOPPER + (BLACKWELL_FP8 if version != "5.1" else ())
    out: list[dict[str, object]] = []
    commit = git(repo, "rev-parse", "HEAD").strip()
    files = git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    pat = re.compile(r"^([^/]+)/results/([^/]+)/([^/]+)/result_\d+\.txt$")
    groups: dict[tuple[str, str, str], list[str]] = {}
    for f in files:
        m = pat.match(f)
        if m and m.group(3) in benchmarks and m.group(1) not in EXCLUDED_SUBMITTERS:
            groups.setdefault((m.group(1), m.group(2), m.group(3)), []).append(f)
    for (org, system, bench), paths in sorted(groups.items()):
        try:
            info = json.loads(git(repo, "show", f"HEAD:{org}/systems/{system}.json"))
        except json.JSONDecodeError:
            continue
        acc = str(info.get("accelerator_model_name", ""))
        gpu = next((g for p, g in gpus if re.search(p, acc)), None)
        if gpu is None:
            continue
        nodes = int(str(info["number_of_nodes"]).strip())
        per_node = int(str(info["accelerators_per_node"]).strip())
        n = nodes * per_node
        steps: list[float] = []
        rates: list[float] = []
        gbs_seen: set[int] = set()
        seq_seen: set[int] = set()
        accum_seen: set[int] = set()
        ran: set[str] = set()
        printed: dict[str, str] = {}
        dist_logged: set[str] = set()
        megatron: dict[str, str] = {}
        for p in sorted(paths):
            log = git(repo, "show", f"HEAD:{p}")
            first = re.search(r'"time_ms": (\d+)', log)
            if first and int(first.group(1)) < PREVIOUS_ROUND_PUBLISHED_MS[version]:
                continue  # an older round's log shipped again (a fitted or held-out round)
            if (m_opt := LOGGED_DIST_OPT.search(log)) is not None:
                dist_logged.add(m_opt.group(1))
            if bench != "llama2_70b_lora" and not megatron:
                megatron = megatron_layout(log)
            if bench == "llama2_70b_lora":
                if (cfg_name := lora_layouts.dlpal_config(log)) is not None:
                    ran.add(cfg_name)
                printed = printed or lora_layouts.log_vars(log)
            st = (
                values(log, "train_step_time")
                or values(log, "train_step_timing in s")
                or values(log, "train_step_timing")
            )
            if len(st) >= 3:
                steps.append(statistics.median(st[1:]))
            tp_ = values(log, "throughput")  # samples/s (the LoRA implementations log this)
            if len(tp_) >= 3:
                rates.append(statistics.median(tp_[1:]))
            gbs_seen.update(int(x) for x in values(log, "global_batch_size"))
            seq_seen.update(int(x) for x in values(log, "max_sequence_length"))
            accum_seen.update(int(x) for x in values(log, "gradient_accumulation_steps"))
        if (not steps and not rates) or len(gbs_seen) != 1:
            continue
        gbs = gbs_seen.pop()
        seq = seq_seen.pop() if len(seq_seen) == 1 else 8192
        if steps:
            step = statistics.median(steps)
            how = (
                f"step time {step:.4f} s = median over {len(steps)} result files of the median "
                "train_step_time (v4.1: `train_step_timing in s`; first dropped); tokens/s = "
                f"global batch {gbs} x seq {seq} / step time"
            )
        else:
            rate = statistics.median(rates)
            step = gbs / rate
            how = (
                f"{rate:.4f} samples/s = median over {len(rates)} result files of the median "
                f"tracked_stats throughput (first dropped); tokens/s = that x seq {seq}"
            )
        tp = pp = cp = 1
        mbs_cfg = 0
        cands: set[tuple[int, ...]] = set()
        name_style = "tp-pp-cp"
        paths_of: dict[tuple[int, ...], str] = {}
        for style, regex in (("tp-pp-cp", CONFIG_RE), ("x-mbs", CONFIG_41)):
            paths_of = {
                tuple(int(g) for g in m.groups()): f
                for f in files
                if f.startswith(f"{org}/benchmarks/{bench}/")
                and (m := regex.search(f))
                and int(m.group(1)) == nodes
                and int(m.group(2)) == per_node
            }
            cands = set(paths_of)
            if cands:
                name_style = style
                break
        layout_note = "no config file of this node count: layout left data parallel"
        config_path = ""
        if len(cands) == 1:
            got = cands.pop()
            config_path = paths_of[got]
            if name_style == "x-mbs":
                (_, _, _b, tp, pp, mbs_cfg) = got
            else:
                (_, _, _b, tp, pp, cp) = got
            layout_note = f"TP {tp} PP {pp} CP {cp} from the config file name"
        elif cands:
            layout_note = (
                f"{len(cands)} config files of this node count disagree: layout left data parallel"
            )
        dp = max(1, n // (tp * pp * cp))
        per_dp = max(1, gbs // dp)
        if mbs_cfg:  # GPT-3 names: micro-batch from the name, accumulation as logged
            mbs = mbs_cfg
            accum = accum_seen.pop() if len(accum_seen) == 1 else max(1, per_dp // mbs)
        else:
            mbs, accum = (1, per_dp) if pp > 1 else (per_dp, 1)
        sharding, shard_note = dist_optimizer(repo, files, org, bench)
        if not sharding and dist_logged:  # the run names its distributed optimizer
            sharding = "zero1"
            shard_note = f"sharding zero1: the log runs {'/'.join(sorted(dist_logged))}"
        if {"tensor_model_parallel_size", "context_parallel_size"} <= megatron.keys():
            # the Megatron configuration the run prints wins over the config's name
            tp = int(megatron["tensor_model_parallel_size"])
            pp = int(megatron.get("pipeline_model_parallel_size", "1"))
            cp = int(megatron["context_parallel_size"])
            mbs = int(megatron.get("micro_batch_size", "1"))
            dp = max(1, n // (tp * pp * cp))
            accum = max(1, gbs // (mbs * dp))
            layout_note = f"TP {tp} PP {pp} CP {cp} micro-batch {mbs} as the log prints them"
            if megatron.get("use_distributed_optimizer") == "true":
                sharding = "zero1"
                shard_note = "sharding zero1: the log prints use_distributed_optimizer: true"
        if bench == "llama2_70b_lora":  # the layout as extract_mlperf.py reads it (README)
            lora = lora_rows_layout(repo, version, files, org, system, acc, nodes, per_node)
            found = lora(ran, printed, gbs)
            if found is not None:
                lay, mbs, layout_note = found
                tp, pp, cp = int(lay["tp"]), int(lay["pp"]), int(lay["cp"])
                accum = int(lay["grad_accum"])
                dp = max(1, n // (tp * pp * cp))
                if lay["sharding"]:
                    sharding, shard_note = lay["sharding"], "sharding zero1: printed in the log"
        vp = 1
        if pp > 1 and config_path:
            vp, vp_note = interleaved_stages(repo, config_path)
            layout_note += f"; vp {vp}: {vp_note}"
        tokens = gbs * seq / step
        model, task = benchmarks[bench]
        out.append(
            {
                "model": model,
                "gpu": gpu,
                "num_gpus": n,
                "nodes": nodes,
                "precision": "fp8",
                "batch_size": mbs,
                "seq_len": seq,
                "tp": tp,
                "pp": pp,
                "cp": cp,
                "ep": "",
                "sharding": sharding,
                "vp": vp if vp > 1 else "",
                "grad_accum": accum,
                "task": task,
                "lora_rank": 16 if task == "finetune-lora" else "",
                "stack": "tuned",
                "validates": "fp8",
                "measured_throughput": f"{tokens:.0f}",
                "measured_unit": "tokens/s",
                "suite": f"mlperf-v{version}",
                "source_repo": f"mlcommons/training_results_v{version}",
                "source_path": f"{org}/results/{system}/{bench}/",
                "source_commit": commit,
                "note": (
                    f"MLPerf v{version} {bench}; {nodes} x {per_node} {acc}; {how}; {layout_note}; "
                    f"micro-batch {mbs} x accumulation {accum} per DP rank; {shard_note} "
                    f"(DP {dp}); fp8: {FP8_WHY[version]}; framework "
                    f"{info.get('framework', '?')}"
                ),
            }
        )
    return out


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
