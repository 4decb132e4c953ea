"""`extract_fp8_mlperf.interleaved_stages` reads a run's virtual pipeline stages from its config,
a file the config sources, or the implementation's `conf/custom.yaml`, else says there is none."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import ModuleType

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
IMPL = "NVIDIA/benchmarks/gpt3/implementations/x"


def _extractor() -> ModuleType:
    return load_script("benchmarks/data/validation/extract_fp8_mlperf.py")


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        f = tmp_path / IMPL / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "fixture"], check=True)
    return tmp_path


SOURCE_COMMON = "source $(dirname ${BASH_SOURCE[0]})/config_common.sh\n"
YAML = "virtual_pipeline_model_parallel_size: ${oc.decode:${oc.env:INTERLEAVED_PIPELINE,12}}\n"


def test_a_sourced_file_sets_it(tmp_path: Path) -> None:
    mod = _extractor()
    repo = _repo(
        tmp_path,
        {"config_8x8.sh": SOURCE_COMMON, "config_common.sh": "export INTERLEAVED_PIPELINE=6\n"},
    )
    vp, why = mod.interleaved_stages(repo, f"{IMPL}/config_8x8.sh")
    assert vp == 6 and "config_common.sh" in why


def test_the_yaml_default_when_no_config_sets_it(tmp_path: Path) -> None:
    mod = _extractor()
    repo = _repo(tmp_path, {"config_8x8.sh": "export TP=4\n", "conf/custom.yaml": YAML})
    vp, why = mod.interleaved_stages(repo, f"{IMPL}/config_8x8.sh")
    assert vp == 12 and "custom.yaml" in why


def test_one_with_a_note_when_nothing_says(tmp_path: Path) -> None:
    mod = _extractor()
    repo = _repo(tmp_path, {"config_8x8.sh": "export TP=4\n"})
    vp, why = mod.interleaved_stages(repo, f"{IMPL}/config_8x8.sh")
    assert vp == 1 and why.startswith("no INTERLEAVED_PIPELINE")
    # a config that is not in the repository at all: also 1, with the same note
    assert mod.interleaved_stages(repo, f"{IMPL}/missing.sh")[0] == 1
