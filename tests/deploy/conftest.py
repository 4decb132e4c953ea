"""Plan documents made by the real CLI, shared by the deploy tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deploy_helpers import plan_doc


@pytest.fixture(scope="session")
def llama_plan() -> dict[str, Any]:
    """`gpurent plan --preset llama-lora --deadline 30m --json`: a 30-minute deadline ranks
    single-node and multi-node candidates together (without one, the setup time of extra nodes
    keeps every multi-node candidate out of the top ten)."""
    doc = plan_doc("--preset", "llama-lora", "--deadline", "30m")
    nodes = {c["nodes"] for c in doc["top"]}
    assert {1, 2} <= nodes, f"the test plan needs 1- and 2-node candidates: {sorted(nodes)}"
    return doc


@pytest.fixture()
def plan_file(tmp_path: Path, llama_plan: dict[str, Any]) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(llama_plan), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def default_plan() -> dict[str, Any]:
    """`gpurent plan --preset llama-lora --json`, as a new user runs it (one node ranks first)."""
    doc = plan_doc("--preset", "llama-lora")
    assert doc["top"][0]["nodes"] == 1, "the default plan's best candidate is one node"
    return doc


@pytest.fixture()
def single_plan_file(tmp_path: Path, default_plan: dict[str, Any]) -> Path:
    path = tmp_path / "default-plan.json"
    path.write_text(json.dumps(default_plan), encoding="utf-8")
    return path
