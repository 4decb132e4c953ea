"""`gpurent serve` without the server extra, or with bad settings: one line, before binding."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize("missing", ["uvicorn", "fastapi"])
def test_without_the_server_extra_serve_names_it(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)  # makes `import <missing>` fail
    code, _, stderr = run_cli("serve", "--port", "0")
    assert code == 1
    assert "pip install 'gpurent[server]'" in stderr
    assert len(stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--port", "70000"], "--port must be in 0-65535"),
        (["--max-body-bytes", "0"], "size limit must be > 0"),
        (["--host", "192.0.2.7"], "--token"),
        (["--host", "::", "--port", "0"], "--token"),
    ],
)
def test_bad_settings_are_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch, args: list[str], says: str
) -> None:
    monkeypatch.delenv("GPURENT_SERVE_TOKEN", raising=False)
    code, _, stderr = run_cli("serve", *args)
    assert code == 2, stderr
    assert says in stderr and len(stderr.strip().splitlines()) == 1
