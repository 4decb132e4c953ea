"""`gpurent bench` and `gpurent bench compare` through the real CLI."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.bench.result import load_result
from gpurent.cli.main import app


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_selected_benchmarks_as_json_and_saved(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = invoke(
        "bench",
        "--only",
        "membw,hostdev",
        "--device",
        "cpu",
        "--quick",
        "--json",
        "--out",
        str(out),
    )
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    keys = [m["key"] for m in data["measurements"]]
    assert keys == ["membw.copy", "membw.triad", "hostdev.host-memcpy"]
    assert [v["status"] for v in data["verdict"]] == ["info", "info", "info"]
    assert data["hardware"]["device"] == "cpu" and data["model_runs"] == []
    assert data["calibration_rows"] == []
    assert any("a CPU is not a GPU model" in n for n in data["notes"])
    assert load_result(out).measurements[0].key == "membw.copy"
    assert f"saved {out}" in r.stderr


def test_default_save_goes_to_gpurent_home(tmp_path: Path) -> None:
    r = invoke("bench", "--only", "membw", "--device", "cpu", "--quick", "--markdown")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("# gpurent bench") and "| membw.copy |" in r.stdout
    saved = list((tmp_path / "gpurent-home" / "bench").glob("bench-*.json"))
    assert len(saved) == 1


def test_table_output(tmp_path: Path) -> None:
    r = invoke(
        "bench",
        "--only",
        "disk",
        "--path",
        str(tmp_path),
        "--quick",
        "--out",
        str(tmp_path / "r.json"),
    )
    assert r.exit_code == 0, r.stderr
    assert "disk.seq-write" in r.stdout and "Verdict" in r.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--only", "matmul,gpuburn"], "--only gpuburn: unknown"),
        (["--json", "--markdown"], "--json and --markdown: choose one"),
        (["--steps", "1"], "--steps 1: need at least 2"),
        (["--warmup", "0"], "--warmup 0: need at least 1"),
        (["--max-seconds", "0"], "--max-seconds 0: must be positive"),
        (["--path", "/no/such/dir"], "--path /no/such/dir: not an existing directory"),
        (["--device", "tpu", "--only", "membw"], "--device 'tpu': use auto, cpu or cuda"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], message: str) -> None:
    r = invoke("bench", *args)
    assert r.exit_code == 2
    assert message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_cuda_without_gpu_is_a_device_error() -> None:
    r = invoke("bench", "--device", "cuda", "--only", "membw")
    assert r.exit_code == 1
    assert "--device cuda: torch sees no CUDA GPU" in r.stderr


@pytest.mark.parametrize("module", ["torch", "numpy"])
def test_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import <module>` raise ImportError
    r = invoke("bench", "--quick", "--only", "membw")
    assert r.exit_code == 1
    assert f"optional package '{module}'" in r.stderr
    assert "pip install 'gpurent[bench]'" in r.stderr and "Traceback" not in r.stderr


def test_compare_needs_neither_torch_nor_numpy(tmp_path: Path, bb) -> None:
    """In a fresh interpreter where torch and numpy cannot be imported, compare still works."""
    import os
    import subprocess

    from gpurent.bench.result import save_result

    path = tmp_path / "a.json"
    save_result(bb.bench_result((bb.meas("membw.copy", 10.0),)), path)
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['numpy'] = None\n"
        "from gpurent.cli.main import main; sys.argv = ['gpurent', 'bench', 'compare', "
        f"{str(path)!r}, {str(path)!r}, '--json']; main()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rows"][0]["ratio_b_over_a"] == 1.0


def test_time_bound_skips_and_says_so(tmp_path: Path) -> None:
    r = invoke(
        "bench",
        "--only",
        "membw,disk",
        "--path",
        str(tmp_path),
        "--max-seconds",
        "0.001",
        "--json",
        "--out",
        str(tmp_path / "r.json"),
    )
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert any("--max-seconds" in n for n in data["notes"])


def test_compare_two_results(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path in (a, b):
        r = invoke("bench", "--only", "membw", "--quick", "--out", str(path), "--json")
        assert r.exit_code == 0, r.stderr
    r = invoke("bench", "compare", str(a), str(b), "--json")
    assert r.exit_code == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert [row["check"] for row in rows] == ["membw.copy", "membw.triad"]
    assert all(row["ratio_b_over_a"] > 0 for row in rows)
    md = invoke("bench", "compare", str(a), str(b), "--markdown")
    assert "| membw.copy |" in md.stdout
    table = invoke("bench", "compare", str(a), str(b))
    assert "B / A" in table.stdout


def test_compare_bad_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    r = invoke("bench", "compare", str(bad), str(bad))
    assert r.exit_code == 1 and "not valid JSON" in r.stderr
    r = invoke("bench", "compare", str(tmp_path / "none.json"), str(bad))
    assert r.exit_code == 2 and "no such file" in r.stderr


def test_help_teaches_with_examples() -> None:
    r = invoke("bench", "--help")
    assert r.exit_code == 0 and "gpurent bench --quick" in r.stdout and "compare" in r.stdout


@pytest.mark.slow
def test_quick_runs_every_benchmark(tmp_path: Path) -> None:
    # its wall time (< 60 s on a CPU, README) is measured by benchmarks/bench_bench_quick.py,
    # not here: a timed unit test fails on a loaded machine for reasons unrelated to the code.
    # The default 40 s budget skips the last benchmarks on a loaded machine (seen at load 10 on
    # 2 cores), so this test, which checks that each one runs, gives a budget no run here reaches.
    r = invoke(
        "bench",
        "--quick",
        "--max-seconds",
        "300",
        "--json",
        "--path",
        str(tmp_path),
        "--out",
        str(tmp_path / "q.json"),
    )
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    benchmarks = {m["benchmark"] for m in data["measurements"]}
    assert benchmarks == {"matmul", "membw", "hostdev", "allreduce", "disk", "dataload", "scaling"}
    assert [run["model"] for run in data["model_runs"]] == ["resnet50", "bert-large", "gpt-decoder"]
    assert not any(m["value"] is None for m in data["measurements"])
    fp32 = next(v for v in data["verdict"] if v["check"] == "matmul.fp32")
    assert fp32["source"] == "numpy BLAS fp32, same size, this run" and fp32["threshold"] == 0.5
    assert data["calibration_rows"] == []


def test_a_failing_benchmark_is_recorded_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpurent.bench.runner as runner

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runner, "run_disk", full_disk)
    r = invoke(
        "bench",
        "--only",
        "membw,disk",
        "--path",
        str(tmp_path),
        "--quick",
        "--json",
        "--out",
        str(tmp_path / "r.json"),
    )
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    row = next(v for v in data["verdict"] if v["check"] == "disk.error")
    assert row["status"] == "fail" and "No space left on device" in row["cause"]
    assert any(m["key"] == "membw.copy" and m["value"] for m in data["measurements"])


def test_cli_start_up_imports_no_bench_machinery() -> None:
    """`gpurent` start-up leaves torch, numpy, the progress bar and the bench modules unloaded."""
    import os
    import subprocess

    code = (
        "import sys; import gpurent.cli.main\n"
        "heavy = ('torch', 'numpy', 'rich.progress', 'gpurent.bench.runner')\n"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.stdout.strip() == ""


def test_disk_scratch_file_never_follows_a_planted_link(tmp_path: Path) -> None:
    work = tmp_path / "ckpt"
    work.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    # the old fixed names (this process's pid, as the CLI runner runs in it) planted as links
    planted = {work / f".gpurent-bench-{os.getpid()}.tmp", work / ".gpurent-bench.tmp"}
    for link in planted:
        link.symlink_to(victim)
    r = invoke(
        "bench",
        "--only",
        "disk",
        "--path",
        str(work),
        "--quick",
        "--json",
        "--out",
        str(tmp_path / "r.json"),
    )
    assert r.exit_code == 0, r.stderr
    assert victim.read_text() == "precious"
    assert set(work.iterdir()) == planted  # the private scratch directory is gone
    keys = {m["key"] for m in json.loads(r.stdout)["measurements"]}
    assert {"disk.seq-write", "disk.seq-read", "disk.rand-read"} <= keys
