"""Interruption notices: one watcher per cloud metadata service, and SIGTERM.

Endpoints and grace periods (RESEARCH.md section 5):

- AWS: IMDSv2 token (`PUT /latest/api/token`), then `GET /latest/meta-data/spot/instance-action`
  (404 normally; JSON {"action", "time"} about 2 minutes before the stop) and the rebalance
  recommendation at `/latest/meta-data/events/recommendations/rebalance` (a hint, not a stop).
- GCP: `GET /computeMetadata/v1/instance/preempted` with `Metadata-Flavor: Google` -> TRUE/FALSE;
  30 s of grace for Spot VMs.
- Azure: Scheduled Events `GET /metadata/scheduledevents?api-version=2020-07-01` with
  `Metadata: true`; an event with EventType "Preempt" gives >= 30 s.
- SIGTERM: what torchrun, Kubernetes and systemd send; torchrun SIGKILLs ~30 s later.

Base URLs are constructor arguments so tests point the watchers at servers on 127.0.0.1; all
HTTP goes through one seam, `Http`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from gpurent.cloud.metadata import (
    AWS_BASE_URL,
    AZURE_BASE_URL,
    GCP_BASE_URL,
    MAX_BODY_BYTES,
    JunkAnswerError,
)
from gpurent.errors import InputError
from gpurent.http import DIRECT_HTTP, Http, HttpError

log = logging.getLogger("gpurent.runtime")

AWS_GRACE_S = 120.0
GCP_GRACE_S = 30.0
AZURE_GRACE_S = 30.0
SIGTERM_GRACE_S = 30.0  # torchrun's SIGTERM-to-SIGKILL delay
DEFAULT_POLL_S = 5.0  # AWS recommends polling instance-action every 5 s


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """An interruption notice. `terminating` is False for hints (AWS rebalance)."""

    provider: str
    kind: str
    detail: str
    grace_s: float
    terminating: bool = True


class NoticeWatcher(Protocol):
    """A source of interruption notices (a cloud's metadata service, a signal), polled."""

    name: str

    def poll(self) -> Notice | None:
        """A notice if one is pending now; None otherwise. May raise OSError or HttpError
        (unreachable) or JunkAnswerError (an answer that does not follow the service's format)."""
        ...


class AwsWatcher:
    """EC2 spot instance-action and rebalance recommendation through IMDSv2."""

    name = "aws"

    def __init__(
        self,
        base_url: str = AWS_BASE_URL,
        *,
        http: Http = DIRECT_HTTP,
        timeout_s: float = 1.0,
        token_ttl_s: int = 21600,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http
        self._timeout_s = timeout_s
        self._token_ttl_s = token_ttl_s
        self._clock = clock
        self._token: str | None = None
        self._token_expiry = 0.0

    def _get_token(self) -> str:
        if self._token is None or self._clock() >= self._token_expiry:
            status, body = _ask(
                self._http,
                "PUT",
                f"{self.base_url}/latest/api/token",
                {"X-aws-ec2-metadata-token-ttl-seconds": str(self._token_ttl_s)},
                self._timeout_s,
            )
            if status != 200:
                raise OSError(f"IMDSv2 token request answered HTTP {status}")
            token = body.strip()
            # a token goes into a header: printable ASCII only (no CR/LF, no header injection)
            if not token or len(token) > 1024 or any(not 0x21 <= b <= 0x7E for b in token):
                raise JunkAnswerError("IMDSv2 token is empty or not printable ASCII")
            self._token = token.decode("ascii")
            self._token_expiry = self._clock() + self._token_ttl_s * 0.9
        return self._token

    def _get(self, path: str) -> tuple[int, bytes]:
        headers = {"X-aws-ec2-metadata-token": self._get_token()}
        status, body = _ask(self._http, "GET", f"{self.base_url}{path}", headers, self._timeout_s)
        if status == 401:  # token expired early: fetch a new one once
            self._token = None
            headers = {"X-aws-ec2-metadata-token": self._get_token()}
            status, body = _ask(
                self._http, "GET", f"{self.base_url}{path}", headers, self._timeout_s
            )
        return status, body

    def poll(self) -> Notice | None:
        """The pending EC2 spot instance-action or rebalance recommendation, else None."""
        status, body = self._get("/latest/meta-data/spot/instance-action")
        if status == 200:
            action = _json_object(body, "spot/instance-action")
            name, when = action.get("action"), action.get("time", "?")
            if not isinstance(name, str) or not name.isascii() or not name.isalnum():
                raise JunkAnswerError(f"spot/instance-action has no valid action: {body[:80]!r}")
            return Notice(
                provider="aws",
                kind=f"spot-{name.lower()}",
                detail=f"instance-action at {_printable(str(when))}",
                grace_s=AWS_GRACE_S,
            )
        status, body = self._get("/latest/meta-data/events/recommendations/rebalance")
        if status == 200:
            return Notice(
                provider="aws",
                kind="rebalance",
                detail=_printable(body.decode(errors="replace").strip()),
                grace_s=AWS_GRACE_S,
                terminating=False,
            )
        return None


class _MetadataWatcher:
    """A watcher that polls one cloud metadata endpoint over the injected `Http` seam."""

    def __init__(self, base_url: str, *, http: Http = DIRECT_HTTP, timeout_s: float = 1.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http
        self._timeout_s = timeout_s

    def _fetch(self, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
        return _ask(self._http, "GET", f"{self.base_url}{path}", headers, self._timeout_s)


def _ask(
    http: Http, method: str, url: str, headers: Mapping[str, str], timeout_s: float
) -> tuple[int, bytes]:
    """One metadata request: the whole answer within `timeout_s`, at most `MAX_BODY_BYTES`."""
    answer = http.request(
        method,
        url,
        headers=headers,
        timeout_s=timeout_s,
        deadline_s=timeout_s,
        max_bytes=MAX_BODY_BYTES,
    )
    return answer.status, answer.body


class GcpWatcher(_MetadataWatcher):
    """GCE `instance/preempted` (Spot and preemptible VMs)."""

    name = "gcp"

    def __init__(
        self, base_url: str = GCP_BASE_URL, *, http: Http = DIRECT_HTTP, timeout_s: float = 1.0
    ) -> None:
        super().__init__(base_url, http=http, timeout_s=timeout_s)

    def poll(self) -> Notice | None:
        """A preemption notice if GCE says the VM is preempted, else None."""
        status, body = self._fetch(
            "/computeMetadata/v1/instance/preempted", {"Metadata-Flavor": "Google"}
        )
        if status != 200:
            return None
        answer = body.strip().upper()
        if answer == b"TRUE":
            return Notice(
                provider="gcp", kind="preempted", detail="preempted=TRUE", grace_s=GCP_GRACE_S
            )
        if answer != b"FALSE":
            raise JunkAnswerError(f"instance/preempted is neither TRUE nor FALSE: {body[:80]!r}")
        return None


class AzureWatcher(_MetadataWatcher):
    """Azure Scheduled Events: a `Preempt` event (Spot VMs)."""

    name = "azure"

    def __init__(
        self, base_url: str = AZURE_BASE_URL, *, http: Http = DIRECT_HTTP, timeout_s: float = 1.0
    ) -> None:
        super().__init__(base_url, http=http, timeout_s=timeout_s)

    def poll(self) -> Notice | None:
        """A notice for a pending Preempt scheduled event, else None."""
        status, body = self._fetch(
            "/metadata/scheduledevents?api-version=2020-07-01", {"Metadata": "true"}
        )
        if status != 200:
            return None
        events = _json_object(body, "scheduledevents").get("Events", [])
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            raise JunkAnswerError(f"scheduledevents Events is not a list of objects: {body[:80]!r}")
        for event in events:
            if event.get("EventType") == "Preempt":
                return Notice(
                    provider="azure",
                    kind="preempt",
                    detail=_printable(
                        f"event {event.get('EventId', '?')} not before "
                        f"{event.get('NotBefore', '?')}"
                    ),
                    grace_s=AZURE_GRACE_S,
                )
        return None


def _json_object(body: bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise JunkAnswerError(f"{what} is not JSON: {body[:80]!r}") from None
    if not isinstance(data, dict):
        raise JunkAnswerError(f"{what} is not a JSON object: {body[:80]!r}")
    return data


def _printable(text: str, limit: int = 200) -> str:
    return "".join(c if c.isprintable() else "?" for c in text[:limit])


class SigtermWatcher:
    """SIGTERM (and optionally SIGINT) turned into a notice; install from the main thread."""

    name = "sigterm"

    def __init__(self) -> None:
        self._received = threading.Event()
        self._signal_name = ""
        self._previous: dict[signal.Signals, Any] = {}

    def install(self, signals: Sequence[signal.Signals] = (signal.SIGTERM,)) -> SigtermWatcher:
        """Install the handler for signals (SIGTERM by default); return self."""
        for sig in signals:
            self._previous[sig] = signal.signal(sig, self._handler)
        return self

    def uninstall(self) -> None:
        """Put back the handlers that were there before `install`."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handler(self, signum: int, frame: Any) -> None:
        self._signal_name = signal.Signals(signum).name
        self._received.set()

    def poll(self) -> Notice | None:
        """A notice once a signal was received, else None."""
        if not self._received.is_set():
            return None
        return Notice(
            provider="signal",
            kind=self._signal_name.lower(),
            detail=f"received {self._signal_name}",
            grace_s=SIGTERM_GRACE_S,
        )


def watchers_for(
    provider: str, *, http: Http = DIRECT_HTTP, base_urls: Mapping[str, str] | None = None
) -> list[NoticeWatcher]:
    """Watchers for `aws`, `gcp`, `azure`, `auto` (whichever metadata service answers) or `none`."""
    urls = dict(base_urls or {})
    make: dict[str, Callable[[], NoticeWatcher]] = {
        "aws": lambda: AwsWatcher(urls.get("aws", AWS_BASE_URL), http=http),
        "gcp": lambda: GcpWatcher(urls.get("gcp", GCP_BASE_URL), http=http),
        "azure": lambda: AzureWatcher(urls.get("azure", AZURE_BASE_URL), http=http),
    }
    if provider == "none":
        return []
    if provider in make:
        return [make[provider]()]
    if provider == "auto":
        found: list[NoticeWatcher] = []
        for name in ("aws", "gcp", "azure"):
            watcher = make[name]()
            try:
                watcher.poll()
            except (OSError, HttpError, JunkAnswerError):  # unreachable, or not its answers
                continue
            found.append(watcher)
            break
        return found
    raise InputError(f"--notice must be aws, gcp, azure, auto or none, got {provider!r}")


class NoticeMonitor:
    """Polls watchers on a background thread and calls `on_notice` once per new notice kind."""

    def __init__(
        self,
        watchers: Sequence[NoticeWatcher],
        on_notice: Callable[[Notice], None],
        *,
        poll_s: float = DEFAULT_POLL_S,
    ) -> None:
        self.watchers = list(watchers)
        self._on_notice = on_notice
        self._poll_s = poll_s
        self._stop = threading.Event()
        self._seen: set[tuple[str, str]] = set()
        self._warned: set[tuple[str, str]] = set()
        self._thread: threading.Thread | None = None

    def _failed(self, watcher: NoticeWatcher, what: str, exc: BaseException) -> None:
        key = (watcher.name, what)
        level = logging.DEBUG if key in self._warned else logging.WARNING
        self._warned.add(key)
        log.log(
            level,
            "notice source %s %s (%s); treated as no notice",
            watcher.name,
            what,
            _printable(str(exc) or type(exc).__name__),
        )

    def poll_once(self) -> list[Notice]:
        """Poll every watcher once; return the notices not reported before. A source that is
        unreachable or answers junk is logged once (then at debug level) and means no notice."""
        new: list[Notice] = []
        for watcher in self.watchers:
            try:
                notice = watcher.poll()
            except HttpError as exc:
                junk = exc.reason in {"too_large", "broken"}
                self._failed(watcher, "answered junk" if junk else "is unreachable", exc)
                continue
            except OSError as exc:
                self._failed(watcher, "is unreachable", exc)
                continue
            except Exception as exc:  # junk answers, and any bug in a watcher: never a crash
                self._failed(watcher, "answered junk", exc)
                continue
            if notice is not None and (notice.provider, notice.kind) not in self._seen:
                self._seen.add((notice.provider, notice.kind))
                new.append(notice)
                self._on_notice(notice)
        return new

    def start(self) -> NoticeMonitor:
        """Start polling on a daemon thread; return self."""
        self._thread = threading.Thread(target=self._run, name="gpurent-notices", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll_once()
            self._stop.wait(self._poll_s)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop polling; waits at most `timeout_s` for a poll in progress (the thread is a
        daemon, so a stuck poll never keeps the process alive)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)


class _StopTarget(Protocol):
    def request_stop(self, reason: str) -> None: ...

    def request_checkpoint(self, reason: str) -> None: ...


def watch_notices(
    manager: _StopTarget,
    watchers: Sequence[NoticeWatcher],
    *,
    poll_s: float = DEFAULT_POLL_S,
) -> NoticeMonitor:
    """Connect watchers to a `CheckpointManager`: a stop makes `should_save` true and sets
    `stop_requested`; a hint (AWS rebalance) asks for an early checkpoint only.

    The training loop then does `if mgr.should_save(step): mgr.save_for_exit(...)` or its usual
    save, and leaves when `mgr.stop_requested`. Steps must be much shorter than the grace
    period (30 s on GCP, Azure and under torchrun).
    """

    def on_notice(notice: Notice) -> None:
        reason = f"{notice.provider} {notice.kind}: {notice.detail}"
        if notice.terminating:
            manager.request_stop(reason)
        else:
            manager.request_checkpoint(reason)

    return NoticeMonitor(watchers, on_notice, poll_s=poll_s).start()
