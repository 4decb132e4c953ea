"""A stand-in for an OpenAI-compatible streaming server, with latencies and faults you set.

For a dry run of `gpurent bench serve` without a GPU, and for its tests:

    python -m gpurent.bench.serve_standin --port 8000 --ttft-ms 50 --itl-ms 10
    gpurent bench serve --url http://127.0.0.1:8000 --concurrency 1,4,16

Answers `POST /v1/completions` and `POST /v1/chat/completions` with `stream: true` as OpenAI
does (`data: {chunk}` lines, a usage chunk, `data: [DONE]`), one chunk per output token
(`max_tokens` of them), the first after `ttft_ms` and the next every `itl_ms` (on a fixed
schedule from the request's arrival, so delays do not add up). `GET /v1/models` lists `model`.
Faults, by the request's arrival number n (1, 2, ...): n % fail_every == 0 answers HTTP
`fail_status`; n % stall_every == 0 stops after the first token for `stall_s`;
n % disconnect_every == 0 drops the connection after the first token;
n % error_chunk_every == 0 sends an OpenAI `error` chunk after the first token. It serves one
concurrent stream per request with no batching model: latency does not grow with load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web


@dataclass(frozen=True, slots=True, kw_only=True)
class StandInConfig:
    """How the stand-in server behaves: latencies, model name, and which requests fail or stall."""

    ttft_ms: float = 0.0
    itl_ms: float = 0.0
    model: str = "standin-model"
    fail_every: int = 0
    fail_status: int = 500
    stall_every: int = 0
    stall_s: float = 3600.0
    disconnect_every: int = 0
    error_chunk_every: int = 0  # every N-th stream sends an `error` chunk after one token
    send_usage: bool = True
    api_key: str | None = None  # when set, requests must carry `Authorization: Bearer KEY`
    not_openai: bool = False  # answer every POST with a 200 HTML page (a wrong URL)


def _chunk(chat: bool, model: str, text: str | None, role: bool = False) -> bytes:
    if chat:
        delta: dict[str, Any] = {"role": "assistant", "content": ""} if role else {"content": text}
        choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": None}
        obj = "chat.completion.chunk"
    else:
        choice = {"index": 0, "text": text, "finish_reason": None}
        obj = "text_completion"
    doc = {"id": "cmpl-standin", "object": obj, "model": model, "choices": [choice]}
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


class StandIn:
    """The server; `start()` runs it on 127.0.0.1 in a thread of its own and returns its URL."""

    def __init__(self, config: StandInConfig | None = None) -> None:
        self.config = config or StandInConfig()
        self.requests = 0  # completion requests received
        self.auth_seen: list[str] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def app(self) -> web.Application:
        """The aiohttp application with the completion, chat and model routes."""
        app = web.Application()
        app.router.add_post("/v1/completions", self._complete)
        app.router.add_post("/v1/chat/completions", self._complete)
        app.router.add_get("/v1/models", self._models)
        return app

    async def _models(self, request: web.Request) -> web.Response:
        key = self.config.api_key
        if key is not None and request.headers.get("Authorization", "") != f"Bearer {key}":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        return web.json_response({"object": "list", "data": [{"id": self.config.model}]})

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        cfg = self.config
        arrived = time.perf_counter()
        self.requests += 1
        n = self.requests
        auth = request.headers.get("Authorization", "")
        self.auth_seen.append(auth)
        if cfg.api_key is not None and auth != f"Bearer {cfg.api_key}":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        if cfg.not_openai:
            return web.Response(text="<html>hello</html>", content_type="text/html")
        try:
            doc = json.loads(await request.read())
            tokens = int(doc.get("max_tokens") or 16)
            text = doc.get("prompt") or " ".join(
                str(m.get("content", "")) for m in doc.get("messages") or []
            )
            prompt_tokens = len(str(text).split())
        except (ValueError, TypeError, AttributeError):
            return web.json_response({"error": {"message": "bad JSON body"}}, status=400)
        if cfg.fail_every and n % cfg.fail_every == 0:
            return web.json_response(
                {"error": {"message": "stand-in fault"}}, status=cfg.fail_status
            )
        chat = request.path.endswith("/chat/completions")
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        stall = bool(cfg.stall_every and n % cfg.stall_every == 0)
        drop = bool(cfg.disconnect_every and n % cfg.disconnect_every == 0)
        faulty = stall or drop or bool(cfg.error_chunk_every)
        if cfg.ttft_ms == 0 and cfg.itl_ms == 0 and not faulty:
            await resp.write(self._whole(chat, tokens, prompt_tokens))
            await resp.write_eof()
            return resp
        with contextlib.suppress(ConnectionResetError):  # the client left (Ctrl-C, a stall)
            await self._trickle(
                request,
                resp,
                chat=chat,
                tokens=tokens,
                prompt_tokens=prompt_tokens,
                arrived=arrived,
                n=n,
            )
        return resp

    async def _trickle(
        self,
        request: web.Request,
        resp: web.StreamResponse,
        *,
        chat: bool,
        tokens: int,
        prompt_tokens: int,
        arrived: float,
        n: int,
    ) -> None:
        cfg = self.config
        stall = bool(cfg.stall_every and n % cfg.stall_every == 0)
        drop = bool(cfg.disconnect_every and n % cfg.disconnect_every == 0)
        if chat:
            await resp.write(_chunk(chat, cfg.model, None, role=True))
        for i in range(tokens):
            wait = arrived + (cfg.ttft_ms + i * cfg.itl_ms) / 1000.0 - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            await resp.write(_chunk(chat, cfg.model, " tok"))
            if i == 0 and stall:
                await asyncio.sleep(cfg.stall_s)
            if i == 0 and cfg.error_chunk_every and n % cfg.error_chunk_every == 0:
                await resp.write(b'data: {"error": {"message": "stand-in stream fault"}}\n\n')
                await resp.write_eof()
                return
            if i == 0 and drop:
                if request.transport is not None:
                    request.transport.close()
                return
        await resp.write(self._tail(tokens, prompt_tokens))
        await resp.write_eof()

    def _tail(self, tokens: int, prompt_tokens: int) -> bytes:
        tail = b""
        if self.config.send_usage:
            usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": tokens,
                "total_tokens": prompt_tokens + tokens,
            }
            doc = {"id": "cmpl-standin", "choices": [], "usage": usage}
            tail += b"data: " + json.dumps(doc).encode() + b"\n\n"
        return tail + b"data: [DONE]\n\n"

    def _whole(self, chat: bool, tokens: int, prompt_tokens: int) -> bytes:
        head = _chunk(chat, self.config.model, None, role=True) if chat else b""
        return (
            head
            + _chunk(chat, self.config.model, " tok") * tokens
            + self._tail(tokens, prompt_tokens)
        )

    # -- running it -------------------------------------------------------------------------

    def start(self, port: int = 0) -> str:
        """Start serving on 127.0.0.1:port (0: any free port) in a thread; return its URL."""
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=0.2)
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", port)
            loop.run_until_complete(site.start())
            self._runner = runner
            server = site._server  # the bound port is only known here
            sockets = getattr(server, "sockets", None) or []
            self.url = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
            ready.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=serve, name="serve-standin", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self.url

    def stop(self) -> None:
        """Stop the server and wait up to 10 s for its thread."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> StandIn:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """Run the stand-in server from the command line until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m gpurent.bench.serve_standin",
        description="A local OpenAI-compatible streaming stand-in for `gpurent bench serve`.",
    )
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--ttft-ms", type=float, default=0.0)
    parser.add_argument("--itl-ms", type=float, default=0.0)
    parser.add_argument("--model", default="standin-model")
    parser.add_argument("--fail-every", type=int, default=0)
    parser.add_argument("--fail-status", type=int, default=500)
    parser.add_argument("--stall-every", type=int, default=0)
    parser.add_argument("--disconnect-every", type=int, default=0)
    parser.add_argument("--error-chunk-every", type=int, default=0)
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535 or min(args.ttft_ms, args.itl_ms) < 0:
        parser.error("--port must be 0-65535 and latencies >= 0")
    cfg = StandInConfig(
        ttft_ms=args.ttft_ms,
        itl_ms=args.itl_ms,
        model=args.model,
        fail_every=max(0, args.fail_every),
        fail_status=args.fail_status,
        stall_every=max(0, args.stall_every),
        disconnect_every=max(0, args.disconnect_every),
        error_chunk_every=max(0, args.error_chunk_every),
    )
    standin = StandIn(cfg)
    web.run_app(standin.app(), host="127.0.0.1", port=args.port, access_log=None, print=print)


if __name__ == "__main__":
    main()
