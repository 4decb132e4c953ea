"""The shared core: error tree, unit helpers, the root CLI."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from gpurent import __version__
from gpurent.cli.main import app
from gpurent.errors import GpurentError, InputError, MissingExtraError, NotFoundError, require
from gpurent.units import format_duration, format_usd


def test_not_found_lists_closest_names() -> None:
    err = NotFoundError("GPU", "H1000", ["H100", "H200", "A100", "T4"])
    assert err.suggestions[0] == "H100"
    assert "did you mean" in str(err)
    assert err.exit_code == 2
    assert isinstance(err, InputError)


def test_not_found_without_close_names_says_so_plainly() -> None:
    err = NotFoundError("model", "zzzz", ["resnet50"])
    assert err.suggestions == []
    assert str(err) == "unknown model 'zzzz'"


def test_require_names_the_extra() -> None:
    with pytest.raises(MissingExtraError, match=r"pip install 'gpurent\[bench\]'"):
        require("surely_not_a_module_xyz", "bench")
    assert isinstance(MissingExtraError("x", "y"), GpurentError)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (30, "30 s"),
        (600, "10.0 min"),
        (7200, "2.0 h"),
        (5 * 86400, "5.0 days"),
        (math.inf, "never"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_format_usd() -> None:
    assert format_usd(1234.5) == "$1,234"
    assert format_usd(12.345) == "$12.35"
    assert format_usd(0.1234) == "$0.123"


def test_cli_version_and_help() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.stdout
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "plan" in result.stdout.lower()


def test_cli_unknown_command_fails() -> None:
    result = CliRunner().invoke(app, ["no-such-verb"])
    assert result.exit_code != 0


def test_error_lines_keep_square_brackets() -> None:
    """`pip install 'gpurent[bench]'` must reach the user intact, not eaten as rich markup."""
    import typer

    from gpurent.cli.common import cli_errors

    demo = typer.Typer()

    @demo.command()
    @cli_errors
    def needs_torch() -> None:
        require("surely_not_a_module_xyz", "bench")

    result = CliRunner().invoke(demo, [])
    assert result.exit_code == 1
    assert "pip install 'gpurent[bench]'" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_directory_given_for_a_file_is_a_one_line_error(tmp_path: object) -> None:
    """Through the real CLI: exit 2 and one line, never a traceback."""
    result = CliRunner().invoke(app, ["estimate", "--from-csv", str(tmp_path), "--json"])
    assert result.exit_code == 2
    assert "is a directory" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("exc", "code", "text"),
    [
        (PermissionError(13, "denied", "/root/secret.csv"), 1, "permission denied"),
        (KeyboardInterrupt(), 130, "interrupted"),
        (FileNotFoundError(2, "missing", "/no/such.csv"), 2, "no such file"),
    ],
)
def test_os_errors_and_interrupts_become_one_line(exc: BaseException, code: int, text: str) -> None:
    """Tests run as root, so a real unreadable file cannot be made: the wrapper is checked on a
    command that raises what the OS would."""
    import typer

    from gpurent.cli.common import cli_errors

    demo = typer.Typer()

    @demo.command()
    @cli_errors
    def boom() -> None:
        raise exc

    @demo.callback()
    def _root() -> None:
        """A callback makes `demo` a group, so `boom` is called by name."""

    result = CliRunner().invoke(demo, ["boom"])
    assert result.exit_code == code
    assert result.stderr.strip().startswith("error:") and text in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
