"""Issue 15 (fresh offers): `offers --csv`, GPUs with offers but no spec."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def test_offers_csv_is_rfc4180_with_units_and_matches_json() -> None:
    args = ["offers", "--gpu", "H100", "--limit", "5"]
    r = runner.invoke(app, [*args, "--csv"])
    assert r.exit_code == 0, r.stderr
    assert r.stdout_bytes.split(b"\n")[0].endswith(b"\r")  # RFC 4180 CRLF line ends
    rows = list(csv.DictReader(io.StringIO(r.stdout, newline="")))
    header = next(csv.reader(io.StringIO(r.stdout, newline="")))
    assert {"price_usd_per_hour", "spot_price_usd_per_hour", "gpu_memory_gib", "as_of"} <= set(
        header
    )
    listed = json.loads(runner.invoke(app, [*args, "--json"]).stdout)["offers"]
    assert len(rows) == len(listed) == 5
    for row, offer in zip(rows, listed, strict=True):
        assert row["instance_type"] == offer["instance_type"]
        assert float(row["price_usd_per_hour"]) == offer["price_usd_per_hour"]
        assert row["as_of"] == offer["as_of"]


def test_offers_csv_quotes_vast_region_commas() -> None:
    r = runner.invoke(app, ["offers", "--provider", "vast", "--limit", "0", "--csv"])
    assert r.exit_code == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout, newline="")))
    assert rows and any("," in row["region"] for row in rows)  # "Alberta, CA, NA" kept whole
    assert all(row["provider"] == "vast" for row in rows)


def test_offers_csv_and_json_together_is_exit_2() -> None:
    r = runner.invoke(app, ["offers", "--csv", "--json"])
    assert r.exit_code == 2 and "--csv" in r.stderr and "Traceback" not in r.stderr


def _doc_skipped_gpus() -> list[str]:
    text = (ROOT / "docs" / "plan.md").read_text(encoding="utf-8")
    found = re.search(r"\(skipped GPUs\):\s*([^.]+)\.", text.replace("\n  ", " "))
    assert found, "docs/plan.md lost its list of skipped GPUs"
    return [name.strip() for name in found.group(1).split(",")]


def test_doc_list_of_skipped_gpus_matches_the_plan() -> None:
    r = runner.invoke(app, ["plan", "--preset", "llama-lora", "--json"])
    assert r.exit_code == 0, r.stderr
    lines = [a for a in json.loads(r.stdout)["assumptions"] if a.startswith("skipped offers")]
    assert len(lines) == 1
    in_code = lines[0].split(": ", 1)[1].split(", ")
    assert sorted(in_code) == sorted(_doc_skipped_gpus())


@pytest.mark.parametrize("name", ["P100", "p40", "RTX 3060", "P4"])
@pytest.mark.parametrize(
    "command", [["plan", "--preset", "llama-lora"], ["estimate", "--preset", "llama-lora"]]
)
def test_specless_gpu_with_offers_says_so_not_did_you_mean(name: str, command: list[str]) -> None:
    r = runner.invoke(app, [*command, "--gpu", name])
    assert r.exit_code == 2
    assert "offers exist; no spec, so it cannot be estimated" in r.stderr
    assert "did you mean" not in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_truly_unknown_gpu_still_suggests() -> None:
    r = runner.invoke(app, ["plan", "--preset", "llama-lora", "--gpu", "H1OO"])
    assert r.exit_code == 2 and "did you mean" in r.stderr and "offers exist" not in r.stderr
