"""`CheckpointManager`: atomic, verified, rotating checkpoints with sync and async saves.

Protocol (RESEARCH.md section 5, "Atomic checkpoint protocol"): write into a staging area, fsync
the files, write a manifest (step, time, sizes, sha256 per file, library versions) last, fsync,
make it visible atomically (local: rename + fsync of the parent; object stores: the manifest's
presence is the commit, see `storage.py`), and delete old checkpoints only after the new one is
committed. `load_latest` walks newest to oldest and returns the first that verifies, logging why
the others were skipped.

Async saves follow CheckFreq's snapshot-then-persist (FAST'21) and PyTorch DCP's async save: the
training loop is blocked only while tensors are copied into host buffers; the write, fsync and
hashing run on one background thread, and at most one save is in flight.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import logging
import os
import platform
import re
import shutil
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from gpurent import __version__
from gpurent.errors import DataError, DeviceError, InputError
from gpurent.runtime import serialize
from gpurent.runtime.storage import MANIFEST_NAME, TMP_PREFIX, LocalStorage, Storage, open_storage
from gpurent.spot.interval import daly_interval_s

log = logging.getLogger("gpurent.runtime")

FORMAT = "gpurent-checkpoint/1"
DEFAULT_INTERVAL_S = 15 * 60.0  # the guide's "checkpoint every 15 minutes"
_NAME_RE = re.compile(r"^step-(\d{12})-([0-9a-f]{8})$")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointInfo:
    """A committed checkpoint."""

    name: str
    step: int
    created_unix_s: float
    size_bytes: int
    save_duration_s: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Skipped:
    """A checkpoint `load_latest` passed over, and why."""

    name: str
    reason: str


def _versions() -> dict[str, str]:
    out = {"gpurent": __version__, "python": platform.python_version()}
    torch_mod: Any = sys.modules.get("torch")
    if torch_mod is not None:
        out["torch"] = str(torch_mod.__version__)
    return out


def _is_enospc(exc: BaseException | None) -> bool:
    """Whether ENOSPC caused `exc` (torch.save wraps the writer's OSError in a RuntimeError)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


class CheckpointManager:
    """Save, rotate and load training checkpoints in a directory or an fsspec URL.

    `interval` is the time between saves in seconds (default 900 s, the guide's 15 minutes),
    `None` for step-based saving only, or `"auto"` for Daly's optimum (`spot.interval`) from the
    measured save cost (the blocking time of the last save) and `mtti_s`, the expected time to
    interruption in seconds. `every_steps` adds a step trigger. `clock` is a monotonic clock in
    seconds (injected for tests); `wall_clock` stamps manifests.
    """

    def __init__(
        self,
        directory_or_url: str | os.PathLike[str] | Storage,
        *,
        keep_last: int = 3,
        interval: float | str | None = DEFAULT_INTERVAL_S,
        every_steps: int | None = None,
        mtti_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        storage_options: Mapping[str, Any] | None = None,
    ) -> None:
        if keep_last < 1:
            raise InputError(f"keep_last must be at least 1, got {keep_last}")
        if interval == "auto":
            if mtti_s is None or not mtti_s > 0:
                raise InputError(
                    "interval='auto' needs mtti_s, the expected seconds to interruption"
                )
        elif isinstance(interval, str):
            raise InputError(f"interval must be seconds, None or 'auto', got {interval!r}")
        elif interval is not None and not interval > 0:
            raise InputError(f"interval must be a positive number of seconds, got {interval}")
        if every_steps is not None and every_steps < 1:
            raise InputError(f"every_steps must be at least 1, got {every_steps}")
        if isinstance(directory_or_url, str | os.PathLike):
            self.storage: Storage = open_storage(directory_or_url, **dict(storage_options or {}))
        else:
            self.storage = directory_or_url
        self.keep_last = keep_last
        self.interval = interval
        self.every_steps = every_steps
        self.mtti_s = mtti_s
        self._clock = clock
        self._wall_clock = wall_clock
        self._last_save_time = clock()
        self._last_save_step: int | None = None
        self._last_cost_s: float | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._hash_pool: ThreadPoolExecutor | None = None
        self._in_flight: Future[CheckpointInfo] | None = None
        self._snapshots = serialize.SnapshotCache()
        self._stop = threading.Event()
        self._early = threading.Event()
        self.stop_reason: str | None = None
        self.last_skipped: list[Skipped] = []
        self.last_blocking_s: float | None = None

    # ---- triggers -------------------------------------------------------------------------

    @property
    def interval_s(self) -> float | None:
        """The current time trigger in seconds (Daly's optimum once a save was measured)."""
        if self.interval is None:
            return None
        if self.interval == "auto":
            if self._last_cost_s is None or self.mtti_s is None:
                return DEFAULT_INTERVAL_S
            return daly_interval_s(max(self._last_cost_s, 1e-3), self.mtti_s)
        return float(self.interval)

    def should_save(self, step: int, now: float | None = None) -> bool:
        """Whether to save at `step`: time or step trigger reached, or a stop was requested."""
        if self._stop.is_set() or self._early.is_set():
            return True
        if (
            self.every_steps is not None
            and step - (self._last_save_step if self._last_save_step is not None else 0)
            >= self.every_steps
        ):
            return True
        interval_s = self.interval_s
        current = self._clock() if now is None else now
        return interval_s is not None and current - self._last_save_time >= interval_s

    def request_stop(self, reason: str) -> None:
        """Ask the loop to checkpoint and stop (called by notice watchers; thread-safe)."""
        if not self._stop.is_set():
            self.stop_reason = reason
            self._stop.set()
            log.warning("stop requested: %s", reason)

    def request_checkpoint(self, reason: str) -> None:
        """Ask for a checkpoint at the next `should_save` (a hint such as AWS rebalance)."""
        self._early.set()
        log.warning("early checkpoint requested: %s", reason)

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    # ---- saving ---------------------------------------------------------------------------

    def save(self, state: Mapping[str, Any], step: int) -> CheckpointInfo:
        """Save `state` as checkpoint `step`, blocking until it is committed."""
        self._raise_previous_failure(wait=True)
        started = self._clock()
        plain, tensors, kinds = serialize.split_state(state)
        serialize.check_loadable(tensors)
        info = self._write(serialize.encode_plain(plain), tensors, kinds, step, started)
        self._mark_saved(step, started)
        return info

    def save_async(self, state: Mapping[str, Any], step: int) -> Future[CheckpointInfo]:
        """Snapshot `state` to host memory and save it in the background; return the future.

        Blocks only for the snapshot (and, if a save is still in flight, until it finishes: at
        most one save is in flight). A failure of the previous async save is raised here.
        """
        started = self._clock()
        self._raise_previous_failure(wait=True)
        plain, tensors, kinds = serialize.split_state(state)
        serialize.check_loadable(tensors)
        plain_bytes = serialize.encode_plain(plain)
        snapshot = self._snapshots.snapshot(tensors) if tensors else {}
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="gpurent-ckpt")
        future = self._executor.submit(self._write, plain_bytes, snapshot, kinds, step, started)
        self._in_flight = future
        self._mark_saved(step, started)
        return future

    def _mark_saved(self, step: int, started: float) -> None:
        """Restart the triggers after a save; its blocking time is the cost `"auto"` uses."""
        self.last_blocking_s = self._clock() - started
        self._last_cost_s = self.last_blocking_s
        self._last_save_time = self._clock()
        self._last_save_step = step
        self._early.clear()

    def wait(self) -> CheckpointInfo | None:
        """Wait for the in-flight async save; return it, or raise its error."""
        future, self._in_flight = self._in_flight, None
        return None if future is None else future.result()

    def save_for_exit(
        self, state: Mapping[str, Any] | Callable[[], Mapping[str, Any]], step: int
    ) -> CheckpointInfo:
        """On an interruption notice: finish the in-flight async save, then make sure `step`
        itself is committed, so the steps since that save are not lost. A failed in-flight save
        is logged and `step` saved anyway (there is no later chance); only the failure of that
        save is raised. `state` may be a callable, called only when `step` still needs saving."""
        try:
            previous = self.wait()
        except Exception as exc:  # the newer checkpoint below supersedes it
            log.warning("in-flight checkpoint failed (%s); saving step %d for exit", exc, step)
            previous = None
        if previous is not None and previous.step == step:
            return previous
        return self.save(state() if callable(state) else state, step)

    def close(self) -> None:
        """Wait for any in-flight save and release the background threads."""
        try:
            self.wait()
        finally:
            for pool in (self._executor, self._hash_pool):
                if pool is not None:
                    pool.shutdown(wait=True)
            self._executor = self._hash_pool = None

    def __enter__(self) -> CheckpointManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _raise_previous_failure(self, *, wait: bool) -> None:
        future = self._in_flight
        if future is None:
            return
        if wait:
            future.exception()
        if future.done():
            self._in_flight = None
            future.result()  # re-raises the background save's error in the training loop

    def _write(
        self,
        plain_bytes: bytes,
        tensors: Mapping[str, Any],
        kinds: Mapping[str, str],
        step: int,
        started: float,
    ) -> CheckpointInfo:
        if self._hash_pool is None:
            self._hash_pool = ThreadPoolExecutor(1, thread_name_prefix="gpurent-sha256")
        name = f"step-{step:012d}-{uuid.uuid4().hex[:8]}"
        staging = self.storage.begin(name)
        files: dict[str, dict[str, Any]] = {}
        try:
            with self.storage.open_write(staging, serialize.JSON_FILE) as raw:
                writer = serialize.HashingWriter(raw, self._hash_pool)
                writer.write(plain_bytes)
            files[serialize.JSON_FILE] = {
                "size_bytes": writer.size_bytes,
                "sha256": writer.hexdigest(),
            }
            if tensors:
                with self.storage.open_write(staging, serialize.TORCH_FILE) as raw:
                    writer = serialize.HashingWriter(raw, self._hash_pool)
                    serialize.torch_save(dict(tensors), writer)
                files[serialize.TORCH_FILE] = {
                    "size_bytes": writer.size_bytes,
                    "sha256": writer.hexdigest(),
                }
            created = self._wall_clock()
            manifest = {
                "format": FORMAT,
                "step": step,
                "created_unix_s": created,
                "keys": dict(kinds),
                "files": files,
                "versions": _versions(),
            }
            self.storage.commit(staging, name, json.dumps(manifest, indent=1).encode())
        except BaseException as exc:
            self.storage.abort(staging)
            if _is_enospc(exc):
                raise DeviceError(
                    f"checkpoint step {step} not saved: no space left on device at "
                    f"{self.storage.location}{self._free_hint()}; older checkpoints are intact; "
                    "free space or point the checkpoint directory elsewhere"
                ) from exc
            raise
        duration_s = self._clock() - started
        self._rotate(keep=name)
        size = sum(int(f["size_bytes"]) for f in files.values())
        log.info(
            "checkpoint step %d committed: %s (%d bytes, %.2f s)", step, name, size, duration_s
        )
        return CheckpointInfo(
            name=name,
            step=step,
            created_unix_s=created,
            size_bytes=size,
            save_duration_s=duration_s,
        )

    def _free_hint(self) -> str:
        if isinstance(self.storage, LocalStorage):
            try:
                return f" ({shutil.disk_usage(self.storage.root).free} bytes free)"
            except OSError:
                return ""
        return ""

    # ---- listing, rotation, loading -------------------------------------------------------

    def _names_newest_first(self) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        for name in self.storage.list_names():
            match = _NAME_RE.match(name)
            if match:
                found.append((int(match.group(1)), name))
        return sorted(found, reverse=True)

    def _manifest(self, name: str) -> dict[str, Any]:
        raw = self.storage.read_manifest(name)
        if raw is None:
            raise DataError("no manifest (never committed)")
        try:
            manifest = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DataError(f"manifest is not valid JSON ({exc})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise DataError(f"manifest format is not {FORMAT}")
        return manifest

    def committed(self) -> list[CheckpointInfo]:
        """Committed checkpoints (manifest present and readable), newest first; not re-hashed."""
        out: list[CheckpointInfo] = []
        for step, name in self._names_newest_first():
            try:
                manifest = self._manifest(name)
            except DataError:
                continue
            out.append(
                CheckpointInfo(
                    name=name,
                    step=step,
                    created_unix_s=float(manifest.get("created_unix_s", 0.0)),
                    size_bytes=sum(int(f["size_bytes"]) for f in manifest["files"].values()),
                    save_duration_s=0.0,
                )
            )
        out.sort(key=lambda c: (c.step, c.created_unix_s), reverse=True)
        return out

    def _rotate(self, keep: str) -> None:
        """Keep the newest `keep_last` committed checkpoints; drop debris of crashed saves."""
        committed = self.committed()
        for old in committed[self.keep_last :]:
            if old.name != keep:
                self.storage.delete(old.name)
        newest_step = committed[0].step if committed else -1
        committed_names = {c.name for c in committed}
        for step, name in self._names_newest_first():
            if name not in committed_names and step < newest_step:
                self.storage.delete(name)  # an uncommitted leftover of a crashed save
        if isinstance(self.storage, LocalStorage):
            for entry in self.storage.list_names():
                if entry.startswith(TMP_PREFIX):
                    shutil.rmtree(self.storage.root / entry, ignore_errors=True)

    def _verify(self, name: str, manifest: Mapping[str, Any]) -> None:
        files = manifest.get("files")
        if not isinstance(files, dict) or serialize.JSON_FILE not in files:
            raise DataError("manifest lists no files")
        for filename, meta in files.items():
            size = self.storage.size_bytes(name, filename)
            if size is None:
                raise DataError(f"{filename} is missing")
            if size != int(meta["size_bytes"]):
                raise DataError(f"{filename} has {size} bytes, manifest says {meta['size_bytes']}")
            with self.storage.open_read(name, filename) as fh:
                _, digest = serialize.sha256_of(fh)
            if digest != meta["sha256"]:
                raise DataError(f"{filename} sha256 mismatch (file damaged)")

    def _read(self, name: str, manifest: Mapping[str, Any]) -> dict[str, Any]:
        with self.storage.open_read(name, serialize.JSON_FILE) as fh:
            state = serialize.decode_plain(fh.read())
        if serialize.TORCH_FILE in manifest["files"]:
            with self.storage.open_read(name, serialize.TORCH_FILE) as fh:
                state.update(serialize.torch_load(fh))
        missing = set(manifest.get("keys", {})) - set(state)
        if missing:
            raise DataError(f"entries {sorted(missing)} are missing")
        return state

    def load_latest(
        self, into: Mapping[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]] | None:
        """The newest checkpoint that verifies, as (step, state), or None when there is none.

        Every file is checked against the manifest's size and sha256 before it is deserialized;
        checkpoints that fail are skipped with a logged reason (also in `last_skipped`). With
        `into`, objects with `load_state_dict` (modules, optimizers, schedulers) are restored in
        place from the entries of the same key. Resets the save timer.
        """
        self.last_skipped = []
        candidates: list[tuple[int, float, str, dict[str, Any]]] = []
        for step, name in self._names_newest_first():
            try:
                manifest = self._manifest(name)
            except DataError as exc:
                self._skip(name, str(exc))
                continue
            candidates.append((step, float(manifest.get("created_unix_s", 0.0)), name, manifest))
        candidates.sort(key=lambda c: (c[0], c[1]), reverse=True)
        for step, _, name, manifest in candidates:
            try:
                self._verify(name, manifest)
                state = self._read(name, manifest)
            except (DataError, OSError, EOFError, RuntimeError, ValueError) as exc:
                self._skip(name, str(exc) or type(exc).__name__)
                continue
            if into is not None:
                serialize.restore(state, into)
            self._last_save_time = self._clock()
            self._last_save_step = step
            return step, state
        return None

    def _skip(self, name: str, reason: str) -> None:
        self.last_skipped.append(Skipped(name=name, reason=reason))
        log.warning("skipping checkpoint %s in %s: %s", name, self.storage.location, reason)


__all__ = ["MANIFEST_NAME", "CheckpointInfo", "CheckpointManager", "Skipped"]
