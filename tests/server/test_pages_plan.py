"""The planner pages over HTTP: the untouched form plans on the bundled catalog, the table and
the chart's figure are the plan's, bad input is the form again with one line and a 4xx."""

from __future__ import annotations

import html
import json
import re

import httpx
import pytest

from gpurent.server.plan_api import PlanRequest, plan_for

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
ERROR = re.compile(r'<p class="error" role="alert">([^<]*)</p>')


def form_defaults(page: str) -> dict[str, str | list[str]]:
    """The values a browser would send for the untouched form."""
    fields: dict[str, str | list[str]] = {}
    for name, value in re.findall(r'<input name="([^"]+)" value="([^"]*)"', page):
        fields[name] = html.unescape(value)
    for name, body in re.findall(r'<select name="([^"]+)">(.*?)</select>', page, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected>', body)
        fields[name] = chosen.group(1) if chosen else re.findall(r'value="([^"]*)"', body)[0]
    fields["pricing"] = re.findall(r'name="pricing" value="([^"]+)" checked', page)
    match = CSRF.search(page)
    assert match is not None
    fields["csrf"] = match.group(1)
    return fields


@pytest.fixture()
def form(api: httpx.Client) -> dict[str, str | list[str]]:
    page = api.get("/plan")
    assert page.status_code == 200
    return form_defaults(page.text)


def test_root_is_the_planner_form(api: httpx.Client) -> None:
    page = api.get("/")
    assert page.status_code == 200
    assert '<form class="planner" method="post" action="/plan"' in page.text
    assert 'aria-current="page">Plan</a>' in page.text


def test_untouched_form_plans_like_the_api(api: httpx.Client, form: dict) -> None:
    reply = api.post("/plan", data=form)
    assert reply.status_code == 200, ERROR.findall(reply.text)
    plan, _ = plan_for(PlanRequest(preset="llama-lora", pricing=["on-demand", "spot"]))
    rows = re.findall(
        r"<tr(?: class=\"best\")?><td>(\d+)</td><td>([^<]+)</td><td>([^<]+)</td>",
        reply.text.split('<div id="ranked">')[1].split("</table>")[0],
    )
    # a multi-node candidate's instance reads "TYPE xN", as in every plan table
    want = [
        (c.provider, c.instance_type + (f" x{c.nodes}" if c.nodes > 1 else "")) for c in plan.top
    ]
    assert [(r[1], r[2]) for r in rows] == want
    assert plan.explanation is not None
    assert html.escape(plan.explanation.headline, quote=True) in reply.text
    island = reply.text.split('<script type="application/json" id="plan-chart-figure">')[1]
    figure = json.loads(island.split("</script>")[0])
    names = [t["name"] for t in figure["data"]]
    assert names == ["Pareto front", "other ranked", "recommendation"]
    best = figure["data"][2]
    assert plan.best is not None
    assert best["x"] == [pytest.approx(plan.best.time_s / 3600.0)]
    assert best["y"] == [pytest.approx(plan.best.cost_usd)]
    low = plan.best.cost_usd - plan.best.cost_low_usd
    assert best["error_y"]["arrayminus"] == [pytest.approx(low)]
    assert len(figure["data"][0]["x"]) == len(plan.pareto)


@pytest.mark.parametrize(
    ("change", "status", "line"),
    [
        ({"preset": "llama-lorra"}, 404, "unknown preset"),
        ({"tokens": "many"}, 422, "tokens: 'many' is not a number"),
        ({"pricing": []}, 422, "pricing: tick at least one pricing model"),
        ({"deadline_hours": "-3"}, 422, "deadline_hours"),
        ({"gpus": "H1000"}, 404, "H1000"),
        ({"preset": "", "model": ""}, 422, "say what to run"),
    ],
)
def test_bad_input_is_the_form_again_with_one_line(
    api: httpx.Client, form: dict, change: dict, status: int, line: str
) -> None:
    reply = api.post("/plan", data={**form, **change})
    assert reply.status_code == status
    errors = [html.unescape(e) for e in ERROR.findall(reply.text)]
    assert len(errors) == 1 and line in errors[0] and "\n" not in errors[0]
    assert '<form class="planner"' in reply.text  # the form again, with what was typed
    for name, value in change.items():
        if name in {"tokens", "gpus", "deadline_hours"}:  # text fields keep what was typed
            assert f'value="{html.escape(value)}"' in reply.text


def test_nothing_fits_is_409_with_the_reasons(api: httpx.Client, form: dict) -> None:
    reply = api.post("/plan", data={**form, "budget_usd": "0.0001"})
    assert reply.status_code == 409
    assert "No plan meets the request" in reply.text
