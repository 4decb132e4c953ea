"""GET /api/bench/results lists what `gpurent bench` saved, each result with its verdict: the
document of `gpurent bench results --json`, over HTTP."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import run_cli

EVIDENCE = Path(__file__).resolve().parents[2] / "examples" / "vendors"


def _cli_json(*flags: str) -> Any:
    code, out, err = run_cli("bench", "results", *flags, "--json")
    assert code == 0, err
    return json.loads(out)


def _saved_folder() -> Path:
    """$GPURENT_HOME/bench with two results (bench --json files, written by gpurent's own code
    in examples/vendors/make_evidence.py) and one file that is not a result."""
    folder = Path(os.environ["GPURENT_HOME"]) / "bench"
    folder.mkdir(parents=True)
    first = json.loads((EVIDENCE / "a-bench-h100.json").read_text(encoding="utf-8"))
    second = json.loads((EVIDENCE / "c-bench-h100.json").read_text(encoding="utf-8"))
    first["created_at"], second["created_at"] = (
        "2026-11-01T10:00:00+00:00",
        "2026-11-02T10:00:00+00:00",
    )
    (folder / "bench-20261101T100000Z.json").write_text(json.dumps(first))
    (folder / "bench-20261102T100000Z.json").write_text(json.dumps(second))
    (folder / "notes.json").write_text('{"not": "a result"}')
    return folder


def test_no_saved_results_is_an_empty_list(api: httpx.Client) -> None:
    reply = api.get("/api/bench/results")
    assert reply.status_code == 200, reply.text
    assert reply.json() == _cli_json()
    assert reply.json()["count"] == 0 and reply.json()["results"] == []


@pytest.mark.parametrize(("params", "flags"), [({}, []), ({"limit": 1}, ["--limit", "1"])])
def test_bench_results_is_bench_results_json(
    api: httpx.Client, params: dict[str, Any], flags: list[str]
) -> None:
    folder = _saved_folder()
    reply = api.get("/api/bench/results", params=params)
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    assert doc == _cli_json(*flags)
    assert doc["total"] == 2 and doc["count"] == len(doc["results"]) == (params.get("limit") or 2)
    newest = doc["results"][0]
    assert newest["file"] == "bench-20261102T100000Z.json"
    row = newest["verdict"][0]
    assert {"check", "measured", "expected", "fraction", "status"} <= set(row)
    assert sum(newest["verdict_counts"].values()) == len(newest["verdict"])
    assert [u["file"] for u in doc["unreadable"]] == ["notes.json"]
    assert str(folder) not in reply.text  # the server's folder is not shown


def test_the_cli_reads_another_folder_and_prints_a_table(tmp_path: Path) -> None:
    shutil.copy(EVIDENCE / "b-bench-h100.json", tmp_path / "b.json")
    assert _cli_json("--dir", str(tmp_path))["results"][0]["file"] == "b.json"
    code, out, err = run_cli("bench", "results", "--dir", str(tmp_path))
    assert code == 0, err
    assert "b.json" in out and "1 saved bench result" in out


@pytest.mark.parametrize("limit", ["0", "-3", "many"])
def test_a_bad_limit_is_one_line_422(api: httpx.Client, limit: str) -> None:
    reply = api.get("/api/bench/results", params={"limit": limit})
    assert reply.status_code == 422, reply.text
    assert "limit" in reply.json()["error"] and "\n" not in reply.json()["error"]
    code, _, err = run_cli("bench", "results", "--limit", limit)
    assert code == 2 and err.count("\n") <= 1
