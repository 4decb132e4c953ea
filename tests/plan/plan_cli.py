"""`gpurent plan` through the real CLI for the plan tests: one run helper and the `--json`
readers that check each document against its published schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from click.testing import Result
from typer.testing import CliRunner

from gpurent.cli.main import app

DOCS = Path(__file__).resolve().parents[2] / "docs"
PLAN_SCHEMA = json.loads((DOCS / "plan.schema.json").read_text())
SERVE_PLAN_SCHEMA = json.loads((DOCS / "serve-plan.schema.json").read_text())


def run_plan(*args: str, env: dict[str, str] | None = None) -> Result:
    """`gpurent plan ARGS` in-process."""
    return CliRunner().invoke(app, ["plan", *args], env=env)


def _json(schema: dict[str, Any], args: tuple[str, ...], code: int) -> dict[str, Any]:
    r = run_plan(*args, "--json")
    assert r.exit_code == code, r.stderr or r.stdout
    doc: dict[str, Any] = json.loads(r.stdout)
    jsonschema.Draft202012Validator(schema).validate(doc)
    return doc


def plan_json(*args: str, code: int = 0) -> dict[str, Any]:
    """`gpurent plan ARGS --json`, exiting with `code`, valid against docs/plan.schema.json."""
    return _json(PLAN_SCHEMA, args, code)


def serve_json(*args: str, code: int = 0) -> dict[str, Any]:
    """`gpurent plan ARGS --json` for a serving plan, valid against docs/serve-plan.schema.json."""
    return _json(SERVE_PLAN_SCHEMA, args, code)
