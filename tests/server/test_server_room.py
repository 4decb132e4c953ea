"""The web room's exemption lifts the fastapi ban alone: no other banned import there, and no
room but the CLI imports the server."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "gpurent"
STILL_BANNED = ("torch", "pynvml", "rich", "urllib.request", "urllib.error", "http.client")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _banned(name: str) -> bool:
    return any(name == b or name.startswith(b + ".") for b in STILL_BANNED)


def test_the_server_room_imports_nothing_else_that_is_banned() -> None:
    files = sorted((SRC / "server").glob("*.py"))
    assert len(files) >= 5
    found = {f.name: sorted(n for n in _imports(f) if _banned(n)) for f in files}
    assert {k: v for k, v in found.items() if v} == {}
    assert any("fastapi" in _imports(f) for f in files)


def test_only_the_cli_imports_the_server() -> None:
    users = sorted(
        str(f.relative_to(SRC))
        for f in SRC.rglob("*.py")
        if not f.is_relative_to(SRC / "server")
        and any(n == "gpurent.server" or n.startswith("gpurent.server.") for n in _imports(f))
    )
    assert users and all(u.startswith("cli/") for u in users), users


def test_fastapi_stays_banned_outside_the_server_room() -> None:
    text = (SRC.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"src/gpurent/server/**" = ["TID251"]' in text
    assert '"fastapi".msg' in text
