"""Shared fixtures: a CLI runner and an isolated user data directory for every test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep user data (fetched catalogs, calibrations) inside the test's tmp dir."""
    monkeypatch.setenv("GPURENT_HOME", str(tmp_path / "gpurent-home"))
    yield


@pytest.fixture()
def cli() -> CliRunner:
    return CliRunner()


def run_cli(*args: str) -> tuple[int, str, str]:
    """Invoke the real CLI in-process; return (exit code, stdout, stderr)."""
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def cli_json(*args: str) -> dict[str, Any]:
    """`run_cli(*args)` that must exit 0 and print one JSON object; that object."""
    code, out, err = run_cli(*args)
    assert code == 0, err
    doc = json.loads(out)
    assert isinstance(doc, dict), doc
    return doc


def one_line_error(code: int, out: str, err: str, *words: str, exit_code: int = 2) -> str:
    """Check a `run_cli` result is the CLI's one-line error: exit `exit_code`, a single
    "error: ..." line on stderr holding every one of `words`, and no traceback; return it."""
    assert code == exit_code, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert "Traceback" not in out + err
    return lines[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """GPU tests run only where CUDA is present; elsewhere they are reported as skipped."""
    try:
        import torch

        has_cuda = bool(torch.cuda.is_available())
    except ImportError:
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none on this machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
