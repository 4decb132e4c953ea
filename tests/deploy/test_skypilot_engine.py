"""The SkyPilot task YAML, loaded by SkyPilot's own task loader against a local catalog."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from deploy_helpers import engine_python, first_index, render
from tests.conftest import run_cli

from gpurent.catalog import find_gpu
from gpurent.deploy.skypilot import CLOUDS
from gpurent.deploy.spec import gpu_short_name

# SkyPilot reads its catalogs from $SKY_RUNTIME_DIR/.sky/catalogs/<schema>/<cloud>/vms.csv
# (sky/catalog/common.py) and downloads a missing one: the test writes them from the plan's
# own candidates so that nothing is fetched. vCPUs and memory are not in a plan: stated values.
CATALOG_SCHEMA = "v8"  # sky.skylet.constants.CATALOG_SCHEMA_VERSION in skypilot 0.14

LOAD = """
import json, sys
import sky
for path in sys.argv[1:]:
  task = sky.Task.from_yaml(path)
  out = []
  for r in task.resources:
      # from_yaml checks the fields; what launch checks next (the instance type in the cloud's
      # catalog, its accelerators, the price in that region) SkyPilot does here:
      assert r.cloud.instance_type_exists(r.instance_type), r.instance_type
      accelerators = r.accelerators
      hourly = r.get_cost(3600)
      out.append({"cloud": str(r.cloud).lower(), "instance_type": r.instance_type,
                  "region": r.region, "use_spot": r.use_spot, "disk_size": r.disk_size,
                  "network_tier": str(r.network_tier.value) if r.network_tier else None,
                  "job_recovery": r.job_recovery,
                  "autostop": bool(r.autostop_config and r.autostop_config.enabled),
                  "accelerators": accelerators, "usd_per_hour": hourly})
  print(json.dumps({"num_nodes": task.num_nodes, "resources": out, "run": task.run,
                    "mounts": sorted(task.storage_mounts)}))
"""


def write_catalog(root: Path, *docs: dict[str, Any], drop: str | None = None) -> None:
    rows: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, str, str]] = set()
    for c in (c for doc in docs for c in doc["top"]):
        key = (c["provider"], c["instance_type"], c["region"])
        if c["provider"] not in CLOUDS or c["instance_type"] == drop or key in seen:
            continue
        seen.add(key)
        gpu = find_gpu(c["gpu_name"])
        rows.setdefault(CLOUDS[c["provider"]], []).append(
            {
                "InstanceType": c["instance_type"],
                "AcceleratorName": gpu_short_name(c["gpu_name"], gpu.aliases if gpu else ()),
                "AcceleratorCount": c["gpus_per_node"],
                "vCPUs": 8 * c["gpus_per_node"],
                "MemoryGiB": 64 * c["gpus_per_node"],
                "Price": c["price_usd_per_hour"],
                "SpotPrice": c["price_usd_per_hour"],
                "Region": c["region"],
                "GpuInfo": "",
            }
        )
    for cloud, entries in rows.items():
        path = root / ".sky" / "catalogs" / CATALOG_SCHEMA / cloud / "vms.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(entries[0]))
            w.writeheader()
            w.writerows(entries)


def load(runtime: Path, *tasks: Path) -> Any:
    """SkyPilot loads each task in one process (its import is the slow part)."""
    env = {"HOME": str(runtime), "SKY_RUNTIME_DIR": str(runtime)}
    return engine_python(LOAD, *map(str, tasks), env=env, cwd=runtime)


def test_skypilot_accepts_a_multi_node_spot_task_and_the_plan_emit_one(
    plan_file: Path,
    llama_plan: dict[str, Any],
    default_plan: dict[str, Any],
    tmp_path: Path,
    monkeypatch: Any,
) -> None:
    """A two-node candidate, and the issue's done-when: `gpurent plan --preset llama-lora
    --emit skypilot -o job/` gives a file SkyPilot's loader accepts unchanged."""
    n = first_index(llama_plan, multi_node=True)
    c = llama_plan["top"][n - 1]
    out = render(plan_file, "skypilot", tmp_path / "multi", "--candidate", str(n))
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = run_cli(
        "plan", "--preset", "llama-lora", "--emit", "skypilot", "-o", "job/"
    )
    assert code == 0, stderr
    assert "wrote skypilot to job/ (task.yaml) from plan candidate 1 of plan" in stdout
    runtime = tmp_path / "sky"
    # the --emit above planned default_plan; the catalog holds both plans' instances
    write_catalog(runtime, llama_plan, default_plan)
    done = load(runtime, out / "task.yaml", tmp_path / "job" / "task.yaml")
    assert done.returncode == 0, done.stderr[-2000:]
    task, emitted = (json.loads(line) for line in done.stdout.strip().splitlines()[-2:])
    best = default_plan["top"][0]
    assert emitted["resources"][0]["instance_type"] == best["instance_type"]
    assert emitted["resources"][0]["usd_per_hour"] == best["price_usd_per_hour"]
    assert task["num_nodes"] == c["nodes"]
    first = task["resources"][0] if len(task["resources"]) == 1 else None
    chosen = [r for r in task["resources"] if r["instance_type"] == c["instance_type"]]
    assert chosen, task
    r = first or chosen[0]
    assert r["use_spot"] == (c["pricing"] == "spot")
    assert r["network_tier"] == "best"
    assert r["autostop"] is True
    assert (r["job_recovery"] is not None) == (c["pricing"] == "spot")
    assert r["usd_per_hour"] == c["price_usd_per_hour"]
    assert task["mounts"] == ["/checkpoints"]
    assert task["run"].splitlines()[-1] == (
        "gpurent run --nodes auto --nproc-per-node auto --checkpoint-dir /checkpoints "
        '--sync-dir /checkpoints/.gpurent-job/"$SKYPILOT_TASK_ID" '
        '--log /checkpoints/gpurent-run-node-"$SKYPILOT_NODE_RANK".jsonl -- python train.py'
    )


def test_skypilot_loader_rejects_an_instance_its_catalog_lacks(
    plan_file: Path, llama_plan: dict[str, Any], tmp_path: Path
) -> None:
    """The check is real: the same task fails when the catalog lacks the chosen instance."""
    out = render(plan_file, "skypilot", tmp_path / "job")
    runtime = tmp_path / "sky"
    write_catalog(runtime, llama_plan, drop=llama_plan["top"][0]["instance_type"])
    done = load(runtime, out / "task.yaml")
    assert done.returncode != 0
    assert llama_plan["top"][0]["instance_type"] in done.stderr


def test_plan_emit_needs_both_flags_and_checks_the_directory_first(tmp_path: Path) -> None:
    code, _, stderr = run_cli("plan", "--preset", "llama-lora", "--emit", "skypilot")
    assert code == 2 and "go together" in stderr
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("")
    code, stdout, stderr = run_cli(
        "plan", "--preset", "llama-lora", "--emit", "slurm", "-o", str(full)
    )
    assert code == 2 and "not empty" in stderr and stdout == ""
    code, _, stderr = run_cli("plan", "--preset", "llama-lora", "--emit", "helm", "-o", "x")
    assert code == 2 and "unknown format 'helm'" in stderr
