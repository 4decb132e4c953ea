"""Shared CLI glue: one-line errors, JSON output, consoles, comma lists and durations."""

from __future__ import annotations

import functools
import importlib
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from gpurent.errors import GpurentError, InputError
from gpurent.inputs.files import os_error_message
from gpurent.inputs.values import Validator
from gpurent.report.jsonable import to_jsonable as to_jsonable  # noqa: PLC0414 - re-exported

P = ParamSpec("P")
R = TypeVar("R")

console = Console()
err_console = Console(stderr=True)

_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?)?\s*$"
)
_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def read_duration_s(text: str, *, bare_unit: str | None = "h") -> float | None:
    """Seconds in a duration such as '3d', '72h', '90min', '1.5w', '3600s' or '2 hours', or
    None when `text` is not one. A bare number is in `bare_unit` ('s', 'm', 'h', 'd', 'w'), or
    is not a duration when `bare_unit` is None (where a bare number means something else)."""
    match = _DURATION.match(text.lower())
    if not match or (match.group(2) is None and bare_unit is None):
        return None
    unit = (match.group(2) or bare_unit or "h")[0]
    return float(match.group(1)) * _UNIT_S[unit]


def split_list(values: str | Iterable[str] | None) -> tuple[str, ...]:
    """Comma-separated items of one option value, or of a repeated option's values; blanks
    dropped, whitespace stripped."""
    if values is None:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    return tuple(v.strip() for item in items for v in item.split(",") if v.strip())


def fail(message: str, exit_code: int = 1) -> typer.Exit:
    """Print `error: message` on stderr and return the Exit to raise."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(exit_code)


def cli_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn gpurent errors and OS errors into one line on stderr and a non-zero exit code.

    Every float flag is checked finite first (NaN and infinity pass every `< 0` check). The
    last handlers (OSError, UnicodeDecodeError, OverflowError, RecursionError, MemoryError) are a
    safety net; inputs are validated where they enter (`gpurent.inputs`)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            _check_finite_flags(kwargs)
            return fn(*args, **kwargs)
        except GpurentError as exc:
            raise fail(exc.message, exc.exit_code) from None
        except FileNotFoundError as exc:
            raise fail(f"no such file: {exc.filename}; check the path", 2) from None
        except IsADirectoryError as exc:
            raise fail(f"{exc.filename} is a directory; give a file", 2) from None
        except PermissionError as exc:
            raise fail(f"permission denied: {exc.filename}", 1) from None
        except KeyboardInterrupt:
            raise fail("interrupted", 130) from None
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise fail(os_error_message(exc), 1) from None
        except UnicodeDecodeError as exc:
            message = f"an input is not UTF-8 text (byte offset {exc.start}); save it as UTF-8"
            raise fail(message, 2) from None
        except OverflowError:
            raise fail("a value is too large to compute with; give smaller numbers", 2) from None
        except RecursionError:
            raise fail("an input is nested too deeply to read; flatten it", 2) from None
        except MemoryError:
            raise fail("out of memory: the input or a count is too large; reduce it", 1) from None

    return wrapper


def _click_module(name: str) -> Any:
    """A module of the click that typer runs on: vendored as `typer._click` since typer 0.2x,
    the `click` package before."""
    try:
        return importlib.import_module(f"typer._click.{name}")
    except ImportError:
        return importlib.import_module(f"click.{name}")


_CLICK_EXCEPTION: type[Exception] = _click_module("exceptions").ClickException


def _flag_names() -> dict[str, str]:
    """Parameter name -> the flag as typed (`--tokens`) for the running command."""
    ctx = _click_module("globals").get_current_context(silent=True)
    if ctx is None:
        return {}
    names: dict[str, str] = {}
    for p in ctx.command.params:
        opts = [o for o in getattr(p, "opts", []) if o.startswith("-")]
        if p.name:
            names[p.name] = max(opts, key=len) if opts else p.name
    return names


def given_flags(
    values: Mapping[str, tuple[str, object]],
) -> tuple[dict[str, object], dict[str, str]]:
    """The values given (not None) of `{key: (parameter name, value)}`, and the flag as typed
    for each key (`--batch-size`), for messages that name the flag."""
    names = _flag_names()
    given = {key: value for key, (_, value) in values.items() if value is not None}
    return given, {key: names.get(param, param) for key, (param, _) in values.items()}


def _check_finite_flags(kwargs: Mapping[str, object]) -> None:
    bad = [
        name
        for name, v in kwargs.items()
        if (isinstance(v, float) and not math.isfinite(v))
        or (
            isinstance(v, list | tuple)
            and any(isinstance(x, float) and not math.isfinite(x) for x in v)
        )
    ]
    if bad:
        flag = _flag_names().get(bad[0], bad[0])
        raise InputError(f"{flag} must be a finite number, got {kwargs[bad[0]]}")


def checked(**kinds: Validator) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Validate the named parameters with `gpurent.inputs.values` validators (e.g.
    `@checked(tokens=values.positive)`) before the command runs; None (not given) passes.
    Goes under `@cli_errors`, which turns the InputError into one line."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            names = _flag_names()
            for name, check in kinds.items():
                value = kwargs.get(name)
                if value is not None:
                    kwargs[name] = check(value, names.get(name, name))
            return fn(*args, **kwargs)

        return wrapper

    return decorate


def _usage_line(exc: Exception) -> str:
    """One line for a usage error: click's message, where, and the --help to read."""
    format_message = getattr(exc, "format_message", None)
    message = " ".join((format_message() if callable(format_message) else str(exc)).split())
    ctx = getattr(exc, "ctx", None)
    path = str(getattr(ctx, "command_path", "") or "")
    hint = f"; see `{path} --help`" if path else "; see --help"
    return f"{message}{hint}"


class OneLineErrorsGroup(TyperGroup):
    """The root command group: usage errors (a bad value, a directory or unreadable file given
    for a file, an unknown option) are one line `error: ...` on stderr with exit 2, like
    gpurent's own errors, instead of a multi-line box."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command; a usage error is one "error:" line on stderr and its exit code."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _CLICK_EXCEPTION as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # the help was printed: exit 2, as click
                sys.exit(int(getattr(exc, "exit_code", 2)))
            err_console.print(
                f"[bold red]error:[/] {escape(_usage_line(exc))}", highlight=False, soft_wrap=True
            )
            sys.exit(int(getattr(exc, "exit_code", 2)))
        except typer.Abort:
            err_console.print("[bold red]error:[/] aborted", highlight=False, soft_wrap=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def print_json(obj: Any) -> None:
    """Write `obj` as indented JSON to stdout (bypassing rich, so the output stays parseable)."""
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2) + "\n")
    sys.stdout.flush()


def print_json_line(obj: Any) -> None:
    """Write obj as compact JSON on one line to stdout (one record of a JSON Lines stream)."""
    sys.stdout.write(json.dumps(to_jsonable(obj), separators=(",", ":")) + "\n")
