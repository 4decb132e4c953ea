"""The HTML pages from the Jinja2 templates: the same content as the string-built pages they
replaced (tests/report/golden), one shared layout, names escaped, templates in the wheel."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpurent import __version__
from gpurent.monitor.report import Report
from gpurent.plan import Plan
from gpurent.report.html import markdown_html, monitor_page, plan_page, spot_history_page
from gpurent.report.plan_format import price_age_line

from .page_inputs import MONITOR_SCENARIOS, monitor_window, spot_history
from .page_text import page_text

GOLDEN = Path(__file__).parent / "golden"


def _golden(name: str) -> str:
    return (GOLDEN / f"{name}.txt").read_text().strip()


def _monitor_page(scenario: str) -> str:
    diagnosis, cost, samples, thresholds = monitor_window(scenario)
    report = Report(diagnosis=diagnosis, cost=cost, notes=("a note",))
    return monitor_page(report, samples, thresholds)


@pytest.mark.parametrize("name", ["feasible_plan", "infeasible_plan", "scenario_plan"])
def test_plan_page_says_what_the_old_page_said(name: str, request: pytest.FixtureRequest) -> None:
    plan: Plan = request.getfixturevalue(name)
    assert page_text(plan_page(plan)) == _golden(f"plan-{name}")


@pytest.mark.parametrize("scenario", MONITOR_SCENARIOS)
def test_monitor_page_says_what_the_old_page_said(scenario: str) -> None:
    assert page_text(_monitor_page(scenario)) == _golden(f"monitor-{scenario}")


def test_spot_history_page_says_what_the_old_page_said() -> None:
    assert page_text(spot_history_page(spot_history())) == _golden("spot-history")


def test_every_page_shares_the_layout(feasible_plan: Plan) -> None:
    pages = {
        "plan": plan_page(feasible_plan),
        "monitor report": _monitor_page("idle"),
        "spot history": spot_history_page(spot_history()),
    }
    for kind, page in pages.items():
        assert page.startswith("<!doctype html>")
        assert f'<header class="site"><b>gpurent</b> {kind}</header>' in page
        footer = page[page.index('<footer class="site">') :]
        assert f"gpurent {__version__} · " in footer
        assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert price_age_line(feasible_plan) in pages["plan"].split("<footer")[1]
    assert "5 samples from the recorded store" in pages["monitor report"]
    assert "1 price series, 2023-03-06 00:00 to" in pages["spot history"]


def test_names_are_escaped(feasible_plan: Plan) -> None:
    from dataclasses import replace

    evil = "<script>alert(1)</script>"
    top = (replace(feasible_plan.top[0], instance_type=evil), *feasible_plan.top[1:])
    page = plan_page(replace(feasible_plan, top=top))
    assert evil not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    diagnosis, cost, samples, thresholds = monitor_window("busy")
    gpus = (replace(diagnosis.gpus[0], name=evil), *diagnosis.gpus[1:])
    report = Report(diagnosis=replace(diagnosis, gpus=gpus), cost=cost, notes=(evil,))
    page = monitor_page(report, samples, thresholds)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<script>" not in markdown_html(f"# {evil}\n\n| a |\n|---|\n| {evil} |\n")


def test_the_package_data_ships_every_template() -> None:
    import fnmatch
    import tomllib

    root = Path(__file__).resolve().parents[2]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["gpurent"]
    package = root / "src" / "gpurent"
    # the templates (pages/ included) and the dashboard's static files and spot example
    shipped = [
        p
        for folder in ("report/templates", "server/static", "server/data")
        for p in sorted((package / folder).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    ]
    assert any(p.parent.name == "pages" for p in shipped)
    for path in shipped:
        rel = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(rel, p) for p in patterns), rel
