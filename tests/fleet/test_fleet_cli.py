"""`gpurent fleet` input errors that need no cluster (and no ray)."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "--address", "nonsense"], "--address 'nonsense': expected HOST:PORT"),
        (["health", "--address", "10.0.0.1:99999"], "expected HOST:PORT"),
        (["allreduce", "--address", "h:1", "--sizes-mib", "0"], "--sizes-mib 0 must be > 0"),
        (["allreduce", "--address", "h:1", "--repeats", "1"], "--repeats"),
        (["bench", "--address", "h:1", "--max-seconds", "nan"], "--max-seconds"),
    ],
)
def test_bad_flags_are_exit_2(args: list[str], message: str) -> None:
    done = CliRunner().invoke(app, ["fleet", *args], env={"RAY_ADDRESS": ""})
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert "Traceback" not in done.output


def test_missing_address_is_exit_2() -> None:
    done = CliRunner().invoke(app, ["fleet", "health"], env={"RAY_ADDRESS": ""})
    assert done.exit_code == 2
    assert "--address" in done.output


def test_without_ray_the_message_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    done = CliRunner().invoke(app, ["fleet", "health", "--address", "127.0.0.1:6379"])
    assert done.exit_code == 1
    assert "pip install 'gpurent[fleet]'" in done.output
