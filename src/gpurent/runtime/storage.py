"""Where checkpoints live: one seam (`Storage`) with a local and an fsspec implementation.

A checkpoint is a directory of files plus `MANIFEST.json`. The two back ends commit differently:

- Local (POSIX): files are written into a hidden temporary directory, each file is fsynced, the
  manifest is written last and fsynced, the directory is fsynced, renamed into place (atomic on
  POSIX) and the parent directory is fsynced (RESEARCH.md section 5, the atomic protocol).
- Object stores (fsspec URLs such as `s3://`, `gs://`): there is no atomic rename, so the data
  files go straight under the checkpoint's own unique prefix and the manifest is written LAST at
  its final key. A checkpoint without a manifest is not committed and is never loaded, which is
  how PyTorch DCP uses its `.metadata` file.

Deletion runs in the opposite order: the manifest goes first (the checkpoint is de-committed),
then the data, so a deletion cut short never leaves something that looks valid.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from gpurent.errors import require

MANIFEST_NAME = "MANIFEST.json"
TMP_PREFIX = ".tmp-"


class Storage(Protocol):
    """The storage seam used by `CheckpointManager`: names are checkpoint directory names."""

    @property
    def location(self) -> str:
        """The directory or URL, for messages."""
        ...

    def begin(self, name: str) -> str:
        """Start writing checkpoint `name`; return a staging handle for `open_write`/`commit`."""
        ...

    @contextlib.contextmanager
    def open_write(self, staging: str, filename: str) -> Iterator[IO[bytes]]:
        """A binary file in the staging area, made durable (fsync) when the block ends."""
        ...

    def commit(self, staging: str, name: str, manifest: bytes) -> None:
        """Write the manifest last and make the checkpoint visible under `name`."""
        ...

    def abort(self, staging: str) -> None:
        """Remove a staging area after a failed save (best effort)."""
        ...

    def list_names(self) -> list[str]:
        """Names of checkpoint directories present (committed or not), any order."""
        ...

    def read_manifest(self, name: str) -> bytes | None:
        """The manifest bytes of `name`, or None when it has none (not committed)."""
        ...

    @contextlib.contextmanager
    def open_read(self, name: str, filename: str) -> Iterator[IO[bytes]]:
        """A binary file of a committed checkpoint."""
        ...

    def size_bytes(self, name: str, filename: str) -> int | None:
        """Size of a file of checkpoint `name`, None when it is missing."""
        ...

    def delete(self, name: str) -> None:
        """Delete a checkpoint: manifest first, then the rest."""
        ...


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class LocalStorage:
    """Checkpoints in a local directory, committed by an atomic rename."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    @property
    def location(self) -> str:
        return str(self.root)

    def begin(self, name: str) -> str:
        self.root.mkdir(parents=True, exist_ok=True)
        staging = self.root / f"{TMP_PREFIX}{name}-{uuid.uuid4().hex[:8]}"
        staging.mkdir()
        return str(staging)

    @contextlib.contextmanager
    def open_write(self, staging: str, filename: str) -> Iterator[IO[bytes]]:
        with open(Path(staging) / filename, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())

    def commit(self, staging: str, name: str, manifest: bytes) -> None:
        with self.open_write(staging, MANIFEST_NAME) as fh:
            fh.write(manifest)
        _fsync_dir(Path(staging))
        os.rename(staging, self.root / name)
        _fsync_dir(self.root)

    def abort(self, staging: str) -> None:
        shutil.rmtree(staging, ignore_errors=True)

    def list_names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return [p.name for p in self.root.iterdir() if p.is_dir()]

    def read_manifest(self, name: str) -> bytes | None:
        try:
            return (self.root / name / MANIFEST_NAME).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    @contextlib.contextmanager
    def open_read(self, name: str, filename: str) -> Iterator[IO[bytes]]:
        with open(self.root / name / filename, "rb") as fh:
            yield fh

    def size_bytes(self, name: str, filename: str) -> int | None:
        try:
            return (self.root / name / filename).stat().st_size
        except FileNotFoundError:
            return None

    def delete(self, name: str) -> None:
        path = self.root / name
        with contextlib.suppress(FileNotFoundError):
            (path / MANIFEST_NAME).unlink()
            _fsync_dir(path)
        shutil.rmtree(path, ignore_errors=True)


class FsspecStorage:
    """Checkpoints under an fsspec URL (S3 and other object stores): the manifest is the commit."""

    def __init__(self, url: str, **storage_options: Any) -> None:
        fsspec: Any = require("fsspec", "runtime")
        self.url = url.rstrip("/")
        self.fs, self.root = fsspec.core.url_to_fs(self.url, **storage_options)
        self.root = str(self.root).rstrip("/")

    @property
    def location(self) -> str:
        return self.url

    def _path(self, *parts: str) -> str:
        return "/".join((self.root, *parts))

    def begin(self, name: str) -> str:
        # Object stores have no rename: write in place under the unique name; the manifest,
        # written last, is what commits it.
        return name

    @contextlib.contextmanager
    def open_write(self, staging: str, filename: str) -> Iterator[IO[bytes]]:
        with self.fs.open(self._path(staging, filename), "wb") as fh:
            yield fh

    def commit(self, staging: str, name: str, manifest: bytes) -> None:
        with self.fs.open(self._path(name, MANIFEST_NAME), "wb") as fh:
            fh.write(manifest)
        self.fs.invalidate_cache(self.root)

    def abort(self, staging: str) -> None:
        with contextlib.suppress(FileNotFoundError, OSError):
            self.fs.rm(self._path(staging), recursive=True)
        self.fs.invalidate_cache(self.root)

    def list_names(self) -> list[str]:
        self.fs.invalidate_cache(self.root)
        try:
            entries = self.fs.ls(self.root, detail=True)
        except FileNotFoundError:
            return []
        return [
            str(e["name"]).rstrip("/").rsplit("/", 1)[-1]
            for e in entries
            if e.get("type") == "directory"
        ]

    def read_manifest(self, name: str) -> bytes | None:
        try:
            data = self.fs.cat_file(self._path(name, MANIFEST_NAME))
        except FileNotFoundError:
            return None
        return bytes(data)

    @contextlib.contextmanager
    def open_read(self, name: str, filename: str) -> Iterator[IO[bytes]]:
        with self.fs.open(self._path(name, filename), "rb") as fh:
            yield fh

    def size_bytes(self, name: str, filename: str) -> int | None:
        try:
            return int(self.fs.size(self._path(name, filename)))
        except FileNotFoundError:
            return None

    def delete(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._path(name, MANIFEST_NAME))
        with contextlib.suppress(FileNotFoundError, OSError):
            self.fs.rm(self._path(name), recursive=True)
        self.fs.invalidate_cache(self.root)


def open_storage(directory_or_url: str | os.PathLike[str], **storage_options: Any) -> Storage:
    """A local directory, a `file://` URL or any fsspec URL (`s3://bucket/prefix`, `gs://...`)."""
    text = os.fspath(directory_or_url)
    if text.startswith("file://"):
        return LocalStorage(text.removeprefix("file://"))
    if "://" in text:
        return FsspecStorage(text, **storage_options)
    return LocalStorage(text)
