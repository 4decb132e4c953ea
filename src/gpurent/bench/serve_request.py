"""One streamed request to an OpenAI-compatible endpoint, timed token by token.

Edge module (network, clock); aiohttp is imported inside the functions (`bench` extra). The
request body (`body`), its headers (`headers`), and `request`, which sends one and returns a
`RequestRecord`: TTFT, the gaps between text chunks, end-to-end time, tokens, or the kind of
error it ended with (docs/bench.md, "Serving endpoints").
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import TYPE_CHECKING, Any

from gpurent.bench.serve_config import ServeConfig
from gpurent.bench.serve_result import RequestRecord
from gpurent.bench.serve_sse import parse_line

if TYPE_CHECKING:
    import aiohttp

# Words that are one token in the common BPE vocabularies (GPT-2/cl100k/Llama-3): a prompt of
# N of them is about N tokens (a chat template adds its own few).
_WORDS = (
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "from",
    "his",
    "her",
    "it",
    "an",
    "are",
    "were",
    "which",
    "this",
    "be",
    "or",
    "had",
    "not",
    "but",
    "have",
    "one",
    "all",
    "they",
    "you",
    "their",
    "has",
    "been",
    "its",
    "new",
    "more",
    "who",
    "first",
    "after",
    "also",
    "two",
    "time",
    "only",
    "other",
    "many",
    "some",
    "would",
    "when",
    "there",
    "over",
    "most",
    "city",
    "may",
    "year",
)


def prompt_text(rng: random.Random, tokens: int) -> str:
    """A prompt of tokens random words."""
    return " ".join(rng.choices(_WORDS, k=tokens))


def body(cfg: ServeConfig, rng: random.Random, *, max_tokens: int | None = None) -> bytes:
    """The JSON body of one streaming completion request, prompt and output lengths drawn by rng."""
    prompt = prompt_text(rng, rng.randint(cfg.prompt_tokens.lo, cfg.prompt_tokens.hi))
    out = max_tokens or rng.randint(cfg.output_tokens.lo, cfg.output_tokens.hi)
    doc: dict[str, Any] = {
        "model": cfg.model,
        "max_tokens": out,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.0,
    }
    if cfg.ignore_eos:
        doc["ignore_eos"] = True
    if cfg.endpoint == "chat":
        doc["messages"] = [{"role": "user", "content": prompt}]
    else:
        doc["prompt"] = prompt
    return json.dumps(doc).encode()


def headers(api_key: str | None) -> dict[str, str]:
    """The HTTP headers of a streaming request, with a bearer token when api_key is given."""
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def error_kind(exc: BaseException, aio: Any) -> str:
    """The error kind of a failed request: "connect", "stall", "disconnect" or "bad_response"."""
    if isinstance(exc, aio.ConnectionTimeoutError):
        return "connect"
    if isinstance(exc, aio.ServerTimeoutError):
        return "stall"
    if isinstance(exc, aio.ClientConnectorError):
        return "connect"
    if isinstance(exc, aio.ClientPayloadError | aio.ServerDisconnectedError | aio.ClientOSError):
        return "disconnect"
    if isinstance(exc, aio.ClientResponseError):
        return "bad_response"
    if isinstance(exc, aio.ClientError):
        return "disconnect"
    return "bad_response"


class _Reader:
    """Fills a `RequestRecord` from the stream's lines. Lines that arrived in one read share
    its arrival time (tokens that came together have no gap between them)."""

    __slots__ = ("chunks", "done", "last", "rec", "t0", "usage")

    def __init__(self, rec: RequestRecord, t0: float) -> None:
        self.rec, self.t0 = rec, t0
        self.last: float | None = None
        self.chunks = 0
        self.usage: int | None = None
        self.done = False

    def feed(self, line: bytes, now: float) -> bool:
        """False when the stream turned out to be broken (the record says how)."""
        chunk = parse_line(line)
        if chunk is None:
            return True
        if chunk.done:
            self.done = True
        elif chunk.bad:
            self.rec.error = "bad_response"
            return False
        elif chunk.error is not None:
            self.rec.error = "stream_error"
            return False
        if chunk.text:
            if self.last is None:
                self.rec.ttft_s = now - self.t0
            else:
                self.rec.itl_s.append(now - self.last)
            self.last = now
            self.chunks += 1
        if chunk.completion_tokens is not None:
            self.usage = chunk.completion_tokens
            self.rec.prompt_tokens = chunk.prompt_tokens
        return True

    def finish(self) -> None:
        rec = self.rec
        if not self.done:
            rec.error = "disconnect"
            return
        rec.e2e_s = time.perf_counter() - self.t0
        rec.output_tokens = self.usage if self.usage is not None else self.chunks
        rec.tokens_from_usage = self.usage is not None
        rec.ok = True


async def stream(resp: aiohttp.ClientResponse, rec: RequestRecord, t0: float) -> None:
    """Read one 200 response's SSE lines into `rec`: whatever bytes have arrived at each
    wake-up, split into lines (far fewer awaits than a line at a time)."""
    reader = _Reader(rec, t0)
    pending = b""
    async for data in resp.content.iter_any():
        now = time.perf_counter()
        lines = (pending + data).split(b"\n")
        pending = lines.pop()
        for line in lines:
            if not reader.feed(line, now):
                return
    if pending and not reader.feed(pending, time.perf_counter()):
        return
    reader.finish()


async def request(
    session: aiohttp.ClientSession, cfg: ServeConfig, body: bytes, headers: dict[str, str]
) -> RequestRecord:
    """Send one streaming request; record its outcome, TTFT, inter-token gaps and token counts."""
    import aiohttp as aio

    rec = RequestRecord()
    t0 = time.perf_counter()
    try:
        async with asyncio.timeout(cfg.timeout_s) as deadline:
            try:
                async with session.post(cfg.url, data=body, headers=headers) as resp:
                    if resp.status != 200:
                        rec.error = f"http_{resp.status}"
                        await resp.read()
                        return rec
                    await stream(resp, rec, t0)
            except TimeoutError as exc:
                if deadline.expired():
                    raise
                rec.error = error_kind(exc, aio)
            except aio.ClientError as exc:
                rec.error = error_kind(exc, aio)
    except TimeoutError:
        rec.error = "timeout"
    return rec
