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

What a checkpoint directory may make the reader open is bounded: only plain file names
(`safe_filename`) directly inside the checkpoint's own directory; locally only regular files, never
through a symlink (`O_NOFOLLOW`), and a symlinked checkpoint directory is not listed; a manifest
is at most `MAX_MANIFEST_BYTES`. Checkpoints that do not verify are moved aside into
`MOVED_ASIDE_DIR` with a reason file, never deleted.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from gpurent.errors import DataError, require

MANIFEST_NAME = "MANIFEST.json"
TMP_PREFIX = ".tmp-"
MOVED_ASIDE_DIR = "moved-aside"
REASON_SUFFIX = ".reason.txt"
MAX_MANIFEST_BYTES = 1 << 20  # ours are under 1 kB; a bigger one is not a manifest of ours
_SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_STAGING_PID_RE = re.compile(r"-p(\d+)-[0-9a-f]{8}$")


def safe_filename(name: object) -> bool:
    """Whether `name` is a plain file name (no directory part, no `..`, not hidden)."""
    return isinstance(name, str) and bool(_SAFE_NAME_RE.match(name)) and name != MANIFEST_NAME


def _pid_alive(pid: int) -> bool:
    if not 0 < pid <= 2**22:  # Linux's largest pid_max
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by another user
        return True
    return True


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

    def move_aside(self, name: str, reason: str) -> None:
        """Move checkpoint `name` into `MOVED_ASIDE_DIR` (not deleted) with a reason file."""
        ...


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _open_dir(directory: Path) -> int:
    """A descriptor of a checkpoint directory, refusing a symlink in its place."""
    try:
        return os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and directory.is_symlink():
            raise DataError(f"{directory.name} is a symlink; symlinks are not followed") from None
        raise


def _open_regular(directory: Path, filename: str) -> int:
    """A read-only descriptor of a regular file directly in `directory`, refusing symlinks (for
    the directory and the file), FIFOs and devices.

    Opened relative to the directory's own descriptor with O_NOFOLLOW, so nothing is reached
    through a link even if one is swapped in after listing; O_NONBLOCK keeps a FIFO from
    blocking the open.
    """
    dir_fd = _open_dir(directory)
    try:
        fd = os.open(
            filename, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
        )
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DataError(f"{filename} is a symlink; symlinks are not followed") from None
        raise
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise DataError(f"{filename} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _checked(filename: str) -> str:
    if not safe_filename(filename):
        raise DataError(f"file name {filename!r} is not a plain name inside the checkpoint")
    return filename


class LocalStorage:
    """Checkpoints in a local directory, committed by an atomic rename."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    @property
    def location(self) -> str:
        """The directory, for messages."""
        return str(self.root)

    def begin(self, name: str) -> str:
        """Create a staging directory for checkpoint name (unique per writer); return its path."""
        self.root.mkdir(parents=True, exist_ok=True)
        # the writer's pid in the name: another writer's cleanup leaves a live save alone
        staging = self.root / f"{TMP_PREFIX}{name}-p{os.getpid()}-{uuid.uuid4().hex[:8]}"
        staging.mkdir()
        return str(staging)

    @contextlib.contextmanager
    def open_write(self, staging: str, filename: str) -> Iterator[IO[bytes]]:
        """A file in the staging directory, flushed and fsynced when the block ends."""
        with open(Path(staging) / filename, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())

    def commit(self, staging: str, name: str, manifest: bytes) -> None:
        """Write the manifest, then rename the staging directory to name (fsynced both sides)."""
        with self.open_write(staging, MANIFEST_NAME) as fh:
            fh.write(manifest)
        _fsync_dir(Path(staging))
        os.rename(staging, self.root / name)
        _fsync_dir(self.root)

    def abort(self, staging: str) -> None:
        """Remove the staging directory (best effort)."""
        shutil.rmtree(staging, ignore_errors=True)

    def list_names(self) -> list[str]:
        """Real directories only: a symlinked entry is neither loaded nor rotated."""
        try:
            with os.scandir(self.root) as entries:
                return [e.name for e in entries if e.is_dir(follow_symlinks=False)]
        except (FileNotFoundError, NotADirectoryError):
            return []

    def read_manifest(self, name: str) -> bytes | None:
        """The manifest bytes of name, None if not committed; DataError if it is too large."""
        try:
            fd = _open_regular(self.root / name, MANIFEST_NAME)
        except (FileNotFoundError, NotADirectoryError):
            return None
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_MANIFEST_BYTES + 1)
        if len(data) > MAX_MANIFEST_BYTES:
            raise DataError(f"manifest is over {MAX_MANIFEST_BYTES} bytes")
        return data

    @contextlib.contextmanager
    def open_read(self, name: str, filename: str) -> Iterator[IO[bytes]]:
        """A file of committed checkpoint name, refusing symlinks."""
        fd = _open_regular(self.root / name, _checked(filename))
        with os.fdopen(fd, "rb") as fh:
            yield fh

    def size_bytes(self, name: str, filename: str) -> int | None:
        """Size of a file of checkpoint name in bytes, None when it is missing."""
        try:
            dir_fd = _open_dir(self.root / name)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            st = os.stat(_checked(filename), dir_fd=dir_fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        finally:
            os.close(dir_fd)
        if not stat.S_ISREG(st.st_mode):
            raise DataError(f"{filename} is not a regular file")
        return st.st_size

    def delete(self, name: str) -> None:
        """Delete checkpoint name: manifest first, then the rest (a symlink is only unlinked)."""
        path = self.root / name
        if path.is_symlink():  # never reach through a link into someone else's files
            path.unlink()
            return
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            (path / MANIFEST_NAME).unlink()
            _fsync_dir(path)
        shutil.rmtree(path, ignore_errors=True)

    def move_aside(self, name: str, reason: str) -> None:
        """Rename checkpoint name into MOVED_ASIDE_DIR with a note of reason."""
        aside = self.root / MOVED_ASIDE_DIR
        aside.mkdir(exist_ok=True)
        target = aside / name
        if target.exists() or target.is_symlink():
            target = aside / f"{name}-{uuid.uuid4().hex[:8]}"
        os.rename(self.root / name, target)
        _fsync_dir(self.root)
        with contextlib.suppress(OSError):  # the move is what matters; the note is best effort
            (aside / f"{target.name}{REASON_SUFFIX}").write_text(reason.rstrip("\n") + "\n")

    def remove_stale_staging(self) -> None:
        """Remove staging directories of saves that died (their writer's pid is gone)."""
        for entry in self.list_names():
            if not entry.startswith(TMP_PREFIX):
                continue
            match = _STAGING_PID_RE.search(entry)
            if match and _pid_alive(int(match.group(1))):
                continue  # a save in progress, maybe of another writer
            shutil.rmtree(self.root / entry, ignore_errors=True)


class FsspecStorage:
    """Checkpoints under an fsspec URL (S3 and other object stores): the manifest is the commit."""

    def __init__(self, url: str, **storage_options: Any) -> None:
        fsspec: Any = require("fsspec", "runtime")
        self.url = url.rstrip("/")
        self.fs, self.root = fsspec.core.url_to_fs(self.url, **storage_options)
        self.root = str(self.root).rstrip("/")

    @property
    def location(self) -> str:
        """The URL, for messages."""
        return self.url

    def _path(self, *parts: str) -> str:
        return "/".join((self.root, *parts))

    def begin(self, name: str) -> str:
        # Object stores have no rename: write in place under the unique name; the manifest,
        # written last, is what commits it.
        """The staging handle: name itself (object stores write in place; the manifest commits)."""
        return name

    @contextlib.contextmanager
    def open_write(self, staging: str, filename: str) -> Iterator[IO[bytes]]:
        """A file written in place under checkpoint staging."""
        with self.fs.open(self._path(staging, filename), "wb") as fh:
            yield fh

    def commit(self, staging: str, name: str, manifest: bytes) -> None:
        """Write the manifest, which makes the checkpoint visible."""
        with self.fs.open(self._path(name, MANIFEST_NAME), "wb") as fh:
            fh.write(manifest)
        self.fs.invalidate_cache(self.root)

    def abort(self, staging: str) -> None:
        """Remove what was written under staging (best effort)."""
        with contextlib.suppress(FileNotFoundError, OSError):
            self.fs.rm(self._path(staging), recursive=True)
        self.fs.invalidate_cache(self.root)

    def list_names(self) -> list[str]:
        """Names of checkpoint directories under the URL, any order."""
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
        """The manifest bytes of name, None if not committed; DataError if it is too large."""
        path = self._path(name, MANIFEST_NAME)
        try:
            if int(self.fs.size(path)) > MAX_MANIFEST_BYTES:
                raise DataError(f"manifest is over {MAX_MANIFEST_BYTES} bytes")
            data = self.fs.cat_file(path)
        except FileNotFoundError:
            return None
        return bytes(data)

    @contextlib.contextmanager
    def open_read(self, name: str, filename: str) -> Iterator[IO[bytes]]:
        """A file of committed checkpoint name."""
        with self.fs.open(self._path(name, _checked(filename)), "rb") as fh:
            yield fh

    def size_bytes(self, name: str, filename: str) -> int | None:
        """Size of a file of checkpoint name in bytes, None when it is missing."""
        try:
            return int(self.fs.size(self._path(name, _checked(filename))))
        except FileNotFoundError:
            return None

    def delete(self, name: str) -> None:
        """Delete checkpoint name: manifest first, then the rest."""
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._path(name, MANIFEST_NAME))
        with contextlib.suppress(FileNotFoundError, OSError):
            self.fs.rm(self._path(name), recursive=True)
        self.fs.invalidate_cache(self.root)

    def move_aside(self, name: str, reason: str) -> None:
        # No rename on object stores: copy, write the note, then delete the original (manifest
        # first), so a move cut short leaves a copy aside and the original still in place.
        """Copy checkpoint name into MOVED_ASIDE_DIR with a note of reason, then delete it."""
        target = self._path(MOVED_ASIDE_DIR, f"{name}-{uuid.uuid4().hex[:8]}")
        self.fs.copy(self._path(name), target, recursive=True)
        with self.fs.open(f"{target}{REASON_SUFFIX}", "wb") as fh:
            fh.write(reason.rstrip("\n").encode() + b"\n")
        self.delete(name)


def open_storage(directory_or_url: str | os.PathLike[str], **storage_options: Any) -> Storage:
    """A local directory, a `file://` URL or any fsspec URL (`s3://bucket/prefix`, `gs://...`)."""
    text = os.fspath(directory_or_url)
    if text.startswith("file://"):
        return LocalStorage(text.removeprefix("file://"))
    if "://" in text:
        return FsspecStorage(text, **storage_options)
    return LocalStorage(text)
