"""Plan documents made by the real CLI, shared by the deploy tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deploy_helpers import plan_doc


@pytest.fixture(scope="session")
def llama_plan() -> dict[str, Any]:
    """`gpurent plan --preset llama-lora --json` (single-node best, multi-node candidates too)."""
    return plan_doc("--preset", "llama-lora")


@pytest.fixture()
def plan_file(tmp_path: Path, llama_plan: dict[str, Any]) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(llama_plan), encoding="utf-8")
    return path
