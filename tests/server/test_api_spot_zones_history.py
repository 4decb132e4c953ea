"""POST /api/spot/zones and POST /api/spot/history return the documents of
`gpurent spot zones --json` and `gpurent spot history --json` for the same inputs, over HTTP."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import run_cli

MONDAY = datetime(2023, 3, 6, tzinfo=UTC)


def _cli_json(*args: str) -> Any:
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def _csv(values: list[int]) -> str:
    rows = [f"2026-11-01T{i // 60:02d}:{i % 60:02d}:00Z,{a}" for i, a in enumerate(values)]
    return "date,availability\n" + "\n".join(rows) + "\n"


ZONES = {
    "zone-a.csv": _csv([1 if (i // 7) % 3 else 0 for i in range(180)]),
    "zone-b.csv": _csv([1 if (i // 5) % 4 else 0 for i in range(180)]),
    "zone-c.csv": _csv([0 if (i // 11) % 3 else 1 for i in range(180)]),
}


def _write(tmp_path: Path, files: dict[str, str]) -> list[str]:
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    return paths


@pytest.mark.parametrize(
    ("extra", "flags"),
    [
        ({}, []),
        (
            {"size": 2, "top": 2, "prices": "spot=1.2,ondemand=3.5"},
            ["--size", "2", "--top", "2", "--prices", "spot=1.2,ondemand=3.5"],
        ),
        (
            {"nodes": 1, "offer": "aws/p3.2xlarge/us-east-1"},
            ["--offer", "aws/p3.2xlarge/us-east-1"],
        ),
    ],
)
def test_spot_zones_from_traces_is_spot_zones_json(
    api: httpx.Client, tmp_path: Path, extra: dict[str, Any], flags: list[str]
) -> None:
    paths = _write(tmp_path, ZONES)
    body = {"traces": [{"name": n, "content": t} for n, t in ZONES.items()], **extra}
    reply = api.post("/api/spot/zones", json=body)
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    assert doc == _cli_json("spot", "zones", *paths, *flags, "--json")
    assert [z["name"] for z in doc["zones"]] == ["zone-a", "zone-b", "zone-c"]
    assert doc["try_order"] and (doc["dollars"] is None) == (
        "prices" not in extra and "offer" not in extra
    )


LAKE = (
    "Time,InstanceType,Region,AZ,SPS,IF,OndemandPrice,SpotPrice,Savings\n"
    "2026-11-01 10:00:00,p5.48xlarge,us-east-1,use1-az1,3,3.0,98,40,59\n"
    "2026-11-01 10:00:00,p5.48xlarge,us-east-1,use1-az2,9,1.0,98,44,55\n"
    "2026-11-01 10:00:00,p5.48xlarge,us-west-2,usw2-az1,9,2.5,98,45,54\n"
)


def test_spot_zones_by_stored_signals_is_spot_zones_json(
    api: httpx.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPURENT_NOW", "2026-11-02T10:00:00+00:00")  # the same age for both
    (tmp_path / "lake.csv").write_text(LAKE)
    code, _, err = run_cli("spot", "signals", "import", str(tmp_path / "lake.csv"))
    assert code == 0, err
    for body, flags in (
        ({"instance": "p5.48xlarge"}, ["--instance", "p5.48xlarge"]),
        (
            {"offer": "aws/p5.48xlarge/us-east-1", "regions": ["us-east-1"]},
            ["--offer", "aws/p5.48xlarge/us-east-1", "--region", "us-east-1"],
        ),
    ):
        reply = api.post("/api/spot/zones", json=body)
        assert reply.status_code == 200, reply.text
        doc = reply.json()
        assert doc == _cli_json("spot", "zones", *flags, "--json")
        assert doc["zones"][0]["age_s"] == 86400.0
    assert len(doc["zones"]) == 2 and doc["price_source"].startswith("catalog offer aws/")


@pytest.mark.parametrize(
    "body",
    [
        {},
        {
            "instance": "p5.48xlarge",
            "offer": "aws/p5.48xlarge/us-east-1",
            "prices": "spot=1,ondemand=2",
        },
        {"traces": [{"name": "z.csv", "content": "nope\n"}]},
        {"traces": [{"name": "../z.csv", "content": "date,availability\n"}]},
        {"traces": [{"name": "z.csv", "content": _csv([1, 0, 1])}], "size": 0},
        {"instance": "p5.48xlarge", "prices": "spot=9,ondemand=2"},
    ],
)
def test_bad_zones_requests_are_one_line_4xx(api: httpx.Client, body: dict[str, Any]) -> None:
    reply = api.post("/api/spot/zones", json=body)
    assert reply.status_code in (400, 422), reply.text
    error = reply.json()["error"]
    assert "\n" not in error and "gpurent-serve-" not in error


def _tsv(days: int) -> str:
    """Hourly price changes over `days` days; weekday evenings (17-22 UTC) 10% cheaper."""
    lines = []
    for h in range(days * 24):
        t = MONDAY + timedelta(hours=h)
        evening = t.weekday() < 5 and 17 <= t.hour < 22
        price = (0.9 if evening else 1.0) + 0.001 * (h % 3)
        lines.append(f"use1-az1\tp3.2xlarge\tLinux/UNIX\t{price:.6f}\t{t:%Y-%m-%dT%H:%M:%S}+00:00")
    return "\n".join(lines) + "\n"


def _trace(n: int) -> str:
    lines = ["date,availability"]
    for i in range(n):
        t = MONDAY + timedelta(minutes=30 * i)
        lines.append(f"{t:%Y-%m-%d %H:%M:%S},{int(not (9 <= t.hour < 17))}")
    return "\n".join(lines) + "\n"


def test_spot_history_of_a_file_is_spot_history_json(api: httpx.Client, tmp_path: Path) -> None:
    (path,) = _write(tmp_path, {"may.tsv": _tsv(21)})
    body = {"files": [{"name": "may.tsv", "content": _tsv(21)}], "utc_offset": -5, "horizon": 2}
    reply = api.post("/api/spot/history", json=body)
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    assert doc == _cli_json(
        "spot", "history", path, "--utc-offset", "-5", "--horizon", "2", "--json"
    )
    assert len(doc["price_profile"]["means"]) == 168 and doc["answer"]


def test_spot_history_of_traces_with_prices_is_spot_history_json(
    api: httpx.Client, tmp_path: Path
) -> None:
    n = 24 * 15 * 2
    prices = json.dumps({"z1": [1.0 + 0.01 * (i % 7) for i in range(n)]})
    (trace,) = _write(tmp_path, {"z1.csv": _trace(n)})
    (price_file,) = _write(tmp_path, {"p.json": prices})
    body = {
        "trace": [{"name": "z1.csv", "content": _trace(n)}],
        "prices": prices,
        "evening": "18-23",
    }
    reply = api.post("/api/spot/history", json=body)
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    flags = ["--trace", trace, "--prices", price_file, "--evening", "18-23", "--json"]
    assert doc == _cli_json("spot", "history", *flags)
    assert doc["availability_business_hours"]["verdict"].startswith("yes")


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"files": [{"name": "a.tsv", "content": ""}]},
        {"files": [{"name": "a.tsv", "content": "not\ta\tprice\n"}]},
        {"files": [{"name": "a.tsv", "content": _tsv(3)}], "evening": "evening"},
        {"files": [{"name": "a.tsv", "content": _tsv(3)}], "instance_type": ["nope"]},
        {"files": [{"name": "a.tsv", "content": _tsv(3)}], "utc_offset": 20},
        {"files": [{"name": "a.zst", "content": "x"}]},
        {"prices": "{}"},
        {"trace": [{"name": "z1.csv", "content": _trace(48)}], "prices": '{"z1": [1, 2]}'},
    ],
)
def test_bad_history_requests_are_one_line_4xx(api: httpx.Client, body: dict[str, Any]) -> None:
    reply = api.post("/api/spot/history", json=body)
    assert reply.status_code in (400, 422), reply.text
    error = reply.json()["error"]
    assert "\n" not in error and "gpurent-serve-" not in error
