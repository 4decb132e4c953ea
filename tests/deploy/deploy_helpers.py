"""Helpers of the deploy tests: plans from the real CLI, the engines' tools (the CLI runner
itself is `tests.conftest.run_cli`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import run_cli
from typer.testing import CliRunner

from gpurent.cli.main import app


def plan_doc(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["plan", *args, "--json"])
    assert result.exit_code == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def first_index(doc: dict[str, Any], *, multi_node: bool) -> int:
    """The 1-based index in `top` of the first candidate on one node, or (`multi_node`) on
    exactly two nodes, the size of the tests' two-host lists."""
    for i, c in enumerate(doc["top"], start=1):
        if c["nodes"] == (2 if multi_node else 1):
            return i
    raise AssertionError("no such candidate in the plan")


REPO = Path(__file__).resolve().parents[2]


def engines_bin() -> Path:
    """The engines' virtualenv bin directory (`make engines`): $GPURENT_ENGINES_BIN, default
    .venv-engines/bin. Missing: the test fails under CI=true and is skipped elsewhere."""
    path = Path(os.environ.get("GPURENT_ENGINES_BIN") or REPO / ".venv-engines" / "bin")
    if not (path / "python").exists():
        reason = f"the engines' virtualenv is missing at {path}; run `make engines`"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def engine_python(
    code: str,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout_s: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run `code` with the engines' Python (their own packages, not gpurent's venv)."""
    return engine_tool("python", "-c", code, *args, env=env, cwd=cwd, timeout_s=timeout_s)


def engine_tool(
    tool: str,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout_s: float = 120,
) -> subprocess.CompletedProcess[str]:
    full = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTEST_CURRENT_TEST"}
    }
    full.update(env or {})
    return subprocess.run(
        [str(engines_bin() / tool), *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd,
        timeout=timeout_s,
        check=False,
    )


def render(plan_file: Path, fmt: str, out: Path, *extra: str) -> Path:
    code, _, stderr = run_cli(
        "deploy", "render", str(plan_file), "--format", fmt, "-o", str(out), *extra
    )
    assert code == 0, stderr
    return out
