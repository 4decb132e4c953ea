"""docs/architecture.md names real code: every dotted `gpurent.…` name in it imports."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
NAME = re.compile(r"\bgpurent(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def dotted_names(text: str) -> list[str]:
    return sorted(set(NAME.findall(text)))


def resolves(name: str) -> bool:
    """Import the longest module prefix of `name`, then look the rest up as attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def test_the_doc_traces_a_plan_call_with_many_names() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "## One `gpurent plan` call, traced" in text
    assert len(dotted_names(text)) >= 30


@pytest.mark.parametrize("name", dotted_names(DOC.read_text(encoding="utf-8")))
def test_every_dotted_name_in_the_architecture_doc_imports(name: str) -> None:
    assert resolves(name), f"docs/architecture.md names {name}, which does not import"


def test_a_wrong_name_is_caught() -> None:
    assert resolves("gpurent.plan.planner.make_plan")
    assert not resolves("gpurent.plan.planner.make_plans")
    assert not resolves("gpurent.no_such_room.thing")
