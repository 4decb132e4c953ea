"""The offers, spot, bench and vendors pages over HTTP: what they show is what the CLI's
commands and the JSON API say for the same inputs; bad filters are the page with one line."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_TRACES = sorted((ROOT / "src/gpurent/server/data/spot").glob("*.csv"))
ERROR = re.compile(r'<p class="error" role="alert">([^<]*)</p>')


def table_rows(page: str, marker: str) -> list[list[str]]:
    """The body rows of the first table after `marker`, as text cells."""
    part = page.split(marker, 1)[1].split("</table>", 1)[0].split("<tbody>", 1)[1]
    return [
        [html.unescape(re.sub(r"<br>", "\n", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", part, re.S)
    ]


def test_offers_filtered_as_the_api_with_price_ages(api: httpx.Client) -> None:
    query = {"gpu": "H100", "provider": "aws", "pricing": "spot", "max_price": "80"}
    page = api.get("/offers", params=query)
    assert page.status_code == 200
    doc = api.get(
        "/api/offers",
        params={"gpu": "H100", "provider": "aws", "spot": True, "max_price": 80, "limit": 0},
    ).json()
    rows = table_rows(page.text, 'id="offers"')
    assert doc["offers"], "the filter should keep some offers"
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (o["provider"], o["instance_type"], o["region"]) for o in doc["offers"]
    ]
    ages = [o["price_age_days"] for o in doc["offers"]]
    assert [r[9].split(" ")[0] for r in rows] == [str(a) for a in ages]
    assert f"{len(rows)} shown of {doc['matching']} matching" in page.text
    assert 'value="H100"' in page.text  # the filter form keeps the filters


def test_offers_on_demand_only_drops_spot_only_rows(api: httpx.Client) -> None:
    rows = table_rows(api.get("/offers", params={"pricing": "on-demand"}).text, 'id="offers"')
    assert rows and all(r[5] != "-" for r in rows)


@pytest.mark.parametrize(
    ("query", "status", "line"),
    [
        ({"gpu": "H1000"}, 404, "unknown GPU 'H1000'"),
        ({"max_price": "cheap"}, 422, "max_price: 'cheap' is not a number"),
        ({"max_price": "-1"}, 422, "max_price"),
        ({"pricing": "free"}, 422, "pricing: 'free'"),
    ],
)
def test_offers_bad_filter_is_one_line(
    api: httpx.Client, query: dict, status: int, line: str
) -> None:
    page = api.get("/offers", params=query)
    assert page.status_code == status
    errors = [html.unescape(e) for e in ERROR.findall(page.text)]
    assert len(errors) == 1 and line in errors[0]


def test_spot_page_is_the_cli_zones_and_simulation(api: httpx.Client) -> None:
    page = api.get("/spot", params={"job_hours": "30", "deadline_hours": "48"})
    assert page.status_code == 200
    code, out, _ = run_cli("spot", "zones", *map(str, EXAMPLE_TRACES), "--json")
    assert code == 0
    zones = json.loads(out)
    advice = html.unescape(page.text.split('id="zone-advice">')[1].split("</p>")[0])
    assert ", ".join(zones["recommended"]["zones"]) in advice
    traces = [a for p in EXAMPLE_TRACES for a in ("--trace", str(p))]
    code, out, _ = run_cli(
        "spot",
        "simulate",
        *traces,
        "--job-hours",
        "30",
        "--deadline-hours",
        "48",
        "--price-ratio",
        "3",
        "--starts",
        "30",
        "--policy",
        "greedy",
        "--json",
    )
    assert code == 0
    greedy = json.loads(out)
    rows = {r[0]: r for r in table_rows(page.text, 'id="simulation"')}
    assert set(rows) == {"on-demand", "greedy", "uniform-progress", "lifetime-up"}
    assert rows["greedy"][2] == f"{greedy['mean_cost_normalized']:.3f}"
    assert rows["greedy"][4] == str(greedy["deadline_misses"])
    island = page.text.split('id="spot-heatmap-figure">')[1].split("</script>")[0]
    z = json.loads(island)["data"][0]["z"]
    assert len(z) == 7 and all(len(day) == 24 for day in z)


def test_spot_page_prefers_the_users_traces(api: httpx.Client) -> None:
    folder = Path(os.environ["GPURENT_HOME"]) / "spot" / "traces"
    folder.mkdir(parents=True)
    for p in EXAMPLE_TRACES[:2]:
        shutil.copy(p, folder / p.name.replace("_v100_1", "-mine"))
    page = api.get("/spot")
    assert page.status_code == 200
    assert "2 trace file(s) in" in page.text and "us-east-1a-mine" in page.text


def test_spot_bad_job_is_one_line(api: httpx.Client) -> None:
    page = api.get("/spot", params={"deadline_hours": "0"})
    assert page.status_code == 422
    assert len(ERROR.findall(page.text)) == 1


def test_bench_page_without_results_says_where_they_go(api: httpx.Client) -> None:
    page = api.get("/bench")
    assert page.status_code == 200
    assert "gpurent bench --quick" in page.text


def test_bench_page_shows_the_newest_result_against_expectations(api: httpx.Client) -> None:
    folder = Path(os.environ["GPURENT_HOME"]) / "bench"
    folder.mkdir(parents=True)
    result = json.loads((ROOT / "examples/vendors/a-bench-h100.json").read_text())
    (folder / "bench-20260101T000000Z.json").write_text(json.dumps(result))
    result["verdict"][0]["status"] = "fail"
    (folder / "bench-20260202T000000Z.json").write_text(json.dumps(result))
    rows = table_rows(api.get("/bench").text, 'id="verdict"')
    assert rows[0][:2] == [result["verdict"][0]["check"], "fail"]
    older = table_rows(
        api.get("/bench", params={"file": "bench-20260101T000000Z.json"}).text, 'id="verdict"'
    )
    assert older[0][1] == "ok"
    assert api.get("/bench", params={"file": "../etc/passwd"}).status_code == 422


def test_vendors_page_ranks_as_the_cli(api: httpx.Client) -> None:
    page = api.get("/vendors")
    assert page.status_code == 200
    code, out, _ = run_cli("vendors", "score", str(ROOT / "examples/vendors.toml"), "--json")
    assert code == 0
    ranking = [v["name"] for v in json.loads(out)["scorecard"]["vendors"]]
    shown = [html.unescape(n) for n in re.findall(r"<td>(Example [A-Z])</td>", page.text)]
    assert shown[: len(ranking)] == ranking
    assert 'id="vendors-sensitivity-figure"' in page.text


def test_every_page_has_the_nav_and_security_headers(api: httpx.Client) -> None:
    for path in ("/", "/offers", "/spot", "/bench", "/vendors"):
        page = api.get(path)
        assert page.status_code == 200, path
        assert page.headers["content-security-policy"].startswith("default-src 'self'")
        assert page.headers["x-content-type-options"] == "nosniff"
        for label in ("Plan", "Offers", "Spot", "Monitor", "Bench", "Vendors"):
            assert f">{label}</a>" in page.text


def test_vendors_page_follows_a_changed_evidence_file(
    api: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpurent.server import pages_data

    monkeypatch.setattr(pages_data, "VENDORS_FRESH_S", 0.2)
    home = Path(os.environ["GPURENT_HOME"])
    shutil.copytree(ROOT / "examples/vendors", home / "vendors")
    shutil.copy(ROOT / "examples/vendors.toml", home / "vendors.toml")
    before = api.get("/vendors").text
    assert "Example A" in before and str(home / "vendors.toml") in before
    bench = home / "vendors/a-bench-h100.json"
    doc = json.loads(bench.read_text())
    doc["measurements"][0]["value"] /= 4  # provider A's matmul falls to a quarter
    bench.write_text(json.dumps(doc))
    time.sleep(0.3)
    after = api.get("/vendors").text
    assert after != before
    assert "Top choice: Example A" in before and "Top choice: Example A" not in after
