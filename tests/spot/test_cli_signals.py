"""`gpurent spot signals import|list` through the CLI: each format, bad files, ages."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.conftest import run_cli

SPS = {
    "InstanceTypes": ["p5.48xlarge"],
    "SpotPlacementScores": [
        {"Region": "us-east-1", "AvailabilityZoneId": "use1-az4", "Score": 3},
        {"Region": "us-east-1", "AvailabilityZoneId": "use1-az6", "Score": 8},
    ],
}
ADVISOR = {
    "ranges": [
        {"index": 0, "label": "<5%", "max": 5},
        {"index": 1, "label": "5-10%", "max": 11},
        {"index": 4, "label": ">20%", "max": 100},
    ],
    "spot_advisor": {
        "us-east-1": {"Linux": {"p5.48xlarge": {"s": 55, "r": 4}}, "Windows": {}},
        "us-west-2": {"Linux": {"p5.48xlarge": {"s": 60, "r": 0}}},
    },
}
AZURE = {
    "data": [
        {"skuName": "Standard_NC24ads_A100_v4", "location": "eastus", "evictionRate": "5-10"},
        {"skuName": "Standard_NC24ads_A100_v4", "location": "westus3", "evictionRate": "20+"},
    ]
}
SPOTLAKE = (
    "Time,InstanceType,Region,AZ,SPS,IF,OndemandPrice,SpotPrice,Savings\n"
    "2026-11-01 10:00:00,p5.48xlarge,us-east-1,use1-az4,3,1.0,98.0,40.0,59\n"
    "2026-11-01 10:00:00,p5.48xlarge,us-east-1,use1-az6,7,3.0,98.0,44.0,55\n"
    "2026-11-01 10:10:00,p5.48xlarge,us-east-1,use1-az4,2,5-10%,98.0,41.0,58\n"
)


def write(tmp_path: Path, name: str, content: object) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def stored() -> list[dict[str, object]]:
    code, out, err = run_cli("spot", "signals", "list", "--json")
    assert code == 0, err
    rows: list[dict[str, object]] = json.loads(out)
    return rows


def test_placement_scores_are_stored_per_zone_with_the_file_time(tmp_path: Path) -> None:
    path = write(tmp_path, "sps.json", SPS)
    os.utime(path, (1_700_000_000, 1_700_000_000))
    code, _, err = run_cli("spot", "signals", "import", str(path))
    assert code == 0, err
    rows = stored()
    assert {(r["zone"], r["value"]) for r in rows} == {("use1-az4", 3.0), ("use1-az6", 8.0)}
    assert all(r["kind"] == "placement_score" and r["instance"] == "p5.48xlarge" for r in rows)
    assert rows[0]["as_of"] == "2023-11-14T22:13:20+00:00"
    assert float(str(rows[0]["age_s"])) > 86400 * 300


def test_placement_scores_without_instance_types_name_the_field(tmp_path: Path) -> None:
    doc = {"SpotPlacementScores": SPS["SpotPlacementScores"]}
    path = write(tmp_path, "sps.json", doc)
    code, _, err = run_cli("spot", "signals", "import", str(path))
    assert code == 2
    assert "sps.json" in err and "'InstanceTypes'" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli("spot", "signals", "import", str(path), "--instance", "p4d.24xlarge")
    assert code == 0, err
    assert {r["instance"] for r in stored()} == {"p4d.24xlarge"}


def test_advisor_buckets_become_rates_by_the_midpoint_rule(tmp_path: Path) -> None:
    path = write(tmp_path, "spot-advisor-data.json", ADVISOR)
    code, _, err = run_cli(
        "spot", "signals", "import", str(path), "--as-of", "2026-11-30T00:00:00Z"
    )
    assert code == 0, err
    by_region = {r["region"]: r for r in stored()}
    assert by_region["us-east-1"]["label"] == ">20%"
    assert by_region["us-east-1"]["interruptions_per_hour"] == pytest.approx(0.25 / 730)
    assert by_region["us-west-2"]["interruptions_per_hour"] == pytest.approx(0.025 / 730)
    assert by_region["us-west-2"]["zone"] is None


def test_spotlake_archive_keeps_the_newest_of_each_series(tmp_path: Path) -> None:
    path = write(tmp_path, "lake.csv", SPOTLAKE)
    code, _, err = run_cli("spot", "signals", "import", str(path))
    assert code == 0, err
    rows = stored()
    az4 = {r["kind"]: r for r in rows if r["zone"] == "use1-az4"}
    assert az4["placement_score"]["value"] == 2.0  # the 10:10 row beats the 10:00 one
    assert az4["interruption_pct"]["label"] == "5-10%"
    assert az4["spot_price"]["value"] == 41.0
    az6 = {r["kind"]: r for r in rows if r["zone"] == "use1-az6"}
    assert az6["interruption_pct"]["label"] == "<5%"  # SpotLake's IF score 3.0


def test_azure_eviction_buckets(tmp_path: Path) -> None:
    path = write(tmp_path, "evict.json", AZURE)
    code, _, err = run_cli("spot", "signals", "import", str(path), "--format", "azure-eviction")
    assert code == 0, err
    by_region = {r["region"]: r for r in stored()}
    assert by_region["eastus"]["value"] == 7.5
    assert by_region["westus3"]["value"] == 25.0
    assert by_region["eastus"]["provider"] == "azure"


def test_gcp_has_no_published_rates() -> None:
    code, _, err = run_cli("spot", "signals", "import", "nofile.json", "--format", "gcp")
    assert code == 2
    assert "GCP publishes no" in err


@pytest.mark.parametrize(
    ("name", "content", "field"),
    [
        (
            "a.json",
            {"SpotPlacementScores": [{"Region": "x", "Score": 11}], "InstanceTypes": ["t"]},
            "Score",
        ),
        ("b.json", {"ranges": [{"index": 0, "label": "often"}], "spot_advisor": {}}, "label"),
        (
            "c.json",
            {
                "ranges": ADVISOR["ranges"],
                "spot_advisor": {"r1": {"Linux": {"t": {"s": 1, "r": 9}}}},
            },
            "r",
        ),
        ("d.json", {"data": [{"skuName": "s", "location": "eastus"}]}, "evictionRate"),
        ("e.csv", "Time,InstanceType,Region,AZ,SPS\nnot a time,t,r,z,3\n", "Time"),
        ("f.csv", "Time,InstanceType,Region,AZ,SPS\n2026-01-01,t,r,z,zero\n", "SPS"),
        ("g.csv", "Time,InstanceType,AZ\n2026-01-01,t,z\n", "Region"),
    ],
)
def test_bad_files_are_one_line_naming_file_and_field(
    tmp_path: Path, name: str, content: object, field: str
) -> None:
    path = write(tmp_path, name, content)
    code, _, err = run_cli("spot", "signals", "import", str(path))
    assert code == 2, err
    assert name in err and field in err
    assert len(err.strip().splitlines()) == 1
    assert stored() == []


def test_unknown_file_and_empty_list(tmp_path: Path) -> None:
    code, out, _ = run_cli("spot", "signals", "list")
    assert code == 0 and "no spot signals stored" in out
    path = write(tmp_path, "x.json", {"hello": 1})
    code, _, err = run_cli("spot", "signals", "import", str(path))
    assert code == 2 and "--format" in err


def test_shipped_examples_import(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "spot-signals"
    for path in sorted(root.glob("*.json")) + sorted(root.glob("*.csv")):
        code, _, err = run_cli("spot", "signals", "import", str(path))
        assert code == 0, (path, err)
    assert {r["provider"] for r in stored()} == {"aws", "azure"}


def test_the_store_keeps_the_newest_of_each_series(tmp_path: Path) -> None:
    path = write(tmp_path, "lake.csv", SPOTLAKE)
    assert run_cli("spot", "signals", "import", str(path))[0] == 0
    assert run_cli("spot", "signals", "import", str(path))[0] == 0  # again: no duplicates
    doc = json.loads((tmp_path / "gpurent-home" / "spot" / "signals.json").read_text())
    az4 = [d for d in doc if d["zone"] == "use1-az4" and d["kind"] == "placement_score"]
    assert [d["value"] for d in az4] == [2.0]
    assert len(doc) == len(stored())
