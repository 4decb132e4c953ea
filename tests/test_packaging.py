"""pyproject.toml describes the package as it is: data globs that match, extras that exist."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "gpurent"


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _globs() -> list[str]:
    globs: list[str] = _pyproject()["tool"]["setuptools"]["package-data"]["gpurent"]
    return globs


def test_every_package_data_glob_matches_a_file() -> None:
    empty = [g for g in _globs() if not any(p.is_file() for p in PACKAGE.glob(g))]
    assert empty == [], f"package-data globs that match nothing under src/gpurent: {empty}"


def test_every_data_file_in_the_package_is_shipped() -> None:
    shipped = {p for g in _globs() for p in PACKAGE.glob(g) if p.is_file()}
    data = {
        p
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts
    }
    missing = sorted(str(p.relative_to(PACKAGE)) for p in data - shipped)
    assert missing == [], f"files under src/gpurent that no package-data glob ships: {missing}"


def test_the_all_extra_names_only_extras_that_exist() -> None:
    extras: dict[str, list[str]] = _pyproject()["project"]["optional-dependencies"]
    (spec,) = extras["all"]
    assert spec.startswith("gpurent[") and spec.endswith("]")
    named = spec.removeprefix("gpurent[").removesuffix("]").split(",")
    assert [n for n in named if n not in extras or n in {"all", "dev"}] == []


def test_pre_commit_runs_the_same_checks_as_make_lint_and_typecheck() -> None:
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entries = {hook["entry"] for repo in config["repos"] for hook in repo["hooks"]}
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for entry in entries:
        command = entry.replace(".venv/bin/", "$(BIN)/")
        assert command in makefile, f"hook {entry!r} is no step of make lint/typecheck"
    assert len(entries) == 4


# The module each extra's distribution is imported as, where the names differ.
_MODULE_OF = {
    "nvidia-ml-py": "pynvml",
    "prometheus-client": "prometheus_client",
    "pillow": "PIL",
}
# Distributions an extra installs for another library's sake, not imported by gpurent itself.
_NOT_IMPORTED = {
    "accelerate": "transformers.Trainer (what the HF callback runs under) needs it",
    "psycopg": "SQLAlchemy's postgresql+psycopg dialect imports it for a PostgreSQL store URL",
    "plotly": "gpurent serve serves its package data, plotly.min.js (server/static_files.py)",
}


def _imported_in_src(module: str) -> bool:
    import re

    pattern = re.compile(
        rf"^\s*(import|from) {re.escape(module)}\b|require\(\s*[\"']{re.escape(module)}[\"']",
        re.MULTILINE,
    )
    return any(pattern.search(p.read_text(encoding="utf-8")) for p in PACKAGE.rglob("*.py"))


def test_every_extra_installs_only_what_gpurent_uses() -> None:
    import re

    extras: dict[str, list[str]] = _pyproject()["project"]["optional-dependencies"]
    unused = []
    for extra, requirements in extras.items():
        if extra in {"all", "dev"}:
            continue
        for requirement in requirements:
            dist = re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower()
            module = _MODULE_OF.get(dist, dist.replace("-", "_"))
            if dist not in _NOT_IMPORTED and not _imported_in_src(module):
                unused.append(f"{extra}: {dist}")
    assert unused == [], f"extras installing packages nothing in src/gpurent imports: {unused}"
