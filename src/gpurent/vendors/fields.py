"""Field readers shared by the vendors file and its evidence: tables, known keys, paths relative
to the vendors file, and evidence text read safely; each problem is one InputError line."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from gpurent.errors import GpurentError, InputError, closest
from gpurent.inputs import files


def as_table(value: Any, where: str) -> Mapping[str, Any]:
    """`value` when it is a table (a mapping)."""
    if not isinstance(value, Mapping):
        raise InputError(f"{where} must be a table, got {type(value).__name__}")
    return value


def check_known(table: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """Refuse a key not in `allowed`, naming the closest ones."""
    for key in table:
        if key not in allowed:
            hint = closest(str(key), allowed)
            more = (
                f"; did you mean {', '.join(hint)}?" if hint else f"; known: {', '.join(allowed)}"
            )
            raise InputError(f"{where}: unknown key {str(key)!r}{more}")


def as_text(value: Any, where: str) -> str:
    """A non-empty string, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where} must be a non-empty string, got {value!r}")
    return value.strip()


def as_bool(value: Any, where: str) -> bool:
    """A TOML/YAML boolean (not a number or a string)."""
    if not isinstance(value, bool):
        raise InputError(f"{where} must be true or false, got {value!r}")
    return value


def opt_field(
    table: Mapping[str, Any], key: str, check: Callable[[Any, str], Any], where: str
) -> Any:
    """`table[key]` checked by `check`, or None when the key is absent."""
    return None if key not in table else check(table[key], f"{where}.{key}")


# Set while a document sent over HTTP is read: its evidence may name only the files sent with it
_EVIDENCE_ROOT: ContextVar[Path | None] = ContextVar("gpurent_vendors_evidence_root", default=None)


@contextmanager
def evidence_confined_to(root: Path) -> Iterator[None]:
    """Within the block, an evidence path must be relative and stay inside `root` (the folder
    the server wrote the sent evidence files to): no absolute path, no `..` out of it."""
    token = _EVIDENCE_ROOT.set(root.resolve())
    try:
        yield
    finally:
        _EVIDENCE_ROOT.reset(token)


def evidence_path(base: Path, value: Any, where: str) -> Path:
    """A path from the vendors file: relative ones are relative to the file's folder."""
    text = as_text(value, where)
    if "\x00" in text:
        raise InputError(f"{where}: {text!r} has a NUL character; give the file's path")
    path = Path(text)
    root = _EVIDENCE_ROOT.get()
    if root is not None and (
        path.is_absolute() or not (base / path).resolve().is_relative_to(root)
    ):
        raise InputError(
            f"{where}: {text!r} is not an evidence file sent with the document; name one of "
            "the files in evidence by its relative name"
        )
    return path if path.is_absolute() else base / path


def read_evidence(path: Path, what: str, where: str) -> str:
    """The text of an evidence file; any problem is one line naming `where`."""
    try:
        return files.read_text(path, limit_bytes=files.MAX_TEXT_BYTES, what=what)
    except GpurentError as exc:
        raise InputError(f"{where}: {exc.message}") from None
