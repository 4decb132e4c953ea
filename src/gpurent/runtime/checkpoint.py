"""`CheckpointManager`: atomic, verified, rotating checkpoints with sync and async saves.

Protocol (RESEARCH.md section 5, "Atomic checkpoint protocol"): write into a staging area, fsync
the files, write a manifest (step, time, sizes, sha256 per file, library versions) last, fsync,
make it visible atomically (local: rename + fsync of the parent; object stores: the manifest's
presence is the commit, see `storage.py`), and delete old checkpoints only after the new one is
committed. `load_latest` walks newest to oldest and returns the first that verifies, logging why
the others were skipped; nothing a checkpoint directory holds makes it raise.

Rotation keeps the newest `keep_last` checkpoints that verify. A checkpoint that does not verify
(and every checkpoint newer than the one `load_latest` resumed from) is moved aside into
`moved-aside/` with a reason file, never deleted and never counted as one of the kept.

Async saves follow CheckFreq's snapshot-then-persist (FAST'21) and PyTorch DCP's async save: the
training loop is blocked only while tensors are copied into host buffers; the write, fsync and
hashing run on one background thread, and at most one save is in flight.
"""

from __future__ import annotations

import dataclasses
import errno
import logging
import os
import platform
import shutil
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from enum import StrEnum
from typing import Any

from gpurent import __version__
from gpurent.errors import DataError, DeviceError, InputError, MissingExtraError
from gpurent.runtime import manifest as mf
from gpurent.runtime import serialize
from gpurent.runtime.manifest import FORMAT, MAX_STEP_DIGITS, check_step
from gpurent.runtime.storage import (
    MANIFEST_NAME,
    MOVED_ASIDE_DIR,
    LocalStorage,
    Storage,
    open_storage,
)
from gpurent.spot.interval import daly_interval_s

log = logging.getLogger("gpurent.runtime")

DEFAULT_INTERVAL_S = 15 * 60.0  # the guide's "checkpoint every 15 minutes"


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


@dataclasses.dataclass(frozen=True, slots=True)
class _Entry:
    """One `step-*` directory as listed: its manifest, or why it has none that is valid."""

    step: int
    name: str
    manifest: mf.Manifest | None
    problem: str | None  # None with no manifest: never committed (or a deletion cut short)

    @property
    def created_unix_s(self) -> float:
        return self.manifest.created_unix_s if self.manifest else 0.0


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


class Interval(StrEnum):
    """A checkpoint interval that is not a number of seconds."""

    AUTO = "auto"  # Daly's optimum from the measured save cost and the expected interruptions


class CheckpointManager:
    """Save, rotate and load training checkpoints in a directory or an fsspec URL.

    `interval` is the time between saves in seconds (default 900 s, the guide's 15 minutes),
    `None` for step-based saving only, or `Interval.AUTO` (or the string `"auto"`) for Daly's
    optimum (`spot.interval`) from the measured save cost (the blocking time of the last save)
    and `mtti_s`, the expected time to interruption in seconds. `every_steps` adds a step
    trigger. `clock` is a monotonic clock in seconds (injected for tests); `wall_clock` stamps
    manifests.
    """

    def __init__(
        self,
        directory_or_url: str | os.PathLike[str] | Storage,
        *,
        keep_last: int = 3,
        interval: float | Interval | str | None = DEFAULT_INTERVAL_S,
        every_steps: int | None = None,
        mtti_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        storage_options: Mapping[str, Any] | None = None,
    ) -> None:
        if keep_last < 1:
            raise InputError(f"keep_last must be at least 1, got {keep_last}")
        if isinstance(interval, str):
            if interval.strip().lower() != Interval.AUTO:
                raise InputError(f"interval must be seconds, None or 'auto', got {interval!r}")
            interval = Interval.AUTO
            if mtti_s is None or not mtti_s > 0:
                raise InputError(
                    "interval='auto' needs mtti_s, the expected seconds to interruption"
                )
        elif interval is not None and not interval > 0:
            raise InputError(f"interval must be a positive number of seconds, got {interval}")
        if every_steps is not None and every_steps < 1:
            raise InputError(f"every_steps must be at least 1, got {every_steps}")
        if isinstance(directory_or_url, str | os.PathLike):
            self.storage: Storage = open_storage(directory_or_url, **dict(storage_options or {}))
        else:
            self.storage = directory_or_url
        self.keep_last = keep_last
        self.interval: float | Interval | None = interval
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
        self._in_flight_step: int | None = None
        self.last_async_error: BaseException | None = None
        # name -> None (verifies) or why not; filled by saves, load_latest and rotation
        self._verdicts: dict[str, str | None] = {}
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
        if self.interval is Interval.AUTO:
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
        """Whether a stop was requested (a spot notice or signal): save and exit."""
        return self._stop.is_set()

    # ---- saving ---------------------------------------------------------------------------

    def save(self, state: Mapping[str, Any], step: int) -> CheckpointInfo:
        """Save `state` as checkpoint `step` (a non-negative integer), blocking until committed.

        A failed earlier `save_async` is logged here, once, and does not stop this save."""
        step = check_step(step)
        self._settle_previous(step)
        started = self._clock()
        plain, tensors, kinds = serialize.split_state(state)
        serialize.check_loadable(tensors)
        info = self._write(serialize.encode_plain(plain), tensors, kinds, step, started)
        self._mark_saved(step, started)
        return info

    def save_async(self, state: Mapping[str, Any], step: int) -> Future[CheckpointInfo]:
        """Snapshot `state` to host memory and save it in the background; return the future.

        Blocks only for the snapshot (and, if a save is still in flight, until it finishes: at
        most one save is in flight). The future holds this save's error; a failure of the
        previous async save is logged here, once, and this step is saved anyway.
        """
        step = check_step(step)
        started = self._clock()
        self._settle_previous(step)
        plain, tensors, kinds = serialize.split_state(state)
        serialize.check_loadable(tensors)
        plain_bytes = serialize.encode_plain(plain)
        snapshot = self._snapshots.snapshot(tensors) if tensors else {}
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="gpurent-ckpt")
        future = self._executor.submit(self._write, plain_bytes, snapshot, kinds, step, started)
        self._in_flight = future
        self._in_flight_step = step
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

    def _settle_previous(self, step: int) -> None:
        """Wait for the in-flight async save; if it failed, log that once and go on: its error
        stays in its future, and raising it again here would cost `step` too."""
        future, self._in_flight = self._in_flight, None
        if future is None:
            return
        exc = future.exception()
        if exc is not None:
            self.last_async_error = exc
            log.warning(
                "checkpoint of step %s failed in the background (%s); saving step %d",
                self._in_flight_step,
                exc,
                step,
            )

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
        staging: str | None = None
        files: dict[str, mf.FileEntry] = {}
        try:
            staging = self.storage.begin(name)
            with self.storage.open_write(staging, serialize.JSON_FILE) as raw:
                writer = serialize.HashingWriter(raw, self._hash_pool)
                writer.write(plain_bytes)
            files[serialize.JSON_FILE] = mf.FileEntry(
                size_bytes=writer.size_bytes, sha256=writer.hexdigest()
            )
            if tensors:
                with self.storage.open_write(staging, serialize.TORCH_FILE) as raw:
                    writer = serialize.HashingWriter(raw, self._hash_pool)
                    serialize.torch_save(dict(tensors), writer)
                files[serialize.TORCH_FILE] = mf.FileEntry(
                    size_bytes=writer.size_bytes, sha256=writer.hexdigest()
                )
            created = self._wall_clock()
            manifest = mf.build(
                step=step,
                created_unix_s=created,
                keys=dict(kinds),
                files=files,
                versions=_versions(),
            )
            self.storage.commit(staging, name, manifest)
        except BaseException as exc:
            if staging is not None:
                self.storage.abort(staging)
            if _is_enospc(exc):
                raise DeviceError(
                    f"checkpoint step {step} not saved: no space left on device at "
                    f"{self.storage.location}{self._free_hint()}; older checkpoints are intact; "
                    "free space or point the checkpoint directory elsewhere"
                ) from exc
            raise
        self._verdicts[name] = None
        duration_s = self._clock() - started
        try:
            self._rotate(keep=name)
        except Exception as exc:  # committed is committed: a failed rotation must not undo it
            log.warning("checkpoint rotation in %s failed: %s", self.storage.location, exc)
        size = sum(f.size_bytes for f in files.values())
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

    def _entry(self, step: int, name: str) -> _Entry:
        try:
            raw = self.storage.read_manifest(name)
            if raw is None:
                return _Entry(step, name, None, None)
            return _Entry(step, name, mf.parse(raw, name_step=step), None)
        except MissingExtraError:
            raise
        except Exception as exc:  # DataError, OSError (EIO, EACCES, ...): does not verify
            return _Entry(step, name, None, f"manifest unusable: {_why(exc)}")

    def _entries(self) -> list[_Entry]:
        """Every `step-*` directory, newest first (by step, then by manifest time)."""
        found: list[tuple[int, str]] = []
        for name in self.storage.list_names():
            step = mf.step_of_name(name)
            if step is not None:
                found.append((step, name))
        entries = [self._entry(step, name) for step, name in found]
        entries.sort(key=lambda e: (e.step, e.created_unix_s, e.name), reverse=True)
        return entries

    def committed(self) -> list[CheckpointInfo]:
        """Checkpoints whose manifest is valid, newest first; not re-hashed. Never raises on
        what the directory holds."""
        return [
            CheckpointInfo(
                name=e.name,
                step=e.step,
                created_unix_s=e.manifest.created_unix_s,
                size_bytes=e.manifest.size_bytes,
                save_duration_s=0.0,
            )
            for e in self._entries()
            if e.manifest is not None
        ]

    def _verify(self, name: str, manifest: mf.Manifest) -> None:
        for filename, meta in manifest.files.items():
            size = self.storage.size_bytes(name, filename)
            if size is None:
                raise DataError(f"{filename} is missing")
            if size != meta.size_bytes:
                raise DataError(f"{filename} has {size} bytes, manifest says {meta.size_bytes}")
            with self.storage.open_read(name, filename) as fh:
                _, digest = serialize.sha256_of(fh)
            if digest != meta.sha256:
                raise DataError(f"{filename} sha256 mismatch (file damaged)")

    def _verdict(self, entry: _Entry) -> str | None:
        """None when `entry` verifies (hashing it once per manager), else why not."""
        if entry.manifest is None:
            return entry.problem or "no manifest (never committed)"
        if entry.name not in self._verdicts:
            try:
                self._verify(entry.name, entry.manifest)
                self._verdicts[entry.name] = None
            except MissingExtraError:
                raise
            except Exception as exc:
                self._verdicts[entry.name] = _why(exc)
        return self._verdicts[entry.name]

    def _rotate(self, keep: str) -> None:
        """Keep the newest `keep_last` checkpoints that verify; move aside those that do not
        (and those newer than the resumed one, see `load_latest`); drop crash debris.

        Checkpoints are hashed only when something is to be deleted, and each at most once
        per manager (the one just written and the one resumed from are known good)."""
        entries = self._entries()
        need_verify = sum(e.manifest is not None for e in entries) > self.keep_last
        kept = 0
        for entry in entries:
            if entry.manifest is None and entry.problem is None:
                continue  # not committed: debris, below
            if entry.name == keep:
                kept += 1
                continue
            reason = self._verdicts.get(entry.name) or entry.problem
            if reason is None and kept >= self.keep_last:
                self._try("delete", entry.name, self.storage.delete, entry.name)
                continue
            if reason is None and need_verify:
                reason = self._verdict(entry)
            if reason is None:
                kept += 1
            elif self._still_committed(entry):
                self._move_aside(entry.name, reason)
        newest = max((e.step for e in entries if e.manifest is not None), default=-1)
        for entry in entries:
            if entry.manifest is None and entry.problem is None and entry.step < newest:
                self._try("delete", entry.name, self.storage.delete, entry.name)  # debris
        names = {e.name for e in entries}
        for name in [n for n in self._verdicts if n not in names]:
            self._verdicts.pop(name, None)  # deleted or moved: forget it, the map stays small
        if isinstance(self.storage, LocalStorage):
            self.storage.remove_stale_staging()

    def _move_aside(self, name: str, reason: str) -> None:
        note = (
            f"checkpoint {name} moved aside (not deleted) by gpurent pid {os.getpid()} at "
            f"unix time {self._wall_clock():.0f}: {reason}"
        )
        if self._try("move aside", name, self.storage.move_aside, name, note):
            self._verdicts.pop(name, None)
            log.warning("moved checkpoint %s aside into %s/: %s", name, MOVED_ASIDE_DIR, reason)

    def _still_committed(self, entry: _Entry) -> bool:
        """Whether `entry` still has its manifest (another writer may be deleting it)."""
        try:
            return self.storage.read_manifest(entry.name) is not None
        except Exception:
            return True  # present but unreadable: it is damaged, move it aside

    def _try(self, what: str, name: str, op: Callable[..., None], *args: str) -> bool:
        """Run one rotation step; a failure is logged and the rest of the rotation goes on."""
        try:
            op(*args)
        except Exception as exc:
            log.warning("could not %s checkpoint %s: %s", what, name, exc)
            return False
        return True

    def _read(self, name: str, manifest: mf.Manifest) -> dict[str, Any]:
        with self.storage.open_read(name, serialize.JSON_FILE) as fh:
            state = serialize.decode_plain(fh.read())
        if serialize.TORCH_FILE in manifest.files:
            with self.storage.open_read(name, serialize.TORCH_FILE) as fh:
                tensors = serialize.torch_load(fh)
            if set(tensors) & set(state):
                raise DataError("data.json and torch.pt hold the same entry")
            state.update(tensors)
        missing = set(manifest.keys) - set(state)
        if missing:
            raise DataError(f"entries {sorted(missing)} are missing")
        return state

    def load_latest(
        self, into: Mapping[str, Any] | None = None, *, at_most_step: int | None = None
    ) -> tuple[int, dict[str, Any]] | None:
        """The newest checkpoint that verifies, as (step, state), or None when there is none.

        Every file is checked against the manifest's size and sha256 before it is deserialized;
        checkpoints that fail (any damage, any crafted content) are skipped with a logged
        reason (also in `last_skipped`), never raised. The next save moves the skipped ones
        that are newer than the returned step aside. With `into`, objects with
        `load_state_dict` (modules, optimizers, schedulers) are restored in place from the
        entries of the same key. Resets the save timer.

        In a multi-node job under `gpurent run`, checkpoints newer than the step every node
        can load (`at_most_step`, by default $GPURENT_RESUME_STEP, which the supervisors agree
        on; `none` when some node has none) are skipped and superseded like damaged ones.
        """
        self.last_skipped = []
        limit = _resume_limit() if at_most_step is None else at_most_step
        entries = self._entries()
        for i, entry in enumerate(entries):
            self._verdicts.pop(entry.name, None)  # re-hash: it may have changed since
            if limit is not None and entry.step > limit:
                self._skip(entry.name, _newer_than(limit))
                self._verdicts[entry.name] = _newer_than(limit)
                continue
            reason = self._verdict(entry)
            if reason is None:
                assert entry.manifest is not None
                try:
                    state = self._read(entry.name, entry.manifest)
                except MissingExtraError:
                    raise
                except Exception as exc:
                    reason = self._verdicts[entry.name] = _why(exc)
            if reason is not None:
                self._skip(entry.name, reason)
                continue
            self._supersede(entries[:i], entry.step)
            if into is not None:
                serialize.restore(state, into)
            self._last_save_time = self._clock()
            self._last_save_step = entry.step
            return entry.step, state
        if limit is not None:
            self._supersede(entries, -1)
        return None

    def _supersede(self, skipped: list[_Entry], step: int) -> None:
        """Mark the committed checkpoints newer than the resumed `step` (they did not verify)
        to be moved aside by the next save, saying why."""
        for entry in skipped:
            if entry.step > step and (entry.manifest is not None or entry.problem is not None):
                why = self._verdicts.get(entry.name) or entry.problem
                if step < 0:  # the job agreed to start from scratch
                    self._verdicts[entry.name] = f"superseded: {why}"
                    continue
                self._verdicts[entry.name] = (
                    f"superseded: this run resumed from step {step}, older than this one ({why})"
                )

    def newest_verified(self) -> CheckpointInfo | None:
        """The newest checkpoint whose files match its manifest (hashed, not deserialized), or
        None; never raises on what the directory holds."""
        for entry in self._entries():
            self._verdicts.pop(entry.name, None)
            if entry.manifest is not None and self._verdict(entry) is None:
                return CheckpointInfo(
                    name=entry.name,
                    step=entry.step,
                    created_unix_s=entry.manifest.created_unix_s,
                    size_bytes=entry.manifest.size_bytes,
                    save_duration_s=0.0,
                )
        return None

    def _skip(self, name: str, reason: str) -> None:
        self.last_skipped.append(Skipped(name=name, reason=reason))
        log.warning("skipping checkpoint %s in %s: %s", name, self.storage.location, reason)


def _newer_than(limit: int) -> str:
    if limit < 0:
        return "another node of the job has no checkpoint: the job starts from scratch"
    return f"newer than step {limit}, the newest that every node of the job can load"


def _resume_limit() -> int | None:
    """$GPURENT_RESUME_STEP: a step, `none` (-1: load nothing), or unset/garbage (None)."""
    raw = os.environ.get("GPURENT_RESUME_STEP", "").strip()
    if raw == "none":
        return -1
    if raw.isdigit():
        return int(raw)
    if raw:
        log.warning("ignoring GPURENT_RESUME_STEP=%r: not a step number or 'none'", raw[:40])
    return None


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text[:200] or type(exc).__name__


def newest_verified_step(
    directory_or_url: str | os.PathLike[str],
    storage_options: Mapping[str, Any] | None = None,
) -> int | None:
    """The step of the newest checkpoint in a directory or URL that verifies (every file's size
    and sha256 match its valid manifest), or None: none there, or it cannot be read. Never
    raises; hashes the files, so poll it sparingly for large checkpoints."""
    try:
        mgr = CheckpointManager(directory_or_url, interval=None, storage_options=storage_options)
        info = mgr.newest_verified()
    except Exception as exc:
        log.warning("cannot read checkpoints in %s: %s", os.fspath(directory_or_url), exc)
        return None
    return None if info is None else info.step


__all__ = [
    "FORMAT",
    "MANIFEST_NAME",
    "MAX_STEP_DIGITS",
    "MOVED_ASIDE_DIR",
    "CheckpointInfo",
    "CheckpointManager",
    "Interval",
    "Skipped",
    "newest_verified_step",
]
