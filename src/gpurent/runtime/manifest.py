"""Checkpoint names and manifests: built by the writer, validated as a whole by the reader.

A checkpoint directory is `step-<step, at least 12 digits>-<8 hex>`; steps are non-negative
integers of any size up to `MAX_STEP_DIGITS` digits (a file name holds 255 bytes), so token
counts fit. The manifest (`MANIFEST.json`) is checked field by field (schema and types), and
carries `manifest_sha256`, the sha256 of its own canonical JSON without that field, so a flipped
bit anywhere in it is caught. Anything that does not pass is a `DataError`: "this checkpoint
does not verify", never a KeyError or TypeError. Manifests written before `manifest_sha256`
existed are still read (the per-file hashes cover the data either way).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import operator
import re
from typing import Any

from gpurent.errors import DataError, InputError
from gpurent.runtime import serialize
from gpurent.runtime.storage import safe_filename

FORMAT = "gpurent-checkpoint/1"
MAX_STEP_DIGITS = 200
_NAME_RE = re.compile(rf"^step-(\d{{12,{MAX_STEP_DIGITS}}})-[0-9a-f]{{8}}$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_KINDS = frozenset({serialize.KIND_JSON, serialize.KIND_TORCH, serialize.KIND_STATE_DICT})
_FIELDS = frozenset({"format", "step", "created_unix_s", "keys", "files", "versions"})
_SELF_HASH = "manifest_sha256"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FileEntry:
    """One file of a checkpoint: its size in bytes and sha256."""

    size_bytes: int
    sha256: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    """A manifest that passed validation."""

    step: int
    created_unix_s: float
    keys: dict[str, str]
    files: dict[str, FileEntry]

    @property
    def size_bytes(self) -> int:
        """Total size of the checkpoint's files in bytes."""
        return sum(f.size_bytes for f in self.files.values())


def check_step(step: object) -> int:
    """`step` as an int: a non-negative integer (numpy/torch integers too), or `InputError`."""
    if isinstance(step, bool):
        raise InputError(f"checkpoint step must be a non-negative integer, got {step!r}")
    try:
        value = operator.index(step)  # type: ignore[arg-type]
    except TypeError:
        raise InputError(
            f"checkpoint step must be a non-negative integer, got {str(step)[:40]!r} "
            f"({type(step).__name__})"
        ) from None
    if value < 0:
        raise InputError(f"checkpoint step must be a non-negative integer, got {value}")
    if len(str(value)) > MAX_STEP_DIGITS:
        raise InputError(f"checkpoint step has more than {MAX_STEP_DIGITS} digits")
    return value


def step_of_name(name: str) -> int | None:
    """The step of a checkpoint directory name, None for anything else (the canonical form
    only: 12 zero-padded digits, or more digits without a leading zero)."""
    match = _NAME_RE.match(name)
    if match is None:
        return None
    digits = match.group(1)
    if len(digits) > 12 and digits[0] == "0":
        return None
    return int(digits)


def _canonical(body: dict[str, Any]) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def build(
    *,
    step: int,
    created_unix_s: float,
    keys: dict[str, str],
    files: dict[str, FileEntry],
    versions: dict[str, str],
) -> bytes:
    """The manifest bytes the writer commits."""
    body: dict[str, Any] = {
        "format": FORMAT,
        "step": step,
        "created_unix_s": created_unix_s,
        "keys": keys,
        "files": {n: {"size_bytes": f.size_bytes, "sha256": f.sha256} for n, f in files.items()},
        "versions": versions,
    }
    body[_SELF_HASH] = hashlib.sha256(_canonical(body)).hexdigest()
    return json.dumps(body, indent=1).encode()


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _file_entry(name: str, meta: object) -> FileEntry:
    if not isinstance(meta, dict) or set(meta) != {"size_bytes", "sha256"}:
        raise DataError(f"manifest entry of {name} is not {{size_bytes, sha256}}")
    size, digest = meta["size_bytes"], meta["sha256"]
    if not _is_int(size) or size < 0:
        raise DataError(f"manifest size of {name} is not a byte count")
    if not isinstance(digest, str) or not _SHA256_RE.match(digest):
        raise DataError(f"manifest sha256 of {name} is not 64 hex digits")
    return FileEntry(size_bytes=size, sha256=digest)


def parse(raw: bytes, *, name_step: int) -> Manifest:
    """Validate manifest bytes as a whole; `name_step` is the step in the directory name."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise DataError(f"manifest is not valid JSON ({type(exc).__name__})") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        raise DataError(f"manifest format is not {FORMAT}")
    claimed = body.pop(_SELF_HASH, None)
    if claimed is not None and claimed != hashlib.sha256(_canonical(body)).hexdigest():
        raise DataError("manifest sha256 mismatch (manifest damaged)")
    if not set(body) <= _FIELDS or not {"step", "keys", "files"} <= set(body):
        raise DataError(f"manifest fields {sorted(body)} are not those of {FORMAT}")
    step = body["step"]
    if not _is_int(step) or step != name_step:
        raise DataError(f"manifest step {str(step)[:40]} differs from the name's {name_step}")
    created = body.get("created_unix_s", 0.0)
    if not isinstance(created, int | float) or isinstance(created, bool):
        raise DataError("manifest created_unix_s is not a number")
    try:
        created_unix_s = float(created)
    except OverflowError:
        created_unix_s = math.inf
    if not math.isfinite(created_unix_s) or created_unix_s < 0:
        raise DataError("manifest created_unix_s is not a finite time")
    keys = body["keys"]
    if not isinstance(keys, dict) or not all(
        isinstance(k, str) and v in _KINDS for k, v in keys.items()
    ):
        raise DataError("manifest keys are not a map of entry name to kind")
    versions = body.get("versions", {})
    if not isinstance(versions, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in versions.items()
    ):
        raise DataError("manifest versions are not a map of names to strings")
    files_raw = body["files"]
    if not isinstance(files_raw, dict) or serialize.JSON_FILE not in files_raw:
        raise DataError(f"manifest lists no {serialize.JSON_FILE}")
    files: dict[str, FileEntry] = {}
    for filename, meta in files_raw.items():
        if not safe_filename(filename):
            raise DataError(f"manifest names {str(filename)[:60]!r}, not a file of its directory")
        files[filename] = _file_entry(filename, meta)
    needs_torch = any(kind != serialize.KIND_JSON for kind in keys.values())
    if needs_torch and serialize.TORCH_FILE not in files:
        raise DataError(f"manifest has tensor entries but lists no {serialize.TORCH_FILE}")
    return Manifest(step=step, created_unix_s=created_unix_s, keys=dict(keys), files=files)
