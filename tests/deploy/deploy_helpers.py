"""Helpers of the deploy tests: plans from the real CLI, the CLI in-process."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from gpurent.cli.main import app


def run_cli(*args: str) -> tuple[int, str, str]:
    """Invoke the real CLI in-process; return (exit code, stdout, stderr)."""
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def plan_doc(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["plan", *args, "--json"])
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def first_index(doc: dict[str, Any], *, multi_node: bool) -> int:
    """The 1-based index in `top` of the first candidate with (or without) several nodes."""
    for i, c in enumerate(doc["top"], start=1):
        if (c["nodes"] > 1) == multi_node:
            return i
    raise AssertionError("no such candidate in the plan")
