"""Plan renderers: JSON against the published schema, Markdown, HTML with its SVG, terminal."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
from rich.console import Console

from gpurent.report.charts import Point
from gpurent.report.charts import scatter as scatter_svg
from gpurent.report.html import plan_page as render_html
from gpurent.report.plan_json import plan_to_dict
from gpurent.report.plan_markdown import render_markdown
from gpurent.report.plan_terminal import render_terminal

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "plan.schema.json").read_text())


def validate(doc):
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(json.dumps(doc)))


def test_json_matches_schema(feasible_plan, scenario_plan, infeasible_plan):
    for plan in (feasible_plan, scenario_plan, infeasible_plan):
        validate(plan_to_dict(plan))


def test_schema_rejects_a_broken_document(feasible_plan):
    doc = plan_to_dict(feasible_plan)
    doc["top"][0]["pricing"] = "barter"
    try:
        validate(doc)
    except jsonschema.ValidationError as exc:
        assert "barter" in str(exc)
    else:
        raise AssertionError("schema accepted an unknown pricing model")


def test_json_numbers_add_up(feasible_plan):
    doc = plan_to_dict(feasible_plan)
    best = doc["best"]
    cost = best["cost"]
    assert (
        abs(cost["compute_usd"] + cost["storage_usd"] + cost["egress_usd"] - cost["total_usd"])
        < 1e-6
    )
    assert cost["egress_usd"] > 0  # 50 GB egress was asked for
    assert best["num_gpus"] == best["gpus_per_node"] * best["nodes"]
    assert doc["stats"]["candidates_evaluated"] >= len(doc["top"])


def test_markdown_has_every_section(feasible_plan):
    md = render_markdown(feasible_plan)
    for heading in (
        "# Plan for",
        "## Ranked candidates",
        "## Pareto front",
        "## Recommendation",
        "### Memory per GPU",
        "### Alternatives",
        "## Assumptions",
    ):
        assert heading in md
    table_rows = [line for line in md.splitlines() if line.startswith("| 1 |")]
    assert len(table_rows) == 1


def test_markdown_infeasible_explains(infeasible_plan):
    md = render_markdown(infeasible_plan)
    assert "## No plan meets the request" in md and "deadline" in md
    assert "## Closest alternatives" in md


def test_html_is_self_contained_with_a_chart(feasible_plan):
    page = render_html(feasible_plan)
    assert page.startswith("<!doctype html>")
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    svg = re.search(r"<svg.*?</svg>", page, re.S)
    assert svg is not None
    root = ET.fromstring(svg.group(0))  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    circles = root.findall(f"{ns}circle")
    assert len([c for c in circles if c.get("class") == "best"]) == 1
    assert len([c for c in circles if c.get("class") in ("pareto", "best")]) >= 2
    assert "Scenario matrix" not in page


def test_html_scenario_mentions_matrix(scenario_plan):
    assert "Scenario matrix" in render_html(scenario_plan)


def test_svg_scales_and_escapes():
    svg = scatter_svg(
        [Point(x=0.1, y=1.0, label="a<b", highlight=True), Point(x=100.0, y=5000.0, label="c")],
        x_label="hours",
        y_label="USD",
    )
    root = ET.fromstring(svg)
    assert "(log)" in svg  # spans > 20x switch to log axes
    assert any((t.text or "") == "a<b" for t in root.iter("{http://www.w3.org/2000/svg}title"))
    assert scatter_svg([], x_label="x", y_label="y") == ""


def test_terminal_render(feasible_plan, infeasible_plan):
    buf = io.StringIO()
    render_terminal(feasible_plan, Console(file=buf, width=200, color_system=None))
    text = buf.getvalue()
    assert "Ranked candidates" in text and "Recommendation" in text and "Assumptions" in text
    buf = io.StringIO()
    render_terminal(infeasible_plan, Console(file=buf, width=200, color_system=None))
    assert "No plan meets the request" in buf.getvalue()


def test_every_renderer_shows_the_scenario_matrix(scenario_plan, feasible_plan):
    """The recommendation's sections come from one list; each renderer shows the matrix."""
    matrix = scenario_plan.explanation.matrix.summary
    assert f"### Scenario matrix\n\n- {matrix}" in render_markdown(scenario_plan)
    assert "Scenario matrix" not in render_markdown(feasible_plan)
    buf = io.StringIO()
    render_terminal(scenario_plan, Console(file=buf, width=200, color_system=None))
    assert "Scenario matrix" in buf.getvalue()


def test_terminal_narrow_table_below_140_columns(feasible_plan):
    buf = io.StringIO()
    render_terminal(feasible_plan, Console(file=buf, width=100, color_system=None))
    text = buf.getvalue()
    best = feasible_plan.best
    assert "Ranked candidates" in text and best.instance_type in text
    header = next(line for line in text.splitlines() if "offer" in line and "pricing" in line)
    assert "bottleneck" not in header and "layout" not in header  # those are in the panel
