"""The one HTTP seam (`gpurent.http`): urllib against a local server on 127.0.0.1, the shipped
stand-in, and the callers (catalog update, notices, instance detection, the rebuild webhook)
working against the stand-in."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gpurent.catalog.sources import update_catalogs
from gpurent.http import FakeHttp, HttpError, HttpRequest, HttpResponse, UrllibHttp
from gpurent.monitor.instance import detect_instance
from gpurent.runtime.notices import AwsWatcher, GcpWatcher, NoticeMonitor
from gpurent.runtime.supervisor import EventLog, Supervisor, SupervisorConfig
from gpurent.userdata import data_home

HTTP = UrllibHttp(proxies=False)
LIMIT = 1024


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", **headers: str) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        if "Content_Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path
        if path == "/ok":
            self._send(200, b"hello", X_Answer="yes")
        elif path == "/echo-agent":
            self._send(200, self.headers.get("User-Agent", "").encode())
        elif path == "/big":
            self._send(200, b"x" * (LIMIT + 1))
        elif path == "/big-unannounced":  # no Content-Length: the limit counts the bytes read
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"y" * (LIMIT * 4))
            self.close_connection = True
        elif path == "/redirect":
            self._send(302, Location="/ok")
        elif path == "/loop":
            self._send(302, Location="/loop")
        elif path == "/missing":
            self._send(404, b"no such thing")
        elif path == "/broken":
            self._send(500, b"oops")
        elif path == "/truncated":
            self._send(200, b"short", Content_Length="100")
            self.close_connection = True
        elif path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Length", "20")
            self.end_headers()
            for _ in range(20):
                self.wfile.write(b"z")
                self.wfile.flush()
                time.sleep(0.05)
        else:
            self._send(404)

    def do_PUT(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if self.path == "/redirect":
            self._send(307, Location="/ok")
        else:
            self._send(201, body[::-1])


@contextmanager
def _server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with _server() as url:
        yield url


def _get(url: str, **kw: Any) -> HttpResponse:
    return HTTP.get(url, timeout_s=kw.pop("timeout_s", 2.0), max_bytes=LIMIT, **kw)


def test_get_returns_status_headers_and_body(base: str) -> None:
    seen: list[tuple[int, int | None]] = []
    answer = _get(f"{base}/ok", on_chunk=lambda done, total: seen.append((done, total)))
    assert (answer.status, answer.body, answer.ok) == (200, b"hello", True)
    assert answer.headers["x-answer"] == "yes"  # names lower-cased
    assert seen == [(5, 5)]


def test_user_agent_is_sent_unless_the_caller_sets_one(base: str) -> None:
    assert _get(f"{base}/echo-agent").body == b"gpurent"
    assert _get(f"{base}/echo-agent", headers={"User-Agent": "me"}).body == b"me"


def test_put_sends_the_body(base: str) -> None:
    answer = HTTP.put(f"{base}/x", body=b"abc", timeout_s=2.0, max_bytes=LIMIT)
    assert (answer.status, answer.body) == (201, b"cba")


@pytest.mark.parametrize("path", ["/big", "/big-unannounced"])
def test_an_answer_over_the_size_limit_is_an_error(base: str, path: str) -> None:
    with pytest.raises(HttpError) as caught:
        _get(f"{base}{path}")
    assert caught.value.reason == "too_large" and str(LIMIT) in caught.value.message


def test_get_follows_a_redirect_other_methods_do_not(base: str) -> None:
    assert _get(f"{base}/redirect").body == b"hello"
    put = HTTP.put(f"{base}/redirect", body=b"x", timeout_s=2.0, max_bytes=LIMIT)
    assert put.status == 307 and not put.ok


def test_a_redirect_loop_is_a_3xx_answer_not_a_hang(base: str) -> None:
    answer = _get(f"{base}/loop")
    assert answer.status == 302
    with pytest.raises(HttpError, match="HTTP 302"):
        answer.raise_for_status(f"{base}/loop")


@pytest.mark.parametrize(("path", "status"), [("/missing", 404), ("/broken", 500)])
def test_4xx_and_5xx_are_answers_and_raise_for_status_maps_them(
    base: str, path: str, status: int
) -> None:
    answer = _get(f"{base}{path}")
    assert answer.status == status and answer.body in {b"no such thing", b"oops"}
    with pytest.raises(HttpError) as caught:
        answer.raise_for_status(f"{base}{path}")
    assert caught.value.reason == "status"
    assert caught.value.message.startswith(f"{base}{path}: HTTP {status} ")


def test_a_truncated_answer_is_broken(base: str) -> None:
    with pytest.raises(HttpError) as caught:
        _get(f"{base}/truncated")
    assert caught.value.reason == "broken"


def test_a_silent_server_is_a_timeout() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)  # connects succeed, nothing ever answers
        start = time.monotonic()
        with pytest.raises(HttpError) as caught:
            _get(f"http://127.0.0.1:{listener.getsockname()[1]}/", timeout_s=0.2)
        assert caught.value.reason == "timeout"
        assert time.monotonic() - start < 2.0


def test_the_deadline_bounds_a_trickling_answer(base: str) -> None:
    assert _get(f"{base}/trickle").body == b"z" * 20  # 1 s in all, each read well in time
    start = time.monotonic()
    with pytest.raises(HttpError) as caught:
        _get(f"{base}/trickle", deadline_s=0.2)
    assert caught.value.reason == "timeout" and time.monotonic() - start < 0.8


def test_refused_connection_and_bad_urls() -> None:
    with pytest.raises(HttpError) as refused:
        _get("http://127.0.0.1:9/")  # discard port
    assert refused.value.reason == "unreachable" and "offline?" in refused.value.message
    for url in ["file:///etc/passwd", "ftp://example.com/x", "not a url"]:
        with pytest.raises(HttpError) as bad:
            _get(url)
        assert bad.value.reason == "bad_url"


# ---- the stand-in ---------------------------------------------------------------------------


def test_fake_answers_from_routes_and_records_requests() -> None:
    def echo(request: HttpRequest) -> HttpResponse:
        return HttpResponse(status=200, body=request.body or b"")

    fake = FakeHttp(
        {
            "http://h/a": HttpResponse(status=200, body=b"any method"),
            ("PUT", "http://h/b"): echo,
            "http://h/down": HttpError("cannot reach", url="http://h/down", reason="unreachable"),
        }
    )
    assert fake.get("http://h/a", timeout_s=1, max_bytes=LIMIT).body == b"any method"
    assert fake.put("http://h/b", body=b"hi", timeout_s=1, max_bytes=LIMIT).body == b"hi"
    assert fake.get("http://h/b", timeout_s=1, max_bytes=LIMIT).status == 404  # PUT only
    assert fake.get("http://h/nothing", timeout_s=1, max_bytes=LIMIT).status == 404
    with pytest.raises(HttpError):
        fake.get("http://h/down", timeout_s=1, max_bytes=LIMIT)
    assert [(r.method, r.url) for r in fake.requests] == [
        ("GET", "http://h/a"),
        ("PUT", "http://h/b"),
        ("GET", "http://h/b"),
        ("GET", "http://h/nothing"),
        ("GET", "http://h/down"),
    ]


def test_fake_keeps_the_size_limit_and_url_check() -> None:
    fake = FakeHttp({"http://h/big": HttpResponse(status=200, body=b"x" * (LIMIT + 1))})
    with pytest.raises(HttpError) as big:
        fake.get("http://h/big", timeout_s=1, max_bytes=LIMIT)
    assert big.value.reason == "too_large"
    with pytest.raises(HttpError) as bad:
        fake.get("file:///etc/passwd", timeout_s=1, max_bytes=LIMIT)
    assert bad.value.reason == "bad_url"


# ---- callers against the stand-in -----------------------------------------------------------

AWS = "http://169.254.169.254"
GCP = "http://metadata.google.internal"


def test_catalog_update_goes_through_the_injected_seam() -> None:
    fixture = Path(__file__).parent / "catalog" / "data" / "lambda_vms.csv"
    base = "https://catalog.example/v8"
    fake = FakeHttp({f"{base}/lambda/vms.csv": HttpResponse(status=200, body=fixture.read_bytes())})
    now = datetime(2026, 11, 30, tzinfo=UTC)
    result = update_catalogs(base, ["lambda", "aws"], data_home(), now=now, http=fake)
    assert [m.cloud for m in result.stored] == ["lambda"]
    assert result.failed == (("aws", f"{base}/aws/vms.csv: HTTP 404 Not Found"),)
    assert fake.requests[0].headers["User-Agent"] == "gpurent-catalog-update"


def test_aws_notice_through_the_stand_in() -> None:
    fake = FakeHttp(
        {
            ("PUT", f"{AWS}/latest/api/token"): HttpResponse(status=200, body=b"tok"),
            f"{AWS}/latest/meta-data/spot/instance-action": HttpResponse(
                status=200, body=json.dumps({"action": "terminate", "time": "T"}).encode()
            ),
        }
    )
    notice = AwsWatcher(http=fake).poll()
    assert notice is not None and notice.kind == "spot-terminate"
    assert fake.requests[1].headers == {"X-aws-ec2-metadata-token": "tok"}


def test_an_unreachable_or_oversized_metadata_answer_is_no_notice(
    caplog: pytest.LogCaptureFixture,
) -> None:
    path = f"{GCP}/computeMetadata/v1/instance/preempted"
    big = FakeHttp({path: HttpResponse(status=200, body=b"TRUE" * 20_000)})
    down = FakeHttp({path: HttpError("cannot reach", url=path, reason="unreachable")})
    monitor = NoticeMonitor([GcpWatcher(http=big), GcpWatcher(http=down)], lambda n: None)
    assert monitor.poll_once() == []
    messages = [r.getMessage() for r in caplog.records]
    assert any("answered junk" in m for m in messages)
    assert any("is unreachable" in m for m in messages)


def test_instance_detection_through_the_stand_in() -> None:
    gcp = f"{GCP}/computeMetadata/v1/instance"
    fake = FakeHttp(
        {
            f"{AWS}/latest/api/token": HttpError("refused", url=AWS, reason="unreachable"),
            f"{gcp}/machine-type": HttpResponse(status=200, body=b"projects/1/machineTypes/a2"),
            f"{gcp}/zone": HttpResponse(status=200, body=b"projects/1/zones/us-central1-a"),
        }
    )
    found = detect_instance(http=fake)
    assert found is not None and (found.provider, found.region) == ("gcp", "us-central1")
    assert all(r.headers == {"Metadata-Flavor": "Google"} for r in fake.requests[1:])


class _Proc:
    def __init__(self, pid: int) -> None:
        self.pid = pid

    def poll(self) -> int:
        return 1  # fails at once, every time

    def terminate(self) -> None:
        pass

    def kill(self) -> None:
        pass


@pytest.mark.parametrize("answer", ["accepted", "unreachable"])
def test_rebuild_webhook_posts_through_the_stand_in(answer: str) -> None:
    hook = "https://ops.example/hook"
    route: HttpResponse | HttpError = (
        HttpResponse(status=202)
        if answer == "accepted"
        else HttpError("cannot reach", url=hook, reason="unreachable")
    )
    fake = FakeHttp({("POST", hook): route})
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    config = SupervisorConfig(
        command=("train",),
        poll_s=1.0,
        backoff_base_s=1.0,
        max_failures=2,
        fast_exit_s=0.0,
        rebuild_webhook=hook,
    )
    supervisor = Supervisor(
        config,
        log=EventLog(wall_clock=lambda: now[0]),
        spawner=lambda argv, env: _Proc(4_000_000),
        clock=lambda: now[0],
        sleep=sleep,
        base_env={},
        http=fake,
    )
    assert supervisor.run().status == "rebuilt"
    (sent,) = fake.requests
    assert (sent.method, sent.headers["Content-Type"]) == ("POST", "application/json")
    assert sent.body is not None and json.loads(sent.body)["event"] == "rebuild"
    (result,) = [e for e in supervisor.log.events if e["event"] == "rebuild_result"]
    if answer == "accepted":
        assert result["http_status"] == 202
    else:
        assert result["error"] == "cannot reach"
