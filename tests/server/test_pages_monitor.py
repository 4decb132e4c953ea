"""The monitor page over HTTP: without a machine it says how to start one; with machines it
lists them, its spend cells are /api/spend's figures, its first charts are the series reply's;
the budget form needs the CSRF token, stores the budget and redirects back, and bad input is
the page again with one line and a 4xx, never a 500."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Generator, Iterator
from pathlib import Path

import httpx
import pytest

from gpurent.monitor.push import TOKEN_HEADER
from gpurent.report.pages_monitor import SPEND_COLUMNS, cell_text, series_figure
from gpurent.server import ServerSettings
from tests.server.conftest import _serve

T0 = 1_800_000_000.0
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
ERROR = re.compile(r'<p class="error" role="alert">([^<]*)</p>')


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


def _start(tmp: Path, clock: Clock) -> Generator[str, None, None]:
    return _serve(ServerSettings(db=str(tmp / "fleet.db")), clock=clock)


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Iterator[str]:
    yield from _start(tmp_path_factory.mktemp("monpage"), clock)


@pytest.fixture()
def client(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=30) as c:
        yield c


def _push(client: httpx.Client, token: str, start_s: float, n: int, busy: float) -> None:
    rows = [
        {"timestamp": start_s + i, "gpu": g, "gpu_busy_pct": busy, "power_w": 300.0 + g}
        for i in range(n)
        for g in (0, 1)
    ]
    reply = client.post("/api/monitor/push", json={"rows": rows}, headers={TOKEN_HEADER: token})
    assert reply.status_code == 200, reply.text


def test_without_machines_the_page_says_how_to_start_one(tmp_path: Path, clock: Clock) -> None:
    server = _start(tmp_path, clock)
    base = next(server)
    try:
        page = httpx.get(f"{base}/monitor", timeout=30)
        assert page.status_code == 200
        assert 'id="no-machines"' in page.text
        assert "gpurent serve --demo" in page.text and "--push-token" in page.text
        assert "/api/machines" in page.text
    finally:
        server.close()


@pytest.fixture(scope="module")
def machines(url: str, clock: Clock) -> dict[str, str]:
    tokens = {}
    with httpx.Client(base_url=url, timeout=30) as c:
        for name, price in (("mon-a", 24.0), ("mon-b", 8.0)):
            body = {"name": name, "job": f"job-{name}", "price_usd_per_hour": price}
            reply = c.post("/api/machines", json=body)
            assert reply.status_code == 201, reply.text
            tokens[name] = reply.json()["token"]
        _push(c, tokens["mon-a"], T0, 60, 90.0)
        _push(c, tokens["mon-b"], T0, 30, 0.0)
    clock.t = T0 + 60
    return tokens


def _cells(page: str, machine: str) -> dict[str, str]:
    row = re.search(rf'<tr data-machine="{re.escape(machine)}">(.*?)</tr>', page, re.S)
    assert row is not None, machine
    return {k: html.unescape(t) for k, t in re.findall(r'data-key="([^"]+)"[^>]*>([^<]*)<', row[1])}


def test_the_page_lists_the_machines_with_the_spend_of_the_api(
    client: httpx.Client, machines: dict[str, str]
) -> None:
    page = client.get("/monitor")
    assert page.status_code == 200
    options = re.findall(r'<option value="([^"]+)"', page.text.split('id="machine-form"')[1])
    assert options[:2] == ["mon-a", "mon-b"]
    spend = client.get("/api/spend").json()
    for m in spend["machines"]:
        cells = _cells(page.text, m["machine"])
        assert cells == {key: cell_text(m[key], kind) for _, key, kind in SPEND_COLUMNS}
    a = next(m for m in spend["machines"] if m["machine"] == "mon-a")
    assert a["spent_usd"] > 0 and _cells(page.text, "mon-a")["spent_usd"].startswith("$")


def test_the_first_charts_are_the_series_reply(
    client: httpx.Client, machines: dict[str, str]
) -> None:
    page = client.get("/monitor", params={"machine": "mon-b"})
    assert page.status_code == 200
    assert 'data-live-url="/api/monitor/series?machine=mon-b"' in page.text
    found = re.search(
        r'<script type="application/json" id="monitor-activity-figure">(.*?)</script>',
        page.text,
        re.S,
    )
    assert found is not None
    series = client.get("/api/monitor/series", params={"machine": "mon-b"}).json()
    expected = series_figure(series, "activity_pct", "GPU utilisation (%)")
    assert json.loads(found[1]) == json.loads(json.dumps(expected))
    assert [len(t["x"]) for t in expected["data"]] == [30, 30]


def test_an_unknown_machine_is_a_404_with_one_line(
    client: httpx.Client, machines: dict[str, str]
) -> None:
    page = client.get("/monitor", params={"machine": "nope"})
    assert page.status_code == 404
    errors = ERROR.findall(page.text)
    assert len(errors) == 1 and "nope" in html.unescape(errors[0])


def _form(client: httpx.Client, **fields: str) -> dict[str, str]:
    page = client.get("/monitor")
    match = CSRF.search(page.text)
    assert match is not None
    return {
        "csrf": match[1],
        "machine": "mon-a",
        "scope": "job",
        "name": "job-mon-a",
        "limit_usd": "100",
        "thresholds": "0.5, 0.8, 1",
        "webhook_url": "",
        **fields,
    }


def _budget_names(client: httpx.Client) -> list[str]:
    return [b["name"] for b in client.get("/api/budgets").json()["budgets"]]


def test_the_budget_form_needs_the_csrf_token(
    client: httpx.Client, machines: dict[str, str]
) -> None:
    form = _form(client, name="csrf-job")
    del form["csrf"]
    reply = client.post("/monitor/budgets", data=form)
    assert reply.status_code == 403 and "CSRF" in reply.text
    wrong = client.post("/monitor/budgets", data={**form, "csrf": "x" * 43})
    assert wrong.status_code == 403
    assert "csrf-job" not in _budget_names(client)


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"limit_usd": "lots"}, "limit_usd: 'lots' is not a number"),
        ({"limit_usd": "-5"}, "limit_usd must be a positive number"),
        ({"limit_usd": "nan"}, "limit_usd must be a positive number"),
        ({"thresholds": "nan, 1"}, "thresholds"),
        ({"thresholds": ""}, "thresholds"),
        ({"thresholds": "half"}, "thresholds: 'half' is not a comma list"),
        ({"scope": "team"}, "scope must be 'job' or 'project'"),
        ({"name": "has space"}, "name"),
        ({"webhook_url": "ftp://x"}, "webhook_url must be an http:// or https:// URL"),
    ],
)
def test_bad_budget_input_is_the_form_again_with_one_line(
    client: httpx.Client, machines: dict[str, str], fields: dict[str, str], line: str
) -> None:
    form = _form(client, **fields)
    reply = client.post("/monitor/budgets", data=form)
    assert reply.status_code == 422, reply.text[:300]
    errors = [html.unescape(e) for e in ERROR.findall(reply.text)]
    assert len(errors) == 1 and errors[0].startswith(line) and "\n" not in errors[0]
    name, typed = next(iter(fields.items()))
    if name != "scope":  # a select: its options stay job and project
        assert f'value="{html.escape(typed)}"' in reply.text  # the form keeps what was typed


def test_a_budget_added_through_the_form_is_stored_and_shown(
    client: httpx.Client, machines: dict[str, str]
) -> None:
    form = _form(client, name="job-mon-a", limit_usd="0.25", thresholds="0.5,1")
    reply = client.post("/monitor/budgets", data=form)
    assert reply.status_code == 303 and reply.headers["location"] == "/monitor?machine=mon-a"
    (mine,) = [b for b in client.get("/api/budgets").json()["budgets"] if b["name"] == "job-mon-a"]
    assert mine["limit_usd"] == 0.25 and mine["thresholds"] == [0.5, 1.0]
    page = client.get(reply.headers["location"])
    row = re.search(r'<tr data-budget="job:job-mon-a">(.*?)</tr>', page.text, re.S)
    assert row is not None and "$0.25" in row[1] and mine["state"] in row[1]
    again = client.post("/monitor/budgets", data=_form(client, name="job-mon-a"))
    assert again.status_code == 409
    assert ERROR.findall(again.text) == ["job &#39;job-mon-a&#39; has a budget already"]
