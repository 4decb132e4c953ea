"""Issue 13, items 16-19, through the CLI: every number validated where it enters, no traceback
for any file, usage errors on one line, special files and huge counts refused quickly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpurent
from gpurent.cli.main import app

runner = CliRunner()


def one_line_error(args: list[str], *, codes: tuple[int, ...] = (2,)) -> str:
    """Run the CLI; assert exit code in `codes` and one `error:` line on stderr; return it."""
    r = runner.invoke(app, args)
    lines = r.stderr.splitlines()
    assert r.exit_code in codes, (args, r.exit_code, r.stdout[-500:], r.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, r.stderr[-2000:])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return lines[0]


PLAN = ["plan", "--preset", "llama-lora", "--json"]


# ----------------------------------------------------------------------------- item 16


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--tokens=-1e9"], "--tokens must be > 0, got -1e+09"),
        (["--tokens", "nan"], "--tokens must be a finite number, got nan"),
        (["--tokens", "inf"], "--tokens must be a finite number, got inf"),
        (["--storage-gb", "nan"], "--storage-gb must be a finite number"),
        (["--egress-gb", "nan"], "--egress-gb must be a finite number"),
        (["--egress-gb", "-3"], "--egress-gb must be >= 0"),
        (["--budget", "-inf"], "--budget must be a finite number"),
        (["--commit-discount", "2"], "--commit-discount must be between 0 and 1"),
        (["--max-gpus", "100000000"], "--max-gpus must be at most 100000"),
        (["--tokens", "1e-308"], "--tokens must be at least 1"),
    ],
)
def test_plan_numbers_are_finite_and_in_range(flags: list[str], needle: str) -> None:
    assert needle in one_line_error([*PLAN, *flags])


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("batch_size = -8", ": batch_size must be >= 1, got -8"),
        ("batch_size = 0", ": batch_size must be >= 1, got 0"),
        ("batch_size = 3.7", ": batch_size must be a whole number, got 3.7"),
        ("batch_size = true", ": batch_size must be a whole number, got True"),
        ("batch_size = inf", ": batch_size must be a whole number, got inf"),
        ("epochs = nan", "epochs must be a finite number"),
        ("epochs = -2", "epochs must be > 0, got -2"),
        ("token_budget = nan", "token_budget must be a finite number"),
        ("dataset_samples = -5", "dataset_samples must be >= 1, got -5"),
        ("output_tokens = -4", "output_tokens must be >= 1, got -4"),
        ('workload = "abc"', "`workload` must be a table"),
        ("seq_len = 1e300", "seq_len must be at most"),
        ("[shape]\nlayers = 2.5\nhidden = 64\nheads = 4\nvocab = 100", "shape.layers must be"),
    ],
)
def test_workload_file_numbers_are_validated(tmp_path: Path, line: str, needle: str) -> None:
    f = tmp_path / "job.toml"
    base = (
        'model = "llama3-8b"\ntask = "inference"\n'
        if "output" in line
        else 'preset = "llama-lora"\n'
    )
    f.write_text(base + line + "\n")
    message = one_line_error(["plan", "--workload", str(f), "--json"])
    assert f"{f}: " in message and needle in message


def test_yaml_workload_numbers_are_validated_too(tmp_path: Path) -> None:
    f = tmp_path / "job.yaml"
    f.write_text("preset: llama-lora\nepochs: .nan\n")
    assert "epochs must be a finite number" in one_line_error(["plan", "--workload", str(f)])


def test_inference_output_tokens_from_a_file_still_work(tmp_path: Path) -> None:
    f = tmp_path / "job.toml"
    f.write_text('preset = "llm-inference"\noutput_tokens = 64\nbatch_size = 4\n')
    r = runner.invoke(app, ["estimate", "--workload", str(f), "--gpu", "H100", "--json"])
    assert r.exit_code == 0, r.stderr
    assert '"throughput": ' in r.stdout and '"throughput": -' not in r.stdout


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "0"])
def test_estimate_inter_node_gbps(value: str) -> None:
    message = one_line_error(
        ["estimate", "--preset", "llama-lora", "--gpu", "H100", "--inter-node-gbps", value]
    )
    assert "--inter-node-gbps must be" in message


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--health-interval", "nan"], "--health-interval must be a finite number"),
        (["--hang-timeout", "nan", "--heartbeat-file", "hb"], "--hang-timeout must be a finite"),
        (["--hang-timeout", "0", "--heartbeat-file", "hb"], "--hang-timeout must be > 0"),
        (["--poll", "inf"], "--poll must be a finite number"),
        (["--backoff", "0", "--max-failures", "1100"], "--max-failures must be at most 100"),
    ],
)
def test_run_flags_that_would_turn_checks_off(flags: list[str], needle: str) -> None:
    assert needle in one_line_error(["run", *flags, "--", "true"])


def test_spot_simulate_huge_values(tmp_path: Path) -> None:
    trace = tmp_path / "z.csv"
    trace.write_text("date,availability\n2023-01-01 00:00:00,1\n2023-01-01 00:06:00,1\n")
    base = ["spot", "simulate", "--trace", str(trace), "--price-ratio", "3"]
    assert "--job-hours must be at most" in one_line_error(
        [*base, "--job-hours", "1e308", "--deadline-hours", "2"]
    )
    assert "--starts must be at most 10000" in one_line_error(
        [*base, "--job-hours", "1", "--deadline-hours", "2", "--starts", "100000000"]
    )
    assert "--starts" in one_line_error(  # typer: '1e8' is not an integer; still one line
        [*base, "--job-hours", "1", "--deadline-hours", "2", "--starts", "1e8"]
    )


# ----------------------------------------------------------------------------- item 17


def _reader_commands(path: Path) -> list[list[str]]:
    """A command for every reader of a user file, reading `path`."""
    p = str(path)
    return [
        ["plan", "--workload", p],
        ["estimate", "--workload", p, "--gpu", "H100"],
        ["estimate", "--from-csv", p],
        ["calibrate", "add", p],
        ["monitor", "diagnose", p],
        ["spot", "simulate", "--trace", p, "--job-hours", "1", "--deadline-hours", "2"],
        ["spot", "interval", p],
        ["spot", "history", p],
        ["plan", "--preset", "llama-lora", "--catalog", p],
        ["offers", "--catalog", p],
        ["bench", "compare", p, p],
    ]


@pytest.mark.parametrize("suffix", [".toml", ".yaml", ".csv", ".json"])
def test_non_utf8_files_are_one_line(tmp_path: Path, suffix: str) -> None:
    f = tmp_path / f"bad{suffix}"
    f.write_bytes(b"model,gpu\n\xff\xfe\x00junk\n")
    for args in _reader_commands(f):
        message = one_line_error(args, codes=(1, 2))
        assert "UTF-8" in message or "workload files end in" in message, (args, message)


def test_symlink_loops_and_long_names_are_one_line(tmp_path: Path) -> None:
    loop = tmp_path / "loop.toml"
    loop.symlink_to(loop)
    long_name = tmp_path / ("x" * 300 + ".toml")
    for path, needle in ((loop, "symbolic links"), (long_name, "name too long")):
        for args in _reader_commands(path):
            message = one_line_error(args, codes=(1, 2))
            assert needle in message or "does not exist" in message, (args, message)


def test_dev_zero_is_refused(tmp_path: Path) -> None:
    for args in _reader_commands(Path("/dev/zero")):
        message = one_line_error(args, codes=(1, 2))
        assert "is a device" in message or "workload files end in" in message, (args, message)


def test_a_full_disk_is_one_line(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    message = one_line_error([*PLAN, "--html", "/dev/full"], codes=(1, 2))
    assert "/dev/full: no space left on the device" in message
    message = one_line_error(
        ["run", "--notice", "none", "--log", "/dev/full", "--", "true"], codes=(1, 2)
    )
    assert "no space left" in message


def test_a_csv_field_over_the_limit_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "rows.csv"
    f.write_text('model,gpu,num_gpus,precision,batch_size\n"' + "x" * 200_000 + '",H100,1,amp,8\n')
    assert "field larger than field limit" in one_line_error(["estimate", "--from-csv", str(f)])
    assert "field larger than field limit" in one_line_error(["calibrate", "add", str(f)])


def test_deeply_nested_json_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "bench.json"
    f.write_text('{"calibration_rows": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "nested more than 64 levels" in one_line_error(["calibrate", "add", str(f)])


@pytest.mark.parametrize(
    ("url", "needle"),
    [("foo://x", "unknown database kind 'foo'"), ("postgresql://u:pw@h/db", "not installed")],
)
def test_database_urls(url: str, needle: str) -> None:
    pytest.importorskip("sqlalchemy")
    if "postgresql" in url:
        try:
            import psycopg  # noqa: F401
        except ImportError:
            pass
        else:
            pytest.skip("psycopg is installed here")
    message = one_line_error(["monitor", "report", "--db", url])
    assert needle in message and "pw" not in message


# ----------------------------------------------------------------------------- item 18


def test_usage_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    assert "'--tokens'" in one_line_error([*PLAN, "--tokens", "abc"])
    assert "is a directory" in one_line_error(["plan", "--workload", str(tmp_path)])
    assert "No such option: --nope" in one_line_error(["plan", "--nope"])
    assert "No such command" in one_line_error(["nosuch"])
    assert "Missing option" in one_line_error(["spot", "simulate"])
    message = one_line_error(["plan", "--nope"])
    assert message.endswith("see `gpurent plan --help`")


def test_help_and_normal_exit_codes_are_unchanged() -> None:
    r = runner.invoke(app, ["plan", "--help"])
    assert r.exit_code == 0 and "--tokens" in r.stdout and r.stderr == ""
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout.startswith("gpurent ")
    r = runner.invoke(app, [*PLAN])
    assert r.exit_code == 0, r.stderr
    r = runner.invoke(app, [*PLAN, "--budget", "0.01"])
    assert r.exit_code == 3  # nothing meets the request


# ----------------------------------------------------------------------------- item 19


def test_a_fifo_given_as_any_input_file_never_blocks(tmp_path: Path) -> None:
    """In a subprocess with a timeout: a blocking open would hang an in-process test."""
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    script = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from gpurent.cli.main import app\n"
        "from tests.test_cli_inputs import _reader_commands\n"
        "from pathlib import Path\n"
        "for args in _reader_commands(Path(sys.argv[1])):\n"
        "    r = CliRunner().invoke(app, args)\n"
        "    print(r.exit_code, r.stderr.strip().splitlines())\n"
    )
    root = Path(gpurent.__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    out = subprocess.run(
        [sys.executable, "-c", script, str(fifo)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    lines = out.stdout.splitlines()
    assert len(lines) == len(_reader_commands(fifo)), out.stderr
    for line in lines:
        code, _, stderr = line.partition(" ")
        assert code in ("1", "2") and stderr.count("'error: ") == 1, line
        assert "FIFO" in stderr or "workload files end in" in stderr, line


def test_huge_yaml_and_fake_gpu_counts_are_refused_quickly(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("preset: llama-lora\n" + "# padding\n" * 4_000_000)  # 40 MB
    assert "over the 1 MiB limit" in one_line_error(["plan", "--workload", str(big)])
    many = tmp_path / "many.yaml"
    many.write_text("gpus:\n  - name: X\n    count: 100000000\n")
    message = one_line_error(["monitor", "--fake-gpus", str(many), "--duration", "0"], codes=(1,))
    assert "count must be at most 1024" in message


# ------------------------------------------------------- found by benchmarks/bench_reliability_fuzz


def test_fuzz_finds_stay_fixed(tmp_path: Path) -> None:
    # a subnormal number of months divided by zero
    message = one_line_error(["pricing", "compare", "--on-demand", "3", "--months", "1e-320"])
    assert "--months must be at least 1e-09" in message
    # a null where the workload always has a value compared None with an int
    f = tmp_path / "job.yaml"
    f.write_text("preset: llama-lora\ntensor_parallel: null\n")
    message = one_line_error(["estimate", "--workload", str(f), "--gpu", "H100"])
    assert "tensor_parallel must be a number, got null" in message
    # epoch seconds beyond year 9999 in a trace
    trace = tmp_path / "z.csv"
    trace.write_text("date,availability\n4306000000000000,1\n4306000000000360,1\n")
    message = one_line_error(
        ["spot", "simulate", "--trace", str(trace), "--job-hours", "1", "--deadline-hours", "2"],
        codes=(1,),
    )
    assert "are not a time between 1970 and 9999" in message
