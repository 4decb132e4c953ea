"""Read user-given text files safely, and parse CSV/JSON/TOML/YAML text with bounded nesting.

- Only regular files are read: a FIFO, a device (/dev/zero), a socket or a directory is refused
  with one line (opened with O_NONBLOCK, so a FIFO never blocks the open).
- Sizes are bounded: `MAX_TEXT_BYTES` for data (CSV, traces, samples), `MAX_CONFIG_BYTES` for
  configuration files (workload TOML/YAML, fake-GPU scenarios).
- Text is UTF-8 (a leading byte-order mark is dropped); a bad byte is reported with its offset.
- OS errors (no such file, permission, symlink loop, name too long, disk full) become one line
  naming the file and what to do.
- JSON/TOML/YAML nested deeper than `MAX_NESTING` levels, or that Python's parsers cannot
  recurse into, is refused; YAML aliases that refer to themselves are refused.
- CSV fields longer than the csv module's limit (`CSV_FIELD_LIMIT` characters) are one-line
  errors naming the line.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from gpurent.errors import GpurentError, InputError

MiB = 2**20
MAX_TEXT_BYTES = 64 * MiB
MAX_CONFIG_BYTES = 1 * MiB
MAX_NESTING = 64
CSV_FIELD_LIMIT = csv.field_size_limit()
_SHOWN_PATH_CHARS = 100

ErrorType = type[GpurentError]


def shown(path: str | os.PathLike[str]) -> str:
    """A path for a one-line message: shortened in the middle past 100 characters."""
    text = os.fspath(path).replace("\n", "\\n").replace("\r", "\\r")
    if len(text) <= _SHOWN_PATH_CHARS:
        return text
    half = _SHOWN_PATH_CHARS // 2
    return f"{text[:half]}...{text[-half:]}"


def _size(n: int) -> str:
    return f"{n / MiB:g} MiB" if n >= MiB else f"{n} bytes"


def os_error_message(exc: OSError, path: str | os.PathLike[str] | None = None) -> str:
    """One line for an OS error on a file: what went wrong, where, what to do."""
    name = path if path is not None else exc.filename
    where = shown(name) if name is not None else "a file"
    code = exc.errno
    if code == errno.ENOENT:
        return f"no such file: {where}; check the path"
    if code in (errno.EACCES, errno.EPERM):
        return f"permission denied: {where}"
    if code == errno.EISDIR:
        return f"{where} is a directory; give a file"
    if code == errno.ENOTDIR:
        return f"{where}: a part of the path is not a directory; check the path"
    if code == errno.ELOOP:
        return f"{where}: too many levels of symbolic links (a symlink loop?); check the path"
    if code == errno.ENAMETOOLONG:
        return f"{where}: file name too long; give a shorter path"
    if code in (errno.ENOSPC, errno.EDQUOT):
        return f"{where}: no space left on the device; free some space or write elsewhere"
    if code == errno.EROFS:
        return f"{where}: read-only file system; write elsewhere"
    reason = exc.strerror or type(exc).__name__
    return f"{where}: {reason.lower()}"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(
    path: str | os.PathLike[str],
    *,
    limit_bytes: int = MAX_TEXT_BYTES,
    what: str = "file",
    error: ErrorType = InputError,
) -> bytes:
    """The bytes of a regular file of at most `limit_bytes`; anything else is one-line `error`
    (OS errors keep their own kind: InputError for a path the user got wrong)."""
    where = shown(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(os_error_message(exc, path)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{where} is {_kind(info.st_mode)}; give a regular file")
        if info.st_size > limit_bytes:
            raise error(
                f"{where} is {_size(info.st_size)}, over the {_size(limit_bytes)} limit "
                f"({what}); give a smaller file"
            )
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(MiB, limit_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit_bytes:
                raise error(
                    f"{where} is over the {_size(limit_bytes)} limit ({what}); give a smaller file"
                )
    except OSError as exc:
        raise InputError(os_error_message(exc, path)) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def decode_utf8(data: bytes, where: str, *, error: ErrorType = InputError) -> str:
    """UTF-8 text (a leading byte-order mark dropped); a bad byte is one line with its offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(
            f"{where}: not UTF-8 text (byte offset {exc.start}: {data[exc.start : exc.start + 1]!r}"
            "); save the file as UTF-8"
        ) from None


def read_text(
    path: str | os.PathLike[str],
    *,
    limit_bytes: int = MAX_TEXT_BYTES,
    what: str = "file",
    error: ErrorType = InputError,
) -> str:
    """The UTF-8 text of a regular file of at most `limit_bytes` (see `read_bytes`)."""
    data = read_bytes(path, limit_bytes=limit_bytes, what=what, error=error)
    return decode_utf8(data, shown(path), error=error)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 text; OS errors (disk full, no such directory, name too long) as one line."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(os_error_message(exc, path)) from None


# ---------------------------------------------------------------------------- parsers


def check_nesting(doc: Any, where: str, *, error: ErrorType = InputError) -> Any:
    """`doc` unchanged when its lists and mappings nest at most `MAX_NESTING` deep and hold no
    cycle (YAML aliases can make one); shared parts are visited once."""
    done: set[int] = set()
    active: set[int] = set()

    def visit(node: Any, depth: int) -> None:
        if not isinstance(node, dict | list):
            return
        key = id(node)
        if key in done:
            return
        if key in active:
            raise error(f"{where}: a value contains itself (a recursive alias); remove it")
        if depth > MAX_NESTING:
            raise error(f"{where}: nested more than {MAX_NESTING} levels deep; flatten it")
        active.add(key)
        for child in node.values() if isinstance(node, dict) else node:
            visit(child, depth + 1)
        active.discard(key)
        done.add(key)

    visit(doc, 1)
    return doc


def _too_deep(where: str, error: ErrorType) -> GpurentError:
    return error(f"{where}: nested more than {MAX_NESTING} levels deep; flatten it")


def parse_json(text: str, where: str, *, error: ErrorType = InputError) -> Any:
    """`json.loads` with every failure as one line naming `where` (and the line)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{where}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise _too_deep(where, error) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise error(f"{where}: not valid JSON ({str(exc).splitlines()[0]})") from None
    return check_nesting(doc, where, error=error)


def parse_toml(text: str, where: str, *, error: ErrorType = InputError) -> dict[str, Any]:
    """`tomllib.loads` with every failure as one line naming `where`."""
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        raise _too_deep(where, error) from None
    except ValueError as exc:  # TOMLDecodeError is a ValueError
        raise error(f"{where}: not valid TOML ({str(exc).splitlines()[0]})") from None
    return check_nesting(doc, where, error=error)  # type: ignore[no-any-return]


def parse_yaml(text: str, where: str, *, error: ErrorType = InputError) -> Any:
    """`yaml.safe_load` (the C loader where available) with every failure as one line naming
    `where`; recursive aliases and deep nesting are refused."""
    import yaml  # lazy: only YAML readers pay for it

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        doc = yaml.load(text, Loader=loader)  # a safe loader
    except RecursionError:
        raise _too_deep(where, error) from None
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise error(f"{where}: not valid YAML ({first})") from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a date 2001-13-01
        raise error(f"{where}: not valid YAML ({str(exc).splitlines()[0]})") from None
    return check_nesting(doc, where, error=error)


def read_toml_or_yaml(path: Path, what: str) -> Any:
    """A `what` (say "workload file") in TOML (.toml) or YAML (.yaml/.yml): read as a regular
    UTF-8 file of at most `MAX_CONFIG_BYTES` and parsed; another suffix is one line saying so."""
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise InputError(f"{shown(path)}: {what}s end in .toml, .yaml or .yml")
    text = read_text(path, limit_bytes=MAX_CONFIG_BYTES, what=what)
    where = shown(path)
    return parse_toml(text, where) if suffix == ".toml" else parse_yaml(text, where)


def csv_records(
    text: str, where: str, *, error: ErrorType = InputError
) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header (names stripped) and the (line number, row) of every non-blank CSV row,
    as `csv.DictReader` would read them (missing cells ""; extra cells dropped). A malformed
    row or a field over `CSV_FIELD_LIMIT` characters is one line naming the line."""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[tuple[int, list[str]]] = []
    try:
        for row in reader:
            if row:
                rows.append((reader.line_num, row))
    except csv.Error as exc:
        raise error(f"{where}:{reader.line_num}: unreadable CSV ({exc})") from None
    if not rows:
        return [], []
    header = [h.strip() for h in rows[0][1]]
    out = []
    for line, cells in rows[1:]:
        padded = cells + [""] * (len(header) - len(cells))
        out.append((line, dict(zip(header, padded, strict=False))))
    return header, out
