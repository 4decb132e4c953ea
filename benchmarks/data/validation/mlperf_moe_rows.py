"""MLPerf Training v6.0 gpt_oss_20b rows for the tuned stack's MoE training split.

Used by `extract_fp8_mlperf.py --v60-moe DIR ...`: each DIR is a local copy of one submitter's
tree of the v6.0 results (`<Submitter>/results/<system>/gpt_oss_20b/result_*.txt`), since the
fork that holds them (Richardyu114/training_results_v6.0) cannot be fetched as a git
directory. A result file gives its layout in the `:::DLPAL` line's config name
(`<SYSTEM>_<N>x<G>x<MBS>xtp<T>pp<P>cp<C>ep<E>_<precision>`), its GPU in `:::SYSJSON`
(`accelerator_model_name`), its global batch in `global_batch_size` (else N x G x MBS /
(T x P x C)) and its per-step `train_step_time` values (the `tracked_stats` that also carry a
`reduced_train_loss`; the per-block means do not). Step time: the median over result files of
each file's median, its first value (warm-up) dropped. Rows of NVIDIA, CoreWeave (validation)
and Lambda (held out) are refused.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

REFUSED = ("NVIDIA", "CoreWeave", "Lambda")
CONFIG = re.compile(
    r"(?P<sys>[\w-]+?)_(?P<n>\d+)x(?P<g>\d+)x(?P<mbs>\d+)"
    r"xtp(?P<tp>\d+)pp(?P<pp>\d+)cp(?P<cp>\d+)ep(?P<ep>\d+)_(?P<prec>\w+)"
)
GPUS = (("GB300", "GB300"), ("GB200", "GB200"), ("B300", "B300-288GB"), ("B200", "B200-180GB"))


def step_times(log: str) -> list[float]:
    """The per-step `train_step_time` values of one result log, in order."""
    out = []
    for line in log.splitlines():
        if ":::MLLOG" not in line or "train_step_time" not in line:
            continue
        v = json.loads(line.split(":::MLLOG", 1)[1]).get("value")
        if isinstance(v, dict) and "reduced_train_loss" in v:
            out.append(float(v["train_step_time"]))
    return out


def _gpu(log: str) -> str | None:
    m = re.search(r":::SYSJSON (\{.*\})", log)
    name = json.loads(m.group(1)).get("accelerator_model_name", "") if m else ""
    return next((ours for theirs, ours in GPUS if theirs in name), None)


def _batch(log: str) -> int | None:
    m = re.search(r'"key": "global_batch_size", "value": (\d+)', log)
    return int(m.group(1)) if m else None


def rows(tree: Path) -> tuple[list[dict[str, object]], list[str]]:
    """The rows of one submitter's tree and a reason for each system left out."""
    out: list[dict[str, object]] = []
    left_out: list[str] = []
    submitter = tree.name
    if submitter in REFUSED:
        return out, [f"{submitter}: validation or held-out submitter, never a training row"]
    for system in sorted((tree / "results").glob("*/gpt_oss_20b")):
        files = sorted(system.glob("result_*.txt"))
        logs = [f.read_text(encoding="utf-8", errors="replace") for f in files]
        cfg = next((m for log in logs if (m := CONFIG.search(log)) and ":::DLPAL" in log), None)
        gpu = next((g for log in logs if (g := _gpu(log))), None)
        medians = [statistics.median(t[1:]) for log in logs if len(t := step_times(log)) > 1]
        where = system.relative_to(tree.parent)
        if cfg is None or gpu is None or not medians:
            left_out.append(f"{where}: no config name, GPU or step times in its logs")
            continue
        n, g, mbs = int(cfg["n"]), int(cfg["g"]), int(cfg["mbs"])
        tp, pp, cp = int(cfg["tp"]), int(cfg["pp"]), int(cfg["cp"])
        batch = next((b for log in logs if (b := _batch(log))), n * g * mbs // (tp * pp * cp))
        step = statistics.median(medians)
        out.append(
            {
                "model": "gpt-oss-20b",
                "gpu": gpu,
                "num_gpus": n * g,
                "nodes": n,
                "precision": cfg["prec"],
                "batch_size": mbs,
                "seq_len": 8192,
                "tp": tp,
                "pp": pp,
                "cp": cp,
                "ep": int(cfg["ep"]),
                "sharding": "zero1",
                "grad_accum": 1,
                "task": "training",
                "stack": "tuned",
                "validates": f"moe+{cfg['prec']}",
                "measured_throughput": round(batch * 8192 / step),
                "measured_unit": "tokens/s",
                "suite": "mlperf-v6.0",
                "source_path": f"{where}/",
                "note": f"MLPerf Training v6.0 gpt_oss_20b, {submitter} {cfg['sys']}; step time "
                f"{step:.4f} s = median over {len(medians)} result files of the median "
                f"train_step_time (first dropped); global batch {batch} x seq 8192",
            }
        )
    return out, left_out
