"""The push client: `gpurent monitor --push URL` sends batched sample rows to a `gpurent serve`.

It has the recorder's shape (`add`, `flush`, `close`), so the monitor loop feeds it the same way.
A push that fails (server down, 5xx, refused token) keeps the rows for the next try in a bounded
buffer (oldest samples dropped first, counted) and returns a note; the loop never stops for it.
Rows go out a whole sample at a time, so a sample's GPUs are never split across two requests.
"""

from __future__ import annotations

import json
import math
from collections import deque
from typing import Any

from gpurent.errors import InputError
from gpurent.http import URLLIB_HTTP, Http, HttpError
from gpurent.monitor.sample import COLUMNS, Sample, to_rows
from gpurent.sample_columns import GPU_FLOAT_COLUMNS, GPU_INT_COLUMNS, HOST_COLUMNS

PUSH_PATH = "/api/monitor/push"
TOKEN_HEADER = "X-Gpurent-Machine-Token"
TOKEN_ENV = "GPURENT_PUSH_TOKEN"
MAX_ROWS_PER_REQUEST = 500  # the server refuses more than MAX_PUSH_ROWS (2,000) with 413
MAX_BUFFER_SAMPLES = 20_000  # at 8 GPUs and 1 Hz, 5.5 hours of rows
REPLY_BYTES = 64 * 1024


def push_url(base: str) -> str:
    """The push endpoint of a server given by its base URL (or by the endpoint itself)."""
    base = base.rstrip("/")
    return base if base.endswith(PUSH_PATH) else base + PUSH_PATH


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    """A row as JSON can carry it: non-finite numbers (never measured so) become null."""
    return {
        k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()
    }


class Pusher:
    """Buffers samples and POSTs their rows to `url` as `{"machine": NAME, "rows": [...]}`
    (`machine` left out when None: the token alone names the machine; given, the server checks
    that the token is that machine's)."""

    def __init__(
        self,
        url: str,
        *,
        machine: str | None,
        token: str,
        http: Http = URLLIB_HTTP,
        timeout_s: float = 5.0,
        max_buffer_samples: int = MAX_BUFFER_SAMPLES,
        max_rows_per_request: int = MAX_ROWS_PER_REQUEST,
    ) -> None:
        self.url = push_url(url)
        self.machine = machine
        self._token = token
        self._http = http
        self._timeout_s = timeout_s
        self._max_rows = max_rows_per_request
        self._buffer: deque[list[dict[str, Any]]] = deque(maxlen=max_buffer_samples)
        self.sent_rows = 0
        self.dropped_samples = 0
        self.rejected_rows = 0
        self.last_error = ""

    def __repr__(self) -> str:  # never show the token
        return f"Pusher(url={self.url!r}, machine={self.machine!r})"

    def add(self, sample: Sample) -> None:
        """Buffer the sample's rows for the next push (the oldest sample goes when full)."""
        if len(self._buffer) == self._buffer.maxlen:
            self.dropped_samples += 1
        self._buffer.append([_clean(r) for r in to_rows(sample)])

    @property
    def pending_samples(self) -> int:
        """Samples buffered and not yet accepted by the server."""
        return len(self._buffer)

    def _batch(self) -> tuple[int, list[dict[str, Any]]]:
        """The first samples of the buffer up to the row limit (at least one sample)."""
        rows: list[dict[str, Any]] = []
        taken = 0
        for sample_rows in self._buffer:
            if rows and len(rows) + len(sample_rows) > self._max_rows:
                break
            rows.extend(sample_rows)
            taken += 1
        return taken, rows

    def _send(self, rows: list[dict[str, Any]]) -> tuple[str | None, bool]:
        """(None, _) when the server took the rows; else (what went wrong, whether to retry:
        not for rows the server refused as bad or too many, which would never pass)."""
        doc: dict[str, Any] = {"rows": rows}
        if self.machine is not None:
            doc["machine"] = self.machine
        body = json.dumps(doc, allow_nan=False).encode()
        headers = {"Content-Type": "application/json", TOKEN_HEADER: self._token}
        try:
            reply = self._http.post(
                self.url,
                timeout_s=self._timeout_s,
                max_bytes=REPLY_BYTES,
                headers=headers,
                body=body,
            )
        except HttpError as exc:
            return exc.message, True
        if reply.ok:
            return None, False
        try:
            said = str(json.loads(reply.body).get("error", ""))
        except (ValueError, AttributeError):
            said = ""
        problem = f"HTTP {reply.status}" + (f": {said[:200]}" if said else "")
        return problem, reply.status not in (413, 422)

    def flush(self, now_s: float | None = None) -> str | None:
        """Push what is buffered, batch by batch; a note on the first failure, else None."""
        del now_s  # the recorder's signature; pushing has no retention
        while self._buffer:
            taken, rows = self._batch()
            problem, retry = self._send(rows)
            if problem is not None and retry:
                self.last_error = problem
                return f"push to {self.url} failed ({problem}); keeping the samples and retrying"
            if problem is not None:
                self.rejected_rows += len(rows)
                note = f"push to {self.url}: the server refused {len(rows)} rows ({problem})"
                for _ in range(taken):
                    self._buffer.popleft()
                self.last_error = problem
                return note
            for _ in range(taken):
                self._buffer.popleft()
            self.sent_rows += len(rows)
        self.last_error = ""
        return None

    def close(self) -> str | None:
        """Push what is left; a note if that failed."""
        return self.flush()


# --- what the server accepts (checked by `gpurent serve`'s push endpoint) ---

MAX_PUSH_ROWS = 2_000  # per request: 250 samples of 8 GPUs; more is refused with 413
_MAX_GPU_INDEX = 1023
_MAX_INT = 2**63 - 1
_MAX_TIMESTAMP_S = 1e11  # year 5138: anything later is a unit mix-up (ms for s)
_TEXT_LIMITS = {"gpu_name": 128, "gpu_uuid": 96, "xid": 256, "sources": 4096}
_FLOATS = frozenset((*GPU_FLOAT_COLUMNS, *HOST_COLUMNS))
_INTS = frozenset(GPU_INT_COLUMNS)
_KNOWN = frozenset(COLUMNS)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _bad(i: int, key: str) -> InputError:
    if key in _FLOATS:
        return InputError(f"rows[{i}].{key} must be a finite number or null")
    if key in _INTS or key == "gpu":
        top = _MAX_GPU_INDEX if key == "gpu" else _MAX_INT
        return InputError(f"rows[{i}].{key} must be an integer in 0-{top} or null")
    if key == "lost":
        return InputError(f"rows[{i}].lost must be true or false")
    return InputError(f"rows[{i}].{key} must be text of at most {_TEXT_LIMITS[key]} characters")


def _ok(key: str, value: Any) -> bool:
    """Whether a non-null cell is what its column holds (the slow path: ints, bools, texts)."""
    kind = type(value)
    if key in _FLOATS:
        return kind is int and abs(value) <= 1e15
    if key in _INTS or key == "gpu":
        top = _MAX_GPU_INDEX if key == "gpu" else _MAX_INT
        return kind is int and 0 <= value <= top
    if key == "lost":
        return kind is bool
    return kind is str and len(value) <= _TEXT_LIMITS[key]


def check_pushed_rows(rows: object) -> list[dict[str, Any]]:
    """The pushed rows when every one is a flat sample row (`COLUMNS`: known names only, a
    finite `timestamp`, finite numbers or null, bounded texts); else InputError naming the first
    bad row and column. The row count is the caller's to bound (`MAX_PUSH_ROWS`)."""
    if not isinstance(rows, list):
        raise InputError("rows must be a list of sample rows")
    floats, isfinite = _FLOATS, math.isfinite
    for i, row in enumerate(rows):
        if type(row) is not dict:
            raise InputError(f"rows[{i}] must be an object of sample columns")
        unknown = row.keys() - _KNOWN
        if unknown:
            raise InputError(
                f"rows[{i}]: unknown column {sorted(unknown)[0][:64]!r} (see docs/monitor.md)"
            )
        ts: Any = row.get("timestamp")
        if not (_number(ts) and isfinite(ts) and 0 <= ts <= _MAX_TIMESTAMP_S):
            raise InputError(f"rows[{i}].timestamp must be Unix seconds, got {str(ts)[:32]}")
        for key, value in row.items():
            if value is None or key == "timestamp":
                continue
            if type(value) is float and key in floats:  # the common case, kept fast
                if not (isfinite(value) and -1e15 <= value <= 1e15):
                    raise _bad(i, key)
            elif not _ok(key, value):
                raise _bad(i, key)
    return rows
