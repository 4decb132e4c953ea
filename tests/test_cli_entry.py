"""The console script builds only the command a run names (`gpurent.cli.main.main`): its table
of which module registers which name must say what the modules really register, and a lean
run must behave as the whole app does."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest
import typer

from gpurent.cli.main import COMMAND_MODULES, app, build_app


def _names(typer_app: typer.Typer) -> list[str]:
    commands = [c.name or "" for c in typer_app.registered_commands]
    return commands + [g.name or "" for g in typer_app.registered_groups]


def test_the_table_names_every_top_level_command_of_each_module() -> None:
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        one = typer.Typer()
        importlib.import_module(f"gpurent.cli.{module}").register(one)
        mapped = sorted(n for n, m in COMMAND_MODULES.items() if m == module)
        assert sorted(_names(one)) == mapped, module


def test_the_whole_app_has_every_name_of_the_table() -> None:
    assert sorted(_names(app)) == sorted(COMMAND_MODULES)


LEAN = "import sys; from gpurent.cli.main import main; sys.argv[0] = 'gpurent'; main()"
WHOLE = "import sys; from gpurent.cli.main import app; sys.argv[0] = 'gpurent'; app()"


def _cli(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "COLUMNS": "100", "TERM": "dumb"},
    )


@pytest.mark.parametrize(
    "args",
    [
        ("plan", "--help"),
        ("spot", "--help"),
        ("gpus", "--json"),
        ("plan", "--serve", "--preset", "llama3-8b-chat", "--json"),
        ("plan", "--gpus", "X9000"),  # a one-line error and its exit code
        ("spot", "nonsense"),
        ("--version",),
        ("plna",),
    ],
)
def test_a_lean_run_answers_as_the_whole_app(args: tuple[str, ...]) -> None:
    lean, whole = _cli(LEAN, *args), _cli(WHOLE, *args)
    assert (lean.returncode, lean.stdout, lean.stderr) == (
        whole.returncode,
        whole.stdout,
        whole.stderr,
    )
    assert lean.stdout or lean.stderr


def test_a_lean_app_holds_only_its_module() -> None:
    assert sorted(_names(build_app(["catalog_cmds"]))) == ["catalog", "gpus", "offers"]


def test_an_unknown_name_of_the_entry_module_is_an_attribute_error() -> None:
    import gpurent.cli.main as entry

    with pytest.raises(AttributeError, match="no attribute 'apps'"):
        _ = entry.apps
