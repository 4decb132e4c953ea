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
    r"^([^/]+)/benchmarks/([^/]+)/implementations/([^/]+)/config_[^/]*?"
    r"(\d+)x(\d+)x(\d+)xtp(\d+)pp(\d+)cp(\d+)\.sh$"
)


def layouts(files: list[str]) -> dict[tuple[str, str], list[tuple[str, tuple[int, ...]]]]:
    """(submitter, benchmark) -> [(config path, (nodes, gpus per node, mbs, tp, pp, cp))] from
    the NeMo-style config file names `config_<system>_<N>x<G>x<MBS>xtp<T>pp<P>cp<C>.sh`."""
    out: dict[tuple[str, str], list[tuple[str, tuple[int, ...]]]] = {}
    for f in files:
        m = CONFIG_RE.match(f)
        if m:
            nums = tuple(int(g) for g in m.groups()[3:])
            out.setdefault((m.group(1), m.group(2)), []).append((f, nums))
    return out


def layout_for(
    cands: list[tuple[str, tuple[int, ...]]], system: str, nodes: int, per_node: int
) -> tuple[str, tuple[int, ...]] | None:
    """The config of this system and shape: one in the implementation folder named like the
    system, or one whose file name carries the system's name (`config_<name>_<N>x<G>...`);
    None when there is none or the candidates disagree (nothing is guessed across systems)."""
    sys_l = system.lower()
    fit = [(f, n) for f, n in cands if n[0] == nodes and n[1] == per_node]
    own = [(f, n) for f, n in fit if f.split("/")[4] == system]
    if not own:
        own = []
        for f, n in fit:
            name = f.rsplit("/", 1)[1].removeprefix("config_").lower()
            token = re.sub(r"_?\d+x\d+x\d+xtp\d+pp\d+cp\d+\.sh$", "", name)
            if token and token in sys_l:
                own.append((f, n))
    if own and len({n for _, n in own}) == 1:
        return own[0]
    return None


def rows_for(repo: Repo) -> list[dict[str, str]]:
    files = git(repo.path, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    pat = re.compile(r"^([^/]+)/results/([^/]+)/([^/]+)/result_\d+\.txt$")
    groups: dict[tuple[str, str, str], list[str]] = {}
    for f in files:
        m = pat.match(f)
        if m and m.group(3) in BENCHMARKS and m.group(1) not in EXCLUDED_SUBMITTERS:
            groups.setdefault((m.group(1), m.group(2), m.group(3)), []).append(f)
    configs = layouts(files)
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
        tp = pp = cp = ""
        found = layout_for(configs.get((org, bench), []), system, nodes, per_node)
        if found is not None:
            cfg, (_, _, mbs, t, p_, c) = found
            tp, pp, cp = str(t), str(p_), str(c)
            local = mbs
            batch_note = (
                f"micro-batch {mbs}, TP {t} PP {p_} CP {c} from the config file name {cfg}; "
                f"global batch {gbs}"
            )
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
                "sharding": "",
                "tp": tp,
                "pp": pp,
                "cp": cp,
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
            key = tuple(row[c] for c in ("model", "gpu", "num_gpus", "batch_size"))
            key += (row["measured_throughput"],)
            if key not in seen:
                seen.add(key)
                w.writerow(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
