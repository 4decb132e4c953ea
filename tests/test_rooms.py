"""The rooms of docs/architecture.md hold: the import contracts pass, and a leak breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter", reason="import-linter (dev extra) is not installed")

ROOT = Path(__file__).resolve().parents[1]
LINT = "from importlinter.cli import lint_imports_command as c; c(['--no-cache'])"


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LINT],
        cwd=root,
        # import-linter prints through rich: a narrow COLUMNS left in the environment would wrap
        # the "X is not allowed to import Y" lines the leak tests look for
        env={**os.environ, "PYTHONPATH": str(root / "src"), "COLUMNS": "200"},
        stdin=subprocess.DEVNULL,  # nor the width of a terminal on stdin (rich asks it too)
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_contracts_hold_on_the_code() -> None:
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


# (module to add a line to, the line, what import-linter must say)
LEAKS = [
    (
        "store/samples.py",
        "from gpurent.monitor import sample",
        "gpurent.store is not allowed to import gpurent.monitor",
    ),
    (
        "monitor/instance.py",
        "from gpurent.runtime import notices",
        "gpurent.monitor is not allowed to import gpurent.runtime",
    ),
    (
        "spot/io/trace.py",
        "from gpurent.catalog import offers",
        "gpurent.spot is not allowed to import gpurent.catalog",
    ),
    (
        "runtime/redact.py",
        "from gpurent.spot.io import trace",
        "gpurent.runtime is not allowed to import gpurent.spot.io",
    ),
    (
        "bench/verdict.py",
        "from gpurent.plan import planner",
        "gpurent.bench is not allowed to import gpurent.plan",
    ),
    (
        "estimate/memory.py",
        "from gpurent.report import plan_json",
        "gpurent.estimate is not allowed to import gpurent.report",
    ),
    (
        "bench/verdict.py",
        "from gpurent.fleet import rank",
        "gpurent.bench is not allowed to import gpurent.fleet",
    ),
    (
        "fleet/rank.py",
        "from gpurent.monitor import rules",
        "gpurent.fleet is not allowed to import gpurent.monitor",
    ),
    (
        "monitor/rules.py",
        "from gpurent.report import monitor_live",
        "gpurent.monitor is not allowed to import gpurent.report",
    ),
    (
        "fleet/rank.py",
        "from gpurent.report import fleet",
        "gpurent.fleet is not allowed to import gpurent.report",
    ),
    (
        "deploy/render.py",
        "from gpurent.fleet import rank",
        "gpurent.deploy is not allowed to import gpurent.fleet",
    ),
    (
        "spot/io/trace.py",
        "from gpurent.spot.sim import job_market",
        "gpurent.spot.io is not allowed to import gpurent.spot.sim",
    ),
    (
        "spot/sim/lifetimes.py",
        "from gpurent.spot.analytics import survival",
        "gpurent.spot.sim is not allowed to import gpurent.spot.analytics",
    ),
    ("newroom/__init__.py", "", "- gpurent.newroom"),  # every room must be placed in the layers
]


@pytest.mark.parametrize(("module", "line", "message"), LEAKS, ids=[m for m, _, _ in LEAKS])
def test_a_leak_breaks_a_contract(tmp_path: Path, module: str, line: str, message: str) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(
        ROOT / "src" / "gpurent",
        tmp_path / "src" / "gpurent",
        ignore=shutil.ignore_patterns("__pycache__", "data"),
    )
    target = tmp_path / "src" / "gpurent" / module
    target.parent.mkdir(exist_ok=True)
    with target.open("a", encoding="utf-8") as f:
        f.write(f"\n{line}\n")
    done = _lint_imports(tmp_path)
    assert done.returncode != 0, done.stdout + done.stderr
    assert message in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("module", "banned"),
    [
        ("monitor/leak.py", True),
        ("bench/leak.py", True),
        ("fleet/leak.py", True),
        ("report/leak.py", False),
        ("cli/leak.py", False),
    ],
)
def test_rich_renders_only_in_report_and_cli(tmp_path: Path, module: str, banned: bool) -> None:
    pytest.importorskip("ruff", reason="ruff (dev extra) is not installed")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "src" / "gpurent" / module
    target.parent.mkdir(parents=True)
    target.write_text('"""A module."""\n\nfrom rich.table import Table\n\n__all__ = ["Table"]\n')
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "TID251", "src"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode != 0) == banned, done.stdout + done.stderr
    assert ("terminal rendering lives in gpurent.report" in done.stdout) == banned
