"""POST /api/vendors/score returns the document of `gpurent vendors score FILE --json` for the
same vendors file (sent as JSON with its evidence files), and reads no path on the server."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _body(**extra: Any) -> dict[str, Any]:
    document = tomllib.loads((EXAMPLES / "vendors.toml").read_text(encoding="utf-8"))
    evidence = [
        {"name": f"vendors/{p.name}", "content": p.read_text(encoding="utf-8")}
        for p in sorted((EXAMPLES / "vendors").iterdir())
        if p.suffix in (".json", ".toml", ".txt")
    ]
    return {"document": document, "evidence": evidence, **extra}


def _cli_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *flags: str) -> Any:
    """The CLI on a copy of examples/vendors.toml and its evidence, run from the copy's folder
    (so that it names the files as the API does: relative to the document)."""
    shutil.copy(EXAMPLES / "vendors.toml", tmp_path / "vendors.toml")
    shutil.copytree(EXAMPLES / "vendors", tmp_path / "vendors")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("vendors", "score", "vendors.toml", *flags, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize(
    ("extra", "flags"),
    [
        ({}, []),
        (
            {
                "weights": "hardware=0.5,cost=0.5",
                "job": "50x4",
                "egress_gb": 10,
                "slice": "cost,hardware",
            },
            [
                "--weights",
                "hardware=0.5,cost=0.5",
                "--job",
                "50x4",
                "--egress-gb",
                "10",
                "--slice",
                "cost,hardware",
            ],
        ),
    ],
)
def test_vendors_score_is_vendors_score_json(
    api: httpx.Client,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra: dict[str, Any],
    flags: list[str],
) -> None:
    reply = api.post("/api/vendors/score", json=_body(**extra))
    assert reply.status_code == 200, reply.text
    doc = reply.json()
    assert doc == _cli_json(tmp_path, monkeypatch, *flags)
    assert doc["kind"] == "gpurent.vendors.score" and len(doc["scorecard"]["vendors"]) == 3
    assert "gpurent-serve-" not in reply.text  # the private folder is not in the reply


def test_an_evidence_path_outside_the_sent_files_is_refused(
    api: httpx.Client, tmp_path: Path
) -> None:
    # a valid bench result on the server's disk: without the confinement it would be read
    secret = tmp_path / "secret.json"
    shutil.copy(EXAMPLES / "vendors" / "a-bench-h100.json", secret)
    for path in (
        str(secret),
        "../../../../../../" + str(secret).lstrip("/"),
        "vendors/none.json",
        "vendors/a\x00.json",
    ):
        body = _body()
        body["document"]["provider"][0]["bench"] = {"H100": [path]}
        reply = api.post("/api/vendors/score", json=body)
        assert reply.status_code == 422, reply.text
        error = reply.json()["error"]
        assert "\n" not in error and ".bench.H100" in error
        assert "gpurent-serve-" not in error


@pytest.mark.parametrize(
    "body",
    [
        {"document": {}},
        {"document": {"provider": "x"}},
        {"document": {"provider": [{"name": 3}]}},
        {"document": {"provider": [{"name": "a"}]}, "job": "eight"},
        {"document": {"provider": [{"name": "a"}]}, "weights": "speed=1"},
        {"document": {"provider": [{"name": "a"}]}, "slice": "cost"},
        {"document": {}, "evidence": [{"name": "../x.json", "content": "{}"}]},
    ],
)
def test_bad_vendors_requests_are_one_line_422(api: httpx.Client, body: dict[str, Any]) -> None:
    reply = api.post("/api/vendors/score", json=body)
    assert reply.status_code == 422, reply.text
    assert "\n" not in reply.json()["error"]


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-1"])
def test_non_finite_or_negative_job_figures_are_422(api: httpx.Client, text: str) -> None:
    for field in ("egress_gb", "storage_gb"):
        body = f'{{"document": {{"provider": [{{"name": "a"}}]}}, "{field}": {text}}}'
        reply = api.post(
            "/api/vendors/score", content=body, headers={"content-type": "application/json"}
        )
        assert reply.status_code == 422, (field, text, reply.text)
        assert field.replace("_", "-") in reply.json()["error"]  # names the CLI's flag


@pytest.mark.parametrize("names", [["vendors", "vendors/a.json"], ["vendors/a.json", "vendors"]])
def test_a_file_named_as_another_files_folder_is_one_line_422(
    api: httpx.Client, names: list[str]
) -> None:
    body = {
        "document": {"provider": [{"name": "a"}]},
        "evidence": [{"name": n, "content": "{}"} for n in names],
    }
    reply = api.post("/api/vendors/score", json=body)
    assert reply.status_code == 422, reply.text
    assert "vendors" in reply.json()["error"] and "gpurent-serve-" not in reply.text
