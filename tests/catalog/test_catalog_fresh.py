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
    listed = found.group(1).strip()
    return [] if listed == "none" else [name.strip() for name in listed.split(",")]


def test_doc_list_of_skipped_gpus_matches_the_plan() -> None:
    r = runner.invoke(app, ["plan", "--preset", "llama-lora", "--json"])
    assert r.exit_code == 0, r.stderr
    lines = [a for a in json.loads(r.stdout)["assumptions"] if a.startswith("skipped offers")]
    in_code = lines[0].split(": ", 1)[1].split(", ") if lines else []
    assert len(lines) <= 1
    assert sorted(in_code) == sorted(_doc_skipped_gpus())


def _k80_catalog(tmp_path: Path) -> Path:
    """A catalog with offers for a GPU the spec table lacks (the retired Kepler K80)."""
    path = tmp_path / "offers.csv"
    path.write_text(
        "provider,instance_type,gpu,gpu_count,region,price_hour_usd,as_of\n"
        "aws,p2.xlarge,K80,1,us-east-1,0.90,2026-11-01\n"
        "aws,p3.2xlarge,V100,1,us-east-1,3.06,2026-11-01\n"
    )
    return path


@pytest.mark.parametrize("name", ["K80", "k80"])
def test_specless_gpu_with_offers_says_so_not_did_you_mean(name: str, tmp_path: Path) -> None:
    catalog = str(_k80_catalog(tmp_path))
    r = runner.invoke(
        app, ["plan", "--preset", "resnet50-imagenet", "--catalog", catalog, "--gpu", name]
    )
    assert r.exit_code == 2
    assert "offers exist; no spec, so it cannot be estimated" in r.stderr
    assert "did you mean" not in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = runner.invoke(
        app, ["plan", "--preset", "resnet50-imagenet", "--catalog", catalog, "--json"]
    )
    assert r.exit_code == 0, r.stderr
    skipped = [a for a in json.loads(r.stdout)["assumptions"] if a.startswith("skipped offers")]
    assert skipped == ["skipped offers with GPUs that have no spec: K80"]


@pytest.mark.parametrize("name", ["P100", "p40", "RTX 3060", "P4"])
@pytest.mark.parametrize(
    "command",
    [["plan", "--preset", "resnet50-imagenet"], ["estimate", "--preset", "resnet50-imagenet"]],
)
def test_once_specless_bundled_gpus_are_estimated(name: str, command: list[str]) -> None:
    """P100, P40, P4 (Pascal, no tensor cores) and RTX 3060 have spec rows since session 16."""
    r = runner.invoke(app, [*command, "--gpu", name, "--json"])
    assert r.exit_code == 0, r.stderr or r.stdout
    assert "offers exist" not in r.stdout


def test_truly_unknown_gpu_still_suggests() -> None:
    r = runner.invoke(app, ["plan", "--preset", "llama-lora", "--gpu", "H1OO"])
    assert r.exit_code == 2 and "did you mean" in r.stderr and "offers exist" not in r.stderr


def _h100_catalog(tmp_path: Path, as_of: str) -> Path:
    path = tmp_path / "offers.csv"
    path.write_text(
        "provider,instance_type,gpu,gpu_count,region,price_hour_usd,as_of\n"
        f"aws,p5.48xlarge,H100,8,us-east-1,98.32,{as_of}\n"
    )
    return path


def _plan_json(catalog: Path, now: str) -> dict[str, object]:
    r = runner.invoke(
        app,
        ["plan", "--preset", "llama-lora", "--catalog", str(catalog), "--json"],
        env={"GPURENT_NOW": now},
    )
    assert r.exit_code == 0, r.stderr  # an old price is warned about, never refused
    doc: dict[str, object] = json.loads(r.stdout)
    return doc


def test_plan_warns_when_the_recommended_price_is_over_30_days_old(tmp_path: Path) -> None:
    catalog = _h100_catalog(tmp_path, "2026-10-01")
    fresh = _plan_json(catalog, "2026-10-31")  # 30 days: not yet stale
    assert fresh["warnings"] == []
    old = _plan_json(catalog, "2026-11-01T08:00:00+00:00")  # 31 days
    warnings = old["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1
    assert "p5.48xlarge" in warnings[0] and "'2026-10-01', 31 days old" in warnings[0]
    assert old["best"] is not None  # still recommended
    r = runner.invoke(
        app,
        ["plan", "--preset", "llama-lora", "--catalog", str(catalog)],
        env={"GPURENT_NOW": "2026-11-01"},
    )
    assert r.exit_code == 0 and "warning: the price of " in r.stdout and "p5.48xlarge" in r.stdout


def test_plan_warns_about_an_undated_price(tmp_path: Path) -> None:
    catalog = _h100_catalog(tmp_path, "")  # a --catalog file without dates
    warnings = _plan_json(catalog, "2026-11-01")["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1 and "unknown date" in warnings[0]


def test_bad_clock_override_is_exit_2() -> None:
    r = runner.invoke(app, ["offers"], env={"GPURENT_NOW": "yesterday"})
    assert r.exit_code == 2 and "GPURENT_NOW" in r.stderr and "Traceback" not in r.stderr


def test_catalog_info_lists_each_source_age_count_and_marks_2023_rows_stale() -> None:
    r = runner.invoke(app, ["catalog", "info", "--json"], env={"GPURENT_NOW": "2026-07-15"})
    assert r.exit_code == 0, r.stderr
    sources = {s["source"]: s for s in json.loads(r.stdout)["sources"]}
    tencent = sources["bundled snapshot (tencentcloud)"]
    assert tencent["as_of"] == "2023-06-30" and tencent["stale"] is True
    assert tencent["age_days"] == 1111 and tencent["offers"] == 19
    bundled = sources["bundled snapshot"]
    assert bundled["age_days"] == 15 and bundled["stale"] is False  # 2026-H1 read as June 30
    assert bundled["offers"] + tencent["offers"] == 899
    text = runner.invoke(app, ["catalog", "info"], env={"GPURENT_NOW": "2026-07-15"}).stdout
    assert "2023-06-30" in text and "STALE" in text


def test_offers_mark_the_2023_rows_stale() -> None:
    args = ["offers", "--provider", "tencentcloud", "--limit", "0"]
    r = runner.invoke(app, [*args, "--json"], env={"GPURENT_NOW": "2026-07-15"})
    offers = json.loads(r.stdout)["offers"]
    assert offers and all(o["price_stale"] and o["as_of"] == "2023-06-30" for o in offers)
    r = runner.invoke(app, args, env={"GPURENT_NOW": "2026-07-15"})
    assert "stale: 19 of these 19 prices are over 30 days old" in r.stdout
