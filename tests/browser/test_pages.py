"""The dashboard in a real browser: the planner form submitted and its table and chart read back
(the plotly div's data, values not pixels), the offers filtered through the form, the spot,
bench and vendors pages drawn, the live helper following an endpoint, and the token login."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import Page

ROOT = Path(__file__).resolve().parents[2]


def test_planner_form_gives_the_ranked_table_and_the_chart(app_url: str, page: Page) -> None:
    from gpurent.server.plan_api import PlanRequest, plan_for

    page.page.goto(f"{app_url}/")
    page.page.click("#plan-form button[type=submit]")
    page.page.wait_for_selector("#plan-chart .main-svg")
    plan, _ = plan_for(PlanRequest(preset="llama-lora", pricing=["on-demand", "spot"]))
    rows = page.page.locator("#ranked tbody tr")
    assert rows.count() == len(plan.top)
    first = rows.nth(0).locator("td")
    assert [first.nth(i).inner_text() for i in (1, 2)] == [
        plan.top[0].provider,
        plan.top[0].instance_type,
    ]
    traces: list[dict[str, Any]] = page.page.evaluate(
        """() => document.getElementById('plan-chart').data.map(t => ({
            name: t.name, x: t.x, y: t.y,
            low: t.error_y.arrayminus, high: t.error_y.array}))"""
    )
    assert [t["name"] for t in traces] == ["Pareto front", "other ranked", "recommendation"]
    best = traces[2]
    assert plan.best is not None
    assert best["x"] == [pytest.approx(plan.best.time_s / 3600.0)]
    assert best["y"] == [pytest.approx(plan.best.cost_usd)]
    assert best["low"] == [pytest.approx(plan.best.cost_usd - plan.best.cost_low_usd)]
    assert best["high"] == [pytest.approx(plan.best.cost_high_usd - plan.best.cost_usd)]
    front = sorted(plan.pareto, key=lambda c: c.time_s)
    assert traces[0]["y"] == [pytest.approx(c.cost_usd) for c in front]
    assert page.page.locator(".rec h2").inner_text() == "Recommendation"
    page.screenshot("plan")
    assert page.errors == []


def test_planner_bad_input_shows_one_line(app_url: str, page: Page) -> None:
    page.page.goto(f"{app_url}/plan")
    page.page.fill("input[name=tokens]", "a lot")
    page.page.click("#plan-form button[type=submit]")
    alert = page.page.locator("p.error")
    assert alert.inner_text() == "tokens: 'a lot' is not a number"
    assert page.page.input_value("input[name=tokens]") == "a lot"


def test_offers_filtered_through_the_form(app_url: str, page: Page) -> None:
    import httpx

    page.page.goto(f"{app_url}/offers")
    page.page.fill("input[name=gpu]", "H100")
    page.page.select_option("select[name=provider]", "aws")
    page.page.select_option("select[name=pricing]", "spot")
    page.page.click("#offers-form button[type=submit]")
    page.page.wait_for_url("**/offers?gpu=H100&provider=aws*")
    cells = page.page.locator("#offers tbody tr td:nth-child(2)").all_inner_texts()
    doc = httpx.get(
        f"{app_url}/api/offers",
        params={"gpu": "H100", "provider": "aws", "spot": True, "limit": 0},
        timeout=30,
    ).json()
    assert cells == [o["instance_type"] for o in doc["offers"]] and cells
    ages = page.page.locator("#offers tbody tr td:nth-child(10)").all_inner_texts()
    assert [a.split(" ")[0] for a in ages] == [str(o["price_age_days"]) for o in doc["offers"]]
    page.screenshot("offers")
    assert page.errors == []


def test_spot_page_draws_the_heat_map_of_the_traces(app_url: str, page: Page) -> None:
    from gpurent.spot.analytics.history import availability_profile
    from gpurent.spot.io.trace_io import load_traces

    page.page.goto(f"{app_url}/spot")
    page.page.wait_for_selector("#spot-heatmap .main-svg")
    z: list[list[float | None]] = page.page.evaluate(
        "() => document.getElementById('spot-heatmap').data[0].z"
    )
    traces, _ = load_traces(sorted((ROOT / "src/gpurent/server/data/spot").glob("*.csv")))
    means = availability_profile(traces).means
    assert [v for day in z for v in day] == [pytest.approx(m) for m in means]
    assert page.page.locator("#simulation tbody tr").count() == 4
    page.screenshot("spot")
    assert page.errors == []


def test_vendors_and_bench_pages(app_url: str, page: Page) -> None:
    page.page.goto(f"{app_url}/vendors")
    page.page.wait_for_selector("#vendors-sensitivity .main-svg")
    names: list[str] = page.page.evaluate(
        "() => document.getElementById('vendors-sensitivity').data[0].text.flat()"
        ".filter(n => n !== null)"
    )
    assert set(names) <= {"Example A", "Example B", "Example C"} and names
    page.screenshot("vendors")
    page.page.goto(f"{app_url}/bench")
    assert "gpurent bench --quick" in page.page.locator("#no-results").inner_text()
    page.screenshot("bench")
    assert page.errors == []


def test_live_follows_an_endpoint(app_url: str, page: Page) -> None:
    calls = {"n": 0}

    def answer(route: Any) -> None:
        calls["n"] += 1
        n = calls["n"]
        series = {
            "series": [{"name": "GPU 0", "x": list(range(n)), "y": [10 * i for i in range(n)]}]
        }
        route.fulfill(status=200, content_type="application/json", body=json.dumps(series))

    page.page.route("**/fake/series", answer)
    page.page.goto(f"{app_url}/plan")
    page.page.wait_for_function("() => window.gpurent && window.Plotly")
    page.page.evaluate(
        """() => { const div = document.createElement('div'); div.id = 'live';
                   document.body.appendChild(div);
                   window.stopLive = gpurent.live('/fake/series', div, 1, 'series'); }"""
    )
    page.page.wait_for_function(
        "() => { const d = document.getElementById('live').data; return d && d[0].x.length >= 3; }",
        timeout=10_000,
    )
    y = page.page.evaluate("() => document.getElementById('live').data[0].y")
    assert y[:3] == [0, 10, 20]
    page.page.evaluate("() => window.stopLive()")
    assert page.errors == []


def test_token_login_from_the_browser(browser_context: Any) -> None:
    from gpurent.server import ServerSettings
    from tests.server.conftest import TOKEN, _serve

    server = _serve(ServerSettings(token=TOKEN))
    url = next(server)
    tab = browser_context.new_page()
    try:
        tab.goto(f"{url}/offers?token={TOKEN}&gpu=A100")
        assert tab.url == f"{url}/offers?gpu=A100"  # the token left the address
        assert TOKEN not in tab.content()
        cookie = next(c for c in browser_context.cookies(url) if c["name"] == "gpurent_token")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert cookie["value"] != TOKEN
        tab.goto(f"{url}/plan")
        tab.click("#plan-form button[type=submit]")
        tab.wait_for_selector("#plan-chart .main-svg")
    finally:
        tab.close()
        browser_context.clear_cookies()
        next(server, None)
