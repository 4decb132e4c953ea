"""`gpurent vendors score` end to end on the documented example (examples/vendors.toml)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "vendors.toml"
CRITERIA = ("hardware", "network", "elasticity", "cost", "support")


@pytest.fixture(scope="module")
def doc() -> dict[str, object]:
    code, out, err = run_cli("vendors", "score", str(EXAMPLE), "--json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_json_is_the_ranked_scorecard_with_evidence_scores_and_contributions(
    doc: dict[str, object],
) -> None:
    assert doc["kind"] == "gpurent.vendors.score" and doc["schema_version"] == 1
    card = doc["scorecard"]
    assert isinstance(card, dict)
    vendors = card["vendors"]
    assert [v["rank"] for v in vendors] == [1, 2, 3]
    totals = [v["total"] for v in vendors]
    assert totals == sorted(totals, reverse=True)
    for v in vendors:
        assert [c["criterion"] for c in v["criteria"]] == list(CRITERIA)
        points = [c["points"] for c in v["contributions"] if c["points"] is not None]
        assert sum(points) == pytest.approx(v["total"])
        for c in v["criteria"]:
            assert c["evidence"]
            assert c["score"] is None or 0.0 <= c["score"] <= 100.0


def test_missing_evidence_is_null_and_explained_never_0_or_100(doc: dict[str, object]) -> None:
    card = doc["scorecard"]
    assert isinstance(card, dict)
    c = next(v for v in card["vendors"] if v["name"] == "Example C")
    scores = {k["criterion"]: k["score"] for k in c["criteria"]}
    assert scores["network"] is None and scores["support"] is None
    (what,) = card["what_if"]
    assert what["vendor"] == "Example C"
    assert what["missing"] == ["network", "support"]
    assert what["rank_if_0"] >= what["rank"] >= what["rank_if_100"]


def test_sensitivity_topsis_and_checklist_are_in_the_json(doc: dict[str, object]) -> None:
    changes = doc["changes"]
    assert isinstance(changes, list)
    assert {c["norm"] for c in changes} == {"L1", "max"}
    l1 = next(c for c in changes if c["norm"] == "L1")
    mx = next(c for c in changes if c["norm"] == "max")
    assert mx["distance"] <= l1["distance"]  # max |d| <= sum |d| for the same change
    region = doc["region"]
    assert isinstance(region, dict)
    assert (region["x_criterion"], region["y_criterion"]) == ("hardware", "network")
    topsis = doc["topsis"]
    assert isinstance(topsis, dict)
    assert sorted(topsis["order"]) == ["Example A", "Example B", "Example C"]
    checklist = doc["checklist"]
    assert isinstance(checklist, list)
    assert [p["point"] for p in checklist] == [
        "SLA credits",
        "data destruction",
        "upgrade path",
        "exit terms",
    ]
    wipe = {s["vendor"]: s["status"] for s in checklist[1]["statements"]}
    assert wipe == {"Example A": "meets", "Example B": "stated", "Example C": "missing"}


def test_html_report_has_the_tables_and_the_region_plot(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    code, _, err = run_cli("vendors", "score", str(EXAMPLE), "--html", str(out))
    assert code == 0, err
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>")
    for heading in ("Ranking (weighted sum)", "Missing evidence", "TOPSIS", "Contract checklist"):
        assert heading in html
    assert "<svg" in html and html.count('class="cell"') == 21 * 22 // 2
    assert 'class="base"' in html
    assert "NIST SP 800-88" in html
    assert f"wrote {out}" in err


def test_markdown_and_terminal_say_the_same_ranking() -> None:
    code, md, err = run_cli("vendors", "score", str(EXAMPLE), "--markdown")
    assert code == 0, err
    assert md.startswith("# Vendor scorecard")
    assert "| **1** | **Example A** |" in md
    code, text, err = run_cli("vendors", "score", str(EXAMPLE))
    assert code == 0, err
    assert "Top choice: Example A" in text and "Top choice: Example A" in md


def test_weights_and_job_flags_change_the_ranking(doc: dict[str, object]) -> None:
    code, out, err = run_cli(
        "vendors",
        "score",
        str(EXAMPLE),
        "--json",
        "--weights",
        "hardware=0,network=0,elasticity=0,cost=1,support=0",
    )
    assert code == 0, err
    card = json.loads(out)["scorecard"]
    assert card["vendors"][0]["name"] == "Example C"  # the cheapest reference job
    code, out, err = run_cli("vendors", "score", str(EXAMPLE), "--json", "--job", "1x1")
    assert code == 0, err
    job = json.loads(out)["scorecard"]["job"]
    assert (job["hours"], job["gpus"]) == (1.0, 1)


def test_the_example_evidence_is_what_the_generator_writes(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    script = ROOT / "examples" / "vendors" / "make_evidence.py"
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, env=env)
    for made in tmp_path.iterdir():
        assert made.read_text() == (ROOT / "examples" / "vendors" / made.name).read_text()
