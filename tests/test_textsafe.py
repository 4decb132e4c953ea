"""Control characters from data never reach the terminal: the helper, then the renderers."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app
from gpurent.textsafe import clean

runner = CliRunner()
HOSTILE = "evil\x1b[2J\x1b]52;c;SGVsbG8=\x07\x07\x1bPq#0\x1b\\\x9b31m\x90dcs\x9c\x7f\x00\r\x08x"


def _no_controls(text: str) -> bool:
    return not any((ord(c) < 32 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F for c in text)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain H100", "plain H100"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        ("\x1b[2Jcleared", "cleared"),
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("bell\x07", "bell"),
        ("\x1b]0;title\x07after", "after"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1bcreset", "reset"),
        ("\x1b(Bcharset", "charset"),
        ("c1\x9b2Jx\x85", "c1x"),
        ("del\x7f", "del"),
        ("lone esc\x1b", "lone esc"),
        (HOSTILE, "evilx"),
        ("ünïcødé ✓", "ünïcødé ✓"),
    ],
)
def test_clean(raw: str, shown: str) -> None:
    assert clean(raw) == shown
    assert _no_controls(clean(raw))


def test_offers_and_skipped_rows_from_a_hostile_catalog(tmp_path: Path) -> None:
    path = tmp_path / "offers.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["provider", "instance_type", "gpu", "gpu_count", "region", "price_hour_usd"])
        w.writerow(["my\x1b[2Jcloud", "box\x07-8", "h100-sxm", "8", "eu\x1b]0;pwn\x07-1", "18"])
        w.writerow(["x", "y", "gpu\x1b[2J\x07?", "1", "r", "1"])  # an unknown GPU
        w.writerow(["x", "y\x1b[2J", "h100-sxm", "lots\x1b[2J", "r", "1"])  # skipped, said
    r = runner.invoke(app, ["offers", "--catalog", str(path)])
    assert r.exit_code == 0, r.stderr
    assert _no_controls(r.stdout) and _no_controls(r.stderr)
    assert "mycloud" in r.stdout and "box-8" in r.stdout and "eu-1" in r.stdout
    assert "skipped" in r.stderr
    r = runner.invoke(app, ["catalog", "import", str(path)])
    assert r.exit_code == 0, r.stderr
    assert _no_controls(r.stdout) and _no_controls(r.stderr)
    r = runner.invoke(app, ["offers", "--catalog", str(path), "--json"])
    assert "\\u001b[2J" in r.stdout  # JSON keeps the data as it is, escaped


def test_recorded_gpu_names_in_diagnose_and_live(tmp_path: Path) -> None:
    records = tmp_path / "s.jsonl"
    records.write_text(
        "\n".join(
            json.dumps(
                {
                    "timestamp": i,
                    "gpu": 0,
                    "gpu_name": "H100\x1b[2J\x07",
                    "gpu_busy_pct": 0,
                    "sm_util_pct": 0,
                }
            )
            for i in range(5)
        )
    )
    r = runner.invoke(app, ["monitor", "diagnose", str(records)])
    assert r.exit_code == 0, r.stderr
    assert "H100" in r.stdout and _no_controls(r.stdout) and _no_controls(r.stderr)
    scenario = tmp_path / "s.yaml"
    scenario.write_text('gpus:\n  - name: "H100\\e[2J\\a evil"\n')
    r = runner.invoke(app, ["monitor", "--fake-gpus", str(scenario), "--duration", "0"])
    assert r.exit_code == 0, r.stderr
    assert "H100" in r.stdout and "evil" in r.stdout
    assert _no_controls(r.stdout) and _no_controls(r.stderr)


def test_plan_terminal_on_a_hostile_catalog(tmp_path: Path) -> None:
    path = tmp_path / "offers.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["provider", "instance_type", "gpu", "gpu_count", "region", "price_hour_usd"])
        w.writerow(["my\x1b[2Jcloud", "box\x07-8[/]", "h100-sxm", "8", "eu\x1b]0;pwn\x07-1", "18"])
    r = runner.invoke(app, ["plan", "--preset", "llama-lora", "--catalog", str(path)])
    assert r.exit_code == 0, r.stderr
    assert _no_controls(r.stdout) and _no_controls(r.stderr)
    assert "mycloud" in r.stdout and "box-8[/]" in r.stdout  # shown literally, not as markup
