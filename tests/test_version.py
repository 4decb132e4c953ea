"""One version source: the version a wheel gets is `gpurent.__version__`, which the CLI prints."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from setuptools.config.pyprojecttoml import read_configuration

import gpurent

ROOT = Path(__file__).resolve().parents[1]
PEP440 = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?")


def test_pyproject_takes_the_version_from_the_package_attribute() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"], "the version is written in __init__.py only"
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gpurent.__version__"}


def test_the_built_version_is_the_package_version() -> None:
    config = read_configuration(ROOT / "pyproject.toml", expand=True)
    assert config["project"]["version"] == gpurent.__version__
    assert PEP440.fullmatch(gpurent.__version__)


def test_gpurent_version_prints_the_package_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpurent", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"gpurent {gpurent.__version__}"
