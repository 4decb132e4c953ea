"""A training state (a dict) to checkpoint files and back.

Each top-level entry goes to one of two files:

- `data.json`: plain Python data (None, bool, int, float, str, lists, tuples, dicts with str
  keys). Written and read without torch and without pickle.
- `torch.pt`: everything else, through `torch.save`, and read back with
  `torch.load(weights_only=True)` (PyTorch's restricted unpickler: tensors and containers only,
  no arbitrary code). Objects with a `state_dict()` method (modules, optimizers, LR schedulers)
  are stored as their state dict and restored with `load_state_dict` by `restore`.

Files are written through `HashingWriter`, which computes the sha256 for the manifest while the
bytes go to disk, hashing chunk i on a helper thread while chunk i is written (hashlib and file
writes both release the GIL), so the file is not read a second time to hash it. The hash still
competes for CPU with the kernel's writeback: on the 2-vCPU development VM hashed writes were
slower than plain ones (`benchmarks/bench_runtime_write_hash.py`, docs/benchmarks.md).
"""

from __future__ import annotations

import collections
import copy
import hashlib
import json
import math
import random
import sys
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any

from gpurent.errors import DataError, InputError, require

JSON_FILE = "data.json"
TORCH_FILE = "torch.pt"
KIND_JSON = "json"
KIND_TORCH = "torch"
KIND_STATE_DICT = "state_dict"
_TUPLE_TAG = "__tuple__"
_FLOAT_TAG = "__float__"
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_CHUNK_BYTES = 16 * 2**20
_READ_CHUNK_BYTES = 8 * 2**20


def is_plain(value: Any) -> bool:
    """Whether `data.json` can hold `value` exactly (non-finite floats and tuples are tagged)."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple):
        return all(is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and k not in (_TUPLE_TAG, _FLOAT_TAG) for k in value) and all(
            is_plain(v) for v in value.values()
        )
    return False


def _encode(value: Any) -> Any:
    if isinstance(value, tuple):
        return {_TUPLE_TAG: [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return {_FLOAT_TAG: repr(value)}
    return value


def _decode(value: Any) -> Any:
    """The inverse of `_encode`; a tag holding anything `_encode` never writes is damage."""
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if _TUPLE_TAG in value or _FLOAT_TAG in value:
            return _decode_tagged(value)
        return {k: _decode(v) for k, v in value.items()}
    return value


def _decode_tagged(value: dict[str, Any]) -> Any:
    if set(value) == {_TUPLE_TAG} and isinstance(value[_TUPLE_TAG], list):
        return tuple(_decode(v) for v in value[_TUPLE_TAG])
    if set(value) == {_FLOAT_TAG} and value[_FLOAT_TAG] in _NON_FINITE:
        return _NON_FINITE[value[_FLOAT_TAG]]
    raise DataError(f"checkpoint data.json holds a malformed tag {str(value)[:60]}")


def split_state(state: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """Split a state into (plain part, torch part, kind per key). Calls `state_dict()` now."""
    plain: dict[str, Any] = {}
    tensors: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    for key, value in state.items():
        if not isinstance(key, str):
            raise InputError(f"checkpoint state keys must be strings, got {key!r}")
        if is_plain(value):
            plain[key] = value
            kinds[key] = KIND_JSON
        elif callable(getattr(value, "state_dict", None)):
            tensors[key] = value.state_dict()
            kinds[key] = KIND_STATE_DICT
        else:
            tensors[key] = value
            kinds[key] = KIND_TORCH
    return plain, tensors, kinds


def check_loadable(value: Any, path: str = "state") -> None:
    """Refuse, before saving, what `torch.load(weights_only=True)` could not read back.

    A checkpoint that saves fine but cannot be loaded is lost work discovered too late.
    """
    if value is None or isinstance(value, bool | int | float | complex | str | bytes):
        return
    if type(value) in (dict, collections.OrderedDict):
        for k, v in value.items():
            check_loadable(k, f"{path}[{k!r}]")
            check_loadable(v, f"{path}[{k!r}]")
        return
    if type(value) in (list, tuple, set):
        for i, v in enumerate(value):
            check_loadable(v, f"{path}[{i}]")
        return
    torch_mod: Any = _torch_if_loaded()
    if torch_mod is not None:
        safe = (torch_mod.Tensor, torch_mod.Size, torch_mod.dtype, torch_mod.device)
        extra = tuple(g for g in torch_mod.serialization.get_safe_globals() if isinstance(g, type))
        if isinstance(value, safe + extra):
            return
    raise InputError(
        f"checkpoint {path} is a {type(value).__name__}, which cannot be loaded back safely "
        "(torch.load weights_only); store tensors, plain data or an object with state_dict()"
    )


def encode_plain(plain: Mapping[str, Any]) -> bytes:
    """The bytes of `data.json` for the plain part (a snapshot: later mutations do not leak in)."""
    return json.dumps(_encode(dict(plain)), separators=(",", ":")).encode()


def decode_plain(data: bytes) -> dict[str, Any]:
    """`data.json` back to plain data; anything `encode_plain` could not have written is a
    `DataError` (bad UTF-8 or JSON, nesting too deep, an integer too long, a malformed tag)."""
    try:
        decoded = _decode(json.loads(data))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError too
        raise DataError(f"checkpoint data.json cannot be decoded ({type(exc).__name__})") from None
    if not isinstance(decoded, dict):
        raise DataError("checkpoint data.json is not an object; the checkpoint is damaged")
    return decoded


class HashingWriter:
    """A write-only binary stream that counts bytes and computes sha256 while writing."""

    def __init__(self, raw: IO[bytes], pool: ThreadPoolExecutor) -> None:
        self._raw = raw
        self._pool = pool
        self._hash = hashlib.sha256()
        self.size_bytes = 0

    def write(self, data: Any) -> int:
        """Write data, hashing it as it goes; return the number of bytes written."""
        view = memoryview(data).cast("B")
        n = len(view)
        if n <= _CHUNK_BYTES:
            self._hash.update(view)
            self._raw.write(view)
        else:
            pending: Future[None] | None = None
            for offset in range(0, n, _CHUNK_BYTES):
                chunk = view[offset : offset + _CHUNK_BYTES]
                if pending is not None:
                    pending.result()
                pending = self._pool.submit(self._hash.update, chunk)
                self._raw.write(chunk)
            if pending is not None:
                pending.result()
        self.size_bytes += n
        return n

    def flush(self) -> None:
        """Flush the underlying stream."""
        self._raw.flush()

    def hexdigest(self) -> str:
        """The sha256 of everything written so far, as hex."""
        return self._hash.hexdigest()


def torch_save(obj: Any, fh: Any) -> None:
    """`torch.save` without its own CRC32 pass (the manifest's sha256 covers the bytes)."""
    torch: Any = require("torch", "bench")  # the extra that installs torch
    try:
        from torch.utils.serialization import config

        previous = config.save.compute_crc32
        config.save.compute_crc32 = False
    except (ImportError, AttributeError):  # older torch: no switch, CRC stays on
        torch.save(obj, fh)
        return
    try:
        torch.save(obj, fh)
    finally:
        config.save.compute_crc32 = previous


def torch_load(data: IO[bytes]) -> dict[str, Any]:
    """`torch.pt` through `torch.load(weights_only=True)`; what that loader refuses (a pickle of
    other objects, a damaged archive) is a `DataError`."""
    torch: Any = require("torch", "bench")  # the extra that installs torch
    try:
        loaded = torch.load(data, map_location="cpu", weights_only=True)
    except MemoryError:
        raise
    except Exception as exc:  # UnpicklingError, RuntimeError, EOFError, ...: not a checkpoint
        first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else ""
        raise DataError(
            f"checkpoint torch.pt cannot be loaded ({type(exc).__name__}: {first})"
        ) from None
    if not isinstance(loaded, dict):
        raise DataError("checkpoint torch.pt does not hold a dict; the checkpoint is damaged")
    return loaded


def sha256_of(fh: IO[bytes]) -> tuple[int, str]:
    """(size in bytes, sha256 hex) of a readable stream."""
    digest = hashlib.sha256()
    size = 0
    while chunk := fh.read(_READ_CHUNK_BYTES):
        digest.update(chunk)
        size += len(chunk)
    return size, digest.hexdigest()


class SnapshotCache:
    """Host buffers reused between async snapshots, so a snapshot is a copy, not an allocation.

    Allocating (and page-faulting) fresh host memory for every snapshot costs as much as the
    copy itself; DCP's async save keeps pinned buffers for the same reason.
    """

    def __init__(self) -> None:
        self._buffers: dict[str, Any] = {}

    def snapshot(self, value: Any, path: str = "") -> Any:
        """A deep copy of `value` whose tensors live in host memory owned by this cache."""
        torch_mod: Any = _torch_if_loaded()
        if torch_mod is not None and isinstance(value, torch_mod.Tensor):
            src = value.detach()
            buf = self._buffers.get(path)
            if (
                buf is None
                or buf.shape != src.shape
                or buf.dtype != src.dtype
                or buf.layout != src.layout
                or not src.is_contiguous()
            ):
                buf = src.to("cpu", copy=True)
                self._buffers[path] = buf
            else:
                buf.copy_(src)
            return buf
        if isinstance(value, Mapping):
            copied = {k: self.snapshot(v, f"{path}/{k}") for k, v in value.items()}
            return type(value)(copied) if type(value) is not dict else copied  # type: ignore[call-arg]
        if isinstance(value, list):
            return [self.snapshot(v, f"{path}/{i}") for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return tuple(self.snapshot(v, f"{path}/{i}") for i, v in enumerate(value))
        return copy.deepcopy(value)


def _torch_if_loaded() -> Any:
    """torch if the process already imported it: a state without tensors never imports torch."""
    return sys.modules.get("torch")


def restore(loaded: Mapping[str, Any], into: Mapping[str, Any]) -> None:
    """Load state dicts back into live objects: `into[key].load_state_dict(loaded[key])`.

    Keys of `into` whose objects have no `load_state_dict` are left alone (read them from the
    returned state). A key missing from the checkpoint is an error: resuming half a state would
    silently train from a wrong point.
    """
    for key, target in into.items():
        if not callable(getattr(target, "load_state_dict", None)):
            continue
        if key not in loaded:
            raise DataError(f"checkpoint has no entry {key!r} to restore; it has {sorted(loaded)}")
        target.load_state_dict(loaded[key])


def capture_rng() -> dict[str, Any]:
    """The random number generator states of Python, NumPy and torch (those imported).

    Store it under a key of the state (`state["rng"] = capture_rng()`), and give the loaded value
    to `set_rng` when resuming, so data order and dropout masks continue where they stopped.
    """
    out: dict[str, Any] = {"python": random.getstate()}
    np: Any = sys.modules.get("numpy")
    if np is not None:
        name, keys, pos, has_gauss, cached = np.random.get_state()
        out["numpy"] = (str(name), [int(k) for k in keys], int(pos), int(has_gauss), float(cached))
    torch_mod: Any = _torch_if_loaded()
    if torch_mod is not None:
        out["torch"] = torch_mod.get_rng_state()
        if torch_mod.cuda.is_available():
            out["cuda"] = torch_mod.cuda.get_rng_state_all()
    return out


def set_rng(saved: Mapping[str, Any]) -> None:
    """Restore states captured by `capture_rng`."""
    py = saved["python"]
    random.setstate((py[0], tuple(py[1]), py[2]))
    np: Any = sys.modules.get("numpy")
    if np is not None and "numpy" in saved:
        name, keys, pos, has_gauss, cached = saved["numpy"]
        np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch_mod: Any = _torch_if_loaded()
    if torch_mod is not None and "torch" in saved:
        torch_mod.set_rng_state(saved["torch"])
        if "cuda" in saved and torch_mod.cuda.is_available():
            torch_mod.cuda.set_rng_state_all(saved["cuda"])
